/*
 * rangememo.c - see rangememo.h. A fixed table searched linearly under one
 * mutex: it holds the passes in progress, a handful, and a lookup is a few
 * memcmp beside a SQL read.
 */
#include "store/rangememo.h"
#include "core/check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_ENTRIES 32

typedef struct entry {
    unsigned char *lo, *hi; /* NULL lo: unused; NULL hi: no upper bound */
    size_t lo_len, hi_len;
    int64_t rev, count;
    uint64_t used; /* the clock when last found or put */
} entry;

struct sk_range_memo {
    pthread_mutex_t mu;
    entry e[MEMO_ENTRIES];
    uint64_t clock;
};

sk_range_memo *sk_range_memo_new(void)
{
    sk_range_memo *m = calloc(1, sizeof *m);
    SK_CHECK_ALLOC(m);
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

static void entry_clear(entry *e)
{
    free(e->lo);
    free(e->hi);
    *e = (entry){0};
}

void sk_range_memo_free(sk_range_memo *m)
{
    if (!m)
        return;
    for (int i = 0; i < MEMO_ENTRIES; i++)
        entry_clear(&m->e[i]);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static int bytes_equal(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static int matches(const entry *e, const unsigned char *lo, size_t lo_len,
                   const unsigned char *hi, size_t hi_len, int64_t rev)
{
    return e->lo && e->rev == rev && bytes_equal(e->lo, e->lo_len, lo, lo_len) &&
           (e->hi == NULL) == (hi == NULL) && (!hi || bytes_equal(e->hi, e->hi_len, hi, hi_len));
}

int sk_range_memo_find(sk_range_memo *m, const sk_kv_bounds *b, int64_t rev, int64_t *count_out)
{
    int found = 0;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < MEMO_ENTRIES && !found; i++) {
        entry *e = &m->e[i];
        if (matches(e, b->lo, b->lo_len, b->hi, b->hi_len, rev)) {
            e->used = ++m->clock;
            *count_out = e->count;
            found = 1;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return found;
}

static unsigned char *bytes_dup(const unsigned char *p, size_t n)
{
    unsigned char *d = malloc(n ? n : 1);
    SK_CHECK_ALLOC(d);
    if (n)
        memcpy(d, p, n);
    return d;
}

void sk_range_memo_put(sk_range_memo *m, const sk_kv_bounds *b, const unsigned char *next_lo,
                       size_t next_lo_len, int64_t rev, int64_t count)
{
    SK_CHECK(count >= 0);
    pthread_mutex_lock(&m->mu);
    entry *slot = &m->e[0];
    for (int i = 0; i < MEMO_ENTRIES; i++) {
        entry *e = &m->e[i];
        if (matches(e, next_lo, next_lo_len, b->hi, b->hi_len, rev)) {
            slot = e; /* a second client on the same pass: the same count */
            break;
        }
        if (e->used < slot->used)
            slot = e; /* unused entries have used 0 */
    }
    entry_clear(slot);
    slot->lo = bytes_dup(next_lo, next_lo_len);
    slot->lo_len = next_lo_len;
    if (b->hi) {
        slot->hi = bytes_dup(b->hi, b->hi_len);
        slot->hi_len = b->hi_len;
    }
    slot->rev = rev;
    slot->count = count;
    slot->used = ++m->clock;
    pthread_mutex_unlock(&m->mu);
}
