/*
 * jwt.h - JSON Web Tokens as kube-apiserver issues ServiceAccount tokens:
 * compact JWS (RFC 7515) signed RS256 (RSASSA-PKCS1-v1_5 with SHA-256),
 * header {"alg":"RS256","kid":<key id>}, and the set of keys that sign and
 * verify them.
 *
 * The key id is kube's: base64url of the SHA-256 of the public key's DER
 * (PKIX), so a token names the key that signed it; verification still
 * tries every key (kube does too: the kid is a hint, not trusted).
 *
 * Pure: keys come in as PEM text and nothing here touches files (key files
 * are read, and the default key generated, by http/pki.c and cmd/main.c).
 * A key set is immutable once made, so any thread may sign and verify with
 * it at once.
 */
#ifndef SK_KUBE_JWT_H
#define SK_KUBE_JWT_H

#include "core/err.h"

#include <jansson.h>
#include <stddef.h>

typedef struct sk_jwt_keys sk_jwt_keys;

/* A key set: signing_pem a PEM RSA private key (PKCS#1 or PKCS#8), or NULL
 * for a set that only verifies; verify_pems n PEM texts, each holding one
 * or more blocks (public keys, RSA private keys, certificates: the forms
 * kube's --service-account-key-file takes); n == 0: the signing key's
 * public part. On SK_ERR_INVALID *errmsg is a new one-line message. *out
 * is new (sk_jwt_keys_free). */
sk_err sk_jwt_keys_new(const char *signing_pem, const char *const *verify_pems, size_t n,
                       sk_jwt_keys **out, char **errmsg);
void sk_jwt_keys_free(sk_jwt_keys *k); /* NULL-safe */
/* Whether k has a signing key. */
int sk_jwt_keys_can_sign(const sk_jwt_keys *k);

/* claims (borrowed) signed with k's signing key: a new string, or NULL if
 * k cannot sign. */
char *sk_jwt_sign(const sk_jwt_keys *k, const json_t *claims);

/* The claims of a compact JWS without checking anything but its shape
 * (three base64url parts, a JSON object header and payload): to tell
 * whose token it is before verifying. New reference, or NULL. */
json_t *sk_jwt_peek(const char *token);

/* Verifies token: header alg RS256, a signature one of k's keys accepts.
 * SK_OK with *claims_out the payload (new reference); SK_ERR_UNAUTHORIZED
 * otherwise (*why a static text, kube's words where it has them). */
sk_err sk_jwt_verify(const sk_jwt_keys *k, const char *token, json_t **claims_out,
                     const char **why);

/* base64url without padding (RFC 4648 section 5) of n bytes: a new string. */
char *sk_jwt_b64url_encode(const void *data, size_t n);
/* Decodes base64url without padding (padding refused, as JWS does): a new
 * buffer of *n_out bytes plus a NUL, or NULL if s is not base64url. */
unsigned char *sk_jwt_b64url_decode(const char *s, size_t len, size_t *n_out);

#endif
