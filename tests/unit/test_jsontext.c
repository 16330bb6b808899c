/*
 * test_jsontext.c - core/jsontext against jansson, the reference. Loading:
 * for every text, valid or not, the same value (same types, same key
 * order, the last value of a repeated key) or the same error (text, line,
 * column, position) as json_loadb. Dumping: the same bytes as
 * json_dumps(JSON_COMPACT) for every value that loads. A fixed corpus of
 * the shapes the fast paths take and the ones they must leave to jansson,
 * then random byte mutations of the corpus.
 */
#include "core/jsontext.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const corpus[] = {
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x-1-2\"},"
    "\"data\":{\"payload\":\"abcdefghijklmnopqrstuvwxyz0123456789\"}}",
    " {\n\t\"a\" : [ 1 , -2, 0, -0, 123456789012345678, true, false, null, {}, [] ] }\r\n",
    "{\"a\":1,\"b\":2,\"a\":3}",
    "{\"k\\\"e\\\\y\\/\":\"v\\b\\f\\n\\r\\t\",\"\":\"\"}",
    "{\"escaped key long enough to need its own copy \\n abcdefghijklmnopqrstuvwxyz\":"
    "\"and a value \\t that reuses the scratch buffer\"}",
    "[{\"a\":[[[[\"deep\"]]]]}]",
    "{\"r\":1.5}",
    "{\"r\":1e3}",
    "{\"r\":-0.0}",
    "{\"big\":1234567890123456789}",
    "{\"big\":9223372036854775808}",
    "{\"neg\":-9223372036854775809}",
    "{\"u\":\"\\u00e9\\ud83d\\ude00\"}",
    "{\"nul\":\"\\u0000\"}",
    "{\"lone\":\"\\ud800\"}",
    "{\"utf8\":\"caf\xc3\xa9\"}",
    "{\"bad\":\"\xc3\"}",
    "{\"ctl\":\"a\tb\"}",
    "{\"a\":01}",
    "{\"a\":-}",
    "{\"a\":1,}",
    "[1,]",
    "{\"a\" 1}",
    "{\"a\":tru}",
    "{\"a\":truex}",
    "{\"a\":nul}",
    "{\"a\":1}x",
    "{\"a\":1} {}",
    "\"just a string\"",
    "42",
    "",
    "   ",
    "{",
    "{\"a\":\"unterminated",
    "{\"a\":\"bad escape \\x\"}",
    "\xef\xbb\xbf{}",
    "{\"k\":\"\x7f\"}",
};

static void check_dump(const json_t *v)
{
    size_t len = 0;
    char *want = json_dumps(v, JSON_COMPACT);
    char *got = sk_jsontext_dump(v, &len);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    assert_int_equal(len, strlen(want));
    free(want);
    free(got);
}

static void check_same(const char *text, size_t len)
{
    json_error_t want_err, got_err;
    memset(&want_err, 0, sizeof want_err);
    memset(&got_err, 0, sizeof got_err);
    json_t *want = json_loadb(text, len, 0, &want_err);
    json_t *got = sk_jsontext_load(text, len, &got_err);
    if (!want) {
        assert_null(got);
        assert_string_equal(got_err.text, want_err.text);
        assert_int_equal(got_err.line, want_err.line);
        assert_int_equal(got_err.column, want_err.column);
        assert_int_equal(got_err.position, want_err.position);
        return;
    }
    assert_non_null(got);
    assert_true(json_equal(got, want));
    check_dump(want);
    /* the dump tells integers from reals and shows key order */
    char *a = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
    char *b = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_string_equal(b, a);
    free(a);
    free(b);
    json_decref(want);
    json_decref(got);
}

static void test_corpus_matches_jansson(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
        check_same(corpus[i], strlen(corpus[i]));
    /* a NUL byte inside the text */
    static const char nul_in_text[] = "{\"a\":\"x\0y\"}";
    check_same(nul_in_text, sizeof nul_in_text - 1);
    check_same(NULL, 0);
}

static void test_nesting_beyond_the_fast_path(void **state)
{
    (void)state;
    char deep[1024];
    size_t n = 0;
    for (int i = 0; i < 300; i++)
        deep[n++] = '[';
    for (int i = 0; i < 300; i++)
        deep[n++] = ']';
    check_same(deep, n);
    check_same(deep, n - 1); /* unterminated */
}

static void test_dump_of_built_values(void **state)
{
    (void)state;
    /* what no parse gives: NUL and every control byte in strings and keys,
     * strings that are not UTF-8, reals, scalars at the top */
    char all[32];
    for (int i = 0; i < 32; i++)
        all[i] = (char)i;
    json_t *o = json_object();
    json_object_set_new(o, "ctl", json_stringn_nocheck(all, sizeof all));
    json_object_setn_new_nocheck(o, "k\0\x01\x7f", 4, json_string("v\x7f/"));
    json_object_set_new(o, "real", json_real(0.1));
    check_dump(o);
    json_object_del(o, "real");
    check_dump(o);
    json_object_set_new(o, "bad", json_stringn_nocheck("\xff\xfe", 2));
    check_dump(o);
    json_decref(o);
    json_t *arr = json_pack("[i,i,i,b,b,n,{},[]]", (json_int_t)INT64_MIN, (json_int_t)INT64_MAX,
                            (json_int_t)0, 1, 0);
    check_dump(arr);
    json_decref(arr);
    json_t *s = json_string("top");
    size_t len = 7;
    assert_null(sk_jsontext_dump(s, &len)); /* json_dumps refuses a scalar */
    assert_int_equal(len, 7);
    json_decref(s);
    json_t *deep = json_array();
    for (int i = 0; i < 100; i++) {
        json_t *outer = json_array();
        json_array_append_new(outer, deep);
        deep = outer;
    }
    check_dump(deep);
    json_decref(deep);
}

/* A marked value's offset: where its text begins in the dump, found by
 * identity (an equal value elsewhere, earlier in the text, is not it), and
 * SIZE_MAX where jansson writes the text or the mark is absent. */
static void test_dump_marked(void **state)
{
    (void)state;
    json_t *mark = json_string("");
    json_t *v = json_pack("{s:{s:s, s:s}, s:{s:s, s:o}}", "spec", "resourceVersion", "", "x", "y",
                          "metadata", "name", "a", "resourceVersion", mark);
    size_t len = 0, at = 0;
    char *text = sk_jsontext_dump_marked(v, mark, &len, &at);
    const char *want = "{\"spec\":{\"resourceVersion\":\"\",\"x\":\"y\"},"
                       "\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"\"}}";
    assert_string_equal(text, want);
    assert_int_equal(len, strlen(want));
    assert_int_equal(at, strrchr(want, ':') + 1 - want);
    free(text);
    /* not in v */
    json_t *other = json_string("");
    text = sk_jsontext_dump_marked(v, other, &len, &at);
    assert_true(at == SIZE_MAX);
    free(text);
    json_decref(other);
    /* jansson's text (a real, a byte above 0x7f): no offset, same text */
    json_object_set_new(json_object_get(v, "spec"), "r", json_real(1.5));
    text = sk_jsontext_dump_marked(v, mark, &len, &at);
    char *jansson = json_dumps(v, JSON_COMPACT);
    assert_string_equal(text, jansson);
    assert_true(at == SIZE_MAX);
    free(jansson);
    free(text);
    json_decref(v);
}

/* The scan for bytes a string cannot hold as they are goes eight bytes at
 * a time: each byte value at each place of a word, before, inside and
 * after the first whole word, loaded as raw text and dumped from a value. */
static void test_every_byte_at_every_place(void **state)
{
    (void)state;
    char text[64], str[32];
    for (size_t n = 1; n <= 24; n++) {
        for (size_t at = 0; at < n; at++) {
            for (int c = 1; c < 256; c++) {
                memset(str, 'a', n);
                str[at] = (char)c;
                int len = snprintf(text, sizeof text, "{\"k\":\"%.*s\"}", (int)n, str);
                check_same(text, (size_t)len);
                json_t *v = json_object();
                json_object_set_new(v, "k", json_stringn_nocheck(str, n));
                check_dump(v);
                json_decref(v);
            }
        }
    }
}

static void test_mutations_match_jansson(void **state)
{
    (void)state;
    static const char bytes[] = "{}[]\":,\\ -019eE.tfnu\x80\xc3";
    unsigned seed = 12345;
    char buf[512];
    for (int round = 0; round < 20000; round++) {
        const char *base = corpus[round % (sizeof corpus / sizeof corpus[0])];
        size_t len = strlen(base);
        if (len == 0 || len >= sizeof buf)
            continue;
        memcpy(buf, base, len);
        int edits = 1 + round % 3;
        for (int e = 0; e < edits; e++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            buf[at] = bytes[(seed >> 8) % (sizeof bytes - 1)];
        }
        check_same(buf, len);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_matches_jansson),
        cmocka_unit_test(test_nesting_beyond_the_fast_path),
        cmocka_unit_test(test_dump_of_built_values),
        cmocka_unit_test(test_mutations_match_jansson),
        cmocka_unit_test(test_every_byte_at_every_place),
        cmocka_unit_test(test_dump_marked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
