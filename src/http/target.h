/*
 * target.h - the HTTP request target ("/api/v1/namespaces?limit=5"),
 * parsed from its raw bytes into decoded path segments and query
 * parameters.
 *
 * Why raw: a path must be split at its literal '/' before it is
 * percent-decoded, or "abc%00def" becomes the name "abc" and "a%2Fb" two
 * segments; and every decoded byte string is checked here, once, so that
 * nothing above ever sees a NUL, a malformed escape or invalid UTF-8 (which
 * could not be put into a JSON reply). libmicrohttpd's own decoding does
 * neither, and its query parsing stalls a connection that sends more
 * parameters than its per-connection memory holds, so the HTTP layer hands
 * it nothing to parse and uses this instead.
 *
 * Pure: no I/O, no libmicrohttpd; fuzzed by tests/fuzz/fuzz_target.c.
 */
#ifndef SK_HTTP_TARGET_H
#define SK_HTTP_TARGET_H

#include "core/err.h"

#include <stddef.h>

/* Query parameters beyond this are refused (400): no client sends a
 * fraction of it, and it bounds the work one request line can cause. */
#define SK_TARGET_MAX_PARAMS 1000

typedef struct sk_target_param {
    char *key;   /* decoded, non-empty */
    char *value; /* decoded; "" for "?key" and "?key=" */
} sk_target_param;

typedef struct sk_target {
    char **segs; /* decoded path segments; empty ones ("a//b") are kept as "" */
    size_t n_segs;
    sk_target_param *params; /* in request order, duplicates kept */
    size_t n_params;
} sk_target;

/*
 * Parses the len bytes of raw (origin form: "/path?query"). A trailing '/'
 * adds no segment ("/api/" is "/api"). Path segments are percent-decoded;
 * query keys and values are form-decoded ('+' is a space), as Go's
 * url.ParseQuery does. On success *out is filled (release it with
 * sk_target_clear). On failure *out is untouched and *errmsg is a new
 * message:
 *   SK_ERR_BAD_REQUEST  not origin form, a malformed escape, a decoded NUL,
 *                       invalid UTF-8, more than SK_TARGET_MAX_PARAMS
 *   SK_ERR_NOT_FOUND    an encoded '/' inside a path segment (Kubernetes
 *                       splits the decoded path, so no object can be named so)
 */
sk_err sk_target_parse(const char *raw, size_t len, sk_target *out, char **errmsg);

/* The first value of the parameter key, or NULL if absent. Borrowed from t. */
const char *sk_target_query(const sk_target *t, const char *key);

/* Frees what t holds and zeroes it; safe on a zeroed target. */
void sk_target_clear(sk_target *t);

#endif
