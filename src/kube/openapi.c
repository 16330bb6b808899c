/*
 * openapi.c - the OpenAPI documents, generated from the registry and the
 * generated API description (kube/schema.h): one v3 document per served
 * group/version and the single v2 (swagger) document.
 *
 * Shape follows kube-apiserver 1.32 where a client looks:
 *  - kubectl's field-validation probe (cli-runtime query_param_verifier_v3)
 *    walks every path's PATCH operation whose x-kubernetes-group-version-kind
 *    (a single object) equals the kind and requires an INLINE query parameter
 *    named fieldValidation on that operation, so query parameters live on
 *    operations, never behind $ref, and only path/pretty live on path items.
 *  - kubectl apply (apply/patcher.go) needs the PATCH requestBody to offer
 *    application/strategic-merge-patch+json, then picks the component schema
 *    whose x-kubernetes-group-version-kind ARRAY contains the kind and walks
 *    it with strategicpatch.PatchMetaFromOpenAPIV3 (v3 "allOf" wrappers and
 *    "#/components/schemas/" refs; v2 plain refs), so definitions are the
 *    complete types: a key missing from "properties" aborts the walk.
 *  - kubectl explain prints each schema's "description". Kubernetes' own
 *    descriptions are prose we do not copy; ours state the facts the
 *    description table holds (type, required, list and patch semantics).
 *
 * Each v3 document holds only the definitions reachable from its group/
 * version's kinds (plus Status and DeleteOptions), so documents stay
 * independent; the v2 document holds those of every served kind.
 *
 * Invariants: the built-in group/versions' documents and the v2 document are
 * built once (first use, thread-safe) and never change. Custom resources'
 * group/versions and the v3 index are built per registry generation
 * (kube/registry.h) into a state published through an atomic pointer;
 * replaced states are retired, never freed (custom documents are small;
 * the bound is the registry's). So borrowed text is shared between threads
 * without locks. The v2 document describes the built-in kinds only:
 * rebuilding its megabytes per CRD change would retire as much each time,
 * and kubectl 1.32 reads v3.
 */
#include "kube/openapi.h"

#include "kube/discovery.h"
#include "kube/registry.h"
#include "kube/schema.h"
#include "core/buf.h"
#include "core/check.h"

#include <gnutls/crypto.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META "io.k8s.apimachinery.pkg.apis.meta.v1."
#define DEFS_PREFIX "#/definitions/" /* as the description and v2 spell refs */
#define V3_PREFIX "#/components/schemas/"

typedef enum { V2, V3 } dialect;

static const char *ref_prefix(dialect d)
{
    return d == V3 ? V3_PREFIX : DEFS_PREFIX;
}

/* ---- query parameters and operations ---------------------------------- */

/* Our words for each query parameter; which operation takes which, and
 * its type, are the generated description's ("queryParameters"). */
static const struct {
    const char *name;
    const char *about; /* what the server does with it */
} query_param_words[] = {
    {"allowWatchBookmarks", "Ask for BOOKMARK events on a watch."},
    {"continue", "The continue token of the previous page."},
    {"dryRun", "\"All\": validate and answer without storing."},
    {"fieldManager", "The actor making the change."},
    {"fieldSelector", "Select objects by field values."},
    {"fieldValidation", "Ignore, Warn (default) or Strict about unknown and duplicate fields."},
    {"force", "Take over conflicting fields of an apply patch."},
    {"gracePeriodSeconds", "Seconds before the object is deleted."},
    {"ignoreStoreReadErrorWithClusterBreakingPotential", "Delete objects that cannot be read."},
    {"labelSelector", "Select objects by labels."},
    {"limit", "Most items per page."},
    {"orphanDependents", "Deprecated: use propagationPolicy."},
    {"pretty", "Indent the output."},
    {"propagationPolicy", "Orphan, Background or Foreground deletion of dependents."},
    {"resourceVersion", "The resource version to read at or watch from."},
    {"resourceVersionMatch", "Exact or NotOlderThan: how resourceVersion applies."},
    {"sendInitialEvents", "Start a watch with the current objects."},
    {"timeoutSeconds", "End the list or watch after this many seconds."},
    {"watch", "Watch for changes instead of listing."},
};

/* Patch types the server accepts, as kube lists them: strategic merge,
 * what kubectl apply probes for, for built-in kinds only; a custom
 * resource's PATCH offers the others (apiextensions' OpenAPI builder), so
 * kubectl apply sends it a merge patch, which it accepts. (kube 1.32's own
 * lists add application/apply-patch+cbor, behind a feature gate that is
 * off by default; sqlkube reads no CBOR.) */
static const char *const patch_types[] = {
    "application/json-patch+json", "application/merge-patch+json",
    "application/strategic-merge-patch+json", "application/apply-patch+yaml", NULL};
static const char *const custom_patch_types[] = {"application/json-patch+json",
                                                 "application/merge-patch+json",
                                                 "application/apply-patch+yaml", NULL};
static const char *const object_types[] = {"application/json", "application/yaml",
                                           "application/vnd.kubernetes.protobuf", NULL};
static const char *const any_type[] = {"*/*", NULL};

typedef enum { BODY_NONE, BODY_OBJECT, BODY_PATCH, BODY_DELETE } body_kind;
typedef enum { RESP_OBJECT, RESP_LIST, RESP_STATUS } resp_kind;

typedef struct op_spec {
    unsigned verb; /* emitted only if the resource supports it */
    const char *method;
    const char *action;   /* x-kubernetes-action */
    const char *id_verb;  /* operationId = id_verb + GV + id_infix + scope + Kind + suffix */
    const char *id_infix; /* "Collection" for deletecollection */
    body_kind body;
    resp_kind resp;
    const char *codes[4];
} op_spec;

/* One operation per line reads as a table. */
/* clang-format off */
static const op_spec collection_ops[] = {
    {SK_VERB_LIST, "get", "list", "list", "", BODY_NONE, RESP_LIST, {"200"}},
    {SK_VERB_CREATE, "post", "post", "create", "", BODY_OBJECT, RESP_OBJECT, {"200", "201", "202"}},
    {SK_VERB_DELETECOLLECTION, "delete", "deletecollection", "delete", "Collection", BODY_DELETE, RESP_STATUS, {"200"}},
};

static const op_spec item_ops[] = {
    {SK_VERB_GET, "get", "get", "read", "", BODY_NONE, RESP_OBJECT, {"200"}},
    {SK_VERB_UPDATE, "put", "put", "replace", "", BODY_OBJECT, RESP_OBJECT, {"200", "201"}},
    {SK_VERB_PATCH, "patch", "patch", "patch", "", BODY_PATCH, RESP_OBJECT, {"200", "201"}},
    {SK_VERB_DELETE, "delete", "delete", "delete", "", BODY_DELETE, RESP_STATUS, {"200", "202"}},
};

static const op_spec all_namespaces_ops[] = {
    {SK_VERB_LIST, "get", "list", "list", "", BODY_NONE, RESP_LIST, {"200"}},
};

/* Subresources: the object ops, with "create" a POST of the subresource's kind. */
static const op_spec subresource_ops[] = {
    {SK_VERB_GET, "get", "get", "read", "", BODY_NONE, RESP_OBJECT, {"200"}},
    {SK_VERB_UPDATE, "put", "put", "replace", "", BODY_OBJECT, RESP_OBJECT, {"200", "201"}},
    {SK_VERB_PATCH, "patch", "patch", "patch", "", BODY_PATCH, RESP_OBJECT, {"200", "201"}},
    {SK_VERB_CREATE, "post", "post", "create", "", BODY_OBJECT, RESP_OBJECT, {"200", "201", "202"}},
};
/* clang-format on */

/* ---- helpers ------------------------------------------------------------ */

static void set(json_t *o, const char *key, json_t *value)
{
    SK_CHECK_ALLOC(value);
    SK_CHECK(json_object_set_new(o, key, value) == 0);
}

static void append(json_t *a, json_t *value)
{
    SK_CHECK_ALLOC(value);
    SK_CHECK(json_array_append_new(a, value) == 0);
}

static json_t *gvk_object(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "kind", kind, "version", version);
}

static const json_t *definitions(void)
{
    const json_t *defs = json_object_get(sk_schema_api(), "definitions");
    SK_CHECK(json_is_object(defs));
    return defs;
}

static json_t *ref(dialect d, const char *def)
{
    return json_pack("{s:s+}", "$ref", ref_prefix(d), def);
}

/* "io.k8s.api.core.v1.PodSpec" -> "PodSpec". */
static const char *short_name(const char *def)
{
    const char *dot = strrchr(def, '.');
    return dot ? dot + 1 : def;
}

/* ---- definitions ---------------------------------------------------------- */

/* The referenced definition's name, or NULL. */
static const char *ref_target(const json_t *schema)
{
    const char *r = json_string_value(json_object_get(schema, "$ref"));
    if (!r)
        return NULL;
    SK_CHECK(strncmp(r, DEFS_PREFIX, strlen(DEFS_PREFIX)) == 0);
    return r + strlen(DEFS_PREFIX);
}

/* How a value of schema reads in a sentence: "list of Container", "map of string to string". */
static void type_phrase(const json_t *schema, char *out, size_t cap)
{
    const char *target = ref_target(schema);
    const char *type = json_string_value(json_object_get(schema, "type"));
    const char *format = json_string_value(json_object_get(schema, "format"));
    char inner[256];
    if (target) {
        snprintf(out, cap, "%s", short_name(target));
    } else if (type && strcmp(type, "array") == 0) {
        type_phrase(json_object_get(schema, "items"), inner, sizeof inner);
        snprintf(out, cap, "list of %s", inner);
    } else if (type && strcmp(type, "object") == 0 && json_object_get(schema, "additionalProperties")) {
        type_phrase(json_object_get(schema, "additionalProperties"), inner, sizeof inner);
        snprintf(out, cap, "map of string to %s", inner);
    } else if (type && format) {
        snprintf(out, cap, "%s (%s)", type, format);
    } else {
        snprintf(out, cap, "%s", type ? type : "any value");
    }
}

static int is_required(const json_t *def, const char *field)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(def, "required"), i, v) if (json_string_value(v) &&
                                                                   strcmp(json_string_value(v),
                                                                          field) == 0) return 1;
    return 0;
}

/* A property's description: the facts of its entry, one short sentence each. */
static json_t *field_description(const json_t *def, const char *field, const json_t *prop)
{
    char phrase[512], text[2048];
    type_phrase(prop, phrase, sizeof phrase);
    phrase[0] = (char)(phrase[0] >= 'a' && phrase[0] <= 'z' ? phrase[0] - 'a' + 'A' : phrase[0]);
    size_t n = (size_t)snprintf(text, sizeof text, "%s.", phrase);
    if (is_required(def, field))
        n += (size_t)snprintf(text + n, sizeof text - n, " Required.");
    const char *list_type = json_string_value(json_object_get(prop, "x-kubernetes-list-type"));
    const json_t *keys = json_object_get(prop, "x-kubernetes-list-map-keys");
    if (list_type && strcmp(list_type, "map") == 0 && json_array_size(keys)) {
        n += (size_t)snprintf(text + n, sizeof text - n, " Items are unique by");
        for (size_t i = 0; i < json_array_size(keys) && n < sizeof text; i++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s %s", i ? "," : "",
                                  json_string_value(json_array_get(keys, i)));
        n += (size_t)snprintf(text + n, sizeof text - n, ".");
    } else if (list_type && strcmp(list_type, "set") == 0) {
        n += (size_t)snprintf(text + n, sizeof text - n, " Items are unique.");
    } else if (list_type && strcmp(list_type, "atomic") == 0) {
        n += (size_t)snprintf(text + n, sizeof text - n, " Replaced as a whole.");
    }
    const char *strategy = json_string_value(json_object_get(prop, "x-kubernetes-patch-strategy"));
    const char *key = json_string_value(json_object_get(prop, "x-kubernetes-patch-merge-key"));
    if (strategy && key && n < sizeof text)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              " A strategic merge patch merges items by %s.", key);
    const json_t *values = json_object_get(prop, "enum");
    if (json_array_size(values) && n < sizeof text) {
        n += (size_t)snprintf(text + n, sizeof text - n, " One of:");
        for (size_t i = 0; i < json_array_size(values) && n < sizeof text; i++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s \"%s\"", i ? "," : "",
                                  json_string_value(json_array_get(values, i)));
        if (n < sizeof text)
            n += (size_t)snprintf(text + n, sizeof text - n, ".");
    }
    return json_string(text);
}

static json_t *definition_description(const char *name, const json_t *def)
{
    const json_t *gvks = json_object_get(def, "x-kubernetes-group-version-kind");
    const json_t *first = json_array_get(gvks, 0);
    const char *group = json_string_value(json_object_get(first, "group"));
    if (first && json_array_size(gvks) == 1)
        return json_sprintf("%s, kind of %s%s%s.", short_name(name), group && group[0] ? group : "",
                            group && group[0] ? "/" : "",
                            json_string_value(json_object_get(first, "version")));
    return json_sprintf("%s.", short_name(name));
}

/*
 * A copy of src in dialect d: generator annotations (x-sk-*) dropped, refs
 * rewritten, each referenced definition added to pending. A v3 ref with
 * siblings becomes {"allOf": [ref], siblings...}, as kube-openapi writes it.
 */
static json_t *convert(const json_t *src, dialect d, json_t *pending)
{
    if (json_is_array(src)) {
        json_t *a = json_array();
        SK_CHECK_ALLOC(a);
        size_t i;
        json_t *v;
        json_array_foreach(src, i, v) append(a, convert(v, d, pending));
        return a;
    }
    if (!json_is_object(src))
        return json_deep_copy(src);
    json_t *o = json_object();
    SK_CHECK_ALLOC(o);
    const char *key;
    json_t *v;
    const char *target = ref_target(src);
    json_object_foreach((json_t *)src, key, v)
    {
        if (strncmp(key, "x-sk-", 5) == 0 || strcmp(key, "$ref") == 0)
            continue;
        set(o, key, convert(v, d, pending));
    }
    if (target) {
        SK_CHECK(json_object_set_new(pending, target, json_true()) == 0);
        if (d == V3 && json_object_size(o) > 0)
            set(o, "allOf", json_pack("[o]", ref(d, target)));
        else
            set(o, "$ref", json_sprintf("%s%s", ref_prefix(d), target));
    }
    return o;
}

/* Adds definition name and everything it references to schemas. */
static void add_definition(json_t *schemas, dialect d, const char *name)
{
    json_t *pending = json_object();
    SK_CHECK_ALLOC(pending);
    SK_CHECK(json_object_set_new(pending, name, json_true()) == 0);
    while (json_object_size(pending)) {
        void *it = json_object_iter(pending);
        char *next = strdup(json_object_iter_key(it));
        SK_CHECK_ALLOC(next);
        json_object_del(pending, next);
        if (!json_object_get(schemas, next)) {
            const json_t *src = json_object_get(definitions(), next);
            SK_CHECK(src != NULL); /* the generator keeps every referenced definition */
            json_t *def = convert(src, d, pending);
            set(def, "description", definition_description(next, src));
            const json_t *props = json_object_get(src, "properties");
            json_t *out_props = json_object_get(def, "properties");
            const char *field;
            json_t *prop;
            json_object_foreach(out_props, field, prop)
                set(prop, "description",
                    field_description(src, field, json_object_get(props, field)));
            set(schemas, next, def);
        }
        free(next);
    }
    json_decref(pending);
}

/* ---- paths --------------------------------------------------------------- */

static json_t *param(dialect d, const char *name, const char *in, const char *type,
                     const char *about)
{
    json_t *p = json_pack("{s:s, s:s, s:s}", "name", name, "in", in, "description", about);
    SK_CHECK_ALLOC(p);
    if (d == V3) {
        set(p, "schema", json_pack("{s:s, s:b}", "type", type, "uniqueItems", 1));
    } else {
        set(p, "type", json_string(type));
        set(p, "uniqueItems", json_true());
    }
    if (strcmp(in, "path") == 0)
        set(p, "required", json_true());
    return p;
}

/* The query parameters of operations of an action (x-kubernetes-action). */
static const json_t *action_params(const char *action)
{
    const json_t *p =
        json_object_get(json_object_get(sk_schema_api(), "queryParameters"), action);
    SK_CHECK(json_is_array(p)); /* the generator lists every action a resource has */
    return p;
}

static int has_param(const json_t *list, const char *name)
{
    size_t i;
    const json_t *p;
    json_array_foreach(list, i, p) {
        if (strcmp(json_string_value(json_object_get(p, "name")), name) == 0)
            return 1;
    }
    return 0;
}

/* Does every action take the parameter? kube hoists those onto the path
 * item (pretty); the rest stay on each operation, where kubectl's
 * field-validation probe looks for them. */
static int on_every_action(const char *name)
{
    const char *action;
    json_t *list;
    json_object_foreach(json_object_get(sk_schema_api(), "queryParameters"), action, list) {
        if (!has_param(list, name))
            return 0;
    }
    return 1;
}

/* Appends the action's query parameters that sit on the path item
 * (on_path) or on the operation (!on_path) to params. */
static void append_query_params(dialect d, json_t *params, const char *action, int on_path)
{
    size_t i;
    const json_t *p;
    json_array_foreach(action_params(action), i, p) {
        const char *name = json_string_value(json_object_get(p, "name"));
        if (on_every_action(name) != on_path)
            continue;
        const char *about = "";
        for (size_t k = 0; k < sizeof query_param_words / sizeof *query_param_words; k++)
            if (strcmp(query_param_words[k].name, name) == 0)
                about = query_param_words[k].about;
        append(params,
               param(d, name, "query", json_string_value(json_object_get(p, "type")), about));
    }
}

/* "CoreV1", "CoordinationV1": the group without ".k8s.io", labels capitalised. */
static void gv_camel(const sk_resource *r, char *out, size_t cap)
{
    char group[128];
    const char *suffix = ".k8s.io";
    size_t gl = strlen(r->group), sl = strlen(suffix);
    if (gl == 0)
        snprintf(group, sizeof group, "core");
    else if (gl > sl && strcmp(r->group + gl - sl, suffix) == 0)
        snprintf(group, sizeof group, "%.*s", (int)(gl - sl), r->group);
    else
        snprintf(group, sizeof group, "%s", r->group);
    size_t o = 0;
    int upper = 1;
    for (const char *c = group; *c && o + 1 < cap; c++) {
        if (*c == '.' || *c == '-') {
            upper = 1;
            continue;
        }
        out[o++] = upper && *c >= 'a' && *c <= 'z' ? (char)(*c - 'a' + 'A') : *c;
        upper = 0;
    }
    size_t vlen = strlen(r->version);
    SK_CHECK(vlen > 0 && o + vlen < cap);
    out[o++] = (char)(r->version[0] - 'a' + 'A');
    memcpy(out + o, r->version + 1, vlen - 1);
    out[o + vlen - 1] = '\0';
}

/* v3 "content": one entry per media type, each with schema. */
static json_t *content(const char *const *types, json_t *schema)
{
    json_t *c = json_object();
    SK_CHECK_ALLOC(c);
    for (; *types; types++)
        set(c, *types, json_pack("{s:O}", "schema", schema));
    json_decref(schema);
    return c;
}

static json_t *string_array(const char *const *items)
{
    json_t *a = json_array();
    SK_CHECK_ALLOC(a);
    for (; *items; items++)
        append(a, json_string(*items));
    return a;
}

/* What one operation names: the object's kind and definitions. */
typedef struct target {
    const sk_resource *r;     /* the resource the path belongs to */
    const char *group, *version, *kind; /* the kind the operation takes and returns */
    const char *kind_def;     /* its definition's name */
    const char *list_def;     /* its list's definition, if listed */
    int scoped;
    const char *id_suffix; /* "", "ForAllNamespaces", "Status", "Scale" */
} target;

static json_t *operation(dialect d, json_t *schemas, const target *t, const op_spec *op)
{
    char gv[128], id[256];
    gv_camel(t->r, gv, sizeof gv);
    int w = snprintf(id, sizeof id, "%s%s%s%s%s%s", op->id_verb, gv, op->id_infix,
                     t->scoped ? "Namespaced" : "", t->r->kind, t->id_suffix);
    SK_CHECK(w > 0 && (size_t)w < sizeof id);

    json_t *params = json_array();
    SK_CHECK_ALLOC(params);
    append_query_params(d, params, op->action, 0);

    char tag[160];
    snprintf(tag, sizeof tag, "%s_%s", t->r->group[0] ? t->r->group : "core", t->r->version);
    json_t *o = json_pack("{s:s, s:[s], s:s, s:o}", "operationId", id, "tags", tag,
                          "x-kubernetes-action", op->action, "x-kubernetes-group-version-kind",
                          gvk_object(t->group, t->version, t->kind));
    SK_CHECK_ALLOC(o);

    const char *kind_def = t->kind_def;
    const char *body_def = op->body == BODY_OBJECT   ? kind_def
                           : op->body == BODY_DELETE ? META "DeleteOptions"
                                                     : NULL;
    json_t *body = NULL;
    if (body_def) {
        add_definition(schemas, d, body_def);
        body = ref(d, body_def);
    } else if (op->body == BODY_PATCH) {
        body = json_pack("{s:s}", "type", "object");
    }
    const char *const *consumes = op->body != BODY_PATCH ? any_type
                                  : t->r->custom         ? custom_patch_types
                                                         : patch_types;
    if (body && d == V3) {
        set(o, "requestBody",
            json_pack("{s:o, s:b}", "content", content(consumes, body), "required",
                      op->body != BODY_DELETE));
    } else if (body) {
        json_t *p = json_pack("{s:s, s:s, s:o, s:b}", "name", "body", "in", "body", "schema", body,
                              "required", op->body != BODY_DELETE);
        SK_CHECK_ALLOC(p);
        SK_CHECK(json_array_insert_new(params, 0, p) == 0);
        set(o, "consumes", string_array(consumes));
    }
    set(o, "parameters", params);

    const char *result_def = op->resp == RESP_LIST     ? t->list_def
                             : op->resp == RESP_STATUS ? META "Status"
                                                       : kind_def;
    SK_CHECK(result_def != NULL);
    add_definition(schemas, d, result_def);
    json_t *responses = json_object();
    SK_CHECK_ALLOC(responses);
    for (const char *const *code = op->codes; *code; code++) {
        const char *desc = strcmp(*code, "201") == 0   ? "Created"
                           : strcmp(*code, "202") == 0 ? "Accepted"
                                                       : "OK";
        json_t *resp = json_pack("{s:s}", "description", desc);
        SK_CHECK_ALLOC(resp);
        if (d == V3)
            set(resp, "content", content(object_types, ref(d, result_def)));
        else
            set(resp, "schema", ref(d, result_def));
        set(responses, *code, resp);
    }
    set(o, "responses", responses);
    if (d == V2) {
        set(o, "produces", string_array(object_types));
        set(o, "schemes", json_pack("[s]", "https"));
    }
    return o;
}

/* Adds one path item with the ops the resource supports (verbs). */
static void add_path(dialect d, json_t *paths, json_t *schemas, const target *t, const char *path,
                     const op_spec *ops, size_t n_ops, unsigned verbs, int with_name)
{
    json_t *item = json_object(), *params = json_array();
    SK_CHECK_ALLOC(item);
    SK_CHECK_ALLOC(params);
    for (size_t i = 0; i < n_ops; i++)
        if (verbs & ops[i].verb)
            set(item, ops[i].method, operation(d, schemas, t, &ops[i]));
    if (json_object_size(item) == 0) {
        json_decref(item);
        json_decref(params);
        return;
    }
    char about[256];
    if (with_name) {
        snprintf(about, sizeof about, "The name of the %s.", t->r->kind);
        append(params, param(d, "name", "path", "string", about));
    }
    if (t->scoped)
        append(params, param(d, "namespace", "path", "string", "The object's namespace."));
    append_query_params(d, params, "get", 1);
    set(item, "parameters", params);
    set(paths, path, item);
}

#define ADD_PATH(t, ops, verbs, with_name)                                                         \
    add_path(d, paths, schemas, t, path, ops, sizeof ops / sizeof ops[0], verbs, with_name)

/* Subresources that exchange objects; connect and log streams are not described. */
static int described(const sk_subresource *s)
{
    size_t n = strlen(s->kind);
    return strcmp(s->name, "log") != 0 && !(n > 7 && strcmp(s->kind + n - 7, "Options") == 0);
}

/* "example.com", "v1", "Widget" -> "com.example.v1.Widget", as kube-apiserver
 * names a custom resource's definition (the group's labels reversed). New. */
static char *custom_def_name(const sk_resource *r, const char *kind)
{
    sk_buf b = SK_BUF_INIT;
    const char *end = r->group + strlen(r->group);
    while (end > r->group) {
        const char *dot = end;
        while (dot > r->group && dot[-1] != '.')
            dot--;
        sk_buf_append(&b, dot, (size_t)(end - dot));
        sk_buf_putc(&b, '.');
        end = dot > r->group ? dot - 1 : dot;
    }
    sk_buf_printf(&b, "%s.%s", r->version, kind);
    return sk_buf_steal(&b, NULL);
}

/* The definitions of a custom resource's kind and list: its CRD's
 * openAPIV3Schema with apiVersion, kind and metadata as kube-apiserver
 * adds them. */
static void add_custom_definitions(dialect d, json_t *schemas, const sk_resource *r,
                                   const char *kind_def, const char *list_def)
{
    json_t *def = r->custom->schema ? json_deep_copy(r->custom->schema)
                                    : json_pack("{s:s, s:b}", "type", "object",
                                                "x-kubernetes-preserve-unknown-fields", 1);
    SK_CHECK_ALLOC(def);
    json_t *props = json_object_get(def, "properties");
    if (!json_is_object(props)) {
        props = json_object();
        set(def, "properties", props);
    }
    set(props, "apiVersion", json_pack("{s:s}", "type", "string"));
    set(props, "kind", json_pack("{s:s}", "type", "string"));
    set(props, "metadata", ref(d, META "ObjectMeta"));
    add_definition(schemas, d, META "ObjectMeta");
    set(def, "x-kubernetes-group-version-kind", json_pack("[o]", gvk_object(r->group, r->version,
                                                                           r->kind)));
    set(schemas, kind_def, def);
    json_t *list = json_pack("{s:s, s:[s], s:{s:{s:s}, s:{s:s, s:o}, s:{s:s}, s:o}, s:[o]}",
                             "type", "object", "required", "items", "properties", "apiVersion",
                             "type", "string", "items", "type", "array", "items", ref(d, kind_def),
                             "kind", "type", "string", "metadata", ref(d, META "ListMeta"),
                             "x-kubernetes-group-version-kind",
                             gvk_object(r->group, r->version, r->list_kind));
    SK_CHECK_ALLOC(list);
    add_definition(schemas, d, META "ListMeta");
    set(schemas, list_def, list);
}

static void add_resource_paths(dialect d, json_t *paths, json_t *schemas, const sk_resource *r,
                               const char *prefix)
{
    char path[512], item[512], suffix[64];
    int w;
    char *custom_kind = r->custom ? custom_def_name(r, r->kind) : NULL;
    char *custom_list = r->custom ? custom_def_name(r, r->list_kind) : NULL;
    if (r->custom)
        add_custom_definitions(d, schemas, r, custom_kind, custom_list);
    else
        add_definition(schemas, d, sk_schema_name(r->schema));
    target t = {r, r->group, r->version, r->kind,
                r->custom ? custom_kind : sk_schema_name(r->schema),
                r->custom ? custom_list
                          : r->list_schema ? sk_schema_name(r->list_schema) : NULL,
                r->namespaced, ""};
    w = r->namespaced ? snprintf(item, sizeof item, "%s/namespaces/{namespace}/%s", prefix,
                                 r->resource)
                      : snprintf(item, sizeof item, "%s/%s", prefix, r->resource);
    SK_CHECK(w > 0 && (size_t)w < sizeof item);
    snprintf(path, sizeof path, "%s", item);
    ADD_PATH(&t, collection_ops, r->verbs, 0);
    w = snprintf(path, sizeof path, "%s/{name}", item);
    SK_CHECK(w > 0 && (size_t)w < sizeof path);
    ADD_PATH(&t, item_ops, r->verbs, 1);
    if (r->namespaced) {
        target all = t;
        all.scoped = 0;
        all.id_suffix = "ForAllNamespaces";
        w = snprintf(path, sizeof path, "%s/%s", prefix, r->resource);
        SK_CHECK(w > 0 && (size_t)w < sizeof path);
        ADD_PATH(&all, all_namespaces_ops, r->verbs, 0);
    }
    for (size_t i = 0; i < r->n_subresources; i++) {
        const sk_subresource *s = &r->subresources[i];
        if (!described(s))
            continue;
        /* the generator keeps every subresource kind; a custom resource's
         * status is its own kind */
        SK_CHECK(s->schema != NULL || r->custom);
        snprintf(suffix, sizeof suffix, "%s", s->name);
        suffix[0] = (char)(suffix[0] - 'a' + 'A');
        target st = {r, s->group, s->version, s->kind,
                     s->schema ? sk_schema_name(s->schema) : custom_kind, NULL, r->namespaced,
                     suffix};
        w = snprintf(path, sizeof path, "%s/{name}/%s", item, s->name);
        SK_CHECK(w > 0 && (size_t)w < sizeof path);
        ADD_PATH(&st, subresource_ops, s->verbs, 1);
    }
    free(custom_kind);
    free(custom_list);
}

/* ---- documents and cache -------------------------------------------------- */

typedef struct gv_doc {
    char *path; /* "api/v1" */
    char *text;
    size_t len;
    char hash[SK_OPENAPI_HASH_LEN + 1];
} gv_doc;

static struct {
    gv_doc *docs; /* the built-in group/versions' */
    size_t n_docs;
    json_t *root_paths; /* their entries of the v3 index (never modified after build) */
    gv_doc v2;
} st;

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The custom resources' documents and the v3 index of one registry generation. */
typedef struct custom_state {
    unsigned long generation;
    const struct custom_state *prev; /* the state it replaced: retired, kept reachable */
    gv_doc *docs;
    size_t n_docs;
    char *root;
    size_t root_len;
} custom_state;

static _Atomic(const custom_state *) custom_published;
static pthread_mutex_t custom_mu = PTHREAD_MUTEX_INITIALIZER;

void sk_openapi_hash(const void *data, size_t len, char out[SK_OPENAPI_HASH_LEN + 1])
{
    unsigned char digest[SK_OPENAPI_HASH_LEN / 2];
    SK_CHECK(gnutls_hash_fast(GNUTLS_DIG_SHA512, data, len, digest) == 0);
    for (size_t i = 0; i < sizeof digest; i++)
        snprintf(out + 2 * i, 3, "%02X", digest[i]);
}

static void gv_prefix(const char *group, const char *version, char *out, size_t cap)
{
    int w = group[0] ? snprintf(out, cap, "/apis/%s/%s", group, version)
                     : snprintf(out, cap, "/api/%s", version);
    SK_CHECK(w > 0 && (size_t)w < cap);
}

/* Paths and definitions of the resources of one group/version (gv NULL: all). */
static void add_resources(dialect d, const sk_discovery_gv *gv, json_t *paths, json_t *schemas)
{
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++) {
        const sk_resource *r = all[i];
        if (gv ? strcmp(r->group, gv->group) != 0 || strcmp(r->version, gv->version) != 0
               : r->custom != NULL) /* v2: built-in kinds only (see the top) */
            continue;
        char prefix[256];
        gv_prefix(r->group, r->version, prefix, sizeof prefix);
        add_resource_paths(d, paths, schemas, r, prefix);
    }
}

static json_t *v3_document(const sk_discovery_gv *gv)
{
    json_t *paths = json_object(), *schemas = json_object();
    SK_CHECK_ALLOC(paths);
    SK_CHECK_ALLOC(schemas);
    add_resources(V3, gv, paths, schemas);
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o, s:{s:{s:s, s:s, s:s}}}, s:[{s:[]}]}",
                     "openapi", "3.0.0", "info", "title", "Kubernetes", "version", "v1.32.0",
                     "paths", paths, "components", "schemas", schemas, "securitySchemes",
                     "BearerToken", "type", "apiKey", "name", "authorization", "in", "header",
                     "security", "BearerToken");
}

static json_t *v2_document(void)
{
    json_t *paths = json_object(), *schemas = json_object();
    SK_CHECK_ALLOC(paths);
    SK_CHECK_ALLOC(schemas);
    add_resources(V2, NULL, paths, schemas);
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:o, s:{s:{s:s, s:s, s:s}}, s:[{s:[]}]}",
                     "swagger", "2.0", "info", "title", "Kubernetes", "version", "v1.32.0",
                     "paths", paths, "definitions", schemas, "securityDefinitions", "BearerToken",
                     "type", "apiKey", "name", "authorization", "in", "header", "security",
                     "BearerToken");
}

static void finish(gv_doc *doc, json_t *j)
{
    SK_CHECK_ALLOC(j);
    doc->text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    SK_CHECK_ALLOC(doc->text);
    doc->len = strlen(doc->text);
    json_decref(j);
    sk_openapi_hash(doc->text, doc->len, doc->hash);
}

/* Non-zero if every resource of gv is a custom resource. */
static int gv_is_custom(const sk_discovery_gv *gv)
{
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++)
        if (!all[i]->custom && strcmp(all[i]->group, gv->group) == 0 &&
            strcmp(all[i]->version, gv->version) == 0)
            return 0;
    return 1;
}

/* Builds the v3 documents of the group/versions custom (or not) selects
 * into *docs / *n and adds their index entries to root_paths. */
static void build_docs(int custom, gv_doc **docs, size_t *n, json_t *root_paths)
{
    size_t n_gvs;
    const sk_discovery_gv *gvs = sk_discovery_gvs(&n_gvs);
    *docs = calloc(n_gvs ? n_gvs : 1, sizeof **docs);
    SK_CHECK_ALLOC(*docs);
    *n = 0;
    for (size_t i = 0; i < n_gvs; i++) {
        if (gv_is_custom(&gvs[i]) != custom)
            continue;
        gv_doc *d = &(*docs)[(*n)++];
        int w = gvs[i].group[0] ? asprintf(&d->path, "apis/%s", gvs[i].api_version)
                                : asprintf(&d->path, "api/%s", gvs[i].api_version);
        SK_CHECK(w > 0);
        finish(d, v3_document(&gvs[i]));
        set(root_paths, d->path,
            json_pack("{s:s+++}", "serverRelativeURL", "/openapi/v3/", d->path, "?hash=", d->hash));
    }
}

static void build(void)
{
    st.root_paths = json_object();
    SK_CHECK_ALLOC(st.root_paths);
    build_docs(0, &st.docs, &st.n_docs, st.root_paths);
    finish(&st.v2, v2_document());
}

/* The custom documents of the registry's current generation. */
static const custom_state *custom_docs(void)
{
    pthread_once(&once, build);
    unsigned long gen = sk_registry_generation();
    const custom_state *cs = atomic_load_explicit(&custom_published, memory_order_acquire);
    if (cs && cs->generation == gen)
        return cs;
    pthread_mutex_lock(&custom_mu);
    cs = atomic_load(&custom_published);
    if (!cs || cs->generation != gen) {
        custom_state *fresh = calloc(1, sizeof *fresh);
        SK_CHECK_ALLOC(fresh);
        fresh->generation = gen;
        fresh->prev = cs;
        json_t *root_paths = json_deep_copy(st.root_paths);
        SK_CHECK_ALLOC(root_paths);
        build_docs(1, &fresh->docs, &fresh->n_docs, root_paths);
        gv_doc root = {0};
        finish(&root, json_pack("{s:o}", "paths", root_paths));
        fresh->root = root.text;
        fresh->root_len = root.len;
        atomic_store_explicit(&custom_published, fresh, memory_order_release);
        cs = fresh; /* the one it replaces is retired, never freed */
    }
    pthread_mutex_unlock(&custom_mu);
    return cs;
}

static const gv_doc *find_doc(const char *gv_path)
{
    pthread_once(&once, build);
    for (size_t i = 0; i < st.n_docs; i++)
        if (strcmp(st.docs[i].path, gv_path) == 0)
            return &st.docs[i];
    const custom_state *cs = custom_docs();
    for (size_t i = 0; i < cs->n_docs; i++)
        if (strcmp(cs->docs[i].path, gv_path) == 0)
            return &cs->docs[i];
    return NULL;
}

const char *sk_openapi_v3_root_text(size_t *len)
{
    const custom_state *cs = custom_docs();
    if (len)
        *len = cs->root_len;
    return cs->root;
}

const char *sk_openapi_v3_doc_text(const char *gv_path, size_t *len)
{
    const gv_doc *d = find_doc(gv_path);
    if (!d)
        return NULL;
    if (len)
        *len = d->len;
    return d->text;
}

const char *sk_openapi_v3_doc_hash(const char *gv_path)
{
    const gv_doc *d = find_doc(gv_path);
    return d ? d->hash : NULL;
}

const char *sk_openapi_v2_text(size_t *len)
{
    pthread_once(&once, build);
    if (len)
        *len = st.v2.len;
    return st.v2.text;
}

const char *sk_openapi_v2_hash(void)
{
    pthread_once(&once, build);
    return st.v2.hash;
}

static json_t *parse(const char *text, size_t len)
{
    if (!text)
        return NULL;
    json_t *j = json_loadb(text, len, 0, NULL);
    SK_CHECK_ALLOC(j);
    return j;
}

json_t *sk_openapi_v3_root(void)
{
    size_t len;
    const char *text = sk_openapi_v3_root_text(&len);
    return parse(text, len);
}

json_t *sk_openapi_v3_doc(const char *gv_path)
{
    size_t len = 0;
    const char *text = sk_openapi_v3_doc_text(gv_path, &len);
    return parse(text, len);
}

json_t *sk_openapi_v2(void)
{
    size_t len;
    const char *text = sk_openapi_v2_text(&len);
    return parse(text, len);
}
