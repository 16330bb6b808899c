/*
 * test_cel_lex.c - CEL's tokens and literal values (cel/lex.h): ANTLR's
 * longest match and its fallbacks, positions in code points, the
 * recognition errors and what they skip, and every escape's value
 * (cel-go's parser/unescape.go), including the ones it refuses.
 */
#include "cel/lex.h"
#include "core/arena.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* The kinds of src's tokens, EOF included, must be want (ending in EOF). */
static void expect_kinds(const char *src, const sk_cel_tok *want)
{
    sk_arena *a = sk_arena_new();
    sk_cel_lexed *l = sk_cel_lex(a, src, strlen(src));
    size_t n = 0;
    while (want[n] != SK_CEL_T_EOF)
        n++;
    assert_int_equal(sk_cel_lexed_count(l), n + 1);
    for (size_t i = 0; i <= n; i++)
        assert_int_equal(sk_cel_lexed_token(l, i)->kind, want[i]);
    assert_int_equal(sk_cel_lexed_error_count(l), 0);
    sk_arena_free(a);
}

static void test_numbers_take_the_longest_match_and_fall_back(void **state)
{
    expect_kinds("1.e", (sk_cel_tok[]){SK_CEL_T_INT, SK_CEL_T_DOT, SK_CEL_T_IDENT, SK_CEL_T_EOF});
    expect_kinds("0X1", (sk_cel_tok[]){SK_CEL_T_INT, SK_CEL_T_IDENT, SK_CEL_T_EOF});
    expect_kinds("0x1fu 0x1F", (sk_cel_tok[]){SK_CEL_T_UINT, SK_CEL_T_INT, SK_CEL_T_EOF});
    expect_kinds("1e5 1E+5 .5e-3 2.5",
                 (sk_cel_tok[]){SK_CEL_T_DOUBLE, SK_CEL_T_DOUBLE, SK_CEL_T_DOUBLE, SK_CEL_T_DOUBLE,
                                SK_CEL_T_EOF});
    expect_kinds("1e+", (sk_cel_tok[]){SK_CEL_T_INT, SK_CEL_T_IDENT, SK_CEL_T_PLUS, SK_CEL_T_EOF});
    expect_kinds("1.5u 7U",
                 (sk_cel_tok[]){SK_CEL_T_DOUBLE, SK_CEL_T_IDENT, SK_CEL_T_UINT, SK_CEL_T_EOF});
    expect_kinds("0x", (sk_cel_tok[]){SK_CEL_T_INT, SK_CEL_T_IDENT, SK_CEL_T_EOF});
}

static void test_words_strings_and_operators(void **state)
{
    expect_kinds("in int true null false_",
                 (sk_cel_tok[]){SK_CEL_T_IN, SK_CEL_T_IDENT, SK_CEL_T_TRUE, SK_CEL_T_NULL,
                                SK_CEL_T_IDENT, SK_CEL_T_EOF});
    expect_kinds("r'a' R\"\\\" b'x' Br'\\q' r b", /* raw: no escapes, the \ is a character */
                 (sk_cel_tok[]){SK_CEL_T_STRING, SK_CEL_T_STRING, SK_CEL_T_BYTES, SK_CEL_T_BYTES,
                                SK_CEL_T_IDENT, SK_CEL_T_IDENT, SK_CEL_T_EOF});
    expect_kinds("'''a\n'b'''\"\"\"x\"\"\"",
                 (sk_cel_tok[]){SK_CEL_T_STRING, SK_CEL_T_STRING, SK_CEL_T_EOF});
    /* An unterminated triple quote is the empty string of its first two. */
    expect_kinds("\"\"\"\"", (sk_cel_tok[]){SK_CEL_T_STRING, SK_CEL_T_STRING, SK_CEL_T_EOF});
    expect_kinds("a.`b-c./ d`",
                 (sk_cel_tok[]){SK_CEL_T_IDENT, SK_CEL_T_DOT, SK_CEL_T_ESC_IDENT, SK_CEL_T_EOF});
    expect_kinds("<= < >= > == != && || ! ? : % // comment ?",
                 (sk_cel_tok[]){SK_CEL_T_LE, SK_CEL_T_LT, SK_CEL_T_GE, SK_CEL_T_GT, SK_CEL_T_EQ,
                                SK_CEL_T_NE, SK_CEL_T_AND, SK_CEL_T_OR, SK_CEL_T_EXCLAM,
                                SK_CEL_T_QUESTION, SK_CEL_T_COLON, SK_CEL_T_PERCENT, SK_CEL_T_EOF});
}

static void test_positions_are_lines_and_code_point_columns(void **state)
{
    sk_arena *a = sk_arena_new();
    const char *src = "'\xf0\x9f\x98\x81' +\n\tx // c\n  y";
    sk_cel_lexed *l = sk_cel_lex(a, src, strlen(src));
    assert_int_equal(sk_cel_lexed_count(l), 5);
    const sk_cel_token *plus = sk_cel_lexed_token(l, 1), *x = sk_cel_lexed_token(l, 2),
                       *y = sk_cel_lexed_token(l, 3), *eof = sk_cel_lexed_token(l, 4);
    assert_int_equal(plus->line, 1);
    assert_int_equal(plus->col, 5); /* the emoji is one column */
    assert_int_equal(x->line, 2);
    assert_int_equal(x->col, 2); /* a tab is one column */
    assert_int_equal(y->line, 3);
    assert_int_equal(y->col, 3);
    assert_int_equal(eof->col, 4);
    sk_arena_free(a);
}

/* src lexes with exactly the one error message at line:col, and then the
 * tokens want. */
static void expect_error(const char *src, int line, int col, const char *message,
                         const sk_cel_tok *want)
{
    sk_arena *a = sk_arena_new();
    sk_cel_lexed *l = sk_cel_lex(a, src, strlen(src));
    assert_int_equal(sk_cel_lexed_error_count(l), 1);
    const sk_cel_diag *d = sk_cel_lexed_error(l, 0);
    assert_string_equal(d->message, message);
    assert_int_equal(d->line, line);
    assert_int_equal(d->col, col);
    size_t n = 0;
    while (want[n] != SK_CEL_T_EOF)
        n++;
    assert_int_equal(sk_cel_lexed_count(l), n + 1);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(sk_cel_lexed_token(l, i)->kind, want[i]);
    sk_arena_free(a);
}

static void test_recognition_errors_skip_through_the_failing_character(void **state)
{
    expect_error("a | b", 1, 3, "Syntax error: token recognition error at: '| '",
                 (sk_cel_tok[]){SK_CEL_T_IDENT, SK_CEL_T_IDENT, SK_CEL_T_EOF});
    expect_error("a = b", 1, 3, "Syntax error: token recognition error at: '= '",
                 (sk_cel_tok[]){SK_CEL_T_IDENT, SK_CEL_T_IDENT, SK_CEL_T_EOF});
    expect_error("1 $ 2", 1, 3, "Syntax error: token recognition error at: '$'",
                 (sk_cel_tok[]){SK_CEL_T_INT, SK_CEL_T_INT, SK_CEL_T_EOF});
    /* An unknown escape: the literal up to the bad letter goes, the rest stays. */
    expect_error("f(\"\\q)", 1, 3, "Syntax error: token recognition error at: '\"\\q'",
                 (sk_cel_tok[]){SK_CEL_T_IDENT, SK_CEL_T_LPAREN, SK_CEL_T_RPAREN, SK_CEL_T_EOF});
    /* \x needs two hex digits, octal three digits with the first 0-3. */
    expect_error("'\\x4g", 1, 1, "Syntax error: token recognition error at: ''\\x4g'",
                 (sk_cel_tok[]){SK_CEL_T_EOF});
    expect_error("'\\400", 1, 1, "Syntax error: token recognition error at: ''\\4'",
                 (sk_cel_tok[]){SK_CEL_T_INT, SK_CEL_T_EOF});
    /* A line break ends a one-line string; ANTLR writes it escaped. */
    expect_error("'ab\ncd", 1, 1, "Syntax error: token recognition error at: ''ab\\n'",
                 (sk_cel_tok[]){SK_CEL_T_IDENT, SK_CEL_T_EOF});
    expect_error("x + 'abc", 1, 5, "Syntax error: token recognition error at: ''abc'",
                 (sk_cel_tok[]){SK_CEL_T_IDENT, SK_CEL_T_PLUS, SK_CEL_T_EOF});
    expect_error("a.`$b", 1, 3, "Syntax error: token recognition error at: '`$'",
                 (sk_cel_tok[]){SK_CEL_T_IDENT, SK_CEL_T_DOT, SK_CEL_T_IDENT, SK_CEL_T_EOF});
    expect_error("\v", 1, 1, "Syntax error: token recognition error at: '\v'",
                 (sk_cel_tok[]){SK_CEL_T_EOF});
}

static void test_a_nul_byte_is_no_escape_and_no_name(void **state)
{
    static const char escape[] = "'\\\0", name[] = "a.`b\0`";
    sk_arena *a = sk_arena_new();
    sk_cel_lexed *l = sk_cel_lex(a, escape, sizeof escape - 1);
    assert_int_equal(sk_cel_lexed_error_count(l), 1); /* '\<NUL> */
    assert_int_equal(sk_cel_lexed_count(l), 1);
    l = sk_cel_lex(a, name, sizeof name - 1);
    assert_int_equal(sk_cel_lexed_error_count(l), 2); /* `b<NUL>, then ` alone */
    assert_int_equal(sk_cel_lexed_error(l, 0)->col, 3);
    assert_int_equal(sk_cel_lexed_error(l, 1)->col, 6);
    sk_arena_free(a);
}

/* The value of literal text (a STRING token's, or a BYTES token's after its
 * b), or the error. */
static const char *unquote(sk_arena *a, const char *text, int bytes, size_t *len)
{
    const char *out = NULL;
    const char *err = sk_cel_unquote(a, text, strlen(text), bytes, &out, len);
    return err ? err : out;
}

static void test_escapes_have_cel_gos_values(void **state)
{
    sk_arena *a = sk_arena_new();
    size_t len = 0;
    assert_string_equal(unquote(a, "\"\\a\\b\\f\\n\\r\\t\\v\\\\\\?\\\"\\'\\`\"", 0, &len),
                        "\a\b\f\n\r\t\v\\?\"'`");
    assert_string_equal(unquote(a, "'\\x41\\X42\\101\\u00e9\\U0001F600'", 0, &len),
                        "ABA\xc3\xa9\xf0\x9f\x98\x80");
    /* In a string \xHH and octal are code points; in bytes, bytes. */
    assert_string_equal(unquote(a, "'\\377\\xff'", 0, &len), "\xc3\xbf\xc3\xbf");
    assert_string_equal(unquote(a, "'\\377\\xff\\000'", 1, &len), "\xff\xff");
    assert_int_equal(len, 3);
    assert_string_equal(unquote(a, "'\\u00e9'", 1, &len), "unable to unescape string");
    assert_string_equal(unquote(a, "'\\U00000041'", 1, &len), "unable to unescape string");
    assert_string_equal(unquote(a, "'\\udead'", 0, &len), "invalid unicode code point");
    assert_string_equal(unquote(a, "'\\U00110000'", 0, &len), "invalid unicode code point");
    /* Raw: backslashes are characters. Triple quotes: line breaks, \r\n read as \n. */
    assert_string_equal(unquote(a, "r'\\n\\q'", 0, &len), "\\n\\q");
    assert_string_equal(unquote(a, "'''a\r\nb\rc'''", 0, &len), "a\nb\nc");
    assert_string_equal(unquote(a, "\"\"\"x\"y\"\"\"", 0, &len), "x\"y");
    assert_string_equal(unquote(a, "\"\"", 0, &len), "");
    assert_int_equal(len, 0);
    /* An invalid byte in the source is U+FFFD, as cel-go reads its source as runes. */
    assert_string_equal(unquote(a, "'a\xff'", 0, &len), "a\xef\xbf\xbd");
    sk_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_take_the_longest_match_and_fall_back),
        cmocka_unit_test(test_words_strings_and_operators),
        cmocka_unit_test(test_positions_are_lines_and_code_point_columns),
        cmocka_unit_test(test_recognition_errors_skip_through_the_failing_character),
        cmocka_unit_test(test_a_nul_byte_is_no_escape_and_no_name),
        cmocka_unit_test(test_escapes_have_cel_gos_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
