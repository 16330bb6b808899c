/*
 * test_cel_eval.c - the CEL evaluator (cel/eval.h) where the conformance
 * tests (tests/cel/eval_test.py) do not look closely: which error (in
 * cel-go's words, which Kubernetes shows its users) a strict
 * function passes on, that && and || absorb errors from either side, the
 * integer edges, variables from a callback and from a JSON object, Gateway
 * API's listener rules over JSON listeners, the step bound stopping
 * expressions that would run for hours, and durations and timestamps at
 * their range edges and in time zones (tzdata's rules past 2037 too), and
 * optionals where the conformance tests stop (laziness, unwrap, errors),
 * and the strings extension's edges and its work bound.
 */
#include "cel/eval.h"
#include "cel/parse.h"
#include "core/arena.h"
#include "core/buf.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct run {
    sk_arena *a;
    const sk_cel_val *v;
    uint64_t steps;
} run;

static run eval_with(const char *src, const sk_cel_eval_options *opt)
{
    run r = {.a = sk_arena_new()};
    /* Kubernetes' environment has optional types. */
    sk_cel_parse_options popt = {.enable_optional_syntax = 1, .enable_optional_macros = 1};
    sk_cel_ast *ast = sk_cel_parse(r.a, src, strlen(src), &popt);
    const sk_cel_expr *e = sk_cel_ast_expr(ast);
    assert_non_null(e);
    sk_cel_usage used = {0};
    r.v = sk_cel_eval(r.a, e, opt, &used);
    r.steps = used.steps;
    return r;
}

/* src must give the error message want. */
static void expect_error(const char *src, const char *want)
{
    run r = eval_with(src, NULL);
    if (r.v->type != SK_CEL_V_ERROR)
        fail_msg("%s: not an error but a %s", src, sk_cel_type_name(r.v));
    assert_string_equal(r.v->u.str.s, want);
    sk_arena_free(r.a);
}

static void expect_bool(const char *src, int want)
{
    run r = eval_with(src, NULL);
    if (r.v->type != SK_CEL_V_BOOL)
        fail_msg("%s: a %s (%s), not a bool", src, sk_cel_type_name(r.v),
                 r.v->type == SK_CEL_V_ERROR ? r.v->u.str.s : "");
    assert_int_equal(r.v->u.b, want);
    sk_arena_free(r.a);
}

static void expect_int(const char *src, int64_t want)
{
    run r = eval_with(src, NULL);
    if (r.v->type != SK_CEL_V_INT)
        fail_msg("%s: a %s (%s), not an int", src, sk_cel_type_name(r.v),
                 r.v->type == SK_CEL_V_ERROR ? r.v->u.str.s : "");
    assert_true(r.v->u.i == want);
    sk_arena_free(r.a);
}

static void expect_str(const char *src, const char *want)
{
    run r = eval_with(src, NULL);
    if (r.v->type != SK_CEL_V_STRING)
        fail_msg("%s: a %s (%s), not a string", src, sk_cel_type_name(r.v),
                 r.v->type == SK_CEL_V_ERROR ? r.v->u.str.s : "");
    assert_string_equal(r.v->u.str.s, want);
    sk_arena_free(r.a);
}

static void test_and_or_absorb_errors_from_either_side(void **state)
{
    (void)state;
    expect_bool("false && 1 / 0 == 1", 0);
    expect_bool("1 / 0 == 1 && false", 0);
    expect_bool("true || {}['k']", 1);
    expect_bool("{}['k'] || true", 1);
    /* Neither side decides: the error (the left one first) is the result. */
    expect_error("true && 1 / 0 == 1", "division by zero");
    expect_error("{}['k'] || 1 / 0 == 1", "no such key: k");
    expect_error("1 / 0 == 1 || {}['k']", "division by zero");
    /* A non-bool operand is no error but has no overload, unless absorbed. */
    expect_bool("false && 1", 0);
    expect_bool("1 && false", 0);
    expect_error("true && 1", "no such overload");
    /* The ternary is strict in its condition only. */
    expect_int("true ? 1 : 1 / 0", 1);
    expect_error("1 / 0 == 1 ? 1 : 2", "division by zero");
    expect_error("'x' ? 1 : 2", "no such overload");
}

static void test_durations_are_gos(void **state)
{
    (void)state;
    expect_bool("duration('1h2m3.5s') == duration('3723500ms')", 1);
    expect_bool("string(duration('1h2m3.5s')) == '3723.5s'", 1);
    expect_bool("string(duration('-1ns')) == '-0.000000001s'", 1);
    expect_bool("string(duration('1.5h')) == '5400s' && string(duration('0')) == '0s'", 1);
    expect_int("int(duration('-1ns'))", -1);
    expect_int("int(duration('1us') + duration('1\u00b5s'))", 2000);
    /* cel-go's durations are Go's: int64 nanoseconds, both ends exact. */
    expect_int("int(duration('9223372036.854775807s'))", INT64_MAX);
    expect_int("int(duration('-9223372036.854775808s'))", INT64_MIN);
    expect_error("duration('9223372036.854775808s')",
                 "time: invalid duration \"9223372036.854775808s\" (duration overflow)");
    expect_error("-duration('-9223372036.854775808s')", "duration overflow");
    expect_error("duration('9223372036s') + duration('1s')", "duration overflow");
    expect_error("duration('1')", "time: invalid duration \"1\"");
    expect_error("duration('1d')", "time: invalid duration \"1d\"");
    expect_error("duration('.s')", "time: invalid duration \".s\"");
    /* Accessors truncate toward zero; getMilliseconds is the whole. */
    expect_int("duration('-1.5h').getHours()", -1);
    expect_int("duration('-1.5h').getMinutes()", -90);
    expect_int("duration('1.5s').getMilliseconds()", 1500);
    expect_error("duration('1s').getFullYear()", "no such overload");
    expect_error("1 + duration('1s')", "no such overload");
}

static void test_timestamps_are_gos(void **state)
{
    (void)state;
    expect_bool("timestamp('2009-02-13T23:31:30+01:00') == timestamp('2009-02-13T22:31:30Z')", 1);
    /* The offset written stays for the text only (Go's time.Time). */
    expect_str("string(timestamp('2009-02-13T23:31:30.5-02:30') + duration('1h'))",
               "2009-02-14T00:31:30.5-02:30");
    expect_int("timestamp('2009-02-13T23:31:30+01:00').getHours()", 22);
    expect_str("string(timestamp('2009-02-13T23:31:30-00:00'))", "2009-02-13T23:31:30Z");
    expect_bool("string(timestamp('2009-02-13T23:31:30.120Z')) == '2009-02-13T23:31:30.12Z'", 1);
    expect_bool("string(timestamp(-1)) == '1969-12-31T23:59:59Z'", 1);
    expect_int("int(timestamp('1969-12-31T23:59:59.5Z'))", -1);
    expect_error("timestamp('2009-02-29T00:00:00Z')",
                 "parsing time \"2009-02-29T00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\"");
    expect_error("timestamp('2009-02-13 23:31:30Z')",
                 "parsing time \"2009-02-13 23:31:30Z\" as \"2006-01-02T15:04:05Z07:00\"");
    /* The range is 0001-01-01 .. 9999-12-31 in UTC, whatever the offset. */
    expect_error("timestamp('0001-01-01T00:00:00+00:01')", "timestamp overflow");
    expect_int("int(timestamp(253402300799))", 253402300799LL);
    expect_error("timestamp(253402300800)", "timestamp overflow");
    expect_error("timestamp('9999-12-31T23:59:59.999999999Z') + duration('1ns')",
                 "timestamp overflow");
    /* A difference is a duration: int64 nanoseconds at most. */
    expect_bool("timestamp('2262-04-11T23:47:16.854775807Z') - timestamp(0) == "
                "duration('9223372036.854775807s')",
                1);
    expect_error("timestamp('2262-04-11T23:47:16.854775808Z') - timestamp(0)", "duration overflow");
    expect_error("timestamp(0) + timestamp(0)", "no such overload");
    expect_int("timestamp(0).getDayOfWeek()", 4);
    expect_int("timestamp('0001-01-01T00:00:00Z').getDayOfWeek()", 1);
    expect_int("timestamp('2024-12-31T12:00:00Z').getDayOfYear()", 365);
}

static void test_time_zones(void **state)
{
    (void)state;
    /* Transitions from the TZif file, then its footer's rule past 2037. */
    expect_int("timestamp('2023-07-01T12:00:00Z').getHours('America/New_York')", 8);
    expect_int("timestamp('2023-01-01T12:00:00Z').getHours('America/New_York')", 7);
    expect_int("timestamp('2100-07-01T12:00:00Z').getHours('America/New_York')", 8);
    expect_int("timestamp('2100-01-01T12:00:00Z').getHours('America/New_York')", 7);
    /* Southern summer spans the new year. */
    expect_int("timestamp('2100-01-01T12:00:00Z').getHours('Australia/Sydney')", 23);
    expect_int("timestamp('2100-07-01T12:00:00Z').getHours('Australia/Sydney')", 22);
    /* Before the first transition: local mean time, -4:56:02. */
    expect_int("timestamp('1800-01-01T12:00:00Z').getSeconds('America/New_York')", 58);
    /* Offsets as cel-go reads them: Atoi on each side of the ':'. */
    expect_int("timestamp('2009-02-13T23:31:30Z').getHours('+05:30')", 5);
    expect_int("timestamp('2009-02-13T23:31:30Z').getMinutes('-00:30')", 1);
    expect_int("timestamp('2009-02-13T23:31:30Z').getHours('UTC')", 23);
    expect_int("timestamp('2009-02-13T23:31:30Z').getHours('')", 23);
    expect_error("timestamp(0).getHours('+5:x')", "strconv.Atoi: parsing \"x\": invalid syntax");
    /* Only zoneinfo files, named as Go allows. */
    expect_error("timestamp(0).getHours('Nowhere/Zone')", "unknown time zone Nowhere/Zone");
    expect_error("timestamp(0).getHours('../../../etc/passwd')",
                 "unknown time zone ../../../etc/passwd");
    expect_error("timestamp(0).getHours('/etc/passwd')", "unknown time zone /etc/passwd");
    expect_error("timestamp(0).getHours('America')", "unknown time zone America");
    expect_error("timestamp(0).getHours(1)", "no such overload");
}

static void test_optionals(void **state)
{
    (void)state;
    /* or and orValue evaluate their argument only for none. */
    expect_int("optional.of(1).orValue(1 / 0)", 1);
    expect_bool("optional.of(1).or(optional.of(1 / 0)) == optional.of(1)", 1);
    expect_error("optional.none().orValue(1 / 0)", "division by zero");
    expect_error("optional.none().or(1)", "no such overload");
    expect_error("1.orValue(2)", "no such overload");
    expect_error("optional.none().value()", "optional.none() dereference");
    /* Optional entries must be optionals; none leaves them out. */
    expect_error("[?1]", "cannot initialize optional entry from non-optional value");
    expect_error("{?'a': 1}", "cannot initialize optional entry from non-optional value");
    expect_int("size({?'a': optional.none(), 'b': 1, ?'c': optional.of(2)})", 2);
    expect_bool("[1, ?optional.none(), ?optional.of(3)] == [1, 3]", 1);
    expect_bool("optional.unwrap([optional.of(1), optional.none(), optional.of(3)]) == [1, 3]", 1);
    expect_bool("[optional.none(), optional.of('x')].unwrapOpt() == ['x']", 1);
    expect_error("optional.unwrap([1])", "no such overload");
    /* Selection and indexing on an optional are ?-selection on its value. */
    expect_bool("optional.of({'a': [1]}).a[1] == optional.none()", 1);
    expect_bool("optional.of({'a': [1]}).a[0] == optional.of(1)", 1);
    expect_error("optional.of(1).a", "type 'int' does not support field selection");
    expect_bool("!has(optional.none().a) && has(optional.of({'a': 1}).a)", 1);
    /* optMap's variable is local to its body; ofNonZeroValue uses Go's
     * zero time, not the epoch. */
    expect_int("[1].map(x, optional.of(x + 10).optMap(x, x * 2).value())[0]", 22);
    expect_bool("optional.ofNonZeroValue(timestamp(0)).hasValue()", 1);
    expect_bool("optional.ofNonZeroValue(timestamp('0001-01-01T00:00:00Z')).hasValue()", 0);
    expect_bool("optional.ofNonZeroValue(duration('0s')).hasValue()", 0);
    expect_bool("type(optional.none()) == optional_type", 1);
}

static void test_strings_extension(void **state)
{
    (void)state;
    /* Go's Replace and SplitN with an empty pattern: between code points. */
    expect_str("'a\\u00e9c'.replace('', '-')", "-a-\xc3\xa9-c-");
    expect_str("'a\\u00e9c'.replace('', '-', 2)", "-a-\xc3\xa9"
                                                  "c");
    expect_str("'aaa'.replace('a', 'bb', -1)", "bbbbbb");
    expect_bool("'a\\u00e9c'.split('') == ['a', '\\u00e9', 'c']", 1);
    expect_bool("'a,b,c'.split(',', 2) == ['a', 'b,c'] && ''.split(',') == ['']", 1);
    expect_bool("''.split('') == []", 1);
    /* lastIndexOf counts code points and finds overlapping matches. */
    expect_int("'\\u00e9aaaa'.lastIndexOf('aa')", 3);
    expect_int("'\\u00e9aaaa'.lastIndexOf('aa', 2)", 2);
    expect_int("'\\u00e9aaaa'.indexOf('aa', 2)", 2);
    expect_int("'ab'.lastIndexOf('abc')", -1);
    /* cel-go v0.22 (Kubernetes 1.32) refuses an offset past the end. */
    expect_error("''.indexOf('a')", "index out of range: 0");
    expect_error("'abc'.indexOf('a', 3)", "index out of range: 3");
    /* Only Go's unicode.IsSpace is trimmed; U+200B is no space. */
    expect_str("'\\u3000 x\\u200b \\u0085'.trim()", "x\xe2\x80\x8b");
    expect_str("strings.quote('a\\x01\\\\\"')", "\"a\x01\\\\\\\"\"");
    expect_error("[1].join()", "join: invalid input: int");
    expect_str("['a', 'b'].join(', ')", "a, b");
    /* format: Go's signed %x %o %b, NaN and infinities spelled out, maps
     * sorted by their keys' text, a precision bounded. */
    expect_str("'%x %o %b %X'.format([-30, -8, -5, 255u])", "-1e -10 -101 FF");
    expect_str("'%.2f|%e|%d|%s'.format([double('-Infinity'), double('NaN'), double('Infinity'), "
               "[1.0, -0.0, 1e21]])",
               "-Infinity|NaN|Infinity|[1, -0, 1e+21]");
    expect_str("'%s'.format([{'b': [true], 'a': {2: null}, 10: b'x'}])",
               "{10: x, a: {2: null}, b: [true]}");
    expect_error("'%.101f'.format([1.0])",
                 "could not parse formatting clause: precision too large");
    expect_error("'%s %s'.format([1])", "index 1 out of range");
    expect_error("'%.2d'.format([1])",
                 "could not parse formatting clause: unrecognized formatting clause \"d\"");
    expect_error("'%s'.format([optional.none()])",
                 "error during formatting: string clause can only be used on strings, bools, "
                 "bytes, ints, doubles, maps, lists, types, durations, and timestamps");
    /* A variable named strings is not the namespace inside a macro. */
    expect_bool("[{'quote': 1}].all(strings, strings.quote == 1)", 1);
}

static void test_strings_extension_is_bounded(void **state)
{
    (void)state;
    /* A 64 KB string with every code point replaced by 64 KB would be
     * 4 GB: the result's size is charged before it is made. */
    char *big = malloc(1 << 16);
    memset(big, 'x', 1 << 16);
    json_t *vars = json_pack("{s:s#}", "big", big, (size_t)(1 << 16));
    free(big);
    sk_cel_eval_options opt = {.vars = vars};
    const char *bombs[] = {"size(big.replace('', big))", "size(big.replace('x', big))",
                           "size([big, big].join(big.replace('x', big)))",
                           "size(big.split('')) > 0 && size(big.split('').join(big)) > 0",
                           "size('%s'.format([big.split('').map(c, big)]))"};
    for (size_t i = 0; i < sizeof bombs / sizeof *bombs; i++) {
        run r = eval_with(bombs[i], &opt);
        if (r.v->type != SK_CEL_V_ERROR)
            fail_msg("%s: not stopped", bombs[i]);
        assert_string_equal(r.v->u.str.s, "evaluation step limit exceeded (1000000 steps)");
        sk_arena_free(r.a);
    }
    /* Linear searches stay cheap: 100 lastIndexOf over 64 KB of 'x' for
     * a needle that almost matches everywhere (quadratic: 4e11 compares). */
    run r = eval_with("[1,2,3,4,5,6,7,8,9,10].all(i, [1,2,3,4,5,6,7,8,9,10].all(j, "
                      "big.lastIndexOf(big.substring(1) + 'y') == -1))",
                      &opt);
    if (r.v->type != SK_CEL_V_BOOL)
        fail_msg("lastIndexOf: %s", r.v->type == SK_CEL_V_ERROR ? r.v->u.str.s : "not a bool");
    assert_true(r.v->u.b);
    sk_arena_free(r.a);
    json_decref(vars);
}

static void test_strict_functions_pass_the_first_error_on(void **state)
{
    (void)state;
    expect_error("[1][2] + {}['k']", "index '2' out of range in list size '1'");
    expect_error("size([1 / 0])", "division by zero");
    expect_error("{'a': 1 % 0}", "modulus by zero");
    expect_error("[0, 1].all(x, 1 / x > 0)", "division by zero");
    /* all() and exists() absorb an error when another element decides. */
    expect_bool("[0, 1].exists(x, 1 / x > 0)", 1);
    expect_bool("[0, -1].all(x, 1 / x > 0)", 0);
    expect_error("!'a'", "no such overload");
}

static void test_integer_edges(void **state)
{
    (void)state;
    expect_error("9223372036854775807 + 1", "integer overflow");
    expect_error("-9223372036854775808 - 1", "integer overflow");
    expect_error("-(-9223372036854775808)", "integer overflow");
    expect_error("-9223372036854775808 / -1", "integer overflow");
    expect_error("-9223372036854775808 % -1", "integer overflow");
    expect_error("0u - 1u", "unsigned integer overflow");
    expect_error("18446744073709551615u * 2u", "unsigned integer overflow");
    expect_error("1u / 0u", "division by zero");
    expect_int("-7 / 2", -3);
    expect_int("-7 % 2", -1);
    expect_error("1 + 1u", "no such overload");
    expect_error("int(9223372036854775807u + 1u)", "integer overflow");
    expect_error("uint(-1)", "unsigned integer overflow");
    expect_error("int(1e19)", "integer overflow");
    expect_error("int('9223372036854775808')", "type conversion error from 'string' to 'int'");
    /* Heterogeneous numbers: equal and ordered by value, no overflow. */
    expect_bool("1 == 1u && 1u == 1.0 && -1 < 0u && 2.5 > 2", 1);
    expect_bool("18446744073709551615u > 9223372036854775807", 1);
    expect_bool("0.0 / 0.0 == 0.0 / 0.0", 0);
    expect_bool("[1, 2] == [1.0, 2u] && {1: 'a'} == {1u: 'a'}", 1);
    expect_bool("1.0 in {1: 'a'} && 2u in [1, 2]", 1);
}

static void test_string_conversions_are_gos(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"string(1e21)", "1e+21"},
        {"string(1e20)", "100000000000000000000"},
        {"string(0.1)", "0.1"},
        {"string(1e-5)", "1e-05"},
        {"string(-0.0001)", "-0.0001"},
        {"string(123.456)", "123.456"},
        {"string(2.0)", "2"},
        {"string(1.0 / 0.0)", "+Inf"},
        {"string(b'\\xc3\\xa9')", "\xc3\xa9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run r = eval_with(cases[i][0], NULL);
        if (r.v->type != SK_CEL_V_STRING)
            fail_msg("%s: a %s", cases[i][0], sk_cel_type_name(r.v));
        assert_string_equal(r.v->u.str.s, cases[i][1]);
        sk_arena_free(r.a);
    }
    expect_error("string(b'\\xff')", "invalid UTF-8 in bytes, cannot convert to string");
    expect_error("string(b'\\xed\\xa0\\x80')", "invalid UTF-8 in bytes, cannot convert to string");
    expect_error("bool('yes')", "type conversion error from 'string' to 'bool'");
    expect_error("double(' 1')", "type conversion error from 'string' to 'double'");
    expect_error("double('1e400')", "type conversion error from 'string' to 'double'");
    expect_error("double('0x10')", "type conversion error from 'string' to 'double'");
    expect_bool("double('0x1p3') == 8.0 && double('1e-400') == 0.0 && double('-Inf') < 0.0 && "
                "double('infinity') > 1e308",
                1);
    expect_error("uint('+1')", "type conversion error from 'string' to 'uint'");
    expect_int("size('h\xc3\xa9llo')", 5);
    expect_int("size(b'h\xc3\xa9llo')", 6);
    expect_bool("'abc'.matches('b') && matches('abc', '^a')", 1);
    expect_bool("'abc'.contains('bc') && 'abc'.startsWith('ab') && 'abc'.endsWith('c') && "
                "!'abc'.contains('abcd') && 'abc'.contains('')",
                1);
    expect_error("contains('abc', 'b')", "no such overload");
}

static void test_maps_lists_and_types(void **state)
{
    (void)state;
    expect_error("{'a': 1, 'a': 2}", "Failed with repeated key");
    expect_error("{1: 1, 1u: 2}", "Failed with repeated key");
    expect_error("{[1]: 2}", "unsupported key type: list");
    expect_error("{'a': 1}.b", "no such key: b");
    expect_error("{'a': 1}[b'a']", "no such key");
    expect_error("{1: 1}[2u]", "no such key: 2");
    expect_error("{true: 1}[false]", "no such key: false");
    expect_int("{1: 1, 2: 2}[2.0] + {1u: 1}[1]", 3);
    expect_error("1.b", "type 'int' does not support field selection");
    expect_bool("has({'a': 1}.a) && !has({'a': 1}.b)", 1);
    expect_error("[1, 2][-1]", "index '-1' out of range in list size '2'");
    expect_bool("type(1) == int && type(type(1)) == type && type(null) == null_type", 1);
    expect_bool("type([]) == list && type({}) != list && dyn(1u) == 1", 1);
    expect_error("x", "undeclared reference to 'x'");
    expect_int("[1, 2, 3].map(x, x * 2).filter(x, x > 2).size()", 2);
    expect_int("size([1] + [2, 3]) + size('ab' + 'c') + size(b'a' + b'b')", 8);
    expect_bool("[1, 2].exists_one(x, x > 1) && {'a': 1, 'b': 2}.all(k, k.size() == 1)", 1);
    /* Lists made by + share storage with room to grow (value.h): a list
     * appended to twice keeps both results apart. */
    expect_bool("[[1] + [2]].all(x, x + [3] != x + [4] && (x + [3])[2] == 3 && "
                "(x + [4])[2] == 4 && size(x) == 2 && (x + [3] + [5])[3] == 5 && "
                "(x + [6])[2] == 6 && x == [1, 2])",
                1);
    expect_int("[1, 2, 3].map(x, [x, x]).map(l, l + l).filter(l, l[3] > 1).size()", 2);
    /* An inner comprehension's variable shadows the outer one. */
    expect_bool("[[1], [2]].all(x, x.all(x, x > 0))", 1);
}

static const sk_cel_val *resolve(void *ctx, sk_arena *a, const char *name)
{
    int *calls = ctx;
    ++*calls;
    if (strcmp(name, "n") == 0)
        return sk_cel_uint(a, 7);
    if (strcmp(name, "a.b") == 0)
        return sk_cel_string(a, "ab", 2);
    return NULL;
}

static void test_variables_from_a_callback_and_json(void **state)
{
    (void)state;
    json_t *obj = json_loads("{\"self\": {\"spec\": {\"replicas\": 3, \"ratio\": 0.5, "
                             "\"names\": [\"a\", \"b\"], \"paused\": false, \"x\": null}}, "
                             "\"n\": \"shadowed by the callback\"}",
                             0, NULL);
    assert_non_null(obj);
    int calls = 0;
    sk_cel_eval_options opt = {.resolve = resolve, .resolve_ctx = &calls, .vars = obj};
    run r = eval_with("self.spec.replicas == 3 && type(self.spec.replicas) == int && "
                      "type(self.spec.ratio) == double && self.spec.names[1] == 'b' && "
                      "!self.spec.paused && self.spec.x == null && n == 7u && "
                      "type(n) == uint && a.b == 'ab' && "
                      "[1, 2, 3].all(i, self.spec.replicas >= i)",
                      &opt);
    if (r.v->type != SK_CEL_V_BOOL)
        fail_msg("a %s: %s", sk_cel_type_name(r.v),
                 r.v->type == SK_CEL_V_ERROR ? r.v->u.str.s : "");
    assert_true(r.v->u.b);
    /* Answers are kept for the evaluation: each of the 12 names
     * (self.spec.replicas, self.spec, self, self.spec.ratio, .names,
     * .paused, .x, n, a.b, and int, double, uint, which a caller may bind)
     * is asked for once, not once an iteration of the loop. */
    assert_int_equal(calls, 12);
    sk_arena_free(r.a);
    r = eval_with("self.spec.missing", &opt);
    assert_int_equal(r.v->type, SK_CEL_V_ERROR);
    assert_string_equal(r.v->u.str.s, "no such key: missing");
    sk_arena_free(r.a);
    r = eval_with("has(self.spec.missing) || has(self.spec.replicas)", &opt);
    assert_int_equal(r.v->type, SK_CEL_V_BOOL);
    assert_true(r.v->u.b);
    sk_arena_free(r.a);
    json_decref(obj);
}

/* Gateway API's rules on a Gateway's spec.listeners (gateway_types.go),
 * over listeners as JSON: a valid set, then one break of each rule. */
static const char *const listener_rules[] = {
    "self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)",
    "self.all(l, (l.protocol == 'HTTPS' && has(l.tls)) ? (l.tls.mode == '' || l.tls.mode == "
    "'Terminate') : true)",
    "self.all(l, l.protocol in ['TCP', 'UDP']  ? (!has(l.hostname) || l.hostname == '') : true)",
    "self.all(l1, self.exists_one(l2, l1.name == l2.name))",
    "self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == l2.protocol && "
    "(has(l1.hostname) && has(l2.hostname) ? l1.hostname == l2.hostname : !has(l1.hostname) && "
    "!has(l2.hostname))))",
};

/* Each rule's verdict on the listeners (a JSON array) as a bit mask, bit i
 * set when rule i holds; fails on an error. */
static unsigned listener_verdicts(const char *listeners, uint64_t *max_steps)
{
    json_t *self = json_loads(listeners, 0, NULL);
    assert_non_null(self);
    json_t *vars = json_pack("{s:o}", "self", self);
    sk_cel_eval_options opt = {.vars = vars};
    unsigned mask = 0;
    *max_steps = 0;
    for (size_t i = 0; i < sizeof listener_rules / sizeof *listener_rules; i++) {
        run r = eval_with(listener_rules[i], &opt);
        if (r.v->type != SK_CEL_V_BOOL)
            fail_msg("rule %zu: a %s (%s)", i, sk_cel_type_name(r.v),
                     r.v->type == SK_CEL_V_ERROR ? r.v->u.str.s : "");
        mask |= (unsigned)r.v->u.b << i;
        if (r.steps > *max_steps)
            *max_steps = r.steps;
        sk_arena_free(r.a);
    }
    json_decref(vars);
    return mask;
}

static void test_gateway_api_listener_rules(void **state)
{
    (void)state;
    uint64_t steps;
#define HTTP "{\"name\": \"http\", \"port\": 80, \"protocol\": \"HTTP\"}"
#define HTTPS(mode)                                                                                \
    "{\"name\": \"https\", \"port\": 443, \"protocol\": \"HTTPS\", \"hostname\": "                 \
    "\"a.example.com\", \"tls\": {\"mode\": \"" mode "\"}}"
#define TCP "{\"name\": \"tcp\", \"port\": 9000, \"protocol\": \"TCP\"}"
    assert_int_equal(listener_verdicts("[" HTTP ", " HTTPS("Terminate") ", " TCP "]", &steps),
                     0x1f);
    assert_int_equal(listener_verdicts("[{\"name\": \"http\", \"port\": 80, \"protocol\": "
                                       "\"HTTP\", \"tls\": {}}]",
                                       &steps),
                     0x1f & ~1u);
    assert_int_equal(listener_verdicts("[" HTTP ", " HTTPS("Passthrough") "]", &steps), 0x1f & ~2u);
    assert_int_equal(listener_verdicts("[{\"name\": \"tcp\", \"port\": 9000, \"protocol\": "
                                       "\"TCP\", \"hostname\": \"b.example.com\"}]",
                                       &steps),
                     0x1f & ~4u);
    assert_int_equal(listener_verdicts("[" HTTP ", {\"name\": \"http\", \"port\": 81, "
                                       "\"protocol\": \"HTTP\"}]",
                                       &steps),
                     0x1f & ~8u);
    assert_int_equal(listener_verdicts("[" HTTP ", {\"name\": \"http2\", \"port\": 80, "
                                       "\"protocol\": \"HTTP\"}]",
                                       &steps),
                     0x1f & ~16u);
    /* The CRD's maximum, 64 listeners: the quadratic rules stay far under
     * the default bound. */
    sk_buf b = SK_BUF_INIT;
    sk_buf_putc(&b, '[');
    for (int i = 0; i < 64; i++)
        sk_buf_printf(&b, "%s{\"name\": \"l%d\", \"port\": %d, \"protocol\": \"HTTP\"}",
                      i ? ", " : "", i, 8000 + i);
    sk_buf_putc(&b, ']');
    sk_buf_putc(&b, 0);
    assert_int_equal(listener_verdicts(b.data, &steps), 0x1f);
    assert_true(steps > 64 * 64 && steps < SK_CEL_DEFAULT_MAX_STEPS / 4);
    sk_buf_free(&b);
#undef HTTP
#undef HTTPS
#undef TCP
}

static void test_the_step_bound_stops_runaway_expressions(void **state)
{
    (void)state;
    /* 10^3 nested three deep is a billion iterations without the bound. */
    const char *src = "[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, "
                      "[1,2,3,4,5,6,7,8,9,10].map(c, [1,2,3,4,5,6,7,8,9,10].map(d, "
                      "[1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, "
                      "[1,2,3,4,5,6,7,8,9,10].all(g, [1,2,3,4,5,6,7,8,9,10].all(h, "
                      "true)))))))) == []";
    sk_cel_eval_options opt = {.max_steps = 100000};
    run r = eval_with(src, &opt);
    assert_int_equal(r.v->type, SK_CEL_V_ERROR);
    assert_string_equal(r.v->u.str.s, "evaluation step limit exceeded (100000 steps)");
    assert_true(r.steps > 100000 && r.steps < 100100);
    sk_arena_free(r.a);
    /* Nothing absorbs it, not even a deciding operand of ||. */
    char buf[1024];
    snprintf(buf, sizeof buf, "true || (%s)", src);
    r = eval_with(buf, &opt);
    assert_int_equal(r.v->type, SK_CEL_V_BOOL);
    sk_arena_free(r.a);
    snprintf(buf, sizeof buf, "(%s) || true", src);
    r = eval_with(buf, &opt);
    assert_int_equal(r.v->type, SK_CEL_V_ERROR);
    sk_arena_free(r.a);
    /* Bytes are charged too: concatenating a 1 MB string costs 1 MB / 64
     * steps, over a bound of 10,000, though it is only a few nodes. */
    char *big = malloc(1 << 20);
    memset(big, 'x', 1 << 20);
    json_t *vars = json_pack("{s:s#}", "big", big, (size_t)(1 << 20));
    free(big);
    sk_cel_eval_options small = {.vars = vars, .max_steps = 10000};
    r = eval_with("size(big + big) > 0", &small);
    assert_int_equal(r.v->type, SK_CEL_V_ERROR);
    sk_arena_free(r.a);
    small.max_steps = 100000;
    r = eval_with("size(big + big) > 0", &small);
    assert_int_equal(r.v->type, SK_CEL_V_BOOL);
    assert_true(r.steps > 32768);
    sk_arena_free(r.a);
    json_decref(vars);
    /* Comparisons are charged for what they touch: a 100,000-item list
     * against itself, or searched, is 1,500 steps or more, not one. */
    json_t *list = json_array();
    for (int i = 0; i < 100000; i++)
        json_array_append_new(list, json_pack("{s:i}", "k", i));
    json_t *lvars = json_pack("{s:o}", "l", list);
    sk_cel_eval_options lopt = {.vars = lvars, .max_steps = 1000};
    static const char *const costly[] = {"l == l", "{'k': 99999} in l", "[l, l] == [l, l]",
                                         "{1: l} == {1u: l}"};
    for (size_t i = 0; i < sizeof costly / sizeof *costly; i++) {
        lopt.max_steps = 1000;
        r = eval_with(costly[i], &lopt);
        if (r.v->type != SK_CEL_V_ERROR)
            fail_msg("%s: a %s under 1,000 steps", costly[i], sk_cel_type_name(r.v));
        sk_arena_free(r.a);
        lopt.max_steps = 0;
        r = eval_with(costly[i], &lopt);
        if (r.v->type != SK_CEL_V_BOOL || !r.v->u.b || r.steps < 1500)
            fail_msg("%s: a %s in %llu steps", costly[i], sk_cel_type_name(r.v),
                     (unsigned long long)r.steps);
        sk_arena_free(r.a);
    }
    json_decref(lvars);
    /* The default bound applies without options. */
    r = eval_with(src, NULL);
    assert_int_equal(r.v->type, SK_CEL_V_ERROR);
    assert_true(r.steps > SK_CEL_DEFAULT_MAX_STEPS);
    sk_arena_free(r.a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_and_or_absorb_errors_from_either_side),
        cmocka_unit_test(test_strict_functions_pass_the_first_error_on),
        cmocka_unit_test(test_integer_edges),
        cmocka_unit_test(test_durations_are_gos),
        cmocka_unit_test(test_timestamps_are_gos),
        cmocka_unit_test(test_time_zones),
        cmocka_unit_test(test_optionals),
        cmocka_unit_test(test_strings_extension),
        cmocka_unit_test(test_strings_extension_is_bounded),
        cmocka_unit_test(test_string_conversions_are_gos),
        cmocka_unit_test(test_maps_lists_and_types),
        cmocka_unit_test(test_variables_from_a_callback_and_json),
        cmocka_unit_test(test_gateway_api_listener_rules),
        cmocka_unit_test(test_the_step_bound_stops_runaway_expressions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
