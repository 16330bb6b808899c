/*
 * test_lifecycle.c - the deletion rules of kube/lifecycle: what a delete
 * does to an object (removed, marked, or left as it is), the finalizers a
 * propagation policy leaves, pods' grace periods, namespaces' first and
 * last deletes and the immortal ones, preconditions with kube's messages,
 * and when an update removes an object, plus DeleteOptions decoding.
 */
#include "kube/lifecycle.h"
#include "kube/options.h"
#include "kube/registry.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NOW 1780000000 /* 2026-05-28T20:26:40Z */

static json_t *load(const char *s)
{
    json_error_t e;
    json_t *v = json_loads(s, 0, &e);
    if (!v)
        fail_msg("bad JSON in test: %s: %s", s, e.text);
    return v;
}

static const sk_resource *res(const char *resource)
{
    const sk_resource *r = sk_registry_find("", "v1", resource);
    assert_non_null(r);
    return r;
}

static const char *meta_str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

static json_int_t meta_int(const json_t *obj, const char *key)
{
    return json_integer_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* Plans deleting stored (JSON text) with d; *updated is NULL unless MARK. */
static sk_delete_plan plan(const char *resource, const char *stored, const sk_delete_options *d,
                           json_t **updated)
{
    json_t *obj = load(stored);
    sk_delete_plan p = SK_DELETE_NOW;
    char *msg = NULL;
    *updated = NULL;
    assert_int_equal(sk_lifecycle_plan_delete(res(resource), obj, d, NOW, &p, updated, &msg),
                     SK_OK);
    assert_null(msg);
    assert_true((p == SK_DELETE_MARK) == (*updated != NULL));
    json_decref(obj);
    return p;
}

static const char *finalizers_of(const json_t *obj, char *buf, size_t n)
{
    json_t *f = json_object_get(json_object_get(obj, "metadata"), "finalizers");
    char *s = f ? json_dumps(f, JSON_COMPACT) : strdup("none");
    snprintf(buf, n, "%s", s);
    free(s);
    return buf;
}

static void test_plain_object_is_removed(void **state)
{
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    json_t *u;
    assert_int_equal(plan("configmaps", "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}}", &d, &u),
                     SK_DELETE_NOW);
}

static void test_finalizers_mark(void **state)
{
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    json_t *u;
    char buf[128];
    const char *held = "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\",\"generation\":3,"
                       "\"finalizers\":[\"example.com/x\"]}}";
    assert_int_equal(plan("configmaps", held, &d, &u), SK_DELETE_MARK);
    assert_string_equal(meta_str(u, "deletionTimestamp"), "2026-05-28T20:26:40Z");
    assert_int_equal(meta_int(u, "deletionGracePeriodSeconds"), 0);
    assert_int_equal(meta_int(u, "generation"), 4);
    assert_string_equal(finalizers_of(u, buf, sizeof buf), "[\"example.com/x\"]");
    /* deleting it again changes nothing */
    char *again = json_dumps(u, 0);
    json_decref(u);
    assert_int_equal(plan("configmaps", again, &d, &u), SK_DELETE_PENDING);
    free(again);
}

static void test_propagation_finalizers(void **state)
{
    json_t *u;
    char buf[128];
    const char *held = "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\","
                       "\"finalizers\":[\"example.com/x\",\"foregroundDeletion\"]}}";
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    d.propagation = SK_PROPAGATION_ORPHAN;
    assert_int_equal(plan("configmaps", held, &d, &u), SK_DELETE_MARK);
    assert_string_equal(finalizers_of(u, buf, sizeof buf), "[\"example.com/x\",\"orphan\"]");
    json_decref(u);
    /* orphanDependents=false is a cascading (foreground-less) delete */
    d = (sk_delete_options)SK_DELETE_OPTIONS_INIT;
    d.orphan_dependents = 0;
    assert_int_equal(plan("configmaps", held, &d, &u), SK_DELETE_MARK);
    assert_string_equal(finalizers_of(u, buf, sizeof buf), "[\"example.com/x\"]");
    json_decref(u);
    /* with no option, the finalizer there says what to do */
    d = (sk_delete_options)SK_DELETE_OPTIONS_INIT;
    assert_int_equal(plan("configmaps", held, &d, &u), SK_DELETE_MARK);
    assert_string_equal(finalizers_of(u, buf, sizeof buf),
                        "[\"example.com/x\",\"foregroundDeletion\"]");
    json_decref(u);
    /* Foreground on a plain object keeps it for the garbage collector */
    d.propagation = SK_PROPAGATION_FOREGROUND;
    assert_int_equal(plan("configmaps", "{\"metadata\":{\"name\":\"b\",\"uid\":\"u\"}}", &d, &u),
                     SK_DELETE_MARK);
    assert_string_equal(finalizers_of(u, buf, sizeof buf), "[\"foregroundDeletion\"]");
    json_decref(u);
    d.propagation = SK_PROPAGATION_BACKGROUND;
    assert_int_equal(plan("configmaps", "{\"metadata\":{\"name\":\"b\",\"uid\":\"u\"}}", &d, &u),
                     SK_DELETE_NOW);
}

static void test_pod_grace(void **state)
{
    json_t *u;
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    const char *bound = "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"spec\":{\"nodeName\":\"n\","
                        "\"terminationGracePeriodSeconds\":30}}";
    assert_int_equal(plan("pods", bound, &d, &u), SK_DELETE_MARK);
    assert_int_equal(meta_int(u, "deletionGracePeriodSeconds"), 30);
    assert_string_equal(meta_str(u, "deletionTimestamp"), "2026-05-28T20:27:10Z");
    char *marked = json_dumps(u, 0);
    json_decref(u);
    /* a longer or equal grace period is not taken; a shorter one is */
    d.has_grace = 1;
    d.grace_s = 60;
    assert_int_equal(plan("pods", marked, &d, &u), SK_DELETE_PENDING);
    d.grace_s = 10;
    assert_int_equal(plan("pods", marked, &d, &u), SK_DELETE_MARK);
    assert_int_equal(meta_int(u, "deletionGracePeriodSeconds"), 10);
    assert_string_equal(meta_str(u, "deletionTimestamp"), "2026-05-28T20:26:50Z");
    json_decref(u);
    /* down to 0: removed */
    d.grace_s = 0;
    assert_int_equal(plan("pods", marked, &d, &u), SK_DELETE_NOW);
    free(marked);
    /* an unscheduled pod has no grace period; a negative one counts as 1 */
    d = (sk_delete_options)SK_DELETE_OPTIONS_INIT;
    assert_int_equal(
        plan("pods", "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"spec\":{}}", &d, &u),
        SK_DELETE_NOW);
    d.has_grace = 1;
    d.grace_s = -5;
    assert_int_equal(plan("pods", bound, &d, &u), SK_DELETE_MARK);
    assert_int_equal(meta_int(u, "deletionGracePeriodSeconds"), 1);
    json_decref(u);
}

static void test_namespace(void **state)
{
    json_t *u;
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    const char *active = "{\"metadata\":{\"name\":\"t\",\"uid\":\"u\"},\"spec\":{\"finalizers\":"
                         "[\"kubernetes\"]},\"status\":{\"phase\":\"Active\"}}";
    assert_int_equal(plan("namespaces", active, &d, &u), SK_DELETE_MARK);
    assert_string_equal(json_string_value(json_object_get(json_object_get(u, "status"), "phase")),
                        "Terminating");
    assert_non_null(meta_str(u, "deletionTimestamp"));
    /* while spec.finalizers remain, a delete does nothing */
    char *marked = json_dumps(u, 0);
    json_decref(u);
    assert_int_equal(plan("namespaces", marked, &d, &u), SK_DELETE_PENDING);
    /* dropping the finalizer through an update removes it */
    json_t *old = load(marked), *now = load(marked);
    json_object_set_new(json_object_get(now, "spec"), "finalizers", json_array());
    assert_true(sk_lifecycle_update_deletes(res("namespaces"), old, now));
    json_decref(old);
    json_decref(now);
    free(marked);
    /* the immortal ones */
    json_t *def = load("{\"metadata\":{\"name\":\"kube-node-lease\",\"uid\":\"u\"}}");
    sk_delete_plan p;
    char *msg = NULL;
    assert_int_equal(sk_lifecycle_plan_delete(res("namespaces"), def, &d, NOW, &p, &u, &msg),
                     SK_ERR_FORBIDDEN);
    assert_string_equal(msg,
                        "namespaces \"kube-node-lease\" is forbidden: this namespace may not be "
                        "deleted");
    free(msg);
    json_decref(def);
}

/* Whether a stored namespace takes new content: not once its deletion is
 * committed; a label that merely spells the key does not close it. */
static void test_namespace_open(void **state)
{
    (void)state;
    static const char *const open[] = {
        "{\"metadata\":{\"name\":\"a\"}}",
        "{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"deletionTimestamp\"}}}",
        "{\"metadata\":{\"name\":\"a\",\"deletionTimestamp\":null}}",
        "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"deletionTimestamp\":\"x\"}}}",
        "not JSON but \"deletionTimestamp\"",
    };
    for (size_t i = 0; i < sizeof open / sizeof *open; i++)
        assert_true(sk_lifecycle_namespace_open(open[i], strlen(open[i])));
    const char *closed =
        "{\"metadata\":{\"name\":\"a\",\"deletionTimestamp\":\"2026-11-26T11:00:00Z\"}}";
    assert_false(sk_lifecycle_namespace_open(closed, strlen(closed)));
}

static void test_preconditions(void **state)
{
    json_t *obj = load("{\"metadata\":{\"name\":\"a\",\"uid\":\"u1\",\"resourceVersion\":\"7\"}}");
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    sk_delete_plan p;
    json_t *u = NULL;
    char *msg = NULL;
    d.precondition_uid = "u2";
    assert_int_equal(sk_lifecycle_plan_delete(res("configmaps"), obj, &d, NOW, &p, &u, &msg),
                     SK_ERR_CONFLICT);
    assert_string_equal(msg, "Operation cannot be fulfilled on ConfigMap \"a\": Precondition "
                             "failed: UID in precondition: u2, UID in object meta: u1");
    free(msg);
    msg = NULL;
    d.precondition_uid = NULL;
    d.precondition_rev = 6;
    assert_int_equal(sk_lifecycle_plan_delete(res("configmaps"), obj, &d, NOW, &p, &u, &msg),
                     SK_ERR_CONFLICT);
    assert_string_equal(msg, "Operation cannot be fulfilled on ConfigMap \"a\": Precondition "
                             "failed: ResourceVersion in precondition: 6, ResourceVersion in "
                             "object meta: 7");
    free(msg);
    d.precondition_rev = 7;
    assert_int_equal(sk_lifecycle_plan_delete(res("configmaps"), obj, &d, NOW, &p, &u, &msg),
                     SK_OK);
    assert_int_equal(p, SK_DELETE_NOW);
    json_decref(obj);
}

static void test_update_deletes(void **state)
{
    json_t *old =
        load("{\"metadata\":{\"name\":\"a\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
             "\"deletionGracePeriodSeconds\":0,\"finalizers\":[\"x.io/y\"]}}");
    json_t *kept = load("{\"metadata\":{\"name\":\"a\",\"finalizers\":[\"x.io/y\"]}}");
    json_t *dropped = load("{\"metadata\":{\"name\":\"a\"}}");
    json_t *live = load("{\"metadata\":{\"name\":\"a\",\"finalizers\":[\"x.io/y\"]}}");
    json_t *pod =
        load("{\"metadata\":{\"name\":\"a\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
             "\"deletionGracePeriodSeconds\":30}}");
    assert_false(sk_lifecycle_update_deletes(res("configmaps"), old, kept));
    assert_true(sk_lifecycle_update_deletes(res("configmaps"), old, dropped));
    assert_false(sk_lifecycle_update_deletes(res("configmaps"), live, dropped));
    /* a grace period still running: the kubelet's delete ends it */
    assert_false(sk_lifecycle_update_deletes(res("pods"), pod, dropped));
    assert_true(sk_lifecycle_drop_finalizer(live, "x.io/y"));
    assert_false(sk_lifecycle_has_finalizer(live, "x.io/y"));
    assert_null(json_object_get(json_object_get(live, "metadata"), "finalizers"));
    json_decref(old);
    json_decref(kept);
    json_decref(dropped);
    json_decref(live);
    json_decref(pod);
}

static const char *query(void *ctx, const char *key)
{
    const char *const *kv = ctx;
    for (; *kv; kv += 2) {
        if (strcmp(kv[0], key) == 0)
            return kv[1];
    }
    return NULL;
}

static void test_delete_options(void **state)
{
    sk_delete_options d;
    json_t *status = NULL;
    const char *q1[] = {"gracePeriodSeconds", "5", "propagationPolicy", "Foreground", NULL};
    assert_int_equal(sk_delete_options_query(query, q1, &d, &status), SK_OK);
    assert_true(d.has_grace);
    assert_int_equal(d.grace_s, 5);
    assert_int_equal(d.propagation, SK_PROPAGATION_FOREGROUND);
    assert_int_equal(d.orphan_dependents, -1);
    const char *q2[] = {"propagationPolicy", "Sideways", NULL};
    assert_int_equal(sk_delete_options_query(query, q2, &d, &status), SK_ERR_INVALID);
    assert_string_equal(json_string_value(json_object_get(status, "message")),
                        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: "
                        "Unsupported value: \"Sideways\": supported values: \"Foreground\", "
                        "\"Background\", \"Orphan\", \"nil\"");
    json_decref(status);
    const char *q3[] = {"gracePeriodSeconds", "x", NULL};
    assert_int_equal(sk_delete_options_query(query, q3, &d, &status), SK_ERR_BAD_REQUEST);
    json_decref(status);
    json_t *body = load("{\"orphanDependents\":true,\"propagationPolicy\":\"Orphan\"}");
    assert_int_equal(sk_delete_options_decode(body, &d, &status), SK_ERR_INVALID);
    assert_non_null(strstr(json_string_value(json_object_get(status, "message")),
                           "orphanDependents and deletionPropagation cannot be both set"));
    json_decref(status);
    json_decref(body);
    body = load("{\"orphanDependents\":false,\"gracePeriodSeconds\":0}");
    assert_int_equal(sk_delete_options_decode(body, &d, &status), SK_OK);
    assert_int_equal(d.orphan_dependents, 0);
    assert_true(d.has_grace);
    json_decref(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_object_is_removed),
        cmocka_unit_test(test_finalizers_mark),
        cmocka_unit_test(test_propagation_finalizers),
        cmocka_unit_test(test_pod_grace),
        cmocka_unit_test(test_namespace),
        cmocka_unit_test(test_namespace_open),
        cmocka_unit_test(test_preconditions),
        cmocka_unit_test(test_update_deletes),
        cmocka_unit_test(test_delete_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
