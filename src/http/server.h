/*
 * server.h - the HTTP server: libmicrohttpd glue.
 *
 * Owns the listening socket and MHD's thread pool (a few event-loop threads,
 * epoll, no thread per connection), collects request bodies (up to
 * SK_API_MAX_BODY), hands complete requests to the API layer, suspends a
 * connection while its call waits for the store and resumes it when the
 * call wakes it, and streams bodies the API produces incrementally.
 */
#ifndef SK_HTTP_SERVER_H
#define SK_HTTP_SERVER_H

#include "api/api.h"

typedef struct sk_http_server sk_http_server;

/* Binds addr ("HOST:PORT", loopback by default) and starts serving api
 * (borrowed). On failure *errmsg is a new one-line message. */
int sk_http_start(const char *addr, sk_api *api, sk_http_server **out, char **errmsg);
/* Stops accepting new connections; open ones go on. NULL-safe. */
void sk_http_quiesce(sk_http_server *srv);
/* Stops accepting, closes connections, joins threads. NULL-safe. */
void sk_http_stop(sk_http_server *srv);

#endif
