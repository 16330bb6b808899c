/*
 * test_handoff.c - the writer's committed-batch queue (store/handoff.h):
 * rows visited in revision order from exactly after_rev + 1, across batches
 * only where they continue without a gap, nothing where another process's
 * revisions come between or a run stops short of the revision the caller
 * knows committed (the caller then reads SQL), passed batches
 * dropped, the bounds, limit and early stop, copies independent of the
 * writer's row, and a batch dropped while a visit still reads it.
 */
#include "store/handoff.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

typedef struct seen {
    int64_t revs[64];
    char values[64][32];
    char resources[64][16];
    int n, stop_after;
    sk_handoff *publish_into; /* publishes a batch during the first row */
    sk_handoff_batch *to_publish;
} seen;

static int see(void *arg, const sk_row *row)
{
    seen *s = arg;
    s->revs[s->n] = row->rev;
    snprintf(s->values[s->n], sizeof s->values[0], "%.*s", (int)row->value_len, row->value);
    snprintf(s->resources[s->n], sizeof s->resources[0], "%s", row->resource);
    s->n++;
    if (s->to_publish) {
        sk_handoff_publish(s->publish_into, s->to_publish);
        s->to_publish = NULL;
    }
    return s->stop_after && s->n >= s->stop_after;
}

/* A batch of revisions [first, first+n) whose revisions in objs[] are
 * object rows ("v<rev>"), the others etcd revisions. */
static sk_handoff_batch *batch(int64_t first, int n, const int64_t *objs, int n_objs)
{
    sk_handoff_batch *b = sk_handoff_batch_new(first, n);
    for (int i = 0; i < n_objs; i++) {
        char value[32];
        snprintf(value, sizeof value, "v%lld", (long long)objs[i]);
        sk_row r = {.rev = objs[i],
                    .create_rev = objs[i],
                    .resource = "configmaps",
                    .ns = "default",
                    .name = "x",
                    .uid = "u",
                    .value = value,
                    .value_len = strlen(value)};
        sk_handoff_batch_set(b, &r);
        memset(value, 'Z', sizeof value - 1); /* the batch holds its own copy */
    }
    return b;
}

static sk_handoff_batch *plain(int64_t first, int n)
{
    int64_t objs[64];
    for (int i = 0; i < n; i++)
        objs[i] = first + i;
    return batch(first, n, objs, n);
}

static void assert_revs(const seen *s, int64_t from, int n)
{
    assert_int_equal(s->n, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(s->revs[i], from + i);
}

static void test_rows_in_order(void **state)
{
    (void)state;
    sk_handoff *h = sk_handoff_new(1000, 1 << 20);
    seen s = {0};
    assert_int_equal(sk_handoff_visit(h, 0, 3, 100, see, &s), 0);
    static const int64_t objs[] = {1, 3};
    sk_handoff_publish(h, batch(1, 3, objs, 2));
    /* Revisions 4..5 are committed (another process's): not held, so no
     * short answer from memory that would hide them. */
    assert_int_equal(sk_handoff_visit(h, 0, 5, 100, see, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(sk_handoff_visit(h, 0, 3, 100, see, &s), 3);
    assert_revs(&s, 1, 3);
    assert_string_equal(s.values[0], "v1");
    assert_string_equal(s.resources[0], "configmaps");
    assert_string_equal(s.values[1], ""); /* an etcd revision: no object */
    assert_string_equal(s.resources[1], "");
    assert_string_equal(s.values[2], "v3");
    /* From inside a batch. */
    s = (seen){0};
    assert_int_equal(sk_handoff_visit(h, 1, 3, 100, see, &s), 2);
    assert_revs(&s, 2, 2);
    /* Past every held revision: nothing (the caller reads SQL). */
    s = (seen){0};
    assert_int_equal(sk_handoff_visit(h, 3, 4, 100, see, &s), 0);
    assert_int_equal(s.n, 0);
    /* ... and the passed batch is gone: an older cursor reads SQL too. */
    assert_int_equal(sk_handoff_visit(h, 0, 3, 100, see, &s), 0);
    sk_handoff_free(h);
}

/* Revisions 4..5 and 9 were another process's: a run stops at a gap, and
 * memory answers only a run that reaches upto_rev or fills the page. */
static void test_gaps_read_sql(void **state)
{
    (void)state;
    sk_handoff *h = sk_handoff_new(1000, 1 << 20);
    sk_handoff_publish(h, plain(1, 3));
    sk_handoff_publish(h, plain(6, 2));
    sk_handoff_publish(h, plain(8, 1));
    sk_handoff_publish(h, plain(10, 2));
    seen s = {0};
    assert_int_equal(sk_handoff_visit(h, 0, 11, 100, see, &s), 0);
    assert_int_equal(sk_handoff_visit(h, 0, 3, 100, see, &s), 3); /* 1..3, not 6 */
    assert_revs(&s, 1, 3);
    s = (seen){0};
    assert_int_equal(sk_handoff_visit(h, 3, 11, 100, see, &s), 0);
    assert_int_equal(sk_handoff_visit(h, 4, 11, 100, see, &s), 0);
    assert_int_equal(sk_handoff_visit(h, 5, 11, 100, see, &s), 0); /* 9 is missing */
    assert_int_equal(sk_handoff_visit(h, 5, 8, 100, see, &s), 3);  /* 6..8 */
    assert_revs(&s, 6, 3);
    s = (seen){0};
    assert_int_equal(sk_handoff_visit(h, 5, 11, 3, see, &s), 3); /* a full page */
    assert_revs(&s, 6, 3);
    s = (seen){0};
    assert_int_equal(sk_handoff_visit(h, 8, 11, 100, see, &s), 0);
    assert_int_equal(sk_handoff_visit(h, 9, 11, 100, see, &s), 2);
    assert_revs(&s, 10, 2);
    sk_handoff_free(h);
}

static void test_limit_and_stop(void **state)
{
    (void)state;
    sk_handoff *h = sk_handoff_new(1000, 1 << 20);
    sk_handoff_publish(h, plain(1, 2));
    sk_handoff_publish(h, plain(3, 3));
    sk_handoff_publish(h, plain(6, 2));
    seen s = {0};
    /* Rows past upto_rev come too, as SQL's would. */
    assert_int_equal(sk_handoff_visit(h, 0, 1, 100, see, &s), 7);
    assert_revs(&s, 1, 7);
    s = (seen){0};
    assert_int_equal(sk_handoff_visit(h, 0, 7, 4, see, &s), 4);
    assert_revs(&s, 1, 4);
    s = (seen){.stop_after = 2};
    assert_int_equal(sk_handoff_visit(h, 4, 7, 100, see, &s), 2);
    assert_revs(&s, 5, 2);
    s = (seen){0};
    assert_int_equal(sk_handoff_visit(h, 6, 7, 100, see, &s), 1);
    assert_revs(&s, 7, 1);
    sk_handoff_free(h);
}

/* Over a bound the oldest batches go: a feed behind them reads SQL, and
 * memory serves again from what is still held. */
static void test_bounds(void **state)
{
    (void)state;
    sk_handoff *h = sk_handoff_new(5, 1 << 20);
    sk_handoff_publish(h, plain(1, 3));
    sk_handoff_publish(h, plain(4, 3)); /* 6 rows: 1..3 dropped */
    seen s = {0};
    assert_int_equal(sk_handoff_visit(h, 0, 6, 100, see, &s), 0);
    assert_int_equal(sk_handoff_visit(h, 3, 6, 100, see, &s), 3);
    assert_revs(&s, 4, 3);
    sk_handoff_free(h);

    h = sk_handoff_new(1000, 60); /* bytes: a row takes 26, so 3 rows are more */
    sk_handoff_publish(h, plain(1, 1));
    sk_handoff_publish(h, plain(2, 2));
    s = (seen){0};
    assert_int_equal(sk_handoff_visit(h, 0, 3, 100, see, &s), 0);
    assert_int_equal(sk_handoff_visit(h, 1, 3, 100, see, &s), 2);
    assert_revs(&s, 2, 2);
    sk_handoff_free(h);
}

/* A batch the bounds drop while a visit reads it stays readable until the
 * visit lets go (ASan builds check the memory). */
static void test_dropped_while_visited(void **state)
{
    (void)state;
    sk_handoff *h = sk_handoff_new(4, 1 << 20);
    sk_handoff_publish(h, plain(1, 3));
    seen s = {.publish_into = h, .to_publish = plain(4, 3)};
    assert_int_equal(sk_handoff_visit(h, 0, 3, 100, see, &s), 3);
    assert_revs(&s, 1, 3);
    assert_string_equal(s.values[2], "v3");
    sk_handoff_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_in_order),
        cmocka_unit_test(test_gaps_read_sql),
        cmocka_unit_test(test_limit_and_stop),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_dropped_while_visited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
