/*
 * test_patch.c - RFC 6902 and RFC 7386 appendix examples, strategic merge
 * directives as kubectl sends them, driven by the kinds' schemas, and the
 * error codes and texts kube-apiserver uses.
 */
#include "kube/patch.h"
#include "core/buf.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

static json_t *load(const char *s)
{
    json_error_t err;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &err);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, err.text);
    return v;
}

/* The types strategic merge follows (kube/schema.h definition names). */
#define CONFIGMAP "io.k8s.api.core.v1.ConfigMap"
#define POD "io.k8s.api.core.v1.Pod"
#define SERVICEACCOUNT "io.k8s.api.core.v1.ServiceAccount"
#define DEPLOYMENT "io.k8s.api.apps.v1.Deployment"

/* The schema named def; NULL for NULL (JSON and merge patches need none). */
static const sk_schema *schema_of(const char *def)
{
    const sk_schema *t = def ? sk_schema_named(def) : NULL;
    if (def && !t)
        fail_msg("no schema %s", def);
    return t;
}

/* Applies patch to target and checks the result equals want; also checks the
 * target was not modified. */
static void expect(sk_patch_type type, const char *def, const char *target, const char *patch,
                   const char *want)
{
    json_t *t = load(target), *before = json_deep_copy(t), *w = load(want), *out = NULL;
    char *msg = NULL;
    sk_err e = sk_patch_apply(type, schema_of(def), t, patch, strlen(patch), &out, &msg);
    if (e != SK_OK)
        fail_msg("patch %s failed: %s", patch, msg);
    if (!json_equal(out, w)) {
        char *got = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("patch %s\n got  %s\n want %s", patch, got, want);
    }
    assert_true(json_equal(t, before));
    json_decref(t);
    json_decref(before);
    json_decref(w);
    json_decref(out);
}

static void expect_err(sk_patch_type type, const char *def, const char *target, const char *patch,
                       sk_err want, const char *want_msg)
{
    json_t *t = load(target), *out = NULL;
    char *msg = NULL;
    sk_err e = sk_patch_apply(type, schema_of(def), t, patch, strlen(patch), &out, &msg);
    if (e != want)
        fail_msg("patch %s: got %s, want %s (%s)", patch, sk_err_name(e), sk_err_name(want),
                 msg ? msg : "");
    assert_null(out);
    assert_non_null(msg);
    if (want_msg)
        assert_string_equal(msg, want_msg);
    free(msg);
    json_decref(t);
}

static const char generic[] = "the server rejected our request due to an error in our request";

static void test_content_type(void **state)
{
    (void)state;
    sk_patch_type t;
    assert_int_equal(sk_patch_type_parse("application/json-patch+json", &t), SK_OK);
    assert_int_equal(t, SK_PATCH_JSON);
    assert_int_equal(sk_patch_type_parse("application/merge-patch+json; charset=utf-8", &t), SK_OK);
    assert_int_equal(t, SK_PATCH_MERGE);
    assert_int_equal(sk_patch_type_parse(" Application/Strategic-Merge-Patch+JSON ;x=y", &t),
                     SK_OK);
    assert_int_equal(t, SK_PATCH_STRATEGIC);
    assert_int_equal(sk_patch_type_parse("application/apply-patch+yaml", &t),
                     SK_ERR_UNSUPPORTED_MEDIA);
    assert_int_equal(sk_patch_type_parse("application/json", &t), SK_ERR_UNSUPPORTED_MEDIA);
    assert_int_equal(sk_patch_type_parse(NULL, &t), SK_ERR_UNSUPPORTED_MEDIA);
}

/* RFC 6902 appendix A. */
static void test_json_patch_rfc_examples(void **state)
{
    (void)state;
    sk_patch_type J = SK_PATCH_JSON;
    expect(J, NULL, "{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
           "{\"baz\":\"qux\",\"foo\":\"bar\"}");
    expect(J, NULL, "{\"foo\":[\"bar\",\"baz\"]}",
           "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
           "{\"foo\":[\"bar\",\"qux\",\"baz\"]}");
    expect(J, NULL, "{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
           "{\"foo\":\"bar\"}");
    expect(J, NULL, "{\"foo\":[\"bar\",\"qux\",\"baz\"]}",
           "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]", "{\"foo\":[\"bar\",\"baz\"]}");
    expect(J, NULL, "{\"baz\":\"qux\",\"foo\":\"bar\"}",
           "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
           "{\"baz\":\"boo\",\"foo\":\"bar\"}");
    expect(J, NULL, "{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
           "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
           "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}");
    expect(J, NULL, "{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
           "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
           "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}");
    expect(J, NULL, "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
           "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
           "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
           "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}");
    expect_err(J, NULL, "{\"baz\":\"qux\"}",
               "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]", SK_ERR_INVALID, generic);
    expect(J, NULL, "{\"foo\":\"bar\"}",
           "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]",
           "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}");
    expect(J, NULL, "{\"foo\":\"bar\"}",
           "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"xyz\":123}]",
           "{\"foo\":\"bar\",\"baz\":\"qux\"}");
    expect_err(J, NULL, "{\"foo\":\"bar\"}",
               "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]", SK_ERR_INVALID,
               generic);
    expect(J, NULL, "{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]",
           "{\"/\":9,\"~1\":10}");
    expect_err(J, NULL, "{\"/\":9,\"~1\":10}",
               "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]", SK_ERR_INVALID, generic);
    expect(J, NULL, "{\"foo\":[\"bar\"]}",
           "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
           "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}");
}

static void test_json_patch_more(void **state)
{
    (void)state;
    sk_patch_type J = SK_PATCH_JSON;
    /* ~1 is '/', copy deep-copies, an escaped annotation key as kubectl sends. */
    expect(J, NULL, "{\"metadata\":{\"annotations\":{\"a/b\":\"x\"}}}",
           "[{\"op\":\"remove\",\"path\":\"/metadata/annotations/a~1b\"}]",
           "{\"metadata\":{\"annotations\":{}}}");
    expect(J, NULL, "{\"a\":{\"b\":1}}",
           "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"},"
           "{\"op\":\"replace\",\"path\":\"/c/b\",\"value\":2}]",
           "{\"a\":{\"b\":1},\"c\":{\"b\":2}}");
    expect(J, NULL, "{\"a\":[1,2]}", "[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":3}]",
           "{\"a\":[1,2,3]}");
    expect(J, NULL, "{\"a\":1}", "null", "{\"a\":1}");
    expect(J, NULL, "{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/missing\",\"value\":null}]",
           "{\"a\":1}");
    /* Whole-document replace must still yield an object. */
    expect(J, NULL, "{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"b\":2}}]",
           "{\"b\":2}");
    expect_err(J, NULL, "{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":3}]",
               SK_ERR_INVALID, generic);

    expect_err(J, NULL, "{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":3}]",
               SK_ERR_INVALID, generic);
    expect_err(J, NULL, "{\"a\":[1]}", "[{\"op\":\"remove\",\"path\":\"/a/01\"}]", SK_ERR_INVALID,
               generic);
    expect_err(J, NULL, "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]", SK_ERR_INVALID,
               generic);
    expect_err(J, NULL, "{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":1}]",
               SK_ERR_INVALID, generic);
    expect_err(J, NULL, "{\"a\":{\"b\":1}}",
               "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/c\"}]", SK_ERR_INVALID, generic);
    expect_err(J, NULL, "{\"a\":1}", "[{\"op\":\"frob\",\"path\":\"/a\"}]", SK_ERR_INVALID,
               generic);
    expect_err(J, NULL, "{\"a\":1}", "[{\"op\":\"add\",\"value\":1}]", SK_ERR_INVALID, generic);
    expect_err(J, NULL, "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"a\"}]", SK_ERR_INVALID,
               generic);
    expect_err(J, NULL, "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/~2\"}]", SK_ERR_INVALID,
               generic);

    expect_err(J, NULL, "{\"a\":1}", "{\"op\":\"add\"}", SK_ERR_BAD_REQUEST,
               "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
    expect_err(J, NULL, "{\"a\":1}", "[\"add\"]", SK_ERR_BAD_REQUEST,
               "json: cannot unmarshal string into Go value of type jsonpatch.Operation");
    expect_err(J, NULL, "{\"a\":1}", "[{", SK_ERR_BAD_REQUEST, NULL);
}

static void test_json_patch_too_many_ops(void **state)
{
    (void)state;
    size_t n = 10001, len = 0;
    const char *op = "{\"op\":\"test\",\"path\":\"/a\",\"value\":1},";
    char *patch = malloc(n * strlen(op) + 3);
    patch[len++] = '[';
    for (size_t i = 0; i < n; i++) {
        memcpy(patch + len, op, strlen(op));
        len += strlen(op);
    }
    patch[len - 1] = ']';
    patch[len] = '\0';
    expect_err(SK_PATCH_JSON, NULL, "{\"a\":1}", patch, SK_ERR_TOO_LARGE,
               "Request entity too large: The allowed maximum operations in a JSON patch is "
               "10000, got 10001");
    free(patch);
}

/* RFC 7386 appendix A (object targets and object patches). */
static void test_merge_patch_rfc_examples(void **state)
{
    (void)state;
    sk_patch_type M = SK_PATCH_MERGE;
    expect(M, NULL, "{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    expect(M, NULL, "{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}");
    expect(M, NULL, "{\"a\":\"b\"}", "{\"a\":null}", "{}");
    expect(M, NULL, "{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}");
    expect(M, NULL, "{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    expect(M, NULL, "{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
    expect(M, NULL, "{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}",
           "{\"a\":{\"b\":\"d\"}}");
    expect(M, NULL, "{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
    expect(M, NULL, "{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
    expect(M, NULL, "{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}");
    /* Non-object patches cannot yield an object: evanphx/json-patch's error. */
    expect_err(M, NULL, "{\"a\":\"foo\"}", "null", SK_ERR_BAD_REQUEST, "Invalid JSON Patch");
    expect_err(M, NULL, "{\"a\":\"foo\"}", "[\"c\"]", SK_ERR_BAD_REQUEST, "Invalid JSON Patch");
    expect_err(M, NULL, "{\"a\":\"foo\"}", "{nope", SK_ERR_BAD_REQUEST, "Invalid JSON Patch");
}

static void test_strategic_like_merge(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    /* What `kubectl apply` sends for a ConfigMap whose key b was dropped. */
    expect(S, CONFIGMAP,
           "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"annotations\":{"
           "\"kubectl.kubernetes.io/last-applied-configuration\":\"old\"}},"
           "\"data\":{\"a\":\"1\",\"b\":\"2\"}}",
           "{\"data\":{\"a\":\"10\",\"b\":null,\"c\":\"3\"},\"metadata\":{\"annotations\":{"
           "\"kubectl.kubernetes.io/last-applied-configuration\":\"new\"},"
           "\"labels\":{\"x\":\"y\"}}}",
           "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"annotations\":{"
           "\"kubectl.kubernetes.io/last-applied-configuration\":\"new\"},"
           "\"labels\":{\"x\":\"y\"}},\"data\":{\"a\":\"10\",\"c\":\"3\"}}");
    /* Lists without a merge strategy are replaced; nulls for absent keys vanish. */
    expect(S, SERVICEACCOUNT, "{\"imagePullSecrets\":[{\"name\":\"a\"}]}",
           "{\"imagePullSecrets\":[{\"name\":\"b\"}],\"gone\":null}",
           "{\"imagePullSecrets\":[{\"name\":\"b\"}]}");
    /* A new sub-map is taken from the patch minus nulls and directives;
     * one carrying "$patch" is dropped, as upstream's removeDirectives does. */
    expect(S, POD, "{}", "{\"spec\":{\"a\":null,\"b\":1,\"$retainKeys\":[\"b\"]}}",
           "{\"spec\":{\"b\":1}}");
    expect(S, POD, "{}", "{\"spec\":{\"a\":null,\"b\":1,\"$patch\":\"replace\"}}", "{}");
    expect(S, POD, "{\"spec\":{}}",
           "{\"spec\":{\"affinity\":{\"$patch\":\"delete\"},\"tolerations\":[{\"$patch\":"
           "\"replace\"},{\"key\":\"k\"}]}}",
           "{\"spec\":{\"tolerations\":[{\"key\":\"k\"}]}}");
    expect(S, CONFIGMAP, "{\"a\":1}", "null", "{\"a\":1}");
}

static void test_strategic_map_directives(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    expect(S, CONFIGMAP, "{\"data\":{\"a\":\"1\",\"b\":\"2\"}}",
           "{\"data\":{\"$patch\":\"replace\",\"c\":\"3\"}}", "{\"data\":{\"c\":\"3\"}}");
    expect(S, CONFIGMAP, "{\"data\":{\"a\":\"1\"},\"x\":1}", "{\"data\":{\"$patch\":\"delete\"}}",
           "{\"data\":{},\"x\":1}");
    expect(S, POD, "{\"spec\":{\"a\":1,\"b\":2,\"c\":3}}",
           "{\"spec\":{\"$retainKeys\":[\"a\",\"d\"],\"d\":4}}", "{\"spec\":{\"a\":1,\"d\":4}}");
    expect_err(S, POD, "{\"spec\":{}}", "{\"spec\":{\"$retainKeys\":[\"a\"],\"b\":1}}",
               SK_ERR_BAD_REQUEST, "invalid patch format of retainKeys");
    expect_err(S, POD, "{\"spec\":{}}", "{\"spec\":{\"$retainKeys\":\"a\"}}", SK_ERR_BAD_REQUEST,
               "invalid patch format of retainKeys");
    expect_err(S, CONFIGMAP, "{\"data\":{}}", "{\"data\":{\"$patch\":\"frob\"}}",
               SK_ERR_BAD_REQUEST, "unknown patch type: frob in map: map[$patch:frob]");
}

static void test_strategic_owner_references(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    const char *obj = "{\"metadata\":{\"ownerReferences\":["
                      "{\"uid\":\"1\",\"name\":\"a\",\"kind\":\"K\"},"
                      "{\"uid\":\"2\",\"name\":\"b\",\"kind\":\"K\"}]}}";
    expect(S, CONFIGMAP, obj,
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"name\":\"b2\"},"
           "{\"uid\":\"3\",\"name\":\"c\",\"kind\":\"K\"}]}}",
           "{\"metadata\":{\"ownerReferences\":["
           "{\"uid\":\"1\",\"name\":\"a\",\"kind\":\"K\"},"
           "{\"uid\":\"2\",\"name\":\"b2\",\"kind\":\"K\"},"
           "{\"uid\":\"3\",\"name\":\"c\",\"kind\":\"K\"}]}}");
    expect(S, CONFIGMAP, obj,
           "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"delete\",\"uid\":\"1\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"name\":\"b\",\"kind\":\"K\"}]}}");
    expect(S, CONFIGMAP, obj,
           "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"replace\"},{\"uid\":\"9\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"9\"}]}}");
    expect_err(S, CONFIGMAP, obj, "{\"metadata\":{\"ownerReferences\":[{\"name\":\"x\"}]}}",
               SK_ERR_BAD_REQUEST, "map: map[name:x] does not contain declared merge key: uid");
    expect_err(S, CONFIGMAP, obj,
               "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"merge\",\"uid\":\"1\"}]}}",
               SK_ERR_BAD_REQUEST, "merging lists cannot yet be specified in the patch");
    /* The first element decides the element type (sliceElementType): a
     * list in a list is refused when it comes first, else it is a mismatch. */
    expect_err(S, CONFIGMAP, "{\"metadata\":{\"ownerReferences\":[]}}",
               "{\"metadata\":{\"ownerReferences\":[[1]]}}", SK_ERR_INVALID, generic);
    expect_err(S, CONFIGMAP, obj, "{\"metadata\":{\"ownerReferences\":[[1]]}}", SK_ERR_BAD_REQUEST,
               "list element types are not identical: [[map[kind:K name:a uid:1] "
               "map[kind:K name:b uid:2]] [[1]]]");
    expect_err(S, CONFIGMAP, obj, "{\"metadata\":{\"ownerReferences\":[\"x\"]}}",
               SK_ERR_BAD_REQUEST, NULL);
}

static void test_strategic_finalizers(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    const char *obj = "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}";
    expect(S, CONFIGMAP, obj, "{\"metadata\":{\"finalizers\":[\"c\",\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"c\",\"a\",\"b\"]}}");
    expect(S, CONFIGMAP, obj, "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\"]}}");
    /* kubectl apply: add c, drop a, order b before c. */
    expect(S, CONFIGMAP, obj,
           "{\"metadata\":{\"$setElementOrder/finalizers\":[\"b\",\"c\"],"
           "\"finalizers\":[\"c\"],\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"c\"]}}");
    expect(S, CONFIGMAP, obj, "{\"metadata\":{\"$setElementOrder/finalizers\":[\"b\",\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"a\"]}}");
    expect(S, CONFIGMAP, "{}", "{\"metadata\":{\"finalizers\":[\"x\"]}}",
           "{\"metadata\":{\"finalizers\":[\"x\"]}}");
    expect_err(S, CONFIGMAP, obj, "{\"metadata\":{\"$deleteFromPrimitiveList\":[\"a\"]}}",
               SK_ERR_BAD_REQUEST, "invalid patch format of primitive list");
    expect_err(S, CONFIGMAP, obj, "{\"metadata\":{\"$setElementOrder\":[\"a\"]}}",
               SK_ERR_BAD_REQUEST, "invalid patch format of setElementOrder list");
    expect_err(S, CONFIGMAP, obj, "{\"metadata\":{\"$setElementOrder/finalizers\":\"a\"}}",
               SK_ERR_BAD_REQUEST, "expected a []interface {}, but received a string");
}

static void test_strategic_service_account_secrets(void **state)
{
    (void)state;
    /* kubectl apply changing secrets [a,b] to [a,c]. */
    expect(SK_PATCH_STRATEGIC, SERVICEACCOUNT,
           "{\"kind\":\"ServiceAccount\",\"secrets\":[{\"name\":\"a\"},{\"name\":\"b\"}]}",
           "{\"$setElementOrder/secrets\":[{\"name\":\"a\"},{\"name\":\"c\"}],"
           "\"secrets\":[{\"name\":\"c\"},{\"$patch\":\"delete\",\"name\":\"b\"}]}",
           "{\"kind\":\"ServiceAccount\",\"secrets\":[{\"name\":\"a\"},{\"name\":\"c\"}]}");
    /* Without an order list new items go before later server items (upstream
     * mergeSortedSlice). */
    expect(SK_PATCH_STRATEGIC, SERVICEACCOUNT,
           "{\"secrets\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}",
           "{\"secrets\":[{\"name\":\"b\",\"x\":1},{\"name\":\"d\"}]}",
           "{\"secrets\":[{\"name\":\"a\"},{\"name\":\"b\",\"x\":1},{\"name\":\"d\"},"
           "{\"name\":\"c\"}]}");
}

static void test_strategic_errors(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    expect_err(S, CONFIGMAP, "{}", "[1]", SK_ERR_BAD_REQUEST,
               "json: cannot unmarshal array into Go value of type map[string]interface {}");
    expect_err(S, CONFIGMAP, "{}", "\"x\"", SK_ERR_BAD_REQUEST,
               "json: cannot unmarshal string into Go value of type map[string]interface {}");
    expect_err(S, CONFIGMAP, "{}", "{\"a\":", SK_ERR_BAD_REQUEST, NULL);
}

/* The issue: lists the schema gives a merge key are merged at any depth,
 * and what the patch does not name is kept. */
static void test_strategic_follows_schema(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    const char *dep = "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
                      "\"image\":\"i1\",\"ports\":[{\"containerPort\":80},{\"containerPort\":81}],"
                      "\"env\":[{\"name\":\"A\",\"value\":\"1\"}],\"args\":[\"x\",\"y\"]}]}}}}";
    expect(
        S, DEPLOYMENT, dep,
        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i2\"}]}}}}",
        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i2\","
        "\"ports\":[{\"containerPort\":80},{\"containerPort\":81}],"
        "\"env\":[{\"name\":\"A\",\"value\":\"1\"}],\"args\":[\"x\",\"y\"]}]}}}}");
    /* Nested merge keys (containerPort) and a list without a strategy
     * (args), replaced whole. */
    expect(S, DEPLOYMENT, dep,
           "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":["
           "{\"containerPort\":81,\"name\":\"p\"},{\"containerPort\":80,\"$patch\":\"delete\"}],"
           "\"args\":[\"z\"]}]}}}}",
           "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i1\","
           "\"ports\":[{\"containerPort\":81,\"name\":\"p\"}],"
           "\"env\":[{\"name\":\"A\",\"value\":\"1\"}],\"args\":[\"z\"]}]}}}}");
    /* retainKeys on a field with that strategy (DeploymentSpec.strategy). */
    expect(
        S, DEPLOYMENT,
        "{\"spec\":{\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":1}}}}",
        "{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],\"type\":\"Recreate\"}}}",
        "{\"spec\":{\"strategy\":{\"type\":\"Recreate\"}}}");
    /* patchStrategy=replace on a map (PodDisruptionBudgetSpec.selector). */
    expect(S, "io.k8s.api.policy.v1.PodDisruptionBudget",
           "{\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"1\"}}}}",
           "{\"spec\":{\"selector\":{\"matchExpressions\":[]}}}",
           "{\"spec\":{\"selector\":{\"matchExpressions\":[]}}}");
    /* A deletion list set to null drops the list. */
    expect(S, CONFIGMAP, "{\"metadata\":{\"finalizers\":[\"a\"]}}",
           "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":null}}", "{\"metadata\":{}}");
    /* A deletion list meeting no list, or a value of another type: a no-op. */
    expect(S, CONFIGMAP, "{\"metadata\":{\"name\":\"n\"}}",
           "{\"$deleteFromPrimitiveList/metadata\":\"x\","
           "\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}",
           "{\"metadata\":{\"name\":\"n\"}}");
}

/* Where upstream's struct-tag lookups fail, and custom resources. */
static void test_strategic_schema_errors(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    /* A field the type lacks is looked up only where both sides hold a map
     * or a list; elsewhere it is taken (and left to field validation). */
    expect(S, POD, "{\"spec\":{}}", "{\"spec\":{\"bogus\":{\"a\":1}}}",
           "{\"spec\":{\"bogus\":{\"a\":1}}}");
    expect_err(S, POD, "{\"spec\":{\"bogus\":{}}}", "{\"spec\":{\"bogus\":{\"a\":1}}}",
               SK_ERR_BAD_REQUEST,
               "unable to find api field in struct PodSpec for the json field \"bogus\"");
    expect_err(S, POD, "{\"spec\":{}}", "{\"spec\":{\"$setElementOrder/bogus\":[]}}",
               SK_ERR_BAD_REQUEST,
               "unable to find api field in struct PodSpec for the json field \"bogus\"");
    expect_err(S, POD, "{\"spec\":{\"nodeName\":[1]}}", "{\"spec\":{\"nodeName\":[2]}}",
               SK_ERR_BAD_REQUEST, "expected slice or array type, but got: struct");
    /* A RawExtension is a Go struct without JSON fields. */
    expect_err(S, "io.k8s.api.apps.v1.ControllerRevision", "{\"data\":{\"spec\":{\"x\":1}}}",
               "{\"data\":{\"spec\":{\"x\":2}}}", SK_ERR_BAD_REQUEST,
               "unable to find api field in struct RawExtension for the json field \"spec\"");
    expect(S, "io.k8s.api.apps.v1.ControllerRevision", "{\"data\":{\"spec\":{\"x\":1}}}",
           "{\"data\":{\"spec\":1}}", "{\"data\":{\"spec\":1}}");
    /* Go finds fields in structs only: a map of structs is not merged into. */
    expect_err(S, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
               "{\"properties\":{\"a\":{\"type\":\"string\"}}}",
               "{\"properties\":{\"a\":{\"format\":\"x\"}}}", SK_ERR_BAD_REQUEST,
               "merging an object in json but data type is not struct, instead is: map");
    /* $setElementOrder must list the patch's elements in their order. */
    expect_err(S, CONFIGMAP, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
               "{\"metadata\":{\"finalizers\":[\"b\",\"a\"],"
               "\"$setElementOrder/finalizers\":[\"a\",\"b\"]}}",
               SK_ERR_BAD_REQUEST,
               "The order in patch list:\n[b a]\n doesn't match $setElementOrder list:\n[a b]\n");
    expect_err(S, CONFIGMAP, "{\"metadata\":{\"finalizers\":[]}}",
               "{\"metadata\":{\"$setElementOrder/finalizers\":[\"a\"]}}", SK_ERR_BAD_REQUEST,
               "no elements in any of the given slices");
    expect_err(S, POD, "{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
               "{\"spec\":{\"containers\":[{\"image\":\"i\"}]}}", SK_ERR_BAD_REQUEST,
               "map: map[image:i] does not contain declared merge key: name");
    /* No schema (a custom resource): no strategic merge. */
    expect_err(S, NULL, "{}", "{}", SK_ERR_UNSUPPORTED_MEDIA,
               "strategic merge patch format is not supported");
}

/* ---- hostile input (issue 18) ----------------------------------------- */

/* An object with n owner references numbered from first; uids are distinct. */
static char *owner_refs_json(const char *prefix, int first, int n, int with_metadata)
{
    size_t cap = (size_t)n * 128 + 256, len = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    len += (size_t)snprintf(b + len, cap - len, "%s{\"ownerReferences\":[",
                            with_metadata ? "{\"metadata\":" : "");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"%s%d\","
                                "\"uid\":\"u-%d\"}",
                                i ? "," : "", prefix, first + i, first + i);
    len += (size_t)snprintf(b + len, cap - len, "]}%s", with_metadata ? "}" : "");
    return b;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_strategic_merge_is_linear(void **state)
{
    (void)state;
    enum { N = 20000 };
    char *target_text = owner_refs_json("old", 0, N, 1);
    json_t *target = load(target_text);
    /* N new references onto N, then N updates of existing ones. */
    char *fresh = owner_refs_json("new", N, N, 1), *again = owner_refs_json("renamed", 0, N, 1);
    json_t *out = NULL;
    char *msg = NULL;
    double t0 = now_s();
    assert_int_equal(sk_patch_apply(SK_PATCH_STRATEGIC, schema_of(CONFIGMAP), target, fresh,
                                    strlen(fresh), &out, &msg),
                     SK_OK);
    double took = now_s() - t0;
    json_t *refs = json_object_get(json_object_get(out, "metadata"), "ownerReferences");
    assert_int_equal(json_array_size(refs), 2 * N);
    /* Upstream's order: the patch's elements, then the server's. */
    assert_string_equal(json_string_value(json_object_get(json_array_get(refs, 0), "uid")),
                        "u-20000");
    assert_string_equal(json_string_value(json_object_get(json_array_get(refs, N), "uid")), "u-0");
    json_decref(out);
    t0 = now_s();
    assert_int_equal(sk_patch_apply(SK_PATCH_STRATEGIC, schema_of(CONFIGMAP), target, again,
                                    strlen(again), &out, &msg),
                     SK_OK);
    double took2 = now_s() - t0;
    refs = json_object_get(json_object_get(out, "metadata"), "ownerReferences");
    assert_int_equal(json_array_size(refs), N);
    assert_string_equal(json_string_value(json_object_get(json_array_get(refs, 7), "name")),
                        "renamed7");
    json_decref(out);
    /* The same bytes as a merge patch, which only parses, copies and
     * replaces: what any patch of this size costs on this build and load. */
    t0 = now_s();
    assert_int_equal(sk_patch_apply(SK_PATCH_MERGE, NULL, target, fresh, strlen(fresh), &out, &msg),
                     SK_OK);
    double floor = now_s() - t0;
    json_decref(out);
    printf("    20,000 onto 20,000 owner references: %.3f s new, %.3f s merged "
           "(merge patch of the same size: %.3f s)\n",
           took, took2, floor);
    /* Quadratic, this took 151 s (release build) against 0.15 s for the
     * merge patch; linear, 1.5 to 6 times it (more with other work on the
     * machine between the two timings). A bound relative to it holds under
     * sanitizers and load and still catches the quadratic 1000x; the
     * absolute one is a backstop. */
    assert_true(took < 30 * floor + 1.0 && took2 < 30 * floor + 1.0);
    assert_true(took < 20.0 && took2 < 20.0);
    json_decref(target);
    free(target_text);
    free(fresh);
    free(again);
}

static void test_strategic_directive_errors_are_client_errors(void **state)
{
    (void)state;
    static const char obj[] = "{\"metadata\":{\"finalizers\":[\"a\"],\"ownerReferences\":"
                              "[{\"uid\":\"1\",\"name\":\"n\"}]},\"data\":{\"k\":\"v\"}}";
    static const struct {
        const char *patch;
        sk_err want;
        const char *msg;
    } cases[] = {
        {"{\"$patch\":\"bogus\"}", SK_ERR_BAD_REQUEST,
         "unknown patch type: bogus in map: map[$patch:bogus]"},
        {"{\"$patch\":7}", SK_ERR_BAD_REQUEST,
         "unknown patch type: %!s(int64=7) in map: map[$patch:7]"},
        {"{\"$patch\":null}", SK_ERR_BAD_REQUEST,
         "unknown patch type: %!s(<nil>) in map: map[$patch:<nil>]"},
        {"{\"$patch\":{\"a\":[1,\"b\",true,null,1.5]}}", SK_ERR_BAD_REQUEST,
         "unknown patch type: map[a:[%!s(int64=1) b %!s(bool=true) <nil> %!s(float64=1.5)]] "
         "in map: map[$patch:map[a:[1 b true <nil> 1.5]]]"},
        {"{\"$setElementOrder/data\":5}", SK_ERR_BAD_REQUEST,
         "expected a []interface {}, but received a int64"},
        {"{\"$setElementOrder\":[]}", SK_ERR_BAD_REQUEST,
         "invalid patch format of setElementOrder list"},
        {"{\"metadata\":{\"ownerReferences\":[{\"name\":\"no-uid\"}]}}", SK_ERR_BAD_REQUEST,
         "map: map[name:no-uid] does not contain declared merge key: uid"},
        {"{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"delete\"}]}}", SK_ERR_BAD_REQUEST,
         "map: map[$patch:delete] does not contain declared merge key: uid"},
        {"{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"merge\",\"uid\":\"1\"}]}}",
         SK_ERR_BAD_REQUEST, "merging lists cannot yet be specified in the patch"},
        {"{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"bogus\",\"uid\":\"1\"}]}}",
         SK_ERR_BAD_REQUEST, "unknown patch type: bogus in map: map[$patch:bogus uid:1]"},
        {"{\"metadata\":{\"finalizers\":[{\"$patch\":\"merge\"}]}}", SK_ERR_BAD_REQUEST,
         "list element types are not identical: [[a] [map[$patch:merge]]]"},
        {"{\"metadata\":{\"ownerReferences\":[1]}}", SK_ERR_BAD_REQUEST,
         "list element types are not identical: [[map[name:n uid:1]] [1]]"},
        {"{\"$retainKeys\":\"data\"}", SK_ERR_BAD_REQUEST, "invalid patch format of retainKeys"},
        /* Upstream's own check of patch content against $retainKeys: 400
         * (ErrBadPatchFormatForRetainKeys); its ErrPatchContentNotMatchRetainKeys
         * (422) is never returned by the merge. */
        {"{\"$retainKeys\":[\"metadata\"],\"data\":{}}", SK_ERR_BAD_REQUEST,
         "invalid patch format of retainKeys"},
        {"{\"$deleteFromPrimitiveList\":[\"a\"]}", SK_ERR_BAD_REQUEST,
         "invalid patch format of primitive list"},
        {"{\"metadata\":{\"$deleteFromPrimitiveList\":[\"a\"]}}", SK_ERR_BAD_REQUEST,
         "invalid patch format of primitive list"},
        {"{\"metadata\":{\"$setElementOrder/finalizers\":[\"a\"],\"finalizers\":\"x\"}}",
         SK_ERR_BAD_REQUEST, "expected a []interface {}, but received a string"},
        /* mergepatch.ErrNoListOfLists (422 with the generic message, as
         * NewGenericServerResponse builds it) only for a list that comes
         * first: here the original's "a" does. */
        {"{\"metadata\":{\"finalizers\":[[1]]}}", SK_ERR_BAD_REQUEST,
         "list element types are not identical: [[a] [[1]]]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_err(SK_PATCH_STRATEGIC, CONFIGMAP, obj, cases[i].patch, cases[i].want, cases[i].msg);
}

static void test_strategic_set_operations_with_duplicates(void **state)
{
    (void)state;
    /* Deletions remove every copy; merging keeps the first of duplicates. */
    expect(SK_PATCH_STRATEGIC, CONFIGMAP,
           "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"a\",\"c\"]}}",
           "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"a\",\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"c\"]}}");
    expect(SK_PATCH_STRATEGIC, CONFIGMAP,
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"a\"},"
           "{\"uid\":\"2\",\"name\":\"b\"},{\"uid\":\"1\",\"name\":\"c\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"$patch\":\"delete\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"name\":\"b\"}]}}");
    /* A patch element merges into the first server element with its key; the
     * later duplicate keeps its value and moves up with it (both are at the
     * first one's position in the server's list). */
    expect(SK_PATCH_STRATEGIC, CONFIGMAP,
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"a\"},"
           "{\"uid\":\"2\",\"name\":\"b\"},{\"uid\":\"1\",\"name\":\"c\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"z\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"z\"},"
           "{\"uid\":\"1\",\"name\":\"c\"},{\"uid\":\"2\",\"name\":\"b\"}]}}");
    /* A null merge key is a key like any other (upstream compares nil ==
     * nil): the second element merges into the first, and the nulls go. */
    expect(SK_PATCH_STRATEGIC, CONFIGMAP, "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":null,\"name\":\"y\"},"
           "{\"uid\":null,\"name\":\"z\",\"x\":null}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\"},{\"name\":\"z\"}]}}");
    /* Keys are compared as Go compares float64s and int64s: -0.0 is 0.0,
     * and 1 is not 1.0 (a list of both is refused). */
    expect(SK_PATCH_STRATEGIC, CONFIGMAP, "{\"metadata\":{\"finalizers\":[0.0,1.5]}}",
           "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[-0.0]}}",
           "{\"metadata\":{\"finalizers\":[1.5]}}");
    expect_err(SK_PATCH_STRATEGIC, CONFIGMAP, "{\"metadata\":{\"finalizers\":[1]}}",
               "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[1.0]}}", SK_ERR_BAD_REQUEST,
               "list element types are not identical: [[1] [1]]");
    expect(SK_PATCH_STRATEGIC, CONFIGMAP, "{\"metadata\":{\"finalizers\":[\"a\",\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"b\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"a\"]}}");
}

/* A JSON patch of n `copy` operations of from to to%d (new buffer). */
static void copy_ops(sk_buf *ops, int n, const char *from, const char *to)
{
    sk_buf_reset(ops);
    sk_buf_putc(ops, '[');
    for (int i = 0; i < n; i++) {
        sk_buf_printf(ops, "%s{\"op\":\"copy\",\"from\":\"%s\",\"path\":\"", i ? "," : "", from);
        sk_buf_printf(ops, to, i);
        sk_buf_puts(ops, "\"}");
    }
    sk_buf_putc(ops, ']');
}

static void test_json_patch_copy_limit(void **state)
{
    (void)state;
    /* 60 copies of 200 kB: 12 MB from a 3 kB patch. */
    size_t big = 200 * 1024;
    char *target = malloc(big + 64);
    assert_non_null(target);
    int n = snprintf(target, big + 64, "{\"data\":{\"big\":\"");
    memset(target + n, 'x', big);
    strcpy(target + n + big, "\"}}");
    sk_buf ops = SK_BUF_INIT;
    copy_ops(&ops, 60, "/data/big", "/data/c%d");
    /* Each copy is 204,802 bytes of JSON; the sixteenth passes 3 MiB. */
    expect_err(SK_PATCH_JSON, NULL, target, ops.data, SK_ERR_TOO_LARGE,
               "Unable to complete the copy, the accumulated size increase of copy is 3276832, "
               "exceeding the limit 3145728");
    /* Fifteen copies (3,072,030 bytes) fit. */
    json_t *t = load(target), *out = NULL;
    char *msg = NULL;
    copy_ops(&ops, 15, "/data/big", "/data/c%d");
    assert_int_equal(sk_patch_apply(SK_PATCH_JSON, NULL, t, ops.data, ops.len, &out, &msg), SK_OK);
    assert_int_equal(json_object_size(json_object_get(out, "data")), 16);
    json_decref(out);
    /* The document copied into itself, 40 times: stopped long before 2^40. */
    copy_ops(&ops, 40, "", "/s%d");
    assert_int_equal(sk_patch_apply(SK_PATCH_JSON, NULL, t, ops.data, ops.len, &out, &msg),
                     SK_ERR_TOO_LARGE);
    assert_non_null(strstr(msg, "exceeding the limit 3145728"));
    free(msg);
    sk_buf_free(&ops);
    json_decref(t);
    free(target);
}

/* A copy counts the bytes json_dumps would write for the value, escapes and
 * number formats included. */
static void test_json_patch_copy_size_is_exact(void **state)
{
    (void)state;
    sk_buf target = SK_BUF_INIT, ops = SK_BUF_INIT, want = SK_BUF_INIT;
    sk_buf_puts(&target, "{\"v\":{\"pad\":\"");
    for (int i = 0; i < 200000; i++)
        sk_buf_putc(&target, 'p');
    sk_buf_puts(&target, "\",\"s\":\"q\\\"\\\\\\n\\t\\u0001\\u001f/\xc3\xa9\x7f\",\"ke\\\"y\":-12,"
                         "\"r\":1.5,\"e\":1e300,\"t\":true,\"f\":false,\"z\":null,"
                         "\"a\":[1,[],{}],\"o\":{}}}");
    json_t *t = load(target.data);
    size_t size = json_dumpb(json_object_get(t, "v"), NULL, 0, JSON_COMPACT);
    int copies = (int)(SK_PATCH_MAX_COPY_BYTES / size) + 1;
    copy_ops(&ops, copies, "/v", "/c%d");
    sk_buf_printf(&want,
                  "Unable to complete the copy, the accumulated size increase of copy is %zu, "
                  "exceeding the limit %d",
                  (size_t)copies * size, SK_PATCH_MAX_COPY_BYTES);
    expect_err(SK_PATCH_JSON, NULL, target.data, ops.data, SK_ERR_TOO_LARGE, want.data);
    json_decref(t);
    sk_buf_free(&target);
    sk_buf_free(&ops);
    sk_buf_free(&want);
}

/* k copies that each put the chain under /a below its own deepest object:
 * the depth doubles per operation while the bytes copied stay small. */
static void deep_copies(sk_buf *ops, int k)
{
    size_t chain = 1;
    sk_buf_reset(ops);
    sk_buf_putc(ops, '[');
    for (int i = 0; i < k; i++, chain *= 2) {
        sk_buf_printf(ops, "%s{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"", i ? "," : "");
        for (size_t j = 0; j <= chain; j++)
            sk_buf_puts(ops, "/a");
        sk_buf_puts(ops, "\"}");
    }
    sk_buf_putc(ops, ']');
}

static void test_json_patch_depth_is_bounded(void **state)
{
    (void)state;
    sk_buf ops = SK_BUF_INIT;
    json_t *t = load("{\"a\":{}}"), *out = NULL;
    char *msg = NULL;
    /* 11 doublings: 2,049 levels, allowed (the caller bounds stored depth). */
    deep_copies(&ops, 11);
    assert_int_equal(sk_patch_apply(SK_PATCH_JSON, NULL, t, ops.data, ops.len, &out, &msg), SK_OK);
    json_decref(out);
    /* 17 doublings would be 131,073 levels from a 263 kB patch: freeing
     * that overflowed the stack. Refused once past 4096. */
    deep_copies(&ops, 17);
    expect_err(SK_PATCH_JSON, NULL, "{\"a\":{}}", ops.data, SK_ERR_INVALID,
               "the patched object would be nested more than 4096 levels deep");
    /* The same with values added at the deepest point. */
    sk_buf_reset(&ops);
    sk_buf_putc(&ops, '[');
    for (int i = 0; i < 3; i++) {
        sk_buf_printf(&ops, "%s{\"op\":\"add\",\"path\":\"/a", i ? "," : "");
        for (int j = 0; j < i * 1500; j++)
            sk_buf_puts(&ops, "/b");
        sk_buf_puts(&ops, "/b\",\"value\":");
        for (int j = 0; j < 1500; j++)
            sk_buf_puts(&ops, "{\"b\":");
        sk_buf_puts(&ops, "1");
        for (int j = 0; j < 1500; j++)
            sk_buf_putc(&ops, '}');
        sk_buf_putc(&ops, '}');
    }
    sk_buf_putc(&ops, ']');
    expect_err(SK_PATCH_JSON, NULL, "{\"a\":{}}", ops.data, SK_ERR_INVALID,
               "the patched object would be nested more than 4096 levels deep");
    /* Moves deeper count too, moves within a level do not. */
    expect(SK_PATCH_JSON, NULL, "{\"a\":{\"b\":1},\"c\":{}}",
           "[{\"op\":\"move\",\"from\":\"/a/b\",\"path\":\"/c/b\"},"
           "{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/c/a\"}]",
           "{\"c\":{\"b\":1,\"a\":{}}}");
    /* A pointer longer than the document is deep fails before it is split
     * (100,000 tokens), as does a test of it against null. */
    sk_buf_reset(&ops);
    sk_buf_puts(&ops, "[{\"op\":\"test\",\"value\":null,\"path\":\"");
    for (int i = 0; i < 100000; i++)
        sk_buf_puts(&ops, "/a");
    sk_buf_puts(&ops, "\"}]");
    expect_err(SK_PATCH_JSON, NULL, "{\"a\":{}}", ops.data, SK_ERR_INVALID, generic);
    sk_buf_free(&ops);
    json_decref(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_content_type),
        cmocka_unit_test(test_json_patch_rfc_examples),
        cmocka_unit_test(test_json_patch_more),
        cmocka_unit_test(test_json_patch_too_many_ops),
        cmocka_unit_test(test_merge_patch_rfc_examples),
        cmocka_unit_test(test_strategic_like_merge),
        cmocka_unit_test(test_strategic_map_directives),
        cmocka_unit_test(test_strategic_owner_references),
        cmocka_unit_test(test_strategic_finalizers),
        cmocka_unit_test(test_strategic_service_account_secrets),
        cmocka_unit_test(test_strategic_errors),
        cmocka_unit_test(test_strategic_follows_schema),
        cmocka_unit_test(test_strategic_schema_errors),
        cmocka_unit_test(test_strategic_merge_is_linear),
        cmocka_unit_test(test_strategic_directive_errors_are_client_errors),
        cmocka_unit_test(test_strategic_set_operations_with_duplicates),
        cmocka_unit_test(test_json_patch_copy_limit),
        cmocka_unit_test(test_json_patch_copy_size_is_exact),
        cmocka_unit_test(test_json_patch_depth_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
