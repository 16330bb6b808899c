/*
 * test_cel_parse.c - the CEL parser (cel/parse.h) where cel-go's parser
 * tests (tests/cel/parse_test.py) do not reach: the options they run
 * without (optional syntax, backquoted names, no macros, the default
 * limits), literals at their limits and Go's way of printing them, and the
 * order of several errors.
 */
#include "cel/debug.h"
#include "cel/parse.h"
#include "core/arena.h"
#include "core/buf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* src's debug string, or its errors as "line:col: message" lines; malloc'd. */
static char *parse(const char *src, size_t len, const sk_cel_parse_options *opt)
{
    sk_arena *a = sk_arena_new();
    sk_cel_ast *ast = sk_cel_parse(a, src, len, opt);
    sk_buf b = SK_BUF_INIT;
    if (sk_cel_ast_expr(ast))
        sk_cel_debug_string(&b, sk_cel_ast_expr(ast));
    for (size_t i = 0; i < sk_cel_ast_error_count(ast); i++) {
        const sk_cel_diag *d = sk_cel_ast_error(ast, i);
        sk_buf_printf(&b, "%s%d:%d: %s", i ? "\n" : "", d->line, d->col, d->message);
    }
    sk_arena_free(a);
    return sk_buf_steal(&b, NULL);
}

static void expect(const char *src, const sk_cel_parse_options *opt, const char *want)
{
    char *got = parse(src, strlen(src), opt);
    assert_string_equal(got, want);
    free(got);
}

#define ID "^#*expr.Expr_IdentExpr#"
#define CALL "^#*expr.Expr_CallExpr#"
#define STR "^#*expr.Constant_StringValue#"
#define INT "^#*expr.Constant_Int64Value#"
#define DBL "^#*expr.Constant_DoubleValue#"
#define ENTRY "^#*expr.Expr_CreateStruct_Entry#"
#define OBJ "^#*expr.Expr_StructExpr#"

static void test_optional_syntax_when_enabled(void **state)
{
    sk_cel_parse_options on = {.enable_optional_syntax = 1};
    expect("a.?b", &on, "_?._(\n  a" ID ",\n  \"b\"" STR "\n)" CALL);
    expect("a[?0]", &on, "_[?_](\n  a" ID ",\n  0" INT "\n)" CALL);
    expect("{?'k': v}", &on, "{\n  ?\"k\"" STR ":v" ID ENTRY "\n}" OBJ);
    expect("M{?f: 1}", &on, "M{\n  ?f:1" INT ENTRY "\n}" OBJ);
    expect("[?a, b]", &on, "[\n  a" ID ",\n  b" ID "\n]^#*expr.Expr_ListExpr#");
    /* Off (cel-go's default), each use is refused where it is written. */
    expect("[?a, b] + x.?y", NULL, "1:2: unsupported syntax '?'\n1:12: unsupported syntax '.?'");
}

/* cel-go's parser_test.go cases with its options on (its trees, ids dropped). */
static void test_cel_gos_cases_with_the_options_on(void **state)
{
    sk_cel_parse_options opt = {.enable_optional_syntax = 1};
    expect("a.?b[?0] && a[?c]", &opt,
           "_&&_(\n  _[?_](\n    _?._(\n      a" ID ",\n      \"b\"" STR "\n    )" CALL
           ",\n    0" INT "\n  )" CALL ",\n  _[?_](\n    a" ID ",\n    c" ID "\n  )" CALL
           "\n)" CALL);
    expect("[?a[?b]]", &opt,
           "[\n  _[?_](\n    a" ID ",\n    b" ID "\n  )" CALL "\n]^#*expr.Expr_ListExpr#");
    expect("Msg{?field: value}", &opt, "Msg{\n  ?field:value" ID ENTRY "\n}" OBJ);
    sk_cel_parse_options esc = {.enable_ident_escape = 1};
    expect("a.`b c`", &esc, "a" ID ".b c^#*expr.Expr_SelectExpr#");
    expect("a.`/foo`", &esc, "a" ID "./foo^#*expr.Expr_SelectExpr#");
    expect("a.`b.c`()", &esc, "1:8: Syntax error: mismatched input '(' expecting <EOF>");
}

static void test_backquoted_names_when_enabled(void **state)
{
    sk_cel_parse_options on = {.enable_ident_escape = 1};
    expect("a.`b-c`", &on, "a" ID ".b-c^#*expr.Expr_SelectExpr#");
    expect("M{`in`: 1}", &on, "M{\n  in:1" INT ENTRY "\n}" OBJ);
    expect("a.`b-c`", NULL, "1:3: unsupported syntax: '`'");
}

static void test_macros_can_be_turned_off(void **state)
{
    sk_cel_parse_options off = {.disable_macros = 1};
    expect("has(a.b)", &off, "has(\n  a" ID ".b^#*expr.Expr_SelectExpr#\n)" CALL);
    expect("x.all(y)", NULL, "x" ID ".all(\n  y" ID "\n)" CALL); /* no 1-argument all */
}

/* optMap and optFlatMap are the optional library's: calls without it. */
static void test_optional_macros_when_enabled(void **state)
{
    (void)state;
    sk_cel_parse_options on = {.enable_optional_macros = 1};
    expect("x.optMap(y, y)", NULL, "x" ID ".optMap(\n  y" ID ",\n  y" ID "\n)" CALL);
    char *got = parse("x.optMap(y, y)", 14, &on);
    assert_true(strncmp(got, "_?_:_(\n  x" ID ".hasValue()" CALL ",\n  optional" ID ".of(", 60) ==
                0);
    free(got);
    got = parse("x.optFlatMap(y, y)", 18, &on);
    assert_non_null(strstr(got, "__comprehension__"));
    assert_null(strstr(got, ".of("));
    free(got);
    expect("x.optMap(y.z, 1)", &on, "1:11: optMap() variable name must be a simple identifier");
    expect("x.optFlatMap(1, 1)", &on,
           "1:14: optFlatMap() variable name must be a simple identifier");
}

static void test_literals_at_their_limits_and_as_go_prints_them(void **state)
{
    expect("-9223372036854775808", NULL, "-9223372036854775808" INT);
    expect("9223372036854775808", NULL, "1:1: invalid int literal");
    expect("18446744073709551615u", NULL, "18446744073709551615u^#*expr.Constant_Uint64Value#");
    expect("1 + 18446744073709551616u", NULL, "1:5: invalid uint literal");
    expect("1e6", NULL, "1e+06" DBL);
    expect("0.00001", NULL, "1e-05" DBL);
    expect("123456.5", NULL, "123456.5" DBL);
    expect("-0.0", NULL, "-0" DBL);
    expect("1e-400", NULL, "0" DBL); /* underflow is zero, as in Go */
    expect("'\\x00\\u0080\\u00a0\\u00e9\\t'", NULL, "\"\\x00\\u0080\\u00a0\xc3\xa9\\t\"" STR);
    expect("b'\\xff\\303\\251'", NULL, "b\"\\xff\xc3\xa9\"^#*expr.Constant_BytesValue#");
    expect(".a.b{c: 1}", NULL, ".a.b{\n  c:1" INT ENTRY "\n}" OBJ);
    expect(".x", NULL, ".x" ID);
    expect("[,]", NULL, "[]^#*expr.Expr_ListExpr#");
}

static void test_errors_are_all_reported_in_order(void **state)
{
    /* Semantic errors do not stop the parse; the syntax error does. */
    expect("if + as.x + '\\udead' + )", NULL,
           "1:1: reserved identifier: if\n1:6: reserved identifier: as\n"
           "1:13: invalid unicode code point\n"
           "1:24: Syntax error: mismatched input ')' expecting {'[', '{', '(', '.', '-', '!', "
           "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}");
    /* A reserved word is a fine field name. */
    expect("a.if", NULL, "a" ID ".if^#*expr.Expr_SelectExpr#");
}

static void test_default_limits(void **state)
{
    /* 249 parentheses nest 250 expressions: the most cel-go allows. */
    char src[600];
    memset(src, '(', 249);
    src[249] = 'x';
    memset(src + 250, ')', 249);
    char *got = parse(src, 499, NULL);
    assert_string_equal(got, "x" ID);
    free(got);
    memset(src, '(', 250);
    src[250] = 'x';
    memset(src + 251, ')', 250);
    got = parse(src, 501, NULL);
    assert_string_equal(got, "-1:0: expression recursion limit exceeded: 250");
    free(got);
    /* 251 selects in a chain nest no rules but are 251 nodes deep. */
    sk_buf b = SK_BUF_INIT;
    sk_buf_putc(&b, 'a');
    for (int i = 0; i < 251; i++)
        sk_buf_puts(&b, ".a");
    got = parse(b.data, b.len, NULL);
    assert_string_equal(got, "-1:0: max recursion depth exceeded");
    free(got);
    /* 100,000 code points at most. */
    sk_buf_reset(&b);
    for (int i = 0; i < 50001; i++)
        sk_buf_puts(&b, "1+");
    got = parse(b.data, b.len, NULL);
    assert_string_equal(
        got, "-1:0: expression code point size exceeds limit: size: 100002, limit 100000");
    free(got);
    sk_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_optional_syntax_when_enabled),
        cmocka_unit_test(test_cel_gos_cases_with_the_options_on),
        cmocka_unit_test(test_backquoted_names_when_enabled),
        cmocka_unit_test(test_macros_can_be_turned_off),
        cmocka_unit_test(test_optional_macros_when_enabled),
        cmocka_unit_test(test_literals_at_their_limits_and_as_go_prints_them),
        cmocka_unit_test(test_errors_are_all_reported_in_order),
        cmocka_unit_test(test_default_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
