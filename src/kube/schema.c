/*
 * schema.c - builds the schema graph of schema.h from the generated API
 * description compiled into the binary (gen/kube_api_data.c, embedded from
 * src/kube/gen/api.json by cmake/embed_file.cmake).
 *
 * Shape. Every definition becomes one node, found by name through an
 * open-addressing hash table. A property that names a definition ($ref)
 * points at that node; any other property gets a node of its own (arrays
 * and maps with their element nodes), which is where the Go spelling of a
 * named scalar type ("v1.PodPhase") lives. Field lookups go through two
 * sorted indexes per struct (by JSON name, by protobuf number; see
 * index_fields for structs embedded inline).
 *
 * Invariants: built once under pthread_once from data that the build
 * checked (scripts/gen_kube_api.py refuses inconsistent inputs); a
 * malformed description is a build defect, so loading it aborts rather
 * than serving a partial API. Nothing is mutated or freed after the build,
 * so readers need no locks.
 */
#include "kube/schema.h"

#include "core/arena.h"
#include "core/check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The embedded src/kube/gen/api.json. */
extern const char sk_kube_api_json[];
extern const size_t sk_kube_api_json_len;

struct sk_schema_field {
    const char *name;
    uint32_t number;
    unsigned flags;
    const uint32_t *via; /* numbers of the inline embeddings it sits in, outermost first */
    size_t n_via;
    const sk_schema *type;
    const char *merge_key;
    const char *list_type;
    const char **list_map_keys;
    const json_t *dflt; /* x-sk-default, borrowed from the document */
};

struct sk_schema {
    sk_schema_kind kind;
    const char *name;    /* definitions only */
    const char *go_type; /* reflect's spelling */
    const sk_schema *elem;
    const char *map_type;
    const json_t *gvks;
    size_t n_fields;
    sk_schema_field *fields;         /* declaration order */
    const sk_schema_field **by_name; /* sorted by name */
    const sk_schema_field **by_number; /* the protobuf view: see index_fields */
    size_t n_numbered;
};

static struct {
    json_t *api;
    sk_arena *arena;
    const sk_schema **table; /* open addressing by name */
    size_t table_size;       /* power of two */
} g;

static pthread_once_t once = PTHREAD_ONCE_INIT;

__attribute__((noreturn)) static void die(const char *what, const char *name)
{
    fprintf(stderr, "sqlkube: generated API description: %s: %s\n", what, name ? name : "");
    abort();
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void table_put(const sk_schema *s)
{
    size_t i = hash_str(s->name) & (g.table_size - 1);
    while (g.table[i])
        i = (i + 1) & (g.table_size - 1);
    g.table[i] = s;
}

static const sk_schema *lookup(const char *name)
{
    size_t i = hash_str(name) & (g.table_size - 1);
    while (g.table[i]) {
        if (strcmp(g.table[i]->name, name) == 0)
            return g.table[i];
        i = (i + 1) & (g.table_size - 1);
    }
    return NULL;
}

static const struct {
    const char *wire;
    sk_schema_kind kind;
} wire_kinds[] = {
    {"time", SK_SCHEMA_TIME},
    {"microtime", SK_SCHEMA_MICROTIME},
    {"quantity", SK_SCHEMA_QUANTITY},
    {"intorstring", SK_SCHEMA_INT_OR_STRING},
    {"rawextension", SK_SCHEMA_RAW},
    {"fieldsv1", SK_SCHEMA_FIELDS_V1},
};

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static sk_schema *new_node(sk_schema_kind kind, const char *go_type)
{
    sk_schema *s = sk_arena_alloc(g.arena, sizeof *s);
    s->kind = kind;
    s->go_type = go_type;
    return s;
}

static const char *scalar_go(sk_schema_kind kind)
{
    switch (kind) {
    case SK_SCHEMA_STRING:
        return "string";
    case SK_SCHEMA_BYTES:
        return "[]uint8";
    case SK_SCHEMA_BOOL:
        return "bool";
    case SK_SCHEMA_INT32:
        return "int32";
    case SK_SCHEMA_INT64:
        return "int64";
    case SK_SCHEMA_DOUBLE:
        return "float64";
    default:
        return NULL;
    }
}

/* The node for an inline (non-$ref) schema p; go_type names it if set. */
static const sk_schema *node_of(const json_t *p, const char *go_type, const char *elem_go,
                                const char *where);

static const sk_schema *elem_node(const json_t *p, const char *elem_go, const char *where)
{
    if (str(p, "$ref"))
        return node_of(p, NULL, NULL, where);
    return node_of(p, elem_go, NULL, where);
}

static const sk_schema *node_of(const json_t *p, const char *go_type, const char *elem_go,
                                const char *where)
{
    const char *ref = str(p, "$ref");
    if (ref) {
        const char *slash = strrchr(ref, '/');
        const sk_schema *s = lookup(slash ? slash + 1 : ref);
        if (!s)
            die("unresolved $ref", ref);
        return s;
    }
    const char *type = str(p, "type");
    const char *format = str(p, "format");
    sk_schema *s;
    if (!type) {
        die("property without a type", where);
    } else if (strcmp(type, "array") == 0) {
        const sk_schema *elem = elem_node(json_object_get(p, "items"), elem_go, where);
        s = new_node(SK_SCHEMA_ARRAY, go_type);
        s->elem = elem;
        if (!s->go_type)
            s->go_type = sk_arena_printf(g.arena, "[]%s", elem->go_type);
    } else if (strcmp(type, "object") == 0 && json_object_get(p, "additionalProperties")) {
        const sk_schema *elem =
            elem_node(json_object_get(p, "additionalProperties"), elem_go, where);
        s = new_node(SK_SCHEMA_MAP, go_type);
        s->elem = elem;
        s->map_type = str(p, "x-kubernetes-map-type");
        if (!s->go_type)
            s->go_type = sk_arena_printf(g.arena, "map[string]%s", elem->go_type);
    } else {
        sk_schema_kind kind;
        if (strcmp(type, "string") == 0)
            kind = format && strcmp(format, "byte") == 0 ? SK_SCHEMA_BYTES : SK_SCHEMA_STRING;
        else if (strcmp(type, "boolean") == 0)
            kind = SK_SCHEMA_BOOL;
        else if (strcmp(type, "integer") == 0)
            kind = format && strcmp(format, "int32") == 0 ? SK_SCHEMA_INT32 : SK_SCHEMA_INT64;
        else if (strcmp(type, "number") == 0)
            kind = SK_SCHEMA_DOUBLE;
        else
            die("unsupported property type", where);
        s = new_node(kind, go_type && kind != SK_SCHEMA_BYTES ? go_type : scalar_go(kind));
    }
    return s;
}

static int cmp_by_name(const void *a, const void *b)
{
    return strcmp((*(const sk_schema_field *const *)a)->name,
                  (*(const sk_schema_field *const *)b)->name);
}

static int cmp_by_number(const void *a, const void *b)
{
    uint32_t x = (*(const sk_schema_field *const *)a)->number;
    uint32_t y = (*(const sk_schema_field *const *)b)->number;
    return (x > y) - (x < y);
}

static unsigned strategy_flags(const char *strategy)
{
    unsigned flags = 0;
    if (!strategy)
        return 0;
    if (strstr(strategy, "merge"))
        flags |= SK_FIELD_PATCH_MERGE;
    if (strstr(strategy, "retainKeys"))
        flags |= SK_FIELD_RETAIN_KEYS;
    if (strstr(strategy, "replace"))
        flags |= SK_FIELD_PATCH_REPLACE;
    return flags;
}

/*
 * Builds s's two lookup indexes from s->fields. The JSON view (by_name) has
 * every field, inline-embedded ones flattened as encoding/json writes them.
 * The protobuf view (by_number) has the fields s itself numbers plus, for
 * each inline embedding, one pseudo-field (SK_FIELD_EMBEDDED, no name) whose
 * type is a synthesized struct of the embedded fields: protobuf nests what
 * JSON flattens, and both views describe the same JSON object.
 */
static void index_fields(sk_schema *s)
{
    size_t n = s->n_fields;
    s->by_name = sk_arena_alloc(g.arena, (n ? n : 1) * sizeof *s->by_name);
    s->by_number = sk_arena_alloc(g.arena, (n ? n : 1) * sizeof *s->by_number);
    for (size_t i = 0; i < n; i++) {
        const sk_schema_field *f = &s->fields[i];
        s->by_name[i] = f;
        if (f->n_via == 0 && f->number) {
            s->by_number[s->n_numbered++] = f;
            continue;
        }
        if (f->n_via == 0)
            continue;
        int seen = 0;
        for (size_t k = 0; k < s->n_numbered; k++)
            seen |= s->by_number[k]->number == f->via[0];
        if (seen)
            continue; /* that embedding's pseudo-field exists (or the number clashes: see below) */
        sk_schema *inner = new_node(SK_SCHEMA_STRUCT, s->go_type);
        for (size_t j = i; j < n; j++)
            inner->n_fields += s->fields[j].n_via && s->fields[j].via[0] == f->via[0];
        inner->fields = sk_arena_alloc(g.arena, inner->n_fields * sizeof *inner->fields);
        size_t at = 0;
        for (size_t j = i; j < n; j++) {
            if (!s->fields[j].n_via || s->fields[j].via[0] != f->via[0])
                continue;
            inner->fields[at] = s->fields[j];
            inner->fields[at].via++;
            inner->fields[at].n_via--;
            at++;
        }
        index_fields(inner);
        sk_schema_field *pseudo = sk_arena_alloc(g.arena, sizeof *pseudo);
        pseudo->number = f->via[0];
        pseudo->flags = SK_FIELD_EMBEDDED;
        pseudo->type = inner;
        s->by_number[s->n_numbered++] = pseudo;
    }
    qsort(s->by_name, n, sizeof *s->by_name, cmp_by_name);
    qsort(s->by_number, s->n_numbered, sizeof *s->by_number, cmp_by_number);
    for (size_t i = 1; i < s->n_numbered; i++)
        if (s->by_number[i]->number == s->by_number[i - 1]->number)
            die("two fields share a protobuf number", s->go_type);
}

static void build_fields(sk_schema *s, const json_t *def)
{
    const json_t *props = json_object_get(def, "properties");
    const json_t *order = json_object_get(def, "x-sk-fields");
    const json_t *required = json_object_get(def, "required");
    size_t n = json_array_size(order);
    if (n != json_object_size(props))
        die("x-sk-fields does not list every property", s->name);
    s->n_fields = n;
    s->fields = sk_arena_alloc(g.arena, n * sizeof *s->fields);
    for (size_t i = 0; i < n; i++) {
        sk_schema_field *f = &s->fields[i];
        const char *name = json_string_value(json_array_get(order, i));
        const json_t *p = json_object_get(props, name ? name : "");
        if (!p)
            die("x-sk-fields names no property", s->name);
        f->name = name;
        f->number = (uint32_t)json_integer_value(json_object_get(p, "x-sk-pb"));
        f->type = node_of(p, str(p, "x-sk-gotype"), str(p, "x-sk-goelem"), s->name);
        if (json_is_true(json_object_get(p, "x-sk-omitempty")))
            f->flags |= SK_FIELD_OMITEMPTY;
        if (json_is_true(json_object_get(p, "x-sk-ptr")))
            f->flags |= SK_FIELD_POINTER;
        f->flags |= strategy_flags(str(p, "x-kubernetes-patch-strategy"));
        f->merge_key = str(p, "x-kubernetes-patch-merge-key");
        f->list_type = str(p, "x-kubernetes-list-type");
        f->dflt = json_object_get(p, "x-sk-default");
        const json_t *keys = json_object_get(p, "x-kubernetes-list-map-keys");
        if (json_array_size(keys)) {
            f->list_map_keys = sk_arena_alloc(g.arena, (json_array_size(keys) + 1) * sizeof(char *));
            for (size_t k = 0; k < json_array_size(keys); k++)
                f->list_map_keys[k] = json_string_value(json_array_get(keys, k));
        }
        size_t r;
        const json_t *req;
        json_array_foreach(required, r, req)
        {
            if (strcmp(json_string_value(req), name) == 0)
                f->flags |= SK_FIELD_REQUIRED;
        }
        const json_t *via = json_object_get(p, "x-sk-pb-via");
        if ((f->n_via = json_array_size(via)) > 0) {
            uint32_t *v = sk_arena_alloc(g.arena, f->n_via * sizeof *v);
            for (size_t k = 0; k < f->n_via; k++)
                v[k] = (uint32_t)json_integer_value(json_array_get(via, k));
            f->via = v;
        }
    }
    index_fields(s);
}

static void load(void)
{
    json_error_t jerr;
    g.api = json_loadb(sk_kube_api_json, sk_kube_api_json_len, 0, &jerr);
    if (!g.api)
        die("does not parse", jerr.text);
    g.arena = sk_arena_new();
    const json_t *defs = json_object_get(g.api, "definitions");
    size_t n = json_object_size(defs);
    g.table_size = 16;
    while (g.table_size < 2 * n)
        g.table_size *= 2;
    g.table = sk_arena_alloc(g.arena, g.table_size * sizeof *g.table);
    const char *name;
    const json_t *def;
    /* Nodes first, so that properties can point at any definition. */
    json_object_foreach((json_t *)defs, name, def)
    {
        sk_schema *s = new_node(SK_SCHEMA_STRUCT, str(def, "x-sk-go"));
        s->name = name;
        s->gvks = json_object_get(def, "x-kubernetes-group-version-kind");
        const char *wire = str(def, "x-sk-wire");
        if (wire) {
            size_t i = 0;
            while (i < sizeof wire_kinds / sizeof wire_kinds[0] && strcmp(wire_kinds[i].wire, wire))
                i++;
            if (i == sizeof wire_kinds / sizeof wire_kinds[0])
                die("unknown x-sk-wire", wire);
            s->kind = wire_kinds[i].kind;
        } else if (!json_object_get(def, "properties")) {
            die("definition without properties", name);
        }
        if (!s->go_type)
            die("definition without x-sk-go", name);
        table_put(s);
    }
    json_object_foreach((json_t *)defs, name, def)
    {
        sk_schema *s = (sk_schema *)lookup(name);
        if (s->kind == SK_SCHEMA_STRUCT)
            build_fields(s, def);
    }
}

static void ensure_loaded(void)
{
    SK_CHECK(pthread_once(&once, load) == 0);
}

const sk_schema *sk_schema_named(const char *name)
{
    ensure_loaded();
    return lookup(name);
}

const json_t *sk_schema_api(void)
{
    ensure_loaded();
    return g.api;
}

sk_schema_kind sk_schema_kind_of(const sk_schema *s)
{
    return s->kind;
}

const char *sk_schema_name(const sk_schema *s)
{
    return s->name;
}

const char *sk_schema_go_type(const sk_schema *s)
{
    return s->go_type;
}

const sk_schema *sk_schema_elem(const sk_schema *s)
{
    return s->elem;
}

size_t sk_schema_field_count(const sk_schema *s)
{
    return s->n_fields;
}

const sk_schema_field *sk_schema_field_at(const sk_schema *s, size_t i)
{
    return i < s->n_fields ? &s->fields[i] : NULL;
}

const sk_schema_field *sk_schema_field_find(const sk_schema *s, const char *name, size_t len)
{
    size_t lo = 0, hi = s->n_fields;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *fn = s->by_name[mid]->name;
        int c = strncmp(fn, name, len);
        if (c == 0)
            c = fn[len] != '\0'; /* fn is longer: it sorts after name */
        if (c == 0)
            return s->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const sk_schema_field *sk_schema_field_by_number(const sk_schema *s, uint32_t number)
{
    size_t lo = 0, hi = s->n_numbered;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t n = s->by_number[mid]->number;
        if (n == number)
            return s->by_number[mid];
        if (n < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

size_t sk_schema_pb_count(const sk_schema *s)
{
    return s->n_numbered;
}

const sk_schema_field *sk_schema_pb_at(const sk_schema *s, size_t i)
{
    return i < s->n_numbered ? s->by_number[i] : NULL;
}

uint32_t sk_schema_max_number(const sk_schema *s)
{
    return s->n_numbered ? s->by_number[s->n_numbered - 1]->number : 0;
}

const json_t *sk_schema_gvks(const sk_schema *s)
{
    return s->gvks;
}

const char *sk_schema_map_type(const sk_schema *s)
{
    return s->map_type;
}

const char *sk_schema_field_name(const sk_schema_field *f)
{
    return f->name;
}

uint32_t sk_schema_field_number(const sk_schema_field *f)
{
    return f->number;
}

unsigned sk_schema_field_flags(const sk_schema_field *f)
{
    return f->flags;
}

const sk_schema *sk_schema_field_type(const sk_schema_field *f)
{
    return f->type;
}

const char *sk_schema_field_merge_key(const sk_schema_field *f)
{
    return f->merge_key;
}

const char *sk_schema_field_list_type(const sk_schema_field *f)
{
    return f->list_type;
}

const char *const *sk_schema_field_list_map_keys(const sk_schema_field *f)
{
    return (const char *const *)f->list_map_keys;
}

const json_t *sk_schema_field_default(const sk_schema_field *f)
{
    return f->dflt;
}
