/*
 * gc.c - see gc.h.
 *
 * A pass: scan (every resource at the cache's revision; an object is
 * looked at only if its bytes mention ownerReferences or deletionTimestamp,
 * and only its references and deletion state are kept, in an extract that
 * later passes reuse while the object keeps its revision), then act: owners
 * being deleted with `orphan` or `foregroundDeletion` first, then every
 * dependent, classified as kube's attemptToDeleteItem does (solid,
 * dangling, waiting for its owner's foreground deletion). Owner lookups are
 * remembered for the pass; the index of references by owner uid is built
 * only when an owner is being deleted or waits. A pass whose revision is
 * the last one fully handled, with nothing written, is skipped: nothing can
 * have changed.
 *
 * Why extracts: at 20,000 objects with ownerReferences and 10 writes a
 * second, parsing every one of them each pass cost 12% of a core (JSON
 * parsing and malloc were most of the profile); a version's references and
 * deletion state cannot change, so each version is parsed once.
 */
#include "ctl/gc.h"
#include "core/check.h"
#include "core/log.h"
#include "core/revmap.h"
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
    /* What the last scan derived from each object version it parsed, by
     * revision (extract *), and the registry generation the owners were
     * resolved with. */
    sk_revmap *extracts;
    unsigned long extracts_generation;
} gc;

/* A reference as the collector looks its owner up. */
typedef struct owner_ref {
    const sk_resource *r;        /* NULL: unresolvable, never a reason to delete */
    const char *ns, *name, *uid; /* borrowed from the extract */
    char *key;                   /* what the owner's verdict is remembered by */
} owner_ref;

/* What the collector derives from one version of an object that mentions
 * ownerReferences or deletionTimestamp. Its revision names that version for
 * good, so an extract is kept from pass to pass for as long as scans meet
 * the object at that revision, and an object is parsed once per version,
 * not once per pass: the parse was most of a pass's cost. Owners are
 * resolved against the registry, so a new registry generation drops them
 * all. */
typedef struct extract {
    const sk_resource *r;
    char *ns, *name, *uid;
    int64_t rev;
    json_t *refs;      /* ownerReferences (new reference), NULL if none */
    owner_ref *owners; /* one per element of refs */
    int deleting, orphan, foreground;
} extract;

/* An extract that takes part in a pass: an object with references, or an
 * owner being deleted with `orphan` or `foregroundDeletion`. */
typedef struct node {
    const extract *x;
    int touched; /* written this pass */
} node;

typedef struct pass {
    gc *g;
    int64_t read_rev;
    sk_revmap *scanned; /* this scan's extracts, which become the gc's */
    node *nodes;
    size_t n, cap;
    json_t *by_owner; /* owner uid -> [node index], built on first need */
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

/* ---- extracts --------------------------------------------------------------- */

/* Resolves ref of a dependent in namespace dep_ns into o. */
static void resolve_owner(owner_ref *o, const json_t *ref, const char *dep_ns)
{
    const char *api = json_string_value(json_object_get(ref, "apiVersion"));
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    if (!api || !kind || !name || !uid || !*uid)
        return;
    const char *slash = strchr(api, '/');
    char group[256];
    size_t glen = slash ? (size_t)(slash - api) : 0;
    if (glen >= sizeof group)
        return;
    memcpy(group, api, glen);
    group[glen] = '\0';
    const sk_resource *r = sk_registry_find_kind(group, slash ? slash + 1 : api, kind);
    /* A kind not served, or a namespaced owner of a cluster-scoped dependent:
     * unresolvable. */
    if (!r || (r->namespaced && !*dep_ns))
        return;
    o->r = r;
    o->ns = r->namespaced ? dep_ns : "";
    o->name = name;
    o->uid = uid;
    json_t *key = json_pack("[s, s, s, s]", r->storage, o->ns, name, uid);
    o->key = json_dumps(key, JSON_COMPACT);
    json_decref(key);
    SK_CHECK_ALLOC(o->key);
}

/* The extract of item, a resource r object whose bytes mention
 * ownerReferences or deletionTimestamp (new), or NULL if it does not parse. */
static extract *extract_new(const sk_resource *r, const sk_blob *item)
{
    json_t *obj = sk_reader_object(item);
    if (!obj)
        return NULL;
    extract *x = calloc(1, sizeof *x);
    SK_CHECK_ALLOC(x);
    json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    *x = (extract){
        .r = r,
        .ns = copy(sk_blob_ns(item)),
        .name = copy(sk_blob_name(item)),
        .uid = copy(meta_str(obj, "uid")),
        .rev = sk_blob_rev(item),
        .refs = json_array_size(refs) > 0 ? json_incref(refs) : NULL,
        .deleting = sk_lifecycle_deleting(obj),
        .orphan = sk_lifecycle_has_finalizer(obj, SK_FINALIZER_ORPHAN),
        .foreground = sk_lifecycle_has_finalizer(obj, SK_FINALIZER_FOREGROUND),
    };
    json_decref(obj);
    if (x->refs) {
        x->owners = calloc(json_array_size(x->refs), sizeof *x->owners);
        SK_CHECK_ALLOC(x->owners);
        size_t i;
        const json_t *ref;
        json_array_foreach(x->refs, i, ref) resolve_owner(&x->owners[i], ref, x->ns);
    }
    return x;
}

static void extract_free(void *v)
{
    extract *x = v;
    for (size_t i = 0; i < json_array_size(x->refs); i++)
        free(x->owners[i].key);
    free(x->owners);
    json_decref(x->refs);
    free(x->ns);
    free(x->name);
    free(x->uid);
    free(x);
}

/* Frees the extracts in m and m. */
static void extracts_free(sk_revmap *m)
{
    if (m)
        sk_revmap_each(m, extract_free);
    sk_revmap_free(m);
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
    int64_t rev = sk_blob_rev(item);
    extract *x = sk_revmap_take(p->g->extracts, rev);
    if (x && x->r != a->r) {
        /* the registry was replaced after this scan read its generation */
        extract_free(x);
        x = NULL;
    }
    if (!x && !(x = extract_new(a->r, item)))
        return 0;
    sk_revmap_put(p->scanned, rev, x);
    if (x->refs || (x->deleting && (x->orphan || x->foreground))) {
        if (p->n == p->cap) {
            p->cap = p->cap ? p->cap * 2 : 64;
            p->nodes = realloc(p->nodes, p->cap * sizeof *p->nodes);
            SK_CHECK_ALLOC(p->nodes);
        }
        p->nodes[p->n++] = (node){.x = x};
    }
    return 0;
}

/* Scans every resource into p's nodes. The extracts met become the gc's,
 * whatever the outcome (those of a failed scan are only fewer). */
static sk_err scan(pass *p)
{
    gc *g = p->g;
    unsigned long generation = sk_registry_generation();
    if (generation != g->extracts_generation) {
        extracts_free(g->extracts);
        g->extracts = sk_revmap_new();
        g->extracts_generation = generation;
    }
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    sk_err err = SK_OK;
    for (size_t i = 0; i < n && err == SK_OK; i++) {
        if (all[i]->stored_as != all[i])
            continue;
        scan_arg a = {p, all[i]};
        err = sk_reader_scan(g->reader, all[i]->storage, NULL, p->read_rev, scan_item, &a);
    }
    extracts_free(g->extracts);
    g->extracts = p->scanned;
    p->scanned = NULL;
    return err;
}

/* The indexes of the nodes that reference owner uid (borrowed), or NULL. */
static const json_t *dependents_of(pass *p, const char *uid)
{
    if (!p->by_owner) {
        p->by_owner = json_object();
        for (size_t i = 0; i < p->n; i++) {
            const extract *x = p->nodes[i].x;
            for (size_t k = 0; k < json_array_size(x->refs); k++) {
                const char *owner =
                    json_string_value(json_object_get(json_array_get(x->refs, k), "uid"));
                if (!owner || !*owner)
                    continue;
                json_t *list = json_object_get(p->by_owner, owner);
                if (!list) {
                    list = json_array();
                    json_object_set_new(p->by_owner, owner, list);
                }
                json_array_append_new(list, json_integer((json_int_t)i));
            }
        }
    }
    return json_object_get(p->by_owner, uid);
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

/* The owner o names: solid (also when it cannot be resolved), dangling or
 * waiting. */
static int classify(pass *p, const owner_ref *o)
{
    if (!o->r)
        return OWNER_SOLID;
    json_t *known = json_object_get(p->verdicts, o->key);
    if (known)
        return (int)json_integer_value(known);
    int verdict = OWNER_SOLID;
    sk_blob *b = NULL;
    sk_err err = sk_reader_get(p->g->reader, o->r->storage, o->ns, o->name, p->read_rev, &b);
    if (err == SK_OK) {
        json_t *obj = sk_reader_object(b);
        verdict = obj ? verdict_of(obj, o->uid) : OWNER_SOLID;
        json_decref(obj);
        sk_blob_unref(b);
    }
    if ((err == SK_OK && verdict == OWNER_DANGLING) || err == SK_ERR_NOT_FOUND) {
        /* Absent at the cache's revision: the store has the last word (an
         * owner created since must not lose its dependents). */
        sk_row row = {0};
        err = sk_store_get(p->g->store, o->r->storage, o->ns, o->name, 0, &row);
        if (err == SK_OK) {
            json_t *obj = parse(row.value, row.value_len);
            verdict = obj ? verdict_of(obj, o->uid) : OWNER_SOLID;
            json_decref(obj);
        } else {
            verdict = err == SK_ERR_NOT_FOUND ? OWNER_DANGLING : OWNER_SOLID;
        }
        sk_row_clear(&row);
    }
    json_object_set_new(p->verdicts, o->key, json_integer(verdict));
    return verdict;
}

/* ---- writes ------------------------------------------------------------------ */

/* The stored object of nd, as read by the pass (new), or NULL. */
static json_t *read_node(pass *p, const node *nd)
{
    const extract *x = nd->x;
    sk_blob *b = NULL;
    if (sk_reader_get(p->g->reader, x->r->storage, x->ns, x->name, p->read_rev, &b) != SK_OK)
        return NULL;
    json_t *obj = sk_blob_rev(b) == x->rev ? sk_reader_object(b) : NULL;
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
    sk_batch_update(p->batch, nd->x->r, obj, edited, nd->x->rev);
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
    sk_batch_update(p->batch, nd->x->r, obj, edited, nd->x->rev);
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
    sk_batch_delete(p->batch, nd->x->r, obj, nd->x->rev, &d);
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
    const json_t *deps = dependents_of(p, o->x->uid);
    size_t i;
    const json_t *idx;
    if (o->x->orphan) {
        json_t *drop = json_pack("{s:b}", o->x->uid, 1);
        json_array_foreach(deps, i, idx) drop_refs(p, &p->nodes[json_integer_value(idx)], drop);
        json_decref(drop);
        if (json_array_size(deps) == 0)
            drop_finalizer(p, o, SK_FINALIZER_ORPHAN);
        return;
    }
    int blocked = 0;
    json_array_foreach(deps, i, idx)
    {
        const extract *d = p->nodes[json_integer_value(idx)].x;
        size_t k;
        const json_t *ref;
        json_array_foreach(d->refs, k, ref) blocked |= ref_blocks(ref, o->x->uid);
    }
    if (!blocked)
        drop_finalizer(p, o, SK_FINALIZER_FOREGROUND);
}

/* kube's attemptToDeleteItem for a dependent not being deleted. */
static void process_dependent(pass *p, node *nd)
{
    const extract *d = nd->x;
    int solid = 0, waiting = 0, dangling = 0;
    json_t *drop = NULL; /* the uids of the owners that are not solid */
    for (size_t k = 0; k < json_array_size(d->refs); k++) {
        int v = classify(p, &d->owners[k]);
        solid += v == OWNER_SOLID;
        waiting += v == OWNER_WAITING;
        dangling += v == OWNER_DANGLING;
        if (v != OWNER_SOLID) {
            if (!drop)
                drop = json_object();
            json_object_set_new(drop, d->owners[k].uid, json_true());
        }
    }
    if (solid > 0) {
        if (waiting + dangling > 0)
            drop_refs(p, nd, drop);
    } else if (waiting > 0 && dependents_of(p, d->uid)) {
        delete_node(p, nd, SK_PROPAGATION_FOREGROUND);
    } else {
        delete_node(p, nd,
                    d->orphan       ? SK_PROPAGATION_ORPHAN
                    : d->foreground ? SK_PROPAGATION_FOREGROUND
                                    : SK_PROPAGATION_BACKGROUND);
    }
    json_decref(drop);
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
    p.scanned = sk_revmap_new();
    p.verdicts = json_object();
    sk_err err = scan(&p);
    if (err == SK_OK) {
        p.batch = sk_batch_new(g->store);
        for (size_t i = 0; i < p.n; i++) {
            const extract *x = p.nodes[i].x;
            if (x->deleting && (x->orphan || x->foreground))
                process_owner(&p, &p.nodes[i]);
        }
        for (size_t i = 0; i < p.n; i++) {
            const extract *x = p.nodes[i].x;
            if (x->refs && !x->deleting && !p.nodes[i].touched)
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
    free(p.nodes);
    json_decref(p.by_owner);
    json_decref(p.verdicts);
    return busy ? BUSY_INTERVAL_MS : IDLE_INTERVAL_MS;
}

static void gc_free(void *self)
{
    gc *g = self;
    extracts_free(g->extracts);
    free(g);
}

static const sk_ctl_def gc_def = {
    .name = "garbage-collector",
    .pass = gc_pass,
    .free = gc_free,
};

sk_ctl *sk_gc_start(sk_store *store, sk_reader *reader, const sk_ctl *served_all)
{
    gc *g = calloc(1, sizeof *g);
    SK_CHECK_ALLOC(g);
    g->store = store;
    g->reader = reader;
    g->served_all = served_all;
    g->extracts = sk_revmap_new();
    g->extracts_generation = sk_registry_generation();
    return sk_ctl_start(&gc_def, g, 0);
}
