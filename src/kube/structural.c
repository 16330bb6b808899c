/*
 * structural.c - CRD openAPIV3Schema handling, after
 * k8s.io/apiextensions-apiserver 1.32 (pkg/apiserver/schema: structural,
 * validation, complete, defaulting, pruning, objectmeta, listtype;
 * pkg/apis/apiextensions/validation for the CRD-side checks) and
 * k8s.io/kube-openapi's validate package for value validation.
 *
 * Two views of one schema. The compiled copy of the JSON (s->schema) is
 * what kube-openapi validates against: value validation walks it as
 * written, allOf/anyOf/oneOf/not included. The node tree is kube's
 * Structural: type, properties, items, additionalProperties, default,
 * nullable and the x-kubernetes-* extensions, which defaulting, pruning,
 * embedded-resource metadata and list-type checks follow. Nodes point into
 * the copy, so the copy lives as long as the compiled schema.
 *
 * Order of compile errors is kube's: the root-nullable check, then the
 * structural errors sorted by text (or, when there are none, the default
 * checks), then the CRD-side checks in schema order. Where kube iterates a
 * Go map (properties), this module takes properties in schema order and
 * sorted where kube sorts.
 *
 * Patterns are RE2 as Go's regexp has them (cel/regex.h), with Go's
 * error texts. Deviations kept on purpose (see the comments at each): formats are
 * kube/strfmt.c's (some approximate); a keyword of the wrong JSON type is an
 * Invalid error here where kube fails to decode the CRD; anyOf/oneOf
 * best-failure selection follows kube-openapi's match count as far as this
 * module's validators count alike; value validation stops after a budget of
 * steps (VALIDATE_BUDGET) that only pathological nesting reaches; a default
 * inside embedded metadata is checked with the same metadata rules as a
 * value, not through kube's coercion (same errors, possibly more than
 * kube's first one). x-kubernetes-validations (CEL) rules are the policy
 * layer's (policy/crdrules.h).
 */
#include "kube/structural.h"
#include "kube/validate.h"
#include "kube/schema.h"
#include "cel/regex.h"
#include "kube/strfmt.h"
#include "kube/typed.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/util.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- compiled form ----------------------------------------------------- */

typedef struct node node;

typedef struct {
    const char *name;
    node *schema;
} prop;

struct node {
    const json_t *raw; /* this schema in s->schema */
    const char *type;  /* "" when unset */
    int nullable, preserve, embedded, int_or_string;
    const char *list_type;  /* NULL when unset */
    const json_t *map_keys; /* x-kubernetes-list-map-keys or NULL */
    const json_t *dflt;     /* NULL when unset or null */
    prop *props;            /* schema order */
    size_t nprops;
    int has_ap; /* additionalProperties given (a schema or a boolean) */
    node *ap;   /* its schema; NULL for a boolean */
    node *items;
};

/* A schema's pattern, compiled once with the schema. */
typedef struct {
    const json_t *key; /* the pattern string in s->schema */
    sk_arena *arena;   /* owns re and lock */
    sk_cel_re *re;
    pthread_mutex_t *lock; /* a search at a time (pattern_matches) */
} pattern;

struct sk_structural {
    json_t *schema;
    node *root;
    pattern *patterns; /* sorted by key */
    size_t npatterns;
};

/* ---- small helpers ----------------------------------------------------- */

const json_t *sk_structural_kw(const json_t *sch, const char *name)
{
    const json_t *v = json_is_object(sch) ? json_object_get(sch, name) : NULL;
    return json_is_null(v) ? NULL : v;
}

const char *sk_structural_kw_str(const json_t *sch, const char *name)
{
    const char *s = json_string_value(sk_structural_kw(sch, name));
    return s ? s : "";
}

static int kw_true(const json_t *sch, const char *name)
{
    return json_is_true(sk_structural_kw(sch, name));
}

static void trunc_to(sk_buf *b, size_t n)
{
    b->len = n;
    if (b->data)
        b->data[n] = '\0';
}

/* field.Path Child / Key / Index appended to p; returns the old length. */
static size_t child(sk_buf *p, const char *name)
{
    size_t mark = p->len;
    if (p->len)
        sk_buf_putc(p, '.');
    sk_buf_puts(p, name);
    return mark;
}

static size_t key(sk_buf *p, const char *k)
{
    size_t mark = p->len;
    sk_buf_printf(p, "[%s]", k);
    return mark;
}

static size_t idx(sk_buf *p, size_t i)
{
    size_t mark = p->len;
    sk_buf_printf(p, "[%zu]", i);
    return mark;
}

static const char *str(const sk_buf *p)
{
    return p->data ? p->data : "";
}

static int is_meta_field(const char *k)
{
    return strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0 || strcmp(k, "metadata") == 0;
}

static const node *prop_of(const node *n, const char *name)
{
    for (size_t i = 0; n && i < n->nprops; i++)
        if (strcmp(n->props[i].name, name) == 0)
            return n->props[i].schema;
    return NULL;
}

/* ---- shape: every keyword has the JSON type JSONSchemaProps declares ---- */

typedef enum {
    K_STR,
    K_NUM,
    K_BOOL,
    K_INT,
    K_STRS,
    K_ARRAY,
    K_OBJ,
    K_SCHEMA,
    K_SCHEMAS,
    K_SCHEMA_MAP,
    K_SCHEMA_OR_BOOL,
    K_SCHEMA_OR_ARRAY,
    K_DEPS,
    K_ANY
} kw_kind;

#define JSP "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"

/* What JSON a keyword of JSONSchemaProps takes, from the field's type in
 * the generated schema. The unions Go decodes by hand (schema or list,
 * schema or bool, schema or list of strings) are raw JSON there; their
 * type names say which is which. */
static kw_kind keyword_kind(const sk_schema *props, const sk_schema *t)
{
    const sk_schema *e = NULL;
    const char *name = sk_schema_name(t);
    switch (sk_schema_kind_of(t)) {
    case SK_SCHEMA_STRING:
        return K_STR;
    case SK_SCHEMA_DOUBLE:
        return K_NUM;
    case SK_SCHEMA_BOOL:
        return K_BOOL;
    case SK_SCHEMA_INT32:
    case SK_SCHEMA_INT64:
        return K_INT;
    case SK_SCHEMA_ARRAY:
        e = sk_schema_elem(t);
        return e == props ? K_SCHEMAS : sk_schema_kind_of(e) == SK_SCHEMA_STRING ? K_STRS : K_ARRAY;
    case SK_SCHEMA_MAP:
        e = sk_schema_elem(t);
        return e == props ? K_SCHEMA_MAP : K_DEPS;
    case SK_SCHEMA_STRUCT:
        return t == props ? K_SCHEMA : K_OBJ;
    default:
        if (name && !strcmp(name, JSP "OrArray"))
            return K_SCHEMA_OR_ARRAY;
        if (name && !strcmp(name, JSP "OrBool"))
            return K_SCHEMA_OR_BOOL;
        return K_ANY;
    }
}

static int all_strings(const json_t *a)
{
    size_t i;
    const json_t *e;
    json_array_foreach(a, i, e) if (!json_is_string(e)) return 0;
    return 1;
}

static void shape(const json_t *sch, sk_buf *p, sk_field_errors *fe);

static void shape_list(const json_t *a, sk_buf *p, sk_field_errors *fe)
{
    size_t i;
    const json_t *e;
    json_array_foreach(a, i, e)
    {
        size_t m = idx(p, i);
        shape(e, p, fe);
        trunc_to(p, m);
    }
}

static void shape_map(const json_t *o, sk_buf *p, sk_field_errors *fe, int deps)
{
    const char *k;
    const json_t *e;
    json_object_foreach((json_t *)o, k, e)
    {
        size_t m = key(p, k);
        if (deps && json_is_array(e)) {
            if (!all_strings(e))
                sk_field_errors_invalid_json(fe, str(p), e,
                                             "must be a schema or a list of strings");
        } else {
            shape(e, p, fe);
        }
        trunc_to(p, m);
    }
}

/* kube cannot decode a CRD whose schema has a keyword of the wrong JSON
 * type (a 400); here each such keyword is one Invalid error. */
static void shape(const json_t *sch, sk_buf *p, sk_field_errors *fe)
{
    if (!json_is_object(sch)) {
        sk_field_errors_invalid_json(fe, str(p), sch, "must be a JSON schema object");
        return;
    }
    const sk_schema *props = sk_schema_named(JSP);
    SK_CHECK(props);
    size_t n = sk_schema_pb_count(props);
    for (size_t i = 0; i < n; i++) {
        const sk_schema_field *f = sk_schema_pb_at(props, i);
        const char *name = sk_schema_field_name(f);
        const json_t *v = sk_structural_kw(sch, name);
        const char *want = NULL;
        if (!v)
            continue;
        kw_kind kind = keyword_kind(props, sk_schema_field_type(f));
        size_t m = child(p, name);
        switch (kind) {
        case K_STR:
            want = json_is_string(v) ? NULL : "must be a string";
            break;
        case K_NUM:
            want = json_is_number(v) ? NULL : "must be a number";
            break;
        case K_BOOL:
            want = json_is_boolean(v) ? NULL : "must be a boolean";
            break;
        case K_INT:
            want = json_is_integer(v) ? NULL : "must be an integer";
            break;
        case K_STRS:
            want = json_is_array(v) && all_strings(v) ? NULL : "must be a list of strings";
            break;
        case K_ARRAY:
            want = json_is_array(v) ? NULL : "must be a list";
            break;
        case K_OBJ:
            want = json_is_object(v) ? NULL : "must be an object";
            break;
        case K_SCHEMA:
            shape(v, p, fe);
            break;
        case K_SCHEMAS:
            if (json_is_array(v))
                shape_list(v, p, fe);
            else
                want = "must be a list of schemas";
            break;
        case K_SCHEMA_MAP:
        case K_DEPS:
            if (json_is_object(v))
                shape_map(v, p, fe, kind == K_DEPS);
            else
                want = "must be an object of schemas";
            break;
        case K_SCHEMA_OR_BOOL:
            if (!json_is_boolean(v))
                shape(v, p, fe);
            break;
        case K_SCHEMA_OR_ARRAY:
            if (json_is_array(v))
                shape_list(v, p, fe);
            else
                shape(v, p, fe);
            break;
        case K_ANY:
            break;
        }
        if (want)
            sk_field_errors_invalid_json(fe, str(p), v, want);
        trunc_to(p, m);
    }
}

/* ---- the node tree (NewStructural) ------------------------------------- */

static node *build(const json_t *sch)
{
    node *n = calloc(1, sizeof *n);
    SK_CHECK_ALLOC(n);
    n->raw = sch;
    n->type = sk_structural_kw_str(sch, "type");
    n->nullable = kw_true(sch, "nullable");
    n->preserve = kw_true(sch, "x-kubernetes-preserve-unknown-fields");
    n->embedded = kw_true(sch, "x-kubernetes-embedded-resource");
    n->int_or_string = kw_true(sch, "x-kubernetes-int-or-string");
    n->list_type = json_string_value(sk_structural_kw(sch, "x-kubernetes-list-type"));
    n->map_keys = sk_structural_kw(sch, "x-kubernetes-list-map-keys");
    n->dflt = sk_structural_kw(sch, "default");
    const json_t *props = sk_structural_kw(sch, "properties");
    if (json_object_size(props)) {
        const char *k;
        const json_t *v;
        n->props = calloc(json_object_size(props), sizeof *n->props);
        SK_CHECK_ALLOC(n->props);
        json_object_foreach((json_t *)props, k, v)
        {
            n->props[n->nprops].name = k;
            n->props[n->nprops++].schema = build(v);
        }
    }
    const json_t *ap = sk_structural_kw(sch, "additionalProperties");
    n->has_ap = ap != NULL;
    if (json_is_object(ap))
        n->ap = build(ap);
    const json_t *items = sk_structural_kw(sch, "items");
    if (json_is_object(items))
        n->items = build(items);
    return n;
}

static void node_free(node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nprops; i++)
        node_free(n->props[i].schema);
    free(n->props);
    node_free(n->ap);
    node_free(n->items);
    free(n);
}

/* ---- patterns: RE2, as Go's regexp (cel/regex.h) ----------------------- */

/* Compiles pattern re as kube's regexp.Compile does: the compiled form in a
 * new arena (*arena, also on failure), or NULL with Go's error text
 * ("error parsing regexp: ...") in *err (in *arena). */
static sk_cel_re *compile_re(const char *re, sk_arena **arena, const char **err)
{
    size_t bytes;
    *arena = sk_arena_new();
    return sk_cel_re_compile(*arena, re, strlen(re), err, &bytes);
}

/* Whether the len bytes at v match p anywhere (Go's MatchString). Linear
 * in the pattern's program times len (a Pike VM), as Go's is; searches of
 * one pattern take turns, since the compiled form holds the working memory
 * of a search. */
static int pattern_matches(const pattern *p, const char *v, size_t len)
{
    uint64_t work = 0;
    pthread_mutex_lock(p->lock);
    int r = sk_cel_re_search(p->re, v, len, 0, NULL, NULL, &work, UINT64_MAX);
    pthread_mutex_unlock(p->lock);
    SK_CHECK(r >= 0);
    return r;
}

static int by_key_ptr(const void *a, const void *b)
{
    const pattern *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Compiles every "pattern" of the schema (properties, items,
 * additionalProperties, allOf/anyOf/oneOf/not) into s->patterns. */
static void collect_patterns(sk_structural *s, const json_t *sch)
{
    static const char *const subs[] = {"items", "additionalProperties", "not", NULL};
    static const char *const lists[] = {"allOf", "anyOf", "oneOf", NULL};
    const json_t *p = sk_structural_kw(sch, "pattern");
    if (!json_is_object(sch))
        return;
    if (json_string_length(p)) {
        const char *err;
        sk_arena *arena;
        sk_cel_re *re = compile_re(json_string_value(p), &arena, &err);
        if (re) {
            pthread_mutex_t *lock = sk_arena_alloc(arena, sizeof *lock);
            pthread_mutex_init(lock, NULL);
            s->patterns = realloc(s->patterns, (s->npatterns + 1) * sizeof *s->patterns);
            SK_CHECK_ALLOC(s->patterns);
            s->patterns[s->npatterns++] = (pattern){p, arena, re, lock};
        } else {
            sk_arena_free(arena);
        }
    }
    for (size_t i = 0; subs[i]; i++)
        collect_patterns(s, sk_structural_kw(sch, subs[i]));
    for (size_t i = 0; lists[i]; i++) {
        size_t j;
        const json_t *e;
        json_array_foreach(sk_structural_kw(sch, lists[i]), j, e) collect_patterns(s, e);
    }
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)sk_structural_kw(sch, "properties"), k, v) collect_patterns(s, v);
}

static const pattern *pattern_of(const sk_structural *s, const json_t *p)
{
    pattern want = {.key = p};
    if (!s->npatterns)
        return NULL;
    return bsearch(&want, s->patterns, s->npatterns, sizeof *s->patterns, by_key_ptr);
}

/* ---- CRD-side checks (ValidateCustomResourceDefinitionOpenAPISchema) ---- */

typedef struct {
    int allow_defaults;
    const char *no_default_reason; /* with allow_defaults 0 */
    int inside_meta;
} ssv;

static const char *const v3_types[] = {"array", "boolean", "integer", "number", "object", "string"};

static void invalid_str(sk_field_errors *fe, const sk_buf *p, const char *v, const char *detail)
{
    sk_field_errors_invalid(fe, str(p), v, detail);
}

static void crd_schema(const json_t *sch, sk_buf *p, ssv v, int is_root, sk_structural *s,
                       sk_field_errors *fe);

static void ssv_validate(const json_t *sch, sk_buf *p, ssv v, sk_field_errors *fe)
{
    const char *type = sk_structural_kw_str(sch, "type");
    size_t m;
    if (*type) {
        int known = 0;
        for (size_t i = 0; i < 6; i++)
            known |= strcmp(type, v3_types[i]) == 0;
        if (!known) {
            json_t *t = json_string(type);
            m = child(p, "type");
            sk_field_errors_not_supported(fe, str(p), t, v3_types, 6);
            trunc_to(p, m);
            json_decref(t);
        }
    }
    static const struct {
        const char *kw, *msg;
    } unsupported[] = {
        {"id", "id is not supported"},
        {"additionalItems", "additionalItems is not supported"},
        {"patternProperties", "patternProperties is not supported"},
        {"definitions", "definitions is not supported"},
        {"dependencies", "dependencies is not supported"},
        {"$ref", "$ref is not supported"},
    };
    if (sk_structural_kw(sch, "default") && !v.allow_defaults) {
        sk_buf d = SK_BUF_INIT;
        sk_buf_puts(&d, "must not be set");
        if (v.no_default_reason)
            sk_buf_printf(&d, " %s", v.no_default_reason);
        m = child(p, "default");
        sk_field_errors_forbidden(fe, str(p), d.data);
        trunc_to(p, m);
        sk_buf_free(&d);
    }
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        const json_t *x = sk_structural_kw(sch, unsupported[i].kw);
        /* kube tests an empty id, patternProperties and definitions as unset. */
        int empty = !strcmp(unsupported[i].kw, "id") ? !json_string_length(x)
                    : !strcmp(unsupported[i].kw, "patternProperties") ||
                            !strcmp(unsupported[i].kw, "definitions")
                        ? !json_object_size(x)
                        : !x;
        if (empty)
            continue;
        m = child(p, unsupported[i].kw);
        sk_field_errors_forbidden(fe, str(p), unsupported[i].msg);
        trunc_to(p, m);
    }
    if (strcmp(type, "null") == 0) {
        m = child(p, "type");
        sk_field_errors_forbidden(fe, str(p),
                                  "type cannot be set to null, use nullable as an alternative");
        trunc_to(p, m);
    }
    if (json_is_array(sk_structural_kw(sch, "items")) &&
        json_array_size(sk_structural_kw(sch, "items"))) {
        m = child(p, "items");
        sk_field_errors_forbidden(fe, str(p), "items must be a schema object and not an array");
        trunc_to(p, m);
    }
    if (v.inside_meta && kw_true(sch, "x-kubernetes-embedded-resource")) {
        m = child(p, "x-kubernetes-embedded-resource");
        sk_field_errors_forbidden(fe, str(p), "must not be used inside of resource meta");
        trunc_to(p, m);
    }
}

static void crd_sub(const json_t *sch, sk_buf *p, const char *name, ssv v, sk_structural *s,
                    sk_field_errors *fe)
{
    size_t m = child(p, name);
    crd_schema(sch, p, v, 0, s, fe);
    trunc_to(p, m);
}

static void crd_list_checks(const json_t *sch, sk_buf *p, sk_field_errors *fe)
{
    const char *type = sk_structural_kw_str(sch, "type");
    const json_t *lt = sk_structural_kw(sch, "x-kubernetes-list-type");
    const json_t *mt = sk_structural_kw(sch, "x-kubernetes-map-type");
    const json_t *keys = sk_structural_kw(sch, "x-kubernetes-list-map-keys");
    const json_t *items = sk_structural_kw(sch, "items");
    const json_t *is = json_is_object(items) ? items : NULL;
    const char *lts = json_string_value(lt);
    size_t m;
    if (mt && strcmp(type, "object") != 0) {
        m = child(p, "type");
        if (!*type)
            sk_field_errors_required(fe, str(p),
                                     "must be object if x-kubernetes-map-type is specified");
        else
            invalid_str(fe, p, type, "must be object if x-kubernetes-map-type is specified");
        trunc_to(p, m);
    }
    if (mt && strcmp(json_string_value(mt), "atomic") &&
        strcmp(json_string_value(mt), "granular")) {
        static const char *const ok[] = {"atomic", "granular"};
        m = child(p, "x-kubernetes-map-type");
        sk_field_errors_not_supported(fe, str(p), mt, ok, 2);
        trunc_to(p, m);
    }
    if (lt && strcmp(type, "array") != 0) {
        m = child(p, "type");
        if (!*type)
            sk_field_errors_required(fe, str(p),
                                     "must be array if x-kubernetes-list-type is specified");
        else
            invalid_str(fe, p, type, "must be array if x-kubernetes-list-type is specified");
        trunc_to(p, m);
    } else if (lts && strcmp(lts, "set") == 0 && is) {
        const char *it = sk_structural_kw_str(is, "type");
        const json_t *ilt = sk_structural_kw(is, "x-kubernetes-list-type");
        const json_t *imt = sk_structural_kw(is, "x-kubernetes-map-type");
        if (strcmp(it, "array") == 0 && ilt && strcmp(json_string_value(ilt), "atomic")) {
            m = child(p, "items");
            child(p, "x-kubernetes-list-type");
            sk_field_errors_invalid_json(
                fe, str(p), ilt,
                "must be atomic as item of a list with x-kubernetes-list-type=set");
            trunc_to(p, m);
        } else if (strcmp(it, "object") == 0 &&
                   (!imt || strcmp(json_string_value(imt), "atomic"))) {
            m = child(p, "items");
            child(p, "x-kubernetes-map-type");
            /* kube reports the item's list type here, which is usually unset. */
            sk_field_errors_invalid_json(
                fe, str(p), ilt,
                "must be atomic as item of a list with x-kubernetes-list-type=set");
            trunc_to(p, m);
        }
    }
    if (lts && strcmp(lts, "atomic") && strcmp(lts, "set") && strcmp(lts, "map")) {
        static const char *const ok[] = {"atomic", "set", "map"};
        m = child(p, "x-kubernetes-list-type");
        sk_field_errors_not_supported(fe, str(p), lt, ok, 3);
        trunc_to(p, m);
    }
    if (json_array_size(keys)) {
        m = child(p, "x-kubernetes-list-type");
        if (!lts)
            sk_field_errors_required(fe, str(p),
                                     "must be map if x-kubernetes-list-map-keys is non-empty");
        else if (strcmp(lts, "map"))
            invalid_str(fe, p, lts, "must be map if x-kubernetes-list-map-keys is non-empty");
        trunc_to(p, m);
    }
    if (lts && strcmp(lts, "map") == 0) {
        if (!json_array_size(keys)) {
            m = child(p, "x-kubernetes-list-map-keys");
            sk_field_errors_required(fe, str(p),
                                     "must not be empty if x-kubernetes-list-type is map");
            trunc_to(p, m);
        }
        m = child(p, "items");
        if (!items)
            sk_field_errors_required(fe, str(p),
                                     "must have a schema if x-kubernetes-list-type is map");
        else if (!is)
            sk_field_errors_invalid_json(
                fe, str(p), items,
                "must only have a single schema if x-kubernetes-list-type is map");
        else if (strcmp(sk_structural_kw_str(is, "type"), "object")) {
            child(p, "type");
            invalid_str(fe, p, sk_structural_kw_str(is, "type"),
                        "must be object if parent array's x-kubernetes-list-type is map");
        }
        trunc_to(p, m);
        if (is && strcmp(sk_structural_kw_str(is, "type"), "object") == 0) {
            size_t i, j;
            const json_t *k;
            sk_buf rendered = SK_BUF_INIT;
            sk_go_string_slice(&rendered, keys);
            json_array_foreach(keys, i, k)
            {
                const json_t *ks =
                    sk_structural_kw(sk_structural_kw(is, "properties"), json_string_value(k));
                if (ks) {
                    const char *kt = sk_structural_kw_str(ks, "type");
                    if (!strcmp(kt, "array") || !strcmp(kt, "object")) {
                        m = child(p, "items");
                        child(p, "properties");
                        key(p, json_string_value(k));
                        child(p, "type");
                        invalid_str(fe, p, "object",
                                    "must be a scalar type if parent array's "
                                    "x-kubernetes-list-type is map");
                        trunc_to(p, m);
                    }
                } else {
                    m = child(p, "x-kubernetes-list-map-keys");
                    sk_field_errors_invalid_rendered(
                        fe, str(p), rendered.data, "entries must all be names of item properties");
                    trunc_to(p, m);
                }
                for (j = 0; j < i; j++)
                    if (json_equal(json_array_get(keys, j), (json_t *)k))
                        break;
                if (j < i) {
                    m = child(p, "x-kubernetes-list-map-keys");
                    sk_field_errors_invalid_rendered(fe, str(p), rendered.data,
                                                     "must not contain duplicate entries");
                    trunc_to(p, m);
                }
            }
            sk_buf_free(&rendered);
        }
    }
    /* validateMapListKeysMapSet (required of every new CRD). */
    if (is && lts && (!strcmp(lts, "set") || !strcmp(lts, "map"))) {
        if (kw_true(is, "nullable")) {
            sk_buf d = SK_BUF_INIT;
            sk_buf_printf(&d, "cannot be nullable when x-kubernetes-list-type is %s", lts);
            m = child(p, "items");
            child(p, "nullable");
            sk_field_errors_forbidden(fe, str(p), d.data);
            trunc_to(p, m);
            sk_buf_free(&d);
        }
        if (!strcmp(lts, "map")) {
            size_t i, j;
            const json_t *k;
            json_array_foreach(keys, i, k)
            {
                const json_t *ks =
                    sk_structural_kw(sk_structural_kw(is, "properties"), json_string_value(k));
                const json_t *req = sk_structural_kw(is, "required");
                const json_t *r;
                int required = 0;
                if (!ks)
                    continue;
                json_array_foreach(req, j, r) required |= json_equal((json_t *)r, (json_t *)k);
                m = child(p, "items");
                child(p, "properties");
                key(p, json_string_value(k));
                size_t m2 = p->len;
                if (!required && !sk_structural_kw(ks, "default")) {
                    child(p, "default");
                    sk_field_errors_required(
                        fe, str(p),
                        "this property is in x-kubernetes-list-map-keys, so it "
                        "must have a default or be a required property");
                    trunc_to(p, m2);
                }
                if (kw_true(ks, "nullable")) {
                    child(p, "nullable");
                    sk_field_errors_forbidden(
                        fe, str(p),
                        "this property is in x-kubernetes-list-map-keys, so it "
                        "cannot be nullable");
                }
                trunc_to(p, m);
            }
        }
    }
}

static void crd_schema(const json_t *sch, sk_buf *p, ssv v, int is_root, sk_structural *s,
                       sk_field_errors *fe)
{
    size_t m, i;
    const char *k;
    const json_t *e;
    if (!json_is_object(sch))
        return;
    ssv_validate(sch, p, v, fe);
    if (kw_true(sch, "uniqueItems")) {
        m = child(p, "uniqueItems");
        sk_field_errors_forbidden(fe, str(p),
                                  "uniqueItems cannot be set to true since the runtime complexity "
                                  "becomes quadratic");
        trunc_to(p, m);
    }
    const json_t *ap = sk_structural_kw(sch, "additionalProperties");
    const json_t *props = sk_structural_kw(sch, "properties");
    if (ap) {
        if (json_object_size(props) && (json_is_false(ap) || json_is_object(ap))) {
            m = child(p, "additionalProperties");
            sk_field_errors_forbidden(fe, str(p),
                                      "additionalProperties and properties are mutual exclusive");
            trunc_to(p, m);
        }
        if (json_is_object(ap)) {
            ssv sub = v;
            if (v.inside_meta) {
                sub.allow_defaults = 0;
                sub.no_default_reason = "inside additionalProperties applying to object metadata";
            }
            crd_sub(ap, p, "additionalProperties", sub, s, fe);
        }
    }
    json_object_foreach((json_t *)props, k, e)
    {
        ssv sub = v;
        if ((is_root || kw_true(sch, "x-kubernetes-embedded-resource")) && is_meta_field(k)) {
            sub.inside_meta = 1;
            if (is_root) {
                sub.allow_defaults = 0;
                sub.no_default_reason = !strcmp(k, "metadata") ? "in top-level metadata"
                                        : !strcmp(k, "kind")   ? "in top-level kind"
                                                               : "in top-level apiVersion";
            }
        }
        m = child(p, "properties");
        key(p, k);
        crd_schema(e, p, sub, 0, s, fe);
        trunc_to(p, m);
    }
    if (sk_structural_kw(sch, "not"))
        crd_sub(sk_structural_kw(sch, "not"), p, "not", v, s, fe);
    static const char *const lists[] = {"allOf", "oneOf", "anyOf"};
    for (size_t l = 0; l < 3; l++) {
        json_array_foreach(sk_structural_kw(sch, lists[l]), i, e)
        {
            m = child(p, lists[l]);
            idx(p, i);
            crd_schema(e, p, v, 0, s, fe);
            trunc_to(p, m);
        }
    }
    json_object_foreach((json_t *)sk_structural_kw(sch, "definitions"), k, e)
    {
        m = child(p, "definitions");
        key(p, k);
        crd_schema(e, p, v, 0, s, fe);
        trunc_to(p, m);
    }
    const json_t *items = sk_structural_kw(sch, "items");
    if (json_is_object(items)) {
        crd_sub(items, p, "items", v, s, fe);
    } else {
        json_array_foreach(items, i, e)
        {
            m = child(p, "items");
            idx(p, i);
            crd_schema(e, p, v, 0, s, fe);
            trunc_to(p, m);
        }
    }
    json_object_foreach((json_t *)sk_structural_kw(sch, "dependencies"), k, e)
    {
        if (!json_is_object(e))
            continue;
        m = child(p, "dependencies");
        key(p, k);
        crd_schema(e, p, v, 0, s, fe);
        trunc_to(p, m);
    }
    if (json_is_false(sk_structural_kw(sch, "x-kubernetes-preserve-unknown-fields"))) {
        m = child(p, "x-kubernetes-preserve-unknown-fields");
        sk_field_errors_invalid_json(fe, str(p), json_false(), "must be true or undefined");
        trunc_to(p, m);
    }
    crd_list_checks(sch, p, fe);
}

/* ---- structural invariants (schema/validation.go, complete.go) ---------- */

typedef enum { LVL_ROOT, LVL_ITEM, LVL_FIELD } level;

static int is_type_only(const json_t *sch, const char *type)
{
    return json_is_object(sch) && json_object_size(sch) == 1 &&
           !strcmp(sk_structural_kw_str(sch, "type"), type);
}

/* anyOf: [{type: integer}, {type: string}], the int-or-string idiom. */
static int int_or_string_any_of(const json_t *sch)
{
    const json_t *a = sk_structural_kw(sch, "anyOf");
    return json_array_size(a) == 2 && is_type_only(json_array_get(a, 0), "integer") &&
           is_type_only(json_array_get(a, 1), "string");
}

static void value_validation(const json_t *sch, int skip_any_of, int skip_first_all_of_any_of,
                             sk_buf *p, sk_field_errors *fe);

/* A schema under allOf/anyOf/oneOf/not: value validations only. */
static void nested_value_validation(const json_t *sch, int skip_any_of, sk_buf *p,
                                    sk_field_errors *fe)
{
    size_t m;
    const char *k;
    const json_t *e;
    static const struct {
        const char *kw, *msg;
        int kind; /* 0 any value, 1 true only, 2 non-empty */
    } forbidden[] = {
        {"type", "must be empty to be structural", 2},
        {"additionalProperties", "must be undefined to be structural", 0},
        {"default", "must be undefined to be structural", 0},
        {"title", "must be empty to be structural", 2},
        {"description", "must be empty to be structural", 2},
        {"nullable", "must be false to be structural", 1},
        {"x-kubernetes-preserve-unknown-fields", "must be false to be structural", 1},
        {"x-kubernetes-embedded-resource", "must be false to be structural", 1},
        {"x-kubernetes-int-or-string", "must be false to be structural", 1},
        {"x-kubernetes-list-map-keys", "must be empty to be structural", 2},
        {"x-kubernetes-list-type", "must be undefined to be structural", 0},
        {"x-kubernetes-map-type", "must be undefined to be structural", 0},
        {"x-kubernetes-validations", "must be empty to be structural", 2},
    };
    if (!json_is_object(sch))
        return;
    value_validation(sch, skip_any_of, 0, p, fe);
    if (sk_structural_kw(sch, "items")) {
        m = child(p, "items");
        nested_value_validation(sk_structural_kw(sch, "items"), 0, p, fe);
        trunc_to(p, m);
    }
    json_object_foreach((json_t *)sk_structural_kw(sch, "properties"), k, e)
    {
        m = child(p, "properties");
        key(p, k);
        nested_value_validation(e, 0, p, fe);
        trunc_to(p, m);
    }
    for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++) {
        const json_t *v = sk_structural_kw(sch, forbidden[i].kw);
        int hit = forbidden[i].kind == 0   ? v != NULL
                  : forbidden[i].kind == 1 ? json_is_true(v)
                                           : (json_string_length(v) || json_array_size(v));
        if (!hit)
            continue;
        m = child(p, forbidden[i].kw);
        sk_field_errors_forbidden(fe, str(p), forbidden[i].msg);
        trunc_to(p, m);
    }
    if (sk_structural_kw(sk_structural_kw(sch, "properties"), "metadata")) {
        m = child(p, "properties");
        key(p, "metadata");
        sk_field_errors_forbidden(fe, str(p), "must not be specified in a nested context");
        trunc_to(p, m);
    }
}

static void value_validation(const json_t *sch, int skip_any_of, int skip_first_all_of_any_of,
                             sk_buf *p, sk_field_errors *fe)
{
    size_t i, m;
    const json_t *e;
    if (!skip_any_of) {
        json_array_foreach(sk_structural_kw(sch, "anyOf"), i, e)
        {
            m = child(p, "anyOf");
            idx(p, i);
            nested_value_validation(e, 0, p, fe);
            trunc_to(p, m);
        }
    }
    json_array_foreach(sk_structural_kw(sch, "allOf"), i, e)
    {
        m = child(p, "allOf");
        idx(p, i);
        nested_value_validation(e, skip_first_all_of_any_of && i == 0, p, fe);
        trunc_to(p, m);
    }
    json_array_foreach(sk_structural_kw(sch, "oneOf"), i, e)
    {
        m = child(p, "oneOf");
        idx(p, i);
        nested_value_validation(e, 0, p, fe);
        trunc_to(p, m);
    }
    if (sk_structural_kw(sch, "not")) {
        m = child(p, "not");
        nested_value_validation(sk_structural_kw(sch, "not"), 0, p, fe);
        trunc_to(p, m);
    }
    const char *pat = sk_structural_kw_str(sch, "pattern");
    if (*pat) {
        const char *err;
        sk_arena *arena;
        if (!compile_re(pat, &arena, &err)) {
            sk_buf detail = SK_BUF_INIT;
            sk_buf_printf(&detail, "must be a valid regular expression, but isn't: %s", err);
            m = child(p, "pattern");
            invalid_str(fe, p, pat, detail.data);
            trunc_to(p, m);
            sk_buf_free(&detail);
        }
        sk_arena_free(arena);
    }
}

/* Keys of Structural (and so of the metadata check at the root): anything
 * else in a schema (example, externalDocs, id...) is not part of it. */
static const char *const structural_keys[] = {"type",
                                              "description",
                                              "title",
                                              "default",
                                              "nullable",
                                              "items",
                                              "properties",
                                              "additionalProperties",
                                              "x-kubernetes-preserve-unknown-fields",
                                              "x-kubernetes-embedded-resource",
                                              "x-kubernetes-int-or-string",
                                              "x-kubernetes-list-map-keys",
                                              "x-kubernetes-list-type",
                                              "x-kubernetes-map-type",
                                              "x-kubernetes-validations",
                                              "format",
                                              "maximum",
                                              "exclusiveMaximum",
                                              "minimum",
                                              "exclusiveMinimum",
                                              "maxLength",
                                              "minLength",
                                              "pattern",
                                              "maxItems",
                                              "minItems",
                                              "uniqueItems",
                                              "multipleOf",
                                              "enum",
                                              "maxProperties",
                                              "minProperties",
                                              "required",
                                              "allOf",
                                              "oneOf",
                                              "anyOf",
                                              "not",
                                              NULL};

/* A Go zero value: absent, null, false, "", empty list or object. */
static int is_zero(const json_t *v)
{
    return !v || json_is_null(v) || json_is_false(v) ||
           (json_is_string(v) && !json_string_length(v)) ||
           (json_is_array(v) && !json_array_size(v)) || (json_is_object(v) && !json_object_size(v));
}

static void metadata_invariants(const node *md, int check, level lvl, sk_buf *p,
                                sk_field_errors *fe)
{
    size_t m;
    if (check && strcmp(md->type, "object")) {
        m = child(p, "type");
        invalid_str(fe, p, md->type, "must be object");
        trunc_to(p, m);
    }
    if (lvl != LVL_ROOT)
        return;
    /* Only name and generateName may be specified, and only themselves. */
    int ok = 1;
    for (size_t i = 0; structural_keys[i] && ok; i++) {
        const char *k = structural_keys[i];
        const json_t *v = sk_structural_kw(md->raw, k);
        if (!strcmp(k, "type") || !strcmp(k, "default") || is_zero(v))
            continue;
        if (!strcmp(k, "properties")) {
            const char *pk;
            const json_t *pv;
            json_object_foreach((json_t *)v, pk, pv) ok &=
                !strcmp(pk, "name") || !strcmp(pk, "generateName");
            continue;
        }
        ok = 0;
    }
    if (!ok)
        sk_field_errors_forbidden(fe, str(p),
                                  "must not specify anything other than name and generateName, but "
                                  "metadata is implicitly specified");
}

static void invariants(const node *n, level lvl, sk_buf *p, sk_field_errors *fe)
{
    size_t m;
    if (!strcmp(n->type, "array") && !n->items) {
        m = child(p, "items");
        sk_field_errors_required(fe, str(p), "must be specified");
        trunc_to(p, m);
    }
    if (n->items) {
        m = child(p, "items");
        invariants(n->items, LVL_ITEM, p, fe);
        trunc_to(p, m);
    }
    for (size_t i = 0; i < n->nprops; i++) {
        m = child(p, "properties");
        key(p, n->props[i].name);
        invariants(n->props[i].schema, LVL_FIELD, p, fe);
        trunc_to(p, m);
    }
    if (n->has_ap) {
        m = child(p, "additionalProperties");
        if (lvl == LVL_ROOT)
            sk_field_errors_forbidden(fe, str(p), "must not be used at the root");
        if (n->ap)
            invariants(n->ap, LVL_FIELD, p, fe);
        trunc_to(p, m);
    }
    if (n->int_or_string && n->preserve) {
        m = child(p, "x-kubernetes-preserve-unknown-fields");
        sk_field_errors_invalid_json(fe, str(p), json_true(),
                                     "must be false if x-kubernetes-int-or-string is true");
        trunc_to(p, m);
    }
    if (n->int_or_string && n->embedded) {
        m = child(p, "x-kubernetes-embedded-resource");
        sk_field_errors_invalid_json(fe, str(p), json_true(),
                                     "must be false if x-kubernetes-int-or-string is true");
        trunc_to(p, m);
    }
    const json_t *all0 = json_array_get(sk_structural_kw(n->raw, "allOf"), 0);
    value_validation(n->raw, int_or_string_any_of(n->raw), all0 && int_or_string_any_of(all0), p,
                     fe);
    int check_meta = lvl == LVL_ROOT || n->embedded;
    m = child(p, "type");
    if (n->embedded && strcmp(n->type, "object")) {
        if (!*n->type)
            sk_field_errors_required(fe, str(p),
                                     "must be object if x-kubernetes-embedded-resource is true");
        else
            invalid_str(fe, p, n->type, "must be object if x-kubernetes-embedded-resource is true");
    } else if (!*n->type && !n->int_or_string && !n->preserve) {
        sk_field_errors_required(fe, str(p),
                                 lvl == LVL_ROOT ? "must not be empty at the root"
                                 : lvl == LVL_ITEM
                                     ? "must not be empty for specified array items"
                                     : "must not be empty for specified object fields");
    }
    trunc_to(p, m);
    if (n->embedded && n->has_ap) {
        m = child(p, "additionalProperties");
        sk_field_errors_forbidden(fe, str(p),
                                  "must not be used if x-kubernetes-embedded-resource is set");
        trunc_to(p, m);
    }
    if (lvl == LVL_ROOT && *n->type && strcmp(n->type, "object")) {
        m = child(p, "type");
        invalid_str(fe, p, n->type, "must be object at the root");
        trunc_to(p, m);
    }
    static const char *const typed_meta[] = {"kind", "apiVersion"};
    for (size_t i = 0; i < 2 && check_meta; i++) {
        const node *f = prop_of(n, typed_meta[i]);
        if (f && strcmp(f->type, "string")) {
            m = child(p, "properties");
            key(p, typed_meta[i]);
            child(p, "type");
            invalid_str(fe, p, f->type, "must be string");
            trunc_to(p, m);
        }
    }
    const node *md = prop_of(n, "metadata");
    if (md) {
        m = child(p, "properties");
        key(p, "metadata");
        metadata_invariants(md, check_meta, lvl, p, fe);
        trunc_to(p, m);
    }
    if (n->embedded && !n->preserve && !n->nprops) {
        m = child(p, "properties");
        sk_field_errors_required(
            fe, str(p),
            "must not be empty if x-kubernetes-embedded-resource is true without "
            "x-kubernetes-preserve-unknown-fields");
        trunc_to(p, m);
    }
}

static void because(sk_field_errors *fe, const sk_buf *sp, const sk_buf *vp)
{
    sk_buf d = SK_BUF_INIT;
    sk_buf_printf(&d, "because it is defined in %s", str(vp));
    sk_field_errors_required(fe, str(sp), d.data);
    sk_buf_free(&d);
}

static void complete_value(const json_t *v, const node *s, sk_buf *sp, sk_buf *vp,
                           sk_field_errors *fe);

/* Every property and items a value validation names must exist in the
 * structural schema at the same place. */
static void complete_nested(const json_t *v, const node *s, sk_buf *sp, sk_buf *vp,
                            sk_field_errors *fe)
{
    const char *k;
    const json_t *e;
    if (!json_is_object(v))
        return;
    if (!s) {
        because(fe, sp, vp);
        return;
    }
    complete_value(v, s, sp, vp, fe);
    if (sk_structural_kw(v, "items")) {
        size_t ms = child(sp, "items"), mv = child(vp, "items");
        complete_nested(sk_structural_kw(v, "items"), s->items, sp, vp, fe);
        trunc_to(sp, ms);
        trunc_to(vp, mv);
    }
    json_object_foreach((json_t *)sk_structural_kw(v, "properties"), k, e)
    {
        size_t ms = child(sp, "properties"), mv = child(vp, "properties");
        key(sp, k);
        key(vp, k);
        const node *f = prop_of(s, k);
        if (!f)
            because(fe, sp, vp);
        else
            complete_nested(e, f, sp, vp, fe);
        trunc_to(sp, ms);
        trunc_to(vp, mv);
    }
}

static void complete_value(const json_t *v, const node *s, sk_buf *sp, sk_buf *vp,
                           sk_field_errors *fe)
{
    static const char *const lists[] = {"allOf", "anyOf", "oneOf"};
    size_t i, mv;
    const json_t *e;
    if (sk_structural_kw(v, "not")) {
        mv = child(vp, "not");
        complete_nested(sk_structural_kw(v, "not"), s, sp, vp, fe);
        trunc_to(vp, mv);
    }
    for (size_t l = 0; l < 3; l++) {
        json_array_foreach(sk_structural_kw(v, lists[l]), i, e)
        {
            mv = child(vp, lists[l]);
            idx(vp, i);
            complete_nested(e, s, sp, vp, fe);
            trunc_to(vp, mv);
        }
    }
}

/* ---- value validation (kube-openapi validate) -------------------------- */

typedef enum { E_REQUIRED, E_ENUM, E_TOO_LONG, E_TOO_MANY, E_TYPE, E_OTHER, E_COMPOSITE } ecode;

typedef struct {
    ecode code;
    char *name;    /* kube-openapi's path: "spec.x", ".spec" (required), "" root */
    json_t *value; /* NULL: none */
    json_t *enums; /* E_ENUM: the allowed values */
    char *msg;
    long actual, max; /* E_TOO_LONG, E_TOO_MANY */
} verr;

typedef struct {
    verr *e;
    size_t n, cap;
    size_t *slots; /* by message, open addressing: index + 1, 0 = free */
    size_t nslots; /* a power of two above twice n */
    long match;    /* kube-openapi's MatchCount: picks the closest anyOf/oneOf failure */
} vres;

static void verr_free(verr *e)
{
    free(e->name);
    free(e->msg);
    json_decref(e->value);
    json_decref(e->enums);
}

static void vres_free(vres *r)
{
    for (size_t i = 0; i < r->n; i++)
        verr_free(&r->e[i]);
    free(r->e);
    free(r->slots);
    *r = (vres){0};
}

static size_t msg_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)h;
}

/* The slot of msg: the one holding it, or the free one it would take. */
static size_t *slot_of(const vres *r, const char *msg)
{
    size_t mask = r->nslots - 1, i = msg_hash(msg) & mask;
    while (r->slots[i] && strcmp(r->e[r->slots[i] - 1].msg, msg))
        i = (i + 1) & mask;
    return &r->slots[i];
}

/* Result.AddErrors: an error whose text is already there is dropped. A
 * hash of the texts keeps that linear: a large list of bad items makes as
 * many errors. */
static void vres_push(vres *r, verr e)
{
    if (2 * (r->n + 1) > r->nslots) {
        size_t n = r->nslots ? r->nslots * 2 : 16;
        free(r->slots);
        r->slots = calloc(n, sizeof *r->slots);
        SK_CHECK_ALLOC(r->slots);
        r->nslots = n;
        for (size_t i = 0; i < r->n; i++)
            *slot_of(r, r->e[i].msg) = i + 1;
    }
    size_t *slot = slot_of(r, e.msg);
    if (*slot) {
        verr_free(&e);
        return;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4;
        r->e = realloc(r->e, r->cap * sizeof *r->e);
        SK_CHECK_ALLOC(r->e);
    }
    r->e[r->n] = e;
    *slot = ++r->n;
}

static void vres_vadd(vres *r, ecode code, const char *name, json_t *value, long actual, long max,
                      const char *fmt, va_list ap) __attribute__((format(printf, 7, 0)));

static void vres_vadd(vres *r, ecode code, const char *name, json_t *value, long actual, long max,
                      const char *fmt, va_list ap)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_vprintf(&m, fmt, ap);
    char *n = strdup(name);
    SK_CHECK_ALLOC(n);
    vres_push(r, (verr){code, n, value, NULL, sk_buf_steal(&m, NULL), actual, max});
}

/* An error at name (kube-openapi's path); value is stolen (NULL: none). */
static void vres_add(vres *r, ecode code, const char *name, json_t *value, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void vres_add(vres *r, ecode code, const char *name, json_t *value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vres_vadd(r, code, name, value, -1, -1, fmt, ap);
    va_end(ap);
}

/* E_TOO_LONG / E_TOO_MANY, which carry the counts. */
static void vres_add_count(vres *r, ecode code, const char *name, long actual, long max,
                           const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void vres_add_count(vres *r, ecode code, const char *name, long actual, long max,
                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vres_vadd(r, code, name, NULL, actual, max, fmt, ap);
    va_end(ap);
}

/* Moves src's errors into dst (src emptied). */
static void vres_merge(vres *dst, vres *src)
{
    for (size_t i = 0; i < src->n; i++)
        vres_push(dst, src->e[i]);
    dst->match += src->match;
    free(src->e);
    free(src->slots);
    *src = (vres){0};
}

static char *quoted(const char *s)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_go_quoted(&b, s);
    return sk_buf_steal(&b, NULL);
}

static char *go_float_str(double d)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_go_float(&b, d);
    return sk_buf_steal(&b, NULL);
}

static char *sub_path(const char *path, const char *k)
{
    sk_buf b = SK_BUF_INIT;
    if (*path)
        sk_buf_printf(&b, "%s.%s", path, k);
    else
        sk_buf_puts(&b, k);
    return sk_buf_steal(&b, NULL);
}

/* The JSON kind of data as kube-openapi names it. */
static const char *sch_type(const json_t *d)
{
    switch (json_typeof(d)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

typedef struct {
    const char *t[2];
    int n;
} types;

static types types_of(const json_t *sch)
{
    types t = {{NULL, NULL}, 0};
    if (kw_true(sch, "x-kubernetes-int-or-string")) {
        t.t[0] = "integer";
        t.t[1] = "string";
        t.n = 2;
    } else if (*sk_structural_kw_str(sch, "type")) {
        t.t[0] = sk_structural_kw_str(sch, "type");
        t.n = 1;
    }
    return t;
}

static int types_has(types t, const char *want)
{
    for (int i = 0; i < t.n; i++)
        if (!strcmp(t.t[i], want))
            return 1;
    return 0;
}

static void types_join(sk_buf *b, types t)
{
    for (int i = 0; i < t.n; i++)
        sk_buf_printf(b, "%s%s", i ? "," : "", t.t[i]);
}

/* The checker for the schema's format, or NULL when kube ignores it. */
static sk_strfmt_check format_of(const json_t *sch)
{
    return sk_strfmt_lookup(sk_structural_kw_str(sch, "format"));
}

/* ---- the validators, in SchemaValidator's order ------------------------ */

/* Nested anyOf/oneOf/allOf make validation exponential in the schema's
 * depth (kube's too). A CRD author could stall every request for its
 * resources, so one value check validates at most this many (schema,
 * value) pairs; past that the rest counts as valid. No real schema is near. */
#define VALIDATE_BUDGET 1000000L

typedef struct {
    const sk_structural *s;
    long budget;
} vctx;

static void schema_validate(vctx *c, const json_t *sch, const json_t *d, const char *path, vres *r);

static int enum_matches(const json_t *d, const json_t *e)
{
    /* reflect: DeepEqual after converting the value to the enum entry's
     * type when Go can (int64 <-> float64 truncating, int64 -> string as a
     * rune). */
    if (json_typeof(d) == json_typeof(e) || (json_is_boolean(d) && json_is_boolean(e)))
        return json_equal((json_t *)d, (json_t *)e);
    if (json_is_integer(d) && json_is_real(e))
        return (double)json_integer_value(d) == json_real_value(e);
    if (json_is_real(d) && json_is_integer(e)) {
        double v = json_real_value(d);
        return v > -9.2e18 && v < 9.2e18 && (json_int_t)v == json_integer_value(e);
    }
    if (json_is_integer(d) && json_is_string(e)) {
        json_int_t v = json_integer_value(d);
        char u[5] = {0};
        if (v < 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
            strcpy(u, "\xef\xbf\xbd");
        else if (v < 0x80)
            u[0] = (char)v;
        else if (v < 0x800)
            u[0] = (char)(0xC0 | (v >> 6)), u[1] = (char)(0x80 | (v & 0x3F));
        else if (v < 0x10000)
            u[0] = (char)(0xE0 | (v >> 12)), u[1] = (char)(0x80 | ((v >> 6) & 0x3F)),
            u[2] = (char)(0x80 | (v & 0x3F));
        else
            u[0] = (char)(0xF0 | (v >> 18)), u[1] = (char)(0x80 | ((v >> 12) & 0x3F)),
            u[2] = (char)(0x80 | ((v >> 6) & 0x3F)), u[3] = (char)(0x80 | (v & 0x3F));
        return json_string_length(e) == strlen(u) && !strcmp(json_string_value(e), u);
    }
    return 0;
}

static void enum_validate(const json_t *sch, const json_t *d, const char *path, vres *r)
{
    const json_t *en = sk_structural_kw(sch, "enum");
    size_t i;
    const json_t *e;
    if (!json_array_size(en))
        return;
    json_array_foreach(en, i, e) if (!json_is_null(d) && enum_matches(d, e)) return;
    char *n = strdup(path);
    SK_CHECK_ALLOC(n);
    sk_buf m = SK_BUF_INIT;
    sk_buf_printf(&m, "%s in body should be one of ", path);
    char *dump = json_dumps(en, JSON_ENCODE_ANY | JSON_COMPACT);
    sk_buf_puts(&m, dump ? dump : "[]");
    free(dump);
    vres_push(r, (verr){E_ENUM, n, d ? json_deep_copy(d) : NULL, json_deep_copy(en),
                        sk_buf_steal(&m, NULL), -1, -1});
}

/* typeValidator; returns 0 when it does not apply. */
static int type_validate(const json_t *sch, const json_t *d, const char *path, vres *r)
{
    types t = types_of(sch);
    int has_format = format_of(sch) != NULL;
    if (!t.n && !has_format)
        return 0;
    sk_buf want = SK_BUF_INIT;
    types_join(&want, t);
    if (json_is_null(d)) {
        if (t.n && !kw_true(sch, "nullable"))
            vres_add(r, E_TYPE, path, json_string("null"),
                     "%s in body must be of type %s: \"null\"", path, str(&want));
        else
            r->match++;
        sk_buf_free(&want);
        return 1;
    }
    const char *st = sch_type(d);
    int float_int = json_is_real(d) && types_has(t, "integer") &&
                    json_real_value(d) == trunc(json_real_value(d)) &&
                    fabs(json_real_value(d)) < 9007199254740992.0;
    int int_float = json_is_integer(d) && types_has(t, "number");
    int ok = types_has(t, st) || float_int || int_float;
    if (!json_is_string(d) && !json_is_array(d) && has_format && !ok) {
        /* The format of a number is "int64"/"float64"; of anything else "". */
        const char *dfmt = json_is_integer(d) ? "int64" : json_is_real(d) ? "float64" : "";
        char *q = quoted(dfmt);
        vres_add(r, E_TYPE, path, json_string(dfmt), "%s in body must be of type %s: %s", path,
                 sk_structural_kw_str(sch, "format"), q);
        free(q);
    } else if (!types_has(t, "number") && !types_has(t, "integer") && has_format &&
               (json_is_string(d) || json_is_array(d))) {
        r->match++;
    } else if (!ok) {
        char *q = quoted(st);
        vres_add(r, E_TYPE, path, json_string(st), "%s in body must be of type %s: %s", path,
                 str(&want), q);
        free(q);
    } else {
        r->match++;
    }
    sk_buf_free(&want);
    return 1;
}

static void props_validate(vctx *c, const json_t *sch, const json_t *d, const char *path, vres *r)
{
    size_t i;
    const json_t *e;
    char *q = quoted(path);
    const json_t *any = sk_structural_kw(sch, "anyOf"), *one = sk_structural_kw(sch, "oneOf"),
                 *all = sk_structural_kw(sch, "allOf");
    if (json_array_size(any)) {
        vres best = {0}, first = {0};
        int have_best = 0, succeeded = 0;
        json_array_foreach(any, i, e)
        {
            vres res = {0};
            schema_validate(c, e, d, path, &res);
            if (res.n == 0) {
                succeeded = 1;
                vres_free(&best);
                have_best = 0;
                first = res;
                break;
            }
            if (!have_best || res.match > best.match) {
                vres_free(&best);
                best = res;
                have_best = 1;
            } else {
                vres_free(&res);
            }
        }
        if (!succeeded)
            vres_add(r, E_COMPOSITE, path, NULL, "%s must validate at least one schema (anyOf)", q);
        vres_merge(r, have_best ? &best : &first);
    }
    if (json_array_size(one)) {
        vres best = {0}, first = {0};
        int have_best = 0, have_first = 0;
        size_t valid = 0;
        json_array_foreach(one, i, e)
        {
            vres res = {0};
            schema_validate(c, e, d, path, &res);
            if (res.n == 0) {
                valid++;
                vres_free(&best);
                have_best = 0;
                if (!have_first) {
                    first = res;
                    have_first = 1;
                } else {
                    vres_free(&res);
                }
                continue;
            }
            if (valid == 0 && (!have_best || res.match > best.match)) {
                vres_free(&best);
                best = res;
                have_best = 1;
            } else {
                vres_free(&res);
            }
        }
        if (valid != 1) {
            if (valid == 0)
                vres_add(r, E_COMPOSITE, path, NULL,
                         "%s must validate one and only one schema (oneOf). Found none valid", q);
            else
                vres_add(r, E_COMPOSITE, path, NULL,
                         "%s must validate one and only one schema (oneOf). Found %zu valid "
                         "alternatives",
                         q, valid);
            vres_merge(r, &best);
            vres_free(&first);
        } else {
            vres_merge(r, &first);
            vres_free(&best);
        }
    }
    if (json_array_size(all)) {
        size_t valid = 0;
        json_array_foreach(all, i, e)
        {
            vres res = {0};
            schema_validate(c, e, d, path, &res);
            valid += res.n == 0;
            vres_merge(r, &res);
        }
        if (valid != json_array_size(all))
            vres_add(r, E_COMPOSITE, path, NULL, "%s must validate all the schemas (allOf)%s", q,
                     valid == 0 ? ". None validated" : "");
    }
    if (sk_structural_kw(sch, "not")) {
        vres res = {0};
        schema_validate(c, sk_structural_kw(sch, "not"), d, path, &res);
        if (res.n == 0)
            vres_add(r, E_COMPOSITE, path, NULL, "%s must not validate the schema (not)", q);
        vres_free(&res);
    }
    r->match++;
    free(q);
}

/* utf8.RuneCount of valid UTF-8 (jansson strings are): the lead bytes. */
static size_t rune_count(const char *s, size_t n)
{
    size_t runes = 0;
    for (size_t i = 0; i < n; i++)
        runes += ((unsigned char)s[i] & 0xC0) != 0x80;
    return runes;
}

static void string_validate(vctx *c, const json_t *sch, const json_t *d, const char *path, vres *r)
{
    const char *v = json_string_value(d);
    size_t runes = rune_count(v, json_string_length(d));
    const json_t *maxl = sk_structural_kw(sch, "maxLength"),
                 *minl = sk_structural_kw(sch, "minLength"), *p = sk_structural_kw(sch, "pattern");
    if (maxl && (json_int_t)runes > json_integer_value(maxl)) {
        vres_add_count(r, E_TOO_LONG, path, (long)runes, (long)json_integer_value(maxl),
                       "%s in body should be at most %" JSON_INTEGER_FORMAT " chars long", path,
                       json_integer_value(maxl));
        return;
    }
    if (minl && (json_int_t)runes < json_integer_value(minl)) {
        vres_add(r, E_OTHER, path, json_deep_copy(d),
                 "%s in body should be at least %" JSON_INTEGER_FORMAT " chars long", path,
                 json_integer_value(minl));
        return;
    }
    if (json_string_length(p)) {
        const pattern *re = pattern_of(c->s, p);
        if (re && !pattern_matches(re, v, json_string_length(d)))
            vres_add(r, E_OTHER, path, json_deep_copy(d), "%s in body should match '%s'", path,
                     json_string_value(p));
    }
}

static int is_json_integer(double f)
{
    if (isnan(f) || isinf(f) || fabs(f) > 9007199254740991.0)
        return 0;
    double g = trunc(f);
    if (f == g)
        return 1;
    double diff = fabs(f - g);
    return diff / (fabs(f) + fabs(g)) < 1e-9;
}

/* Go's int64(f) for the bounds kube-openapi truncates to integers. */
static json_int_t to_int64(double f)
{
    if (isnan(f))
        return INT64_MIN;
    if (f >= 9.2233720368547758e18)
        return INT64_MIN; /* amd64 yields the "integer indefinite" value */
    if (f < -9.2233720368547758e18)
        return INT64_MIN;
    return (json_int_t)f;
}

static void number_validate(const json_t *sch, const json_t *d, const char *path, vres *r)
{
    vres mult = {0}, min = {0}, max = {0};
    const json_t *mo = sk_structural_kw(sch, "multipleOf"), *mx = sk_structural_kw(sch, "maximum"),
                 *mn = sk_structural_kw(sch, "minimum");
    int is_int = json_is_integer(d);
    json_int_t iv = json_integer_value(d);
    double fv = json_number_value(d);
    if (mo) {
        double f = json_number_value(mo);
        if (is_int) {
            json_int_t fi = to_int64(f);
            if (fi <= 0)
                vres_add(
                    &mult, E_OTHER, path, json_integer(fi),
                    "factor MultipleOf declared for %s must be positive: %" JSON_INTEGER_FORMAT,
                    path, fi);
            else if (iv % fi != 0)
                vres_add(&mult, E_OTHER, path, json_integer(iv),
                         "%s in body should be a multiple of %" JSON_INTEGER_FORMAT, path, fi);
        } else if (f <= 0) {
            char *fs = go_float_str(f);
            vres_add(&mult, E_OTHER, path, json_real(f),
                     "factor MultipleOf declared for %s must be positive: %s", path, fs);
            free(fs);
        } else if (!is_json_integer(f < 1 ? 1 / f * fv : fv / f)) {
            char *fs = go_float_str(f);
            vres_add(&mult, E_OTHER, path, json_real(fv), "%s in body should be a multiple of %s",
                     path, fs);
            free(fs);
        }
    }
    static const char *const words[2][2] = {{"greater than or equal to", "greater than"},
                                            {"less than or equal to", "less than"}};
    for (int upper = 0; upper < 2; upper++) {
        const json_t *b = upper ? mx : mn;
        int excl = kw_true(sch, upper ? "exclusiveMaximum" : "exclusiveMinimum");
        vres *out = upper ? &max : &min;
        if (!b)
            continue;
        const char *w = words[upper][excl];
        if (is_int) {
            json_int_t bi = to_int64(json_number_value(b));
            int bad = upper ? (excl ? iv >= bi : iv > bi) : (excl ? iv <= bi : iv < bi);
            if (bad)
                vres_add(out, E_OTHER, path, json_integer(iv),
                         "%s in body should be %s %" JSON_INTEGER_FORMAT, path, w, bi);
        } else {
            double bf = json_number_value(b);
            int bad = upper ? (excl ? fv >= bf : fv > bf) : (excl ? fv <= bf : fv < bf);
            if (bad) {
                char *bs = go_float_str(bf);
                vres_add(out, E_OTHER, path, json_real(fv), "%s in body should be %s %s", path, w,
                         bs);
                free(bs);
            }
        }
    }
    vres_merge(r, &mult);
    vres_merge(r, &min);
    vres_merge(r, &max);
    r->match++;
}

static void slice_validate(vctx *c, const json_t *sch, const json_t *d, const char *path, vres *r)
{
    size_t i, n = json_array_size(d);
    const json_t *e;
    const json_t *items = sk_structural_kw(sch, "items");
    if (json_is_object(items)) {
        json_array_foreach(d, i, e)
        {
            sk_buf p = SK_BUF_INIT;
            sk_buf_printf(&p, "%s[%zu]", path, i);
            vres res = {0};
            schema_validate(c, items, e, p.data, &res);
            vres_merge(r, &res);
            sk_buf_free(&p);
        }
    }
    const json_t *mn = sk_structural_kw(sch, "minItems"), *mx = sk_structural_kw(sch, "maxItems");
    if (mn && (json_int_t)n < json_integer_value(mn))
        vres_add(r, E_OTHER, path, json_integer((json_int_t)n),
                 "%s in body should have at least %" JSON_INTEGER_FORMAT " items", path,
                 json_integer_value(mn));
    if (mx && (json_int_t)n > json_integer_value(mx)) {
        vres_add_count(r, E_TOO_MANY, path, (long)n, (long)json_integer_value(mx),
                       "%s in body should have at most %" JSON_INTEGER_FORMAT " items", path,
                       json_integer_value(mx));
    }
    if (kw_true(sch, "uniqueItems")) {
        for (i = 1; i < n; i++) {
            size_t j;
            for (j = 0; j < i; j++)
                if (json_equal(json_array_get(d, i), json_array_get(d, j)))
                    break;
            if (j < i) {
                vres_add(r, E_OTHER, path, NULL, "%s in body shouldn't contain duplicates", path);
                break;
            }
        }
    }
    r->match++;
}

static void object_validate(vctx *c, const json_t *sch, const json_t *d, const char *path, vres *r)
{
    const char *k;
    const json_t *v;
    size_t i, n = json_object_size(d);
    const json_t *props = sk_structural_kw(sch, "properties"),
                 *ap = sk_structural_kw(sch, "additionalProperties");
    const json_t *mn = sk_structural_kw(sch, "minProperties"),
                 *mx = sk_structural_kw(sch, "maxProperties");
    if (mn && (json_int_t)n < json_integer_value(mn))
        vres_add(r, E_OTHER, path, json_integer((json_int_t)n),
                 "%s in body should have at least %" JSON_INTEGER_FORMAT " properties", path,
                 json_integer_value(mn));
    if (mx && (json_int_t)n > json_integer_value(mx)) {
        vres_add_count(r, E_TOO_MANY, path, (long)n, (long)json_integer_value(mx),
                       "%s in body should have at most %" JSON_INTEGER_FORMAT " properties", path,
                       json_integer_value(mx));
    }
    json_object_foreach((json_t *)d, k, v)
    {
        if (json_object_get(props, k))
            continue;
        if (json_is_false(ap)) {
            vres_add(r, E_OTHER, path, json_string(k), "%s.%s in body is a forbidden property",
                     path, k);
        } else if (json_is_object(ap)) {
            sk_buf p = SK_BUF_INIT;
            sk_buf_printf(&p, "%s.%s", path, k);
            vres res = {0};
            schema_validate(c, ap, v, p.data, &res);
            vres_merge(r, &res);
            sk_buf_free(&p);
        }
    }
    json_object_foreach((json_t *)props, k, v)
    {
        const json_t *dv = json_object_get(d, k);
        if (!dv)
            continue;
        char *p = sub_path(path, k);
        vres res = {0};
        schema_validate(c, v, dv, p, &res);
        vres_merge(r, &res);
        free(p);
    }
    json_array_foreach(sk_structural_kw(sch, "required"), i, v)
    {
        const char *rk = json_string_value(v);
        if (!rk || json_object_get(d, rk))
            continue;
        sk_buf nm = SK_BUF_INIT;
        sk_buf_printf(&nm, "%s.%s", path, rk);
        vres_add(r, E_REQUIRED, nm.data, NULL, "%s in body is required", nm.data);
        sk_buf_free(&nm);
    }
}

static void schema_validate(vctx *c, const json_t *sch, const json_t *d, const char *path, vres *r)
{
    if (!json_is_object(sch) || c->budget-- <= 0)
        return;
    if (json_is_null(d)) {
        type_validate(sch, d, path, r);
        enum_validate(sch, d, path, r);
        return;
    }
    if (type_validate(sch, d, path, r))
        r->match++;
    props_validate(c, sch, d, path, r);
    r->match++;
    if (json_is_string(d)) {
        sk_strfmt_check f = format_of(sch);
        string_validate(c, sch, d, path, r);
        r->match++;
        if (f) {
            if (!f(json_string_value(d))) {
                char *q = quoted(json_string_value(d));
                vres_add(r, E_TYPE, path, json_deep_copy(d), "%s in body must be of type %s: %s",
                         path, sk_structural_kw_str(sch, "format"), q);
                free(q);
            }
            r->match++;
        }
    }
    if (json_is_number(d)) {
        number_validate(sch, d, path, r);
        r->match++;
    }
    if (json_is_array(d)) {
        slice_validate(c, sch, d, path, r);
        r->match++;
    }
    enum_validate(sch, d, path, r);
    r->match++;
    if (json_is_object(d)) {
        object_validate(c, sch, d, path, r);
        r->match++;
    }
    r->match++;
}

/* Go's json.Marshal of an enum value, for "supported values". */
static void go_json(sk_buf *b, const json_t *v)
{
    if (json_is_real(v)) {
        double f = json_real_value(v), a = fabs(f);
        char tmp[40];
        if (a != 0 && (a < 1e-6 || a >= 1e21)) {
            sk_buf e = SK_BUF_INIT;
            sk_buf_go_float(&e, f);
            /* encoding/json writes e-07 as e-7. */
            char *x = strstr(e.data, "e-0");
            if (x)
                memmove(x + 2, x + 3, strlen(x + 3) + 1);
            sk_buf_puts(b, e.data);
            sk_buf_free(&e);
        } else {
            int prec = 1;
            for (; prec < 17; prec++) {
                snprintf(tmp, sizeof tmp, "%.*g", prec, f);
                if (strtod(tmp, NULL) == f)
                    break;
            }
            snprintf(tmp, sizeof tmp, "%.*g", prec, f);
            if (strchr(tmp, 'e'))
                snprintf(tmp, sizeof tmp, "%.0f", f);
            sk_buf_puts(b, tmp);
        }
        return;
    }
    char *dump = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
    sk_buf_puts(b, dump ? dump : "null");
    free(dump);
}

/* kubeOpenAPIResultToFieldErrors: base is the field path of the validated
 * value (NULL for the object itself, kube's nil path). */
static void vres_to_fe(const vres *r, const char *base, sk_field_errors *fe)
{
    for (size_t i = 0; i < r->n; i++) {
        const verr *e = &r->e[i];
        const char *name = e->name[0] == '.' ? e->name + 1 : e->name;
        sk_buf f = SK_BUF_INIT;
        int at_base = !*e->name || !strcmp(e->name, ".");
        if (e->code == E_COMPOSITE || at_base)
            sk_buf_puts(&f, base ? base : "<nil>");
        else if (base)
            sk_buf_printf(&f, "%s.%s", base, name);
        else
            sk_buf_puts(&f, name);
        json_t *empty = json_string("");
        const json_t *value = e->value ? e->value : empty;
        switch (e->code) {
        case E_REQUIRED:
            sk_field_errors_required(fe, f.data, "");
            break;
        case E_ENUM: {
            size_t n = json_array_size(e->enums), j;
            const json_t *x;
            char **vals = calloc(n ? n : 1, sizeof *vals);
            SK_CHECK_ALLOC(vals);
            json_array_foreach(e->enums, j, x)
            {
                sk_buf b = SK_BUF_INIT;
                if (json_is_string(x))
                    sk_buf_puts(&b, json_string_value(x));
                else
                    go_json(&b, x);
                vals[j] = sk_buf_steal(&b, NULL);
            }
            sk_field_errors_not_supported(fe, f.data, e->value, (const char *const *)vals, n);
            for (j = 0; j < n; j++)
                free(vals[j]);
            free(vals);
            break;
        }
        case E_TOO_LONG:
            sk_field_errors_too_long(fe, f.data, e->max);
            break;
        case E_TOO_MANY:
            sk_field_errors_too_many(fe, f.data, e->actual, e->max);
            break;
        case E_TYPE:
            sk_field_errors_type_invalid(fe, f.data, value, e->msg);
            break;
        case E_OTHER:
            sk_field_errors_invalid_json(fe, f.data, value, e->msg);
            break;
        case E_COMPOSITE:
            sk_field_errors_invalid_json(fe, f.data, empty, e->msg);
            break;
        }
        json_decref(empty);
        sk_buf_free(&f);
    }
}

static void value_check(const sk_structural *s, const json_t *sch, const json_t *d,
                        const char *base, sk_field_errors *fe)
{
    vres r = {0};
    vctx c = {s, VALIDATE_BUDGET};
    schema_validate(&c, sch, d, "", &r);
    vres_to_fe(&r, base, fe);
    vres_free(&r);
}

/* ---- ObjectMeta of embedded resources (schema/objectmeta) --------------- */

static const sk_schema *object_meta(void)
{
    return sk_schema_named("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
}

/* GetObjectMeta: md as ObjectMeta decodes and re-encodes it (*out new), or
 * the decode error (*err new). */
static int meta_round_trip(const json_t *md, json_t **out, char **err)
{
    const sk_schema *om = object_meta();
    SK_CHECK(om != NULL);
    return sk_typed_normalize_value(om, md, out, err) == SK_OK;
}

/* objectmeta.Coerce with DropInvalidFields on an embedded resource at p:
 * an apiVersion or kind that is not a string goes; the metadata becomes its ObjectMeta round trip,
 * field by field when the whole does not decode (the fields that do not are dropped); unknown
 * fields are recorded at "<p>.metadata.<field>"; a zero creationTimestamp goes. Metadata that is
 * not an object stays as it is. */
static void coerce_embedded(json_t *obj, sk_buf *p, json_t *found)
{
    json_t *md = json_object_get(obj, "metadata"), *out = NULL, *v;
    const sk_schema *om = object_meta();
    const char *k;
    char *err = NULL;
    static const char *const type_meta[] = {"apiVersion", "kind"};
    for (size_t i = 0; i < 2; i++) {
        v = json_object_get(obj, type_meta[i]);
        if (v && !json_is_string(v))
            json_object_del(obj, type_meta[i]);
    }
    if (!json_is_object(md))
        return;
    json_object_foreach(md, k, v)
    {
        if (found && !sk_schema_field_find(om, k, strlen(k))) {
            size_t m = child(p, "metadata");
            child(p, k);
            json_array_append_new(found, json_string(str(p)));
            trunc_to(p, m);
        }
    }
    if (!meta_round_trip(md, &out, &err)) {
        free(err);
        err = NULL;
        out = json_object();
        json_object_foreach(md, k, v)
        {
            json_t *one = json_object(), *dec = NULL;
            json_object_set(one, k, v);
            if (meta_round_trip(one, &dec, &err))
                json_object_update(out, dec);
            free(err);
            err = NULL;
            json_decref(dec);
            json_decref(one);
        }
        /* The field-by-field decodes each wrote every field's zero value. */
        json_t *whole = NULL;
        if (meta_round_trip(out, &whole, &err)) {
            json_decref(out);
            out = whole;
        }
        free(err);
    }
    if (json_is_null(json_object_get(out, "creationTimestamp")))
        json_object_del(out, "creationTimestamp");
    json_object_set_new(obj, "metadata", out);
}

static void embedded_resource(const json_t *x, sk_buf *p, sk_field_errors *fe)
{
    const json_t *api = json_object_get(x, "apiVersion"), *kind = json_object_get(x, "kind");
    const json_t *md = json_object_get(x, "metadata");
    size_t m;
    if (!api) {
        m = child(p, "apiVersion");
        sk_field_errors_required(fe, str(p), "must not be empty");
        trunc_to(p, m);
    }
    if (!kind) {
        m = child(p, "kind");
        sk_field_errors_required(fe, str(p), "must not be empty");
        trunc_to(p, m);
    }
    if (api) {
        const char *a = json_string_value(api);
        const char *slash = a ? strchr(a, '/') : NULL;
        m = child(p, "apiVersion");
        if (!a) {
            sk_field_errors_invalid_json(fe, str(p), api, "must be a string");
        } else if (!*a) {
            sk_field_errors_invalid(fe, str(p), a, "must not be empty");
        } else if (slash && strchr(slash + 1, '/')) {
            sk_buf d = SK_BUF_INIT;
            sk_buf_printf(&d, "unexpected GroupVersion string: %s", a);
            sk_field_errors_invalid(fe, str(p), a, d.data);
            sk_buf_free(&d);
        }
        trunc_to(p, m);
    }
    if (kind) {
        const char *k = json_string_value(kind);
        m = child(p, "kind");
        if (!k) {
            sk_field_errors_invalid_json(fe, str(p), kind, "must be a string");
        } else if (!*k) {
            sk_field_errors_invalid(fe, str(p), k, "must not be empty");
        } else {
            char *lower = strdup(k);
            const char *msgs[SK_VALIDATE_MAX_MSGS];
            SK_CHECK_ALLOC(lower);
            for (char *c = lower; *c; c++)
                *c = (char)tolower((unsigned char)*c);
            size_t n = sk_validate_dns1035_label(lower, msgs);
            if (n) {
                sk_buf d = SK_BUF_INIT;
                sk_buf_puts(&d, "may have mixed case, but should otherwise match: ");
                for (size_t i = 0; i < n; i++)
                    sk_buf_printf(&d, "%s%s", i ? "," : "", msgs[i]);
                sk_field_errors_invalid(fe, str(p), k, d.data);
                sk_buf_free(&d);
            }
            free(lower);
        }
        trunc_to(p, m);
    }
    if (md) {
        json_t *meta = NULL;
        char *err = NULL;
        m = child(p, "metadata");
        if (!meta_round_trip(md, &meta, &err))
            sk_field_errors_invalid_json(fe, str(p), md, err);
        else
            sk_validate_embedded_meta(fe, json_is_object(meta) ? meta : NULL, str(p));
        free(err);
        json_decref(meta);
        trunc_to(p, m);
    }
}

/* objectmeta.Validate: every x-kubernetes-embedded-resource object in x
 * (the root too when root is set). */
static void embedded_walk(const node *n, const json_t *x, sk_buf *p, int root, sk_field_errors *fe)
{
    size_t i, m;
    const char *k;
    const json_t *v;
    if (!n)
        return;
    if (json_is_object(x)) {
        if (n->embedded || root)
            embedded_resource(x, p, fe);
        json_object_foreach((json_t *)x, k, v)
        {
            const node *f = prop_of(n, k);
            if (f) {
                m = child(p, k);
                embedded_walk(f, v, p, 0, fe);
                trunc_to(p, m);
            } else if (n->has_ap) {
                m = key(p, k);
                embedded_walk(n->ap, v, p, 0, fe);
                trunc_to(p, m);
            }
        }
    } else if (json_is_array(x)) {
        json_array_foreach(x, i, v)
        {
            m = idx(p, i);
            embedded_walk(n->items, v, p, 0, fe);
            trunc_to(p, m);
        }
    }
}

/* ---- pruning (schema/pruning, defaulting/prunenulls) -------------------- */

typedef struct {
    json_t *found; /* unknown field paths, or NULL */
    int coerce;    /* objectmeta.Coerce of embedded metadata too */
} prune_opts;

static void record(const prune_opts *o, sk_buf *p, const char *k)
{
    if (!o->found)
        return;
    size_t m = child(p, k);
    json_array_append_new(o->found, json_string(str(p)));
    trunc_to(p, m);
}

static void prune(json_t *x, const node *n, int embedded, sk_buf *p, const prune_opts *o);

static void skip_prune(json_t *x, const node *n, int embedded, sk_buf *p, const prune_opts *o)
{
    const char *k;
    json_t *v;
    size_t i, m;
    if (!n)
        return;
    if (json_is_object(x)) {
        if (embedded && o->coerce && p->len)
            coerce_embedded(x, p, o->found);
        json_object_foreach(x, k, v)
        {
            const node *f = prop_of(n, k);
            if (embedded && is_meta_field(k))
                continue;
            if (f || n->has_ap) {
                m = child(p, k);
                prune(v, f ? f : n->ap, f ? f->embedded : n->ap && n->ap->embedded, p, o);
                trunc_to(p, m);
            }
        }
    } else if (json_is_array(x)) {
        json_array_foreach(x, i, v)
        {
            m = idx(p, i);
            skip_prune(v, n->items, n->items && n->items->embedded, p, o);
            trunc_to(p, m);
        }
    }
}

static void prune(json_t *x, const node *n, int embedded, sk_buf *p, const prune_opts *o)
{
    const char *k;
    json_t *v;
    void *tmp;
    size_t i, m;
    if (n && n->preserve) {
        skip_prune(x, n, embedded, p, o);
        return;
    }
    if (json_is_object(x)) {
        if (n && embedded && o->coerce && p->len)
            coerce_embedded(x, p, o->found);
        json_object_foreach_safe(x, tmp, k, v)
        {
            const node *f = n ? prop_of(n, k) : NULL;
            if (n && embedded && is_meta_field(k))
                continue;
            if (f || (n && n->has_ap)) {
                m = child(p, k);
                prune(v, f ? f : n->ap, f ? f->embedded : n->ap && n->ap->embedded, p, o);
                trunc_to(p, m);
                continue;
            }
            if (!n || !is_meta_field(k) || p->len)
                record(o, p, k);
            json_object_del(x, k);
        }
    } else if (json_is_array(x)) {
        const node *it = n ? n->items : NULL;
        json_array_foreach(x, i, v)
        {
            m = idx(p, i);
            prune(v, it, it && it->embedded, p, o);
            trunc_to(p, m);
        }
    }
}

static const node *schema_for_field(const node *n, const char *k)
{
    const node *f = prop_of(n, k);
    return f ? f : n ? n->ap : NULL;
}

static void prune_nulls(json_t *x, const node *n)
{
    const char *k;
    json_t *v;
    void *tmp;
    size_t i;
    if (json_is_object(x)) {
        json_object_foreach_safe(x, tmp, k, v)
        {
            const node *f = schema_for_field(n, k);
            if (json_is_null(v) && f && !f->nullable && !f->dflt)
                json_object_del(x, k);
            else
                prune_nulls(v, f);
        }
    } else if (json_is_array(x)) {
        json_array_foreach(x, i, v) prune_nulls(v, n ? n->items : NULL);
    }
}

/* ---- defaulting (defaulting/algorithm.go) ------------------------------- */

static int non_nullable_null(const json_t *v, const node *n)
{
    return json_is_null(v) && n && !n->nullable;
}

static void apply_defaults(json_t *x, const node *n)
{
    const char *k;
    json_t *v;
    size_t i;
    if (!n)
        return;
    if (json_is_object(x)) {
        for (i = 0; i < n->nprops; i++) {
            const node *f = n->props[i].schema;
            json_t *cur = json_object_get(x, n->props[i].name);
            if (f->dflt && (!cur || non_nullable_null(cur, f)))
                json_object_set_new(x, n->props[i].name, json_deep_copy(f->dflt));
        }
        json_object_foreach(x, k, v)
        {
            const node *f = prop_of(n, k);
            if (f) {
                apply_defaults(v, f);
            } else if (n->has_ap) {
                if (non_nullable_null(v, n->ap) && n->ap->dflt) {
                    json_object_set_new(x, k, json_deep_copy(n->ap->dflt));
                    v = json_object_get(x, k);
                }
                apply_defaults(v, n->ap);
            }
        }
    } else if (json_is_array(x)) {
        for (i = 0; i < json_array_size(x); i++) {
            if (non_nullable_null(json_array_get(x, i), n->items) && n->items->dflt)
                json_array_set_new(x, i, json_deep_copy(n->items->dflt));
            apply_defaults(json_array_get(x, i), n->items);
        }
    }
}

/* Where a default sits below the embedded resource it belongs to: keys
 * (strings) and array items (null), outermost first. */
typedef struct {
    const node *root; /* the embedded resource's schema */
    json_t *steps;
} surround;

/* The object a default inside resource metadata ends up in (new), as
 * kube's SurroundingObjectFunc builds it; NULL if that is not an object. */
static json_t *surrounding(const surround *at, const json_t *dflt)
{
    json_t *v = json_deep_copy(dflt);
    for (size_t i = json_array_size(at->steps); i-- > 0;) {
        const json_t *step = json_array_get(at->steps, i);
        json_t *outer = json_is_string(step) ? json_object() : json_array();
        if (json_is_string(step))
            json_object_set_new(outer, json_string_value(step), v);
        else
            json_array_append_new(outer, v);
        v = outer;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        return NULL;
    }
    if (!json_object_get(v, "kind"))
        json_object_set_new(v, "kind", json_string("Validation"));
    if (!json_object_get(v, "apiVersion"))
        json_object_set_new(v, "apiVersion", json_string("validation/v1"));
    return v;
}

/* defaulting.ValidateDefaults: each default must survive pruning, leave
 * valid metadata (for defaults of embedded resources and inside their
 * metadata) and pass the schema at its place. */
static void check_defaults(const sk_structural *s, const node *n, int embedded, int inside_meta,
                           surround *at, sk_buf *p, sk_field_errors *fe)
{
    size_t m, i;
    surround here = *at;
    if (embedded) {
        inside_meta = 0;
        here.root = n;
        here.steps = json_array();
    } else {
        json_incref(here.steps);
    }
    if (n->dflt) {
        size_t before;
        m = child(p, "default");
        if (inside_meta) {
            json_t *obj = surrounding(&here, n->dflt);
            sk_field_errors *meta = sk_field_errors_new();
            sk_buf scratch = SK_BUF_INIT;
            if (obj)
                embedded_walk(here.root, obj, &scratch, 1, meta);
            if (sk_field_errors_count(meta)) {
                char *agg = sk_field_errors_message(meta);
                sk_buf d = SK_BUF_INIT;
                sk_buf_printf(&d, "must result in valid metadata: %s", agg);
                sk_field_errors_invalid_json(fe, str(p), n->dflt, d.data);
                sk_buf_free(&d);
                free(agg);
            } else {
                value_check(s, n->raw, n->dflt, str(p), fe);
            }
            sk_buf_free(&scratch);
            sk_field_errors_free(meta);
            json_decref(obj);
        } else {
            json_t *pruned = json_deep_copy(n->dflt);
            sk_buf scratch = SK_BUF_INIT;
            prune_opts o = {NULL, 0};
            prune(pruned, n, embedded, &scratch, &o);
            if (!json_equal(pruned, (json_t *)n->dflt))
                sk_field_errors_invalid_json(fe, str(p), n->dflt, "must not have unknown fields");
            json_decref(pruned);
            sk_buf_free(&scratch);
            before = sk_field_errors_count(fe);
            embedded_walk(n, n->dflt, p, embedded, fe);
            if (sk_field_errors_count(fe) == before)
                value_check(s, n->raw, n->dflt, str(p), fe);
        }
        trunc_to(p, m);
    }
    if (n->items) {
        m = child(p, "items");
        json_array_append_new(here.steps, json_null());
        check_defaults(s, n->items, n->items->embedded, inside_meta, &here, p, fe);
        json_array_remove(here.steps, json_array_size(here.steps) - 1);
        trunc_to(p, m);
    }
    for (i = 0; i < n->nprops; i++) {
        const node *f = n->props[i].schema;
        m = child(p, "properties");
        key(p, n->props[i].name);
        json_array_append_new(here.steps, json_string(n->props[i].name));
        check_defaults(s, f, f->embedded,
                       inside_meta || (embedded && is_meta_field(n->props[i].name)), &here, p, fe);
        json_array_remove(here.steps, json_array_size(here.steps) - 1);
        trunc_to(p, m);
    }
    json_decref(here.steps);
}

/* ---- list types (schema/listtype) --------------------------------------- */

static void list_walk(const node *n, const json_t *x, sk_buf *p, sk_field_errors *fe);

/* Indices of the second occurrence of each repeated value. */
static void duplicates(const json_t *vals, size_t *dup, size_t *ndup)
{
    size_t n = json_array_size(vals);
    *ndup = 0;
    for (size_t i = 0; i < n; i++) {
        size_t seen = 0;
        for (size_t j = 0; j < i; j++)
            seen += json_equal(json_array_get(vals, i), json_array_get(vals, j));
        if (seen == 1)
            dup[(*ndup)++] = i;
    }
}

static void list_map(const node *n, const json_t *x, sk_buf *p, sk_field_errors *fe)
{
    size_t i, j, m, n_items = json_array_size(x), ndup;
    const json_t *e, *k;
    json_array_foreach(x, i, e)
    {
        if (!json_is_null(e) && !json_is_object(e)) {
            m = idx(p, i);
            sk_field_errors_invalid_json(fe, str(p), e,
                                         "must be an object for an array of list-type map");
            trunc_to(p, m);
            return;
        }
    }
    if (n_items <= 1)
        return;
    /* Each item's key: the map of its key fields that are set. */
    json_t *keys = json_array();
    json_array_foreach(x, i, e)
    {
        json_t *kv = json_object();
        json_array_foreach(n->map_keys, j, k)
        {
            const json_t *v = json_object_get(e, json_string_value(k));
            if (v)
                json_object_set_new(kv, json_string_value(k), json_deep_copy(v));
        }
        json_array_append_new(keys, kv);
    }
    size_t *dup = calloc(n_items, sizeof *dup);
    SK_CHECK_ALLOC(dup);
    duplicates(keys, dup, &ndup);
    for (i = 0; i < ndup; i++) {
        m = idx(p, dup[i]);
        sk_field_errors_duplicate(fe, str(p), json_array_get(keys, dup[i]));
        trunc_to(p, m);
    }
    free(dup);
    json_decref(keys);
}

static void list_array(const node *n, const json_t *x, sk_buf *p, sk_field_errors *fe)
{
    size_t i, m, ndup;
    const json_t *e;
    if (n->list_type && !strcmp(n->list_type, "set") && json_array_size(x) > 1) {
        size_t *dup = calloc(json_array_size(x), sizeof *dup);
        SK_CHECK_ALLOC(dup);
        duplicates(x, dup, &ndup);
        for (i = 0; i < ndup; i++) {
            m = idx(p, dup[i]);
            sk_field_errors_duplicate(fe, str(p), json_array_get(x, dup[i]));
            trunc_to(p, m);
        }
        free(dup);
    } else if (n->list_type && !strcmp(n->list_type, "map")) {
        list_map(n, x, p, fe);
    }
    if (n->items) {
        json_array_foreach(x, i, e)
        {
            m = idx(p, i);
            list_walk(n->items, e, p, fe);
            trunc_to(p, m);
        }
    }
}

static void list_object(const node *n, const json_t *x, sk_buf *p, sk_field_errors *fe)
{
    const char *k;
    const json_t *v;
    size_t m;
    if (n->ap) {
        json_object_foreach((json_t *)x, k, v)
        {
            m = key(p, k);
            list_walk(n->ap, v, p, fe);
            trunc_to(p, m);
        }
    }
    json_object_foreach((json_t *)x, k, v)
    {
        const node *f = prop_of(n, k);
        if (f) {
            m = child(p, k);
            list_walk(f, v, p, fe);
            trunc_to(p, m);
        }
    }
}

static void list_walk(const node *n, const json_t *x, sk_buf *p, sk_field_errors *fe)
{
    if (json_is_array(x))
        list_array(n, x, p, fe);
    else if (json_is_object(x))
        list_object(n, x, p, fe);
}

/* ---- interface ---------------------------------------------------------- */

sk_err sk_structural_compile(const json_t *schema, const char *path, sk_field_errors *fe,
                             sk_structural **out)
{
    sk_err e = SK_OK;
    sk_buf p = SK_BUF_INIT, vp = SK_BUF_INIT;
    sk_field_errors *sorted = sk_field_errors_new();
    sk_structural *s = NULL;
    size_t before = sk_field_errors_count(fe);
    sk_buf_puts(&p, path);
    shape(schema, &p, fe);
    if (sk_field_errors_count(fe) > before) {
        e = SK_ERR_INVALID;
        goto out;
    }
    s = calloc(1, sizeof *s);
    SK_CHECK_ALLOC(s);
    s->schema = json_deep_copy(schema);
    s->root = build(s->schema);
    if (s->root->nullable) {
        size_t m = child(&p, "nullable");
        sk_field_errors_forbidden(fe, str(&p), "nullable cannot be true at the root");
        trunc_to(&p, m);
    }
    invariants(s->root, LVL_ROOT, &p, sorted);
    sk_buf_puts(&vp, path);
    complete_value(s->root->raw, s->root, &p, &vp, sorted);
    sk_field_errors_sort(sorted);
    sk_field_errors_append(fe, sorted);
    if (sk_field_errors_count(sorted) == 0) {
        collect_patterns(s, s->schema);
        if (s->npatterns)
            qsort(s->patterns, s->npatterns, sizeof *s->patterns, by_key_ptr);
        surround top = {s->root, NULL};
        check_defaults(s, s->root, 1, 0, &top, &p, fe);
    }
    crd_schema(s->schema, &p, (ssv){1, NULL, 0}, 1, s, fe);
    if (sk_field_errors_count(fe) > before) {
        e = SK_ERR_INVALID;
        goto out;
    }
    *out = s;
    s = NULL;
out:
    sk_structural_free(s);
    sk_field_errors_free(sorted);
    sk_buf_free(&p);
    sk_buf_free(&vp);
    return e;
}

void sk_structural_free(sk_structural *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->npatterns; i++) {
        pthread_mutex_destroy(s->patterns[i].lock);
        sk_arena_free(s->patterns[i].arena);
    }
    free(s->patterns);
    node_free(s->root);
    json_decref(s->schema);
    free(s);
}

void sk_structural_default(const sk_structural *s, json_t *obj)
{
    apply_defaults(obj, s->root);
}

void sk_structural_prune(const sk_structural *s, json_t *obj, json_t *unknown)
{
    sk_buf p = SK_BUF_INIT;
    json_t *found = unknown ? json_array() : NULL;
    prune_opts o = {found, 1};
    prune(obj, s->root, 1, &p, &o);
    prune_nulls(obj, s->root);
    if (found) {
        size_t n = json_array_size(found), i;
        const char **paths = calloc(n ? n : 1, sizeof *paths);
        SK_CHECK_ALLOC(paths);
        for (i = 0; i < n; i++)
            paths[i] = json_string_value(json_array_get(found, i));
        qsort(paths, n, sizeof *paths, sk_cmp_strp);
        for (i = 0; i < n; i++)
            json_array_append_new(unknown, json_string(paths[i]));
        free(paths);
        json_decref(found);
    }
    sk_buf_free(&p);
}

void sk_structural_validate(const sk_structural *s, const json_t *obj, sk_field_errors *fe)
{
    sk_buf p = SK_BUF_INIT;
    value_check(s, s->schema, obj, NULL, fe);
    embedded_walk(s->root, obj, &p, 0, fe);
    list_walk(s->root, obj, &p, fe);
    sk_buf_free(&p);
}

void sk_structural_check_status_root(const json_t *schema, const char *path, sk_field_errors *fe)
{
    /* JSONSchemaProps' fields in declaration order, with whether the root
     * may carry them when /status is served; kube reports the first
     * offender only. */
    static const struct {
        const char *key;
        int allowed;
    } fields[] = {
        {"id", 0},
        {"$schema", 0},
        {"$ref", 0},
        {"description", 1},
        {"type", 1},
        {"format", 1},
        {"title", 1},
        {"default", 0},
        {"maximum", 1},
        {"exclusiveMaximum", 1},
        {"minimum", 1},
        {"exclusiveMinimum", 1},
        {"maxLength", 1},
        {"minLength", 1},
        {"pattern", 1},
        {"maxItems", 1},
        {"minItems", 1},
        {"uniqueItems", 1},
        {"multipleOf", 1},
        {"enum", 0},
        {"maxProperties", 0},
        {"minProperties", 0},
        {"required", 1},
        {"items", 1},
        {"allOf", 0},
        {"oneOf", 0},
        {"anyOf", 0},
        {"not", 0},
        {"properties", 1},
        {"additionalProperties", 0},
        {"patternProperties", 0},
        {"dependencies", 0},
        {"additionalItems", 0},
        {"definitions", 0},
        {"externalDocs", 1},
        {"example", 1},
        {"nullable", 0},
        {"x-kubernetes-preserve-unknown-fields", 1},
        {"x-kubernetes-embedded-resource", 0},
        {"x-kubernetes-int-or-string", 0},
        {"x-kubernetes-list-map-keys", 0},
        {"x-kubernetes-list-type", 0},
        {"x-kubernetes-map-type", 0},
        {"x-kubernetes-validations", 1},
    };
    sk_buf p = SK_BUF_INIT;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const json_t *v = sk_structural_kw(schema, fields[i].key);
        if (is_zero(v) && !json_is_number(v))
            continue;
        if (!strcmp(fields[i].key, "type")) {
            if (!strcmp(json_string_value(v) ? json_string_value(v) : "", "object"))
                continue;
            sk_buf_printf(&p, "%s.type", path);
            sk_field_errors_invalid_json(
                fe, p.data, v,
                "only \"object\" is allowed as the type at the root of the "
                "schema if the status subresource is enabled");
            break;
        }
        if (!fields[i].allowed) {
            sk_buf_puts(&p, path);
            /* kube prints the Go struct here; this is the JSON it came from. */
            sk_field_errors_invalid_json(
                fe, p.data, schema,
                "only [Description Type Format Title Maximum ExclusiveMaximum Minimum "
                "ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems "
                "MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields "
                "XValidations] fields are allowed at the root of the schema if the status "
                "subresource is enabled");
            break;
        }
    }
    sk_buf_free(&p);
}
