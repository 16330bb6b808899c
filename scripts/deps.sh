#!/usr/bin/env bash
# Installs what sqlkube needs and is missing (Debian/Ubuntu), using sudo only
# when not root. `deps.sh build`: compilers and -dev libraries.
# `deps.sh test`: also the test tools (cmocka, kubectl, the Python client,
# the sqlite3 CLI, PostgreSQL server binaries, clang with libFuzzer, and
# etcdctl plus a real etcd server: the etcd face's tests compare the two;
# Go and Debian's clientv3 sources, for the program that replays
# kube-apiserver's etcd calls, tests/etcd/kubeshapes; Node.js, and the
# JavaScript client and the CEL spec's tests (@bufbuild/cel-spec, for
# tests/cel/parse_test.py) from the npm registry into tests/node, pinned by
# its package-lock.json; python3-yaml, openssl and curl for the compose file's
# check and its two-instance process twin, python3-cryptography for the TLS
# tests' certificates and, with python3-nacl, the encryption tests'
# independent decryptions; python3-protobuf decodes the protobuf replies with
# the protobuf runtime itself, tests/e2e/test_protobuf_wire.py).
set -euo pipefail
mode="${1:-build}"

# libyaml reads server-side apply bodies (YAML) as kube's decoder does.
# libnghttp2 carries the etcd face's HTTP/2; protoc-c generates its gRPC
# messages from src/etcd/*.proto at build time, libprotobuf-c runs them.
# jemalloc is the server's allocator (src/cmd/main.c says why). libsodium
# is secretbox for encryption at rest (src/enc): no cipher is hand-written.
# libcurl (GnuTLS flavour, the TLS library the server already uses) calls
# admission webhooks (src/hook): connection reuse, timeouts and certificate
# checks from a well-kept client instead of a hand-written one.
pkgs=(build-essential cmake pkg-config libmicrohttpd-dev libjansson-dev libsqlite3-dev libpq-dev
      libgnutls28-dev libcmocka-dev libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler libyaml-dev
      libjemalloc-dev libsodium-dev libcurl4-gnutls-dev)
if [[ "$mode" == test ]]; then
    pkgs+=(python3 python3-kubernetes python3-yaml python3-cryptography python3-nacl python3-protobuf
           sqlite3 postgresql-client
           clang libclang-rt-dev etcd-client etcd-server golang-go golang-etcd-server-dev
           openssl curl)
    command -v kubectl >/dev/null 2>&1 || pkgs+=(kubernetes-client)
    command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
    if ! command -v pg_ctl >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
        pkgs+=(postgresql)
    fi
fi

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
node_client() {
    local dir
    dir="$(dirname "$0")/../tests/node"
    [[ "$mode" == test ]] || return 0
    [[ -d "$dir/node_modules/@kubernetes/client-node" && -d "$dir/node_modules/@bufbuild/cel-spec" ]] &&
        return 0
    echo "installing: @kubernetes/client-node, @bufbuild/cel-spec (npm, into tests/node)" >&2
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null
}
if [[ ${#missing[@]} -eq 0 ]]; then
    node_client
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "sqlkube: missing packages (${missing[*]}) and no apt-get to install them" >&2
    exit 1
fi
sudo=""
[[ "$(id -u)" -ne 0 ]] && sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
node_client
