/*
 * fieldset.c - see fieldset.h.
 *
 * Every walk goes through one type cursor (ty): a built-in schema plus the
 * field the value sits in (list semantics live on the field), or a CRD's
 * openAPIV3Schema node, or nothing (deduced). shape() is the one place
 * that decides how a value is tracked, so building, comparing, merging
 * and removing can never disagree about it.
 *
 * Invariant of a set: every node is a JSON object; a node with neither
 * "." nor children does not exist (set operations prune them).
 */
#include "kube/fieldset.h"
#include "core/buf.h"
#include "core/check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct ty {
    const sk_schema *s;       /* built-in type, or NULL */
    const sk_schema_field *f; /* the field holding the value (list semantics), or NULL */
    const json_t *js;         /* CRD schema node, or NULL */
    int crd_root;             /* the object of a custom resource: its metadata is ObjectMeta */
} ty;

typedef enum { LEAF, GRANULAR, LIST_MAP, LIST_SET } shape_t;

#define MAX_KEYS 8

static const ty DEDUCED = {NULL, NULL, NULL, 0};

static int js_is(const json_t *js, const char *key, const char *want)
{
    const char *v = json_string_value(json_object_get(js, key));
    return v && strcmp(v, want) == 0;
}

/* The list-map keys of t (NULL-terminated in keys); 0 if none. */
static size_t list_keys(ty t, const char *keys[MAX_KEYS + 1])
{
    size_t n = 0;
    if (t.f) {
        const char *const *k = sk_schema_field_list_map_keys(t.f);
        if (k)
            for (; k[n] && n < MAX_KEYS; n++)
                keys[n] = k[n];
        else if (sk_schema_field_merge_key(t.f))
            keys[n++] = sk_schema_field_merge_key(t.f);
    } else if (t.js) {
        const json_t *k = json_object_get(t.js, "x-kubernetes-list-map-keys");
        for (size_t i = 0; i < json_array_size(k) && n < MAX_KEYS; i++)
            if (json_is_string(json_array_get(k, i)))
                keys[n++] = json_string_value(json_array_get(k, i));
    }
    keys[n] = NULL;
    return n;
}

/* How a value v of type t is tracked; a value of another JSON type than
 * the schema says (null included) is a leaf. */
static shape_t shape(ty t, const json_t *v)
{
    shape_t sh = LEAF;
    if (t.s) {
        switch (sk_schema_kind_of(t.s)) {
        case SK_SCHEMA_STRUCT:
        case SK_SCHEMA_MAP: {
            const char *mt = sk_schema_map_type(t.s);
            sh = mt && strcmp(mt, "atomic") == 0 ? LEAF : GRANULAR;
            break;
        }
        case SK_SCHEMA_ARRAY: {
            const char *lt = t.f ? sk_schema_field_list_type(t.f) : NULL;
            unsigned flags = t.f ? sk_schema_field_flags(t.f) : 0;
            if (lt)
                sh = strcmp(lt, "map") == 0 ? LIST_MAP : strcmp(lt, "set") == 0 ? LIST_SET : LEAF;
            else if (flags & SK_FIELD_PATCH_MERGE)
                sh = sk_schema_field_merge_key(t.f) ? LIST_MAP : LIST_SET;
            break;
        }
        case SK_SCHEMA_RAW:
        case SK_SCHEMA_FIELDS_V1:
            sh = json_is_object(v) ? GRANULAR : LEAF;
            break;
        default:
            break;
        }
    } else if (t.js) {
        if (json_object_get(t.js, "x-kubernetes-int-or-string") == json_true() ||
            js_is(t.js, "x-kubernetes-map-type", "atomic"))
            sh = LEAF;
        else if (js_is(t.js, "type", "array"))
            sh = js_is(t.js, "x-kubernetes-list-type", "map")   ? LIST_MAP
                 : js_is(t.js, "x-kubernetes-list-type", "set") ? LIST_SET
                                                               : LEAF;
        else
            sh = json_is_object(v) ? GRANULAR : LEAF;
    } else {
        sh = json_is_object(v) ? GRANULAR : LEAF;
    }
    if (sh == GRANULAR && !json_is_object(v))
        sh = LEAF;
    if ((sh == LIST_MAP || sh == LIST_SET) && !json_is_array(v))
        sh = LEAF;
    return sh;
}

/* The type of field key of a GRANULAR value of type t; *named: a declared
 * field (not a map entry). */
static ty child(ty t, const char *key, int *named)
{
    ty c = DEDUCED;
    *named = 0;
    if (t.crd_root && strcmp(key, "metadata") == 0) {
        c.s = sk_schema_named("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
        *named = 1;
    } else if (t.s && sk_schema_kind_of(t.s) == SK_SCHEMA_STRUCT) {
        const sk_schema_field *f = sk_schema_field_find(t.s, key, strlen(key));
        if (f) {
            c.s = sk_schema_field_type(f);
            c.f = f;
            *named = 1;
        }
    } else if (t.s && sk_schema_kind_of(t.s) == SK_SCHEMA_MAP) {
        c.s = sk_schema_elem(t.s);
    } else if (t.js) {
        const json_t *p = json_object_get(json_object_get(t.js, "properties"), key);
        const json_t *ap = json_object_get(t.js, "additionalProperties");
        if (p) {
            c.js = p;
            *named = 1;
        } else if (json_is_object(ap)) {
            c.js = ap;
        } else if (t.crd_root && (!strcmp(key, "apiVersion") || !strcmp(key, "kind"))) {
            *named = 1;
        }
    }
    return c;
}

/* A struct that declares every field it may hold: a built-in kind's, or a
 * CRD schema's object with properties that keeps no unknown fields. An
 * apply setting anything else is refused, as kube's typed conversion
 * refuses it. */
static int closed(ty t)
{
    if (t.s)
        return sk_schema_kind_of(t.s) == SK_SCHEMA_STRUCT;
    return t.js && !t.crd_root && json_is_object(json_object_get(t.js, "properties")) &&
           !json_object_get(t.js, "additionalProperties") &&
           json_object_get(t.js, "x-kubernetes-preserve-unknown-fields") != json_true() &&
           json_object_get(t.js, "x-kubernetes-embedded-resource") != json_true();
}

static ty elem(ty t)
{
    ty c = DEDUCED;
    if (t.s)
        c.s = sk_schema_elem(t.s);
    else if (t.js)
        c.js = json_object_get(t.js, "items");
    return c;
}

static char *dump_any(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
}

/* The default of list-map key `key` of the items of list type t, or NULL:
 * a key an item omits takes it, as structured-merge-diff does (a built-in
 * field's comes from its Go type's +default marker, e.g. a port's
 * protocol TCP; a CRD's from its schema). */
static const json_t *key_default(ty t, const char *key)
{
    int named;
    ty k = child(elem(t), key, &named);
    return k.f ? sk_schema_field_default(k.f) : json_object_get(k.js, "default");
}

/* The path element of list item v (index i) of a LIST_MAP/LIST_SET of type
 * t, malloc()ed; NULL if an item of a list-map lacks a key (*missing names
 * it). */
static char *item_pe(ty t, shape_t sh, const json_t *v, const char **missing)
{
    sk_buf b = SK_BUF_INIT;
    if (sh == LIST_SET) {
        char *s = dump_any(v);
        sk_buf_printf(&b, "v:%s", s ? s : "null");
        free(s);
        return sk_buf_steal(&b, NULL);
    }
    const char *keys[MAX_KEYS + 1];
    list_keys(t, keys);
    json_t *k = json_object();
    for (size_t i = 0; keys[i]; i++) {
        const json_t *kv = json_object_get(v, keys[i]);
        if (!kv)
            kv = key_default(t, keys[i]);
        if (!kv) {
            *missing = keys[i];
            json_decref(k);
            return NULL;
        }
        json_object_set(k, keys[i], (json_t *)kv);
    }
    char *s = dump_any(k);
    json_decref(k);
    sk_buf_printf(&b, "k:%s", s ? s : "{}");
    free(s);
    return sk_buf_steal(&b, NULL);
}

/* The metadata fields apply never tracks: the server sets them. */
static const char *const meta_fields[] = {
    "f:name", "f:namespace", "f:creationTimestamp", "f:selfLink",      "f:uid",
    "f:clusterName", "f:generation", "f:managedFields", "f:resourceVersion",
};

/* ---- set nodes ---- */

static json_t *node_child(json_t *node, const char *pe)
{
    json_t *c = json_object_get(node, pe);
    if (!c) {
        c = json_object();
        json_object_set_new(node, pe, c);
    }
    return c;
}

/* The value of every "." member: one shared empty object. Sets are never
 * modified once made and "." is only ever added or deleted, never walked
 * into, so sharing it is safe; a fresh {} per member was two allocations
 * for every field of every object written. */
static json_t *member_mark;
static pthread_once_t member_mark_once = PTHREAD_ONCE_INIT;

static void make_member_mark(void)
{
    member_mark = json_object();
    SK_CHECK_ALLOC(member_mark);
}

static void mark(json_t *node)
{
    pthread_once(&member_mark_once, make_member_mark);
    json_object_set(node, ".", member_mark);
}

/* Some empty object, for questions whose answer depends only on a value's
 * JSON type. */
static const json_t *an_object(void)
{
    pthread_once(&member_mark_once, make_member_mark);
    return member_mark;
}

static int is_member(const json_t *node)
{
    return json_object_get(node, ".") != NULL;
}

int sk_fieldset_empty(const json_t *set)
{
    return !set || json_object_size(set) == 0;
}

/* The path stack of a walk: nodes for the three sets of a compare are made
 * only when something is inserted. */
typedef struct pstack {
    const char **pe;
    size_t n, cap;
} pstack;

static void push(pstack *p, const char *pe)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 32;
        p->pe = realloc(p->pe, p->cap * sizeof *p->pe);
    }
    p->pe[p->n++] = pe;
}

static void insert(json_t *set, const pstack *p)
{
    json_t *node = set;
    for (size_t i = 0; i < p->n; i++)
        node = node_child(node, p->pe[i]);
    mark(node);
}

static void print_pe(sk_buf *b, const char *pe);

/* A field's path element, "f:<name>": every member of every object walked
 * makes one, so without printf. */
static void field_pe(sk_buf *pe, const char *key)
{
    sk_buf_append(pe, "f:", 2);
    sk_buf_puts(pe, key);
}

/* ---- building ---- */

typedef struct build {
    sk_buf where; /* kube's error path: ".spec.ports" */
    char *err;
} build;

static int to_set(ty t, const json_t *v, json_t *node, build *b)
{
    shape_t sh = shape(t, v);
    if (sh == LEAF) {
        mark(node);
        return 0;
    }
    if (sh == GRANULAR) {
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)v, key, val) {
            int named;
            ty c = child(t, key, &named);
            size_t at = b->where.len;
            sk_buf_putc(&b->where, '.');
            sk_buf_puts(&b->where, key);
            if (!named && closed(t)) {
                sk_buf msg = SK_BUF_INIT;
                sk_buf_printf(&msg, "%s: field not declared in schema", b->where.data);
                b->err = sk_buf_steal(&msg, NULL);
                return -1;
            }
            sk_buf pe = SK_BUF_INIT;
            field_pe(&pe, key);
            json_t *cn = node_child(node, pe.data);
            int rc = to_set(c, val, cn, b);
            b->where.len = at;
            b->where.data[at] = 0;
            if (rc == 0 && (!named || json_is_null(val) ||
                            (json_is_object(val) && json_object_size(val) == 0)))
                mark(cn);
            else if (rc == 0 && !json_object_size(cn))
                json_object_del(node, pe.data); /* an empty list sets nothing */
            sk_buf_free(&pe);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        const char *missing = NULL;
        char *pe = item_pe(t, sh, item, &missing);
        if (!pe) {
            sk_buf msg = SK_BUF_INIT;
            sk_buf_printf(&msg,
                          "%s: element %zu: associative list with keys has an element that "
                          "omits key field ",
                          b->where.len ? b->where.data : ".", i);
            sk_buf_go_quoted(&msg, missing);
            sk_buf_puts(&msg, " (and doesn't have default value)");
            b->err = sk_buf_steal(&msg, NULL);
            return -1;
        }
        json_t *cn = node_child(node, pe);
        size_t at = b->where.len;
        print_pe(&b->where, pe);
        free(pe);
        if (to_set(elem(t), item, cn, b) < 0)
            return -1;
        b->where.len = at;
        b->where.data[at] = 0;
        mark(cn);
    }
    return 0;
}

static ty root_type(sk_fieldset_type t)
{
    ty r = DEDUCED;
    r.s = t.schema;
    r.js = t.schema ? NULL : t.openapi;
    r.crd_root = !t.schema;
    return r;
}

sk_err sk_fieldset_from_object(sk_fieldset_type t, const json_t *obj, json_t **out, char **errmsg)
{
    build b = {SK_BUF_INIT, NULL};
    json_t *set = json_object();
    sk_buf_puts(&b.where, "");
    if (to_set(root_type(t), obj, set, &b) < 0) {
        json_decref(set);
        sk_buf_free(&b.where);
        *errmsg = b.err;
        return SK_ERR_INVALID;
    }
    /* the object itself is not a member: only what it sets */
    json_object_del(set, ".");
    sk_buf_free(&b.where);
    *out = set;
    return SK_OK;
}

/* ---- comparing ---- */

typedef struct cmp {
    json_t *added, *modified, *removed;
    pstack path;
} cmp;

static int empty_container(const json_t *v)
{
    return !v || (json_is_object(v) && json_object_size(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

/* Indexes the items of a list by path element: {pe: item}, first wins. */
static json_t *index_items(ty t, shape_t sh, const json_t *list)
{
    json_t *idx = json_object();
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item) {
        const char *missing;
        char *pe = item_pe(t, sh, item, &missing);
        if (pe && !json_object_get(idx, pe))
            json_object_set(idx, pe, item);
        free(pe);
    }
    return idx;
}

static void compare(ty t, const json_t *l, const json_t *r, cmp *c)
{
    shape_t sl = l ? shape(t, l) : LEAF, sr = r ? shape(t, r) : LEAF;
    shape_t sh = !l ? sr : !r ? sl : sl == sr ? sr : LEAF;
    if (sh != LEAF && empty_container(l) && empty_container(r))
        sh = LEAF; /* keeps {} / [] apart from absent */
    if (sh == LEAF) {
        if (!l)
            insert(c->added, &c->path);
        else if (!r)
            insert(c->removed, &c->path);
        else if (!json_equal((json_t *)l, (json_t *)r))
            insert(c->modified, &c->path);
        return;
    }
    if (sh == GRANULAR) {
        const char *key;
        json_t *val;
        for (int side = 0; side < 2; side++) {
            const json_t *m = side ? l : r;
            json_object_foreach((json_t *)m, key, val) {
                if (side && r && json_object_get(r, key))
                    continue;
                int named;
                ty ct = child(t, key, &named);
                sk_buf pe = SK_BUF_INIT;
                field_pe(&pe, key);
                push(&c->path, pe.data);
                compare(ct, json_object_get(l, key), json_object_get(r, key), c);
                c->path.n--;
                sk_buf_free(&pe);
            }
        }
    } else {
        json_t *li = l ? index_items(t, sh, l) : json_object();
        json_t *ri = r ? index_items(t, sh, r) : json_object();
        const char *pe;
        json_t *val;
        json_object_foreach(ri, pe, val) {
            push(&c->path, pe);
            compare(elem(t), json_object_get(li, pe), val, c);
            c->path.n--;
        }
        json_object_foreach(li, pe, val) {
            if (json_object_get(ri, pe))
                continue;
            push(&c->path, pe);
            compare(elem(t), val, NULL, c);
            c->path.n--;
        }
        json_decref(li);
        json_decref(ri);
    }
    if (!l)
        insert(c->added, &c->path);
    else if (!r)
        insert(c->removed, &c->path);
}

void sk_fieldset_compare(sk_fieldset_type t, const json_t *old, const json_t *new_obj,
                         json_t **added, json_t **modified, json_t **removed)
{
    cmp c = {json_object(), json_object(), json_object(), {NULL, 0, 0}};
    if (old || new_obj)
        compare(root_type(t), old, new_obj, &c);
    free(c.path.pe);
    /* the object itself is never tracked */
    json_object_del(c.added, ".");
    json_object_del(c.removed, ".");
    json_object_del(c.modified, ".");
    *added = c.added;
    *modified = c.modified;
    *removed = c.removed;
}

/*
 * Where a member is in an object, for the members a manager's set never
 * holds: the root's apiVersion and kind (and status, when dropped), and
 * the metadata fields the server sets. One rule for both users: strip_own
 * deletes them from a set, and created() leaves them out of its walk,
 * rather than building their nodes to delete them (that was about half of
 * a ConfigMap create's walk: bench/README.md, "The create path, fourth
 * pass").
 */
typedef enum { BELOW, ROOT, ROOT_NO_STATUS, ROOT_META } place;

static int at_root(place p)
{
    return p == ROOT || p == ROOT_NO_STATUS;
}

/* Whether member key of a value at place p is left out. */
static int left_out(place p, const char *key)
{
    int out = 0;
    if (at_root(p)) {
        out = !strcmp(key, "apiVersion") || !strcmp(key, "kind") ||
              (p == ROOT_NO_STATUS && !strcmp(key, "status"));
    } else if (p == ROOT_META) {
        /* past "f:"; the first letters tell most keys apart without a call */
        for (size_t i = 0; !out && i < sizeof meta_fields / sizeof meta_fields[0]; i++)
            out = key[0] == meta_fields[i][2] && !strcmp(key, meta_fields[i] + 2);
    }
    return out;
}

/* Deletes from the root's f:metadata node what no set holds; returns
 * whether anything is left. */
static int strip_meta(json_t *meta)
{
    const char *key;
    void *tmp;
    json_t *v;
    json_object_del(meta, ".");
    json_object_foreach_safe(meta, tmp, key, v)
    {
        if (strncmp(key, "f:", 2) == 0 && left_out(ROOT_META, key + 2))
            json_object_del(meta, key);
    }
    return json_object_size(meta) > 0;
}

/* Strips set (as sk_fieldset_strip without only_status) in place: set and
 * its "f:metadata" node must be the caller's own, shared with no other set. */
static void strip_own(json_t *set, int drop_status)
{
    place root = drop_status ? ROOT_NO_STATUS : ROOT;
    const char *key;
    void *tmp;
    json_t *v;
    json_object_foreach_safe(set, tmp, key, v)
    {
        if (strncmp(key, "f:", 2) != 0)
            continue;
        if (left_out(root, key + 2) || (!strcmp(key, "f:metadata") && !strip_meta(v)))
            json_object_del(set, key);
    }
}

/* ---- a create's fields ---- */

/* Go's zero value of a struct holds its non-pointer struct fields ({}):
 * zero_of(s, depth) expands s's (down to depth 16) and those fields are in
 * it. */
static int zero_expands(const sk_schema *s, int depth)
{
    return s && sk_schema_kind_of(s) == SK_SCHEMA_STRUCT && depth >= 0 && depth <= 16;
}

static int in_zero(const sk_schema_field *f)
{
    return sk_schema_field_name(f) && !(sk_schema_field_flags(f) & SK_FIELD_POINTER) &&
           sk_schema_kind_of(sk_schema_field_type(f)) == SK_SCHEMA_STRUCT;
}

static json_t *zero_of(const sk_schema *s, int depth)
{
    json_t *o = json_object();
    if (!zero_expands(s, depth))
        return o;
    for (size_t i = 0; i < sk_schema_field_count(s); i++) {
        const sk_schema_field *f = sk_schema_field_at(s, i);
        if (in_zero(f))
            json_object_set_new(o, sk_schema_field_name(f),
                                zero_of(sk_schema_field_type(f), depth + 1));
    }
    return o;
}

json_t *sk_fieldset_zero(sk_fieldset_type t)
{
    return zero_of(t.schema, 0);
}

/* One node of created(): a child's path element and its wire form. */
typedef struct wire_child {
    const char *pe;
    json_t *node;
} wire_child;

static int cmp_wire_child(const void *a, const void *b)
{
    return strcmp(((const wire_child *)a)->pe, ((const wire_child *)b)->pe);
}

/* zero_of(s, depth) has members. */
static int zero_has_members(const sk_schema *s, int depth)
{
    if (!zero_expands(s, depth))
        return 0;
    for (size_t i = 0; i < sk_schema_field_count(s); i++)
        if (in_zero(sk_schema_field_at(s, i)))
            return 1;
    return 0;
}

/* The depth of child c (of a value of type t) in zero_of(t.s, depth), or
 * -1 if it is not there (depth -1: nor is its parent). */
static int zero_child_depth(ty t, ty c, int depth)
{
    return zero_expands(t.s, depth) && c.f && in_zero(c.f) ? depth + 1 : -1;
}

#define INLINE_CHILDREN 16

/* created() of a value tracked whole: a member unless it equals the zero
 * value it replaces. */
static json_t *created_leaf(ty t, int zd, const json_t *r)
{
    int member = zd < 0;
    if (!member) {
        json_t *l = zero_of(t.s, zd);
        member = !json_equal(l, (json_t *)r);
        json_decref(l);
    }
    return member ? json_object() : NULL;
}

static json_t *created(ty t, int zd, const json_t *r, place p);

/* created() of the root's metadata, as strip_own leaves it: the fields
 * the server sets are left out by the walk, "." by strip_meta. */
static json_t *created_meta(ty t, int zd, const json_t *r)
{
    json_t *node = created(t, zd, r, ROOT_META);
    if (node && !strip_meta(node)) {
        json_decref(node);
        node = NULL;
    }
    return node;
}

/* created() of a struct, granular map or list of shape sh at place p: its
 * members' nodes, and itself a member unless it replaces a zero value. */
static json_t *created_container(ty t, int zd, const json_t *r, shape_t sh, place p)
{
    json_t *items = sh == GRANULAR ? NULL : index_items(t, sh, r);
    const json_t *walked = items ? items : r;
    size_t n = 0, cap = json_object_size(walked);
    wire_child inline_kids[INLINE_CHILDREN];
    wire_child *kids = cap <= INLINE_CHILDREN ? inline_kids : malloc(cap * sizeof *kids);
    SK_CHECK_ALLOC(kids);
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)walked, key, val) {
        json_t *node;
        if (items) {
            node = created(elem(t), -1, val, BELOW);
        } else if (left_out(p, key)) {
            node = NULL;
        } else {
            int named;
            ty c = child(t, key, &named);
            int czd = zero_child_depth(t, c, zd);
            node = at_root(p) && !strcmp(key, "metadata") ? created_meta(c, czd, val)
                                                          : created(c, czd, val, BELOW);
        }
        if (node)
            kids[n++] = (wire_child){key, node};
    }
    /* a map's keys sort as their "f:" path elements do */
    qsort(kids, n, sizeof *kids, cmp_wire_child);
    json_t *out = NULL;
    if (n || zd < 0) {
        out = json_object();
        if (zd < 0 && n)
            json_object_set_new(out, ".", json_object());
    }
    sk_buf pe = SK_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (items) {
            json_object_set_new(out, kids[i].pe, kids[i].node);
        } else {
            pe.len = 0;
            field_pe(&pe, kids[i].pe);
            json_object_set_new(out, pe.data, kids[i].node);
        }
    }
    sk_buf_free(&pe);
    if (kids != inline_kids)
        free(kids);
    json_decref(items);
    return out;
}

/*
 * compare(t, l, r)'s added and modified members at and below r, in the
 * FieldsV1 wire form (NULL: none), where l is absent (zd -1) or is
 * zero_of(t.s, zd), a part of the zero value a create is compared with:
 * the same shape decisions, but no removed set (a create has no other
 * manager to take fields from), no intermediate set to union and encode,
 * what strip_own would delete never built (see place), and the zero value
 * read off the schema instead of built.
 * Children are written sorted by path element, as sk_fieldset_encode
 * writes them.
 */
static json_t *created(ty t, int zd, const json_t *r, place p)
{
    /* the zero value is an object: only its type matters to shape() */
    shape_t sl = zd >= 0 ? shape(t, an_object()) : LEAF, sr = shape(t, r);
    shape_t sh = zd < 0 ? sr : sl == sr ? sr : LEAF;
    if (sh != LEAF && !zero_has_members(t.s, zd) && empty_container(r))
        sh = LEAF;
    return sh == LEAF ? created_leaf(t, zd, r) : created_container(t, zd, r, sh, p);
}

json_t *sk_fieldset_created(sk_fieldset_type t, const json_t *obj, int drop_status)
{
    /* the root has a zero value, so it is never a member itself */
    json_t *out = created(root_type(t), 0, obj, drop_status ? ROOT_NO_STATUS : ROOT);
    if (out && !json_object_size(out)) {
        json_decref(out);
        out = NULL;
    }
    return out;
}

/* ---- set algebra ---- */

/* Set operations share the subtrees they do not change with their inputs
 * (sets are never modified once made): a union copies only the nodes on
 * the paths where both sides have members. */
json_t *sk_fieldset_union(const json_t *a, const json_t *b)
{
    json_t *out = a ? json_copy((json_t *)a) : json_object();
    SK_CHECK_ALLOC(out);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)b, k, v) {
        json_t *mine = json_object_get(out, k);
        if (!mine)
            json_object_set(out, k, v);
        else if (mine != v)
            json_object_set_new(out, k, sk_fieldset_union(mine, v));
    }
    return out;
}

/* intersect != 0: a ∩ b, else a − b. */
static json_t *filter(const json_t *a, const json_t *b, int intersect)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v) {
        json_t *other = json_object_get(b, k);
        if (strcmp(k, ".") == 0) {
            if (intersect ? !other : other != NULL)
                continue;
            mark(out);
            continue;
        }
        json_t *sub = other ? filter(v, other, intersect) : intersect ? NULL : json_incref(v);
        if (sub && json_object_size(sub))
            json_object_set_new(out, k, sub);
        else
            json_decref(sub);
    }
    return out;
}

json_t *sk_fieldset_difference(const json_t *a, const json_t *b)
{
    return filter(a, b, 0);
}

json_t *sk_fieldset_intersection(const json_t *a, const json_t *b)
{
    return filter(a, b, 1);
}

json_t *sk_fieldset_strip(const json_t *set, int only_status, int drop_status)
{
    /* copies only the two levels it changes (sets are never modified once
     * made, so sharing the rest is safe) */
    json_t *out = json_copy((json_t *)set);
    json_t *meta = json_object_get(out, "f:metadata");
    if (meta)
        json_object_set_new(out, "f:metadata", json_copy(meta));
    strip_own(out, drop_status);
    if (only_status) {
        json_t *st = json_incref(json_object_get(out, "f:status"));
        json_object_clear(out);
        if (st)
            json_object_set_new(out, "f:status", st);
    }
    return out;
}

/* ---- FieldsV1 ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *sk_fieldset_encode(const json_t *set)
{
    json_t *out = json_object();
    size_t n = json_object_size(set), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)set, k, v) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_str); /* "." sorts first */
    for (i = 0; i < n; i++) {
        json_t *c = json_object_get(set, keys[i]);
        if (strcmp(keys[i], ".") == 0)
            json_object_set_new(out, ".", json_object());
        else if (json_object_size(c) == 1 && is_member(c))
            json_object_set_new(out, keys[i], json_object());
        else
            json_object_set_new(out, keys[i], sk_fieldset_encode(c));
    }
    free(keys);
    return out;
}

json_t *sk_fieldset_decode(const json_t *f)
{
    if (!json_is_object(f))
        return NULL;
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)f, k, v) {
        if (!json_is_object(v))
            goto bad;
        if (strcmp(k, ".") == 0) {
            mark(out);
            continue;
        }
        /* "f:" is a field named "" (a map may have that key); the other
         * kinds carry a value */
        if (strlen(k) < 2 || k[1] != ':' || !strchr("fkvi", k[0]) || (k[0] != 'f' && !k[2]))
            goto bad;
        json_t *c = sk_fieldset_decode(v);
        if (!c)
            goto bad;
        if (!json_object_size(c))
            mark(c);
        json_object_set_new(out, k, c);
    }
    return out;
bad:
    json_decref(out);
    return NULL;
}

/* ---- printing ---- */

static void print_value(sk_buf *b, const json_t *v)
{
    if (json_is_string(v)) {
        sk_buf_go_quoted(b, json_string_value(v));
    } else if (json_is_integer(v)) {
        sk_buf_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        sk_buf_go_float(b, json_real_value(v));
    } else if (json_is_boolean(v)) {
        sk_buf_puts(b, json_is_true(v) ? "true" : "false");
    } else if (json_is_null(v)) {
        sk_buf_puts(b, "null");
    } else {
        char *s = dump_any(v);
        sk_buf_puts(b, s ? s : "");
        free(s);
    }
}

static void print_pe(sk_buf *b, const char *pe)
{
    if (pe[0] == 'f') {
        sk_buf_printf(b, ".%s", pe + 2);
        return;
    }
    if (pe[0] == 'i') {
        sk_buf_printf(b, "[%s]", pe + 2);
        return;
    }
    json_t *v = json_loads(pe + 2, JSON_DECODE_ANY, NULL);
    sk_buf_putc(b, '[');
    if (pe[0] == 'v') {
        sk_buf_putc(b, '=');
        print_value(b, v);
    } else {
        const char *k;
        json_t *kv;
        int first = 1;
        json_object_foreach(v, k, kv) {
            sk_buf_printf(b, "%s%s=", first ? "" : ",", k);
            print_value(b, kv);
            first = 0;
        }
    }
    sk_buf_putc(b, ']');
    json_decref(v);
}

static void each(const json_t *node, sk_buf *path, void (*fn)(void *, const char *), void *ctx)
{
    if (is_member(node) && path->len)
        fn(ctx, path->data);
    size_t n = json_object_size(node), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)node, k, v) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_str);
    for (i = 0; i < n; i++) {
        if (strcmp(keys[i], ".") == 0)
            continue;
        size_t at = path->len;
        print_pe(path, keys[i]);
        each(json_object_get(node, keys[i]), path, fn, ctx);
        path->len = at;
        path->data[at] = 0;
    }
    free(keys);
}

void sk_fieldset_each(const json_t *set, void (*fn)(void *ctx, const char *path), void *ctx)
{
    sk_buf path = SK_BUF_INIT;
    sk_buf_puts(&path, "");
    each(set, &path, fn, ctx);
    sk_buf_free(&path);
}

/* ---- merging and removing ---- */

static json_t *merge(ty t, const json_t *l, const json_t *c)
{
    if (!l || !c)
        return json_deep_copy(l ? l : c);
    shape_t sh = shape(t, c);
    if (sh != shape(t, l) || sh == LEAF)
        return json_deep_copy(c);
    if (sh == GRANULAR) {
        json_t *out = json_deep_copy(l);
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)c, key, val) {
            int named;
            json_object_set_new(out, key, merge(child(t, key, &named), json_object_get(l, key), val));
        }
        return out;
    }
    json_t *ci = index_items(t, sh, c), *used = json_object(), *out = json_array();
    size_t i;
    json_t *item;
    json_array_foreach(l, i, item) {
        const char *missing;
        char *pe = item_pe(t, sh, item, &missing);
        json_t *mine = pe ? json_object_get(ci, pe) : NULL;
        if (mine && !json_object_get(used, pe)) {
            json_array_append_new(out, merge(elem(t), item, mine));
            json_object_set(used, pe, json_true());
        } else if (!mine) {
            json_array_append(out, item);
        }
        free(pe);
    }
    json_array_foreach(c, i, item) {
        const char *missing;
        char *pe = item_pe(t, sh, item, &missing);
        if (pe && !json_object_get(used, pe)) {
            json_array_append(out, item);
            json_object_set(used, pe, json_true());
        }
        free(pe);
    }
    json_decref(ci);
    json_decref(used);
    return out;
}

json_t *sk_fieldset_merge(sk_fieldset_type t, const json_t *live, const json_t *config)
{
    return merge(root_type(t), live, config);
}

/* v, a removed member under which keep (the node of keep at v's path)
 * owns something: what keep owns stays, the rest goes. */
static void keep_only(ty t, json_t *v, const json_t *keep)
{
    shape_t sh = shape(t, v);
    if (sh == GRANULAR) {
        const char *key;
        json_t *val;
        void *it;
        sk_buf pe = SK_BUF_INIT;
        json_object_foreach_safe(v, it, key, val)
        {
            sk_buf_reset(&pe);
            field_pe(&pe, key);
            const json_t *k = json_object_get(keep, pe.data);
            int named;
            if (!k)
                json_object_del(v, key);
            else if (!is_member(k))
                keep_only(child(t, key, &named), val, k);
        }
        sk_buf_free(&pe);
    } else if (sh == LIST_MAP || sh == LIST_SET) {
        for (size_t i = 0; i < json_array_size(v);) {
            const char *missing;
            char *ipe = item_pe(t, sh, json_array_get(v, i), &missing);
            const json_t *k = ipe ? json_object_get(keep, ipe) : NULL;
            free(ipe);
            if (!k) {
                json_array_remove(v, i);
                continue;
            }
            if (!is_member(k))
                keep_only(elem(t), json_array_get(v, i), k);
            i++;
        }
    }
}

/* Non-zero if the removed member v goes whole: keep's node at its path, k,
 * owns nothing under it. Else only what k does not own goes. */
static int remove_member(ty t, json_t *v, const json_t *k)
{
    if (json_object_size(k) == 0)
        return 1;
    keep_only(t, v, k);
    return 0;
}

static void remove_in(ty t, json_t *v, const json_t *set, const json_t *parents, const json_t *keep)
{
    shape_t sh = shape(t, v);
    const char *pe;
    json_t *sub;
    json_object_foreach((json_t *)set, pe, sub) {
        if (strcmp(pe, ".") == 0)
            continue;
        const json_t *par = json_object_get(parents, pe);
        const json_t *k = json_object_get(keep, pe);
        if (sh == GRANULAR && pe[0] == 'f') {
            const char *key = pe + 2;
            json_t *val = json_object_get(v, key);
            int named;
            ty ct = child(t, key, &named);
            if (!val)
                continue;
            if (is_member(sub)) {
                if (remove_member(ct, val, k))
                    json_object_del(v, key);
                continue;
            }
            remove_in(ct, val, sub, par, k);
            /* a manager owning the emptied value itself keeps it (an
             * applied `typeChecking: {}`: structured-merge-diff adds back
             * every owned item) */
            if (par && empty_container(val) && !is_member(k))
                json_object_del(v, key);
        } else if ((sh == LIST_MAP || sh == LIST_SET) && (pe[0] == 'k' || pe[0] == 'v')) {
            for (size_t i = 0; i < json_array_size(v); i++) {
                const char *missing;
                char *ipe = item_pe(t, sh, json_array_get(v, i), &missing);
                int hit = ipe && strcmp(ipe, pe) == 0;
                free(ipe);
                if (!hit)
                    continue;
                if (!is_member(sub))
                    remove_in(elem(t), json_array_get(v, i), sub, par, k);
                else if (remove_member(elem(t), json_array_get(v, i), k))
                    json_array_remove(v, i);
                break;
            }
        }
    }
}

void sk_fieldset_remove(sk_fieldset_type t, json_t *obj, const json_t *set,
                        const json_t *set_parents, const json_t *keep)
{
    remove_in(root_type(t), obj, set, set_parents, keep);
}
