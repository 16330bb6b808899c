/*
 * test_openapi.c - the OpenAPI v3 documents carry what kubectl 1.32 looks
 * for: per-kind PATCH operations with an inline fieldValidation parameter
 * and GVK extension, GVK-tagged component schemas with patch metadata, and
 * a root whose hashes match the document bytes.
 */
#include "kube/discovery.h"
#include "kube/openapi.h"
#include "kube/registry.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define SCHEMA_PREFIX "#/components/schemas/"

static void gv_path(const sk_resource *r, char *out, size_t cap)
{
    if (r->group[0])
        snprintf(out, cap, "apis/%s/%s", r->group, r->version);
    else
        snprintf(out, cap, "api/%s", r->version);
}

static json_t *doc_for(const sk_resource *r)
{
    char path[256];
    gv_path(r, path, sizeof path);
    json_t *doc = sk_openapi_v3_doc(path);
    assert_non_null(doc);
    return doc;
}

static json_t *get_path(json_t *o, const char *const *keys)
{
    for (; o && *keys; keys++)
        o = json_object_get(o, *keys);
    return o;
}

/* The item path of r, e.g. /api/v1/namespaces/{namespace}/configmaps/{name}. */
static json_t *path_item(json_t *doc, const sk_resource *r, int item)
{
    char prefix[256], path[512];
    gv_path(r, prefix, sizeof prefix);
    snprintf(path, sizeof path, "/%s%s/%s%s", prefix,
             r->namespaced ? "/namespaces/{namespace}" : "", r->resource, item ? "/{name}" : "");
    return json_object_get(json_object_get(doc, "paths"), path);
}

static json_t *query_param(json_t *op, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(op, "parameters"), i, p)
    {
        if (strcmp(json_string_value(json_object_get(p, "name")), name) == 0 &&
            strcmp(json_string_value(json_object_get(p, "in")), "query") == 0)
            return p;
    }
    return NULL;
}

static void assert_gvk(json_t *gvk, const char *group, const char *version, const char *kind)
{
    assert_non_null(gvk);
    assert_string_equal(json_string_value(json_object_get(gvk, "group")), group);
    assert_string_equal(json_string_value(json_object_get(gvk, "version")), version);
    assert_string_equal(json_string_value(json_object_get(gvk, "kind")), kind);
}

static json_t *schema_named(json_t *doc, const char *ref)
{
    assert_int_equal(strncmp(ref, SCHEMA_PREFIX, strlen(SCHEMA_PREFIX)), 0);
    const char *keys[] = {"components", "schemas", ref + strlen(SCHEMA_PREFIX), NULL};
    return get_path(doc, keys);
}

/* The component schema tagged with exactly this GVK (what kubectl apply looks up). */
static json_t *schema_for_gvk(json_t *doc, const char *group, const char *version, const char *kind)
{
    const char *keys[] = {"components", "schemas", NULL};
    const char *name;
    json_t *s;
    json_object_foreach(get_path(doc, keys), name, s)
    {
        size_t i;
        json_t *gvk;
        json_array_foreach(json_object_get(s, "x-kubernetes-group-version-kind"), i, gvk)
        {
            if (strcmp(json_string_value(json_object_get(gvk, "group")), group) == 0 &&
                strcmp(json_string_value(json_object_get(gvk, "version")), version) == 0 &&
                strcmp(json_string_value(json_object_get(gvk, "kind")), kind) == 0)
                return s;
        }
    }
    return NULL;
}

/* The schema a property points at: "$ref", or kube-openapi's {"allOf": [{"$ref"}]}. */
static const char *ref_of(json_t *prop)
{
    json_t *ref = json_object_get(prop, "$ref");
    if (!ref)
        ref = json_object_get(json_array_get(json_object_get(prop, "allOf"), 0), "$ref");
    return json_string_value(ref);
}

/* Every $ref anywhere in v must name a schema present in doc. */
static void assert_refs_resolve(json_t *doc, json_t *v)
{
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) assert_refs_resolve(doc, e);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e)
        {
            if (strcmp(k, "$ref") == 0)
                assert_non_null(schema_named(doc, json_string_value(e)));
            else
                assert_refs_resolve(doc, e);
        }
    }
}

static void test_root_lists_every_gv_with_its_hash(void **state)
{
    size_t len, n;
    const char *text = sk_openapi_v3_root_text(&len);
    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    json_t *root = sk_openapi_v3_root();
    json_t *paths = json_object_get(root, "paths");
    const sk_discovery_gv *gvs = sk_discovery_gvs(&n);
    assert_int_equal(json_object_size(paths), n);
    for (size_t i = 0; i < n; i++) {
        char path[256], url[512], hash[SK_OPENAPI_HASH_LEN + 1];
        snprintf(path, sizeof path, "%s/%s", gvs[i].group[0] ? "apis" : "api", gvs[i].api_version);
        size_t doc_len;
        const char *doc = sk_openapi_v3_doc_text(path, &doc_len);
        assert_non_null(doc);
        sk_openapi_hash(doc, doc_len, hash);
        assert_string_equal(sk_openapi_v3_doc_hash(path), hash);
        snprintf(url, sizeof url, "/openapi/v3/%s?hash=%s", path, hash);
        const char *keys[] = {path, "serverRelativeURL", NULL};
        assert_string_equal(json_string_value(get_path(paths, keys)), url);
    }
    json_decref(root);
}

static void test_unknown_gv_path(void **state)
{
    assert_null(sk_openapi_v3_doc("apis/apps/v1beta1"));
    assert_null(sk_openapi_v3_doc_text("/api/v1", NULL)); /* keys have no leading slash */
    assert_null(sk_openapi_v3_doc_hash("api/v2"));
}

static void test_hash(void **state)
{
    char a[SK_OPENAPI_HASH_LEN + 1], b[SK_OPENAPI_HASH_LEN + 1], c[SK_OPENAPI_HASH_LEN + 1];
    sk_openapi_hash("", 0, a);
    /* SHA-512("") in upper-case hex, as kube-openapi formats its ETag. */
    assert_string_equal(a, "CF83E1357EEFB8BDF1542850D66D8007D620E4050B5715DC83F4A921D36CE9CE"
                           "47D0D13C5D85F2B0FF8318D2877EEC2F63B931BD47417A81A538327AF927DA3E");
    sk_openapi_hash("{\"a\":1}", 7, b);
    sk_openapi_hash("{\"a\":1}", 7, c);
    assert_string_equal(b, c);
    sk_openapi_hash("{\"a\":2}", 7, c);
    assert_string_not_equal(b, c);
    /* Documents are cached: the same bytes on every call. */
    assert_ptr_equal(sk_openapi_v3_doc_text("api/v1", NULL),
                     sk_openapi_v3_doc_text("api/v1", NULL));
}

static void test_operations_per_resource(void **state)
{
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++) {
        const sk_resource *r = all[i];
        json_t *doc = doc_for(r);
        json_t *item = path_item(doc, r, 1), *coll = path_item(doc, r, 0);
        const struct {
            json_t *path;
            unsigned verb;
            const char *method, *action;
            int writes;
        } ops[] = {
            {item, SK_VERB_GET, "get", "get", 0},
            {item, SK_VERB_UPDATE, "put", "put", 1},
            {item, SK_VERB_PATCH, "patch", "patch", 1},
            {item, SK_VERB_DELETE, "delete", "delete", 0},
            {coll, SK_VERB_LIST, "get", "list", 0},
            {coll, SK_VERB_CREATE, "post", "post", 1},
            {coll, SK_VERB_DELETECOLLECTION, "delete", "deletecollection", 0},
        };
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            json_t *op = json_object_get(ops[o].path, ops[o].method);
            /* An operation exactly for each verb the resource has. */
            assert_int_equal(op != NULL, (r->verbs & ops[o].verb) != 0);
            if (!op)
                continue;
            assert_string_equal(json_string_value(json_object_get(op, "x-kubernetes-action")),
                                ops[o].action);
            assert_gvk(json_object_get(op, "x-kubernetes-group-version-kind"), r->group, r->version,
                       r->kind);
            if (ops[o].writes) {
                assert_non_null(query_param(op, "fieldValidation"));
                assert_non_null(query_param(op, "dryRun"));
                assert_non_null(query_param(op, "fieldManager"));
            }
        }
        if (r->verbs & SK_VERB_PATCH) {
            const char *smp[] = {"patch", "requestBody", "content",
                                 "application/strategic-merge-patch+json", NULL};
            assert_non_null(get_path(item, smp));
        }
        if (r->namespaced && (r->verbs & SK_VERB_LIST)) {
            char all_ns[256], prefix[128];
            gv_path(r, prefix, sizeof prefix);
            snprintf(all_ns, sizeof all_ns, "/%s/%s", prefix, r->resource);
            const char *keys[] = {"paths", all_ns, "get", NULL};
            assert_non_null(get_path(doc, keys));
        }
        assert_refs_resolve(doc, doc);
        json_decref(doc);
    }
    /* Like kube-apiserver, namespaces have no deletecollection. */
    json_t *core = sk_openapi_v3_doc("api/v1");
    const char *ns_delete[] = {"paths", "/api/v1/namespaces", "delete", NULL};
    assert_null(get_path(core, ns_delete));
    /* Subresources with the kind they exchange: status (the parent's), scale (autoscaling/v1). */
    const char *status[] = {"paths", "/api/v1/namespaces/{namespace}/pods/{name}/status", "put",
                            NULL};
    json_t *op = get_path(core, status);
    assert_non_null(op);
    assert_string_equal(json_string_value(json_object_get(op, "operationId")),
                        "replaceCoreV1NamespacedPodStatus");
    assert_gvk(json_object_get(op, "x-kubernetes-group-version-kind"), "", "v1", "Pod");
    json_decref(core);
    json_t *apps = sk_openapi_v3_doc("apis/apps/v1");
    const char *scale[] = {"paths", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
                           "patch", NULL};
    op = get_path(apps, scale);
    assert_non_null(op);
    assert_string_equal(json_string_value(json_object_get(op, "operationId")),
                        "patchAppsV1NamespacedDeploymentScale");
    assert_gvk(json_object_get(op, "x-kubernetes-group-version-kind"), "autoscaling", "v1", "Scale");
    assert_non_null(schema_for_gvk(apps, "autoscaling", "v1", "Scale"));
    json_decref(apps);
}

static void test_kind_schemas(void **state)
{
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++) {
        const sk_resource *r = all[i];
        json_t *doc = doc_for(r);
        json_t *kind = schema_for_gvk(doc, r->group, r->version, r->kind);
        assert_non_null(kind);
        json_t *props = json_object_get(kind, "properties");
        assert_non_null(json_object_get(props, "apiVersion"));
        assert_non_null(json_object_get(props, "kind"));
        if (json_object_get(props, "metadata")) /* reviews (TokenReview...) have metadata too */
            assert_string_equal(ref_of(json_object_get(props, "metadata")),
                                SCHEMA_PREFIX "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
        /* kubectl explain prints these. */
        assert_non_null(json_string_value(json_object_get(json_object_get(props, "kind"),
                                                          "description")));
        if (r->list_kind) {
            json_t *list = schema_for_gvk(doc, r->group, r->version, r->list_kind);
            assert_non_null(list);
            const char *items[] = {"properties", "items", "items", NULL};
            assert_ptr_equal(schema_named(doc, ref_of(get_path(list, items))), kind);
        }
        /* Deletions answer with a Status and take DeleteOptions; a group of
         * create-only reviews (authorization.k8s.io) has neither. */
        if (r->verbs & (SK_VERB_DELETE | SK_VERB_DELETECOLLECTION)) {
            assert_non_null(schema_for_gvk(doc, "", "v1", "Status"));
            assert_non_null(schema_for_gvk(doc, r->group, r->version, "DeleteOptions"));
        }
        json_decref(doc);
    }
}

static void test_object_meta_patch_metadata(void **state)
{
    json_t *doc = sk_openapi_v3_doc("api/v1");
    const char *keys[] = {"components", "schemas",
                          "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "properties", NULL};
    json_t *props = get_path(doc, keys);
    assert_non_null(props);
    json_t *owners = json_object_get(props, "ownerReferences");
    assert_string_equal(json_string_value(json_object_get(owners, "x-kubernetes-patch-strategy")),
                        "merge");
    assert_string_equal(json_string_value(json_object_get(owners, "x-kubernetes-patch-merge-key")),
                        "uid");
    json_t *fin = json_object_get(props, "finalizers");
    assert_string_equal(json_string_value(json_object_get(fin, "x-kubernetes-patch-strategy")),
                        "merge");
    const char *map_values[] = {"additionalProperties", "type", NULL};
    assert_string_equal(json_string_value(get_path(json_object_get(props, "labels"), map_values)),
                        "string");
    assert_string_equal(
        json_string_value(get_path(json_object_get(props, "annotations"), map_values)), "string");
    /* Server-set fields must be declared, or apply's patch-meta walk fails on them. */
    const char *server_set[] = {"creationTimestamp", "managedFields",    "resourceVersion", "uid",
                                "generation",        "deletionTimestamp"};
    for (size_t i = 0; i < sizeof server_set / sizeof server_set[0]; i++)
        assert_non_null(json_object_get(props, server_set[i]));
    json_decref(doc);
}

/* "Kind.prop.prop" -> the property schema, following $refs. */
static json_t *field(json_t *doc, const char *group, const char *kind, const char *dotted)
{
    json_t *s = schema_for_gvk(doc, group, "v1", kind);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", dotted);
    for (char *save, *part = strtok_r(buf, ".", &save); part && s;
         part = strtok_r(NULL, ".", &save)) {
        if (ref_of(s))
            s = schema_named(doc, ref_of(s));
        s = json_object_get(json_object_get(s, "properties"), part);
    }
    assert_non_null(s);
    return s;
}

static void assert_field_type(json_t *doc, const char *group, const char *kind, const char *dotted,
                              const char *type)
{
    json_t *s = field(doc, group, kind, dotted);
    if (ref_of(s))
        s = schema_named(doc, ref_of(s));
    assert_string_equal(json_string_value(json_object_get(s, "type")), type);
}

static void test_kind_fields(void **state)
{
    json_t *core = sk_openapi_v3_doc("api/v1");
    const struct {
        const char *kind, *field, *type;
    } core_fields[] = {
        {"ConfigMap", "data", "object"},
        {"ConfigMap", "binaryData", "object"},
        {"ConfigMap", "immutable", "boolean"},
        {"Secret", "data", "object"},
        {"Secret", "stringData", "object"},
        {"Secret", "type", "string"},
        {"Secret", "immutable", "boolean"},
        {"ServiceAccount", "secrets", "array"},
        {"ServiceAccount", "imagePullSecrets", "array"},
        {"ServiceAccount", "automountServiceAccountToken", "boolean"},
        {"Namespace", "spec.finalizers", "array"},
        {"Namespace", "status.phase", "string"},
        {"Event", "involvedObject.name", "string"},
        {"Event", "count", "integer"},
        {"Event", "firstTimestamp", "string"},
        {"Event", "source.component", "string"},
        {"Event", "series.lastObservedTime", "string"},
    };
    for (size_t i = 0; i < sizeof core_fields / sizeof core_fields[0]; i++)
        assert_field_type(core, "", core_fields[i].kind, core_fields[i].field, core_fields[i].type);
    const char *byte_format[] = {"additionalProperties", "format", NULL};
    assert_string_equal(json_string_value(get_path(field(core, "", "Secret", "data"), byte_format)),
                        "byte");
    json_t *secrets = field(core, "", "ServiceAccount", "secrets");
    assert_string_equal(json_string_value(json_object_get(secrets, "x-kubernetes-patch-merge-key")),
                        "name");
    json_decref(core);

    json_t *coord = sk_openapi_v3_doc("apis/coordination.k8s.io/v1");
    const char *lease_fields[][2] = {
        {"spec.holderIdentity", "string"},    {"spec.leaseDurationSeconds", "integer"},
        {"spec.acquireTime", "string"},       {"spec.renewTime", "string"},
        {"spec.leaseTransitions", "integer"}, {"spec.strategy", "string"},
        {"spec.preferredHolder", "string"},
    };
    for (size_t i = 0; i < sizeof lease_fields / sizeof lease_fields[0]; i++)
        assert_field_type(coord, "coordination.k8s.io", "Lease", lease_fields[i][0],
                          lease_fields[i][1]);
    json_decref(coord);
}

/* /openapi/v2: one swagger document with every served path and its definitions. */
static void test_v2_document(void **state)
{
    json_t *doc = sk_openapi_v2();
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "swagger")), "2.0");
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++)
        if (all[i]->verbs & SK_VERB_CREATE) {
            char prefix[256], path[512];
            gv_path(all[i], prefix, sizeof prefix);
            snprintf(path, sizeof path, "/%s%s/%s", prefix,
                     all[i]->namespaced ? "/namespaces/{namespace}" : "", all[i]->resource);
            const char *keys[] = {"paths", path, "post", NULL};
            json_t *post = get_path(doc, keys);
            assert_non_null(post);
            json_t *body = json_array_get(json_object_get(post, "parameters"), 0);
            assert_string_equal(json_string_value(json_object_get(body, "in")), "body");
            const char *ref = json_string_value(json_object_get(json_object_get(body, "schema"), "$ref"));
            assert_non_null(ref);
            assert_int_equal(strncmp(ref, "#/definitions/", 14), 0);
            assert_non_null(json_object_get(json_object_get(doc, "definitions"), ref + 14));
        }
    const char *pod[] = {"definitions", "io.k8s.api.core.v1.PodSpec", "properties", "containers",
                         "x-kubernetes-patch-merge-key", NULL};
    assert_string_equal(json_string_value(get_path(doc, pod)), "name");
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_root_lists_every_gv_with_its_hash),
        cmocka_unit_test(test_unknown_gv_path),
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_operations_per_resource),
        cmocka_unit_test(test_kind_schemas),
        cmocka_unit_test(test_object_meta_patch_metadata),
        cmocka_unit_test(test_kind_fields),
        cmocka_unit_test(test_v2_document),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
