/*
 * members.c - see members.h.
 *
 * MemberList is rare (clients call it on connect when syncing endpoints), so
 * it reads the leases from the store rather than keeping a view of them: one
 * keyset scan of kube-system's leases at the current revision, in pages.
 */
#include "etcd/members.h"
#include "core/check.h"
#include "kube/expiry.h"
#include "kube/registry.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 500

void sk_etcd_client_url(const char *listen, int tls, char *out, size_t n)
{
    if (strncmp(listen, "http://", 7) == 0)
        listen += 7;
    const char *colon = strrchr(listen, ':');
    size_t host_len = colon ? (size_t)(colon - listen) : strlen(listen);
    char host[256];
    snprintf(host, sizeof host, "%.*s", (int)host_len, listen);
    if (!*host || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "[::]") == 0 ||
        strcmp(host, "::") == 0) {
        if (gethostname(host, sizeof host - 1) != 0 || !*host)
            snprintf(host, sizeof host, "localhost");
        host[sizeof host - 1] = '\0';
    }
    snprintf(out, n, "%s://%s%s", tls ? "https" : "http", host, colon ? colon : "");
}

uint64_t sk_etcd_id_of(const char *name)
{
    uint64_t h = 14695981039346656037ULL;
    for (const char *s = name; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

typedef struct roster {
    sk_arena *a;
    sk_etcd_member *v;
    size_t n, cap;
    char last_name[256]; /* keyset position of the page */
    int seen;            /* rows in the page */
} roster;

static void add(roster *r, uint64_t id, const char *name, const char *url)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].id == id)
            return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 8;
        sk_etcd_member *v = sk_arena_alloc(r->a, cap * sizeof *v);
        if (r->n)
            memcpy(v, r->v, r->n * sizeof *v);
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (sk_etcd_member){id, sk_arena_strdup(r->a, name), sk_arena_strdup(r->a, url)};
}

/* One lease: a member if it is an identity lease naming an etcd client URL. */
static int visit(void *arg, const sk_row *row)
{
    roster *r = arg;
    r->seen++;
    snprintf(r->last_name, sizeof r->last_name, "%s", row->name);
    json_t *obj = json_loadb(row->value, row->value_len, 0, NULL);
    json_t *meta = json_object_get(obj, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    const char *component = json_string_value(json_object_get(labels, SK_IDENTITY_LEASE_LABEL));
    const char *url = json_string_value(
        json_object_get(json_object_get(meta, "annotations"), SK_IDENTITY_ETCD_URL_ANNOTATION));
    const char *host = json_string_value(json_object_get(labels, "kubernetes.io/hostname"));
    if (component && strcmp(component, SK_IDENTITY_LEASE_COMPONENT) == 0 && url && *url)
        add(r, sk_etcd_id_of(url), host ? host : row->name, url);
    json_decref(obj);
    return 0;
}

static int by_id(const void *x, const void *y)
{
    uint64_t a = ((const sk_etcd_member *)x)->id, b = ((const sk_etcd_member *)y)->id;
    return a < b ? -1 : a > b;
}

sk_err sk_etcd_members(sk_store *store, const sk_etcd_member *self, sk_arena *a,
                       sk_etcd_member **out, size_t *n_out)
{
    const sk_resource *leases = sk_registry_find("coordination.k8s.io", "v1", "leases");
    SK_CHECK(leases != NULL);
    roster r = {.a = a};
    int64_t rev = 0, compact = 0;
    sk_err err = sk_store_revisions(store, &rev, &compact);
    while (err == SK_OK && rev > 0) {
        sk_list_query q = {.resource = leases->storage,
                           .ns = SK_IDENTITY_LEASE_NAMESPACE,
                           .after_ns = r.last_name[0] ? SK_IDENTITY_LEASE_NAMESPACE : NULL,
                           .after_name = r.last_name[0] ? r.last_name : NULL,
                           .rev = rev,
                           .limit = PAGE};
        r.seen = 0;
        err = sk_store_list(store, &q, visit, &r);
        if (r.seen < PAGE)
            break;
    }
    if (err != SK_OK)
        return err;
    add(&r, self->id, self->name, self->client_url);
    qsort(r.v, r.n, sizeof *r.v, by_id);
    *out = r.v;
    *n_out = r.n;
    return SK_OK;
}
