/*
 * test_cel_format.c - CEL's format library (cel/lib_format.h) with kube's
 * checks (policy/formats.h): the cases of k8s.io/apiserver's
 * pkg/cel/library/format_test.go at release-1.32, each an expression and
 * the messages validate() must give (none: optional.none()), plus
 * format.named and the formats' equality.
 */
#include "cel/eval.h"
#include "cel/parse.h"
#include "core/arena.h"
#include "policy/formats.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define LABEL_MSG                                                                                  \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "    \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define SUBDOMAIN_MSG                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define DNS1035_MSG                                                                                \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "   \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "         \
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"

static const sk_cel_val *eval(sk_arena *a, const char *src)
{
    sk_cel_ast *ast = sk_cel_parse(a, src, strlen(src), NULL);
    const sk_cel_expr *e = sk_cel_ast_expr(ast);
    if (!e)
        fail_msg("%s does not parse", src);
    sk_cel_eval_options opt = {.format_validate = sk_policy_format_validate};
    return sk_cel_eval(a, e, &opt, NULL);
}

/* src gives optional.none() (want NULL) or optional.of([want]). */
static void expect(const char *src, const char *want)
{
    sk_arena *a = sk_arena_new();
    const sk_cel_val *v = eval(a, src);
    if (v->type != SK_CEL_V_OPTIONAL)
        fail_msg("%s: a %s (%s)", src, sk_cel_type_name(v),
                 v->type == SK_CEL_V_ERROR ? v->u.str.s : "");
    if (!want) {
        if (v->u.opt)
            fail_msg("%s: a value, expected optional.none()", src);
    } else {
        const sk_cel_val *l = v->u.opt;
        if (!l || l->type != SK_CEL_V_LIST || l->u.list.n != 1)
            fail_msg("%s: not one message", src);
        assert_string_equal(l->u.list.items[0]->u.str.s, want);
    }
    sk_arena_free(a);
}

static void expect_bool(const char *src, int want)
{
    sk_arena *a = sk_arena_new();
    const sk_cel_val *v = eval(a, src);
    if (v->type != SK_CEL_V_BOOL)
        fail_msg("%s: a %s (%s)", src, sk_cel_type_name(v),
                 v->type == SK_CEL_V_ERROR ? v->u.str.s : "");
    assert_int_equal(v->u.b, want);
    sk_arena_free(a);
}

static void test_format_go_cases(void **state)
{
    (void)state;
    expect("format.dns1123Label().validate('my-label-name')", NULL);
    expect("format.dns1123Subdomain().validate('apiextensions.k8s.io')", NULL);
    expect("format.qualifiedName().validate('apiextensions.k8s.io/v1beta1')", NULL);
    expect("format.dns1123LabelPrefix().validate('my-label-prefix-')", NULL);
    expect("format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-')", NULL);
    expect("format.dns1035LabelPrefix().validate('my-label-prefix-')", NULL);
    expect("format.uri().validate('http://example.com')", NULL);
    expect("format.uuid().validate('123e4567-e89b-12d3-a456-426614174000')", NULL);
    expect("format.byte().validate('aGVsbG8=')", NULL);
    expect("format.date().validate('2021-01-01')", NULL);
    expect("format.datetime().validate('2021-01-01T00:00:00Z')", NULL);
    expect("format.dns1123Label().validate('contains a space')", LABEL_MSG);
    expect("format.dns1123Subdomain().validate('contains a space')", SUBDOMAIN_MSG);
    expect("format.dns1035Label().validate('contains a space')", DNS1035_MSG);
    expect("format.qualifiedName().validate('contains a space')",
           "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
           "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
           "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
    expect("format.dns1123LabelPrefix().validate('contains a space-')", LABEL_MSG);
    expect("format.dns1123SubdomainPrefix().validate('contains a space-')", SUBDOMAIN_MSG);
    expect("format.dns1035LabelPrefix().validate('contains a space-')", DNS1035_MSG);
    expect("format.dns1123Subdomain().validate('example.com')", NULL);
    expect("format.dns1035Label().validate('my-label-name')", NULL);
    expect("format.qualifiedName().validate('my.name')", NULL);
    expect("format.byte().validate('aGVsbG8')", "invalid base64");
    expect("format.date().validate('2020-01-32')", "invalid date");
    expect("format.datetime().validate('2020-01-32T00:00:00Z')", "invalid datetime");
    expect("format.labelValue().validate('my-cool-label-Value')", NULL);
    expect("format.labelValue().validate('my-cool-label-Value!!\\n\\n!!!')",
           "a valid label must be an empty string or consist of alphanumeric characters, '-', "
           "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
           "or 'my_value',  or '12345', regex used for validation is "
           "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
    /* url.ParseRequestURI's own error text */
    expect("format.uri().validate('not a uri')", "parse \"not a uri\": invalid URI for request");
    expect("format.uuid().validate('123e4567')", "does not match the UUID format");
    expect_bool("format.named('unknown').hasValue()", 0);
}

static void test_named_and_equality(void **state)
{
    (void)state;
    static const char *const names[] = {"dns1123Label", "dns1123Subdomain", "dns1035Label",
                                        "qualifiedName", "dns1123LabelPrefix",
                                        "dns1123SubdomainPrefix", "dns1035LabelPrefix",
                                        "labelValue", "uri", "uuid", "byte", "date", "datetime"};
    size_t n = sizeof names / sizeof *names;
    char src[256];
    for (size_t i = 0; i < n; i++) {
        snprintf(src, sizeof src, "format.named('%s').hasValue()", names[i]);
        expect_bool(src, 1);
        snprintf(src, sizeof src, "format.named('%s').value() == format.%s()", names[i], names[i]);
        expect_bool(src, 1);
        for (size_t j = 0; j < n; j++) {
            snprintf(src, sizeof src, "format.%s() == format.%s()", names[i], names[j]);
            expect_bool(src, i == j);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_go_cases),
        cmocka_unit_test(test_named_and_equality),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
