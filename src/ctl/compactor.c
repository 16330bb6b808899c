/*
 * compactor.c - see compactor.h.
 */
#include "ctl/compactor.h"
#include "core/check.h"
#include "core/log.h"

#include <stdlib.h>

typedef struct compactor {
    sk_store *store;
    int64_t interval_s, retain;
} compactor;

sk_err sk_compactor_run_once(sk_store *store, int64_t retain, int64_t *upto_out,
                             int64_t *removed_out)
{
    int64_t rev, compact, removed = 0;
    sk_err err = sk_store_revisions(store, &rev, &compact);
    if (err != SK_OK)
        return err;
    int64_t upto = rev - retain;
    if (upto > compact && (err = sk_store_compact(store, upto, &removed)) != SK_OK)
        return err;
    *upto_out = upto;
    *removed_out = removed;
    return SK_OK;
}

/*
 * One periodic pass. The claim asks for nine tenths of the interval since
 * the last claim, not all of it, so that timer and clock jitter between
 * this host and the database never make a lone instance skip a whole
 * interval.
 */
static int64_t compact_pass(void *self, int *done)
{
    compactor *c = self;
    int won = 0;
    int64_t upto = 0, removed = 0;
    sk_err err = sk_store_compact_claim(c->store, c->interval_s * 900, &won);
    if (err == SK_OK && won)
        err = sk_compactor_run_once(c->store, c->retain, &upto, &removed);
    if (err != SK_OK)
        sk_log_warn("compaction failed: %s", sk_err_name(err));
    else if (!won)
        sk_log_debug("compaction skipped: another instance claimed this interval");
    else if (removed > 0)
        sk_log_info("compacted up to revision %lld: %lld rows removed", (long long)upto,
                    (long long)removed);
    *done = err == SK_OK;
    return c->interval_s * 1000;
}

static const sk_ctl_def compactor_def = {
    .name = "compactor",
    .pass = compact_pass,
    .free = free,
};

sk_ctl *sk_compactor_start(sk_store *store, int64_t interval_s, int64_t retain)
{
    SK_CHECK(interval_s > 0);
    compactor *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    c->interval_s = interval_s;
    c->retain = retain;
    return sk_ctl_start(&compactor_def, c, interval_s * 1000);
}
