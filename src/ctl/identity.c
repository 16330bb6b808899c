/*
 * identity.c - see identity.h.
 *
 * The controller writes straight to the store (not through HTTP): it is the
 * server itself. A renewal reads the current lease and writes it back with
 * the read revision as precondition, so a concurrent client write is never
 * overwritten blindly; on a conflict it simply tries again at the next beat.
 */
#include "ctl/identity.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "kube/expiry.h"
#include "kube/registry.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct identity {
    sk_store *store;
    char hostname[256];
    char name[48];
    char holder[64];
    int64_t duration_s, renew_s;
    char etcd_client_url[320]; /* "": none */
    const sk_resource *leases;
} identity;

/* "kube-apiserver-" + lower-case base32 (no padding) of the first 16 bytes
 * of SHA-256(hostname): 41 bytes with the NUL. */
static void lease_name(const char *hostname, char out[48])
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
    unsigned char digest[32];
    SK_CHECK(gnutls_hash_fast(GNUTLS_DIG_SHA256, hostname, strlen(hostname), digest) == 0);
    int n = snprintf(out, 48, "kube-apiserver-");
    /* base32 of 16 bytes: 128 bits in 26 five-bit groups, no padding. */
    for (int bit = 0; bit < 128; bit += 5) {
        int byte = bit / 8, off = bit % 8;
        unsigned v = (unsigned)digest[byte] << 8 | (byte + 1 < 16 ? digest[byte + 1] : 0);
        out[n++] = alphabet[(v >> (11 - off)) & 31];
    }
    out[n] = '\0';
}

static void micro_time(char out[32])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char secs[21];
    sk_format_rfc3339(ts.tv_sec, secs);
    /* "2006-01-02T15:04:05Z" -> "2006-01-02T15:04:05.000000Z" */
    snprintf(out, 32, "%.19s.%06dZ", secs, (int)(ts.tv_nsec / 1000));
}

/* The lease as this server writes it, keeping what a current version
 * (borrowed, may be NULL) holds beyond the fields it owns. New reference. */
static json_t *lease_object(identity *id, const json_t *current)
{
    char now[32];
    micro_time(now);
    json_t *obj = current ? json_deep_copy(current) : json_object();
    SK_CHECK_ALLOC(obj);
    json_object_set_new(obj, "apiVersion", json_string("coordination.k8s.io/v1"));
    json_object_set_new(obj, "kind", json_string("Lease"));
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        char uid[37], ts[21];
        sk_uuid4(uid);
        sk_format_rfc3339(sk_wall_s(), ts);
        meta = json_pack("{s:s, s:s, s:s, s:s}", "name", id->name, "namespace",
                         SK_IDENTITY_LEASE_NAMESPACE, "uid", uid, "creationTimestamp", ts);
        json_object_set_new(obj, "metadata", meta);
    }
    json_t *labels = json_object_get(meta, "labels");
    if (!json_is_object(labels)) {
        labels = json_object();
        json_object_set_new(meta, "labels", labels);
    }
    json_object_set_new(labels, SK_IDENTITY_LEASE_LABEL, json_string(SK_IDENTITY_LEASE_COMPONENT));
    json_object_set_new(labels, "kubernetes.io/hostname", json_string(id->hostname));
    /* Set or cleared at every write: a restart without the etcd face leaves
     * the member list. */
    json_t *notes = json_object_get(meta, "annotations");
    if (*id->etcd_client_url && !json_is_object(notes)) {
        notes = json_object();
        json_object_set_new(meta, "annotations", notes);
    }
    if (*id->etcd_client_url)
        json_object_set_new(notes, SK_IDENTITY_ETCD_URL_ANNOTATION,
                            json_string(id->etcd_client_url));
    else if (json_is_object(notes) &&
             json_object_del(notes, SK_IDENTITY_ETCD_URL_ANNOTATION) == 0 &&
             json_object_size(notes) == 0)
        json_object_del(meta, "annotations");
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(obj, "spec", spec);
    }
    const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
    if (!holder || strcmp(holder, id->holder) != 0) {
        json_object_set_new(spec, "holderIdentity", json_string(id->holder));
        json_object_set_new(spec, "acquireTime", json_string(now));
    }
    json_object_set_new(spec, "leaseDurationSeconds", json_integer(id->duration_s));
    json_object_set_new(spec, "renewTime", json_string(now));
    return obj;
}

/* One heartbeat: create or renew the lease. */
static sk_err renew(identity *id, const sk_resource *leases)
{
    sk_row cur = {0};
    json_t *current = NULL;
    sk_err err = sk_store_get(id->store, leases->storage, SK_IDENTITY_LEASE_NAMESPACE, id->name, 0, &cur);
    if (err != SK_OK && err != SK_ERR_NOT_FOUND)
        goto out;
    if (err == SK_OK) {
        /* A lease that does not parse (damaged) is replaced, not kept. */
        json_error_t jerr;
        current = json_loadb(cur.value, cur.value_len, 0, &jerr);
        if (!json_is_object(current)) {
            sk_log_warn("identity lease %s does not parse (%s): rewriting it", id->name,
                        jerr.text);
            json_decref(current);
            current = NULL;
        }
        json_object_del(json_object_get(current, "metadata"), "resourceVersion");
    }
    json_t *obj = lease_object(id, current);
    sk_write w = {.op = err == SK_OK ? SK_WRITE_UPDATE : SK_WRITE_CREATE,
                  .resource = leases->storage,
                  .ns = SK_IDENTITY_LEASE_NAMESPACE,
                  .name = id->name,
                  .expected_rev = err == SK_OK ? cur.rev : 0,
                  .object = obj,
                  .require_namespace = SK_IDENTITY_LEASE_NAMESPACE,
                  .expires_at_ms = sk_expiry_for(leases, obj, 0, sk_wall_ms())};
    err = sk_store_write(id->store, &w, NULL);
out:
    json_decref(current);
    sk_row_clear(&cur);
    return err;
}

/* One heartbeat; after a conflict (a client wrote the lease meanwhile) the
 * next one comes soon. */
static int64_t heartbeat(void *self, int *done)
{
    identity *id = self;
    sk_err err = renew(id, id->leases);
    if (err != SK_OK)
        sk_log_warn("identity lease %s: cannot renew: %s", id->name, sk_err_name(err));
    *done = err == SK_OK;
    return err == SK_ERR_CONFLICT ? 100 : id->renew_s * 1000;
}

static const sk_ctl_def identity_def = {
    .name = "identity-lease",
    .pass = heartbeat,
    .free = free,
};

sk_ctl *sk_identity_start(sk_store *store, const sk_identity_config *cfg)
{
    identity *id = calloc(1, sizeof *id);
    SK_CHECK_ALLOC(id);
    id->store = store;
    if (cfg->hostname)
        snprintf(id->hostname, sizeof id->hostname, "%s", cfg->hostname);
    else if (gethostname(id->hostname, sizeof id->hostname - 1) != 0)
        snprintf(id->hostname, sizeof id->hostname, "localhost");
    lease_name(id->hostname, id->name);
    char uid[37];
    sk_uuid4(uid);
    snprintf(id->holder, sizeof id->holder, "kube-apiserver-%s", uid);
    id->duration_s = cfg->duration_s;
    if (cfg->etcd_client_url)
        snprintf(id->etcd_client_url, sizeof id->etcd_client_url, "%s", cfg->etcd_client_url);
    id->renew_s = cfg->renew_s;
    id->leases = sk_registry_find("coordination.k8s.io", "v1", "leases");
    SK_CHECK(id->leases != NULL);
    sk_log_info("identity lease %s/%s held by %s", SK_IDENTITY_LEASE_NAMESPACE, id->name,
                id->holder);
    return sk_ctl_start(&identity_def, id, 0);
}
