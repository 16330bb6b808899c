/*
 * test_arena.c - request-scoped memory (core/arena): allocations are
 * zeroed and aligned, survive until the arena is freed however many blocks
 * they take, and deferred releases run once, newest first.
 */
#include "core/arena.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_allocations_are_zeroed_aligned_and_kept(void **state)
{
    sk_arena *a = sk_arena_new();
    char *ptrs[2000];
    for (int i = 0; i < 2000; i++) {
        size_t n = (size_t)(i % 97) * 13 + 1;
        ptrs[i] = sk_arena_alloc(a, n);
        assert_true(((uintptr_t)ptrs[i] & 15) == 0);
        for (size_t k = 0; k < n; k++)
            assert_int_equal(ptrs[i][k], 0);
        memset(ptrs[i], i & 0xff, n);
    }
    char *big = sk_arena_alloc(a, 1 << 20); /* larger than any block so far */
    memset(big, 7, 1 << 20);
    for (int i = 0; i < 2000; i++) /* nothing was moved or overwritten */
        assert_int_equal((unsigned char)ptrs[i][0], i & 0xff);
    assert_string_equal(sk_arena_strdup(a, "abc"), "abc");
    assert_null(sk_arena_strdup(a, NULL));
    assert_string_equal(sk_arena_printf(a, "%s-%d", "x", 42), "x-42");
    sk_arena_free(a);
    sk_arena_free(NULL);
}

static void test_grow_keeps_the_items_and_doubles(void **state)
{
    sk_arena *a = sk_arena_new();
    int *v = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        int *before = v;
        size_t had = cap;
        v = sk_arena_grow(a, v, n, &cap, sizeof *v);
        assert_true(cap > n);
        assert_true(v == before || cap == (had ? had * 2 : 8)); /* moved only when full */
        v[n++] = i;
    }
    for (int i = 0; i < 1000; i++)
        assert_int_equal(v[i], i);
    assert_int_equal(cap, 1024);
    sk_arena_free(a);
}

static int order[8], n_order;

static void record(void *p)
{
    order[n_order++] = *(int *)p;
}

static void test_deferred_releases_run_newest_first(void **state)
{
    sk_arena *a = sk_arena_new();
    int *vals = sk_arena_alloc(a, 3 * sizeof *vals);
    for (int i = 0; i < 3; i++) {
        vals[i] = i + 1;
        sk_arena_defer(a, record, &vals[i]);
    }
    n_order = 0;
    sk_arena_free(a); /* the values live in the arena: released before its memory */
    assert_int_equal(n_order, 3);
    assert_int_equal(order[0], 3);
    assert_int_equal(order[2], 1);
}

/* Go's strings.TrimSpace: unicode.IsSpace at either end, multi-byte ones
 * included; spaces inside and other characters (a zero-width space is not
 * white space) stay. */
static void test_trim_is_go_trimspace(void **state)
{
    (void)state;
    sk_arena *a = sk_arena_new();
    assert_string_equal(sk_arena_trim(a, " \t\n self.x > 0 \r\v\f"), "self.x > 0");
    assert_string_equal(sk_arena_trim(a, "\xc2\xa0" "a b\xe3\x80\x80"), "a b"); /* U+00A0, U+3000 */
    /* U+200A, U+0085, U+2028 */
    assert_string_equal(sk_arena_trim(a, "\xe2\x80\x8a\xc2\x85x\xe2\x80\xa8"), "x");
    assert_string_equal(sk_arena_trim(a, "\xe2\x80\x8bx\xe2\x80\x8b"),
                        "\xe2\x80\x8bx\xe2\x80\x8b"); /* U+200B is not a space */
    assert_string_equal(sk_arena_trim(a, "\xc2\xa0 \xe3\x80\x80"), "");
    assert_string_equal(sk_arena_trim(a, "x\xc2"), "x\xc2"); /* a cut sequence is no space */
    sk_arena_free(a);
}

/* A big block freed with its arena serves the next arena that needs that
 * size (no fresh pages to fault in), and comes back zeroed where asked. */
static void test_big_blocks_are_reused(void **state)
{
    (void)state;
    sk_arena *a = sk_arena_new();
    unsigned char *big = sk_arena_alloc_uninit(a, 3 << 20);
    memset(big, 0xab, 3 << 20);
    sk_arena_free(a);
    sk_arena *b = sk_arena_new();
    unsigned char *again = sk_arena_alloc(b, (3 << 20) - 100);
    assert_ptr_equal(again, big);
    for (size_t i = 0; i < (3 << 20) - 100; i += 4096)
        assert_int_equal(again[i], 0);
    /* past the biggest cached size: a block of its own, not from the cache */
    unsigned char *huge = sk_arena_alloc_uninit(b, 40 << 20);
    assert_non_null(huge);
    huge[(40 << 20) - 1] = 1;
    sk_arena_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocations_are_zeroed_aligned_and_kept),
        cmocka_unit_test(test_grow_keeps_the_items_and_doubles),
        cmocka_unit_test(test_deferred_releases_run_newest_first),
        cmocka_unit_test(test_trim_is_go_trimspace),
        cmocka_unit_test(test_big_blocks_are_reused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
