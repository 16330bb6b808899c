/*
 * test_btree.c - the persistent B+tree behind the watch cache's snapshots.
 *
 * The differential test drives the tree and a plain model (an array per
 * snapshot, tests/support/btree_model.c) with random inserts, updates and
 * deletes, dropping old snapshots and rebuilding now and then as the cache
 * does, and checks that every retained snapshot still reads exactly as it
 * did when it was taken. CMake builds this file three times: with the real
 * fanout, with fanout 4 so that splits, merges and borrows happen on almost
 * every update at every level, and with fanout 16 (a minimum fill of 4).
 */
#include "btree_model.h"
#include "cache/btree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h expects the four headers above to be included first. */
#include <cmocka.h>

static uint64_t rng = 88172645463325252ULL;
static unsigned next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 32);
}

static void run_differential(int n_keys, int max_snaps, int steps, int put_weight)
{
    bt_model *m = bt_model_new(n_keys, max_snaps);
    int checked_all = 0;
    for (int step = 0; step < steps; step++) {
        unsigned r = next_rand();
        int k = (int)(next_rand() % (unsigned)n_keys);
        unsigned op = r % 100;
        if (op < (unsigned)put_weight)
            bt_model_put(m, k);
        else if (op < 97)
            bt_model_del(m, k);
        else if (op < 99 || step % 1000)
            bt_model_drop_oldest(m);
        else
            bt_model_rebuild(m);
        assert_true(bt_model_check(m, bt_model_snapshots(m) - 1, r));
        if (step % 97 == 0) {
            assert_true(bt_model_check_all(m, r));
            checked_all++;
        }
    }
    assert_true(bt_model_check_all(m, 7));
    assert_true(checked_all > steps / 100);
    bt_model_free(m);
}

/* Growing then shrinking: the tree goes through every height, and deletes
 * dominate (merges and borrows at every level). */
static void test_differential_grow_and_shrink(void **state)
{
    run_differential(2000, 48, 6000, 80);
    run_differential(2000, 48, 6000, 30);
}

/* A steady update load on a mostly full key space, many snapshots kept. */
static void test_differential_steady_updates(void **state)
{
    run_differential(500, 256, 8000, 90);
}

/* Small key spaces: roots that are leaves, trees that empty out. */
static void test_differential_tiny(void **state)
{
    for (int n = 1; n <= 9; n++)
        run_differential(n, 8, 400, 50);
}

static sk_blob *blob_for(int i, int64_t rev)
{
    char name[16];
    snprintf(name, sizeof name, "k%06d", i);
    return sk_blob_new("ns", name, rev, "{}", 2);
}

/* Bulk building gives valid trees of every size, in order. */
static void test_build_every_size(void **state)
{
    sk_blob *blobs[700];
    for (int n = 0; n <= 700; n += (n < 80 ? 1 : 37)) {
        for (int i = 0; i < n; i++)
            blobs[i] = blob_for(i, i + 1);
        sk_btree_change ch = {0};
        sk_btree_node *root = sk_btree_build(blobs, (size_t)n, &ch);
        assert_int_equal(sk_btree_verify(root), n);
        assert_true(n == 0 ? ch.new_bytes == 0 : ch.new_bytes > 0);
        sk_btree_iter it;
        sk_btree_seek(&it, root, NULL, NULL, 0);
        for (int i = 0; i < n; i++) {
            sk_blob *b = sk_btree_next(&it);
            assert_non_null(b);
            assert_int_equal(sk_blob_rev(b), i + 1);
        }
        assert_null(sk_btree_next(&it));
        sk_btree_free(root);
    }
}

/*
 * Path copying: replacing one key in a large tree makes exactly one new
 * node per level and retires exactly the old path; the old root still
 * reads the old version and shares everything else.
 */
static void test_update_copies_one_path(void **state)
{
    enum { N = 20000 };
    sk_blob **blobs = malloc(N * sizeof *blobs);
    for (int i = 0; i < N; i++)
        blobs[i] = blob_for(i, 1);
    sk_btree_change build = {0};
    sk_btree_node *r0 = sk_btree_build(blobs, N, &build);
    free(blobs);
    int depth = sk_btree_depth(r0);
    assert_true(depth >= 3);
    sk_btree_change ch = {0};
    sk_btree_node *r1 = sk_btree_put(r0, blob_for(12345, 2), &ch);
    assert_int_equal(ch.new_bytes, ch.garbage_bytes); /* same shapes, same sizes */
    assert_true(ch.new_bytes < build.new_bytes / 100);
    assert_non_null(ch.old);
    assert_int_equal(sk_blob_rev(ch.old), 1);
    assert_int_equal(sk_blob_rev(sk_btree_get(r0, "ns", "k012345")), 1);
    assert_int_equal(sk_blob_rev(sk_btree_get(r1, "ns", "k012345")), 2);
    assert_ptr_equal(sk_btree_get(r0, "ns", "k000001"), sk_btree_get(r1, "ns", "k000001"));
    assert_int_equal(sk_btree_verify(r1), N);
    /* Deleting an absent key changes nothing. */
    sk_btree_change none = {0};
    assert_ptr_equal(sk_btree_del(r1, "ns", "absent", &none), r1);
    assert_null(none.garbage);
    assert_null(none.old);
    assert_int_equal(sk_btree_free_garbage(ch.garbage), depth); /* the old path, no more */
    sk_blob_unref(ch.old);
    sk_btree_free(r1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential_grow_and_shrink),
        cmocka_unit_test(test_differential_steady_updates),
        cmocka_unit_test(test_differential_tiny),
        cmocka_unit_test(test_build_every_size),
        cmocka_unit_test(test_update_copies_one_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
