/*
 * registry.c - builds the resource table of registry.h from the "resources"
 * of the generated API description (sk_schema_api()).
 *
 * Lookups hash "group/version/resource" and "group/version/kind" into two
 * open-addressing tables built with the rows, so routing a request costs
 * one hash, whatever the number of kinds (CRDs will add rows at run time;
 * see issue 13).
 *
 * Invariants: rows, strings and tables are allocated once under
 * pthread_once and never change; the description was checked by its
 * generator, and anything it lacks here (a resource without a schema, a
 * shared storage naming nothing) aborts at load: a build defect, not input.
 */
#include "kube/registry.h"

#include "core/arena.h"
#include "core/check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const verb_names[SK_VERB_COUNT] = {
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};

static struct {
    sk_arena *arena;
    sk_resource *rows;
    size_t n;
    const sk_resource **by_resource; /* keyed "g/v/resource" */
    const sk_resource **by_kind;     /* keyed "g/v/Kind" */
    size_t table_size;
    const char **storages;
    size_t n_storages;
    const json_t *preferred;
} g;

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

/* The slot for (group, version, name) in table, keyed by kind or resource. */
static size_t slot(const sk_resource **table, const char *group, const char *version,
                   const char *name, int by_kind)
{
    size_t i = hash3(group, version, name) & (g.table_size - 1);
    while (table[i]) {
        const sk_resource *r = table[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->version, version) == 0 &&
            strcmp(by_kind ? r->kind : r->resource, name) == 0)
            break;
        i = (i + 1) & (g.table_size - 1);
    }
    return i;
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
 * Runs inside load(): reads the tables directly, not through ensure_loaded. */
static const sk_resource *parse_gvr(const char *gvr)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", gvr);
    char *first = strchr(buf, '/');
    char *second = first ? strchr(first + 1, '/') : NULL;
    if (!first)
        return NULL;
    *first = '\0';
    if (!second)
        return g.by_resource[slot(g.by_resource, "", buf, first + 1, 0)];
    *second = '\0';
    return g.by_resource[slot(g.by_resource, buf, first + 1, second + 1, 0)];
}

static void set_storage(void)
{
    const json_t *shared = json_object_get(sk_schema_api(), "sharedStorage");
    for (size_t i = 0; i < g.n; i++)
        g.rows[i].stored_as = &g.rows[i];
    const char *from;
    const json_t *to;
    json_object_foreach((json_t *)shared, from, to)
    {
        sk_resource *src = (sk_resource *)parse_gvr(from);
        const sk_resource *dst = parse_gvr(json_string_value(to));
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
    g.table_size = 16;
    while (g.table_size < 2 * g.n)
        g.table_size *= 2;
    g.by_resource = sk_arena_alloc(g.arena, g.table_size * sizeof *g.by_resource);
    g.by_kind = sk_arena_alloc(g.arena, g.table_size * sizeof *g.by_kind);
    g.preferred = json_object_get(api, "preferredVersions");
    for (size_t i = 0; i < g.n; i++) {
        sk_resource *r = &g.rows[i];
        fill(r, json_array_get(list, i));
        size_t at = slot(g.by_resource, r->group, r->version, r->resource, 0);
        if (g.by_resource[at])
            die("resource listed twice", r->resource);
        g.by_resource[at] = r;
        at = slot(g.by_kind, r->group, r->version, r->kind, 1);
        if (g.by_kind[at])
            die("kind served by two resources", r->kind);
        g.by_kind[at] = r;
    }
    set_storage();
}

static void ensure_loaded(void)
{
    SK_CHECK(pthread_once(&once, load) == 0);
}

const sk_resource *sk_registry_find(const char *group, const char *version, const char *resource)
{
    ensure_loaded();
    return g.by_resource[slot(g.by_resource, group, version, resource, 0)];
}

const sk_resource *sk_registry_find_kind(const char *group, const char *version, const char *kind)
{
    ensure_loaded();
    return g.by_kind[slot(g.by_kind, group, version, kind, 1)];
}

const sk_subresource *sk_registry_subresource(const sk_resource *r, const char *name)
{
    for (size_t i = 0; i < r->n_subresources; i++)
        if (strcmp(r->subresources[i].name, name) == 0)
            return &r->subresources[i];
    return NULL;
}

const sk_resource *sk_registry_all(size_t *n_out)
{
    ensure_loaded();
    *n_out = g.n;
    return g.rows;
}

const char *sk_registry_preferred_version(const char *group)
{
    ensure_loaded();
    const char *v = json_string_value(json_object_get(g.preferred, group));
    if (v)
        return v;
    for (size_t i = 0; i < g.n; i++)
        if (strcmp(g.rows[i].group, group) == 0)
            return g.rows[i].version;
    return NULL;
}

const char *const *sk_registry_storages(size_t *n_out)
{
    ensure_loaded();
    if (n_out)
        *n_out = g.n_storages;
    return g.storages;
}
