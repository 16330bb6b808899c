/*
 * test_rangememo.c - store/rangememo: a count is found only for the exact
 * bounds and revision a page left, an open end differs from any bound, the
 * same pass put twice keeps one entry, and the least recently used entry
 * is the one replaced when the table is full.
 */
#include "store/rangememo.h"

#include <stdio.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h expects the four headers above to be included first. */
#include <cmocka.h>

static sk_kv_bounds bounds(const char *lo, const char *hi)
{
    return (sk_kv_bounds){(const unsigned char *)lo, (const unsigned char *)hi, strlen(lo),
                          hi ? strlen(hi) : 0};
}

/* Puts the page that ended at last (the next page starts at last + "\0"). */
static void put_after(sk_range_memo *m, const char *lo, const char *hi, const char *last,
                      int64_t rev, int64_t count)
{
    unsigned char next[64];
    size_t n = strlen(last);
    memcpy(next, last, n);
    next[n] = 0;
    sk_kv_bounds b = bounds(lo, hi);
    sk_range_memo_put(m, &b, next, n + 1, rev, count);
}

static int find(sk_range_memo *m, const char *lo, size_t lo_len, const char *hi, int64_t rev,
                int64_t *count)
{
    sk_kv_bounds b = {(const unsigned char *)lo, (const unsigned char *)hi, lo_len,
                      hi ? strlen(hi) : 0};
    return sk_range_memo_find(m, &b, rev, count);
}

static void test_exact_match_only(void **state)
{
    (void)state;
    sk_range_memo *m = sk_range_memo_new();
    int64_t count = -1;
    put_after(m, "/p/", "/p0", "/p/b", 10, 7);
    assert_true(find(m, "/p/b", 5, "/p0", 10, &count)); /* "/p/b\0" */
    assert_int_equal(count, 7);
    assert_false(find(m, "/p/b", 4, "/p0", 10, &count)); /* without the NUL */
    assert_false(find(m, "/p/b", 5, "/p0", 11, &count)); /* another revision */
    assert_false(find(m, "/p/b", 5, "/p1", 10, &count)); /* another end */
    assert_false(find(m, "/p/b", 5, NULL, 10, &count));  /* no end */
    put_after(m, "/p/", NULL, "/p/b", 10, 9);             /* from the key on */
    assert_true(find(m, "/p/b", 5, NULL, 10, &count));
    assert_int_equal(count, 9);
    assert_true(find(m, "/p/b", 5, "/p0", 10, &count));
    assert_int_equal(count, 7);
    sk_range_memo_free(m);
}

static void test_least_recently_used_replaced(void **state)
{
    (void)state;
    sk_range_memo *m = sk_range_memo_new();
    int64_t count = -1;
    char last[32];
    for (int i = 0; i < 32; i++) {
        snprintf(last, sizeof last, "/k/%02d", i);
        put_after(m, "/k/", "/k0", last, 5, i);
    }
    /* the same pass again: no new entry, so all 32 are still there */
    put_after(m, "/k/", "/k0", "/k/31", 5, 31);
    assert_true(find(m, "/k/00", 6, "/k0", 5, &count)); /* now the most recent */
    assert_int_equal(count, 0);
    put_after(m, "/k/", "/k0", "/k/99", 5, 99); /* replaces /k/01, the least recent */
    assert_false(find(m, "/k/01", 6, "/k0", 5, &count));
    assert_true(find(m, "/k/00", 6, "/k0", 5, &count));
    assert_true(find(m, "/k/02", 6, "/k0", 5, &count));
    assert_int_equal(count, 2);
    assert_true(find(m, "/k/99", 6, "/k0", 5, &count));
    assert_int_equal(count, 99);
    sk_range_memo_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_match_only),
        cmocka_unit_test(test_least_recently_used_replaced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
