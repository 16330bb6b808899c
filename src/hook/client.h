/*
 * client.h - HTTPS POSTs to admission webhooks, over libcurl (GnuTLS
 * flavour): one client per server, shared by every request thread.
 *
 * Connections are kept alive in a pool of curl handles, and TLS sessions
 * and DNS answers are shared between threads, so a busy webhook is called
 * over a kept-alive connection instead of a new TLS handshake per call. A
 * call is bounded as a whole (connect, TLS, send, wait, receive) by its
 * timeout: a request thread waits for a webhook at most that long.
 */
#ifndef SK_HOOK_CLIENT_H
#define SK_HOOK_CLIENT_H

#include "core/buf.h"
#include "core/err.h"

#include <stddef.h>

typedef struct sk_hook_client sk_hook_client;

/* New client; free with sk_hook_client_free. */
sk_hook_client *sk_hook_client_new(void);
void sk_hook_client_free(sk_hook_client *c);

/* The file the TLS library reads the PEM roots ca (a caBundle's bytes,
 * borrowed) from: made once per distinct bundle, kept until the client is
 * freed. New path, or NULL when it cannot be written. */
char *sk_hook_client_ca_file(sk_hook_client *c, const unsigned char *ca, size_t len);

/* One call (all borrowed). ca_file: the roots the server must chain to (a
 * caBundle, sk_hook_client_ca_file), or NULL for the system's. */
typedef struct sk_hook_post {
    const char *url;
    /* "HOST:PORT:ADDR:PORT" (curl's CONNECT_TO): reach url's host and port
     * at another address while verifying the certificate for url's host;
     * NULL: url's own */
    const char *connect_to;
    const char *ca_file;
    int timeout_s;
    const char *body;
    size_t body_len;
} sk_hook_post;

/*
 * POSTs p->body as application/json. SK_OK: *status is the HTTP status and
 * out holds the response body (appended). Otherwise the call did not
 * complete (SK_ERR_TIMEOUT: the timeout ran out; SK_ERR_UNAVAILABLE:
 * anything else, connection and TLS verification included) and *why (new)
 * says what failed.
 */
sk_err sk_hook_client_post(sk_hook_client *c, const sk_hook_post *p, long *status, sk_buf *out,
                           char **why);

#endif
