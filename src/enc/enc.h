/*
 * enc.h - encryption at rest as kube-apiserver does it: an
 * EncryptionConfiguration (apiserver.config.k8s.io/v1, YAML or JSON) names,
 * per resource, an ordered list of providers; the first one encrypts, every
 * one is tried to decrypt.
 *
 * Providers: identity (plain), aescbc, aesgcm (GnuTLS) and secretbox
 * (libsodium), each with ordered keys; kms is refused for now. A sealed
 * value starts with kube's prefix "k8s:enc:<provider>:v1:<key name>:" so the
 * key that wrote it is known, followed by the provider's bytes laid out as
 * kube lays them out (aescbc: 16-byte IV, AES-CBC with PKCS#7 padding;
 * aesgcm: 12-byte random nonce, ciphertext, 16-byte tag; secretbox: 24-byte
 * nonce, XSalsa20-Poly1305 box), in standard base64 with padding.
 *
 * Why base64: sqlkube keeps objects in a TEXT column (sk_history.value),
 * which must hold valid UTF-8 (PostgreSQL refuses other bytes; SQLite's
 * text functions and the SQL views assume it). base64 keeps the value text
 * while a reader still sees, in clear, which provider and key wrote it; the
 * bytes kube would keep in etcd are the prefix followed by the base64
 * decoding of the rest, so moving a value to or from etcd is one decode or
 * encode.
 *
 * Pure apart from randomness: no I/O, no globals but libsodium's one-time
 * initialisation. A config is immutable once parsed and may be used from
 * any number of threads.
 */
#ifndef SK_ENC_ENC_H
#define SK_ENC_ENC_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct sk_enc_config sk_enc_config;
/* The ordered providers of one resource (borrowed from its config). */
typedef struct sk_enc_chain sk_enc_chain;

/*
 * Parses and validates the len bytes of an EncryptionConfiguration. On
 * success *out is a new config (sk_enc_config_free). On SK_ERR_INVALID
 * *errmsg is a new message worded as kube-apiserver's start fails: "error
 * while parsing file: " and kube's field errors (one, or several in
 * brackets), or "error while building transformers: " and the masking rule
 * broken. Key material never appears in a message.
 */
sk_err sk_enc_config_parse(const char *text, size_t len, sk_enc_config **out, char **errmsg);
/* NULL-safe; zeroes every key before freeing it. */
void sk_enc_config_free(sk_enc_config *c);

/*
 * The providers configured for the resource `resource` of API group `group`
 * ("" for the core group), found as kube finds them: the exact resource,
 * else "*.<group>", else "*.*"; NULL when none applies (the value is kept
 * plain). Borrowed from c.
 */
const sk_enc_chain *sk_enc_lookup(const sk_enc_config *c, const char *group, const char *resource);

/*
 * Encrypts the len bytes at plain with the chain's first provider and its
 * first key; aad (aad_len bytes, may be NULL when 0) is bound to the value
 * by aesgcm as kube binds the etcd key, and ignored by the other providers,
 * as in kube. On success *out is a new NUL-terminated text of *out_len
 * bytes (for identity, a copy of plain).
 */
sk_err sk_enc_seal(const sk_enc_chain *ch, const char *plain, size_t len, const void *aad,
                   size_t aad_len, char **out, size_t *out_len);

/*
 * Decrypts a value sealed by any provider and key of the chain, trying them
 * in order by prefix as kube does (identity reads anything that does not
 * start with "k8s:enc:"). On success *out is a new NUL-terminated buffer of
 * *out_len bytes and, when stale is given, *stale tells whether a provider
 * or key other than the first read it (the value wants rewriting). On
 * SK_ERR_INTERNAL *errmsg is a new message naming the provider and key
 * that failed, or the prefix that nothing configured matches.
 */
sk_err sk_enc_open(const sk_enc_chain *ch, const char *stored, size_t len, const void *aad,
                   size_t aad_len, char **out, size_t *out_len, bool *stale, char **errmsg);

#endif
