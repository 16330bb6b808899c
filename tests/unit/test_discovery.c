/*
 * test_discovery.c - the discovery documents match the registry and the
 * kube-apiserver shapes client-go decodes.
 */
#include "kube/discovery.h"
#include "kube/registry.h"

#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    assert_non_null(s);
    return s;
}

static int array_has_string(json_t *a, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) if (strcmp(json_string_value(v), s) == 0) return 1;
    return 0;
}

static void test_version(void **state)
{
    json_t *v = sk_discovery_version();
    assert_non_null(v);
    assert_string_equal(str(v, "major"), "1");
    assert_string_equal(str(v, "minor"), "32");
    assert_string_equal(str(v, "gitVersion"), "v1.32.0-sqlkube." SK_VERSION);
    assert_int_equal(strncmp(str(v, "platform"), "linux/", 6), 0);
    /* The Python client rejects a version.Info with any of these missing. */
    const char *required[] = {"buildDate", "compiler", "gitCommit", "gitTreeState", "goVersion"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        str(v, required[i]);
    json_decref(v);
}

static void test_text_matches_json(void **state)
{
    size_t len = 0;
    const char *text = sk_discovery_groups_text(&len);
    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    assert_ptr_equal(text, sk_discovery_groups_text(NULL)); /* cached, not rebuilt */
    json_t *parsed = json_loadb(text, len, 0, NULL), *j = sk_discovery_groups();
    assert_true(json_equal(parsed, j));
    /* json_t variants are private copies: changing one leaves the cache intact. */
    json_object_set_new(j, "kind", json_string("Mutated"));
    json_t *again = sk_discovery_groups();
    assert_string_equal(str(again, "kind"), "APIGroupList");
    json_decref(parsed);
    json_decref(j);
    json_decref(again);
}

static void test_core_versions(void **state)
{
    json_t *v = sk_discovery_core_versions();
    assert_string_equal(str(v, "kind"), "APIVersions");
    assert_true(array_has_string(json_object_get(v, "versions"), "v1"));
    assert_true(json_is_array(json_object_get(v, "serverAddressByClientCIDRs")));
    json_decref(v);
}

static void test_groups_list_every_non_core_group(void **state)
{
    json_t *list = sk_discovery_groups();
    assert_string_equal(str(list, "kind"), "APIGroupList");
    json_t *groups = json_object_get(list, "groups");
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++) {
        size_t j;
        json_t *g;
        int found = 0;
        json_array_foreach(groups, j, g)
        {
            assert_string_not_equal(str(g, "name"), ""); /* core is served at /api */
            if (strcmp(str(g, "name"), all[i]->group) != 0)
                continue;
            found = 1;
            json_t *pref = json_object_get(g, "preferredVersion");
            char want[128];
            snprintf(want, sizeof want, "%s/%s", all[i]->group,
                     sk_registry_preferred_version(all[i]->group));
            assert_string_equal(str(pref, "groupVersion"), want);
        }
        assert_int_equal(found, all[i]->group[0] != '\0');
    }
    json_decref(list);
}

static void test_group(void **state)
{
    assert_null(sk_discovery_group(""));
    assert_null(sk_discovery_group("extensions"));
    assert_null(sk_discovery_group_text("extensions", NULL));
    /* Two versions, the preferred first (kube-aggregator's order). */
    json_t *as = sk_discovery_group("autoscaling");
    assert_non_null(as);
    json_t *versions = json_object_get(as, "versions");
    assert_int_equal(json_array_size(versions), 2);
    assert_string_equal(str(json_array_get(versions, 0), "groupVersion"), "autoscaling/v2");
    assert_string_equal(str(json_array_get(versions, 1), "groupVersion"), "autoscaling/v1");
    assert_string_equal(str(json_object_get(as, "preferredVersion"), "version"), "v2");
    json_decref(as);
    json_t *g = sk_discovery_group("coordination.k8s.io");
    assert_non_null(g);
    assert_string_equal(str(g, "kind"), "APIGroup");
    assert_string_equal(str(g, "apiVersion"), "v1");
    assert_string_equal(str(g, "name"), "coordination.k8s.io");
    json_t *v0 = json_array_get(json_object_get(g, "versions"), 0);
    assert_string_equal(str(v0, "groupVersion"), "coordination.k8s.io/v1");
    assert_string_equal(str(v0, "version"), "v1");
    json_decref(g);
}

static json_t *find_resource(json_t *list, const char *name)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(list, "resources"), i,
                       r) if (strcmp(str(r, "name"), name) == 0) return r;
    return NULL;
}

static void test_resources_cover_registry(void **state)
{
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++) {
        json_t *list = sk_discovery_resources(all[i]->group, all[i]->version);
        assert_non_null(list);
        assert_string_equal(str(list, "kind"), "APIResourceList");
        assert_string_equal(str(list, "groupVersion"), all[i]->api_version);
        json_t *r = find_resource(list, all[i]->resource);
        assert_non_null(r);
        assert_string_equal(str(r, "kind"), all[i]->kind);
        assert_string_equal(str(r, "singularName"), all[i]->singular);
        assert_int_equal(json_is_true(json_object_get(r, "namespaced")), all[i]->namespaced);
        json_t *verbs = json_object_get(r, "verbs");
        for (unsigned v = 0; v < SK_VERB_COUNT; v++)
            assert_int_equal(array_has_string(verbs, sk_registry_verb_name(1u << v)),
                             (all[i]->verbs & (1u << v)) != 0);
        /* Subresources are entries of their own: "pods/status". */
        for (size_t k = 0; k < all[i]->n_subresources; k++) {
            char name[128];
            snprintf(name, sizeof name, "%s/%s", all[i]->resource, all[i]->subresources[k].name);
            assert_non_null(find_resource(list, name));
        }
        json_t *shorts = json_object_get(r, "shortNames");
        size_t n_short = 0;
        while (all[i]->short_names[n_short])
            assert_true(array_has_string(shorts, all[i]->short_names[n_short++]));
        assert_int_equal(json_array_size(shorts), n_short);
        json_decref(list);
    }
}

static void test_storage_version_hash_matches_kube(void **state)
{
    /* Value kube-apiserver reports for configmaps: base64(sha256("/v1/ConfigMap")[:8]). */
    json_t *list = sk_discovery_resources("", "v1");
    assert_string_equal(str(find_resource(list, "configmaps"), "storageVersionHash"),
                        "qFsyl6wFWjQ=");
    json_decref(list);
}

static void test_unknown_group_version(void **state)
{
    assert_null(sk_discovery_resources("", "v2"));
    assert_null(sk_discovery_resources("apps", "v1beta1"));
    assert_null(sk_discovery_resources_text("coordination.k8s.io", "v1beta1", NULL));
}

/* Verbs and subresources as kube-apiserver 1.32 serves them. */
static void test_kube_facts(void **state)
{
    json_t *core = sk_discovery_resources("", "v1");
    json_t *ns = json_object_get(find_resource(core, "namespaces"), "verbs");
    assert_false(array_has_string(ns, "deletecollection"));
    json_t *cs = json_object_get(find_resource(core, "componentstatuses"), "verbs");
    assert_int_equal(json_array_size(cs), 2); /* get, list */
    json_t *pods = find_resource(core, "pods");
    assert_true(array_has_string(json_object_get(pods, "categories"), "all"));
    assert_true(array_has_string(json_object_get(pods, "shortNames"), "po"));
    assert_non_null(find_resource(core, "pods/log"));
    assert_non_null(find_resource(core, "pods/eviction"));
    json_decref(core);
    json_t *apps = sk_discovery_resources("apps", "v1");
    json_t *scale = find_resource(apps, "deployments/scale");
    assert_non_null(scale);
    assert_string_equal(str(scale, "group"), "autoscaling");
    assert_string_equal(str(scale, "version"), "v1");
    assert_string_equal(str(scale, "kind"), "Scale");
    json_decref(apps);
}

/* Aggregated discovery: what kubectl 1.32 asks for first. */
static void test_aggregated(void **state)
{
    const char *accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                         "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
                         "application/json";
    assert_string_equal(sk_discovery_aggregated_version(accept), "v2");
    assert_null(sk_discovery_aggregated_version("application/json"));
    assert_null(sk_discovery_aggregated_version(NULL));
    json_t *apis = sk_discovery_aggregated(0, "v2");
    assert_non_null(apis);
    assert_string_equal(str(apis, "kind"), "APIGroupDiscoveryList");
    assert_string_equal(str(apis, "apiVersion"), "apidiscovery.k8s.io/v2");
    size_t i;
    json_t *g;
    int saw_apps = 0;
    json_array_foreach(json_object_get(apis, "items"), i, g)
    {
        const char *name = str(json_object_get(g, "metadata"), "name");
        if (strcmp(name, "apps") != 0)
            continue;
        saw_apps = 1;
        json_t *v = json_array_get(json_object_get(g, "versions"), 0);
        assert_string_equal(str(v, "version"), "v1");
        size_t j;
        json_t *r;
        int saw_deployments = 0;
        json_array_foreach(json_object_get(v, "resources"), j, r)
        {
            if (strcmp(str(r, "resource"), "deployments") != 0)
                continue;
            saw_deployments = 1;
            assert_string_equal(str(r, "scope"), "Namespaced");
            assert_string_equal(str(json_object_get(r, "responseKind"), "kind"), "Deployment");
        }
        assert_true(saw_deployments);
    }
    assert_true(saw_apps);
    json_decref(apis);
    json_t *core = sk_discovery_aggregated(1, "v2beta1");
    assert_string_equal(str(core, "apiVersion"), "apidiscovery.k8s.io/v2beta1");
    assert_int_equal(json_array_size(json_object_get(core, "items")), 1);
    json_decref(core);
}

static void *first_use(void *arg)
{
    return (void *)sk_discovery_resources_text("", "v1", NULL);
}

static void test_concurrent_first_use_is_shared(void **state)
{
    pthread_t t[4];
    void *out[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, first_use, NULL), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(t[i], &out[i]), 0);
    for (int i = 1; i < 4; i++)
        assert_ptr_equal(out[i], out[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_first_use_is_shared),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_text_matches_json),
        cmocka_unit_test(test_core_versions),
        cmocka_unit_test(test_groups_list_every_non_core_group),
        cmocka_unit_test(test_group),
        cmocka_unit_test(test_resources_cover_registry),
        cmocka_unit_test(test_storage_version_hash_matches_kube),
        cmocka_unit_test(test_unknown_group_version),
        cmocka_unit_test(test_kube_facts),
        cmocka_unit_test(test_aggregated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
