/*
 * vaptype.c - see vaptype.h.
 *
 * The schemas are copies with their refs populated, kept (in a JSON array)
 * until the check ends: the types the checker makes point into them. The
 * object types are named "<Kind>0": kube appends the clock's nanoseconds
 * (generateUniqueTypeName), a fixed digit here so a warning that shows a
 * type's name is stable (as crdrules.c names self's type).
 */
#include "policy/vaptype.h"
#include "cel/admission.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/check.h"
#include "kube/openapi.h"
#include "kube/registry.h"
#include "policy/crdrules.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TYPES_TO_CHECK 10 /* maxTypesToCheck */
#define REF_PREFIX "#/components/schemas/"

typedef struct gvk {
    const char *group, *version, *kind;
} gvk;

/* ---- schemas (resolver.ClientDiscoveryResolver, PopulateRefs) --------------- */

/* refOf: a schema's $ref, or the first one an allOf wraps. */
static const char *ref_of(const json_t *s)
{
    const char *ref = json_string_value(json_object_get(s, "$ref"));
    const json_t *all = json_object_get(s, "allOf");
    for (size_t i = 0; !ref && i < json_array_size(all); i++)
        ref = ref_of(json_array_get(all, i));
    return ref;
}

/* populateRefs: a new schema, s with its refs replaced by the schemas they
 * name (in schemas); NULL when one names none (ErrSchemaNotFound).
 * visited: the refs being populated on the way here. The format kube's
 * built-in definitions give IntOrString is its extension to the OpenAPI
 * adaptor (isXIntOrString), written so for crdrules.h. */
static json_t *populate(const json_t *schemas, json_t *visited, const json_t *s)
{
    const char *ref = ref_of(s), *name = NULL;
    json_t *out = NULL;
    if (ref) {
        if (strncmp(ref, REF_PREFIX, strlen(REF_PREFIX)) == 0)
            name = ref + strlen(REF_PREFIX);
        if (name && json_object_get(visited, name)) {
            out = json_pack("{s:s}", "type", "object"); /* a circular ref */
            name = NULL;                                /* still being populated */
            goto out;
        }
        s = name ? json_object_get(schemas, name) : NULL;
        if (!json_is_object(s)) {
            name = NULL;
            goto out;
        }
        SK_CHECK(json_object_set_new(visited, name, json_true()) == 0);
    }
    out = json_object();
    SK_CHECK_ALLOC(out);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v)
    {
        json_t *c = NULL;
        if (strcmp(k, "properties") == 0 && json_is_object(v)) {
            c = json_object();
            SK_CHECK_ALLOC(c);
            const char *p;
            json_t *ps;
            json_object_foreach(v, p, ps)
            {
                json_t *pc = populate(schemas, visited, ps);
                if (!pc) {
                    json_decref(c);
                    goto fail;
                }
                SK_CHECK(json_object_set_new(c, p, pc) == 0);
            }
        } else if ((strcmp(k, "additionalProperties") == 0 || strcmp(k, "items") == 0) &&
                   json_is_object(v)) {
            if (!(c = populate(schemas, visited, v)))
                goto fail;
        } else {
            c = json_incref(v);
        }
        SK_CHECK(json_object_set_new(out, k, c) == 0);
    }
    const char *format = json_string_value(json_object_get(out, "format"));
    if (format && strcmp(format, "int-or-string") == 0)
        SK_CHECK(json_object_set_new(out, "x-kubernetes-int-or-string", json_true()) == 0);
    goto out;
fail:
    json_decref(out);
    out = NULL;
out:
    if (name)
        json_object_del(visited, name);
    return out;
}

static int has_gvk(const json_t *def, const gvk *g)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(def, "x-kubernetes-group-version-kind"), i, x)
    {
        const char *gr = json_string_value(json_object_get(x, "group"));
        const char *v = json_string_value(json_object_get(x, "version"));
        const char *k = json_string_value(json_object_get(x, "kind"));
        if (gr && v && k && strcmp(gr, g->group) == 0 && strcmp(v, g->version) == 0 &&
            strcmp(k, g->kind) == 0)
            return 1;
    }
    return 0;
}

/* The declared type kube gives kind g (TypeChecker.declType), or NULL when
 * its schema does not resolve. The schema is kept in keep. */
static const sk_cel_ty *decl_type(sk_arena *a, const gvk *g, json_t *keep)
{
    char path[512];
    const sk_cel_ty *t = NULL;
    json_t *doc = NULL;
    int w = *g->group ? snprintf(path, sizeof path, "apis/%s/%s", g->group, g->version)
                      : snprintf(path, sizeof path, "api/%s", g->version);
    /* gvk.Empty(): no type */
    if ((*g->group || *g->version || *g->kind) && w > 0 && (size_t)w < sizeof path)
        doc = sk_openapi_v3_doc(path);
    const json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    const char *name;
    const json_t *def;
    json_object_foreach((json_t *)schemas, name, def)
    {
        if (!has_gvk(def, g))
            continue;
        json_t *visited = json_pack("{s:b}", name, 1);
        json_t *s = populate(schemas, visited, def);
        json_decref(visited);
        if (s) {
            SK_CHECK(json_array_append_new(keep, s) == 0);
            t = sk_crdrules_kind_type(a, s, sk_arena_printf(a, "%s0", g->kind));
        }
        break;
    }
    json_decref(doc);
    return t;
}

/* ---- the kinds (typesToCheck) ------------------------------------------------- */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int cmp_gvk(const void *x, const void *y)
{
    const gvk *p = x, *q = y;
    int c = strcmp(p->group, q->group);
    if (!c)
        c = strcmp(p->version, q->version);
    return c ? c : strcmp(p->kind, q->kind);
}

/* extractGroups, extractVersions, extractResources: the strings of list,
 * sorted, in a (*n of them); none when one has a character of chars (with
 * skip: all but those). */
static const char **extract(sk_arena *a, const json_t *list, const char *chars, int skip, size_t *n)
{
    const char **out = sk_arena_alloc(a, (json_array_size(list) + 1) * sizeof *out);
    size_t i;
    const json_t *v;
    *n = 0;
    json_array_foreach(list, i, v)
    {
        const char *s = json_string_value(v);
        if (!s)
            continue;
        if (strpbrk(s, chars)) {
            if (skip)
                continue;
            *n = 0;
            return out;
        }
        out[(*n)++] = s;
    }
    qsort(out, *n, sizeof *out, cmp_str);
    return out;
}

/* The set of kinds (gvks.Insert). */
typedef struct kinds {
    gvk *k;
    size_t n, cap;
} kinds;

static void add_kind(sk_arena *a, kinds *ks, const sk_resource *r)
{
    gvk g = {r->group, r->version, r->kind};
    for (size_t i = 0; i < ks->n; i++)
        if (cmp_gvk(&ks->k[i], &g) == 0)
            return;
    ks->k = sk_arena_grow(a, ks->k, ks->n, &ks->cap, sizeof *ks->k);
    ks->k[ks->n++] = g;
}

/* The kinds to check, sorted. kube stops at the rule that gives its tenth
 * kind (repeats counted), each rule counting from none. */
static kinds types_to_check(sk_arena *a, const json_t *policy)
{
    const json_t *rules = json_object_get(
        json_object_get(json_object_get(policy, "spec"), "matchConstraints"), "resourceRules");
    kinds ks = {NULL, 0, 0};
    size_t i;
    const json_t *rule;
    json_array_foreach(rules, i, rule)
    {
        size_t ng, nv, nr, count = 0;
        const char **groups = extract(a, json_object_get(rule, "apiGroups"), "*", 0, &ng);
        const char **versions = extract(a, json_object_get(rule, "apiVersions"), "*", 0, &nv);
        const char **resources = extract(a, json_object_get(rule, "resources"), "*/", 1, &nr);
        for (size_t g = 0; g < ng; g++)
            for (size_t v = 0; v < nv; v++)
                for (size_t r = 0; r < nr; r++) {
                    const sk_resource *res = sk_registry_find(groups[g], versions[v], resources[r]);
                    if (!res)
                        continue;
                    add_kind(a, &ks, res);
                    if (++count == MAX_TYPES_TO_CHECK)
                        goto out;
                }
    }
out:
    if (ks.n)
        qsort(ks.k, ks.n, sizeof *ks.k, cmp_gvk);
    return ks;
}

/* paramsGVK: paramKind's, the empty one when unset or its apiVersion does
 * not parse (schema.ParseGroupVersion: at most one slash). */
static gvk params_gvk(sk_arena *a, const json_t *policy)
{
    const json_t *pk = json_object_get(json_object_get(policy, "spec"), "paramKind");
    gvk g = {"", "", ""};
    const char *api = json_string_value(json_object_get(pk, "apiVersion"));
    const char *kind = json_string_value(json_object_get(pk, "kind"));
    api = api ? api : "";
    const char *slash = strchr(api, '/');
    if (json_is_object(pk) && !(slash && strchr(slash + 1, '/'))) {
        g.group = slash ? sk_arena_printf(a, "%.*s", (int)(slash - api), api) : "";
        g.version = slash ? slash + 1 : api;
        g.kind = kind ? kind : "";
    }
    return g;
}

/* ---- checking (CheckExpression) ----------------------------------------------- */

typedef struct ctx {
    sk_arena *a;
    const json_t *variables;
    gvk *kinds; /* those whose schema resolved, and their types */
    const sk_cel_ty **types;
    size_t n;
    const sk_cel_ty *params;
} ctx;

/* The warning text of src (TypeCheckingResults.String), or NULL when it
 * compiles against every kind. */
static char *check_expression(const ctx *c, const char *src)
{
    sk_buf out = SK_BUF_INIT;
    const unsigned decl = SK_CEL_ADM_PARAMS | SK_CEL_ADM_AUTHORIZER | SK_CEL_ADM_VARIABLES;
    for (size_t k = 0; k < c->n; k++) {
        sk_cel_adm *adm = sk_cel_adm_new(c->a);
        sk_cel_adm_typecheck(adm, c->types[k], c->params, sk_crdrules_field, NULL);
        size_t i;
        const json_t *v;
        json_array_foreach(c->variables, i, v)
        {
            sk_buf ignored = SK_BUF_INIT;
            const char *name = json_string_value(json_object_get(v, "name"));
            const char *e = json_string_value(json_object_get(v, "expression"));
            sk_cel_adm_compile(adm, sk_arena_strdup(c->a, e ? e : ""), decl, 1, SK_CEL_ADM_ANY,
                               name ? name : "", &ignored);
            sk_buf_free(&ignored);
        }
        sk_buf issues = SK_BUF_INIT;
        if (!sk_cel_adm_compile(adm, src, decl, 1, SK_CEL_ADM_ANY, NULL, &issues)) {
            const gvk *g = &c->kinds[k];
            sk_buf_printf(&out, "%s%s/%s, Kind=%s: %s\n", out.len ? "\n" : "", g->group, g->version,
                          g->kind, issues.data ? issues.data : "");
        }
        sk_buf_free(&issues);
    }
    return out.len ? sk_buf_steal(&out, NULL) : (sk_buf_free(&out), NULL);
}

static void warn(const ctx *c, json_t *warnings, size_t i, const char *field, const char *src)
{
    char *text = check_expression(c, sk_arena_strdup(c->a, src));
    if (!text)
        return;
    json_t *w =
        json_pack("{s:s, s:s}", "fieldRef",
                  sk_arena_printf(c->a, "spec.validations[%zu].%s", i, field), "warning", text);
    SK_CHECK_ALLOC(w);
    SK_CHECK(json_array_append_new(warnings, w) == 0);
    free(text);
}

json_t *sk_vaptype_check(const json_t *policy)
{
    json_t *warnings = json_array(), *keep = json_array();
    SK_CHECK(warnings && keep);
    ctx c = {.a = sk_arena_new()};
    const json_t *spec = json_object_get(policy, "spec");
    kinds all = types_to_check(c.a, policy);
    c.kinds = sk_arena_alloc(c.a, (all.n + 1) * sizeof *c.kinds);
    c.types = sk_arena_alloc(c.a, (all.n + 1) * sizeof *c.types);
    for (size_t i = 0; i < all.n; i++) {
        const sk_cel_ty *t = decl_type(c.a, &all.k[i], keep);
        if (!t)
            continue;
        c.kinds[c.n] = all.k[i];
        c.types[c.n++] = t;
    }
    gvk pg = params_gvk(c.a, policy);
    c.params = decl_type(c.a, &pg, keep);
    c.variables = json_object_get(spec, "variables");
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(spec, "validations"), i, v)
    {
        const char *e = json_string_value(json_object_get(v, "expression"));
        const char *m = json_string_value(json_object_get(v, "messageExpression"));
        warn(&c, warnings, i, "expression", e ? e : "");
        if (m && *m)
            warn(&c, warnings, i, "messageExpression", m);
    }
    sk_arena_free(c.a);
    json_decref(keep);
    return warnings;
}
