#!/usr/bin/env python3
"""Checks that src/ keeps the layer order of docs/architecture.md.

Every folder of src/ is a layer; a layer may include headers of the layers
it is allowed to call (LAYERS below, lowest first) and of itself, nothing
else: no layer includes a header of a layer above it or beside it. Within
one layer, modules (x.c with its x.h) must not include each other in a
circle. Exits non-zero with one line per violation.

The same table drives the per-layer static libraries in CMakeLists.txt
(each links only the libraries below it), so the linker agrees with it.

usage: scripts/check_layers.py [SRC_DIR]
       scripts/check_layers.py --self-test   (the check finds planted problems)
"""

import os
import re
import sys

# layer -> the layers it may include (itself always allowed)
LAYERS = {
    "core": [],
    "kube": ["core", "cel"],
    "cel": ["core"],
    "policy": ["core", "kube", "cel"],
    "store": ["core"],
    "enc": ["core", "kube"],
    "cache": ["core", "store"],
    "watch": ["core"],
    "read": ["core", "kube", "store", "cache"],
    "ctl": ["core", "kube", "policy", "store", "cache", "read"],
    "hook": ["core", "kube", "cel", "policy"],
    "api": ["core", "kube", "store", "cache", "watch", "read", "ctl", "hook", "policy"],
    "http": ["core", "api"],
    "etcd": ["core", "kube", "store", "cache", "watch", "read"],
    "cmd": ["core", "kube", "store", "enc", "cache", "watch", "read", "ctl", "hook", "policy", "api",
            "http", "etcd"],
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(path):
    return os.path.splitext(os.path.basename(path))[0]


def check(src):
    """The problems found in the tree at src, one line each."""
    problems = []
    # (layer, module) -> set of modules of the same layer it includes
    graph = {}
    for layer in sorted(os.listdir(src)):
        ldir = os.path.join(src, layer)
        if not os.path.isdir(ldir):
            continue
        if layer not in LAYERS:
            problems.append("src/%s: a folder that is not a known layer (add it to %s)"
                            % (layer, os.path.relpath(__file__)))
            continue
        for name in sorted(os.listdir(ldir)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(ldir, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            mod = (layer, module_of(name))
            graph.setdefault(mod, set())
            for inc in INCLUDE.findall(text):
                if "/" not in inc:
                    problems.append("src/%s/%s: include \"%s\" without its layer folder"
                                    % (layer, name, inc))
                    continue
                target_layer, header = inc.split("/", 1)
                if target_layer == layer:
                    target = module_of(header)
                    if target != mod[1]:
                        graph[mod].add(target)
                elif target_layer not in LAYERS[layer]:
                    problems.append("src/%s/%s: includes %s, but %s may not call %s"
                                    % (layer, name, inc, layer, target_layer))
    # Circles within a layer: depth-first search over each layer's modules.
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        layer = node[0]
        for nxt in sorted(graph.get(node, ())):
            n = (layer, nxt)
            if state.get(n) == "open":
                cycle = stack[stack.index(n):] + [n]
                problems.append("src/%s: modules include each other in a circle: %s"
                                % (layer, " -> ".join(m for _, m in cycle)))
            elif n not in state:
                visit(n, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return problems, len(graph)


def self_test():
    """Plants an upward include and a circle in a scratch tree; both must be found."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        files = {
            "core/a.h": '#include "api/b.h"\n',          # core may not call api
            "api/b.h": "",
            "store/x.h": '#include "store/y.h"\n',       # x -> y -> x
            "store/y.c": '#include "store/x.h"\n',
        }
        for name, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(name)), exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        problems, _ = check(root)
    ok = (any("core/a.h" in p and "may not call api" in p for p in problems) and
          any("circle" in p for p in problems) and len(problems) == 2)
    print("layer check self-test: %s" % ("ok" if ok else "FAILED: %r" % problems))
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "src")
    problems, modules = check(os.path.abspath(src))
    for p in problems:
        print(p)
    print("layer check: %d modules, %d problems" % (modules, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
