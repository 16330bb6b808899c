/*
 * revmap.c - see revmap.h. Slots hold (rev, value); rev 0 marks a free
 * slot. Every entry sits at or after its home slot with no free slot in
 * between (the probe chain); removal keeps that true by moving later
 * entries of the chain back into the hole (Knuth's algorithm R). The
 * table doubles at half full.
 */
#include "core/revmap.h"
#include "core/check.h"

#include <stdlib.h>

typedef struct slot {
    int64_t rev;
    void *value;
} slot;

struct sk_revmap {
    slot *slots;
    size_t cap, used;
};

static size_t home(int64_t rev, size_t cap)
{
    /* Fibonacci hashing: consecutive revisions spread over the table. */
    return (size_t)(((uint64_t)rev * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

sk_revmap *sk_revmap_new(void)
{
    sk_revmap *m = calloc(1, sizeof *m);
    SK_CHECK_ALLOC(m);
    m->cap = 64;
    m->slots = calloc(m->cap, sizeof *m->slots);
    SK_CHECK_ALLOC(m->slots);
    return m;
}

void sk_revmap_free(sk_revmap *m)
{
    if (!m)
        return;
    free(m->slots);
    free(m);
}

static slot *find(const sk_revmap *m, int64_t rev)
{
    for (size_t i = home(rev, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].rev == rev || m->slots[i].rev == 0)
            return &m->slots[i];
    }
}

static void grow(sk_revmap *m)
{
    slot *old = m->slots;
    size_t old_cap = m->cap;
    m->cap *= 2;
    m->slots = calloc(m->cap, sizeof *m->slots);
    SK_CHECK_ALLOC(m->slots);
    m->used = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].rev) {
            *find(m, old[i].rev) = old[i];
            m->used++;
        }
    }
    free(old);
}

void sk_revmap_put(sk_revmap *m, int64_t rev, void *value)
{
    SK_CHECK(rev > 0 && value);
    if (2 * (m->used + 1) > m->cap)
        grow(m);
    slot *s = find(m, rev);
    SK_CHECK(s->rev == 0);
    m->used++;
    *s = (slot){rev, value};
}

/* Whether home slot k lies in the cyclic range (i, j]. */
static int cyclic_between(size_t i, size_t k, size_t j)
{
    return i <= j ? (i < k && k <= j) : (i < k || k <= j);
}

void *sk_revmap_take(sk_revmap *m, int64_t rev)
{
    SK_CHECK(rev > 0);
    slot *s = find(m, rev);
    if (s->rev == 0)
        return NULL;
    void *value = s->value;
    size_t mask = m->cap - 1, hole = (size_t)(s - m->slots);
    for (size_t j = (hole + 1) & mask; m->slots[j].rev != 0; j = (j + 1) & mask) {
        /* An entry whose home is past the hole (up to j) must stay where
         * a probe from its home still meets it; any other moves back. */
        if (!cyclic_between(hole, home(m->slots[j].rev, m->cap), j)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole] = (slot){0};
    m->used--;
    return value;
}

void sk_revmap_each(const sk_revmap *m, void (*fn)(void *arg, int64_t rev, void *value), void *arg)
{
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].rev)
            fn(arg, m->slots[i].rev, m->slots[i].value);
    }
}
