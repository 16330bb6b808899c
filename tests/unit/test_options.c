/*
 * test_options.c - query parameters and DeleteOptions as typed options
 * (kube/options): defaults, formats, and the rules that join parameters,
 * with kube-apiserver's codes.
 */
#include "kube/options.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Parameters as "key=value" strings, NULL-terminated. */
static const char *lookup(void *ctx, const char *key)
{
    for (const char **p = ctx; *p; p++) {
        size_t n = strlen(key);
        if (strncmp(*p, key, n) == 0 && (*p)[n] == '=')
            return *p + n + 1;
    }
    return NULL;
}

static sk_err list(int watch, sk_list_options *out, const char **params)
{
    json_t *st = NULL;
    sk_err e = sk_list_options_parse(lookup, params, watch, out, &st);
    if (e != SK_OK) {
        assert_non_null(st);
        assert_int_equal(json_integer_value(json_object_get(st, "code")),
                         e == SK_ERR_INVALID ? 422 : 400);
    }
    json_decref(st);
    return e;
}

static void test_list_defaults_and_values(void **state)
{
    sk_list_options o;
    const char *none[] = {NULL};
    assert_int_equal(list(0, &o, none), SK_OK);
    assert_int_equal(o.rv, -1);
    assert_int_equal(o.limit, 0);
    assert_int_equal(o.rvm, SK_RVM_UNSET);
    assert_int_equal(o.include_object, SK_INCLUDE_METADATA);
    assert_null(o.cont);
    const char *some[] = {"limit=5000000",
                          "resourceVersion=12",
                          "resourceVersionMatch=Exact",
                          "labelSelector=a=b",
                          "includeObject=None",
                          "continue=",
                          NULL};
    assert_int_equal(list(0, &o, some), SK_OK);
    assert_int_equal(o.limit, 1000000);
    assert_int_equal(o.rv, 12);
    assert_int_equal(o.rvm, SK_RVM_EXACT);
    assert_string_equal(o.label_selector, "a=b");
    assert_int_equal(o.include_object, SK_INCLUDE_NONE);
    assert_null(o.cont); /* empty counts as absent */
}

static void test_list_rules(void **state)
{
    sk_list_options o;
    const char *bad_limit[] = {"limit=-1", NULL};
    const char *bad_rv[] = {"resourceVersion=x", NULL};
    const char *rvm_alone[] = {"resourceVersionMatch=Exact", NULL};
    const char *rvm_bad[] = {"resourceVersion=1", "resourceVersionMatch=Newest", NULL};
    const char *cont_rv[] = {"continue=t", "resourceVersion=1", NULL};
    const char *bad_include[] = {"includeObject=All", NULL};
    assert_int_equal(list(0, &o, bad_limit), SK_ERR_BAD_REQUEST);
    assert_int_equal(list(0, &o, bad_rv), SK_ERR_BAD_REQUEST);
    assert_int_equal(list(0, &o, rvm_alone), SK_ERR_INVALID);
    assert_int_equal(list(0, &o, rvm_bad), SK_ERR_INVALID);
    assert_int_equal(list(0, &o, cont_rv), SK_ERR_BAD_REQUEST);
    assert_int_equal(list(0, &o, bad_include), SK_ERR_BAD_REQUEST);
}

static void test_watch_rules(void **state)
{
    sk_list_options o;
    const char *watch_list[] = {"sendInitialEvents=true", "allowWatchBookmarks=true",
                                "resourceVersionMatch=NotOlderThan", "timeoutSeconds=30", NULL};
    assert_int_equal(list(1, &o, watch_list), SK_OK);
    assert_int_equal(o.send_initial_events, 1);
    assert_true(o.allow_bookmarks);
    assert_int_equal(o.timeout_s, 30);
    const char *no_bookmarks[] = {"sendInitialEvents=true", "resourceVersionMatch=NotOlderThan",
                                  NULL};
    const char *no_rvm[] = {"sendInitialEvents=false", NULL};
    const char *rvm_only[] = {"resourceVersionMatch=NotOlderThan", NULL};
    const char *bad_bool[] = {"sendInitialEvents=yes", NULL};
    const char *bad_timeout[] = {"timeoutSeconds=-5", NULL};
    assert_int_equal(list(1, &o, no_bookmarks), SK_ERR_INVALID);
    assert_int_equal(list(1, &o, no_rvm), SK_ERR_INVALID);
    assert_int_equal(list(1, &o, rvm_only), SK_ERR_INVALID);
    assert_int_equal(list(1, &o, bad_bool), SK_ERR_BAD_REQUEST);
    assert_int_equal(list(1, &o, bad_timeout), SK_ERR_BAD_REQUEST);
}

static void test_write_options(void **state)
{
    sk_write_options o;
    json_t *st = NULL;
    const char *none[] = {NULL};
    assert_int_equal(sk_write_options_parse(lookup, none, "CreateOptions", &o, &st), SK_OK);
    assert_false(o.dry_run);
    assert_int_equal(o.validation, SK_FV_WARN);
    const char *strict[] = {"dryRun=All", "fieldValidation=Strict", NULL};
    assert_int_equal(sk_write_options_parse(lookup, strict, "CreateOptions", &o, &st), SK_OK);
    assert_true(o.dry_run);
    assert_int_equal(o.validation, SK_FV_STRICT);
    /* kube's ValidateCreateOptions: every bad parameter, one 422. */
    const char *bad[] = {"fieldValidation=Loose", "dryRun=Some", NULL};
    assert_int_equal(sk_write_options_parse(lookup, bad, "CreateOptions", &o, &st), SK_ERR_INVALID);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "CreateOptions.meta.k8s.io \"\" is invalid: [dryRun: Unsupported value: "
                        "[]string{\"Some\"}: supported values: \"All\", fieldValidation: "
                        "Unsupported value: \"Loose\": supported values: \"\", \"Ignore\", "
                        "\"Strict\", \"Warn\"]");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 422);
    json_t *causes = json_object_get(json_object_get(st, "details"), "causes");
    assert_int_equal(json_array_size(causes), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(causes, 0), "field")),
                        "dryRun");
    json_decref(st);
}

/* dryRun in DeleteOptions, from the body or from the query: kubectl's
 * --dry-run=server sends it in the body, and ignoring it deletes for real. */
static void test_delete_dry_run(void **state)
{
    sk_delete_options d;
    json_t *st = NULL;
    json_t *body = json_loads("{\"kind\":\"DeleteOptions\",\"dryRun\":[\"All\"]}", 0, NULL);
    assert_int_equal(sk_delete_options_decode(body, &d, &st), SK_OK);
    assert_true(d.dry_run);
    json_decref(body);
    body = json_loads("{\"dryRun\":[]}", 0, NULL);
    assert_int_equal(sk_delete_options_decode(body, &d, &st), SK_OK);
    assert_false(d.dry_run);
    json_decref(body);
    const char *query[] = {"dryRun=All", NULL};
    assert_int_equal(sk_delete_options_query(lookup, query, &d, &st), SK_OK);
    assert_true(d.dry_run);
    const char *none[] = {NULL};
    assert_int_equal(sk_delete_options_query(lookup, none, &d, &st), SK_OK);
    assert_false(d.dry_run);
    body = json_loads("{\"dryRun\":[\"All\",\"Some\"],\"propagationPolicy\":\"Later\"}", 0, NULL);
    assert_int_equal(sk_delete_options_decode(body, &d, &st), SK_ERR_INVALID);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "DeleteOptions.meta.k8s.io \"\" is invalid: [propagationPolicy: "
                        "Unsupported value: \"Later\": supported values: \"Foreground\", "
                        "\"Background\", \"Orphan\", \"nil\", dryRun: Unsupported value: "
                        "[]string{\"All\", \"Some\"}: supported values: \"All\"]");
    json_decref(st);
    json_decref(body);
    const char *bad_query[] = {"dryRun=", NULL};
    assert_int_equal(sk_delete_options_query(lookup, bad_query, &d, &st), SK_ERR_INVALID);
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 422);
    json_decref(st);
}

static void test_delete_options(void **state)
{
    sk_delete_options d;
    json_t *st = NULL;
    json_t *body = json_loads("{\"preconditions\":{\"uid\":\"u\",\"resourceVersion\":\"7\"},"
                              "\"propagationPolicy\":\"Foreground\",\"dryRun\":[\"All\"]}",
                              0, NULL);
    assert_int_equal(sk_delete_options_decode(body, &d, &st), SK_OK);
    assert_string_equal(d.precondition_uid, "u");
    assert_int_equal(d.precondition_rev, 7);
    json_decref(body);
    static const char *const wrong[] = {
        "{\"preconditions\":{\"uid\":123}}",
        "{\"preconditions\":{\"resourceVersion\":5}}",
        "{\"preconditions\":[]}",
        "{\"gracePeriodSeconds\":\"10\"}",
        "{\"orphanDependents\":\"yes\"}",
        "{\"dryRun\":[1]}",
        "{\"preconditions\":{\"resourceVersion\":\"-1\"}}",
    };
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        body = json_loads(wrong[i], 0, NULL);
        st = NULL;
        assert_int_equal(sk_delete_options_decode(body, &d, &st), SK_ERR_BAD_REQUEST);
        assert_int_equal(json_integer_value(json_object_get(st, "code")), 400);
        json_decref(st);
        json_decref(body);
    }
    body = json_loads("{\"preconditions\":{\"uid\":123}}", 0, NULL);
    assert_int_equal(sk_delete_options_decode(body, &d, &st), SK_ERR_BAD_REQUEST);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "json: cannot unmarshal number into Go struct field "
                        "Preconditions.preconditions.uid of type types.UID");
    json_decref(st);
    json_decref(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_defaults_and_values),
        cmocka_unit_test(test_list_rules),
        cmocka_unit_test(test_watch_rules),
        cmocka_unit_test(test_write_options),
        cmocka_unit_test(test_delete_options),
        cmocka_unit_test(test_delete_dry_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
