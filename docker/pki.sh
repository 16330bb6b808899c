#!/bin/sh
# pki.sh - the key material several sqlkube instances on one PostgreSQL
# share, made once into DIR (compose's one-shot `pki` service runs it into
# the shared volume; tests/e2e/test_two_instances.py runs it on the host).
#
# usage: pki.sh DIR [SAN ...]   (SANs: extra DNS names of the instances)
#
# Why shared: a client moving between instances must trust one CA, be
# accepted with one client certificate, and present ServiceAccount tokens
# any instance verifies. Why one serving certificate rather than one per
# instance: the instances are interchangeable behind one set of names, and
# the certificate is made where openssl runs, before any instance starts.
#
#   ca.crt, ca.key                  client CA; signs everything below and, in
#                                   each instance (--client-ca-key-file), the
#                                   admin certificate of its kubeconfig
#   apiserver.crt, apiserver.key    serving certificate: 127.0.0.1, ::1,
#                                   localhost, kubernetes.default.svc, SANs
#   sa.key, sa.pub                  ServiceAccount token signing key pair
#   healthcheck.crt, healthcheck.key  client certificate (CN
#                                   sqlkube-healthcheck, no group): /readyz
#                                   needs an authenticated user
#
# Files that exist are kept, so re-running it (every `compose up`) changes
# nothing; delete DIR's files to rotate. TLS keys are ECDSA P-256 (PKCS#8);
# the ServiceAccount key is RSA 2048, since sqlkube signs tokens RS256 (the
# algorithm every kube token verifier accepts). Private files 0600, the
# directory readable by its owner only.
set -eu

dir=${1:?usage: pki.sh DIR [SAN ...]}
shift
umask 077
mkdir -p "$dir"
# umask covers a directory made here; compose's volume mount point exists
# already (0755, from the image), so set the mode the header promises.
chmod 700 "$dir"
cd "$dir"

newkey() {
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
}

# sign NAME CN EXTENSIONS: NAME.key and NAME.crt signed by the CA.
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
    openssl req -x509 -new -key ca.key.tmp -subj /CN=sqlkube-ca -days 3650 -sha256 \
        -addext basicConstraints=critical,CA:TRUE \
        -addext keyUsage=critical,keyCertSign,cRLSign -out ca.crt.tmp
    mv ca.key.tmp ca.key
    mv ca.crt.tmp ca.crt
fi

if [ ! -f apiserver.crt ]; then
    sans=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default
    sans=$sans,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
    for san in "$@"; do
        sans=$sans,DNS:$san
    done
    sign apiserver kube-apiserver "subjectAltName=$sans
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth"
fi

if [ ! -f healthcheck.crt ]; then
    sign healthcheck sqlkube-healthcheck "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
fi

if [ ! -f sa.key ]; then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key.tmp 2>/dev/null
    openssl pkey -in sa.key.tmp -pubout -out sa.pub
    mv sa.key.tmp sa.key
fi
echo "pki.sh: $dir holds ca, apiserver, healthcheck and sa keys"
