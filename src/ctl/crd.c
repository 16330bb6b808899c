/*
 * crd.c - see crd.h.
 *
 * Each pass lists the CRDs from the cache's newest snapshot, which keeps
 * the controller stateless across restarts and instances (what it serves
 * is recomputed from what is stored). A pass starts as soon as the cache
 * has applied a revision the last pass did not see (at the latest PASS_MS
 * after the last, for retries), so a new CRD is served within a few feed
 * rounds, not a polling interval. A pass that lists the same names and
 * revisions as the last settled one stops there: CRDs can be large, and
 * only a changed one needs parsing again.
 *
 * What each pass leaves waiting for the cache is published with the
 * revision it read, under mu, for sk_crd_settled: the API answers a CRD
 * write once the CRD is served (or terminating) as written. A deleted CRD
 * stops being served before the write that removes it, so whoever sees it
 * gone finds its paths and discovery gone too; its objects are deleted
 * from CLEANUP_GRACE_MS after this instance saw the delete.
 */
#include "ctl/crd.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "ctl/batch.h"
#include "kube/condition.h"
#include "kube/lifecycle.h"
#include "kube/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS_MS 250
#define WAITING_POLL_MS 5 /* while a CRD waits for the cache to hold its resource */
#define CLEANUP_GRACE_MS 100 /* a deleted CRD's objects are left to clients this long */

typedef struct deleting_seen {
    char *uid;
    int64_t since_ms;
} deleting_seen;

typedef struct crdctl {
    sk_store *store;
    sk_cache *cache;
    sk_reader *reader;
    char **served; /* names of the CRDs installed in the registry */
    size_t n_served;
    /* The CRDs' names and revisions the last pass settled for good (none
     * waiting for the cache, none being deleted): a pass that lists the
     * same does nothing, without parsing them. */
    uint64_t settled;
    int failed; /* writes of this pass that failed: it is not settled */
    int64_t last_rev; /* the cache revision the last pass read */
    size_t waiting;   /* CRDs the last pass left waiting for the cache */
    /* Published by each pass that read the CRDs (under mu): the revision it
     * read and the names it left unsettled (new strings). */
    pthread_mutex_t mu;
    int64_t published_rev;
    char **unsettled;
    size_t n_unsettled;
    void (*on_pass)(void *arg);
    void *on_pass_arg;
    /* The CRDs (by uid) the last pass found being deleted, and since when
     * this instance has seen them so (monotonic ms). */
    deleting_seen *deleting;
    size_t n_deleting;
} crdctl;

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* Non-zero if another CRD of crd's group accepted name as one of keys. */
static int taken(json_t *const *all, size_t n, const json_t *crd, const char *name,
                 const char *const *keys)
{
    const char *me = str(json_object_get(crd, "metadata"), "name");
    const char *group = str(json_object_get(crd, "spec"), "group");
    for (size_t i = 0; i < n; i++) {
        if (strcmp(str(json_object_get(all[i], "metadata"), "name"), me) == 0 ||
            strcmp(str(json_object_get(all[i], "spec"), "group"), group) != 0)
            continue;
        const json_t *acc = json_object_get(json_object_get(all[i], "status"), "acceptedNames");
        for (const char *const *k = keys; *k; k++) {
            const json_t *v = json_object_get(acc, *k);
            size_t j;
            const json_t *e;
            if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
                return 1;
            json_array_foreach(json_is_array(v) ? v : NULL, j, e) if (
                json_is_string(e) && strcmp(json_string_value(e), name) == 0) return 1;
        }
    }
    return 0;
}

/*
 * kube's naming controller: the names crd may be served under (new
 * reference, its next status.acceptedNames), each requested name taken
 * unless another CRD of the group accepted it (plural, singular and short
 * names share one space, kind and list kind another), else the one accepted
 * before kept. *reason is the last conflict's (NULL: none), *msg its
 * message (new).
 */
static json_t *accept_names(json_t *const *all, size_t n, const json_t *crd, const char **reason,
                            char **msg)
{
    static const char *const resources[] = {"plural", "singular", "shortNames", NULL};
    static const char *const kinds[] = {"kind", "listKind", NULL};
    static const struct {
        const char *key, *reason;
        const char *const *space;
    } single[] = {{"plural", "PluralConflict", resources},
                  {"singular", "SingularConflict", resources},
                  {"kind", "KindConflict", kinds},
                  {"listKind", "ListKindConflict", kinds}};
    const json_t *req = json_object_get(json_object_get(crd, "spec"), "names");
    const json_t *acc = json_object_get(json_object_get(crd, "status"), "acceptedNames");
    json_t *out = json_is_object(acc) ? json_deep_copy(acc) : json_object();
    SK_CHECK_ALLOC(out);
    sk_buf m = SK_BUF_INIT;
    *reason = NULL;
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++) {
        const char *want = str(req, single[i].key), *had = str(acc, single[i].key);
        if (i == 2) { /* short names come between singular and kind */
            const json_t *shorts = json_object_get(req, "shortNames");
            const json_t *had_shorts = json_object_get(acc, "shortNames");
            if (!json_equal(shorts ? shorts : json_null(), had_shorts ? had_shorts : json_null())) {
                sk_buf errs = SK_BUF_INIT;
                size_t j, k, bad = 0;
                const json_t *sn, *h;
                json_array_foreach(shorts, j, sn)
                {
                    int ours = 0;
                    json_array_foreach(had_shorts, k, h) ours |= json_equal(sn, h);
                    if (ours || !taken(all, n, crd, json_string_value(sn), resources))
                        continue;
                    sk_buf_printf(&errs, "%s\"%s\" is already in use", bad++ ? ", " : "",
                                  json_string_value(sn));
                }
                if (bad) {
                    *reason = "ShortNamesConflict";
                    m.len = 0;
                    sk_buf_printf(&m, bad > 1 ? "[%s]" : "%s", errs.data);
                } else {
                    json_object_set_new(out, "shortNames", shorts ? json_deep_copy(shorts) : json_array());
                }
                sk_buf_free(&errs);
            }
        }
        if (strcmp(want, had) != 0 && taken(all, n, crd, want, single[i].space)) {
            *reason = single[i].reason;
            m.len = 0;
            sk_buf_printf(&m, "\"%s\" is already in use", want);
        } else {
            json_object_set_new(out, single[i].key, json_string(want));
        }
    }
    const json_t *cats = json_object_get(req, "categories");
    if (cats)
        json_object_set_new(out, "categories", json_deep_copy(cats));
    else
        json_object_del(out, "categories");
    *msg = *reason ? sk_buf_steal(&m, NULL) : NULL;
    sk_buf_free(&m);
    return out;
}

/* Sets the CRD condition type of crd to (cstatus, reason, message). */
static void set_condition(json_t *crd, const char *type, const char *cstatus, const char *reason,
                          const char *message, const char *now)
{
    json_t *cond = json_pack("{s:s, s:s, s:s, s:s}", "type", type, "status", cstatus, "reason",
                             reason, "message", message);
    SK_CHECK_ALLOC(cond);
    sk_condition_set(crd, cond, now);
}

/* The storage key of a CRD's custom resources ("plural.group"), a new
 * string; NULL when the spec names neither. One spelling for the controller
 * and for the cache's start. */
static char *storage_key(const json_t *spec)
{
    const char *plural = str(json_object_get(spec, "names"), "plural"), *group = str(spec, "group");
    char *key = NULL;
    if (*plural && *group)
        SK_CHECK(asprintf(&key, "%s.%s", plural, group) >= 0);
    return key;
}

typedef struct storages {
    char **names;
    size_t n;
    int rows;
    char last[256]; /* the last name listed: the next page starts after it */
} storages;

static int add_storage(void *arg, const sk_row *row)
{
    storages *st = arg;
    st->rows++;
    snprintf(st->last, sizeof st->last, "%s", row->name);
    json_t *crd = json_loadb(row->value, row->value_len, 0, NULL);
    char *key = storage_key(json_object_get(crd, "spec"));
    if (key) {
        st->names = realloc(st->names, (st->n + 2) * sizeof *st->names);
        SK_CHECK_ALLOC(st->names);
        st->names[st->n++] = key;
        st->names[st->n] = NULL;
    }
    json_decref(crd);
    return 0;
}

sk_err sk_crd_stored_storages(sk_store *store, char ***out)
{
    enum { PAGE = 500 };
    storages st = {0};
    int64_t rev = 0;
    sk_err err = sk_store_revisions(store, &rev, NULL);
    int more = err == SK_OK && rev > 0;
    while (more) {
        st.rows = 0;
        sk_list_query q = {.resource = SK_REGISTRY_CRD_STORAGE,
                           .after_ns = st.last[0] ? "" : NULL,
                           .after_name = st.last[0] ? st.last : NULL,
                           .rev = rev,
                           .limit = PAGE};
        err = sk_store_list(store, &q, add_storage, &st);
        more = err == SK_OK && st.rows == PAGE;
    }
    if (err != SK_OK) {
        for (size_t i = 0; i < st.n; i++)
            free(st.names[i]);
        free(st.names);
        return err;
    }
    if (!st.names) {
        st.names = calloc(1, sizeof *st.names);
        SK_CHECK_ALLOC(st.names);
    }
    *out = st.names;
    return SK_OK;
}

/* Writes next (crd with its new status) over crd, the version read at rev,
 * as kube-apiserver's naming and establishing controllers write it: through
 * /status, recorded in managedFields. */
static void write_status(crdctl *c, const json_t *crd, json_t *next, int64_t rev)
{
    const sk_resource *crds =
        sk_registry_find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
    sk_batch *b = sk_batch_new(c->store, "kube-apiserver");
    sk_batch_update(b, crds, crd, json_incref(next), rev, "status");
    c->failed += sk_batch_finish(b);
}

typedef enum { SETTLE_SERVED, SETTLE_WAITING, SETTLE_NOT_SERVED } settled;

/* Settles one CRD (borrowed) read at rev: served after this, or waiting for
 * the watch cache to hold its storage key (a later pass serves it), or not
 * served (its names conflict). */
static settled settle(crdctl *c, json_t *const *all, size_t n, const json_t *crd, int64_t rev)
{
    const json_t *spec = json_object_get(crd, "spec");
    json_t *next = json_deep_copy(crd);
    SK_CHECK_ALLOC(next);
    json_t *status = json_object_get(next, "status");
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(next, "status", status);
    }
    char now[21];
    sk_format_rfc3339(sk_wall_s(), now);
    char *msg = NULL;
    const char *reason;
    json_object_set_new(status, "acceptedNames", accept_names(all, n, crd, &reason, &msg));
    int ok = reason == NULL;
    set_condition(next, "NamesAccepted", ok ? "True" : "False", ok ? "NoConflicts" : reason,
                  ok ? "no conflicts found" : msg, now);
    free(msg);
    /* The cache holds the storage key before the registry serves it, and
     * both before the status says Established: a client that waited for
     * that condition finds the resource. */
    int held = 0;
    char *storage = ok ? storage_key(spec) : NULL;
    if (storage) {
        held = sk_cache_resource(c->cache, storage) >= 0;
        if (!held)
            sk_cache_want_resource(c->cache, storage);
        free(storage);
    }
    size_t i;
    const json_t *cond;
    int was = 0;
    json_array_foreach(json_object_get(status, "conditions"), i, cond) was |=
        strcmp(str(cond, "type"), "Established") == 0 && strcmp(str(cond, "status"), "True") == 0;
    if (held) {
        sk_registry_install(next);
        set_condition(next, "Established", "True", "InitialNamesAccepted",
                      "the initial names have been accepted", now);
    } else if (!was) {
        /* An Established CRD stays so when a later names change conflicts. */
        set_condition(next, "Established", "False", ok ? "Installing" : "NotAccepted",
                      ok ? "the initial names have been accepted" : "not all names are accepted",
                      now);
    }
    if (!json_equal(next, crd))
        write_status(c, crd, next, rev);
    json_decref(next);
    return ok && !held ? SETTLE_WAITING : held ? SETTLE_SERVED : SETTLE_NOT_SERVED;
}

/* The registry row whose form crd's objects are stored in, or NULL when
 * none of its versions is served. */
static const sk_resource *stored_row(const json_t *crd)
{
    const json_t *spec = json_object_get(crd, "spec");
    const char *group = str(spec, "group");
    const char *plural = str(json_object_get(spec, "names"), "plural");
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(spec, "versions"), i, v)
    {
        const sk_resource *r = sk_registry_find(group, str(v, "name"), plural);
        if (r && r->custom)
            return r->stored_as;
    }
    return NULL;
}

typedef struct cleanup_scan {
    sk_batch *batch;
    const sk_resource *r;
    int seen;
} cleanup_scan;

static int delete_instance(void *arg, sk_blob *item)
{
    static const sk_delete_options background = {.orphan_dependents = -1,
                                                 .propagation = SK_PROPAGATION_BACKGROUND};
    cleanup_scan *cs = arg;
    json_t *obj = sk_reader_object(item);
    if (!obj) /* one that does not parse is still removed */
        obj = sk_registry_stub(cs->r, sk_blob_ns(item), sk_blob_name(item));
    cs->seen++;
    sk_batch_delete(cs->batch, cs->r, obj, sk_blob_rev(item), &background);
    json_decref(obj);
    return 0;
}

/*
 * The CRD finalizer (kube's crd_finalizer controller) for crd (borrowed,
 * read at rev), being deleted with the cleanup finalizer: delete its custom
 * resources (objects with finalizers of their own are marked and waited
 * for), then report InstanceDeletionCompleted and drop the finalizer, which
 * removes the CRD. Each pass deletes what is left; conflicts redo next pass.
 * Returns non-zero when it dropped the finalizer (and stopped serving it).
 */
static int cleanup(crdctl *c, const json_t *crd, int64_t rev)
{
    const sk_resource *crds =
        sk_registry_find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
    const sk_resource *r = stored_row(crd);
    cleanup_scan cs = {sk_batch_new(c->store, "kube-apiserver"), r, 0};
    int failed = 0;
    if (r && sk_reader_scan(c->reader, r->storage, NULL, sk_reader_cache_rev(c->reader),
                            delete_instance, &cs) != SK_OK)
        failed = 1;
    failed += sk_batch_finish(cs.batch);
    json_t *next = json_deep_copy(crd);
    SK_CHECK_ALLOC(next);
    char now[21];
    sk_format_rfc3339(sk_wall_s(), now);
    int finishing = cs.seen == 0 && !failed;
    if (finishing) {
        set_condition(next, "Terminating", "False", "InstanceDeletionCompleted",
                      "removed all instances", now);
        sk_lifecycle_drop_finalizer(next, SK_FINALIZER_CRD_CLEANUP);
        /* Not served from before the CRD is gone: a client that sees it gone
         * finds its paths and discovery gone too (a lost race with the
         * write below serves it again next pass). */
        sk_registry_remove(str(json_object_get(crd, "metadata"), "name"));
    } else {
        set_condition(next, "Terminating", "True", "InstanceDeletionInProgress",
                      "CustomResource deletion is in progress", now);
    }
    sk_batch *b = sk_batch_new(c->store, "kube-apiserver");
    sk_batch_update(b, crds, crd, next, rev, "status");
    sk_batch_finish(b);
    return finishing;
}

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Replaces what sk_crd_settled reads (unsettled stolen), then tells the
 * on_pass callback when it changed what a waiter may conclude. */
static void publish(crdctl *c, int64_t rev, char **unsettled, size_t n_unsettled)
{
    pthread_mutex_lock(&c->mu);
    int changed = rev != c->published_rev || n_unsettled != c->n_unsettled;
    for (size_t i = 0; i < c->n_unsettled; i++)
        free(c->unsettled[i]);
    free(c->unsettled);
    c->published_rev = rev;
    c->unsettled = unsettled;
    c->n_unsettled = n_unsettled;
    pthread_mutex_unlock(&c->mu);
    if (changed && c->on_pass)
        c->on_pass(c->on_pass_arg);
}

static void note_unsettled(char ***names, size_t *n, const char *name)
{
    *names = realloc(*names, (*n + 1) * sizeof **names);
    SK_CHECK_ALLOC(*names);
    (*names)[*n] = strdup(name);
    SK_CHECK_ALLOC((*names)[(*n)++]);
}

/* Since when this instance has seen crd being deleted (now if this pass is
 * the first), noted in next (n_next entries, room for every CRD). */
static int64_t deleting_since(const crdctl *c, const json_t *crd, deleting_seen *next,
                              size_t *n_next)
{
    const char *uid = str(json_object_get(crd, "metadata"), "uid");
    int64_t since = sk_now_ms();
    for (size_t i = 0; i < c->n_deleting; i++)
        if (strcmp(c->deleting[i].uid, uid) == 0)
            since = c->deleting[i].since_ms;
    next[*n_next].uid = strdup(uid);
    SK_CHECK_ALLOC(next[*n_next].uid);
    next[(*n_next)++].since_ms = since;
    return since;
}

static void deleting_free(deleting_seen *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(d[i].uid);
    free(d);
}

static int64_t pass(void *self, int *done)
{
    crdctl *c = self;
    json_t **all = NULL;
    int64_t *revs = NULL;
    size_t n = 0, n_blobs = 0, n_unsettled = 0;
    sk_blob **blobs = NULL;
    char **unsettled = NULL;
    /* A CRD waiting for the cache is held once the feed's round that
     * applied its status write ends, which no new revision announces: that
     * is polled for (the return below). Otherwise wait for a revision. */
    if (c->last_rev > 0 && !c->waiting) {
        sk_cache_state st;
        int64_t wait_ms = PASS_MS; /* a timeout is a retry pass */
        for (size_t i = 0; i < c->n_deleting; i++) {
            /* a CRD whose grace ends first wakes the pass then */
            int64_t left = c->deleting[i].since_ms + CLEANUP_GRACE_MS - sk_now_ms();
            if (left >= 0 && left < wait_ms)
                wait_ms = left;
        }
        sk_cache_wait(c->cache, c->last_rev + 1, (int)wait_ms, &st);
    }
    sk_read_query q = {.resource = SK_REGISTRY_CRD_STORAGE, .rev = sk_reader_cache_rev(c->reader),
                       .limit = SK_READ_MAX_ITEMS};
    if (q.rev < 1)
        q.rev = 1;
    sk_err err;
    uint64_t seen = 1469598103934665603ull;
    for (;;) {
        int k = 0;
        sk_read_source src;
        blobs = realloc(blobs, (n_blobs + SK_READ_MAX_ITEMS) * sizeof *blobs);
        SK_CHECK_ALLOC(blobs);
        if ((err = sk_reader_list(c->reader, &q, blobs + n_blobs, &k, &src)) != SK_OK)
            break;
        for (int i = 0; i < k; i++) {
            const sk_blob *b = blobs[n_blobs + i];
            char rev[24];
            int w = snprintf(rev, sizeof rev, "/%lld;", (long long)sk_blob_rev(b));
            seen = fnv(fnv(seen, sk_blob_name(b), strlen(sk_blob_name(b))), rev, (size_t)w);
        }
        n_blobs += (size_t)k;
        if (k < SK_READ_MAX_ITEMS)
            break;
        q.after_ns = "";
        q.after_name = sk_blob_name(blobs[n_blobs - 1]);
    }
    if (err != SK_OK) {
        sk_log_warn("crd: cannot list CustomResourceDefinitions: %s", sk_err_name(err));
        goto out;
    }
    c->failed = 0;
    c->last_rev = q.rev;
    if (c->settled == seen) {
        *done = 1;
        publish(c, q.rev, NULL, 0);
        goto out;
    }
    all = calloc(n_blobs + 1, sizeof *all);
    revs = calloc(n_blobs + 1, sizeof *revs);
    SK_CHECK(all && revs);
    for (size_t i = 0; i < n_blobs; i++) {
        json_t *o = sk_reader_object(blobs[i]);
        if (o) {
            revs[n] = sk_blob_rev(blobs[i]);
            all[n++] = o;
        }
    }
    char **served = calloc(n + 1, sizeof *served);
    size_t n_served = 0, waiting = 0, deleting_n = 0, n_next_deleting = 0;
    deleting_seen *next_deleting = calloc(n + 1, sizeof *next_deleting);
    SK_CHECK(served && next_deleting);
    for (size_t i = 0; i < n; i++) {
        const char *name = str(json_object_get(all[i], "metadata"), "name");
        const json_t *meta = json_object_get(all[i], "metadata");
        int deleting = json_object_get(meta, "deletionTimestamp") != NULL;
        if (deleting && sk_lifecycle_has_finalizer(all[i], SK_FINALIZER_CRD_CLEANUP)) {
            deleting_n++; /* until its objects are gone: every pass */
            /* served still if it was (reads and deletes), with creates refused */
            size_t k;
            const json_t *cond;
            int established = 0;
            json_array_foreach(json_object_get(json_object_get(all[i], "status"), "conditions"),
                               k, cond) established |= strcmp(str(cond, "type"), "Established") == 0 &&
                                                       strcmp(str(cond, "status"), "True") == 0;
            if (established) {
                sk_registry_install(all[i]);
                served[n_served] = strdup(name);
                SK_CHECK_ALLOC(served[n_served++]);
            }
            /* Instances are deleted from CLEANUP_GRACE_MS after this instance
             * first saw the CRD deleted, as kube's finalizer starts after its
             * informer and a status write: `kubectl delete -f` of a CRD and
             * its objects deletes them itself, as against kube-apiserver. */
            int64_t since = deleting_since(c, all[i], next_deleting, &n_next_deleting);
            if (since + CLEANUP_GRACE_MS <= sk_now_ms() && cleanup(c, all[i], revs[i]) &&
                established)
                free(served[--n_served]); /* cleanup stopped serving it */
            continue;
        }
        settled how = settle(c, all, n, all[i], revs[i]);
        waiting += how == SETTLE_WAITING;
        if (how == SETTLE_WAITING)
            note_unsettled(&unsettled, &n_unsettled, name);
        if (how != SETTLE_NOT_SERVED) {
            /* later CRDs of this pass see the names taken */
            json_t *status = json_object_get(all[i], "status");
            if (!json_is_object(status)) {
                status = json_object();
                json_object_set_new(all[i], "status", status);
            }
            json_object_set(status, "acceptedNames",
                            json_object_get(json_object_get(all[i], "spec"), "names"));
        }
        if (how == SETTLE_SERVED) {
            served[n_served] = strdup(name);
            SK_CHECK_ALLOC(served[n_served++]);
        }
    }
    for (size_t i = 0; i < c->n_served; i++) {
        size_t k = 0;
        while (k < n_served && strcmp(served[k], c->served[i]) != 0)
            k++;
        if (k == n_served)
            sk_registry_remove(c->served[i]);
        free(c->served[i]);
    }
    free(c->served);
    c->served = served;
    c->n_served = n_served;
    deleting_free(c->deleting, c->n_deleting);
    c->deleting = next_deleting;
    c->n_deleting = n_next_deleting;
    /* ready (poststarthook/crd-informer-synced) once every stored CRD
     * that can be served is */
    *done = waiting == 0;
    c->waiting = waiting;
    c->settled = waiting == 0 && deleting_n == 0 && !c->failed ? seen : 0;
    publish(c, q.rev, unsettled, n_unsettled);
    unsettled = NULL;
    n_unsettled = 0;
out:
    for (size_t i = 0; i < n_unsettled; i++)
        free(unsettled[i]);
    free(unsettled);
    for (size_t i = 0; i < n_blobs; i++)
        sk_blob_unref(blobs[i]);
    free(blobs);
    for (size_t i = 0; i < n; i++)
        json_decref(all[i]);
    free(all);
    free(revs);
    return err != SK_OK ? PASS_MS : c->waiting ? WAITING_POLL_MS : 0;
}

static void crdctl_free(void *self)
{
    crdctl *c = self;
    for (size_t i = 0; i < c->n_served; i++)
        free(c->served[i]);
    free(c->served);
    for (size_t i = 0; i < c->n_unsettled; i++)
        free(c->unsettled[i]);
    free(c->unsettled);
    deleting_free(c->deleting, c->n_deleting);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static const sk_ctl_def def = {"crd", pass, crdctl_free};

sk_ctl *sk_crd_start(sk_store *store, sk_cache *cache, sk_reader *reader,
                     void (*on_pass)(void *arg), void *on_pass_arg)
{
    crdctl *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    c->cache = cache;
    c->reader = reader;
    c->on_pass = on_pass;
    c->on_pass_arg = on_pass_arg;
    pthread_mutex_init(&c->mu, NULL);
    return sk_ctl_start(&def, c, 0);
}

int sk_crd_settled(sk_ctl *crd, const char *name, int64_t rev)
{
    crdctl *c = sk_ctl_self(crd);
    pthread_mutex_lock(&c->mu);
    int settled = c->published_rev >= rev;
    for (size_t i = 0; settled && i < c->n_unsettled; i++)
        settled = strcmp(c->unsettled[i], name) != 0;
    pthread_mutex_unlock(&c->mu);
    return settled;
}
