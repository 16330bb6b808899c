/*
 * test_patch.c - RFC 6902 and RFC 7386 appendix examples, strategic merge
 * directives as kubectl sends them, and the error codes kube-apiserver uses.
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

/* Applies patch to target and checks the result equals want; also checks the
 * target was not modified. */
static void expect(sk_patch_type type, const char *target, const char *patch, const char *want)
{
    json_t *t = load(target), *before = json_deep_copy(t), *w = load(want), *out = NULL;
    char *msg = NULL;
    sk_err e = sk_patch_apply(type, t, patch, strlen(patch), &out, &msg);
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

static void expect_err(sk_patch_type type, const char *target, const char *patch, sk_err want,
                       const char *want_msg)
{
    json_t *t = load(target), *out = NULL;
    char *msg = NULL;
    sk_err e = sk_patch_apply(type, t, patch, strlen(patch), &out, &msg);
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
    expect(J, "{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
           "{\"baz\":\"qux\",\"foo\":\"bar\"}");
    expect(J, "{\"foo\":[\"bar\",\"baz\"]}",
           "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
           "{\"foo\":[\"bar\",\"qux\",\"baz\"]}");
    expect(J, "{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
           "{\"foo\":\"bar\"}");
    expect(J, "{\"foo\":[\"bar\",\"qux\",\"baz\"]}", "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
           "{\"foo\":[\"bar\",\"baz\"]}");
    expect(J, "{\"baz\":\"qux\",\"foo\":\"bar\"}",
           "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
           "{\"baz\":\"boo\",\"foo\":\"bar\"}");
    expect(J, "{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
           "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
           "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}");
    expect(J, "{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
           "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
           "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}");
    expect(J, "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
           "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
           "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
           "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}");
    expect_err(J, "{\"baz\":\"qux\"}", "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]",
               SK_ERR_INVALID, generic);
    expect(J, "{\"foo\":\"bar\"}",
           "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]",
           "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}");
    expect(J, "{\"foo\":\"bar\"}",
           "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"xyz\":123}]",
           "{\"foo\":\"bar\",\"baz\":\"qux\"}");
    expect_err(J, "{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]",
               SK_ERR_INVALID, generic);
    expect(J, "{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]",
           "{\"/\":9,\"~1\":10}");
    expect_err(J, "{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]",
               SK_ERR_INVALID, generic);
    expect(J, "{\"foo\":[\"bar\"]}",
           "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
           "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}");
}

static void test_json_patch_more(void **state)
{
    (void)state;
    sk_patch_type J = SK_PATCH_JSON;
    /* ~1 is '/', copy deep-copies, an escaped annotation key as kubectl sends. */
    expect(J, "{\"metadata\":{\"annotations\":{\"a/b\":\"x\"}}}",
           "[{\"op\":\"remove\",\"path\":\"/metadata/annotations/a~1b\"}]",
           "{\"metadata\":{\"annotations\":{}}}");
    expect(J, "{\"a\":{\"b\":1}}",
           "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"},"
           "{\"op\":\"replace\",\"path\":\"/c/b\",\"value\":2}]",
           "{\"a\":{\"b\":1},\"c\":{\"b\":2}}");
    expect(J, "{\"a\":[1,2]}", "[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":3}]",
           "{\"a\":[1,2,3]}");
    expect(J, "{\"a\":1}", "null", "{\"a\":1}");
    expect(J, "{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/missing\",\"value\":null}]", "{\"a\":1}");
    /* Whole-document replace must still yield an object. */
    expect(J, "{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"b\":2}}]", "{\"b\":2}");
    expect_err(J, "{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":3}]", SK_ERR_INVALID,
               generic);

    expect_err(J, "{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":3}]", SK_ERR_INVALID,
               generic);
    expect_err(J, "{\"a\":[1]}", "[{\"op\":\"remove\",\"path\":\"/a/01\"}]", SK_ERR_INVALID,
               generic);
    expect_err(J, "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]", SK_ERR_INVALID, generic);
    expect_err(J, "{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":1}]", SK_ERR_INVALID,
               generic);
    expect_err(J, "{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/c\"}]",
               SK_ERR_INVALID, generic);
    expect_err(J, "{\"a\":1}", "[{\"op\":\"frob\",\"path\":\"/a\"}]", SK_ERR_INVALID, generic);
    expect_err(J, "{\"a\":1}", "[{\"op\":\"add\",\"value\":1}]", SK_ERR_INVALID, generic);
    expect_err(J, "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"a\"}]", SK_ERR_INVALID, generic);
    expect_err(J, "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/~2\"}]", SK_ERR_INVALID, generic);

    expect_err(J, "{\"a\":1}", "{\"op\":\"add\"}", SK_ERR_BAD_REQUEST,
               "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
    expect_err(J, "{\"a\":1}", "[\"add\"]", SK_ERR_BAD_REQUEST,
               "json: cannot unmarshal string into Go value of type jsonpatch.Operation");
    expect_err(J, "{\"a\":1}", "[{", SK_ERR_BAD_REQUEST, NULL);
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
    expect_err(SK_PATCH_JSON, "{\"a\":1}", patch, SK_ERR_TOO_LARGE,
               "Request entity too large: The allowed maximum operations in a JSON patch is "
               "10000, got 10001");
    free(patch);
}

/* RFC 7386 appendix A (object targets and object patches). */
static void test_merge_patch_rfc_examples(void **state)
{
    (void)state;
    sk_patch_type M = SK_PATCH_MERGE;
    expect(M, "{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    expect(M, "{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}");
    expect(M, "{\"a\":\"b\"}", "{\"a\":null}", "{}");
    expect(M, "{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}");
    expect(M, "{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    expect(M, "{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
    expect(M, "{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}");
    expect(M, "{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
    expect(M, "{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
    expect(M, "{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}");
    /* Non-object patches cannot yield an object: evanphx/json-patch's error. */
    expect_err(M, "{\"a\":\"foo\"}", "null", SK_ERR_BAD_REQUEST, "Invalid JSON Patch");
    expect_err(M, "{\"a\":\"foo\"}", "[\"c\"]", SK_ERR_BAD_REQUEST, "Invalid JSON Patch");
    expect_err(M, "{\"a\":\"foo\"}", "{nope", SK_ERR_BAD_REQUEST, "Invalid JSON Patch");
}

static void test_strategic_like_merge(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    /* What `kubectl apply` sends for a ConfigMap whose key b was dropped. */
    expect(S,
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
    expect(S, "{\"imagePullSecrets\":[{\"name\":\"a\"}]}",
           "{\"imagePullSecrets\":[{\"name\":\"b\"}],\"gone\":null}",
           "{\"imagePullSecrets\":[{\"name\":\"b\"}]}");
    /* A new sub-map is taken from the patch minus nulls and directives. */
    expect(S, "{}", "{\"spec\":{\"a\":null,\"b\":1,\"$patch\":\"replace\"}}",
           "{\"spec\":{\"b\":1}}");
    expect(S, "{\"a\":1}", "null", "{\"a\":1}");
}

static void test_strategic_map_directives(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    expect(S, "{\"data\":{\"a\":\"1\",\"b\":\"2\"}}",
           "{\"data\":{\"$patch\":\"replace\",\"c\":\"3\"}}", "{\"data\":{\"c\":\"3\"}}");
    expect(S, "{\"data\":{\"a\":\"1\"},\"x\":1}", "{\"data\":{\"$patch\":\"delete\"}}",
           "{\"data\":{},\"x\":1}");
    expect(S, "{\"spec\":{\"a\":1,\"b\":2,\"c\":3}}",
           "{\"spec\":{\"$retainKeys\":[\"a\",\"d\"],\"d\":4}}", "{\"spec\":{\"a\":1,\"d\":4}}");
    expect_err(S, "{\"spec\":{}}", "{\"spec\":{\"$retainKeys\":[\"a\"],\"b\":1}}",
               SK_ERR_BAD_REQUEST, "invalid patch format of retainKeys");
    expect_err(S, "{\"spec\":{}}", "{\"spec\":{\"$retainKeys\":\"a\"}}", SK_ERR_BAD_REQUEST,
               "invalid patch format of retainKeys");
    expect_err(S, "{\"data\":{}}", "{\"data\":{\"$patch\":\"frob\"}}", SK_ERR_BAD_REQUEST,
               "unknown patch type: \"frob\" in map: {\"$patch\":\"frob\"}");
}

static void test_strategic_owner_references(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    const char *obj = "{\"metadata\":{\"ownerReferences\":["
                      "{\"uid\":\"1\",\"name\":\"a\",\"kind\":\"K\"},"
                      "{\"uid\":\"2\",\"name\":\"b\",\"kind\":\"K\"}]}}";
    expect(S, obj,
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"name\":\"b2\"},"
           "{\"uid\":\"3\",\"name\":\"c\",\"kind\":\"K\"}]}}",
           "{\"metadata\":{\"ownerReferences\":["
           "{\"uid\":\"1\",\"name\":\"a\",\"kind\":\"K\"},"
           "{\"uid\":\"2\",\"name\":\"b2\",\"kind\":\"K\"},"
           "{\"uid\":\"3\",\"name\":\"c\",\"kind\":\"K\"}]}}");
    expect(S, obj, "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"delete\",\"uid\":\"1\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"name\":\"b\",\"kind\":\"K\"}]}}");
    expect(S, obj,
           "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"replace\"},{\"uid\":\"9\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"9\"}]}}");
    expect_err(S, obj, "{\"metadata\":{\"ownerReferences\":[{\"name\":\"x\"}]}}", SK_ERR_BAD_REQUEST,
               "map: {\"name\":\"x\"} does not contain declared merge key: uid");
    expect_err(S, obj,
               "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"merge\",\"uid\":\"1\"}]}}",
               SK_ERR_BAD_REQUEST, "merging lists cannot yet be specified in the patch");
    expect_err(S, obj, "{\"metadata\":{\"ownerReferences\":[[1]]}}", SK_ERR_INVALID, generic);
    expect_err(S, obj, "{\"metadata\":{\"ownerReferences\":[\"x\"]}}", SK_ERR_BAD_REQUEST, NULL);
}

static void test_strategic_finalizers(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    const char *obj = "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}";
    expect(S, obj, "{\"metadata\":{\"finalizers\":[\"c\",\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"c\",\"a\",\"b\"]}}");
    expect(S, obj, "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\"]}}");
    /* kubectl apply: add c, drop a, order b before c. */
    expect(S, obj,
           "{\"metadata\":{\"$setElementOrder/finalizers\":[\"b\",\"c\"],"
           "\"finalizers\":[\"c\"],\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"c\"]}}");
    expect(S, obj, "{\"metadata\":{\"$setElementOrder/finalizers\":[\"b\",\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"a\"]}}");
    expect(S, "{}", "{\"metadata\":{\"finalizers\":[\"x\"]}}",
           "{\"metadata\":{\"finalizers\":[\"x\"]}}");
    expect_err(S, obj, "{\"metadata\":{\"$deleteFromPrimitiveList\":[\"a\"]}}", SK_ERR_BAD_REQUEST,
               "invalid patch format of primitive list");
    expect_err(S, obj, "{\"metadata\":{\"$setElementOrder\":[\"a\"]}}", SK_ERR_BAD_REQUEST,
               "invalid patch format of setElementOrder list");
    expect_err(S, obj, "{\"metadata\":{\"$setElementOrder/finalizers\":\"a\"}}", SK_ERR_BAD_REQUEST,
               "expected a []interface {}, but received a string");
}

static void test_strategic_service_account_secrets(void **state)
{
    (void)state;
    /* kubectl apply changing secrets [a,b] to [a,c]. */
    expect(SK_PATCH_STRATEGIC,
           "{\"kind\":\"ServiceAccount\",\"secrets\":[{\"name\":\"a\"},{\"name\":\"b\"}]}",
           "{\"$setElementOrder/secrets\":[{\"name\":\"a\"},{\"name\":\"c\"}],"
           "\"secrets\":[{\"name\":\"c\"},{\"$patch\":\"delete\",\"name\":\"b\"}]}",
           "{\"kind\":\"ServiceAccount\",\"secrets\":[{\"name\":\"a\"},{\"name\":\"c\"}]}");
    /* Without an order list new items go before later server items (upstream
     * mergeSortedSlice). */
    expect(SK_PATCH_STRATEGIC, "{\"secrets\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}",
           "{\"secrets\":[{\"name\":\"b\",\"x\":1},{\"name\":\"d\"}]}",
           "{\"secrets\":[{\"name\":\"a\"},{\"name\":\"b\",\"x\":1},{\"name\":\"d\"},"
           "{\"name\":\"c\"}]}");
}

static void test_strategic_errors(void **state)
{
    (void)state;
    sk_patch_type S = SK_PATCH_STRATEGIC;
    expect_err(S, "{}", "[1]", SK_ERR_BAD_REQUEST,
               "json: cannot unmarshal array into Go value of type map[string]interface {}");
    expect_err(S, "{}", "\"x\"", SK_ERR_BAD_REQUEST,
               "json: cannot unmarshal string into Go value of type map[string]interface {}");
    expect_err(S, "{}", "{\"a\":", SK_ERR_BAD_REQUEST, NULL);
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
    assert_int_equal(sk_patch_apply(SK_PATCH_STRATEGIC, target, fresh, strlen(fresh), &out, &msg),
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
    assert_int_equal(sk_patch_apply(SK_PATCH_STRATEGIC, target, again, strlen(again), &out, &msg),
                     SK_OK);
    double took2 = now_s() - t0;
    refs = json_object_get(json_object_get(out, "metadata"), "ownerReferences");
    assert_int_equal(json_array_size(refs), N);
    assert_string_equal(json_string_value(json_object_get(json_array_get(refs, 7), "name")),
                        "renamed7");
    json_decref(out);
    printf("    20,000 onto 20,000 owner references: %.3f s new, %.3f s merged\n", took, took2);
    /* 54 s before indexing; generous for sanitizer builds on a busy machine. */
    assert_true(took < 5.0 && took2 < 5.0);
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
    } cases[] = {
        {"{\"$patch\":\"bogus\"}", SK_ERR_BAD_REQUEST},
        {"{\"$patch\":7}", SK_ERR_BAD_REQUEST},
        {"{\"$setElementOrder/data\":5}", SK_ERR_BAD_REQUEST},
        {"{\"$setElementOrder\":[]}", SK_ERR_BAD_REQUEST},
        {"{\"metadata\":{\"ownerReferences\":[{\"name\":\"no-uid\"}]}}", SK_ERR_BAD_REQUEST},
        {"{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"delete\"}]}}", SK_ERR_BAD_REQUEST},
        {"{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"merge\",\"uid\":\"1\"}]}}",
         SK_ERR_BAD_REQUEST},
        {"{\"metadata\":{\"finalizers\":[{\"x\":1}]}}", SK_ERR_BAD_REQUEST},
        {"{\"metadata\":{\"finalizers\":[[1]]}}", SK_ERR_INVALID},
        {"{\"$retainKeys\":\"data\"}", SK_ERR_BAD_REQUEST},
        {"{\"$retainKeys\":[\"metadata\"],\"data\":{}}", SK_ERR_BAD_REQUEST},
        {"{\"$deleteFromPrimitiveList/metadata\":\"x\"}", SK_ERR_BAD_REQUEST},
        {"{\"metadata\":{\"$deleteFromPrimitiveList\":[\"a\"]}}", SK_ERR_BAD_REQUEST},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_err(SK_PATCH_STRATEGIC, obj, cases[i].patch, cases[i].want, NULL);
}

static void test_strategic_set_operations_with_duplicates(void **state)
{
    (void)state;
    /* Deletions remove every copy; merging keeps the first of duplicates. */
    expect(SK_PATCH_STRATEGIC, "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"a\",\"c\"]}}",
           "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"a\",\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"c\"]}}");
    expect(SK_PATCH_STRATEGIC,
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"a\"},"
           "{\"uid\":\"2\",\"name\":\"b\"},{\"uid\":\"1\",\"name\":\"c\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"$patch\":\"delete\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"name\":\"b\"}]}}");
    expect(SK_PATCH_STRATEGIC, "{\"metadata\":{\"finalizers\":[\"a\",\"a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"b\"]}}",
           "{\"metadata\":{\"finalizers\":[\"b\",\"a\"]}}");
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
    sk_buf_putc(&ops, '[');
    for (int i = 0; i < 60; i++)
        sk_buf_printf(&ops, "%s{\"op\":\"copy\",\"from\":\"/data/big\",\"path\":\"/data/c%d\"}",
                      i ? "," : "", i);
    sk_buf_putc(&ops, ']');
    json_t *t = load(target), *out = NULL;
    char *msg = NULL;
    assert_int_equal(sk_patch_apply(SK_PATCH_JSON, t, ops.data, ops.len, &out, &msg),
                     SK_ERR_TOO_LARGE);
    assert_non_null(strstr(msg, "Unable to complete the copy, the accumulated size increase of "
                                "copy is"));
    assert_non_null(strstr(msg, "exceeding the limit 3145728"));
    free(msg);
    /* Fifteen copies (3,072,150 bytes) fit; the sixteenth does not. */
    sk_buf_reset(&ops);
    sk_buf_putc(&ops, '[');
    for (int i = 0; i < 15; i++)
        sk_buf_printf(&ops, "%s{\"op\":\"copy\",\"from\":\"/data/big\",\"path\":\"/data/c%d\"}",
                      i ? "," : "", i);
    sk_buf_putc(&ops, ']');
    assert_int_equal(sk_patch_apply(SK_PATCH_JSON, t, ops.data, ops.len, &out, &msg), SK_OK);
    assert_int_equal(json_object_size(json_object_get(out, "data")), 16);
    json_decref(out);
    /* The document copied into itself, 40 times: stopped long before 2^40. */
    sk_buf_reset(&ops);
    sk_buf_putc(&ops, '[');
    for (int i = 0; i < 40; i++)
        sk_buf_printf(&ops, "%s{\"op\":\"copy\",\"from\":\"\",\"path\":\"/s%d\"}", i ? "," : "",
                      i);
    sk_buf_putc(&ops, ']');
    msg = NULL;
    assert_int_equal(sk_patch_apply(SK_PATCH_JSON, t, ops.data, ops.len, &out, &msg),
                     SK_ERR_TOO_LARGE);
    free(msg);
    sk_buf_free(&ops);
    json_decref(t);
    free(target);
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
        cmocka_unit_test(test_strategic_merge_is_linear),
        cmocka_unit_test(test_strategic_directive_errors_are_client_errors),
        cmocka_unit_test(test_strategic_set_operations_with_duplicates),
        cmocka_unit_test(test_json_patch_copy_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
