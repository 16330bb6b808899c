/*
 * test_kvrange.c - etcd's key range conventions (store/kvrange.h): a single
 * key, a prefix end as etcdctl computes it, from-key ("\0"), empty and
 * inverted ranges, keys with NUL and 0xff bytes, bytewise order.
 */
#include "store/kvrange.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define B(s) (const unsigned char *)(s), sizeof(s) - 1

static int has(const sk_kv_bounds *b, const unsigned char *k, size_t n)
{
    return sk_kv_bounds_has(b, k, n);
}

static void test_single_key(void **state)
{
    sk_arena *a = sk_arena_new();
    sk_kv_bounds b = sk_kv_bounds_of(a, B("foo"), NULL, 0);
    assert_int_equal(b.hi_len, 4);
    assert_memory_equal(b.hi, "foo\0", 4);
    assert_true(has(&b, B("foo")));
    assert_false(has(&b, B("fo")));
    assert_false(has(&b, B("foo\0"))); /* the successor itself is out */
    assert_false(has(&b, B("foo\1")));
    assert_false(has(&b, B("fop")));
    /* A key with a NUL byte inside is still only itself. */
    b = sk_kv_bounds_of(a, B("a\0b"), NULL, 0);
    assert_true(has(&b, B("a\0b")));
    assert_false(has(&b, B("a\0")));
    assert_false(has(&b, B("a\0b\0")));
    sk_arena_free(a);
}

static void test_prefix_and_from_key(void **state)
{
    sk_arena *a = sk_arena_new();
    /* etcdctl's prefix end for "a/" is "a0"; for "a\xff" it is "b". */
    sk_kv_bounds b = sk_kv_bounds_of(a, B("a/"), B("a0"));
    assert_true(has(&b, B("a/")));
    assert_true(has(&b, B("a/\xff\xff")));
    assert_false(has(&b, B("a0")));
    assert_false(has(&b, B("a")));
    b = sk_kv_bounds_of(a, B("a\xff"), B("b"));
    assert_true(has(&b, B("a\xff\x01")));
    assert_false(has(&b, B("b")));
    /* "\0" as the end: every key from key on. */
    b = sk_kv_bounds_of(a, B("m"), B("\0"));
    assert_null(b.hi);
    assert_true(has(&b, B("m")));
    assert_true(has(&b, B("\xff\xff\xff")));
    assert_false(has(&b, B("l\xff")));
    /* key and end both "\0": every (non-empty) key. */
    b = sk_kv_bounds_of(a, B("\0"), B("\0"));
    assert_true(has(&b, B("\0")));
    assert_true(has(&b, B("a")));
    /* An end at or below the key is an empty range, as in etcd. */
    b = sk_kv_bounds_of(a, B("b"), B("a"));
    assert_false(has(&b, B("a")));
    assert_false(has(&b, B("b")));
    b = sk_kv_bounds_of(a, B("b"), B("b"));
    assert_false(has(&b, B("b")));
    sk_arena_free(a);
}

static void test_bytes_cmp(void **state)
{
    assert_int_equal(sk_kv_bytes_cmp(B(""), B("")), 0);
    assert_int_equal(sk_kv_bytes_cmp(B("a"), B("")), 1);
    assert_int_equal(sk_kv_bytes_cmp(B("a"), B("a\0")), -1);
    assert_int_equal(sk_kv_bytes_cmp(B("\xff"), B("a")), 1); /* unsigned bytes */
    assert_int_equal(sk_kv_bytes_cmp(B("ab"), B("b")), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_key),
        cmocka_unit_test(test_prefix_and_from_key),
        cmocka_unit_test(test_bytes_cmp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
