/*
 * consistency.c - see consistency.h. One mutex serialises check rounds (the
 * periodic thread and /debug/consistency), so a resource is never trusted
 * and distrusted by two rounds at once.
 */
#include "api/consistency.h"
#include "core/check.h"
#include "core/log.h"
#include "core/ticker.h"
#include "core/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { CHECK_SUCCESS, CHECK_FAILURE, CHECK_SKIPPED, CHECK_STATUSES };
static const char *const status_names[CHECK_STATUSES] = {"success", "failure", "skipped"};

struct sk_checker {
    sk_cache *cache;
    const char *const *resources;
    int n;
    int64_t interval_s;
    atomic_llong (*counts)[CHECK_STATUSES];
    pthread_mutex_t round_mu;
    sk_ticker *ticker; /* NULL: checks on request only */
};

static int check_resource(sk_checker *ck, int res, sk_buf *report)
{
    sk_cache_check_result r;
    sk_err err = sk_cache_check(ck->cache, res, &r);
    int status;
    if (err != SK_OK) {
        status = CHECK_SKIPPED;
        if (report)
            sk_buf_printf(report, "%s: skipped (%s)\n", ck->resources[res], sk_err_name(err));
    } else {
        int ok = r.cache_hash == r.store_hash && r.cache_count == r.store_count;
        status = ok ? CHECK_SUCCESS : CHECK_FAILURE;
        if (report)
            sk_buf_printf(report,
                          "%s: revision %lld: cache %016llx (%lld objects), store %016llx "
                          "(%lld objects): %s\n",
                          ck->resources[res], (long long)r.rev, (unsigned long long)r.cache_hash,
                          (long long)r.cache_count, (unsigned long long)r.store_hash,
                          (long long)r.store_count, ok ? "ok" : "MISMATCH");
        if (ok) {
            sk_cache_trust(ck->cache, res);
        } else {
            sk_log_warn("consistency check: %s differs from the store at revision %lld (cache "
                        "%lld objects, store %lld): serving it from SQL and rebuilding the cache",
                        ck->resources[res], (long long)r.rev, (long long)r.cache_count,
                        (long long)r.store_count);
            sk_cache_distrust(ck->cache, res);
        }
    }
    atomic_fetch_add(&ck->counts[res][status], 1);
    return status;
}

void sk_checker_run(sk_checker *ck, sk_buf *report)
{
    pthread_mutex_lock(&ck->round_mu);
    for (int i = 0; i < ck->n; i++)
        check_resource(ck, i, report);
    pthread_mutex_unlock(&ck->round_mu);
}

static int64_t check_round(void *arg)
{
    sk_checker *ck = arg;
    sk_checker_run(ck, NULL);
    return ck->interval_s * 1000;
}

sk_checker *sk_checker_start(sk_cache *cache, const char *const *resources, int n,
                             int64_t interval_s)
{
    sk_checker *ck = calloc(1, sizeof *ck);
    SK_CHECK_ALLOC(ck);
    ck->cache = cache;
    ck->resources = resources;
    ck->n = n;
    ck->interval_s = interval_s;
    ck->counts = calloc((size_t)n, sizeof *ck->counts);
    SK_CHECK_ALLOC(ck->counts);
    pthread_mutex_init(&ck->round_mu, NULL);
    if (interval_s > 0)
        ck->ticker = sk_ticker_start(interval_s * 1000, check_round, ck);
    return ck;
}

void sk_checker_stop(sk_checker *ck)
{
    if (!ck)
        return;
    sk_ticker_stop(ck->ticker);
    pthread_mutex_destroy(&ck->round_mu);
    free(ck->counts);
    free(ck);
}

void sk_checker_render(sk_checker *ck, sk_buf *out)
{
    sk_buf_puts(out, "# HELP storage_consistency_checks_total Watch cache vs store consistency "
                     "checks by resource and result.\n"
                     "# TYPE storage_consistency_checks_total counter\n");
    for (int i = 0; i < ck->n; i++)
        for (int s = 0; s < CHECK_STATUSES; s++)
            sk_buf_printf(
                out, "storage_consistency_checks_total{resource=\"%s\",status=\"%s\"} %lld\n",
                ck->resources[i], status_names[s], (long long)atomic_load(&ck->counts[i][s]));
}
