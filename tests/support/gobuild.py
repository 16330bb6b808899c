"""Builds a Go program of this repository in GOPATH mode (GO111MODULE=off)
against Debian's packaged Go sources (/usr/share/gocode: clientv3 from
golang-etcd-server-dev), for the etcd face's test and benchmark clients.
The build cache lives in out_dir, so later builds take a second."""

import os
import shutil
import subprocess
import tempfile


def go_build(src_dir, out_dir, name):
    """Builds the package in src_dir into out_dir/name; returns that path.
    Raises RuntimeError with the compiler's output if the build fails."""
    binary = os.path.join(out_dir, name)
    gopath = tempfile.mkdtemp(prefix="sk-gopath-")
    try:
        os.makedirs(os.path.join(gopath, "src"))
        os.symlink(os.path.abspath(src_dir), os.path.join(gopath, "src", name))
        env = dict(os.environ, GO111MODULE="off", GOFLAGS="",
                   GOPATH=gopath + ":/usr/share/gocode", GOCACHE=os.path.join(out_dir, "gocache"))
        # Built beside the target and renamed over it: a run on the other
        # backend may be executing the old binary at this moment.
        staged = "%s.%d" % (binary, os.getpid())
        p = subprocess.run(["go", "build", "-o", staged, "."], cwd=os.path.join(gopath, "src", name),
                           env=env, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            raise RuntimeError("building %s failed:\n%s" % (name, p.stderr[-3000:]))
        os.replace(staged, binary)
    finally:
        shutil.rmtree(gopath, ignore_errors=True)
    return binary
