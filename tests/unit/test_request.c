/*
 * test_request.c - what a request line becomes before any handler sees it:
 * UTF-8 checks and repair (core/utf8), request-target parsing
 * (http/target), routing (api/route) and Status bodies that can always be
 * encoded (api/status).
 *
 * The cases are the hostile inputs of issue 18 (a NUL or an encoded '/'
 * inside a segment, invalid UTF-8 anywhere, empty segments, too many
 * parameters) next to the ordinary requests that must keep working.
 */
#include "api/route.h"
#include "kube/status.h"
#include "core/utf8.h"
#include "http/target.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- utf8 ---------------------------------------------------------------- */

static void test_utf8_valid(void **state)
{
    static const char *const good[] = {"", "abc", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                       "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf"};
    static const char *const bad[] = {"\xff", "\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
                                      "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80", "a\x80",
                                      "\xe2\x82"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_true(sk_utf8_valid(good[i], strlen(good[i])));
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_false(sk_utf8_valid(bad[i], strlen(bad[i])));
    assert_true(sk_utf8_valid("a\0b", 3)); /* NUL is UTF-8; callers refuse it themselves */
}

static void test_utf8_prefix_never_splits_a_character(void **state)
{
    const char *s = "\xc3\xa9\xc3\xa9\xc3\xa9"; /* three 2-byte characters */
    assert_int_equal(sk_utf8_prefix(s, 6, 5), 4);
    assert_int_equal(sk_utf8_prefix(s, 6, 4), 4);
    assert_int_equal(sk_utf8_prefix(s, 6, 1), 0);
    assert_int_equal(sk_utf8_prefix(s, 6, 100), 6);
    assert_int_equal(sk_utf8_prefix("\xff\xff", 2, 1), 1); /* an invalid byte counts as one */
}

static void test_utf8_repair(void **state)
{
    sk_buf b = SK_BUF_INIT;
    sk_utf8_repair(&b, "a\xff\xfe" "b\xc3", 5);
    assert_string_equal(b.data, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
    assert_true(sk_utf8_valid(b.data, b.len));
    sk_buf_free(&b);
}

/* ---- target -------------------------------------------------------------- */

static sk_err parse(const char *raw, sk_target *t, char **msg)
{
    *msg = NULL;
    memset(t, 0, sizeof *t);
    return sk_target_parse(raw, strlen(raw), t, msg);
}

static void test_target_segments_and_query(void **state)
{
    sk_target t;
    char *msg;
    assert_int_equal(parse("/api/v1/namespaces/d%65fault/configmaps/"
                           "%C3%A9?labelSelector=a%3Db+c&watch&limit=&x=1&x=2",
                           &t, &msg),
                     SK_OK);
    assert_int_equal(t.n_segs, 6);
    assert_string_equal(t.segs[3], "default");
    assert_string_equal(t.segs[5], "\xc3\xa9");
    assert_string_equal(sk_target_query(&t, "labelSelector"), "a=b c");
    assert_string_equal(sk_target_query(&t, "watch"), "");
    assert_string_equal(sk_target_query(&t, "limit"), "");
    assert_string_equal(sk_target_query(&t, "x"), "1");
    assert_null(sk_target_query(&t, "continue"));
    sk_target_clear(&t);
    /* A trailing slash adds nothing; empty segments are kept for the router. */
    assert_int_equal(parse("/api/", &t, &msg), SK_OK);
    assert_int_equal(t.n_segs, 1);
    sk_target_clear(&t);
    assert_int_equal(parse("/openapi//v3", &t, &msg), SK_OK);
    assert_int_equal(t.n_segs, 3);
    assert_string_equal(t.segs[1], "");
    sk_target_clear(&t);
    assert_int_equal(parse("/", &t, &msg), SK_OK);
    assert_int_equal(t.n_segs, 0);
    sk_target_clear(&t);
    /* '+' is a space only in the query. */
    assert_int_equal(parse("/a+b?q=a+b", &t, &msg), SK_OK);
    assert_string_equal(t.segs[0], "a+b");
    assert_string_equal(sk_target_query(&t, "q"), "a b");
    sk_target_clear(&t);
}

static void test_target_refusals(void **state)
{
    static const struct {
        const char *raw;
        sk_err err;
        const char *in_msg;
    } cases[] = {
        {"/api/v1/namespaces/default/configmaps/abc%00def", SK_ERR_BAD_REQUEST, "NUL"},
        {"/api/v1/namespaces/default/configmaps/a%2Fb", SK_ERR_NOT_FOUND, "could not find"},
        {"/api/v1/namespaces/default/configmaps/a%2fb", SK_ERR_NOT_FOUND, "could not find"},
        {"/x/%ff%fe", SK_ERR_BAD_REQUEST, "UTF-8"},
        {"/x?labelSelector=%ff", SK_ERR_BAD_REQUEST, "UTF-8"},
        {"/x?%c3=1", SK_ERR_BAD_REQUEST, "UTF-8"},
        {"/x?a=%00", SK_ERR_BAD_REQUEST, "NUL"},
        {"/x/%zz", SK_ERR_BAD_REQUEST, "invalid URL escape \"%zz\""},
        {"/x/%f", SK_ERR_BAD_REQUEST, "invalid URL escape \"%f\""},
        {"/x?q=%", SK_ERR_BAD_REQUEST, "invalid URL escape \"%\""},
        {"/x/%\xff\xfe", SK_ERR_BAD_REQUEST, "invalid URL escape"},
        {"x/y", SK_ERR_BAD_REQUEST, "absolute path"},
        {"", SK_ERR_BAD_REQUEST, "absolute path"},
        {"*", SK_ERR_BAD_REQUEST, "absolute path"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sk_target t;
        char *msg;
        assert_int_equal(parse(cases[i].raw, &t, &msg), cases[i].err);
        assert_non_null(msg);
        assert_true(sk_utf8_valid(msg, strlen(msg)));
        if (!strstr(msg, cases[i].in_msg))
            fail_msg("%s: message %s lacks %s", cases[i].raw, msg, cases[i].in_msg);
        assert_null(t.segs); /* untouched on failure */
        free(msg);
    }
}

static void test_target_parameter_cap(void **state)
{
    size_t n = SK_TARGET_MAX_PARAMS + 1;
    char *raw = malloc(n * 8 + 8);
    assert_non_null(raw);
    size_t len = (size_t)sprintf(raw, "/x?");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(raw + len, "p%zu=1&", i);
    sk_target t;
    char *msg = NULL;
    assert_int_equal(sk_target_parse(raw, len, &t, &msg), SK_ERR_BAD_REQUEST);
    assert_non_null(strstr(msg, "too many"));
    free(msg);
    /* Exactly the cap is fine; keyless pieces do not count. */
    len = (size_t)sprintf(raw, "/x?&&=v&");
    for (size_t i = 0; i < SK_TARGET_MAX_PARAMS; i++)
        len += (size_t)sprintf(raw + len, "p%zu&", i);
    msg = NULL;
    assert_int_equal(sk_target_parse(raw, len, &t, &msg), SK_OK);
    assert_int_equal(t.n_params, SK_TARGET_MAX_PARAMS);
    sk_target_clear(&t);
    free(raw);
}

/* ---- route --------------------------------------------------------------- */

static void resolve(const char *method, const char *path, int watch, sk_route *out)
{
    sk_target t;
    char *msg;
    assert_int_equal(parse(path, &t, &msg), SK_OK);
    sk_route_resolve(method, (const char *const *)t.segs, t.n_segs, watch, out);
    /* The route borrows the segments: keep only what the tests compare. */
    static char ns[64], name[64];
    snprintf(ns, sizeof ns, "%s", out->ns ? out->ns : "");
    snprintf(name, sizeof name, "%s", out->name ? out->name : "");
    out->ns = ns;
    out->name = out->name ? name : NULL;
    out->group = out->version = NULL;
    sk_target_clear(&t);
}

static void test_route_resources(void **state)
{
    sk_route r;
    resolve("GET", "/api/v1/namespaces/default/configmaps/a", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_RESOURCE);
    assert_int_equal(r.verb, SK_REQ_GET);
    assert_string_equal(r.res->resource, "configmaps");
    assert_string_equal(r.ns, "default");
    assert_string_equal(r.name, "a");
    resolve("GET", "/api/v1/configmaps", 1, &r);
    assert_int_equal(r.verb, SK_REQ_WATCH);
    assert_true(r.all_namespaces);
    resolve("POST", "/api/v1/configmaps", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_ALLOWED);
    resolve("DELETE", "/api/v1/namespaces", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_ALLOWED);
    resolve("DELETE", "/api/v1/namespaces/x", 0, &r);
    assert_int_equal(r.verb, SK_REQ_DELETE);
    assert_string_equal(r.res->resource, "namespaces");
    resolve("PATCH", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", 0, &r);
    assert_int_equal(r.verb, SK_REQ_PATCH);
    resolve("GET", "/api/v1/namespaces/default/configmaps/a/status", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
    /* subresources: a namespace's own, a namespaced object's, a
     * cluster-scoped object's; verbs as the registry lists them */
    resolve("GET", "/api/v1/namespaces/x/status", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_RESOURCE);
    assert_string_equal(r.res->resource, "namespaces");
    assert_string_equal(r.name, "x");
    assert_string_equal(r.sub->name, "status");
    resolve("PUT", "/api/v1/namespaces/x/finalize", 0, &r);
    assert_int_equal(r.verb, SK_REQ_UPDATE);
    assert_string_equal(r.sub->name, "finalize");
    resolve("GET", "/api/v1/namespaces/x/finalize", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_ALLOWED);
    resolve("GET", "/api/v1/namespaces/x/bogus", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
    resolve("PATCH", "/apis/apps/v1/namespaces/d/deployments/web/scale", 0, &r);
    assert_int_equal(r.verb, SK_REQ_PATCH);
    assert_string_equal(r.ns, "d");
    assert_string_equal(r.name, "web");
    assert_string_equal(r.sub->name, "scale");
    resolve("POST", "/api/v1/namespaces/d/pods/p/binding", 0, &r);
    assert_int_equal(r.verb, SK_REQ_CREATE);
    resolve("GET", "/api/v1/namespaces/d/pods/p/binding", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_ALLOWED);
    resolve("PUT", "/api/v1/nodes/n1/status", 0, &r);
    assert_int_equal(r.verb, SK_REQ_UPDATE);
    assert_string_equal(r.name, "n1");
    resolve("GET", "/api/v1/namespaces/d/pods/p/log/extra", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
    resolve("GET", "/apis/nope/v1/things", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
}

static void test_route_fixed_endpoints(void **state)
{
    sk_route r;
    resolve("GET", "/openapi/v3/apis/coordination.k8s.io/v1", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_OPENAPI_V3_DOC);
    assert_string_equal(r.doc, "apis/coordination.k8s.io/v1");
    resolve("GET", "/openapi/v3", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_OPENAPI_V3_ROOT);
    resolve("GET", "/openapi//v3/api/v1", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
    resolve("GET", "/readyz", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_HEALTH);
    assert_string_equal(r.doc, "readyz");
    resolve("POST", "/readyz", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_ALLOWED);
    resolve("GET", "/apis/coordination.k8s.io", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_GROUP);
    resolve("GET", "/api", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_CORE_VERSIONS);
    resolve("GET", "/api/v2", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
    resolve("GET", "/", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
}

static void test_route_reviews(void **state)
{
    sk_route r;
    resolve("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_REVIEW);
    assert_string_equal(r.doc, "subjectaccessreviews");
    assert_int_equal(r.verb, SK_REQ_CREATE);
    resolve("POST", "/apis/authorization.k8s.io/v1/namespaces/n/localsubjectaccessreviews", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_REVIEW);
    assert_string_equal(r.doc, "localsubjectaccessreviews");
    assert_string_equal(r.ns, "n");
    resolve("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", 0, &r);
    assert_string_equal(r.doc, "selfsubjectrulesreviews");
    resolve("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_ALLOWED);
    resolve("POST", "/apis/authorization.k8s.io/v1/localsubjectaccessreviews", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
    resolve("POST", "/apis/authorization.k8s.io/v1/namespaces/n/subjectaccessreviews", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
    resolve("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews/x", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_NOT_FOUND);
    resolve("GET", "/apis/authorization.k8s.io/v1", 0, &r);
    assert_int_equal(r.kind, SK_ROUTE_GROUP_RESOURCES);
}

/* ---- status -------------------------------------------------------------- */

static void test_status_always_encodes(void **state)
{
    json_t *causes = json_array();
    sk_status_add_cause(causes, "Bad\xff", "msg \xc3", "field\xed\xa0\x80");
    json_t *st = sk_status_new(SK_ERR_NOT_FOUND, "configmaps \"\xff\xfe\" not found", "", "\xc0",
                               "\xe2\x82", causes);
    char *text = json_dumps(st, JSON_COMPACT);
    assert_non_null(text);
    assert_true(sk_utf8_valid(text, strlen(text)));
    assert_non_null(strstr(text, "\"code\":404"));
    assert_non_null(strstr(text, "\xef\xbf\xbd"));
    free(text);
    json_decref(st);
}

/* Only errors that pass say when to retry: the store down, or a write whose
 * outcome is unknown (503), never a definite failure. */
static void test_status_retry_after(void **state)
{
    for (int e = 0; e < SK_ERR__COUNT; e++) {
        json_t *st = sk_status_new((sk_err)e, "m", NULL, NULL, NULL, NULL);
        json_t *retry = json_object_get(json_object_get(st, "details"), "retryAfterSeconds");
        assert_int_equal(retry != NULL, e == SK_ERR_UNAVAILABLE);
        assert_int_equal(json_integer_value(retry), sk_err_retry_after((sk_err)e));
        json_decref(st);
    }
    assert_int_equal(sk_err_http_code(SK_ERR_UNAVAILABLE), 503);
    assert_string_equal(sk_err_reason(SK_ERR_UNAVAILABLE), "ServiceUnavailable");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_valid),
        cmocka_unit_test(test_utf8_prefix_never_splits_a_character),
        cmocka_unit_test(test_utf8_repair),
        cmocka_unit_test(test_target_segments_and_query),
        cmocka_unit_test(test_target_refusals),
        cmocka_unit_test(test_target_parameter_cap),
        cmocka_unit_test(test_route_resources),
        cmocka_unit_test(test_route_fixed_endpoints),
        cmocka_unit_test(test_route_reviews),
        cmocka_unit_test(test_status_always_encodes),
        cmocka_unit_test(test_status_retry_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
