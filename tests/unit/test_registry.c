/*
 * test_registry.c - the registry's custom resources: installing a CRD
 * serves its served versions (found by resource and by kind, listed after
 * the built-in kinds in kube's version order, stored in the storage
 * version's form), a second install of the same served form changes
 * nothing, a changed one replaces the rows while the old ones stay readable,
 * a version a built-in kind already has is not served, and removing stops
 * serving; plus kube's version priority order.
 */
#include "kube/registry.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static json_t *crd(const char *versions)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":"
             "\"example.com\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\","
             "\"singular\":\"widget\",\"kind\":\"Widget\",\"listKind\":\"WidgetList\","
             "\"shortNames\":[\"wd\"],\"categories\":[\"all\"]},\"versions\":%s}}",
             versions);
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    if (!j)
        fail_msg("bad test JSON: %s", err.text);
    return j;
}

static void test_version_order(void **state)
{
    (void)state;
    const char *ordered[] = {"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1",
                             "v11alpha2", "foo1", "foo10"};
    size_t n = sizeof ordered / sizeof ordered[0];
    for (size_t i = 0; i + 1 < n; i++) {
        assert_true(sk_registry_version_cmp(ordered[i], ordered[i + 1]) < 0);
        assert_true(sk_registry_version_cmp(ordered[i + 1], ordered[i]) > 0);
    }
    assert_int_equal(sk_registry_version_cmp("v1", "v1"), 0);
}

static void test_install_and_remove(void **state)
{
    (void)state;
    size_t n0;
    sk_registry_all(&n0);
    unsigned long gen0 = sk_registry_generation();
    assert_null(sk_registry_find("example.com", "v1", "widgets"));

    json_t *c = crd("[{\"name\":\"v1beta1\",\"served\":true,\"storage\":false},"
                    "{\"name\":\"v1\",\"served\":true,\"storage\":true,"
                    "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\"}},"
                    "\"subresources\":{\"status\":{},\"scale\":{\"specReplicasPath\":"
                    "\".spec.replicas\",\"statusReplicasPath\":\".status.replicas\"}},"
                    "\"selectableFields\":[{\"jsonPath\":\".spec.color\"}]},"
                    "{\"name\":\"v0\",\"served\":false,\"storage\":false}]");
    sk_registry_install(c);
    assert_int_not_equal(sk_registry_generation(), gen0);
    const sk_resource *v1 = sk_registry_find("example.com", "v1", "widgets");
    const sk_resource *beta = sk_registry_find("example.com", "v1beta1", "widgets");
    assert_non_null(v1);
    assert_non_null(beta);
    assert_null(sk_registry_find("example.com", "v0", "widgets")); /* not served */
    assert_ptr_equal(sk_registry_find_kind("example.com", "v1", "Widget"), v1);
    assert_string_equal(v1->storage, "widgets.example.com");
    assert_string_equal(beta->storage, "widgets.example.com");
    assert_ptr_equal(beta->stored_as, v1);
    assert_ptr_equal(v1->stored_as, v1);
    assert_true(v1->namespaced);
    assert_null(v1->schema);
    assert_non_null(v1->custom);
    assert_string_equal(json_string_value(json_object_get(v1->custom->schema, "type")), "object");
    assert_null(beta->custom->schema);
    assert_string_equal(v1->custom->spec_replicas, ".spec.replicas");
    assert_string_equal(v1->short_names[0], "wd");
    assert_null(v1->short_names[1]);
    assert_string_equal(v1->field_selectors[0], "spec.color");
    assert_non_null(sk_registry_subresource(v1, "status"));
    assert_string_equal(sk_registry_subresource(v1, "scale")->kind, "Scale");
    assert_null(sk_registry_subresource(beta, "status"));
    assert_string_equal(sk_registry_preferred_version("example.com"), "v1");

    /* after every built-in kind, preferred version first */
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    assert_int_equal(n, n0 + 2);
    assert_ptr_equal(all[n - 2], v1);
    assert_ptr_equal(all[n - 1], beta);

    /* the same served form again: nothing changes */
    unsigned long gen1 = sk_registry_generation();
    json_object_set_new(json_object_get(c, "metadata"), "resourceVersion", json_string("9"));
    sk_registry_install(c);
    assert_int_equal(sk_registry_generation(), gen1);
    assert_ptr_equal(sk_registry_find("example.com", "v1", "widgets"), v1);

    /* a changed form replaces the rows; the old ones stay readable */
    json_decref(c);
    c = crd("[{\"name\":\"v1\",\"served\":true,\"storage\":true}]");
    sk_registry_install(c);
    json_decref(c);
    assert_ptr_not_equal(sk_registry_find("example.com", "v1", "widgets"), v1);
    assert_null(sk_registry_find("example.com", "v1beta1", "widgets"));
    assert_string_equal(v1->kind, "Widget");
    assert_string_equal(json_string_value(json_object_get(v1->custom->schema, "type")), "object");

    sk_registry_remove("widgets.example.com");
    assert_null(sk_registry_find("example.com", "v1", "widgets"));
    sk_registry_all(&n);
    assert_int_equal(n, n0);
    sk_registry_remove("widgets.example.com"); /* a no-op */
}

static void test_builtin_wins(void **state)
{
    (void)state;
    const sk_resource *cm = sk_registry_find("", "v1", "configmaps");
    json_error_t err;
    json_t *c = json_loads(
        "{\"metadata\":{\"name\":\"deployments.apps\"},\"spec\":{\"group\":\"apps\","
        "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"deployments\",\"kind\":\"Deployment\","
        "\"listKind\":\"DeploymentList\",\"singular\":\"deployment\"},"
        "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true}]}}",
        0, &err);
    assert_non_null(c);
    const sk_resource *dep = sk_registry_find("apps", "v1", "deployments");
    sk_registry_install(c);
    json_decref(c);
    assert_ptr_equal(sk_registry_find("apps", "v1", "deployments"), dep);
    assert_null(dep->custom);
    assert_ptr_equal(sk_registry_find("", "v1", "configmaps"), cm);
    sk_registry_remove("deployments.apps");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_order),
        cmocka_unit_test(test_install_and_remove),
        cmocka_unit_test(test_builtin_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
