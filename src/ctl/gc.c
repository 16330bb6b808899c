/*
 * gc.c - see gc.h.
 *
 * A pass: scan (every resource at the cache's revision; an object is
 * parsed only if its bytes mention ownerReferences or deletionTimestamp,
 * and only its references and deletion state are kept), index the
 * references by owner uid, then act: owners being deleted with `orphan` or
 * `foregroundDeletion` first, then every dependent, classified as kube's
 * attemptToDeleteItem does (solid, dangling, waiting for its owner's
 * foreground deletion). Owner lookups are remembered for the pass. A pass
 * whose revision is the last one fully handled, with nothing written, is
 * skipped: nothing can have changed.
 */
#include "ctl/gc.h"
#include "core/check.h"
#include "core/log.h"
#include "ctl/batch.h"
#include "kube/lifecycle.h"

#include <stdlib.h>
#include <string.h>

#define IDLE_INTERVAL_MS 1000
#define BUSY_INTERVAL_MS 100

typedef struct gc {
    sk_store *store;
    sk_reader *reader;
    const sk_ctl *served_all;
    /* the last revision a pass handled without writing, and the registry
     * it scanned (a CRD served since adds objects at the same revision) */
    int64_t settled_rev;
    unsigned long settled_generation;
} gc;

/* What a pass keeps of an object with owner references or a deletion
 * finalizer for the collector. */
typedef struct node {
    const sk_resource *r;
    char *ns, *name, *uid;
    int64_t rev;
    json_t *refs; /* ownerReferences (new reference), NULL if none */
    int deleting, orphan, foreground;
    int touched; /* written this pass */
} node;

typedef struct pass {
    gc *g;
    int64_t read_rev;
    node *nodes;
    size_t n, cap;
    json_t *by_owner; /* owner uid -> [node index] */
    json_t *verdicts; /* owner key -> verdict */
    sk_batch *batch;
    int writes;
} pass;

enum { OWNER_SOLID, OWNER_DANGLING, OWNER_WAITING };

static char *copy(const char *s)
{
    char *c = strdup(s ? s : "");
    SK_CHECK_ALLOC(c);
    return c;
}

static json_t *parse(const char *data, size_t len)
{
    json_t *obj = json_loadb(data, len, 0, NULL);
    if (!json_is_object(obj)) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

static const char *meta_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
    return s ? s : "";
}

/* ---- scan ------------------------------------------------------------------ */

typedef struct scan_arg {
    pass *p;
    const sk_resource *r;
} scan_arg;

static int scan_item(void *arg, sk_blob *item)
{
    scan_arg *a = arg;
    pass *p = a->p;
    size_t len;
    const char *data = sk_blob_data(item, &len);
    if (!memmem(data, len, "\"ownerReferences\"", 17) &&
        !memmem(data, len, "\"deletionTimestamp\"", 19))
        return 0;
    json_t *obj = sk_reader_object(item);
    if (!obj)
        return 0;
    json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    int deleting = sk_lifecycle_deleting(obj);
    int orphan = sk_lifecycle_has_finalizer(obj, SK_FINALIZER_ORPHAN);
    int foreground = sk_lifecycle_has_finalizer(obj, SK_FINALIZER_FOREGROUND);
    if (json_array_size(refs) > 0 || (deleting && (orphan || foreground))) {
        if (p->n == p->cap) {
            p->cap = p->cap ? p->cap * 2 : 64;
            p->nodes = realloc(p->nodes, p->cap * sizeof *p->nodes);
            SK_CHECK_ALLOC(p->nodes);
        }
        node *nd = &p->nodes[p->n++];
        *nd = (node){
            .r = a->r,
            .ns = copy(sk_blob_ns(item)),
            .name = copy(sk_blob_name(item)),
            .uid = copy(meta_str(obj, "uid")),
            .rev = sk_blob_rev(item),
            .refs = json_array_size(refs) > 0 ? json_incref(refs) : NULL,
            .deleting = deleting,
            .orphan = orphan,
            .foreground = foreground,
        };
    }
    json_decref(obj);
    return 0;
}

static sk_err scan(pass *p)
{
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    sk_err err = SK_OK;
    for (size_t i = 0; i < n && err == SK_OK; i++) {
        if (all[i]->stored_as != all[i])
            continue;
        scan_arg a = {p, all[i]};
        err = sk_reader_scan(p->g->reader, all[i]->storage, NULL, p->read_rev, scan_item, &a);
    }
    return err;
}

static void index_owners(pass *p)
{
    for (size_t i = 0; i < p->n; i++) {
        size_t k;
        const json_t *ref;
        json_array_foreach(p->nodes[i].refs, k, ref)
        {
            const char *uid = json_string_value(json_object_get(ref, "uid"));
            if (!uid || !*uid)
                continue;
            json_t *list = json_object_get(p->by_owner, uid);
            if (!list) {
                list = json_array();
                json_object_set_new(p->by_owner, uid, list);
            }
            json_array_append_new(list, json_integer((json_int_t)i));
        }
    }
}

/* ---- owners ------------------------------------------------------------------ */

/* The verdict on obj (borrowed, may be NULL) as the owner with uid. */
static int verdict_of(const json_t *obj, const char *uid)
{
    if (!obj || strcmp(meta_str(obj, "uid"), uid) != 0)
        return OWNER_DANGLING;
    if (sk_lifecycle_deleting(obj) && sk_lifecycle_has_finalizer(obj, SK_FINALIZER_FOREGROUND))
        return OWNER_WAITING;
    return OWNER_SOLID;
}

/* The owner the reference names, for dependent dep: solid (also when it
 * cannot be resolved), dangling or waiting. */
static int classify(pass *p, const node *dep, const json_t *ref)
{
    const char *api = json_string_value(json_object_get(ref, "apiVersion"));
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    if (!api || !kind || !name || !uid || !*uid)
        return OWNER_SOLID;
    const char *slash = strchr(api, '/');
    char group[256];
    size_t glen = slash ? (size_t)(slash - api) : 0;
    if (glen >= sizeof group)
        return OWNER_SOLID;
    memcpy(group, api, glen);
    group[glen] = '\0';
    const sk_resource *r = sk_registry_find_kind(group, slash ? slash + 1 : api, kind);
    /* A kind not served, or a namespaced owner of a cluster-scoped dependent:
     * unresolvable, never a reason to delete. */
    if (!r || (r->namespaced && !*dep->ns))
        return OWNER_SOLID;
    const char *owner_ns = r->namespaced ? dep->ns : "";
    json_t *key = json_pack("[s, s, s, s]", r->storage, owner_ns, name, uid);
    char *k = json_dumps(key, JSON_COMPACT);
    json_decref(key);
    SK_CHECK_ALLOC(k);
    json_t *known = json_object_get(p->verdicts, k);
    if (known) {
        free(k);
        return (int)json_integer_value(known);
    }
    int verdict = OWNER_SOLID;
    sk_blob *b = NULL;
    sk_err err = sk_reader_get(p->g->reader, r->storage, owner_ns, name, p->read_rev, &b);
    if (err == SK_OK) {
        json_t *obj = sk_reader_object(b);
        verdict = obj ? verdict_of(obj, uid) : OWNER_SOLID;
        json_decref(obj);
        sk_blob_unref(b);
    }
    if ((err == SK_OK && verdict == OWNER_DANGLING) || err == SK_ERR_NOT_FOUND) {
        /* Absent at the cache's revision: the store has the last word (an
         * owner created since must not lose its dependents). */
        sk_row row = {0};
        err = sk_store_get(p->g->store, r->storage, owner_ns, name, 0, &row);
        if (err == SK_OK) {
            json_t *obj = parse(row.value, row.value_len);
            verdict = obj ? verdict_of(obj, uid) : OWNER_SOLID;
            json_decref(obj);
        } else {
            verdict = err == SK_ERR_NOT_FOUND ? OWNER_DANGLING : OWNER_SOLID;
        }
        sk_row_clear(&row);
    }
    json_object_set_new(p->verdicts, k, json_integer(verdict));
    free(k);
    return verdict;
}

/* ---- writes ------------------------------------------------------------------ */

/* The stored object of nd, as read by the pass (new), or NULL. */
static json_t *read_node(pass *p, const node *nd)
{
    sk_blob *b = NULL;
    if (sk_reader_get(p->g->reader, nd->r->storage, nd->ns, nd->name, p->read_rev, &b) != SK_OK)
        return NULL;
    json_t *obj = sk_blob_rev(b) == nd->rev ? sk_reader_object(b) : NULL;
    sk_blob_unref(b);
    return obj;
}

/* Takes the references to the uids in drop (an object of uid -> true) off nd. */
static void drop_refs(pass *p, node *nd, const json_t *drop)
{
    json_t *obj = read_node(p, nd);
    if (!obj)
        return;
    json_t *edited = json_deep_copy(obj);
    json_t *meta = json_object_get(edited, "metadata");
    json_t *refs = json_object_get(meta, "ownerReferences");
    for (size_t i = json_array_size(refs); i-- > 0;) {
        const char *uid = json_string_value(json_object_get(json_array_get(refs, i), "uid"));
        if (uid && json_object_get(drop, uid))
            json_array_remove(refs, i);
    }
    if (json_array_size(refs) == 0)
        json_object_del(meta, "ownerReferences");
    sk_batch_update(p->batch, nd->r, obj, edited, nd->rev);
    json_decref(obj);
    nd->touched = 1;
    p->writes++;
}

static void drop_finalizer(pass *p, node *nd, const char *finalizer)
{
    json_t *obj = read_node(p, nd);
    if (!obj)
        return;
    json_t *edited = json_deep_copy(obj);
    sk_lifecycle_drop_finalizer(edited, finalizer);
    sk_batch_update(p->batch, nd->r, obj, edited, nd->rev);
    json_decref(obj);
    nd->touched = 1;
    p->writes++;
}

static void delete_node(pass *p, node *nd, sk_propagation policy)
{
    json_t *obj = read_node(p, nd);
    if (!obj)
        return;
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    d.propagation = policy;
    sk_batch_delete(p->batch, nd->r, obj, nd->rev, &d);
    json_decref(obj);
    nd->touched = 1;
    p->writes++;
}

/* ---- decisions ---------------------------------------------------------------- */

static int ref_blocks(const json_t *ref, const char *owner_uid)
{
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    return uid && strcmp(uid, owner_uid) == 0 &&
           json_is_true(json_object_get(ref, "blockOwnerDeletion"));
}

/* An owner being deleted with orphan or foregroundDeletion. */
static void process_owner(pass *p, node *o)
{
    const json_t *deps = json_object_get(p->by_owner, o->uid);
    size_t i;
    const json_t *idx;
    if (o->orphan) {
        json_t *drop = json_pack("{s:b}", o->uid, 1);
        json_array_foreach(deps, i, idx) drop_refs(p, &p->nodes[json_integer_value(idx)], drop);
        json_decref(drop);
        if (json_array_size(deps) == 0)
            drop_finalizer(p, o, SK_FINALIZER_ORPHAN);
        return;
    }
    int blocked = 0;
    json_array_foreach(deps, i, idx)
    {
        const node *d = &p->nodes[json_integer_value(idx)];
        size_t k;
        const json_t *ref;
        json_array_foreach(d->refs, k, ref) blocked |= ref_blocks(ref, o->uid);
    }
    if (!blocked)
        drop_finalizer(p, o, SK_FINALIZER_FOREGROUND);
}

/* kube's attemptToDeleteItem for a dependent not being deleted. */
static void process_dependent(pass *p, node *d)
{
    int solid = 0, waiting = 0, dangling = 0;
    json_t *drop = json_object();
    size_t k;
    const json_t *ref;
    json_array_foreach(d->refs, k, ref)
    {
        int v = classify(p, d, ref);
        const char *uid = json_string_value(json_object_get(ref, "uid"));
        solid += v == OWNER_SOLID;
        waiting += v == OWNER_WAITING;
        dangling += v == OWNER_DANGLING;
        if (v != OWNER_SOLID && uid)
            json_object_set_new(drop, uid, json_true());
    }
    if (solid > 0) {
        if (waiting + dangling > 0)
            drop_refs(p, d, drop);
    } else if (waiting > 0 && json_object_get(p->by_owner, d->uid)) {
        delete_node(p, d, SK_PROPAGATION_FOREGROUND);
    } else {
        delete_node(p, d,
                    d->orphan       ? SK_PROPAGATION_ORPHAN
                    : d->foreground ? SK_PROPAGATION_FOREGROUND
                                    : SK_PROPAGATION_BACKGROUND);
    }
    json_decref(drop);
}

static void pass_free(pass *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->nodes[i].ns);
        free(p->nodes[i].name);
        free(p->nodes[i].uid);
        json_decref(p->nodes[i].refs);
    }
    free(p->nodes);
    json_decref(p->by_owner);
    json_decref(p->verdicts);
}

static int64_t gc_pass(void *self, int *done)
{
    gc *g = self;
    pass p = {.g = g, .read_rev = sk_reader_cache_rev(g->reader)};
    *done = 0;
    /* Health is read before the scan takes the registry (see gc.h). */
    if (p.read_rev <= 0 || !sk_ctl_healthy(g->served_all))
        return IDLE_INTERVAL_MS;
    unsigned long generation = sk_registry_generation();
    if (p.read_rev == g->settled_rev && generation == g->settled_generation) {
        *done = 1;
        return IDLE_INTERVAL_MS;
    }
    p.by_owner = json_object();
    p.verdicts = json_object();
    sk_err err = scan(&p);
    if (err == SK_OK) {
        index_owners(&p);
        p.batch = sk_batch_new(g->store);
        for (size_t i = 0; i < p.n; i++) {
            if (p.nodes[i].deleting && (p.nodes[i].orphan || p.nodes[i].foreground))
                process_owner(&p, &p.nodes[i]);
        }
        for (size_t i = 0; i < p.n; i++) {
            if (p.nodes[i].refs && !p.nodes[i].deleting && !p.nodes[i].touched)
                process_dependent(&p, &p.nodes[i]);
        }
        sk_batch_finish(p.batch);
        *done = 1;
        if (p.writes == 0) {
            g->settled_rev = p.read_rev;
            g->settled_generation = generation;
        }
    } else if (err != SK_ERR_UNAVAILABLE) {
        sk_log_warn("garbage collector: cannot scan: %s", sk_err_name(err));
    }
    int busy = p.writes > 0;
    pass_free(&p);
    return busy ? BUSY_INTERVAL_MS : IDLE_INTERVAL_MS;
}

static const sk_ctl_def gc_def = {
    .name = "garbage-collector",
    .pass = gc_pass,
    .free = free,
};

sk_ctl *sk_gc_start(sk_store *store, sk_reader *reader, const sk_ctl *served_all)
{
    gc *g = calloc(1, sizeof *g);
    SK_CHECK_ALLOC(g);
    g->store = store;
    g->reader = reader;
    g->served_all = served_all;
    return sk_ctl_start(&gc_def, g, 0);
}
