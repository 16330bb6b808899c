/*
 * test_random.c - core/util's random bytes through the per-thread pool:
 * draws that cross the pool's refill, and draws larger than the pool, are
 * filled completely and never repeat what an earlier draw gave; UUIDs keep
 * their version and variant bits.
 */
#include "core/util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* 64 bytes of zeroes somewhere in a random draw means it was not filled. */
static int has_zero_run(const unsigned char *p, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        run = p[i] ? 0 : run + 1;
        if (run >= 64)
            return 1;
    }
    return 0;
}

static void test_draws_are_filled_and_distinct(void **state)
{
    (void)state;
    /* sizes that end inside, exactly at and beyond a 256-byte pool */
    static const size_t sizes[] = {1, 16, 100, 139, 256, 1000, 4096, 7, 16};
    unsigned char prev[4096], cur[4096];
    size_t prev_n = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        memset(cur, 0, sizeof cur);
        sk_random_bytes(cur, n);
        assert_false(has_zero_run(cur, n));
        size_t common = n < prev_n ? n : prev_n;
        if (common >= 16) /* a repeated pool slice would repeat these */
            assert_memory_not_equal(cur, prev, common);
        memcpy(prev, cur, n);
        prev_n = n;
    }
}

static void test_uuids_differ_and_carry_version_4(void **state)
{
    (void)state;
    char a[37], b[37];
    sk_uuid4(a);
    sk_uuid4(b);
    assert_string_not_equal(a, b);
    assert_int_equal(strlen(a), 36);
    assert_int_equal(a[14], '4');
    assert_non_null(strchr("89ab", a[19]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_draws_are_filled_and_distinct),
        cmocka_unit_test(test_uuids_differ_and_carry_version_4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
