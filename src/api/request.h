/*
 * request.h - what passes between a transport (the HTTP layer) and the
 * API: the view of one request, the wake-up a waiting call asks for, and
 * the response. Types only; api.h has the functions that take them.
 *
 * Ownership: a call copies what it needs from sk_http_req at start, except
 * the body, which it borrows until sk_api_call_free.
 */
#ifndef SK_API_REQUEST_H
#define SK_API_REQUEST_H

#include "core/err.h"

#include <stddef.h>

/* kube-apiserver's MaxRequestBodyBytes. */
#define SK_API_MAX_BODY (3u * 1024 * 1024)

typedef struct sk_http_req {
    const char *method;
    /* The decoded path segments ("/api/v1/namespaces" is "api", "v1",
     * "namespaces"): valid UTF-8 without NUL bytes. */
    const char *const *segs;
    size_t n_segs;
    /* Value of a query parameter (decoded, valid UTF-8) or header, NULL if
     * absent; borrowed, valid during sk_api_call_start only. A parameter
     * given without a value ("?verbose") is "". */
    const char *(*query)(void *ctx, const char *key);
    const char *(*header)(void *ctx, const char *key);
    /* Calls fn with each header (name as sent, value), repeated ones each
     * time, in the order sent; valid during sk_api_call_start only. NULL:
     * the transport shows no more than header() does. */
    void (*each_header)(void *ctx, void (*fn)(void *arg, const char *key, const char *value),
                        void *arg);
    /* Non-zero once the client has closed its end: long work for it stops. */
    int (*client_gone)(void *ctx);
    void *ctx;
    /* The request target as sent ("/api/v1/pods?limit=5") and the peer's
     * address ("127.0.0.1"; NULL if unknown), for the audit log; borrowed
     * during sk_api_call_start. */
    const char *target;
    const char *peer_addr;
    const char *body; /* borrowed until sk_api_call_free */
    size_t body_len;
    int body_too_large; /* the body exceeded SK_API_MAX_BODY and was dropped */
    /* SK_OK, or the HTTP layer's refusal of the request target (e.g. a
     * malformed escape: SK_ERR_BAD_REQUEST), answered as a Status with
     * reject_msg (borrowed during sk_api_call_start). */
    sk_err reject;
    const char *reject_msg;
    /* The client certificate the connection showed (TLS only):
     * SK_PEER_CERT_NONE, _VALID (peer_cn and peer_orgs, borrowed during
     * sk_api_call_start, are its subject's CN and O values) or _INVALID
     * (not issued by the trusted CA, expired, or not for client auth). */
    int peer_cert;
    const char *peer_cn;
    const char *const *peer_orgs;
    size_t n_peer_orgs;
} sk_http_req;

enum { SK_PEER_CERT_NONE = 0, SK_PEER_CERT_VALID = 1, SK_PEER_CERT_INVALID = -1 };

/* Called once, from another thread, when a waiting call can go on. */
typedef void (*sk_api_wake_fn)(void *arg);

typedef struct sk_api_response {
    int status;
    const char *content_type;
    const char *body; /* borrowed from the call; NULL when streaming */
    size_t body_len;
    int streaming; /* pull the body with sk_api_call_read */
    /* The stream is a watch: it lasts until its timeout or the client's
     * going, mostly idle, so the HTTP layer may serve it off the threads
     * that handle requests. */
    int watch;
    /* Seconds without progress after which the HTTP layer drops the
     * connection (0: its default). Set for watches. */
    int stall_timeout_s;
    /* Warning header values ("299 - \"unknown field ...\""), borrowed. */
    const char *const *warnings;
    size_t n_warnings;
    int retry_after_s;    /* > 0: a Retry-After header, in seconds */
    const char *audit_id; /* the Audit-Id header's value, borrowed */
} sk_api_response;

#endif
