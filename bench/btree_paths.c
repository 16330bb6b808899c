/*
 * btree_paths.c - what one snapshot costs at a given B+tree fanout.
 *
 * Builds a tree of N keys (as a cache rebuild does), then replaces random
 * keys one at a time, keeping every old root alive (as retained snapshots
 * are), and reports: depth, index bytes per object, bytes a snapshot adds
 * (the path copy), and the time of a lookup and of a 500-item page read.
 * CMake builds it once per fanout (btree_paths_f4 ... _f64); the fanout
 * with the smallest path copy at 100k objects is the library's default.
 *
 * usage: btree_paths_fN [objects] [updates]
 */
#include "bench_util.h"
#include "cache/btree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void key_name(int i, char *out, size_t n)
{
    snprintf(out, n, "object-%08d", i);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int updates = argc > 2 ? atoi(argv[2]) : 20000;
    sk_blob **blobs = malloc((size_t)n * sizeof *blobs);
    char name[32];
    for (int i = 0; i < n; i++) {
        key_name(i, name, sizeof name);
        blobs[i] = sk_blob_new("default", name, 1, "{}", 2);
    }
    sk_btree_change build = {0};
    sk_btree_node *root = sk_btree_build(blobs, (size_t)n, &build);
    free(blobs);

    sk_btree_change *changes = calloc((size_t)updates, sizeof *changes);
    size_t path_bytes = 0;
    double t0 = bench_now_s();
    for (int u = 0; u < updates; u++) {
        key_name((int)(bench_rand() % (uint64_t)n), name, sizeof name);
        root = sk_btree_put(root, sk_blob_new("default", name, u + 2, "{}", 2), &changes[u]);
        path_bytes += changes[u].new_bytes;
    }
    double put_s = bench_now_s() - t0;

    int lookups = 200000;
    t0 = bench_now_s();
    size_t found = 0;
    for (int i = 0; i < lookups; i++) {
        key_name((int)(bench_rand() % (uint64_t)n), name, sizeof name);
        found += sk_btree_get(root, "default", name) != NULL;
    }
    double get_s = bench_now_s() - t0;

    int pages = 2000;
    t0 = bench_now_s();
    size_t items = 0;
    for (int p = 0; p < pages; p++) {
        key_name((int)(bench_rand() % (uint64_t)n), name, sizeof name);
        sk_btree_iter it;
        sk_btree_seek(&it, root, "default", name, 1);
        for (int i = 0; i < 500 && sk_btree_next(&it); i++)
            items++;
    }
    double page_s = bench_now_s() - t0;

    printf("{\"fanout\": %d, \"objects\": %d, \"depth\": %d, \"index_bytes_per_object\": %.1f, "
           "\"snapshot_bytes_per_update\": %.0f, \"put_us\": %.2f, \"get_ns\": %.0f, "
           "\"page500_us\": %.1f, \"found\": %zu, \"paged_items\": %zu}\n",
           SK_BTREE_FANOUT, n, sk_btree_depth(root), (double)build.new_bytes / n,
           (double)path_bytes / updates, put_s / updates * 1e6, get_s / lookups * 1e9,
           page_s / pages * 1e6, found, items);

    for (int u = 0; u < updates; u++) {
        sk_btree_free_garbage(changes[u].garbage);
        sk_blob_unref(changes[u].old);
    }
    free(changes);
    sk_btree_free(root);
    return 0;
}
