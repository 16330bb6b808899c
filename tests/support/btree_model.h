/*
 * btree_model.h - drives the persistent B+tree (src/cache/btree.h) and a
 * plain model side by side, the way the watch cache does: one snapshot per
 * update, oldest dropped first with the garbage of the update after it.
 *
 * The model is an array of revisions per key (0: absent), copied at every
 * snapshot, so "what snapshot k read when it was taken" is known exactly
 * and is compared later against what its root reads now: full iteration,
 * seeks (inclusive and exclusive) and point lookups. Used by the cmocka
 * differential test and the libFuzzer target; under ASan, a node freed too
 * early is a use-after-free and one never freed is a leak.
 */
#ifndef SK_TEST_BTREE_MODEL_H
#define SK_TEST_BTREE_MODEL_H

#include <stdint.h>

typedef struct bt_model bt_model;

/* Keys are k = 0..n_keys-1, spread over a few namespaces; at most
 * max_snaps snapshots are retained (older ones are dropped first). */
bt_model *bt_model_new(int n_keys, int max_snaps);
void bt_model_free(bt_model *m);

/* Puts key k at a new revision. */
void bt_model_put(bt_model *m, int k);
/* Deletes key k (a no-op snapshot if it is absent). */
void bt_model_del(bt_model *m, int k);
/* Drops the oldest retained snapshot (not the newest). */
void bt_model_drop_oldest(bt_model *m);
/* Builds a fresh tree from the newest state (as a cache rebuild does) and
 * starts over from it as the only snapshot. */
void bt_model_rebuild(bt_model *m);

/* Checks snapshot i (0 = oldest retained) against what it read when taken:
 * 1 if identical, 0 otherwise (the first difference is printed). `probe`
 * picks the seek keys. */
int bt_model_check(bt_model *m, int i, unsigned probe);
/* bt_model_check of every retained snapshot. */
int bt_model_check_all(bt_model *m, unsigned probe);
int bt_model_snapshots(const bt_model *m);
/* Live keys in the newest snapshot. */
int bt_model_size(const bt_model *m);

#endif
