/*
 * btree_model.c - see btree_model.h.
 */
#include "btree_model.h"
#include "cache/btree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_NS 3

typedef struct snap {
    sk_btree_node *root;
    sk_btree_change ch; /* what this update replaced: freed when the one before is dropped */
    int64_t *revs;      /* the model at this snapshot: revision per key, 0 absent */
} snap;

struct bt_model {
    int n_keys, max_snaps;
    snap *snaps; /* oldest first */
    int n;
    int64_t rev;
    char (*ns)[8], (*name)[16];
    int *order; /* key indexes in tree order: (ns, name) ascending */
};

static void fail_alloc(void *p)
{
    if (!p)
        abort();
}

/* Keys of the model in tree order: (ns, name) ascending. */
static int key_cmp(const bt_model *m, int a, int b)
{
    int c = strcmp(m->ns[a], m->ns[b]);
    return c ? c : strcmp(m->name[a], m->name[b]);
}

static const bt_model *sort_model;
static int sort_cmp(const void *a, const void *b)
{
    return key_cmp(sort_model, *(const int *)a, *(const int *)b);
}

bt_model *bt_model_new(int n_keys, int max_snaps)
{
    bt_model *m = calloc(1, sizeof *m);
    fail_alloc(m);
    m->n_keys = n_keys;
    m->max_snaps = max_snaps < 1 ? 1 : max_snaps;
    m->snaps = calloc((size_t)m->max_snaps + 1, sizeof *m->snaps);
    m->ns = calloc((size_t)n_keys, sizeof *m->ns);
    m->name = calloc((size_t)n_keys, sizeof *m->name);
    fail_alloc(m->snaps);
    fail_alloc(m->ns);
    fail_alloc(m->name);
    /* Key order differs from k order: namespaces interleave the keys. */
    for (int k = 0; k < n_keys; k++) {
        snprintf(m->ns[k], sizeof m->ns[k], "ns%d", (k * 7) % N_NS);
        snprintf(m->name[k], sizeof m->name[k], "o%05d", (k * 7919) % 100000);
    }
    m->order = malloc((size_t)n_keys * sizeof *m->order);
    fail_alloc(m->order);
    for (int k = 0; k < n_keys; k++)
        m->order[k] = k;
    sort_model = m;
    qsort(m->order, (size_t)n_keys, sizeof *m->order, sort_cmp);
    m->snaps[0].revs = calloc((size_t)n_keys, sizeof(int64_t));
    fail_alloc(m->snaps[0].revs);
    m->n = 1;
    return m;
}

static void release_change(sk_btree_change *ch)
{
    sk_btree_free_garbage(ch->garbage);
    sk_blob_unref(ch->old);
    memset(ch, 0, sizeof *ch);
}

void bt_model_free(bt_model *m)
{
    if (!m)
        return;
    while (m->n > 1)
        bt_model_drop_oldest(m);
    sk_btree_free(m->snaps[0].root);
    free(m->snaps[0].revs);
    free(m->snaps);
    free(m->ns);
    free(m->name);
    free(m->order);
    free(m);
}

void bt_model_drop_oldest(bt_model *m)
{
    if (m->n < 2)
        return;
    release_change(&m->snaps[1].ch);
    free(m->snaps[0].revs);
    memmove(m->snaps, m->snaps + 1, (size_t)(m->n - 1) * sizeof *m->snaps);
    m->n--;
}

/* Appends a snapshot whose model is the newest one's with key k at rev
 * (the caller fills in its root, then calls trim). */
static snap *push(bt_model *m, int k, int64_t rev)
{
    snap *prev = &m->snaps[m->n - 1], *s = &m->snaps[m->n++];
    memset(s, 0, sizeof *s);
    s->revs = malloc((size_t)m->n_keys * sizeof(int64_t));
    fail_alloc(s->revs);
    memcpy(s->revs, prev->revs, (size_t)m->n_keys * sizeof(int64_t));
    s->revs[k] = rev;
    return s;
}

static void trim(bt_model *m)
{
    while (m->n > m->max_snaps)
        bt_model_drop_oldest(m);
}

void bt_model_put(bt_model *m, int k)
{
    int64_t rev = ++m->rev;
    char json[64];
    int len = snprintf(json, sizeof json, "{\"k\":%d,\"rev\":%lld}", k, (long long)rev);
    sk_btree_node *root = m->snaps[m->n - 1].root;
    int64_t had = m->snaps[m->n - 1].revs[k];
    snap *s = push(m, k, rev);
    s->root = sk_btree_put(root, sk_blob_new(m->ns[k], m->name[k], rev, json, (size_t)len), &s->ch);
    if ((s->ch.old != NULL) != (had != 0) || (s->ch.old && sk_blob_rev(s->ch.old) != had)) {
        fprintf(stderr, "put k=%d: replaced %p, model had rev %lld\n", k, (void *)s->ch.old,
                (long long)had);
        abort();
    }
    trim(m);
}

void bt_model_del(bt_model *m, int k)
{
    m->rev++;
    sk_btree_node *root = m->snaps[m->n - 1].root;
    int64_t had = m->snaps[m->n - 1].revs[k];
    snap *s = push(m, k, 0);
    s->root = sk_btree_del(root, m->ns[k], m->name[k], &s->ch);
    if ((s->ch.old != NULL) != (had != 0) || (!had && s->root != root)) {
        fprintf(stderr, "del k=%d: removed %p, model had rev %lld\n", k, (void *)s->ch.old,
                (long long)had);
        abort();
    }
    trim(m);
}

void bt_model_rebuild(bt_model *m)
{
    /* Collect the newest state in key order, then start over from it. */
    snap *last = &m->snaps[m->n - 1];
    int64_t count = sk_btree_verify(last->root);
    if (count < 0)
        abort();
    sk_blob **sorted = malloc(((size_t)count + 1) * sizeof *sorted);
    fail_alloc(sorted);
    sk_btree_iter it;
    sk_btree_seek(&it, last->root, NULL, NULL, 0);
    size_t n = 0;
    for (sk_blob *b; (b = sk_btree_next(&it)) != NULL;)
        sorted[n++] = sk_blob_ref(b);
    int64_t *revs = malloc((size_t)m->n_keys * sizeof(int64_t));
    fail_alloc(revs);
    memcpy(revs, last->revs, (size_t)m->n_keys * sizeof(int64_t));
    while (m->n > 1)
        bt_model_drop_oldest(m);
    sk_btree_free(m->snaps[0].root);
    free(m->snaps[0].revs);
    memset(&m->snaps[0], 0, sizeof m->snaps[0]);
    sk_btree_change ch = {0};
    m->snaps[0].root = sk_btree_build(sorted, n, &ch);
    m->snaps[0].revs = revs;
    free(sorted);
}

/* Compares what an iterator yields with the model's keys order[from..]. */
static int same_run(const bt_model *m, const snap *s, sk_btree_iter *it, const int *order, int from,
                    const char *what)
{
    for (int i = from; i < m->n_keys; i++) {
        int k = order[i];
        if (!s->revs[k])
            continue;
        sk_blob *b = sk_btree_next(it);
        if (!b || strcmp(sk_blob_ns(b), m->ns[k]) || strcmp(sk_blob_name(b), m->name[k]) ||
            sk_blob_rev(b) != s->revs[k]) {
            fprintf(stderr, "%s: want %s/%s@%lld, got %s/%s@%lld\n", what, m->ns[k], m->name[k],
                    (long long)s->revs[k], b ? sk_blob_ns(b) : "-", b ? sk_blob_name(b) : "-",
                    b ? (long long)sk_blob_rev(b) : -1LL);
            return 0;
        }
    }
    if (sk_btree_next(it) != NULL) {
        fprintf(stderr, "%s: more keys than the model\n", what);
        return 0;
    }
    return 1;
}

/* Compares sk_btree_rank at (ns, name) (NULL: the tree's size) with the
 * model's live keys among order[0..upto). */
static int same_rank(const bt_model *m, const snap *s, const int *order, int upto, const char *ns,
                     const char *name, int after)
{
    int64_t want = 0;
    for (int i = 0; i < upto; i++)
        want += s->revs[order[i]] != 0;
    int64_t got = ns ? sk_btree_rank(s->root, ns, name, after) : sk_btree_size(s->root);
    if (got != want)
        fprintf(stderr, "rank of %s/%s%s: want %lld, got %lld\n", ns ? ns : "(end)",
                name ? name : "", after ? " (after)" : "", (long long)want, (long long)got);
    return got == want;
}

int bt_model_check(bt_model *m, int i, unsigned probe)
{
    const snap *s = &m->snaps[i];
    int live = 0;
    for (int k = 0; k < m->n_keys; k++)
        live += s->revs[k] != 0;
    if (sk_btree_verify(s->root) != live) {
        fprintf(stderr, "snapshot %d: verify says %lld keys, model %d\n", i,
                (long long)sk_btree_verify(s->root), live);
        return 0;
    }
    const int *order = m->order;
    sk_btree_iter it;
    sk_btree_seek(&it, s->root, NULL, NULL, 0);
    int ok = same_run(m, s, &it, order, 0, "full scan");
    /* Seeks at a few keys, present or not, inclusive and exclusive. */
    for (int t = 0; ok && t < 4; t++) {
        int at = (int)((probe + (unsigned)t * 2654435761u) % (unsigned)m->n_keys);
        int k = order[at];
        sk_btree_seek(&it, s->root, m->ns[k], m->name[k], t & 1);
        ok = same_run(m, s, &it, order, at + (t & 1), t & 1 ? "seek after" : "seek at") &&
             same_rank(m, s, order, at + (t & 1), m->ns[k], m->name[k], t & 1);
        sk_blob *b = sk_btree_get(s->root, m->ns[k], m->name[k]);
        if (ok && (b ? sk_blob_rev(b) : 0) != s->revs[k]) {
            fprintf(stderr, "get %s/%s: want rev %lld\n", m->ns[k], m->name[k],
                    (long long)s->revs[k]);
            ok = 0;
        }
    }
    /* A seek to a namespace's start, as a namespaced list does. */
    if (ok) {
        int at = 0;
        const char *ns = m->ns[order[(probe / 7) % (unsigned)m->n_keys]];
        while (at < m->n_keys && strcmp(m->ns[order[at]], ns) < 0)
            at++;
        sk_btree_seek(&it, s->root, ns, "", 0);
        ok = same_run(m, s, &it, order, at, "namespace start") &&
             same_rank(m, s, order, at, ns, "", 0) &&
             same_rank(m, s, order, m->n_keys, NULL, NULL, 0);
    }
    return ok;
}

int bt_model_check_all(bt_model *m, unsigned probe)
{
    for (int i = 0; i < m->n; i++)
        if (!bt_model_check(m, i, probe + (unsigned)i))
            return 0;
    return 1;
}

int bt_model_snapshots(const bt_model *m)
{
    return m->n;
}

int bt_model_size(const bt_model *m)
{
    int live = 0;
    for (int k = 0; k < m->n_keys; k++)
        live += m->snaps[m->n - 1].revs[k] != 0;
    return live;
}
