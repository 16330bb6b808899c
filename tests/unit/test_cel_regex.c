/*
 * test_cel_regex.c - the RE2 engine (cel/regex.h): leftmost-first matches
 * and Go's compile errors on cases whose answers were taken from Go's
 * regexp (go1.19, FindIndex / Compile), Unicode classes and case folding
 * from Go's tables, and the linear-time bound: (a*)*b over 100,000 a's,
 * which a backtracking engine takes exponential time on, costs thread
 * steps proportional to the input (ten times the input, ten times the
 * steps) and finishes in well under a second.
 */
#include "cel/regex.h"
#include "core/arena.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

/* pattern over input must match [start, end), or not at all (start -1). */
static void expect(const char *pattern, const char *input, long start, long end)
{
    sk_arena *a = sk_arena_new();
    const char *err = NULL;
    size_t bytes;
    sk_cel_re *re = sk_cel_re_compile(a, pattern, strlen(pattern), &err, &bytes);
    if (!re)
        fail_msg("%s: %s", pattern, err);
    size_t s = 0, e = 0;
    uint64_t work = 0;
    int r = sk_cel_re_search(re, input, strlen(input), 0, &s, &e, &work, UINT64_MAX);
    if (start < 0 && r != 0)
        fail_msg("/%s/ on \"%s\": matched [%zu, %zu), expected no match", pattern, input, s, e);
    if (start >= 0 && (r != 1 || (long)s != start || (long)e != end))
        fail_msg("/%s/ on \"%s\": %d [%zu, %zu), expected [%ld, %ld)", pattern, input, r, s, e,
                 start, end);
    /* the yes/no search agrees */
    r = sk_cel_re_search(re, input, strlen(input), 0, NULL, NULL, &work, UINT64_MAX);
    assert_int_equal(r, start >= 0);
    sk_arena_free(a);
}

static void expect_error(const char *pattern, const char *want)
{
    sk_arena *a = sk_arena_new();
    const char *err = NULL;
    size_t bytes;
    sk_cel_re *re = sk_cel_re_compile(a, pattern, strlen(pattern), &err, &bytes);
    if (re)
        fail_msg("%s compiled", pattern);
    assert_string_equal(err, want);
    sk_arena_free(a);
}

static void test_leftmost_first_as_go(void **state)
{
    (void)state;
    expect("a+", "baaab", 1, 4);
    expect("(a|ab)(c|bcd)", "abcd", 0, 4);
    expect("a*?", "aaa", 0, 0);
    expect("a+?", "aaa", 0, 1);
    expect("a{2,3}", "aaaa", 0, 3);
    expect("a{2,3}?", "aaaa", 0, 2);
    expect("a{2,}", "aaaaa", 0, 5);
    expect("a{,2}", "a{,2}", 0, 5); /* not a repeat: literal */
    expect("x{0}", "x", 0, 0);
    expect("(?U)a+", "aaa", 0, 1);
    expect("(?U)a+?", "aaa", 0, 3);
    expect("(a*)*b", "aaab", 0, 4);
    expect("(a*)*b", "aaaa", -1, -1);
    /* an empty pass through a starred group does not outrank leaving it
     * (Go compiles x* as (x+)? when x can be empty) */
    expect("((.)*?)*", "a1c", 0, 0);
    expect("((((é)*)*?|(c[^a])+))*", "cécx\n1", 0, 0);
    expect("|a", "a", 0, 0);
    expect("a|", "b", 0, 0);
}

static void test_anchors_classes_and_flags(void **state)
{
    (void)state;
    expect("^abc$", "abc", 0, 3);
    expect("^abc$", "abc\n", -1, -1); /* $ is \z without (?m) */
    expect("(?m)^b$", "a\nb\nc", 2, 3);
    expect("\\bfoo\\b", "a foo b", 2, 5);
    expect("\\Bo", "foo", 1, 2);
    expect("\\Aab\\z", "ab", 0, 2);
    expect(".", "\n", -1, -1);
    expect("(?s).", "\n", 0, 1);
    expect("[[:alpha:]]+", "12abc3", 2, 5);
    expect("[[:^alpha:]]+", "ab12c", 2, 4);
    expect("\\d+", "abc123", 3, 6);
    expect("\\w+", "  héllo_1 ", 2, 3); /* \w is ASCII */
    expect("\\s+", "a \t\nb", 1, 4);
    expect("[\\d\\s]+", "a1 2b", 1, 4);
    expect("[^\\d]+", "12ab3", 2, 4);
    expect("[]a]", "]", 0, 1);
    expect("[^]a]", "b", 0, 1);
    expect("[a-]", "-", 0, 1);
    expect("\\Qa.b\\E+", "a.bbb", 0, 5);
    expect("\\x41\\x{42}\\101", "ABA", 0, 3);
    expect("(?i)hello", "HeLLo", 0, 5);
    expect("(?i)[^a]", "Ab", 1, 2);
    expect("(?i:A)b", "aB", -1, -1);
    expect("(?i:A)b", "ab", 0, 2);
    expect("(?i)(?-i:a)", "A", -1, -1);
    expect("(?P<name>a)(?<other>b)", "ab", 0, 2);
}

static void test_unicode_code_points(void **state)
{
    (void)state;
    expect(".+", "日本語", 0, 9);
    expect("^.{3}$", "日本語", 0, 9);
    expect("[日本]+", "x日本語", 1, 7);
    expect("\\pL+", "12héllo", 2, 8);
    expect("\\p{Greek}+", "abc αβγ", 4, 10);
    expect("\\PL+", "ab12c", 2, 4);
    expect("\\p{^L}+", "ab12c", 2, 4);
    expect("\\p{Lu}", "abcD", 3, 4);
    /* Go's case orbits: k K U+212A (Kelvin), s S U+017F, Greek sigmas */
    expect("(?i)k", "\xe2\x84\xaa", 0, 3);
    expect("(?i)ſ", "S", 0, 1);
    expect("(?i)σ", "Σ", 0, 2);
    expect("(?i)ǅ", "ǆ", 0, 2);
    expect("(?i)µ", "Μ", 0, 2);
    /* a named class negated under (?i) is the complement of its case
     * closure, as Go builds it: \w folded holds U+017F and U+212A */
    expect("(?i)\\W", "\xc5\xbf", -1, -1);
    expect("(?i)\\W", "\xe2\x84\xaa", -1, -1);
    expect("(?i)[[:^lower:]]", "k", -1, -1);
    expect("(?i)\\P{Lu}", "a", -1, -1);
    expect("(?i)\\D", "x", 0, 1);
}

static void test_what_re2_refuses_is_a_compile_error(void **state)
{
    (void)state;
    expect_error("(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`");
    expect_error("(?!a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?!`");
    expect_error("(?<=a)b", "error parsing regexp: invalid named capture: `(?<=a)b`");
    expect_error("(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`");
    expect_error("a**", "error parsing regexp: invalid nested repetition operator: `**`");
    expect_error("a*+", "error parsing regexp: invalid nested repetition operator: `*+`");
    expect_error("*a", "error parsing regexp: missing argument to repetition operator: `*`");
    expect_error("(abc", "error parsing regexp: missing closing ): `(abc`");
    expect_error("abc)", "error parsing regexp: unexpected ): `abc)`");
    expect_error("[abc", "error parsing regexp: missing closing ]: `[abc`");
    expect_error("[z-a]", "error parsing regexp: invalid character class range: `z-a`");
    expect_error("\\q", "error parsing regexp: invalid escape sequence: `\\q`");
    expect_error("\\C", "error parsing regexp: invalid escape sequence: `\\C`");
    expect_error("a{1001}", "error parsing regexp: invalid repeat count: `{1001}`");
    expect_error("[[:foo:]]", "error parsing regexp: invalid character class range: `[:foo:]`");
    expect_error("\\p{Foo}", "error parsing regexp: invalid character class range: `\\p{Foo}`");
    expect_error("a\\", "error parsing regexp: trailing backslash at end of expression: ``");
    expect_error("(?P<>a)", "error parsing regexp: invalid named capture: `(?P<>`");
    expect_error("\xff", "error parsing regexp: invalid UTF-8: `\xff`");
    /* counted repetitions nested may multiply to 1,000 copies at most */
    expect_error("(a{1000}){1000}", "error parsing regexp: invalid repeat count: `{1000}`");
    expect_error("((a{10}){10}){11}?", "error parsing regexp: invalid repeat count: `{11}?`");
    /* past the program bound (Go's is some 3 million instructions) */
    expect_error("(abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789"
                 "abcdefghijklmnopqrstuvwxyz0123456789){1000}",
                 "error parsing regexp: expression too large: ``");
}

static uint64_t work_of(sk_cel_re *re, size_t n, double *seconds)
{
    char *s = malloc(n + 1);
    memset(s, 'a', n);
    s[n] = 0;
    uint64_t work = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = sk_cel_re_search(re, s, n, 0, NULL, NULL, &work, UINT64_MAX);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_int_equal(r, 0);
    free(s);
    return work;
}

static void test_pathological_patterns_take_linear_time(void **state)
{
    (void)state;
    sk_arena *a = sk_arena_new();
    const char *err;
    size_t bytes;
    sk_cel_re *re = sk_cel_re_compile(a, "(a*)*b", 6, &err, &bytes);
    assert_non_null(re);
    double t_small, t_big;
    uint64_t small = work_of(re, 10000, &t_small);
    uint64_t big = work_of(re, 100000, &t_big);
    printf("(a*)*b: %zu instructions; 10k a's: %llu thread steps %.4f s; 100k a's: %llu "
           "thread steps %.4f s\n",
           sk_cel_re_size(re), (unsigned long long)small, t_small, (unsigned long long)big, t_big);
    /* at most twice (visits and runs) every instruction at every position */
    assert_true(big <= 2 * sk_cel_re_size(re) * 100001);
    /* linear: ten times the input is about ten times the work */
    assert_true(big >= 9 * small && big <= 11 * small);
    assert_true(t_big < 1.0);
    /* the limit stops a search: -1 once the work passes it */
    uint64_t work = 0;
    static char s[100000];
    memset(s, 'a', sizeof s);
    assert_int_equal(sk_cel_re_search(re, s, sizeof s, 0, NULL, NULL, &work, 1000), -1);
    assert_true(work > 1000 && work < 1000 + 4 * sk_cel_re_size(re));
    sk_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leftmost_first_as_go),
        cmocka_unit_test(test_anchors_classes_and_flags),
        cmocka_unit_test(test_unicode_code_points),
        cmocka_unit_test(test_what_re2_refuses_is_a_compile_error),
        cmocka_unit_test(test_pathological_patterns_take_linear_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
