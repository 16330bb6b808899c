/*
 * registry.c - builds the resource table of registry.h from the "resources"
 * of the generated API description (sk_schema_api()).
 *
 * Lookups hash "group/version/resource" and "group/version/kind" into two
 * open-addressing tables, so routing a request costs one hash, whatever the
 * number of kinds.
 *
 * What is served is one immutable view (rows in order and both tables),
 * published through an atomic pointer: readers load it once per lookup and
 * take no lock. Installs and removes of custom resources are serialised by
 * a mutex; each builds a new view from the built-in rows and every
 * installed CRD's rows and publishes it. Old views and the rows of replaced
 * installs are retired, never freed (see registry.h for why and the bound).
 *
 * Invariants: built-in rows, strings and the first view are allocated once
 * under pthread_once and never change; the description was checked by its
 * generator, and anything it lacks here (a resource without a schema, a
 * shared storage naming nothing) aborts at load: a build defect, not input.
 * A custom resource's rows live in the arena of its install, with a deep
 * copy of the CRD they point into.
 */
#include "kube/registry.h"

#include "core/arena.h"
#include "core/check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const verb_names[SK_VERB_COUNT] = {
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};

/* What is served at one moment; immutable once published. */
typedef struct view {
    const sk_resource **rows;
    size_t n;
    const sk_resource **by_resource; /* keyed "g/v/resource" */
    const sk_resource **by_kind;     /* keyed "g/v/Kind" */
    size_t table_size;
    sk_arena *arena;        /* holding it */
    const struct view *prev; /* the view it replaced: retired, kept reachable */
} view;

/* One installed CRD: its rows (served versions) in its own arena. */
typedef struct install {
    const char *crd_name;
    json_t *crd; /* {metadata, spec: its served form}: a copy the rows point into */
    const sk_resource **rows;
    size_t n;
    sk_arena *arena; /* retired with the install, never freed */
    struct install *next;
} install;

static struct {
    sk_arena *arena;
    sk_resource *rows;
    size_t n;
    const char **storages;
    size_t n_storages;
    const json_t *preferred;
    _Atomic(const view *) current;
    atomic_ulong generation;
    pthread_mutex_t mu; /* serialises installs and removes */
    install *installs;  /* the live ones */
    install *retired;   /* replaced or removed: their rows may still be in use */
} g = {.mu = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t once = PTHREAD_ONCE_INIT;

__attribute__((noreturn)) static void die(const char *what, const char *name)
{
    fprintf(stderr, "sqlkube: generated API description: %s: %s\n", what, name ? name : "");
    abort();
}

const char *sk_registry_verb_name(unsigned verb)
{
    for (unsigned i = 0; i < SK_VERB_COUNT; i++)
        if (verb == 1u << i)
            return verb_names[i];
    return NULL;
}

static unsigned verbs_of(const json_t *list, const char *where)
{
    unsigned set = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        unsigned k = 0;
        while (k < SK_VERB_COUNT && strcmp(verb_names[k], json_string_value(v)) != 0)
            k++;
        if (k == SK_VERB_COUNT)
            die("unknown verb", where);
        set |= 1u << k;
    }
    return set;
}

static uint64_t hash3(const char *a, const char *b, const char *c)
{
    uint64_t h = 1469598103934665603ull;
    const char *parts[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        for (const char *s = parts[i]; *s; s++)
            h = (h ^ (unsigned char)*s) * 1099511628211ull;
        h = (h ^ '/') * 1099511628211ull;
    }
    return h;
}

/* The slot for (group, version, name) in v's table keyed by kind or resource. */
static size_t slot(const view *v, const char *group, const char *version, const char *name,
                   int by_kind)
{
    const sk_resource **table = by_kind ? v->by_kind : v->by_resource;
    size_t i = hash3(group, version, name) & (v->table_size - 1);
    while (table[i]) {
        const sk_resource *r = table[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->version, version) == 0 &&
            strcmp(by_kind ? r->kind : r->resource, name) == 0)
            break;
        i = (i + 1) & (v->table_size - 1);
    }
    return i;
}

/* A view of rows (in that order) in arena a. A row whose resource or kind
 * an earlier row has is left out (builtins come first and win) unless
 * strict, where it is a defect of the description. */
static const view *make_view(sk_arena *a, const sk_resource *const *rows, size_t n, int strict)
{
    view *v = sk_arena_alloc(a, sizeof *v);
    v->arena = a;
    v->table_size = 16;
    while (v->table_size < 2 * n)
        v->table_size *= 2;
    v->rows = sk_arena_alloc(a, (n ? n : 1) * sizeof *v->rows);
    v->by_resource = sk_arena_alloc(a, v->table_size * sizeof *v->by_resource);
    v->by_kind = sk_arena_alloc(a, v->table_size * sizeof *v->by_kind);
    for (size_t i = 0; i < n; i++) {
        const sk_resource *r = rows[i];
        size_t at = slot(v, r->group, r->version, r->resource, 0);
        size_t kat = slot(v, r->group, r->version, r->kind, 1);
        if (v->by_resource[at] || v->by_kind[kat]) {
            if (strict)
                die(v->by_resource[at] ? "resource listed twice" : "kind served by two resources",
                    r->resource);
            continue;
        }
        v->by_resource[at] = r;
        v->by_kind[kat] = r;
        v->rows[v->n++] = r;
    }
    return v;
}

static const char *const *strings(const json_t *list)
{
    size_t n = json_array_size(list);
    const char **out = sk_arena_alloc(g.arena, (n + 1) * sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = json_string_value(json_array_get(list, i));
    return out;
}

static const sk_schema *schema_of(const json_t *e, const char *key, const char *where)
{
    const char *name = json_string_value(json_object_get(e, key));
    if (!name)
        return NULL;
    const sk_schema *s = sk_schema_named(name);
    if (!s)
        die("resource names a missing definition", where);
    return s;
}

static void fill(sk_resource *r, const json_t *e)
{
    const char *s;
#define STR(key) ((s = json_string_value(json_object_get(e, key))) ? s : "")
    r->group = STR("group");
    r->version = STR("version");
    r->resource = STR("resource");
    r->kind = STR("kind");
    r->singular = STR("singular");
    r->list_kind = json_string_value(json_object_get(e, "listKind"));
#undef STR
    r->api_version = *r->group ? sk_arena_printf(g.arena, "%s/%s", r->group, r->version)
                               : r->version;
    r->short_names = strings(json_object_get(e, "shortNames"));
    r->categories = strings(json_object_get(e, "categories"));
    r->field_selectors = strings(json_object_get(e, "fieldSelectors"));
    r->namespaced = json_is_true(json_object_get(e, "namespaced"));
    r->delete_returns_object = json_is_true(json_object_get(e, "deleteReturnsObject"));
    r->verbs = verbs_of(json_object_get(e, "verbs"), r->resource);
    r->schema = schema_of(e, "schema", r->resource);
    r->list_schema = schema_of(e, "listSchema", r->resource);
    if (!r->schema)
        die("resource without a schema", r->resource);
    const json_t *subs = json_object_get(e, "subresources");
    r->n_subresources = json_array_size(subs);
    sk_subresource *sr = sk_arena_alloc(g.arena, (r->n_subresources + 1) * sizeof *sr);
    for (size_t i = 0; i < r->n_subresources; i++) {
        const json_t *se = json_array_get(subs, i);
        sr[i].name = json_string_value(json_object_get(se, "name"));
        sr[i].verbs = verbs_of(json_object_get(se, "verbs"), sr[i].name);
        sr[i].group = json_string_value(json_object_get(se, "group"));
        sr[i].version = json_string_value(json_object_get(se, "version"));
        sr[i].kind = json_string_value(json_object_get(se, "kind"));
        sr[i].schema = schema_of(se, "schema", sr[i].name);
        if (!sr[i].kind) {
            sr[i].group = r->group;
            sr[i].version = r->version;
            sr[i].kind = r->kind;
            sr[i].schema = r->schema;
        }
    }
    r->subresources = sr;
}

/* "g/v/r" of the sharedStorage table, "v1/events" for the core group.
 * Runs inside load(): reads the first view directly, not through ensure_loaded. */
static const sk_resource *parse_gvr(const view *v, const char *gvr)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", gvr);
    char *first = strchr(buf, '/');
    char *second = first ? strchr(first + 1, '/') : NULL;
    if (!first)
        return NULL;
    *first = '\0';
    if (!second)
        return v->by_resource[slot(v, "", buf, first + 1, 0)];
    *second = '\0';
    return v->by_resource[slot(v, buf, first + 1, second + 1, 0)];
}

static void set_storage(const view *v)
{
    const json_t *shared = json_object_get(sk_schema_api(), "sharedStorage");
    for (size_t i = 0; i < g.n; i++)
        g.rows[i].stored_as = &g.rows[i];
    const char *from;
    const json_t *to;
    json_object_foreach((json_t *)shared, from, to)
    {
        sk_resource *src = (sk_resource *)parse_gvr(v, from);
        const sk_resource *dst = parse_gvr(v, json_string_value(to));
        if (!src || !dst)
            die("sharedStorage names an unserved resource", from);
        src->stored_as = dst;
    }
    g.storages = sk_arena_alloc(g.arena, (g.n + 1) * sizeof *g.storages);
    for (size_t i = 0; i < g.n; i++) {
        sk_resource *r = &g.rows[i];
        if (r->stored_as == r) {
            r->storage = *r->group ? sk_arena_printf(g.arena, "%s.%s", r->resource, r->group)
                                   : r->resource;
            size_t k = 0;
            while (k < g.n_storages && strcmp(g.storages[k], r->storage) != 0)
                k++;
            if (k == g.n_storages)
                g.storages[g.n_storages++] = r->storage;
            else
                die("two resources store under one key without sharedStorage", r->storage);
        }
    }
    for (size_t i = 0; i < g.n; i++)
        g.rows[i].storage = g.rows[i].stored_as->storage;
}

static void load(void)
{
    const json_t *api = sk_schema_api();
    const json_t *list = json_object_get(api, "resources");
    g.arena = sk_arena_new();
    g.n = json_array_size(list);
    g.rows = sk_arena_alloc(g.arena, (g.n ? g.n : 1) * sizeof *g.rows);
    g.preferred = json_object_get(api, "preferredVersions");
    const sk_resource **order = sk_arena_alloc(g.arena, (g.n ? g.n : 1) * sizeof *order);
    for (size_t i = 0; i < g.n; i++) {
        fill(&g.rows[i], json_array_get(list, i));
        order[i] = &g.rows[i];
    }
    const view *v = make_view(g.arena, order, g.n, 1);
    set_storage(v);
    atomic_store(&g.current, v);
}

static void ensure_loaded(void)
{
    SK_CHECK(pthread_once(&once, load) == 0);
}

static const view *current(void)
{
    ensure_loaded();
    return atomic_load_explicit(&g.current, memory_order_acquire);
}

const sk_resource *sk_registry_find(const char *group, const char *version, const char *resource)
{
    const view *v = current();
    return v->by_resource[slot(v, group, version, resource, 0)];
}

const sk_resource *sk_registry_find_kind(const char *group, const char *version, const char *kind)
{
    const view *v = current();
    return v->by_kind[slot(v, group, version, kind, 1)];
}

const sk_subresource *sk_registry_subresource(const sk_resource *r, const char *name)
{
    for (size_t i = 0; i < r->n_subresources; i++)
        if (strcmp(r->subresources[i].name, name) == 0)
            return &r->subresources[i];
    return NULL;
}

json_t *sk_registry_stub(const sk_resource *r, const char *ns, const char *name)
{
    json_t *stub = json_pack("{s:s, s:s}", "kind", r->kind, "apiVersion", r->api_version);
    if (name)
        json_object_set_new(stub, "metadata",
                            json_pack("{s:s, s:s}", "name", name, "namespace", ns ? ns : ""));
    return stub;
}

const sk_resource *const *sk_registry_all(size_t *n_out)
{
    const view *v = current();
    *n_out = v->n;
    return v->rows;
}

unsigned long sk_registry_generation(void)
{
    ensure_loaded();
    return atomic_load(&g.generation);
}

const char *sk_registry_preferred_version(const char *group)
{
    const view *v = current();
    const char *pv = json_string_value(json_object_get(g.preferred, group));
    if (pv)
        return pv;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->rows[i]->group, group) == 0)
            return v->rows[i]->version;
    return NULL;
}

const char *const *sk_registry_storages(size_t *n_out)
{
    ensure_loaded();
    if (n_out)
        *n_out = g.n_storages;
    return g.storages;
}

/* ---- custom resources ----------------------------------------------------------- */

/* "v12beta3" -> major 12, stage 1 (alpha 0, beta 1, GA 2), minor 3; 0 if s
 * is not a kube version (the out-params then untouched). */
static int parse_kube_version(const char *s, long *major, int *stage, long *minor)
{
    char *end;
    long maj, min = 0;
    int st = 2;
    if (s[0] != 'v' || s[1] < '1' || s[1] > '9')
        return 0;
    maj = strtol(s + 1, &end, 10);
    if (*end) {
        if (strncmp(end, "alpha", 5) == 0)
            st = 0, end += 5;
        else if (strncmp(end, "beta", 4) == 0)
            st = 1, end += 4;
        else
            return 0;
        if (*end < '1' || *end > '9')
            return 0;
        min = strtol(end, &end, 10);
        if (*end != '\0')
            return 0;
    }
    *major = maj;
    *stage = st;
    *minor = min;
    return 1;
}

int sk_registry_version_cmp(const char *a, const char *b)
{
    long ma = 0, mb = 0, na = 0, nb = 0;
    int sa = 0, sb = 0;
    int ka = parse_kube_version(a, &ma, &sa, &na), kb = parse_kube_version(b, &mb, &sb, &nb);
    if (!ka || !kb)
        return ka != kb ? kb - ka : strcmp(a, b);
    if (sa != sb)
        return sb - sa;
    if (ma != mb)
        return ma > mb ? -1 : 1;
    if (na != nb)
        return na > nb ? -1 : 1;
    return 0;
}

static int custom_order(const void *pa, const void *pb)
{
    const sk_resource *a = *(const sk_resource *const *)pa, *b = *(const sk_resource *const *)pb;
    int c = strcmp(a->group, b->group);
    if (!c)
        c = sk_registry_version_cmp(a->version, b->version);
    if (!c)
        c = strcmp(a->resource, b->resource);
    return c;
}

static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A NULL-terminated array of the strings of list (pointers into it). */
static const char *const *strings_in(sk_arena *a, const json_t *list)
{
    size_t n = json_array_size(list);
    const char **out = sk_arena_alloc(a, (n + 1) * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(list, i));
        out[i] = s ? s : "";
    }
    return out;
}

/* The row of one version of crd (the install's copy), in arena a. */
static sk_resource *custom_row(sk_arena *a, const json_t *crd, const json_t *ver)
{
    const json_t *spec = json_object_get(crd, "spec");
    const json_t *names = json_object_get(spec, "names");
    const json_t *subs = json_object_get(ver, "subresources");
    const json_t *scale = json_object_get(subs, "scale");
    sk_resource *r = sk_arena_alloc(a, sizeof *r);
    sk_custom *c = sk_arena_alloc(a, sizeof *c);
    r->group = str_of(spec, "group");
    r->version = str_of(ver, "name");
    r->resource = str_of(names, "plural");
    r->api_version = sk_arena_printf(a, "%s/%s", r->group, r->version);
    r->kind = str_of(names, "kind");
    r->list_kind = str_of(names, "listKind");
    r->singular = str_of(names, "singular");
    r->short_names = strings_in(a, json_object_get(names, "shortNames"));
    r->categories = strings_in(a, json_object_get(names, "categories"));
    size_t nf = json_array_size(json_object_get(ver, "selectableFields"));
    const char **fs = sk_arena_alloc(a, (nf + 1) * sizeof *fs);
    for (size_t i = 0; i < nf; i++) {
        /* ".spec.color" selects as "spec.color" */
        const char *p = str_of(json_array_get(json_object_get(ver, "selectableFields"), i),
                               "jsonPath");
        fs[i] = p + (*p == '.');
    }
    r->field_selectors = fs;
    r->namespaced = strcmp(str_of(spec, "scope"), "Namespaced") == 0;
    r->verbs = (1u << SK_VERB_COUNT) - 1;
    sk_subresource *sr = sk_arena_alloc(a, 2 * sizeof *sr);
    if (json_object_get(subs, "status"))
        sr[r->n_subresources++] = (sk_subresource){"status", SK_VERB_GET | SK_VERB_PATCH | SK_VERB_UPDATE,
                                                    r->group, r->version, r->kind, NULL};
    if (scale)
        sr[r->n_subresources++] = (sk_subresource){
            "scale", SK_VERB_GET | SK_VERB_PATCH | SK_VERB_UPDATE, "autoscaling", "v1", "Scale",
            sk_schema_named("io.k8s.api.autoscaling.v1.Scale")};
    r->subresources = sr;
    r->storage = sk_arena_printf(a, "%s.%s", r->resource, r->group);
    r->stored_as = r;
    c->crd = crd;
    c->version = ver;
    c->schema = json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema");
    c->columns = json_object_get(ver, "additionalPrinterColumns");
    c->terminating = json_is_true(json_object_get(spec, "terminating"));
    if (scale) {
        c->spec_replicas = str_of(scale, "specReplicasPath");
        c->status_replicas = str_of(scale, "statusReplicasPath");
        c->label_selector = json_string_value(json_object_get(scale, "labelSelectorPath"));
    }
    r->custom = c;
    return r;
}

/* Builds and publishes the view of the built-in rows and every install.
 * Under g.mu. */
static void publish(void)
{
    sk_arena *a = sk_arena_new(); /* retired with the view it holds */
    size_t n = g.n;
    for (const install *in = g.installs; in; in = in->next)
        n += in->n;
    const sk_resource **rows = sk_arena_alloc(a, (n ? n : 1) * sizeof *rows);
    size_t k = 0;
    for (size_t i = 0; i < g.n; i++)
        rows[k++] = &g.rows[i];
    for (const install *in = g.installs; in; in = in->next)
        for (size_t i = 0; i < in->n; i++)
            rows[k++] = in->rows[i];
    qsort(rows + g.n, n - g.n, sizeof *rows, custom_order);
    view *v = (view *)make_view(a, rows, n, 0);
    v->prev = atomic_load(&g.current);
    atomic_store_explicit(&g.current, v, memory_order_release);
    atomic_fetch_add(&g.generation, 1);
}

/* The install of crd_name and the link pointing at it. Under g.mu. */
static install **find_install(const char *crd_name)
{
    install **p = &g.installs;
    while (*p && strcmp((*p)->crd_name, crd_name) != 0)
        p = &(*p)->next;
    return p;
}

/* Moves the install *at points to from the live list to the retired one:
 * never freed (requests may hold its rows), kept reachable. Under g.mu. */
static void retire(install **at)
{
    install *in = *at;
    *at = in->next;
    in->next = g.retired;
    g.retired = in;
}

/* What an install serves depends on these parts of a CRD only. */
static json_t *served_form(const json_t *crd)
{
    const json_t *spec = json_object_get(crd, "spec");
    int terminating = json_object_get(json_object_get(crd, "metadata"), "deletionTimestamp") != NULL;
    json_t *f = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:b}", "group",
                          json_object_get(spec, "group"), "names", json_object_get(spec, "names"),
                          "scope", json_object_get(spec, "scope"), "versions",
                          json_object_get(spec, "versions"), "conversion",
                          json_object_get(spec, "conversion"), "terminating", terminating);
    SK_CHECK_ALLOC(f);
    return f;
}

void sk_registry_install(const json_t *crd)
{
    ensure_loaded();
    const char *name = json_string_value(json_object_get(json_object_get(crd, "metadata"), "name"));
    if (!name)
        return;
    pthread_mutex_lock(&g.mu);
    install **at = find_install(name);
    json_t *form = served_form(crd);
    if (*at) {
        json_t *old = served_form((*at)->crd);
        int same = json_equal(old, form);
        json_decref(old);
        if (same) {
            json_decref(form);
            pthread_mutex_unlock(&g.mu);
            return;
        }
        retire(at);
    }
    sk_arena *a = sk_arena_new();
    install *in = sk_arena_alloc(a, sizeof *in);
    in->arena = a;
    in->crd_name = sk_arena_strdup(a, name);
    /* A copy of its own: the caller's object may change or go after this. */
    json_t *wrapped = json_pack("{s:o, s:o}", "metadata",
                                json_deep_copy(json_object_get(crd, "metadata")), "spec",
                                json_deep_copy(form));
    SK_CHECK_ALLOC(wrapped);
    json_decref(form);
    in->crd = wrapped;
    const json_t *versions = json_object_get(json_object_get(wrapped, "spec"), "versions");
    size_t nv = json_array_size(versions);
    in->rows = sk_arena_alloc(a, (nv ? nv : 1) * sizeof *in->rows);
    sk_resource *storage = NULL;
    sk_resource **all = sk_arena_alloc(a, (nv ? nv : 1) * sizeof *all);
    for (size_t i = 0; i < nv; i++) {
        const json_t *ver = json_array_get(versions, i);
        all[i] = custom_row(a, wrapped, ver);
        if (json_is_true(json_object_get(ver, "storage")))
            storage = all[i];
    }
    for (size_t i = 0; i < nv; i++) {
        /* objects are stored in the storage version's form: with
         * conversion None it differs only in apiVersion; with Webhook the
         * API converts through the CRD's webhook (api/crconvert.h) */
        all[i]->stored_as = storage ? storage : all[i];
        if (json_is_true(json_object_get(json_array_get(versions, i), "served")))
            in->rows[in->n++] = all[i];
    }
    in->next = g.installs;
    g.installs = in;
    publish();
    pthread_mutex_unlock(&g.mu);
}

void sk_registry_remove(const char *crd_name)
{
    ensure_loaded();
    pthread_mutex_lock(&g.mu);
    install **at = find_install(crd_name);
    if (*at) {
        retire(at);
        publish();
    }
    pthread_mutex_unlock(&g.mu);
}
