/*
 * test_tokenfile.c - the static token file (kube/tokenfile): kube's CSV
 * rules (quotes, "" escapes, embedded newlines, spaces kept, CRLF, empty
 * lines, variable field counts), its record rules (three fields at least,
 * empty tokens skipped, a later duplicate wins, groups split at ','), and
 * refusal of what Go's csv reader refuses, with the line named and no token
 * quoted.
 */
#include "kube/tokenfile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static sk_tokenfile *parse_ok(const char *text)
{
    sk_tokenfile *t = NULL;
    char *msg = NULL;
    assert_int_equal(sk_tokenfile_parse(text, strlen(text), &t, &msg), SK_OK);
    assert_null(msg);
    assert_non_null(t);
    return t;
}

static char *parse_err(const char *text, size_t len)
{
    sk_tokenfile *t = NULL;
    char *msg = NULL;
    assert_int_equal(sk_tokenfile_parse(text, len, &t, &msg), SK_ERR_INVALID);
    assert_null(t);
    assert_non_null(msg);
    return msg;
}

static void test_records(void **state)
{
    (void)state;
    sk_tokenfile *t = parse_ok("tok1,alice,uid-a,\"dev,ops\"\n"
                               "tok2, bob , uid-b\r\n"
                               "\n"
                               "tok3,carol,uid-c,solo,ignored-fifth\n"
                               "\"tok\"\"4\",\"dan\r\nlines\",uid-d,\"\"\n"
                               ",nobody,uid-x\n"
                               "tok5,eve,uid-e"); /* no final newline */
    assert_int_equal(sk_tokenfile_count(t), 5);
    const sk_user *u = sk_tokenfile_lookup(t, "tok1");
    assert_non_null(u);
    assert_string_equal(u->name, "alice");
    assert_string_equal(u->uid, "uid-a");
    assert_int_equal(u->n_groups, 2);
    assert_string_equal(u->groups[0], "dev");
    assert_string_equal(u->groups[1], "ops");
    /* spaces are part of fields: kube's reader does not trim */
    u = sk_tokenfile_lookup(t, "tok2");
    assert_string_equal(u->name, " bob ");
    assert_string_equal(u->uid, " uid-b");
    assert_int_equal(u->n_groups, 0);
    u = sk_tokenfile_lookup(t, "tok3");
    assert_int_equal(u->n_groups, 1);
    assert_string_equal(u->groups[0], "solo");
    u = sk_tokenfile_lookup(t, "tok\"4");
    assert_non_null(u);
    assert_string_equal(u->name, "dan\nlines");
    assert_int_equal(u->n_groups, 1); /* strings.Split("", ",") is [""] */
    assert_string_equal(u->groups[0], "");
    assert_non_null(sk_tokenfile_lookup(t, "tok5"));
    /* the empty token is skipped, never matched */
    assert_null(sk_tokenfile_lookup(t, ""));
    assert_null(sk_tokenfile_lookup(t, "tok"));
    assert_null(sk_tokenfile_lookup(t, "tok11"));
    assert_null(sk_tokenfile_lookup(t, "TOK1"));
    assert_null(sk_tokenfile_lookup(NULL, "tok1"));
    sk_tokenfile_free(t);
}

static void test_duplicate_wins(void **state)
{
    (void)state;
    sk_tokenfile *t = parse_ok("dup,first,1\ndup,second,2,g\n");
    assert_int_equal(sk_tokenfile_count(t), 1);
    const sk_user *u = sk_tokenfile_lookup(t, "dup");
    assert_string_equal(u->name, "second");
    assert_int_equal(u->n_groups, 1);
    sk_tokenfile_free(t);
    t = parse_ok("");
    assert_int_equal(sk_tokenfile_count(t), 0);
    sk_tokenfile_free(t);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"secret-a,alice\n",
         "line 1: must have at least 3 columns (token, user name, user uid), found 2"},
        {"t,u,1\n\nsecret-b\n",
         "line 3: must have at least 3 columns (token, user name, user uid), found 1"},
        {"t,u,1\n   \n", "line 2: must have at least 3 columns (token, user name, user uid), "
                         "found 1"},
        {"t,u\"x,1\n", "line 1: bare \" in non-quoted-field"},
        {"t,\"u\"x,1\n", "line 1: extraneous or missing \" in quoted-field"},
        /* a quote after a space is not an opening quote */
        {"t, \"u\",1\n", "line 1: bare \" in non-quoted-field"},
        {"t,u,\"1\n\n", "line 3: extraneous or missing \" in quoted-field"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *msg = parse_err(cases[i].text, strlen(cases[i].text));
        assert_string_equal(msg, cases[i].want);
        assert_null(strstr(msg, "secret"));
        free(msg);
    }
    static const char nul[] = "t,u\0v,1\n";
    char *msg = parse_err(nul, sizeof nul - 1);
    assert_string_equal(msg, "line 1: a NUL byte in a field");
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_duplicate_wins),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
