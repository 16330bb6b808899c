/*
 * test_watchsel.c - what an etcd watch selects (etcd/watchsel.h): one key,
 * a prefix's range, "from key" (range_end "\0"), the empty key as "\0", an
 * empty range refused, and the NOPUT/NODELETE filters.
 */
#include "etcd/watchsel.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define K(s) (const unsigned char *)(s), sizeof(s) - 1

static int wants(const sk_watch_sel *sel, const char *key, int deleted)
{
    return sk_watch_sel_wants(sel, (const unsigned char *)key, strlen(key), deleted);
}

static void test_one_key(void **state)
{
    sk_arena *a = sk_arena_new();
    sk_watch_sel sel;
    assert_true(sk_watch_sel_init(a, K("/a"), NULL, 0, 0, 0, &sel));
    assert_true(wants(&sel, "/a", 0));
    assert_true(wants(&sel, "/a", 1));
    assert_false(wants(&sel, "/ab", 0));
    assert_false(wants(&sel, "/", 0));
    /* a key with a NUL byte right after "/a" is another key */
    assert_false(sk_watch_sel_wants(&sel, K("/a\0"), 0));
    sk_arena_free(a);
}

static void test_prefix_and_from_key(void **state)
{
    sk_arena *a = sk_arena_new();
    sk_watch_sel pre, from, all;
    assert_true(sk_watch_sel_init(a, K("/w/"), K("/w0"), 0, 0, &pre)); /* --prefix /w/ */
    assert_true(wants(&pre, "/w/", 0));
    assert_true(wants(&pre, "/w/zz", 0));
    assert_false(wants(&pre, "/w0", 0));
    assert_false(wants(&pre, "/wx", 0));
    assert_true(sk_watch_sel_init(a, K("/m"), K("\0"), 0, 0, &from));
    assert_true(wants(&from, "/m", 0));
    assert_true(wants(&from, "\xff", 0));
    assert_false(wants(&from, "/l", 0));
    /* the empty key is "\0": with range_end "\0", every key */
    assert_true(sk_watch_sel_init(a, NULL, 0, K("\0"), 0, 0, &all));
    assert_true(wants(&all, "a", 0));
    assert_true(sk_watch_sel_wants(&all, K("\0"), 0));
    sk_arena_free(a);
}

/* The request's bytes may go away: the selection keeps its own copy. */
static void test_copies_the_request(void **state)
{
    sk_arena *a = sk_arena_new();
    unsigned char key[] = "/k", end[] = "/l";
    sk_watch_sel sel;
    assert_true(sk_watch_sel_init(a, key, 2, end, 2, 0, 0, &sel));
    memset(key, 'z', 2);
    memset(end, 'z', 2);
    assert_true(wants(&sel, "/k1", 0));
    assert_false(wants(&sel, "zz", 0));
    sk_arena_free(a);
}

static void test_empty_range_refused(void **state)
{
    sk_arena *a = sk_arena_new();
    sk_watch_sel sel = {.no_put = 7};
    assert_false(sk_watch_sel_init(a, K("/b"), K("/a"), 0, 0, &sel));
    assert_false(sk_watch_sel_init(a, K("/b"), K("/b"), 0, 0, &sel));
    assert_int_equal(sel.no_put, 7); /* untouched */
    sk_arena_free(a);
}

static void test_filters(void **state)
{
    sk_arena *a = sk_arena_new();
    sk_watch_sel noput, nodel;
    assert_true(sk_watch_sel_init(a, K("/f"), NULL, 0, 1, 0, &noput));
    assert_true(sk_watch_sel_init(a, K("/f"), NULL, 0, 0, 1, &nodel));
    assert_false(wants(&noput, "/f", 0));
    assert_true(wants(&noput, "/f", 1));
    assert_true(wants(&nodel, "/f", 0));
    assert_false(wants(&nodel, "/f", 1));
    sk_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_key),
        cmocka_unit_test(test_prefix_and_from_key),
        cmocka_unit_test(test_copies_the_request),
        cmocka_unit_test(test_empty_range_refused),
        cmocka_unit_test(test_filters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
