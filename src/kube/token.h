/*
 * token.h - list continue tokens: the opaque "continue" string of a chunked
 * list, naming the snapshot revision and the last key returned.
 *
 * A token is self-contained (no server-side state), so any sqlkube process
 * sharing the store can continue any list and an abandoned list costs
 * nothing. It is authenticated, not encrypted: every field is either part of
 * the request the client made (resource, namespace) or something the client
 * was just shown (the revision, the last key), so secrecy buys nothing; but a
 * forged token could point a keyset scan anywhere, so an HMAC keyed with the
 * store's token secret (sk_store_token_secret) guards it.
 *
 * Wire form, base64url without padding:
 *   u8 version (1) | i64 rev (BE) | for resource, ns, last_ns, last_name:
 *   u16 length (BE) + bytes | HMAC-SHA256 truncated to 16 bytes
 * The MAC covers every byte before it. 128 bits of truncated HMAC-SHA256 is
 * the usual bound for a forgery-only threat (NIST SP 800-107): an attacker
 * gets one online guess per request at 2^-128, and the token stays short
 * enough for a query string.
 */
#ifndef SK_KUBE_TOKEN_H
#define SK_KUBE_TOKEN_H

#include "core/err.h"

#include <stdint.h>

typedef struct sk_token {
    int64_t rev;     /* snapshot revision of the list, > 0 */
    char *resource;  /* group-qualified resource: "configmaps", "leases.coordination.k8s.io" */
    char *ns;        /* namespace scope of the list; "" = all namespaces or cluster-scoped */
    char *last_ns;   /* last key returned */
    char *last_name; /* with last_ns */
} sk_token;

/* Encodes t (all strings non-NULL, each shorter than 64 KiB: names that
 * passed validation always are) signed with secret. Returns a new string. */
char *sk_token_encode(const sk_token *t, const unsigned char secret[32]);

/*
 * Decodes and verifies s. Malformed base64, a bad MAC, an unknown version,
 * short or trailing bytes, NUL bytes in a field or rev <= 0 give
 * SK_ERR_BAD_REQUEST with *errmsg a new string in Kubernetes' style
 * ("continue key is not valid: ..."; caller frees). On success *out is
 * filled; the caller releases it with sk_token_clear.
 */
sk_err sk_token_decode(const char *s, const unsigned char secret[32], sk_token *out, char **errmsg);

/* Frees t's strings and zeroes it; safe on a zeroed token. */
void sk_token_clear(sk_token *t);

#endif
