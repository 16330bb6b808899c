/*
 * btree.c - the persistent B+tree (see btree.h).
 *
 * Nodes are allocated at their exact size: a node is never changed after it
 * is published, so it needs no room to grow, and a path copy costs only
 * what the path holds. Layout: a 16-byte header, then words. A leaf's
 * words are its blobs in key order. An interior node's are pairs, one per
 * child: the lowest blob of the child's subtree (borrowed: that blob sits
 * in a leaf below, which the node keeps alive), then the child. So word 0
 * of every node is its lowest key, and a descent compares against keys its
 * node holds: reading each candidate child's first word instead cost a
 * cache miss per comparison, the largest share of the watch cache's put
 * (bench/README.md, "The create path, fourth pass").
 *
 * Fill: at most FANOUT slots (children or blobs) per node; a node with
 * fewer than MIN_FILL is merged with or rebalanced against a sibling, except
 * the root (a leaf with >= 1 blob, or an interior node with >= 2 children).
 * MIN_FILL is a quarter of FANOUT rather than half: with immutable nodes a
 * rebalance is two more copies, and deletes are rare next to updates.
 *
 * Invariant (what makes garbage tracking exact): every node an update
 * allocates either ends up reachable from the new root, or is freed by that
 * same update before it returns ("discarded"); every node it stops reaching
 * goes to its garbage exactly once.
 */
#include "cache/btree.h"
#include "core/check.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#ifndef SK_BTREE_FANOUT
#define SK_BTREE_FANOUT 8 /* the smallest path copy per update: see bench/README.md */
#endif
#define FANOUT SK_BTREE_FANOUT
#define MIN_FILL (FANOUT / 4 < 2 ? 2 : FANOUT / 4)

_Static_assert(FANOUT >= 4 && FANOUT <= 1024, "fanout out of range");

typedef union word {
    sk_blob *blob;
    sk_btree_node *kid;
} word;

struct sk_btree_node {
    uint16_t n; /* blobs (leaf) or children (interior) */
    uint8_t leaf;
    uint32_t keys; /* blobs in the subtree: fixed when the node is made, as all else */
    sk_btree_node *garbage_next;
    word w[]; /* leaf: w[0..n-1] blobs; interior: w[2i] child i's lowest blob, w[2i+1] child i */
};

_Static_assert(sizeof(sk_btree_node) <= 16, "the key count fits in the header's padding");

/* What a node is made of, one per blob or child, as updates edit it: low is
 * the blob (leaf) or the child's lowest blob (interior). */
typedef struct slot {
    sk_blob *low;
    sk_btree_node *kid;
} slot;

/* Two nodes at most come back from an operation on one node: a split. */
typedef struct pair {
    sk_btree_node *left, *right;
} pair;

static sk_blob *lowest(const sk_btree_node *x)
{
    return x->w[0].blob;
}

static sk_blob *blob_at(const sk_btree_node *leaf, int i)
{
    return leaf->w[i].blob;
}

static sk_btree_node *kid(const sk_btree_node *x, int i)
{
    return x->w[2 * i + 1].kid;
}

static sk_blob *kid_lowest(const sk_btree_node *x, int i)
{
    return x->w[2 * i].blob;
}

/* The slot naming child x in its parent. */
static slot slot_of(sk_btree_node *x)
{
    return (slot){lowest(x), x};
}

static size_t footprint(const sk_btree_node *x)
{
    return malloc_usable_size((void *)x) + sizeof(size_t);
}

/* ---- allocation and garbage ---------------------------------------------- */

/* A node of the n slots `from` (blobs for a leaf, children for an interior
 * node), counted as new memory of the change. */
static sk_btree_node *node_make(int leaf, const slot *from, int n, sk_btree_change *ch)
{
    SK_CHECK(n >= 1 && n <= FANOUT);
    size_t words = leaf ? (size_t)n : 2 * (size_t)n;
    sk_btree_node *x = malloc(sizeof *x + words * sizeof(word));
    SK_CHECK_ALLOC(x);
    x->n = (uint16_t)n;
    x->leaf = (uint8_t)leaf;
    x->garbage_next = NULL;
    if (leaf) {
        x->keys = (uint32_t)n;
        for (int i = 0; i < n; i++)
            x->w[i].blob = from[i].low;
    } else {
        _Static_assert(sizeof(slot) == 2 * sizeof(word), "a child's slot is its two words");
        memcpy(x->w, from, (size_t)n * sizeof(slot));
        x->keys = 0;
        for (int i = 0; i < n; i++) {
            SK_CHECK(from[i].kid->keys <= UINT32_MAX - x->keys);
            x->keys += from[i].kid->keys;
        }
    }
    ch->new_bytes += footprint(x);
    return x;
}

/* x was reachable from the old root and is not from the new one. */
static void retire(sk_btree_node *x, sk_btree_change *ch)
{
    ch->garbage_bytes += footprint(x);
    x->garbage_next = ch->garbage;
    ch->garbage = x;
}

/* x was made by this update and never published. */
static void discard(sk_btree_node *x, sk_btree_change *ch)
{
    ch->new_bytes -= footprint(x);
    free(x);
}

/* One node from m slots, or two halves if they do not fit in one. */
static pair make_nodes(int leaf, const slot *from, int m, sk_btree_change *ch)
{
    pair p = {NULL, NULL};
    if (m == 0)
        return p;
    if (m <= FANOUT) {
        p.left = node_make(leaf, from, m, ch);
        return p;
    }
    SK_CHECK(m <= 2 * FANOUT);
    p.left = node_make(leaf, from, m / 2, ch);
    p.right = node_make(leaf, from + m / 2, m - m / 2, ch);
    return p;
}

/* Copies x's slots (its blobs or its children) to out; returns how many. */
static int load(const sk_btree_node *x, slot *out)
{
    if (x->leaf) {
        for (int i = 0; i < x->n; i++)
            out[i] = (slot){blob_at(x, i), NULL};
    } else {
        memcpy(out, x->w, (size_t)x->n * sizeof(slot));
    }
    return x->n;
}

/* ---- search ----------------------------------------------------------------- */

/* First blob index in leaf x with key >= (ns, name). */
static int leaf_lower_bound(const sk_btree_node *x, const char *ns, const char *name)
{
    int lo = 0, hi = x->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (sk_blob_key_cmp(blob_at(x, mid), ns, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The child of interior x whose range holds (ns, name): the last child
 * whose lowest key is <= it, or the first. */
static int child_for(const sk_btree_node *x, const char *ns, const char *name)
{
    int lo = 1, hi = x->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (sk_blob_key_cmp(kid_lowest(x, mid), ns, name) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

sk_blob *sk_btree_get(const sk_btree_node *root, const char *ns, const char *name)
{
    const sk_btree_node *x = root;
    while (x && !x->leaf)
        x = kid(x, child_for(x, ns, name));
    if (!x)
        return NULL;
    int i = leaf_lower_bound(x, ns, name);
    return i < x->n && sk_blob_key_cmp(blob_at(x, i), ns, name) == 0 ? blob_at(x, i) : NULL;
}

int64_t sk_btree_rank(const sk_btree_node *root, const char *ns, const char *name, int after)
{
    int64_t below = 0;
    const sk_btree_node *x = root;
    while (x && !x->leaf) {
        int i = child_for(x, ns, name);
        for (int j = 0; j < i; j++)
            below += kid(x, j)->keys;
        x = kid(x, i);
    }
    if (x) {
        int i = leaf_lower_bound(x, ns, name);
        if (after && i < x->n && sk_blob_key_cmp(blob_at(x, i), ns, name) == 0)
            i++;
        below += i;
    }
    return below;
}

int64_t sk_btree_size(const sk_btree_node *root)
{
    return root ? (int64_t)root->keys : 0;
}

/* ---- put ---------------------------------------------------------------------- */

static pair put_rec(sk_btree_node *x, sk_blob *blob, sk_btree_change *ch)
{
    const char *ns = sk_blob_ns(blob), *name = sk_blob_name(blob);
    slot tmp[FANOUT + 1];
    int m = load(x, tmp);
    if (x->leaf) {
        int i = leaf_lower_bound(x, ns, name);
        if (i < m && sk_blob_key_cmp(blob_at(x, i), ns, name) == 0) {
            ch->old = blob_at(x, i);
            tmp[i].low = blob;
        } else {
            memmove(tmp + i + 1, tmp + i, (size_t)(m - i) * sizeof(slot));
            tmp[i] = (slot){blob, NULL};
            m++;
        }
    } else {
        int i = child_for(x, ns, name);
        pair below = put_rec(kid(x, i), blob, ch);
        tmp[i] = slot_of(below.left);
        if (below.right) {
            memmove(tmp + i + 2, tmp + i + 1, (size_t)(m - i - 1) * sizeof(slot));
            tmp[i + 1] = slot_of(below.right);
            m++;
        }
    }
    retire(x, ch);
    return make_nodes(x->leaf, tmp, m, ch);
}

sk_btree_node *sk_btree_put(sk_btree_node *root, sk_blob *blob, sk_btree_change *ch)
{
    slot one = {blob, NULL};
    if (!root)
        return node_make(1, &one, 1, ch);
    pair p = put_rec(root, blob, ch);
    if (!p.right)
        return p.left;
    slot kids[2] = {slot_of(p.left), slot_of(p.right)};
    return node_make(0, kids, 2, ch);
}

/* ---- del ------------------------------------------------------------------------ */

/*
 * Children a and b (adjacent, a left of b, one of them new and underfull)
 * as one node or two balanced ones, written to out; returns how many.
 * `fresh` (one of a, b) was made by this update and is discarded; the
 * other was published and is retired.
 */
static int rebalance(sk_btree_node *a, sk_btree_node *b, sk_btree_node *fresh, slot out[2],
                     sk_btree_change *ch)
{
    SK_CHECK(a->leaf == b->leaf);
    slot tmp[2 * FANOUT];
    int m = load(a, tmp);
    m += load(b, tmp + m);
    pair p = make_nodes(a->leaf, tmp, m, ch);
    retire(fresh == a ? b : a, ch);
    discard(fresh, ch);
    out[0] = slot_of(p.left);
    if (p.right)
        out[1] = slot_of(p.right);
    return p.right ? 2 : 1;
}

/* The node replacing x once (ns, name) is gone from its subtree (NULL if
 * it is left empty), possibly underfull; x itself if the key is absent. */
static sk_btree_node *del_rec(sk_btree_node *x, const char *ns, const char *name,
                              sk_btree_change *ch)
{
    slot tmp[FANOUT];
    int m = load(x, tmp);
    if (x->leaf) {
        int i = leaf_lower_bound(x, ns, name);
        if (i == m || sk_blob_key_cmp(blob_at(x, i), ns, name) != 0)
            return x;
        ch->old = blob_at(x, i);
        memmove(tmp + i, tmp + i + 1, (size_t)(m - i - 1) * sizeof(slot));
        m--;
    } else {
        int i = child_for(x, ns, name);
        sk_btree_node *old = kid(x, i);
        sk_btree_node *now = del_rec(old, ns, name, ch);
        if (now == old)
            return x;
        if (!now) {
            memmove(tmp + i, tmp + i + 1, (size_t)(m - i - 1) * sizeof(slot));
            m--;
        } else if (now->n >= MIN_FILL || m == 1) {
            tmp[i] = slot_of(now);
        } else {
            /* Underfull: merge with, or borrow from, a neighbour. */
            int j = i + 1 < m ? i + 1 : i - 1, a = i < j ? i : j;
            sk_btree_node *left = i < j ? now : kid(x, j), *right = i < j ? kid(x, j) : now;
            slot made[2];
            int k = rebalance(left, right, now, made, ch);
            tmp[a] = made[0];
            if (k == 2) {
                tmp[a + 1] = made[1];
            } else {
                memmove(tmp + a + 1, tmp + a + 2, (size_t)(m - a - 2) * sizeof(slot));
                m--;
            }
        }
    }
    retire(x, ch);
    return make_nodes(x->leaf, tmp, m, ch).left;
}

sk_btree_node *sk_btree_del(sk_btree_node *root, const char *ns, const char *name,
                            sk_btree_change *ch)
{
    if (!root)
        return NULL;
    sk_btree_node *now = del_rec(root, ns, name, ch);
    /* A root with one child hands the tree down to it. */
    while (now && now != root && !now->leaf && now->n == 1) {
        sk_btree_node *only = kid(now, 0);
        discard(now, ch);
        now = only;
    }
    return now;
}

/* ---- bulk build, free ------------------------------------------------------------- */

sk_btree_node *sk_btree_build(sk_blob *const *sorted, size_t n, sk_btree_change *ch)
{
    if (n == 0)
        return NULL;
    slot *level = malloc(n * sizeof *level);
    SK_CHECK_ALLOC(level);
    for (size_t i = 0; i < n; i++)
        level[i] = (slot){sorted[i], NULL};
    int leaf = 1;
    while (n > 1 || leaf) {
        /* As few nodes as hold the level, sizes differing by at most one:
         * each holds more than FANOUT / 2 >= MIN_FILL when there are two+. */
        size_t nodes = (n + FANOUT - 1) / FANOUT, at = 0;
        for (size_t k = 0; k < nodes; k++) {
            size_t take = n / nodes + (k < n % nodes);
            level[k] = slot_of(node_make(leaf, level + at, (int)take, ch));
            at += take;
        }
        n = nodes;
        leaf = 0;
    }
    sk_btree_node *root = level[0].kid;
    free(level);
    return root;
}

size_t sk_btree_free_garbage(sk_btree_node *garbage)
{
    size_t n = 0;
    while (garbage) {
        sk_btree_node *next = garbage->garbage_next;
        free(garbage);
        garbage = next;
        n++;
    }
    return n;
}

void sk_btree_free(sk_btree_node *root)
{
    if (!root)
        return;
    for (int i = 0; i < root->n; i++) {
        if (root->leaf)
            sk_blob_unref(blob_at(root, i));
        else
            sk_btree_free(kid(root, i));
    }
    free(root);
}

/* ---- iteration ------------------------------------------------------------------- */

/* Pushes x and its leftmost path. */
static void descend_first(sk_btree_iter *it, const sk_btree_node *x)
{
    for (;;) {
        SK_CHECK(it->depth < SK_BTREE_MAX_DEPTH);
        it->path[it->depth] = x;
        it->pos[it->depth] = 0;
        it->depth++;
        if (x->leaf)
            return;
        x = kid(x, 0);
    }
}

void sk_btree_seek(sk_btree_iter *it, const sk_btree_node *root, const char *ns, const char *name,
                   int after)
{
    it->depth = 0;
    if (!root)
        return;
    if (!ns) {
        descend_first(it, root);
        return;
    }
    const sk_btree_node *x = root;
    for (;;) {
        SK_CHECK(it->depth < SK_BTREE_MAX_DEPTH);
        it->path[it->depth] = x;
        if (x->leaf) {
            int i = leaf_lower_bound(x, ns, name);
            if (after && i < x->n && sk_blob_key_cmp(blob_at(x, i), ns, name) == 0)
                i++;
            it->pos[it->depth++] = i;
            return;
        }
        int i = child_for(x, ns, name);
        it->pos[it->depth++] = i;
        x = kid(x, i);
    }
}

sk_blob *sk_btree_next(sk_btree_iter *it)
{
    while (it->depth > 0) {
        int top = it->depth - 1;
        const sk_btree_node *x = it->path[top];
        if (x->leaf) {
            if (it->pos[top] < x->n)
                return blob_at(x, it->pos[top]++);
            it->depth--;
        } else if (++it->pos[top] < x->n) {
            descend_first(it, kid(x, it->pos[top]));
        } else {
            it->depth--;
        }
    }
    return NULL;
}

/* ---- verification --------------------------------------------------------------- */

typedef struct verify_ctx {
    const sk_blob *prev;
    int leaf_depth;
    int64_t keys;
} verify_ctx;

static int verify_rec(const sk_btree_node *x, int depth, int is_root, verify_ctx *v)
{
    int min = is_root ? (x->leaf ? 1 : 2) : MIN_FILL;
    int64_t before = v->keys;
    if (x->n < min || x->n > FANOUT)
        return 0;
    if (x->leaf) {
        if (v->leaf_depth < 0)
            v->leaf_depth = depth;
        if (depth != v->leaf_depth)
            return 0;
        for (int i = 0; i < x->n; i++) {
            const sk_blob *b = blob_at(x, i);
            if (v->prev && sk_blob_key_cmp(v->prev, sk_blob_ns(b), sk_blob_name(b)) >= 0)
                return 0;
            v->prev = b;
            v->keys++;
        }
        return x->keys == (uint32_t)x->n;
    }
    for (int i = 0; i < x->n; i++)
        if (kid_lowest(x, i) != lowest(kid(x, i)) || !verify_rec(kid(x, i), depth + 1, 0, v))
            return 0;
    return v->keys - before == (int64_t)x->keys;
}

int64_t sk_btree_verify(const sk_btree_node *root)
{
    verify_ctx v = {NULL, -1, 0};
    if (!root)
        return 0;
    return verify_rec(root, 1, 1, &v) ? v.keys : -1;
}

int sk_btree_depth(const sk_btree_node *root)
{
    int d = 0;
    for (const sk_btree_node *x = root; x; x = x->leaf ? NULL : kid(x, 0))
        d++;
    return d;
}
