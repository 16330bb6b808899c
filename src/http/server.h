/*
 * server.h - the HTTP server: libmicrohttpd glue.
 *
 * Owns the listening socket and MHD's thread pool (a few event-loop threads,
 * epoll, no thread per connection), parses each request target itself
 * (target.h), collects request bodies (up to SK_API_MAX_BODY), hands
 * complete requests to the API layer, suspends a connection while its call
 * waits for the store and resumes it when the call wakes it, and streams
 * bodies the API produces incrementally: a watch's from the streamer's
 * threads (streamer.h), which take its connection over from MHD's.
 *
 * It also keeps one client from exhausting the server: connections are
 * capped in total and per client address, a connection that has not sent
 * a complete request header within header_timeout_s is closed, idle
 * keep-alive connections are closed after idle_timeout_s, and a body whose
 * declared length is over the limit is refused before it is read.
 *
 * TLS (GnuTLS through MHD): TLS 1.2 and 1.3 only; a client renegotiation
 * ends the connection (MHD never renegotiates, GnuTLS reports it as an
 * error); a handshake is a connection without a request header, so it gets
 * header_timeout_s like any slow client. A client certificate is asked for,
 * never required: it is verified (chain to the trusted CA, validity dates,
 * client-auth purpose) once per connection, and the request carries its
 * subject, or the fact that it failed, to the API's authenticator, which
 * answers 401 as kube-apiserver does rather than failing the handshake.
 */
#ifndef SK_HTTP_SERVER_H
#define SK_HTTP_SERVER_H

#include "api/api.h"

typedef struct sk_http_server sk_http_server;

typedef struct sk_http_config {
    const char *listen;              /* "HOST:PORT" (IPv4) */
    unsigned max_connections;        /* open connections at most */
    unsigned max_connections_per_ip; /* from one client address at most; 0: no cap */
    int header_timeout_s;            /* a new connection's first request header within */
    int idle_timeout_s;              /* a connection with nothing in flight is closed after */
    /* TLS material as PEM (copied): NULL tls_cert_pem serves plain HTTP.
     * tls_trust_pem: the CA client certificates are verified against. */
    const char *tls_cert_pem, *tls_key_pem, *tls_trust_pem;
} sk_http_config;

/* Binds cfg->listen and starts serving api (borrowed). On failure *errmsg
 * is a new one-line message. */
int sk_http_start(const sk_http_config *cfg, sk_api *api, sk_http_server **out, char **errmsg);
/* Stops accepting new connections; open ones go on. NULL-safe. */
void sk_http_quiesce(sk_http_server *srv);
/* Stops accepting, closes connections, joins threads. NULL-safe. */
void sk_http_stop(sk_http_server *srv);

#endif
