/*
 * collector.c - see collector.h.
 */
#include "ctl/collector.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"

#include <stdlib.h>

#define PASS_INTERVAL_MS 1000
#define PASS_BATCH 100

typedef struct collector {
    sk_store *store;
} collector;

typedef struct expired_batch {
    sk_row rows[PASS_BATCH];
    int n;
} expired_batch;

static int collect_row(void *arg, const sk_row *row)
{
    expired_batch *b = arg;
    sk_row_copy(&b->rows[b->n++], row);
    return b->n == PASS_BATCH;
}

/* Deletes one expired object, if it is still the version that expired. */
static void collect_one(collector *c, const sk_row *row)
{
    sk_write w = {.op = SK_WRITE_DELETE,
                  .resource = row->resource,
                  .ns = row->ns,
                  .name = row->name,
                  .expected_rev = row->rev};
    sk_err err = sk_store_write(c->store, &w, NULL);
    if (err == SK_OK) {
        sk_log_debug("expired %s %s/%s at revision %lld", row->resource, row->ns, row->name,
                     (long long)row->rev);
    } else if (err != SK_ERR_NOT_FOUND && err != SK_ERR_CONFLICT) {
        /* Not found or conflict: deleted or rewritten meanwhile (by a client
         * or another instance's collector), and that write rewrote or cleared
         * the expiry itself. Anything else is worth a line. */
        sk_log_warn("expiry: cannot delete %s %s/%s: %s", row->resource, row->ns, row->name,
                    sk_err_name(err));
    }
}

/* One pass; runs again at once while passes come back full. */
static int64_t collect_pass(void *self, int *done)
{
    collector *c = self;
    expired_batch b = {.n = 0};
    sk_err err = sk_store_expired(c->store, sk_wall_ms(), PASS_BATCH, collect_row, &b);
    if (err != SK_OK)
        sk_log_warn("expiry: cannot read expired objects: %s", sk_err_name(err));
    for (int i = 0; i < b.n; i++) {
        collect_one(c, &b.rows[i]);
        sk_row_clear(&b.rows[i]);
    }
    *done = err == SK_OK;
    return b.n == PASS_BATCH ? 0 : PASS_INTERVAL_MS;
}

static const sk_ctl_def collector_def = {
    .name = "expiry-collector",
    .pass = collect_pass,
    .free = free,
};

sk_ctl *sk_collector_start(sk_store *store)
{
    collector *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    return sk_ctl_start(&collector_def, c, 0);
}
