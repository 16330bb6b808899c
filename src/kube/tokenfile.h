/*
 * tokenfile.h - kube-apiserver's static token file (--token-auth-file): a
 * CSV of `token,user,uid[,"group1,group2"]`, parsed as Go's encoding/csv
 * reads it for kube (variable field counts, spaces kept, quoted fields with
 * "" escapes and embedded newlines, "\r\n" as "\n", empty lines skipped).
 *
 * Rules kept from kube: a record needs at least three fields; a record with
 * an empty token is skipped; a later duplicate token wins; the fourth field
 * is split at every ',' into groups (kube keeps empty group names too).
 * Bytes kube would refuse as CSV (a bare quote, text after a closing quote,
 * an unterminated quote) and NUL bytes are errors naming the line.
 *
 * Pure: no I/O. The table owns every string it hands out.
 */
#ifndef SK_KUBE_TOKENFILE_H
#define SK_KUBE_TOKENFILE_H

#include "core/err.h"
#include "kube/user.h"

#include <stddef.h>

typedef struct sk_tokenfile sk_tokenfile;

/* Parses len bytes of text. On success *out is a new table (free with
 * sk_tokenfile_free); on SK_ERR_INVALID *errmsg is a new one-line message
 * ("line N: ...") that never quotes a token. */
sk_err sk_tokenfile_parse(const char *text, size_t len, sk_tokenfile **out, char **errmsg);
/* The user token names (borrowed from t, valid until sk_tokenfile_free), or
 * NULL. Every entry is compared in time independent of where they differ. */
const sk_user *sk_tokenfile_lookup(const sk_tokenfile *t, const char *token);
/* Number of distinct tokens. */
size_t sk_tokenfile_count(const sk_tokenfile *t);
/* NULL-safe. */
void sk_tokenfile_free(sk_tokenfile *t);

#endif
