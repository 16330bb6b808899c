#!/usr/bin/env bash
# etcd-pki.sh - the certificates with which kube-apiserver (or k3s) and
# sqlkube's etcd face (`serve --etcd-listen`) authenticate each other over
# TLS, made with openssl into DIR. docs/etcd-for-kube-apiserver.md uses it;
# tests/e2e/test_etcd.py runs it (make_pki) and serves with what it makes.
#
# usage: scripts/etcd-pki.sh DIR [ADDRESS ...]
#   ADDRESS: an IP address or DNS name that kube-apiserver dials (the host
#   of its --etcd-servers URL). 127.0.0.1 and localhost are always named,
#   so etcdctl works on the sqlkube host itself.
#
#   ca.crt, ca.key          the CA both sides trust: sqlkube's
#                           --etcd-trusted-ca-file, kube-apiserver's
#                           --etcd-cafile (k3s: --datastore-cafile)
#   server.crt, server.key  sqlkube's --etcd-cert-file, --etcd-key-file:
#                           serverAuth, its SANs the addresses above
#   client.crt, client.key  kube-apiserver's --etcd-certfile, --etcd-keyfile
#                           (k3s: --datastore-certfile, --datastore-keyfile):
#                           clientAuth, CN kube-apiserver-etcd-client
#
# Why a CA of its own: the etcd API has no users and no RBAC, so a client
# certificate this CA signed reads and writes every key, Secrets included.
# Keep ca.key off the machines that run kube-apiserver, and sign nothing else
# with it.
#
# Files that exist are kept, so running it again changes nothing. To add an
# address, delete server.crt and server.key and run it again with every
# address; delete all the files to rotate everything. Keys are ECDSA P-256
# (PKCS#8). The CA is valid for 10 years, the two certificates for 1 year.
# Every file is 0600 and DIR is 0700.
set -euo pipefail

if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "usage: $0 DIR [ADDRESS ...]" >&2
    exit 2
fi
dir=$1
shift

umask 077
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"

newkey() {
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
}

# sign NAME CN EXTENSIONS: NAME.key and NAME.crt, signed by the CA.
sign() {
    newkey "$1.key.tmp"
    openssl req -new -key "$1.key.tmp" -subj "/CN=$2" -out "$1.csr"
    printf '%s\n' "$3" >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 \
        -sha256 -extfile "$1.ext" -out "$1.crt.tmp" 2>/dev/null
    rm -f "$1.csr" "$1.ext" ca.srl
    # The key before the certificate: a certificate never waits for its key.
    mv "$1.key.tmp" "$1.key"
    mv "$1.crt.tmp" "$1.crt"
}

if [ ! -f ca.crt ]; then
    newkey ca.key.tmp
    openssl req -x509 -new -key ca.key.tmp -subj /CN=sqlkube-etcd-ca -days 3650 -sha256 \
        -addext basicConstraints=critical,CA:TRUE \
        -addext keyUsage=critical,keyCertSign,cRLSign -out ca.crt.tmp
    mv ca.key.tmp ca.key
    mv ca.crt.tmp ca.crt
fi

if [ ! -f server.crt ]; then
    sans=IP:127.0.0.1,DNS:localhost
    for addr in "$@"; do
        case $addr in
            127.0.0.1 | localhost) continue ;;
        esac
        # An IPv6 address has a colon, an IPv4 one digits and dots only;
        # anything else is a DNS name.
        if [[ $addr == *:* || $addr =~ ^[0-9.]+$ ]]; then
            sans=$sans,IP:$addr
        else
            sans=$sans,DNS:$addr
        fi
    done
    sign server sqlkube-etcd "subjectAltName=$sans
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth"
fi

if [ ! -f client.crt ]; then
    sign client kube-apiserver-etcd-client "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
fi

echo "etcd-pki.sh: $PWD holds ca, server and client certificates and keys"
openssl x509 -in server.crt -noout -ext subjectAltName | sed -n 2p | sed 's/^ */etcd-pki.sh: server.crt names /'
