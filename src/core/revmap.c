/*
 * revmap.c - see revmap.h. Slots hold (rev, value); rev 0 marks a free
 * slot, and a taken entry keeps its rev with a NULL value so a probe for a
 * later key does not stop early. The table doubles at half full (taken
 * entries count: they are only ever in a map about to be freed).
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
        if (old[i].value) {
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
    SK_CHECK(!s->value);
    if (s->rev == 0)
        m->used++;
    *s = (slot){rev, value};
}

void *sk_revmap_take(sk_revmap *m, int64_t rev)
{
    SK_CHECK(rev > 0);
    slot *s = find(m, rev);
    void *value = s->value;
    s->value = NULL;
    return value;
}

void sk_revmap_each(const sk_revmap *m, void (*fn)(void *value))
{
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].value)
            fn(m->slots[i].value);
    }
}
