/*
 * btree.h - a persistent (copy-on-write) B+tree of object versions, ordered
 * by (namespace, name) as bytes: the watch cache's snapshots (KEP-4988).
 *
 * Persistence by path copying. A tree is a root pointer (NULL: empty).
 * Nodes are immutable once a root that reaches them is returned:
 * sk_btree_put and sk_btree_del return a NEW root that shares every node
 * off the changed root-to-leaf path with the old one, and the old root
 * still reads exactly as it did. So the cache keeps one root per applied
 * event, a snapshot at that revision, for the price of one path of small
 * nodes (a node is a 16-byte header and 8 bytes per blob in a leaf, 16 per
 * child in an interior node; a split or a merge copies a second node on
 * its level), and never copies an
 * object's bytes: leaves point at shared, refcounted sk_blobs.
 *
 * Every node records how many keys its subtree holds (in the header's
 * padding, so it costs no memory), so the keys in a range are counted in
 * one descent (sk_btree_rank) rather than by walking them: a list page's
 * remainingItemCount, asked on every page of a paged list, would otherwise
 * walk everything after the page, O(n^2 / limit) for a whole paged list.
 *
 * Reclaiming without per-node reference counts. An update reports the
 * nodes it replaced (the old path, and a sibling it merged with) in its
 * sk_btree_change: they are reachable from the roots before the update and
 * from no root after it. So the owner of a sequence of roots R0, R1, ...
 * frees update k's garbage once no root older than Rk is in use, and every
 * node is freed exactly once: a node is either reachable from the newest
 * root or in exactly one update's garbage. The same holds for blob
 * references: the newest tree holds one reference per object in it; put
 * steals the caller's reference to the new version, and an update hands
 * the tree's reference to the version it replaced or removed to the owner
 * (sk_btree_change.old), to drop together with that update's garbage.
 *
 * Threads: one writer; any number of readers of published roots, as long
 * as the owner keeps the nodes allocated while they read (the cache's
 * lock). Writers never touch a node that is reachable from a published
 * root except its garbage link, which readers never read.
 */
#ifndef SK_CACHE_BTREE_H
#define SK_CACHE_BTREE_H

#include "cache/blob.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sk_btree_node sk_btree_node;

/* What one update did besides making its new root. Zero it before the
 * update; an update only adds to it. */
typedef struct sk_btree_change {
    sk_btree_node *garbage; /* nodes the update replaced, linked (sk_btree_free_garbage) */
    size_t garbage_bytes;   /* their memory, allocator overhead included */
    size_t new_bytes;       /* memory of the nodes the update made */
    sk_blob *old;           /* the tree's reference to the replaced/removed version, or NULL */
} sk_btree_change;

/* Inserts blob (stealing the caller's reference), replacing the version of
 * the same key if there is one. Returns the new root. */
sk_btree_node *sk_btree_put(sk_btree_node *root, sk_blob *blob, sk_btree_change *ch);
/* Removes the key. Returns the new root, or root itself (and ch->old NULL,
 * nothing else changed) if the key is absent. */
sk_btree_node *sk_btree_del(sk_btree_node *root, const char *ns, const char *name,
                            sk_btree_change *ch);
/* A tree of n blobs sorted by key with no duplicates (stealing the
 * references), packed full. ch->new_bytes reports its memory. */
sk_btree_node *sk_btree_build(sk_blob *const *sorted, size_t n, sk_btree_change *ch);
/* Frees a garbage list (the nodes only: blob references are not theirs).
 * Returns how many nodes it held. */
size_t sk_btree_free_garbage(sk_btree_node *garbage);
/* Frees the newest tree: its nodes and its blob references. Only the newest
 * root of a sequence may be freed so (older roots share its nodes). */
void sk_btree_free(sk_btree_node *root);

/* The version stored for a key, borrowed; NULL if absent. */
sk_blob *sk_btree_get(const sk_btree_node *root, const char *ns, const char *name);

#define SK_BTREE_MAX_DEPTH 32

/* A cursor over a tree in key order. Fields are private. The tree must
 * stay allocated while the cursor is used. */
typedef struct sk_btree_iter {
    const sk_btree_node *path[SK_BTREE_MAX_DEPTH];
    int pos[SK_BTREE_MAX_DEPTH];
    int depth;
} sk_btree_iter;
/* Positions it at the first key >= (ns, name), or > it if `after`; at the
 * first key of the tree if ns is NULL. */
void sk_btree_seek(sk_btree_iter *it, const sk_btree_node *root, const char *ns, const char *name,
                   int after);
/* The next version in key order (borrowed), NULL at the end. */
sk_blob *sk_btree_next(sk_btree_iter *it);

/* How many keys sort before (ns, name); with `after`, before or equal to
 * it. One root-to-leaf descent. */
int64_t sk_btree_rank(const sk_btree_node *root, const char *ns, const char *name, int after);
/* How many keys the tree holds. */
int64_t sk_btree_size(const sk_btree_node *root);

/* Checks every structural invariant (keys strictly ascending, each
 * interior node's record of its children's lowest keys, every node's key
 * count, fill bounds, all leaves at one depth). Returns the number of keys, or -1 if an invariant
 * is broken. For tests. */
int64_t sk_btree_verify(const sk_btree_node *root);
/* Levels from the root to a leaf (0 for an empty tree). */
int sk_btree_depth(const sk_btree_node *root);

#endif
