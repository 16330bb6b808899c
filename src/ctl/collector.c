/*
 * collector.c - see collector.h.
 */
#include "ctl/collector.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"

#include <stdlib.h>

/* etcd's lessor checks for expired leases every 500 ms. */
#define PASS_INTERVAL_MS 500
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

typedef struct lease_batch {
    int64_t ids[PASS_BATCH];
    int n;
} lease_batch;

static int collect_lease(void *arg, const sk_lease *l)
{
    lease_batch *b = arg;
    b->ids[b->n++] = l->id;
    return b->n == PASS_BATCH;
}

/* Expires one etcd lease (its keys go at one revision), if it is still due
 * when the writer looks: the store judges that, so a renewal since wins and
 * of several instances exactly one expires it. */
static void expire_lease(int64_t id, sk_store *store, int64_t now_ms)
{
    sk_arena *a = sk_arena_new();
    sk_lease_op op = {.kind = SK_LEASE_EXPIRE, .id = id, .now_ms = now_ms};
    sk_lease_result res;
    sk_err err = sk_store_lease_write(store, &op, a, &res);
    if (err == SK_OK)
        sk_log_debug("expired etcd lease %lld (%lld keys) at revision %lld", (long long)id,
                     (long long)res.deleted, (long long)res.rev);
    else if (err != SK_ERR_NOT_FOUND && err != SK_ERR_CONFLICT)
        sk_log_warn("expiry: cannot expire etcd lease %lld: %s", (long long)id, sk_err_name(err));
    sk_arena_free(a);
}

/* One pass over objects, then etcd leases; runs again at once while a pass
 * comes back full. */
static int64_t collect_pass(void *self, int *done)
{
    collector *c = self;
    expired_batch b = {.n = 0};
    lease_batch lb = {.n = 0};
    int64_t now = sk_wall_ms();
    sk_err err = sk_store_expired(c->store, now, PASS_BATCH, collect_row, &b);
    if (err != SK_OK)
        sk_log_warn("expiry: cannot read expired objects: %s", sk_err_name(err));
    for (int i = 0; i < b.n; i++) {
        collect_one(c, &b.rows[i]);
        sk_row_clear(&b.rows[i]);
    }
    sk_err lerr = sk_store_leases(c->store, now, PASS_BATCH, collect_lease, &lb);
    if (lerr != SK_OK)
        sk_log_warn("expiry: cannot read expired etcd leases: %s", sk_err_name(lerr));
    for (int i = 0; i < lb.n; i++)
        expire_lease(lb.ids[i], c->store, now);
    *done = err == SK_OK && lerr == SK_OK;
    return b.n == PASS_BATCH || lb.n == PASS_BATCH ? 0 : PASS_INTERVAL_MS;
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
