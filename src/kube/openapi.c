/*
 * openapi.c - generates the OpenAPI v3 documents from the registry and the
 * schema table below.
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
 *    it with strategicpatch.PatchMetaFromOpenAPIV3: patch extensions must sit
 *    on the property itself, refs are "#/components/schemas/<name>", and a
 *    key missing from "properties" aborts the walk, so every field an object
 *    can carry (including server-set metadata) must be declared.
 *
 * The schema table is a compact type grammar: "string", "boolean", "int32",
 * "int64", "byte", "date-time", "object", "[]T" (array), "{}T" (map) and
 * "@Name" (reference, resolved first in the owner's group/version, then in
 * meta/v1). Each document holds only the definitions reachable from its
 * kinds, so documents of different group/versions stay independent.
 *
 * Invariants: every registry kind has a definition (checked at build time);
 * documents are built once and never change, so borrowed text is shared
 * between threads without locks.
 */
#include "kube/openapi.h"

#include "kube/discovery.h"
#include "kube/registry.h"
#include "core/check.h"

#include <gnutls/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META_PKG "io.k8s.apimachinery.pkg.apis.meta.v1"
#define REF_PREFIX "#/components/schemas/"

typedef struct prop {
    const char *name;
    const char *type;      /* grammar in the file comment */
    const char *strategy;  /* x-kubernetes-patch-strategy */
    const char *merge_key; /* x-kubernetes-patch-merge-key; also the list-map key */
    const char *list_type; /* x-kubernetes-list-type */
    int required;
} prop;

typedef enum {
    GVK_NONE,     /* or, for a registry kind, that kind's own GVK */
    GVK_CORE_V1,  /* meta types served as core v1 kinds (Status) */
    GVK_EVERY_GV, /* accepted by every served group/version (DeleteOptions) */
} gvk_tag;

typedef struct def {
    const char *group; /* NULL for meta/v1 */
    const char *version;
    const char *name;
    const char *scalar; /* non-NULL: the definition is this grammar type */
    const prop *props;
    const char *map_type; /* x-kubernetes-map-type */
    gvk_tag gvk;
} def;

/* Designated so that unnamed extension fields default to NULL without warnings. */
#define F(n, t, ...)                                                                               \
    {                                                                                              \
        .name = (n), .type = (t), __VA_ARGS__                                                      \
    }
#define TYPE_META F("apiVersion", "string"), F("kind", "string")
#define OBJECT_META TYPE_META, F("metadata", "@ObjectMeta")
#define END                                                                                        \
    {                                                                                              \
        0                                                                                          \
    }

static const prop object_meta[] = {
    F("annotations", "{}string"),
    F("creationTimestamp", "@Time"),
    F("deletionGracePeriodSeconds", "int64"),
    F("deletionTimestamp", "@Time"),
    F("finalizers", "[]string", .strategy = "merge", .list_type = "set"),
    F("generateName", "string"),
    F("generation", "int64"),
    F("labels", "{}string"),
    F("managedFields", "[]@ManagedFieldsEntry", .list_type = "atomic"),
    F("name", "string"),
    F("namespace", "string"),
    F("ownerReferences", "[]@OwnerReference", .strategy = "merge", .merge_key = "uid",
      .list_type = "map"),
    F("resourceVersion", "string"),
    F("selfLink", "string"),
    F("uid", "string"),
    END};

static const prop owner_reference[] = {F("apiVersion", "string", .required = 1),
                                       F("blockOwnerDeletion", "boolean"),
                                       F("controller", "boolean"),
                                       F("kind", "string", .required = 1),
                                       F("name", "string", .required = 1),
                                       F("uid", "string", .required = 1),
                                       END};

static const prop managed_fields_entry[] = {F("apiVersion", "string"),  F("fieldsType", "string"),
                                            F("fieldsV1", "@FieldsV1"), F("manager", "string"),
                                            F("operation", "string"),   F("subresource", "string"),
                                            F("time", "@Time"),         END};

static const prop list_meta[] = {F("continue", "string"), F("remainingItemCount", "int64"),
                                 F("resourceVersion", "string"), F("selfLink", "string"), END};

static const prop status[] = {TYPE_META,
                              F("code", "int32"),
                              F("details", "@StatusDetails"),
                              F("message", "string"),
                              F("metadata", "@ListMeta"),
                              F("reason", "string"),
                              F("status", "string"),
                              END};

static const prop status_details[] = {F("causes", "[]@StatusCause", .list_type = "atomic"),
                                      F("group", "string"),
                                      F("kind", "string"),
                                      F("name", "string"),
                                      F("retryAfterSeconds", "int32"),
                                      F("uid", "string"),
                                      END};

static const prop status_cause[] = {F("field", "string"), F("message", "string"),
                                    F("reason", "string"), END};

static const prop delete_options[] = {
    TYPE_META,
    F("dryRun", "[]string", .list_type = "atomic"),
    F("gracePeriodSeconds", "int64"),
    F("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean"),
    F("orphanDependents", "boolean"),
    F("preconditions", "@Preconditions"),
    F("propagationPolicy", "string"),
    END};

static const prop preconditions[] = {F("resourceVersion", "string"), F("uid", "string"), END};

static const prop namespace_[] = {OBJECT_META, F("spec", "@NamespaceSpec"),
                                  F("status", "@NamespaceStatus"), END};

static const prop namespace_spec[] = {F("finalizers", "[]string", .list_type = "atomic"), END};

static const prop namespace_status[] = {F("conditions", "[]@NamespaceCondition",
                                          .strategy = "merge", .merge_key = "type",
                                          .list_type = "map"),
                                        F("phase", "string"), END};

static const prop namespace_condition[] = {F("lastTransitionTime", "@Time"),
                                           F("message", "string"),
                                           F("reason", "string"),
                                           F("status", "string", .required = 1),
                                           F("type", "string", .required = 1),
                                           END};

static const prop config_map[] = {OBJECT_META, F("binaryData", "{}byte"), F("data", "{}string"),
                                  F("immutable", "boolean"), END};

static const prop secret[] = {OBJECT_META,
                              F("data", "{}byte"),
                              F("immutable", "boolean"),
                              F("stringData", "{}string"),
                              F("type", "string"),
                              END};

static const prop service_account[] = {
    OBJECT_META, F("automountServiceAccountToken", "boolean"),
    F("imagePullSecrets", "[]@LocalObjectReference", .list_type = "atomic"),
    F("secrets", "[]@ObjectReference", .strategy = "merge", .merge_key = "name"), END};

static const prop local_object_reference[] = {F("name", "string"), END};

static const prop object_reference[] = {F("apiVersion", "string"), F("fieldPath", "string"),
                                        F("kind", "string"),       F("name", "string"),
                                        F("namespace", "string"),  F("resourceVersion", "string"),
                                        F("uid", "string"),        END};

static const prop event[] = {TYPE_META,
                             F("action", "string"),
                             F("count", "int32"),
                             F("eventTime", "@MicroTime"),
                             F("firstTimestamp", "@Time"),
                             F("involvedObject", "@ObjectReference", .required = 1),
                             F("lastTimestamp", "@Time"),
                             F("message", "string"),
                             F("metadata", "@ObjectMeta", .required = 1),
                             F("reason", "string"),
                             F("related", "@ObjectReference"),
                             F("reportingComponent", "string"),
                             F("reportingInstance", "string"),
                             F("series", "@EventSeries"),
                             F("source", "@EventSource"),
                             F("type", "string"),
                             END};

static const prop event_series[] = {F("count", "int32"), F("lastObservedTime", "@MicroTime"), END};

static const prop event_source[] = {F("component", "string"), F("host", "string"), END};

static const prop lease[] = {OBJECT_META, F("spec", "@LeaseSpec"), END};

static const prop lease_spec[] = {F("acquireTime", "@MicroTime"),
                                  F("holderIdentity", "string"),
                                  F("leaseDurationSeconds", "int32"),
                                  F("leaseTransitions", "int32"),
                                  F("preferredHolder", "string"),
                                  F("renewTime", "@MicroTime"),
                                  F("strategy", "string"),
                                  END};

static const def defs[] = {
    {NULL, "v1", "ObjectMeta", .props = object_meta},
    {NULL, "v1", "OwnerReference", .props = owner_reference, .map_type = "atomic"},
    {NULL, "v1", "ManagedFieldsEntry", .props = managed_fields_entry},
    {NULL, "v1", "FieldsV1", .scalar = "object"},
    {NULL, "v1", "Time", .scalar = "date-time"},
    {NULL, "v1", "MicroTime", .scalar = "date-time"},
    {NULL, "v1", "ListMeta", .props = list_meta},
    {NULL, "v1", "Status", .props = status, .gvk = GVK_CORE_V1},
    {NULL, "v1", "StatusDetails", .props = status_details},
    {NULL, "v1", "StatusCause", .props = status_cause},
    {NULL, "v1", "DeleteOptions", .props = delete_options, .gvk = GVK_EVERY_GV},
    {NULL, "v1", "Preconditions", .props = preconditions},
    {NULL, "v1", "Patch", .scalar = "object"},
    {"", "v1", "Namespace", .props = namespace_},
    {"", "v1", "NamespaceSpec", .props = namespace_spec},
    {"", "v1", "NamespaceStatus", .props = namespace_status},
    {"", "v1", "NamespaceCondition", .props = namespace_condition},
    {"", "v1", "ConfigMap", .props = config_map},
    {"", "v1", "Secret", .props = secret},
    {"", "v1", "ServiceAccount", .props = service_account},
    {"", "v1", "LocalObjectReference", .props = local_object_reference, .map_type = "atomic"},
    {"", "v1", "ObjectReference", .props = object_reference, .map_type = "atomic"},
    {"", "v1", "Event", .props = event},
    {"", "v1", "EventSeries", .props = event_series},
    {"", "v1", "EventSource", .props = event_source},
    {"coordination.k8s.io", "v1", "Lease", .props = lease},
    {"coordination.k8s.io", "v1", "LeaseSpec", .props = lease_spec},
};

#define N_DEFS (sizeof defs / sizeof defs[0])

/* ---- query parameters and operations ---------------------------------- */

static const struct {
    const char *name;
    const char *type;
} query_params[] = {
    {"allowWatchBookmarks", "boolean"},
    {"continue", "string"},
    {"dryRun", "string"},
    {"fieldManager", "string"},
    {"fieldSelector", "string"},
    {"fieldValidation", "string"},
    {"force", "boolean"},
    {"gracePeriodSeconds", "integer"},
    {"ignoreStoreReadErrorWithClusterBreakingPotential", "boolean"},
    {"labelSelector", "string"},
    {"limit", "integer"},
    {"orphanDependents", "boolean"},
    {"pretty", "string"},
    {"propagationPolicy", "string"},
    {"resourceVersion", "string"},
    {"resourceVersionMatch", "string"},
    {"sendInitialEvents", "boolean"},
    {"timeoutSeconds", "integer"},
    {"watch", "boolean"},
};

static const char *const list_params[] = {"allowWatchBookmarks",
                                          "continue",
                                          "fieldSelector",
                                          "labelSelector",
                                          "limit",
                                          "resourceVersion",
                                          "resourceVersionMatch",
                                          "sendInitialEvents",
                                          "timeoutSeconds",
                                          "watch",
                                          NULL};
static const char *const write_params[] = {"dryRun", "fieldManager", "fieldValidation", NULL};
static const char *const patch_params[] = {"dryRun", "fieldManager", "fieldValidation", "force",
                                           NULL};
static const char *const delete_params[] = {
    "dryRun",           "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents", "propagationPolicy",  NULL};
static const char *const deletecollection_params[] = {
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    NULL};
static const char *const no_params[] = {NULL};

/* Patch types the server accepts; strategic merge is what kubectl apply probes for. */
static const char *const patch_types[] = {"application/json-patch+json",
                                          "application/merge-patch+json",
                                          "application/strategic-merge-patch+json", NULL};

typedef enum { BODY_NONE, BODY_OBJECT, BODY_PATCH, BODY_DELETE } body_kind;
typedef enum { RESP_OBJECT, RESP_LIST, RESP_STATUS } resp_kind;

typedef struct op_spec {
    unsigned verb; /* emitted only if the resource supports it */
    const char *method;
    const char *action;   /* x-kubernetes-action */
    const char *id_verb;  /* operationId = id_verb + GV + id_infix + scope + Kind + suffix */
    const char *id_infix; /* "Collection" for deletecollection */
    const char *const *params;
    body_kind body;
    resp_kind resp;
    const char *codes[4];
} op_spec;

/* One operation per line reads as a table. */
/* clang-format off */
static const op_spec collection_ops[] = {
    {SK_VERB_LIST, "get", "list", "list", "", list_params, BODY_NONE, RESP_LIST, {"200"}},
    {SK_VERB_CREATE, "post", "post", "create", "", write_params, BODY_OBJECT, RESP_OBJECT, {"200", "201", "202"}},
    {SK_VERB_DELETECOLLECTION, "delete", "deletecollection", "delete", "Collection", deletecollection_params, BODY_DELETE, RESP_STATUS, {"200"}},
};

static const op_spec item_ops[] = {
    {SK_VERB_GET, "get", "get", "read", "", no_params, BODY_NONE, RESP_OBJECT, {"200"}},
    {SK_VERB_UPDATE, "put", "put", "replace", "", write_params, BODY_OBJECT, RESP_OBJECT, {"200", "201"}},
    {SK_VERB_PATCH, "patch", "patch", "patch", "", patch_params, BODY_PATCH, RESP_OBJECT, {"200", "201"}},
    {SK_VERB_DELETE, "delete", "delete", "delete", "", delete_params, BODY_DELETE, RESP_STATUS, {"200", "202"}},
};

static const op_spec all_namespaces_ops[] = {
    {SK_VERB_LIST, "get", "list", "list", "", list_params, BODY_NONE, RESP_LIST, {"200"}},
};
/* clang-format on */

/* ---- schema construction ---------------------------------------------- */

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

/* "core" for the core group, else the group's first DNS label, as k8s.io/api does. */
static void package_of(const char *group, char *out, size_t cap)
{
    size_t n = group[0] ? strcspn(group, ".") : 0;
    int w = n ? snprintf(out, cap, "%.*s", (int)n, group) : snprintf(out, cap, "core");
    SK_CHECK(w > 0 && (size_t)w < cap);
}

static void def_name(const def *d, char *out, size_t cap)
{
    int w;
    if (!d->group) {
        w = snprintf(out, cap, META_PKG ".%s", d->name);
    } else {
        char pkg[64];
        package_of(d->group, pkg, sizeof pkg);
        w = snprintf(out, cap, "io.k8s.api.%s.%s.%s", pkg, d->version, d->name);
    }
    SK_CHECK(w > 0 && (size_t)w < cap);
}

static const def *find_def(const char *group, const char *version, const char *name)
{
    for (size_t i = 0; i < N_DEFS; i++) {
        const def *d = &defs[i];
        int same_group = group ? d->group && strcmp(d->group, group) == 0 : d->group == NULL;
        if (same_group && strcmp(d->version, version) == 0 && strcmp(d->name, name) == 0)
            return d;
    }
    return NULL;
}

static const def *resolve(const def *owner, const char *name)
{
    const def *d = find_def(owner->group, owner->version, name);
    if (!d)
        d = find_def(NULL, "v1", name);
    SK_CHECK(d != NULL); /* the table references an undefined schema */
    return d;
}

static json_t *gvk_object(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "kind", kind, "version", version);
}

static json_t *ref_to(json_t *schemas, const def *d);

static json_t *scalar_schema(const char *type)
{
    static const struct {
        const char *name, *type, *format;
    } scalars[] = {
        {"string", "string", NULL},    {"boolean", "boolean", NULL},
        {"int32", "integer", "int32"}, {"int64", "integer", "int64"},
        {"byte", "string", "byte"},    {"date-time", "string", "date-time"},
        {"object", "object", NULL},
    };
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        if (strcmp(scalars[i].name, type) != 0)
            continue;
        return scalars[i].format
                   ? json_pack("{s:s, s:s}", "type", scalars[i].type, "format", scalars[i].format)
                   : json_pack("{s:s}", "type", scalars[i].type);
    }
    SK_CHECK(!"unknown scalar type in schema table");
    return NULL;
}

/* Builds the schema for a grammar type, adding referenced definitions to schemas. */
static json_t *type_schema(json_t *schemas, const def *owner, const char *type)
{
    if (strncmp(type, "[]", 2) == 0)
        return json_pack("{s:s, s:o}", "type", "array", "items",
                         type_schema(schemas, owner, type + 2));
    if (strncmp(type, "{}", 2) == 0)
        return json_pack("{s:s, s:o}", "type", "object", "additionalProperties",
                         type_schema(schemas, owner, type + 2));
    if (type[0] == '@')
        return ref_to(schemas, resolve(owner, type + 1));
    return scalar_schema(type);
}

static json_t *property_schema(json_t *schemas, const def *owner, const prop *p)
{
    json_t *s = type_schema(schemas, owner, p->type);
    SK_CHECK_ALLOC(s);
    if (p->list_type)
        set(s, "x-kubernetes-list-type", json_string(p->list_type));
    if (p->list_type && strcmp(p->list_type, "map") == 0)
        set(s, "x-kubernetes-list-map-keys", json_pack("[s]", p->merge_key));
    if (p->merge_key)
        set(s, "x-kubernetes-patch-merge-key", json_string(p->merge_key));
    if (p->strategy)
        set(s, "x-kubernetes-patch-strategy", json_string(p->strategy));
    return s;
}

static json_t *gvk_extension(const def *d)
{
    json_t *a = json_array();
    SK_CHECK_ALLOC(a);
    if (d->gvk == GVK_CORE_V1) {
        append(a, gvk_object("", "v1", d->name));
    } else if (d->gvk == GVK_EVERY_GV) {
        size_t n;
        const sk_discovery_gv *gvs = sk_discovery_gvs(&n);
        for (size_t i = 0; i < n; i++)
            append(a, gvk_object(gvs[i].group, gvs[i].version, d->name));
    } else if (d->group && sk_registry_find_kind(d->group, d->name)) {
        append(a, gvk_object(d->group, d->version, d->name));
    }
    if (json_array_size(a) == 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

/* Adds d (and, recursively, what it references) to schemas unless present.
 * The entry is inserted before its properties are built, so cycles end. */
static void add_def(json_t *schemas, const def *d)
{
    char name[256];
    def_name(d, name, sizeof name);
    if (json_object_get(schemas, name))
        return;
    if (d->scalar) {
        set(schemas, name, scalar_schema(d->scalar));
        return;
    }
    json_t *s = json_pack("{s:s}", "type", "object");
    set(schemas, name, s);
    json_t *props = json_object(), *required = json_array();
    SK_CHECK_ALLOC(props);
    SK_CHECK_ALLOC(required);
    for (const prop *p = d->props; p->name; p++) {
        set(props, p->name, property_schema(schemas, d, p));
        if (p->required)
            append(required, json_string(p->name));
    }
    set(s, "properties", props);
    if (json_array_size(required))
        set(s, "required", required);
    else
        json_decref(required);
    if (d->map_type)
        set(s, "x-kubernetes-map-type", json_string(d->map_type));
    json_t *gvk = gvk_extension(d);
    if (gvk)
        set(s, "x-kubernetes-group-version-kind", gvk);
}

static json_t *ref_to(json_t *schemas, const def *d)
{
    char name[256];
    add_def(schemas, d);
    def_name(d, name, sizeof name);
    return json_pack("{s:s+}", "$ref", REF_PREFIX, name);
}

static const def *kind_def(const sk_resource *r)
{
    const def *d = find_def(r->group, r->version, r->kind);
    SK_CHECK(d != NULL); /* every registry kind needs a schema table entry */
    return d;
}

/* The list schema is derived from the kind, so it is not in the table. */
static json_t *list_ref(json_t *schemas, const sk_resource *r)
{
    const def *item = kind_def(r);
    char item_name[256], name[256];
    def_name(item, item_name, sizeof item_name);
    int w = snprintf(name, sizeof name, "%.*s%s", (int)(strlen(item_name) - strlen(item->name)),
                     item_name, r->list_kind);
    SK_CHECK(w > 0 && (size_t)w < sizeof name);
    if (!json_object_get(schemas, name)) {
        json_t *props =
            json_pack("{s:{s:s}, s:{s:s, s:o}, s:{s:s}, s:o}", "apiVersion", "type", "string",
                      "items", "type", "array", "items", ref_to(schemas, item), "kind", "type",
                      "string", "metadata", ref_to(schemas, resolve(item, "ListMeta")));
        SK_CHECK_ALLOC(props);
        json_t *gvk = json_array();
        SK_CHECK_ALLOC(gvk);
        append(gvk, gvk_object(r->group, r->version, r->list_kind));
        set(schemas, name,
            json_pack("{s:s, s:o, s:[s], s:o}", "type", "object", "properties", props, "required",
                      "items", "x-kubernetes-group-version-kind", gvk));
    }
    return json_pack("{s:s+}", "$ref", REF_PREFIX, name);
}

/* ---- paths --------------------------------------------------------------- */

static json_t *param(const char *name, const char *in, const char *type)
{
    json_t *p = json_pack("{s:s, s:s, s:{s:s}}", "name", name, "in", in, "schema", "type", type);
    SK_CHECK_ALLOC(p);
    if (strcmp(in, "path") == 0)
        set(p, "required", json_true());
    return p;
}

static json_t *query_param(const char *name)
{
    for (size_t i = 0; i < sizeof query_params / sizeof query_params[0]; i++)
        if (strcmp(query_params[i].name, name) == 0)
            return param(name, "query", query_params[i].type);
    SK_CHECK(!"operation lists an undefined query parameter");
    return NULL;
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

static json_t *content(const char *const *types, json_t *schema)
{
    json_t *c = json_object();
    SK_CHECK_ALLOC(c);
    for (; *types; types++)
        set(c, *types, json_pack("{s:O}", "schema", schema));
    json_decref(schema);
    return c;
}

static json_t *operation(json_t *schemas, const sk_resource *r, const op_spec *op, int scoped,
                         const char *id_suffix)
{
    static const char *const json_only[] = {"application/json", NULL};
    static const char *const any[] = {"*/*", NULL};
    char gv[128], id[256];
    gv_camel(r, gv, sizeof gv);
    int w = snprintf(id, sizeof id, "%s%s%s%s%s%s", op->id_verb, gv, op->id_infix,
                     scoped ? "Namespaced" : "", r->kind, id_suffix);
    SK_CHECK(w > 0 && (size_t)w < sizeof id);

    json_t *params = json_array();
    SK_CHECK_ALLOC(params);
    for (const char *const *p = op->params; *p; p++)
        append(params, query_param(*p));

    json_t *o = json_pack("{s:s, s:o, s:s, s:o}", "operationId", id, "parameters", params,
                          "x-kubernetes-action", op->action, "x-kubernetes-group-version-kind",
                          gvk_object(r->group, r->version, r->kind));
    SK_CHECK_ALLOC(o);

    const def *kind = kind_def(r);
    switch (op->body) {
    case BODY_NONE:
        break;
    case BODY_OBJECT:
        set(o, "requestBody",
            json_pack("{s:o, s:b}", "content", content(any, ref_to(schemas, kind)), "required", 1));
        break;
    case BODY_PATCH:
        set(o, "requestBody",
            json_pack("{s:o, s:b}", "content",
                      content(patch_types, ref_to(schemas, resolve(kind, "Patch"))), "required",
                      1));
        break;
    case BODY_DELETE:
        set(o, "requestBody",
            json_pack("{s:o}", "content",
                      content(json_only, ref_to(schemas, resolve(kind, "DeleteOptions")))));
        break;
    }

    json_t *result = op->resp == RESP_LIST     ? list_ref(schemas, r)
                     : op->resp == RESP_STATUS ? ref_to(schemas, resolve(kind, "Status"))
                                               : ref_to(schemas, kind);
    json_t *responses = json_object();
    SK_CHECK_ALLOC(responses);
    for (const char *const *code = op->codes; *code; code++) {
        const char *desc = strcmp(*code, "201") == 0   ? "Created"
                           : strcmp(*code, "202") == 0 ? "Accepted"
                                                       : "OK";
        set(responses, *code,
            json_pack("{s:s, s:o}", "description", desc, "content",
                      content(json_only, json_deep_copy(result))));
    }
    json_decref(result);
    set(o, "responses", responses);
    return o;
}

/* Adds one path item with the ops r supports; with_name adds the {name} segment's parameter. */
static void add_path(json_t *paths, json_t *schemas, const sk_resource *r, const char *path,
                     const op_spec *ops, size_t n_ops, int scoped, int with_name,
                     const char *id_suffix)
{
    json_t *item = json_object(), *params = json_array();
    SK_CHECK_ALLOC(item);
    SK_CHECK_ALLOC(params);
    unsigned verbs = sk_discovery_verbs(r);
    for (size_t i = 0; i < n_ops; i++)
        if (verbs & ops[i].verb)
            set(item, ops[i].method, operation(schemas, r, &ops[i], scoped, id_suffix));
    if (json_object_size(item) == 0) {
        json_decref(item);
        json_decref(params);
        return;
    }
    if (with_name)
        append(params, param("name", "path", "string"));
    if (scoped)
        append(params, param("namespace", "path", "string"));
    append(params, query_param("pretty"));
    set(item, "parameters", params);
    set(paths, path, item);
}

#define ADD_PATH(ops, ...)                                                                         \
    add_path(paths, schemas, r, path, ops, sizeof ops / sizeof ops[0], __VA_ARGS__)

static void add_resource_paths(json_t *paths, json_t *schemas, const sk_resource *r,
                               const char *prefix)
{
    char path[512];
    int w;
    if (r->namespaced) {
        w = snprintf(path, sizeof path, "%s/namespaces/{namespace}/%s", prefix, r->resource);
        SK_CHECK(w > 0 && (size_t)w < sizeof path);
        ADD_PATH(collection_ops, 1, 0, "");
        w = snprintf(path, sizeof path, "%s/namespaces/{namespace}/%s/{name}", prefix, r->resource);
        SK_CHECK(w > 0 && (size_t)w < sizeof path);
        ADD_PATH(item_ops, 1, 1, "");
        w = snprintf(path, sizeof path, "%s/%s", prefix, r->resource);
        SK_CHECK(w > 0 && (size_t)w < sizeof path);
        ADD_PATH(all_namespaces_ops, 0, 0, "ForAllNamespaces");
    } else {
        w = snprintf(path, sizeof path, "%s/%s", prefix, r->resource);
        SK_CHECK(w > 0 && (size_t)w < sizeof path);
        ADD_PATH(collection_ops, 0, 0, "");
        w = snprintf(path, sizeof path, "%s/%s/{name}", prefix, r->resource);
        SK_CHECK(w > 0 && (size_t)w < sizeof path);
        ADD_PATH(item_ops, 0, 1, "");
    }
}

/* ---- documents and cache -------------------------------------------------- */

typedef struct gv_doc {
    char *path;   /* "api/v1" */
    json_t *json; /* kept for the schema accessors; never modified after build */
    char *text;
    size_t len;
    char hash[SK_OPENAPI_HASH_LEN + 1];
} gv_doc;

static struct {
    gv_doc *docs;
    size_t n_docs;
    char *root;
    size_t root_len;
} st;

static pthread_once_t once = PTHREAD_ONCE_INIT;

void sk_openapi_hash(const void *data, size_t len, char out[SK_OPENAPI_HASH_LEN + 1])
{
    unsigned char digest[SK_OPENAPI_HASH_LEN / 2];
    SK_CHECK(gnutls_hash_fast(GNUTLS_DIG_SHA512, data, len, digest) == 0);
    for (size_t i = 0; i < sizeof digest; i++)
        snprintf(out + 2 * i, 3, "%02X", digest[i]);
}

static json_t *gv_document(const sk_discovery_gv *gv)
{
    char prefix[256];
    int w = gv->group[0] ? snprintf(prefix, sizeof prefix, "/apis/%s/%s", gv->group, gv->version)
                         : snprintf(prefix, sizeof prefix, "/api/%s", gv->version);
    SK_CHECK(w > 0 && (size_t)w < sizeof prefix);
    json_t *paths = json_object(), *schemas = json_object();
    SK_CHECK_ALLOC(paths);
    SK_CHECK_ALLOC(schemas);
    size_t n;
    const sk_resource *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].group, gv->group) == 0 && strcmp(all[i].version, gv->version) == 0)
            add_resource_paths(paths, schemas, &all[i], prefix);
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o}}", "openapi", "3.0.0", "info", "title",
                     "Kubernetes", "version", "v1.32.0", "paths", paths, "components", "schemas",
                     schemas);
}

static char *serialize(json_t *j, size_t *len)
{
    SK_CHECK_ALLOC(j);
    char *text = json_dumps(j, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    *len = strlen(text);
    json_decref(j);
    return text;
}

static void build(void)
{
    size_t n;
    const sk_resource *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++)
        kind_def(&all[i]);

    const sk_discovery_gv *gvs = sk_discovery_gvs(&st.n_docs);
    st.docs = calloc(st.n_docs, sizeof *st.docs);
    SK_CHECK_ALLOC(st.docs);
    json_t *root_paths = json_object();
    SK_CHECK_ALLOC(root_paths);
    for (size_t i = 0; i < st.n_docs; i++) {
        gv_doc *d = &st.docs[i];
        int w = gvs[i].group[0] ? asprintf(&d->path, "apis/%s", gvs[i].api_version)
                                : asprintf(&d->path, "api/%s", gvs[i].api_version);
        SK_CHECK(w > 0);
        d->json = gv_document(&gvs[i]);
        SK_CHECK_ALLOC(d->json);
        d->text = serialize(json_incref(d->json), &d->len);
        sk_openapi_hash(d->text, d->len, d->hash);
        set(root_paths, d->path,
            json_pack("{s:s+++}", "serverRelativeURL", "/openapi/v3/", d->path, "?hash=", d->hash));
    }
    st.root = serialize(json_pack("{s:o}", "paths", root_paths), &st.root_len);
}

static const gv_doc *find_doc(const char *gv_path)
{
    pthread_once(&once, build);
    for (size_t i = 0; i < st.n_docs; i++)
        if (strcmp(st.docs[i].path, gv_path) == 0)
            return &st.docs[i];
    return NULL;
}

const char *sk_openapi_v3_root_text(size_t *len)
{
    pthread_once(&once, build);
    if (len)
        *len = st.root_len;
    return st.root;
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

/* The components.schemas object of r's group/version document. */
static const json_t *schemas_of(const sk_resource *r)
{
    char path[256];
    int w = r->group[0] ? snprintf(path, sizeof path, "apis/%s/%s", r->group, r->version)
                        : snprintf(path, sizeof path, "api/%s", r->version);
    SK_CHECK(w > 0 && (size_t)w < sizeof path);
    const gv_doc *d = find_doc(path);
    SK_CHECK(d != NULL); /* every registry resource is served in some document */
    return json_object_get(json_object_get(d->json, "components"), "schemas");
}

const json_t *sk_openapi_v3_kind_schema(const sk_resource *r)
{
    char name[256];
    def_name(kind_def(r), name, sizeof name);
    const json_t *s = json_object_get(schemas_of(r), name);
    SK_CHECK(s != NULL);
    return s;
}

const json_t *sk_openapi_v3_deref(const sk_resource *r, const json_t *schema)
{
    const char *ref = json_string_value(json_object_get(schema, "$ref"));
    if (!ref)
        return schema;
    SK_CHECK(strncmp(ref, REF_PREFIX, strlen(REF_PREFIX)) == 0);
    const json_t *s = json_object_get(schemas_of(r), ref + strlen(REF_PREFIX));
    SK_CHECK(s != NULL); /* documents only reference definitions they contain */
    return s;
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
