/*
 * test_revmap.c - core/revmap: values stored under revisions are taken out
 * again however the table grew, absent or already taken revisions answer
 * NULL, removals leave the probe chains of the others intact (also when
 * chains wrap around the table's end), a taken revision can be stored
 * again, and the walk visits exactly what was not taken, with its
 * revision.
 */
#include "core/revmap.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#define N 5000

static int64_t vals[N + 1];
static int64_t drained_sum;
static int drained;

static void drain(void *arg, int64_t rev, void *v)
{
    assert_ptr_equal(arg, &drained);
    assert_true(*(int64_t *)v == rev);
    drained_sum += rev;
    drained++;
}

static void drain_all(const sk_revmap *m)
{
    drained_sum = 0;
    drained = 0;
    sk_revmap_each(m, drain, &drained);
}

static void test_put_take_across_growth(void **state)
{
    sk_revmap *m = sk_revmap_new();
    /* Sparse and dense revisions alike (a scan's revisions are both). */
    for (int64_t i = 1; i <= N; i++) {
        vals[i] = i % 2 ? i : i * 1000003;
        sk_revmap_put(m, vals[i], &vals[i]);
    }
    drain_all(m);
    assert_int_equal(drained, N);
    assert_null(sk_revmap_take(m, N + 2));
    assert_null(sk_revmap_take(m, 2));
    for (int64_t i = 1; i <= N; i++)
        assert_ptr_equal(sk_revmap_take(m, vals[i]), &vals[i]);
    for (int64_t i = 1; i <= N; i++)
        assert_null(sk_revmap_take(m, vals[i]));
    drain_all(m);
    assert_int_equal(drained, 0);
    sk_revmap_free(m);
    sk_revmap_free(NULL);
}

static void test_take_then_drain(void **state)
{
    sk_revmap *m = sk_revmap_new();
    for (int64_t i = 1; i <= N; i++) {
        vals[i] = i;
        sk_revmap_put(m, i, &vals[i]);
    }
    /* Take every third: the rest stay reachable behind the taken slots. */
    int64_t left = 0;
    for (int64_t i = 1; i <= N; i++) {
        if (i % 3 == 0)
            assert_ptr_equal(sk_revmap_take(m, i), &vals[i]);
        else
            left += i;
    }
    assert_null(sk_revmap_take(m, 3));
    assert_null(sk_revmap_take(m, N + 1));
    /* A taken revision can be stored again. */
    sk_revmap_put(m, 3, &vals[3]);
    left += 3;
    drain_all(m);
    assert_int_equal(drained, N - N / 3 + 1);
    assert_true(drained_sum == left);
    /* and every one not taken is still found past the taken slots */
    for (int64_t i = 1; i <= N; i++) {
        if (i % 3 != 0 || i == 3)
            assert_ptr_equal(sk_revmap_take(m, i), &vals[i]);
    }
    drain_all(m);
    assert_int_equal(drained, 0);
    sk_revmap_free(m);
}

/* A long-lived map as the garbage collector keeps it: every step takes one
 * revision out and puts a newer one in, checked against a plain array. A
 * pseudo-random order makes chains that cross each other and the end of
 * the table; the removals must keep every other entry reachable. */
static void test_churn(void **state)
{
    enum { LIVE = 700, STEPS = 200000 };
    static int64_t held[LIVE];
    sk_revmap *m = sk_revmap_new();
    int64_t next = 1;
    for (int i = 0; i < LIVE; i++) {
        held[i] = next++;
        sk_revmap_put(m, held[i], &held[i]);
    }
    uint64_t x = 88172645463325252ull;
    for (int step = 0; step < STEPS; step++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int i = (int)(x % LIVE);
        assert_ptr_equal(sk_revmap_take(m, held[i]), &held[i]);
        assert_null(sk_revmap_take(m, held[i]));
        /* jumps in the revisions, as between passes */
        next += (int64_t)(x >> 60);
        held[i] = next++;
        sk_revmap_put(m, held[i], &held[i]);
        if (step % 20000 == 0) {
            for (int k = 0; k < LIVE; k++)
                assert_ptr_equal(sk_revmap_take(m, held[k]), &held[k]);
            for (int k = 0; k < LIVE; k++)
                sk_revmap_put(m, held[k], &held[k]);
        }
    }
    int64_t sum = 0;
    for (int i = 0; i < LIVE; i++)
        sum += held[i];
    drain_all(m);
    assert_int_equal(drained, LIVE);
    assert_true(drained_sum == sum);
    sk_revmap_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_take_across_growth),
        cmocka_unit_test(test_take_then_drain),
        cmocka_unit_test(test_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
