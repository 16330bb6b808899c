/*
 * test_selector.c - label and field selector parsing and matching, with
 * the exact error messages labels.Parse and fields.ParseSelector produce.
 */
#include "kube/registry.h"
#include "kube/selector.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *load(const char *s)
{
    json_t *v = json_loads(s, 0, NULL);
    assert_non_null(v);
    return v;
}

/* Parses sel and checks it against labels (JSON text) for want. */
static void label_match(const char *sel, const char *labels, int want)
{
    sk_label_selector *ls = NULL;
    char *err = NULL;
    if (sk_label_selector_parse(sel, &ls, &err) != SK_OK)
        fail_msg("parse %s: %s", sel, err);
    json_t *l = load(labels);
    if (sk_label_selector_matches(ls, l) != want)
        fail_msg("selector %s on %s: want %d", sel, labels, want);
    json_decref(l);
    sk_label_selector_free(ls);
}

static void label_error(const char *sel, const char *want)
{
    sk_label_selector *ls = NULL;
    char *err = NULL;
    assert_int_equal(sk_label_selector_parse(sel, &ls, &err), SK_ERR_BAD_REQUEST);
    assert_null(ls);
    assert_string_equal(err, want);
    free(err);
}

static void test_label_operators(void **state)
{
    (void)state;
    label_match("a=b", "{\"a\":\"b\"}", 1);
    label_match("a=b", "{\"a\":\"c\"}", 0);
    label_match("a=b", "{}", 0);
    label_match("a==b", "{\"a\":\"b\"}", 1);
    label_match("a!=b", "{\"a\":\"b\"}", 0);
    label_match("a!=b", "{\"a\":\"c\"}", 1);
    label_match("a!=b", "{}", 1);
    label_match("a in (x,y)", "{\"a\":\"y\"}", 1);
    label_match("a in (x,y)", "{\"a\":\"z\"}", 0);
    label_match("a in (x,y)", "{}", 0);
    label_match("a notin (x,y)", "{\"a\":\"y\"}", 0);
    label_match("a notin (x,y)", "{\"a\":\"z\"}", 1);
    label_match("a notin (x,y)", "{}", 1);
    label_match("a", "{\"a\":\"\"}", 1);
    label_match("a", "{\"b\":\"\"}", 0);
    label_match("!a", "{\"b\":\"\"}", 1);
    label_match("!a", "{\"a\":\"x\"}", 0);
    label_match("a>5", "{\"a\":\"10\"}", 1);
    label_match("a>5", "{\"a\":\"5\"}", 0);
    label_match("a>5", "{\"a\":\"x\"}", 0);
    label_match("a<5", "{\"a\":\"-3\"}", 1);
    label_match("a<5", "{}", 0);
    label_match("a=", "{\"a\":\"\"}", 1);
    label_match("example.com/app=web", "{\"example.com/app\":\"web\"}", 1);
}

static void test_label_syntax(void **state)
{
    (void)state;
    sk_label_selector *ls = NULL;
    char *err = NULL;
    assert_int_equal(sk_label_selector_parse("", &ls, &err), SK_OK);
    assert_true(sk_label_selector_is_empty(ls));
    assert_true(sk_label_selector_matches(ls, NULL));
    sk_label_selector_free(ls);
    assert_int_equal(sk_label_selector_parse("a", &ls, &err), SK_OK);
    assert_false(sk_label_selector_is_empty(ls));
    assert_false(sk_label_selector_matches(ls, NULL));
    sk_label_selector_free(ls);

    label_match(" a = b ,\tc in ( x , y ) , !d ", "{\"a\":\"b\",\"c\":\"x\"}", 1);
    label_match("a=b,c=d", "{\"a\":\"b\",\"c\":\"x\"}", 0);
    /* The upstream doc example: empty values are allowed in sets. */
    label_match("x in (foo,,baz),y,z notin ()", "{\"x\":\"\",\"y\":\"1\"}", 1);
    label_match("x in (foo,,baz),y,z notin ()", "{\"x\":\"\",\"y\":\"1\",\"z\":\"\"}", 0);
    label_match("x in (a,)", "{\"x\":\"\"}", 1);
    /* "in" and "notin" are identifiers where a key or value is expected. */
    label_match("in in (in,notin)", "{\"in\":\"notin\"}", 1);
    label_match("notin", "{\"notin\":\"x\"}", 1);
}

static const char value_msg[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

static void test_label_errors(void **state)
{
    (void)state;
    label_error("a=b c", "found 'c', expected: ',' or 'end of string'");
    label_error("a,", "found '', expected: identifier after ','");
    label_error(",a", "found ',', expected: !, identifier, or 'end of string'");
    label_error("!a=b", "found '=', expected: ',' or 'end of string'");
    label_error("!", "unable to parse requirement: found '', expected: identifier");
    label_error("a in b", "unable to parse requirement: found 'b' expected: '('");
    label_error("a in (b", "unable to parse requirement: found '', expected: ',' or ')'");
    label_error("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'");
    label_error("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or "
                            "identifier");
    label_error("a (b)",
                "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt");
    label_error("a==(", "unable to parse requirement: found '(', expected: identifier");
    label_error("a>b", "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', "
                       "'Lt' operators, the value must be an integer");
    {
        char want[1024];
        snprintf(want, sizeof want,
                 "unable to parse requirement: values[0][a]: Invalid value: \"-b\": %s", value_msg);
        label_error("a=-b", want);
        snprintf(want, sizeof want,
                 "unable to parse requirement: [values[0]: Invalid value: \"-1x\": for 'Gt', 'Lt' "
                 "operators, the value must be an integer, values[0][a]: Invalid value: \"-1x\": "
                 "%s]",
                 value_msg);
        label_error("a<-1x", want);
        /* Values are reported in sorted order. */
        snprintf(want, sizeof want,
                 "unable to parse requirement: values[0][a]: Invalid value: \"-z\": %s", value_msg);
        label_error("a in (ok,-z)", want);
    }
    label_error("-a=b",
                "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must "
                "consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
    label_error("a/b/c", "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a "
                         "qualified name must consist of alphanumeric characters, '-', '_' or "
                         "'.', and must start and end with an alphanumeric character (e.g. "
                         "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
                         "subdomain prefix and '/' (e.g. 'example.com/MyName')");
    label_error("/a", "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part "
                      "must be non-empty");
}

static const sk_resource *res(const char *group, const char *resource)
{
    const sk_resource *r = sk_registry_find(group, "v1", resource);
    assert_non_null(r);
    return r;
}

static void field_match(const sk_resource *r, const char *sel, const char *obj, int want)
{
    sk_field_selector *fs = NULL;
    char *err = NULL;
    if (sk_field_selector_parse(sel, r, &fs, &err) != SK_OK)
        fail_msg("parse %s: %s", sel, err);
    json_t *o = load(obj);
    if (sk_field_selector_matches(fs, o) != want)
        fail_msg("selector %s on %s: want %d", sel, obj, want);
    json_decref(o);
    sk_field_selector_free(fs);
}

static void field_error(const sk_resource *r, const char *sel, const char *want)
{
    sk_field_selector *fs = NULL;
    char *err = NULL;
    assert_int_equal(sk_field_selector_parse(sel, r, &fs, &err), SK_ERR_BAD_REQUEST);
    assert_null(fs);
    assert_string_equal(err, want);
    free(err);
}

static void test_field_selectors(void **state)
{
    (void)state;
    const sk_resource *cm = res("", "configmaps"), *secrets = res("", "secrets");
    const sk_resource *events = res("", "events");
    const char *obj = "{\"metadata\":{\"name\":\"a,b\",\"namespace\":\"ns\"},\"type\":\"Opaque\"}";
    field_match(cm, "", obj, 1);
    field_match(cm, "metadata.name=a\\,b", obj, 1);
    field_match(cm, "metadata.name==a\\,b,metadata.namespace=ns", obj, 1);
    field_match(cm, "metadata.name=a\\,b,metadata.namespace!=ns", obj, 0);
    field_match(cm, "metadata.namespace!=other", obj, 1);
    field_match(cm, "metadata.name=x", obj, 0);
    field_match(secrets, "type=Opaque", obj, 1);
    field_match(secrets, "type=", "{}", 1);
    field_match(secrets, "type!=Opaque", "{}", 1);
    field_match(events, "involvedObject.name=p,reason=Started",
                "{\"involvedObject\":{\"name\":\"p\"},\"reason\":\"Started\"}", 1);
    field_match(cm, "metadata.name=a\\=b\\\\c", "{\"metadata\":{\"name\":\"a=b\\\\c\"}}", 1);

    sk_field_selector *fs = NULL;
    char *err = NULL;
    assert_int_equal(sk_field_selector_parse("metadata.namespace!=x,metadata.name=n,"
                                             "metadata.namespace==ns",
                                             cm, &fs, &err),
                     SK_OK);
    assert_string_equal(sk_field_selector_required(fs, "metadata.name"), "n");
    assert_string_equal(sk_field_selector_required(fs, "metadata.namespace"), "ns");
    assert_null(sk_field_selector_required(fs, "type"));
    sk_field_selector_free(fs);

    field_error(cm, "spec.x=1", "field label not supported: spec.x");
    field_error(cm, "type=Opaque", "field label not supported: type");
    field_error(cm, "metadata.name = x", "field label not supported: metadata.name ");
    field_error(cm, "foo", "invalid selector: 'foo'; can't understand 'foo'");
    field_error(cm, "metadata.name=a=b",
                "invalid field selector: unescaped character in value: 61");
    field_error(cm, "metadata.name=a\\x", "invalid field selector: invalid escape sequence: \\x");
    field_error(cm, "metadata.name=a\\", "invalid field selector: invalid escape sequence: \\");
    /* Terms are sorted first, so "a..." is reported before "z...". */
    field_error(cm, "z=1,a=1", "field label not supported: a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_operators),
        cmocka_unit_test(test_label_syntax),
        cmocka_unit_test(test_label_errors),
        cmocka_unit_test(test_field_selectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
