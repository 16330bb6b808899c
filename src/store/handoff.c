/*
 * handoff.c - see handoff.h.
 *
 * A batch is one allocation for its rows plus an arena for their strings:
 * the writer copies each written row once, with no allocation per field, and
 * the last reference frees it all at once. The queue is a list, oldest
 * first, under one mutex held only to link, unlink and take references;
 * rows are visited outside it, the batches of the run held by a reference
 * each (the bounds may drop them meanwhile).
 */
#include "store/handoff.h"
#include "core/arena.h"
#include "core/check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct sk_handoff_batch {
    atomic_uint refs;
    int64_t first;
    int n;
    size_t bytes; /* the rows' strings and values */
    sk_arena *a;
    sk_handoff_batch *next; /* the queue's link, under its lock */
    sk_row rows[];
};

struct sk_handoff {
    pthread_mutex_t mu;
    sk_handoff_batch *head, *tail; /* oldest first */
    size_t rows, bytes, max_rows, max_bytes;
};

sk_handoff *sk_handoff_new(size_t max_rows, size_t max_bytes)
{
    sk_handoff *h = calloc(1, sizeof *h);
    SK_CHECK_ALLOC(h);
    pthread_mutex_init(&h->mu, NULL);
    h->max_rows = max_rows;
    h->max_bytes = max_bytes;
    return h;
}

sk_handoff_batch *sk_handoff_batch_new(int64_t first_rev, int n)
{
    SK_CHECK(n > 0);
    sk_handoff_batch *b = calloc(1, sizeof *b + (size_t)n * sizeof(sk_row));
    SK_CHECK_ALLOC(b);
    atomic_init(&b->refs, 1);
    b->first = first_rev;
    b->n = n;
    b->a = sk_arena_new();
    char *none = sk_arena_strdup(b->a, "");
    for (int i = 0; i < n; i++)
        b->rows[i] = (sk_row){.rev = first_rev + i,
                              .resource = none,
                              .ns = none,
                              .name = none,
                              .uid = none,
                              .value = none};
    return b;
}

static char *copy_str(sk_handoff_batch *b, const char *s)
{
    char *d = sk_arena_strdup(b->a, s ? s : "");
    b->bytes += strlen(d) + 1;
    return d;
}

void sk_handoff_batch_set(sk_handoff_batch *b, const sk_row *row)
{
    SK_CHECK(row->rev >= b->first && row->rev < b->first + b->n);
    sk_row *r = &b->rows[row->rev - b->first];
    *r = *row;
    r->resource = copy_str(b, row->resource);
    r->ns = copy_str(b, row->ns);
    r->name = copy_str(b, row->name);
    r->uid = copy_str(b, row->uid);
    r->value = sk_arena_alloc(b->a, row->value_len + 1);
    memcpy(r->value, row->value, row->value_len);
    b->bytes += row->value_len + 1;
}

void sk_handoff_batch_free(sk_handoff_batch *b)
{
    if (!b)
        return;
    sk_arena_free(b->a);
    free(b);
}

static void batch_unref(sk_handoff_batch *b)
{
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
        sk_handoff_batch_free(b);
}

/* Unlinks the oldest batch and drops the queue's reference. Lock held. */
static void drop_head(sk_handoff *h)
{
    sk_handoff_batch *b = h->head;
    h->head = b->next;
    if (!h->head)
        h->tail = NULL;
    h->rows -= (size_t)b->n;
    h->bytes -= b->bytes;
    batch_unref(b);
}

void sk_handoff_publish(sk_handoff *h, sk_handoff_batch *b)
{
    b->next = NULL;
    pthread_mutex_lock(&h->mu);
    if (h->tail)
        h->tail->next = b;
    else
        h->head = b;
    h->tail = b;
    h->rows += (size_t)b->n;
    h->bytes += b->bytes;
    while (h->head && (h->rows > h->max_rows || h->bytes > h->max_bytes))
        drop_head(h);
    pthread_mutex_unlock(&h->mu);
}

int sk_handoff_visit(sk_handoff *h, int64_t after_rev, int64_t upto_rev, int limit, sk_row_fn fn,
                     void *arg)
{
    int64_t needed = upto_rev - after_rev < limit ? upto_rev - after_rev : limit;
    sk_handoff_batch **run = NULL;
    int n_run = 0;
    pthread_mutex_lock(&h->mu);
    while (h->head && h->head->first + h->head->n - 1 <= after_rev)
        drop_head(h);
    int64_t next = after_rev + 1;
    for (const sk_handoff_batch *b = h->head; b && b->first <= next && next - after_rev <= limit;
         b = b->next) {
        n_run++;
        next = b->first + b->n;
    }
    if (needed > 0 && next - 1 - after_rev >= needed) {
        run = malloc((size_t)n_run * sizeof *run);
        SK_CHECK_ALLOC(run);
        sk_handoff_batch *b = h->head;
        for (int i = 0; i < n_run; i++, b = b->next) {
            run[i] = b;
            atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
        }
    }
    pthread_mutex_unlock(&h->mu);
    int seen = 0, stop = 0;
    for (int i = 0; run && i < n_run; i++) {
        const sk_handoff_batch *b = run[i];
        for (int64_t k = after_rev + 1 + seen - b->first; !stop && k < b->n && seen < limit; k++) {
            seen++;
            stop = fn(arg, &b->rows[k]);
        }
        batch_unref(run[i]);
    }
    free(run);
    return seen;
}

void sk_handoff_free(sk_handoff *h)
{
    if (!h)
        return;
    while (h->head)
        drop_head(h);
    pthread_mutex_destroy(&h->mu);
    free(h);
}
