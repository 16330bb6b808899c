/*
 * namespaces.c - see namespaces.h.
 *
 * A pass reads the namespaces at the cache's revision; for each one being
 * deleted it scans every namespaced resource in it, queues the deletions
 * (one batch per resource, so group commit takes a page of them at once),
 * and tallies what remains (objects kept by finalizers) for the status
 * conditions; a namespace found empty is finalized. Passes come quickly
 * while some namespace is terminating and once a second otherwise.
 */
#include "ctl/namespaces.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "ctl/batch.h"
#include "kube/lifecycle.h"
#include "kube/objmeta.h"

#include <stdlib.h>
#include <string.h>

#define IDLE_INTERVAL_MS 1000
#define BUSY_INTERVAL_MS 100

typedef struct controller {
    sk_store *store;
    sk_reader *reader;
    const sk_ctl *served_all; /* healthy once every stored CRD is served */
} controller;

/* What a namespace still holds: per resource and per finalizer. */
typedef struct tally {
    json_t *resources;  /* "configmaps." -> count */
    json_t *finalizers; /* name -> count */
    int64_t seen;       /* objects found in this pass */
} tally;

typedef struct content_scan {
    const sk_resource *r;
    sk_batch *batch;
    tally *t;
    int64_t remaining; /* of r */
} content_scan;

static void count(json_t *map, const char *key)
{
    json_object_set_new(map, key, json_integer(json_integer_value(json_object_get(map, key)) + 1));
}

static int delete_content(void *arg, sk_blob *item)
{
    content_scan *cs = arg;
    static const sk_delete_options background = {.orphan_dependents = -1,
                                                 .propagation = SK_PROPAGATION_BACKGROUND};
    cs->t->seen++;
    json_t *obj = sk_reader_object(item);
    if (!obj) {
        /* An object that does not parse is still removed. */
        json_t *stub = sk_registry_stub(cs->r, sk_blob_ns(item), sk_blob_name(item));
        sk_batch_delete(cs->batch, cs->r, stub, sk_blob_rev(item), &background);
        json_decref(stub);
        return 0;
    }
    const json_t *fins = json_object_get(json_object_get(obj, "metadata"), "finalizers");
    if (json_array_size(fins) > 0) {
        cs->remaining++;
        size_t i;
        const json_t *f;
        json_array_foreach(fins, i, f)
        {
            if (json_is_string(f))
                count(cs->t->finalizers, json_string_value(f));
        }
    }
    sk_batch_delete(cs->batch, cs->r, obj, sk_blob_rev(item), &background);
    json_decref(obj);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "a, b" of the sorted "<key><infix><count><suffix>" of map. */
static void join_counts(sk_buf *out, const json_t *map, const char *infix, const char *suffix)
{
    size_t n = json_object_size(map), i = 0;
    char **parts = calloc(n ? n : 1, sizeof *parts);
    SK_CHECK_ALLOC(parts);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v)
    {
        sk_buf p = SK_BUF_INIT;
        sk_buf_printf(&p, "%s%s%lld%s", k, infix, (long long)json_integer_value(v), suffix);
        parts[i++] = sk_buf_steal(&p, NULL);
    }
    qsort(parts, n, sizeof *parts, cmp_str);
    for (i = 0; i < n; i++) {
        sk_buf_printf(out, "%s%s", i ? ", " : "", parts[i]);
        free(parts[i]);
    }
    free(parts);
}

/* The five deletion conditions kube's namespace controller reports. */
static json_t *conditions_of(const tally *t, const json_t *old, int64_t now_s)
{
    static const struct {
        const char *type, *ok_reason, *ok_message;
    } kinds[] = {
        {"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered",
         "All resources successfully discovered"},
        {"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
         "All legacy kube types successfully parsed"},
        {"NamespaceDeletionContentFailure", "ContentDeleted",
         "All content successfully deleted, may be waiting on finalization"},
        {"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
        {"NamespaceFinalizersRemaining", "ContentHasNoFinalizers",
         "All content-preserving finalizers finished"},
    };
    char ts[21];
    sk_format_rfc3339(now_s, ts);
    json_t *list = json_array();
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        const char *status = "False", *reason = kinds[i].ok_reason;
        sk_buf msg = SK_BUF_INIT;
        if (i == 3 && json_object_size(t->resources) > 0) {
            status = "True";
            reason = "SomeResourcesRemain";
            sk_buf_puts(&msg, "Some resources are remaining: ");
            join_counts(&msg, t->resources, " has ", " resource instances");
        } else if (i == 4 && json_object_size(t->finalizers) > 0) {
            status = "True";
            reason = "SomeFinalizersRemain";
            sk_buf_puts(&msg, "Some content in the namespace has finalizers remaining: ");
            join_counts(&msg, t->finalizers, " in ", " resource instances");
        } else {
            sk_buf_puts(&msg, kinds[i].ok_message);
        }
        /* lastTransitionTime moves only when the status does. */
        const char *since = ts;
        size_t k;
        const json_t *c;
        json_array_foreach(old, k, c)
        {
            const char *type = json_string_value(json_object_get(c, "type"));
            const char *was = json_string_value(json_object_get(c, "status"));
            const char *at = json_string_value(json_object_get(c, "lastTransitionTime"));
            if (type && was && at && !strcmp(type, kinds[i].type) && !strcmp(was, status))
                since = at;
        }
        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", kinds[i].type,
                                              "status", status, "lastTransitionTime", since,
                                              "reason", reason, "message", msg.data));
        sk_buf_free(&msg);
    }
    return list;
}

/* Empties namespace ns (borrowed, stored at rev), then finalizes it. */
static void terminate(controller *c, const sk_resource *ns_res, const json_t *ns, int64_t rev,
                      int64_t read_rev)
{
    const char *name = json_string_value(json_object_get(json_object_get(ns, "metadata"), "name"));
    tally t = {.resources = json_object(), .finalizers = json_object()};
    /* Health is read before the registry: a CRD served between the two
     * reads would otherwise be missing from the scan while the pass took the
     * namespace for known-empty, and finalized it over that CRD's objects. */
    int every_crd_served = sk_ctl_healthy(c->served_all);
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        const sk_resource *r = all[i];
        if (!r->namespaced || r->stored_as != r)
            continue;
        content_scan cs = {
            .r = r, .batch = sk_batch_new(c->store, "kube-controller-manager"), .t = &t};
        sk_err err = sk_reader_scan(c->reader, r->storage, name, read_rev, delete_content, &cs);
        failed += sk_batch_finish(cs.batch);
        if (err != SK_OK)
            failed++;
        if (cs.remaining > 0) {
            sk_buf key = SK_BUF_INIT;
            sk_buf_printf(&key, "%s.%s", r->resource, r->group);
            json_object_set_new(t.resources, key.data, json_integer(cs.remaining));
            sk_buf_free(&key);
        }
    }
    /* Before every CRD is served again, what remains is not known: neither
     * report it nor finalize. */
    if (!every_crd_served)
        goto out;
    json_t *edited = json_deep_copy(ns);
    if (t.seen == 0 && !failed) {
        json_t *fins = json_object_get(json_object_get(edited, "spec"), "finalizers");
        for (size_t i = json_array_size(fins); i-- > 0;) {
            const char *f = json_string_value(json_array_get(fins, i));
            if (f && strcmp(f, SK_FINALIZER_NAMESPACE) == 0)
                json_array_remove(fins, i);
        }
    } else {
        json_t *status = json_object_get(edited, "status");
        json_t *conds = conditions_of(&t, json_object_get(status, "conditions"), sk_wall_s());
        json_object_set_new(status, "conditions", conds);
    }
    /* kube's namespace controller writes the conditions through /status and
     * drops its finalizer through /finalize */
    sk_batch *b = sk_batch_new(c->store, "kube-controller-manager");
    sk_batch_update(b, ns_res, ns, edited, rev, t.seen == 0 && !failed ? "finalize" : "status");
    sk_batch_finish(b);
out:
    json_decref(t.resources);
    json_decref(t.finalizers);
}

/* An active namespace's default ServiceAccount, created when missing. */
static void ensure_default_sa(controller *c, const sk_resource *sa_res, const char *ns)
{
    sk_blob *sa = NULL;
    sk_err err = sk_reader_get(c->reader, sa_res->storage, ns, "default", 0, &sa);
    if (err == SK_OK) {
        sk_blob_unref(sa);
        return;
    }
    if (err != SK_ERR_NOT_FOUND)
        return;
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}}", "kind", "ServiceAccount", "apiVersion",
                            "v1", "metadata", "name", "default", "namespace", ns);
    sk_objmeta_on_create(obj, sk_wall_s());
    /* kube's serviceaccounts controller */
    sk_batch *b = sk_batch_new(c->store, "kube-controller-manager");
    sk_batch_create(b, sa_res, ns, obj);
    sk_batch_finish(b);
}

typedef struct ns_scan {
    controller *c;
    const sk_resource *ns_res, *sa_res;
    int64_t read_rev;
    int terminating;
} ns_scan;

static int visit_namespace(void *arg, sk_blob *item)
{
    ns_scan *s = arg;
    json_t *ns = sk_reader_object(item);
    if (!ns)
        return 0;
    if (sk_lifecycle_deleting(ns)) {
        s->terminating++;
        terminate(s->c, s->ns_res, ns, sk_blob_rev(item), s->read_rev);
    } else {
        ensure_default_sa(s->c, s->sa_res, sk_blob_name(item));
    }
    json_decref(ns);
    return 0;
}

static int64_t namespaces_pass(void *self, int *done)
{
    controller *c = self;
    ns_scan s = {
        .c = c,
        .ns_res = sk_registry_find("", "v1", "namespaces"),
        .sa_res = sk_registry_find("", "v1", "serviceaccounts"),
        .read_rev = sk_reader_cache_rev(c->reader),
    };
    SK_CHECK(s.ns_res && s.sa_res);
    sk_err err = s.read_rev > 0 ? sk_reader_scan(c->reader, s.ns_res->storage, NULL, s.read_rev,
                                                 visit_namespace, &s)
                                : SK_ERR_UNAVAILABLE;
    if (err != SK_OK && err != SK_ERR_UNAVAILABLE)
        sk_log_warn("namespace controller: cannot read namespaces: %s", sk_err_name(err));
    *done = err == SK_OK;
    return s.terminating ? BUSY_INTERVAL_MS : IDLE_INTERVAL_MS;
}

static const sk_ctl_def namespaces_def = {
    .name = "namespace-controller",
    .pass = namespaces_pass,
    .free = free,
};

sk_ctl *sk_namespaces_start(sk_store *store, sk_reader *reader, const sk_ctl *served_all)
{
    controller *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    c->reader = reader;
    c->served_all = served_all;
    return sk_ctl_start(&namespaces_def, c, 0);
}
