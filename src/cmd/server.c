/*
 * server.c - see server.h. Start, in two steps, because the database may
 * not be up when the process is: sk_server_start brings up what needs no
 * store (encryption config, audit log, the API with nothing attached, HTTP),
 * so the port answers health checks and 503s at once; each
 * sk_server_open_store attempt then opens the store and starts on it the
 * default namespaces, hub, cache (which notifies the hub), reader,
 * controllers and the etcd face if asked for (the store, and the cache's
 * feed for Watch), and last attaches them to the API. An attempt that
 * fails releases everything it built, so the next starts from the same
 * place and the API never sees half a server.
 * Stop order: stop accepting; stop what writes besides the API
 * (stop_writers: the etcd face, leases, controllers); end the watches
 * spread over the grace period; drain and stop the store's writer (parked
 * writes answer); stop HTTP; then the rest in reverse.
 */
#include "cmd/server.h"
#include "cmd/encryption.h"
#include "api/api.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "ctl/collector.h"
#include "ctl/gc.h"
#include "ctl/namespaces.h"
#include "ctl/compactor.h"
#include "ctl/consistency.h"
#include "ctl/crd.h"
#include "ctl/identity.h"
#include "ctl/kvdecode.h"
#include "ctl/rbacpolicy.h"
#include "ctl/vapstatus.h"
#include "etcd/members.h"
#include "etcd/server.h"
#include "http/server.h"
#include "kube/defaults.h"
#include "kube/objmeta.h"
#include "kube/registry.h"
#include "kube/svcrange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sk_server {
    sk_server_config cfg;
    sk_encryption *encryption; /* NULL: none configured */
    sk_store *store;
    sk_watch_hub *hub;
    sk_cache *cache;
    sk_reader *reader;
    sk_ctl *identity, *collector, *consistency, *compactor, *namespaces, *gc, *crd, *rbac;
    sk_ctl *kvdecode, *vapstatus;
    sk_api *api;
    sk_audit_log *audit;
    sk_http_server *http;
    sk_etcd_server *etcd;
};

/* Creates default, kube-system and kube-public if missing, as kube-apiserver
 * does at start: through the same rules as a client's create. */
static sk_err ensure_namespaces(sk_store *store)
{
    static const char *const names[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    const sk_resource *r = sk_registry_find("", "v1", "namespaces");
    SK_CHECK(r != NULL);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "kind", "Namespace",
                                "apiVersion", "v1", "metadata", "name", names[i], "labels",
                                "kubernetes.io/metadata.name", names[i]);
        char *msg = NULL;
        sk_objmeta_on_create(obj, sk_wall_s());
        SK_CHECK(sk_defaults_apply(r, obj, &msg) == SK_OK);
        sk_write w = {.op = SK_WRITE_CREATE,
                      .resource = r->storage,
                      .ns = "",
                      .name = names[i],
                      .object = obj};
        sk_err err = sk_store_write(store, &w, NULL);
        if (err != SK_OK && err != SK_ERR_ALREADY_EXISTS)
            return err;
    }
    return SK_OK;
}

/*
 * The `kubernetes` Service in default, as kube-apiserver keeps it: the
 * range's first address (reserved for it: random picks never come from the
 * static band, and the claim makes it this Service's), port 443 to 6443.
 * Written once by whichever server starts first; later starts find it.
 */
static sk_err ensure_kubernetes_service(sk_store *store, const char *cidr)
{
    const sk_resource *r = sk_registry_find("", "v1", "services");
    SK_CHECK(r != NULL);
    sk_svcrange range;
    SK_CHECK(sk_svcrange_parse_cidr(cidr ? cidr : SK_SERVICE_CIDR_DEFAULT, &range) == SK_OK);
    char ip[SK_SVCRANGE_TEXT_MAX];
    sk_svcrange_format(&range, range.base, ip);
    json_t *obj = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}},"
        " s:{s:[{s:s, s:i, s:s, s:i}], s:s, s:[s], s:s, s:s, s:[s], s:s, s:s}}",
        "kind", "Service", "apiVersion", "v1", "metadata", "name", "kubernetes", "namespace",
        "default", "labels", "component", "apiserver", "provider", "kubernetes", "spec", "ports",
        "name", "https", "port", 443, "protocol", "TCP", "targetPort", 6443, "clusterIP", ip,
        "clusterIPs", ip, "type", "ClusterIP", "sessionAffinity", "None", "ipFamilies", "IPv4",
        "ipFamilyPolicy", "SingleStack", "internalTrafficPolicy", "Cluster");
    SK_CHECK_ALLOC(obj);
    char *msg = NULL;
    sk_objmeta_on_create(obj, sk_wall_s());
    SK_CHECK(sk_defaults_apply(r, obj, &msg) == SK_OK);
    sk_claim claim = {SK_SVCRANGE_CLAIM_IP, ip, 0};
    sk_write w = {.op = SK_WRITE_CREATE,
                  .resource = r->storage,
                  .ns = "default",
                  .name = "kubernetes",
                  .object = obj,
                  .require_namespace = "default",
                  .set_claims = 1,
                  .claims = &claim,
                  .n_claims = 1};
    sk_err err = sk_store_write(store, &w, NULL);
    if (err == SK_ERR_CONFLICT)
        sk_log_warn("the kubernetes Service was not created: another Service holds %s", ip);
    return err == SK_ERR_ALREADY_EXISTS || err == SK_ERR_CONFLICT ? SK_OK : err;
}

static void notify_hub(void *hub)
{
    sk_watch_hub_notify(hub);
}

static char *message(const char *fmt, const char *arg)
{
    char *m = NULL;
    if (asprintf(&m, fmt, arg) < 0)
        m = NULL;
    return m;
}

sk_server *sk_server_start(const sk_server_config *cfg, char **errmsg)
{
    sk_server *srv = calloc(1, sizeof *srv);
    SK_CHECK_ALLOC(srv);
    srv->cfg = *cfg;
    char *msg = NULL;
    if (cfg->encryption_config &&
        !(srv->encryption = sk_encryption_load(cfg->encryption_config, &msg))) {
        *errmsg = msg ? msg : message("cannot load %s", cfg->encryption_config);
        goto fail;
    }
    if (cfg->audit.path && sk_audit_open(&cfg->audit, &srv->audit, &msg) < 0) {
        *errmsg = msg ? msg : message("cannot open the audit log %s", cfg->audit.path);
        goto fail;
    }
    sk_api_deps deps = {.audit = srv->audit}; /* the rest once the store is up */
    sk_api_config ac = {
        .listen_addr = cfg->listen,
        .watch_stall_timeout_s = (int)cfg->watch_stall_s,
        .event_ttl_s = cfg->event_ttl_s,
        .max_object_bytes = cfg->max_object_bytes,
        .service_cluster_ip_range = cfg->service_cidr,
        .service_node_port_range = cfg->node_ports,
        .always_allow = cfg->authorization_always_allow,
        .authn = cfg->authn,
    };
    srv->api = sk_api_new(&deps, &ac);
    sk_http_config hc = {
        .listen = cfg->listen,
        .max_connections = cfg->max_connections,
        .max_connections_per_ip = cfg->max_connections_per_ip,
        .header_timeout_s = cfg->header_timeout_s,
        .idle_timeout_s = cfg->idle_timeout_s,
        .tls_cert_pem = cfg->tls_cert_pem,
        .tls_key_pem = cfg->tls_key_pem,
        .tls_trust_pem = cfg->tls_trust_pem,
    };
    if (sk_http_start(&hc, srv->api, &srv->http, &msg) < 0) {
        *errmsg = msg ? msg : message("cannot start the HTTP server on %s", cfg->listen);
        goto fail;
    }
    return srv;
fail:
    sk_server_stop(srv);
    return NULL;
}

/* Stops whatever writes through the store besides the API: the compactor,
 * the etcd face (whole: its calls finish first, while the writer still
 * runs), the identity lease and the expiry collector (a stopping server
 * neither renews nor collects), and the controllers; the CRD controller
 * writes CRD status, so all of it goes before writes stop. NULL-safe,
 * each part once. */
static void stop_writers(sk_server *srv)
{
    sk_ctl_stop(srv->compactor);
    sk_etcd_server_stop(srv->etcd);
    sk_ctl_stop(srv->identity);
    sk_ctl_stop(srv->collector);
    sk_ctl_stop(srv->namespaces);
    sk_ctl_stop(srv->gc);
    sk_ctl_stop(srv->rbac);
    sk_ctl_stop(srv->vapstatus);
    sk_ctl_stop(srv->crd);
    sk_ctl_stop(srv->kvdecode);
    srv->compactor = srv->identity = srv->collector = srv->namespaces = srv->gc = srv->rbac =
        srv->vapstatus = srv->crd = srv->kvdecode = NULL;
    srv->etcd = NULL;
}

/* Stops and frees what sk_server_open_store built (NULL-safe, each part
 * once): after a failed attempt, when nothing was attached to the API, and
 * at the end of sk_server_stop. */
static void release_store_side(sk_server *srv)
{
    stop_writers(srv);
    sk_ctl_stop(srv->consistency);
    if (srv->hub)
        sk_watch_hub_stop(srv->hub);
    sk_cache_free(srv->cache);
    sk_reader_free(srv->reader);
    sk_watch_hub_free(srv->hub);
    sk_store_close(srv->store);
    srv->consistency = NULL;
    srv->hub = NULL;
    srv->cache = NULL;
    srv->reader = NULL;
    srv->store = NULL;
}

sk_err sk_server_open_store(sk_server *srv, char **errmsg)
{
    const sk_server_config *cfg = &srv->cfg;
    char *msg = NULL, *why = NULL;
    char **crd_storages = NULL;
    sk_err err = sk_store_open(cfg->db, &srv->store, &msg);
    if (err != SK_OK) {
        why = msg ? msg : message("cannot open the database %s", cfg->db);
        goto out;
    }
    /* before the first read or write, the default namespaces' below */
    if (srv->encryption)
        sk_store_set_codec(srv->store, sk_encryption_codec(srv->encryption));
    if ((err = ensure_namespaces(srv->store)) != SK_OK) {
        why = message("cannot create the default namespaces: %s", sk_err_name(err));
        goto out;
    }
    if ((err = ensure_kubernetes_service(srv->store, cfg->service_cidr)) != SK_OK) {
        why = message("cannot create the kubernetes Service: %s", sk_err_name(err));
        goto out;
    }
    size_t n;
    const char *const *storages = sk_registry_storages(&n);
    if ((err = sk_crd_stored_storages(srv->store, &crd_storages)) != SK_OK) {
        why = message("cannot read the stored CRDs: %s", sk_err_name(err));
        goto out;
    }
    int n_crd = 0;
    while (crd_storages[n_crd])
        n_crd++;
    srv->hub = sk_watch_hub_new();
    sk_cache_config cc = {
        .resources = storages,
        .n_resources = (int)n,
        .more_resources = (const char *const *)crd_storages,
        .n_more_resources = n_crd,
        .drop_rev_once = cfg->drop_rev_once,
        .corrupt_key_once = cfg->corrupt_key_once,
        .snapshot_bytes = cfg->snapshot_bytes,
        .window_events = (int)cfg->window_events,
    };
    if ((err = sk_cache_new(srv->store, &cc, notify_hub, srv->hub, &srv->cache)) != SK_OK) {
        why = message("cannot build the watch cache: %s", sk_err_name(err));
        goto out;
    }
    srv->reader = sk_reader_new(srv->store, srv->cache);
    char etcd_url[320];
    if (cfg->etcd_listen)
        sk_etcd_client_url(cfg->etcd_listen, cfg->etcd_cert_file != NULL, etcd_url,
                           sizeof etcd_url);
    sk_identity_config ic = {
        .hostname = cfg->identity_hostname,
        .duration_s = cfg->lease_duration_s,
        .renew_s = cfg->lease_renew_s,
        .etcd_client_url = cfg->etcd_listen ? etcd_url : NULL,
    };
    srv->identity = sk_identity_start(srv->store, &ic);
    srv->collector = sk_collector_start(srv->store);
    srv->crd = sk_crd_start(srv->store, srv->cache, srv->reader, notify_hub, srv->hub);
    srv->namespaces = sk_namespaces_start(srv->store, srv->reader, srv->crd);
    srv->gc = sk_gc_start(srv->store, srv->reader, srv->crd);
    srv->rbac = sk_rbacpolicy_start(srv->store, srv->reader);
    srv->vapstatus = sk_vapstatus_start(srv->store, srv->cache, srv->reader);
    srv->kvdecode = sk_kvdecode_start(srv->store);
    srv->consistency =
        sk_consistency_start(srv->cache, srv->store, storages, (int)n, cfg->consistency_check_s);
    if (cfg->etcd_listen) {
        sk_etcd_server_config ec = {.listen = cfg->etcd_listen,
                                    .store = srv->store,
                                    .cache = srv->cache,
                                    .watch_progress_ms = (int)(cfg->etcd_progress_s * 1000),
                                    .cert_file = cfg->etcd_cert_file,
                                    .key_file = cfg->etcd_key_file,
                                    .trusted_ca_file = cfg->etcd_trusted_ca_file,
                                    .name = cfg->identity_hostname,
                                    .max_request_bytes = (size_t)cfg->etcd_max_request_bytes};
        if (!(srv->etcd = sk_etcd_server_start(&ec, &msg))) {
            why = msg ? msg : message("cannot serve the etcd API on %s", cfg->etcd_listen);
            err = SK_ERR_INTERNAL; /* a port or a file: waiting changes nothing */
            goto out;
        }
    }
    sk_api_deps deps = {
        .store = srv->store,
        .cache = srv->cache,
        .reader = srv->reader,
        .hub = srv->hub,
        .identity = srv->identity,
        .collector = srv->collector,
        .consistency = srv->consistency,
        .crd = srv->crd,
        .rbac = srv->rbac,
        .audit = srv->audit,
    };
    sk_api_attach(srv->api, &deps);
    if (cfg->compact_interval_s > 0)
        srv->compactor = sk_compactor_start(srv->store, cfg->compact_interval_s, cfg->retain);
out:
    if (crd_storages) {
        for (char **p = crd_storages; *p; p++)
            free(*p);
        free(crd_storages);
    }
    if (err != SK_OK) {
        release_store_side(srv);
        sk_api_store_down(srv->api, why ? why : sk_err_name(err));
        *errmsg = why;
    }
    return err;
}

void sk_server_stop(sk_server *srv)
{
    if (!srv)
        return;
    sk_http_quiesce(srv->http);
    stop_writers(srv);
    if (srv->api) {
        int grace_ms = (int)(srv->cfg.watch_grace_s * 1000);
        sk_api_begin_shutdown(srv->api, grace_ms);
        sk_api_wait_watches(srv->api, grace_ms + 1000);
    }
    if (srv->store)
        sk_store_stop_writes(srv->store);
    sk_http_stop(srv->http);
    sk_api_free(srv->api);
    sk_audit_close(srv->audit);
    release_store_side(srv);
    sk_encryption_free(srv->encryption);
    free(srv);
}

const char *sk_server_backend(const sk_server *srv)
{
    return sk_store_backend_name(srv->store);
}
