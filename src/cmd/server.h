/*
 * server.h - `sqlkube serve` assembled: the store, the watch cache and the
 * fan-out hub it feeds, the reader over both, the controllers, the API and
 * the HTTP server, started in dependency order and stopped in reverse.
 *
 * This is the one place that knows every layer; each layer below is handed
 * what it needs (borrowed) and owns nothing above it.
 */
#ifndef SK_CMD_SERVER_H
#define SK_CMD_SERVER_H

#include "api/audit.h"
#include "api/authn.h"
#include "core/err.h"

#include <stdint.h>

typedef struct sk_server_config {
    const char *listen, *data_dir, *db;
    const char *etcd_listen; /* NULL: no etcd face */
    int64_t etcd_progress_s; /* etcd watch progress_notify interval; 0: etcd's */
    int64_t etcd_max_request_bytes; /* etcd's --max-request-bytes; 0: etcd's default */
    /* etcd face TLS (sk_etcd_server_config): PEM files, NULL: cleartext */
    const char *etcd_cert_file, *etcd_key_file, *etcd_trusted_ca_file;
    int64_t compact_interval_s, retain;
    int64_t watch_grace_s, watch_stall_s;
    const char *identity_hostname;
    int64_t lease_duration_s, lease_renew_s, event_ttl_s;
    int64_t consistency_check_s;
    int64_t snapshot_bytes; /* as sk_cache_config.snapshot_bytes */
    int64_t window_events;  /* as sk_cache_config.window_events */
    int64_t max_object_bytes;
    unsigned max_connections, max_connections_per_ip;
    int header_timeout_s, idle_timeout_s;
    /* Service ranges (NULL: kube's defaults), checked by kube/svcrange.h. */
    const char *service_cidr, *node_ports;
    int authorization_always_allow; /* --authorization-mode=AlwaysAllow */
    /* TLS material as PEM (NULL cert: plain HTTP), see http/server.h. */
    const char *tls_cert_pem, *tls_key_pem, *tls_trust_pem;
    sk_authn_config authn; /* its token file borrowed */
    /* --encryption-provider-config: kube's EncryptionConfiguration file,
     * read before the store opens (NULL: values kept as they are). */
    const char *encryption_config;
    sk_audit_config audit; /* path NULL: no audit log */
    /* Test-only fault injection (sk_cache_config): NULL/0 in production. */
    int64_t drop_rev_once;
    const char *corrupt_key_once;
} sk_server_config;

typedef struct sk_server sk_server;

/* Starts what needs no store: the port answers at once, /livez ok,
 * /readyz failing and every other request 503 (api.h) until
 * sk_server_open_store succeeds. On failure (a bad encryption config or
 * audit log path, the port in use) *errmsg is a new one-line message. */
sk_server *sk_server_start(const sk_server_config *cfg, char **errmsg);
/* One attempt to open the store and start everything on it; on success the
 * API serves in full. On failure nothing of the attempt is left, /readyz
 * says why, *errmsg is a new one-line message, and SK_ERR_UNAVAILABLE says
 * a later attempt may succeed (sk_store_open); the caller paces them. */
sk_err sk_server_open_store(sk_server *srv, char **errmsg);
/* Shuts down: stops accepting, ends watches spread over the grace period,
 * drains pending writes, stops every part. NULL-safe. */
void sk_server_stop(sk_server *srv);
/* "sqlite" or "postgres", once the store is open. */
const char *sk_server_backend(const sk_server *srv);

#endif
