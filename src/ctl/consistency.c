/*
 * consistency.c - see consistency.h. One mutex serialises check rounds (the
 * periodic thread and /debug/consistency), so a resource is never trusted
 * and distrusted by two rounds at once.
 */
#include "ctl/consistency.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { CHECK_SUCCESS, CHECK_FAILURE, CHECK_SKIPPED, CHECK_STATUSES };
static const char *const status_names[CHECK_STATUSES] = {"success", "failure", "skipped"};

typedef struct checker {
    sk_cache *cache;
    sk_store *store;
    const char *const *resources;
    int n;
    int64_t interval_s; /* 0: checks on request only */
    atomic_llong (*counts)[CHECK_STATUSES];
    pthread_mutex_t round_mu;
} checker;

static int check_resource(checker *ck, int res, sk_buf *report)
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

static void check_flags(checker *ck, int res, sk_buf *report)
{
    int64_t wrong = 0;
    sk_err err = sk_store_flags_wrong(ck->store, ck->resources[res], &wrong);
    if (report) {
        if (err == SK_OK)
            sk_buf_printf(report, "%s: superseded flags: %lld wrong\n", ck->resources[res],
                          (long long)wrong);
        else
            sk_buf_printf(report, "%s: superseded flags: skipped (%s)\n", ck->resources[res],
                          sk_err_name(err));
    }
    if (err == SK_OK && wrong > 0)
        sk_log_warn("consistency check: %lld history rows of %s have a wrong superseded flag: "
                    "sk_objects misses or repeats those objects (sqlkube's own reads do not "
                    "use the flag)",
                    (long long)wrong, ck->resources[res]);
}

static void check_round(checker *ck, sk_buf *report)
{
    pthread_mutex_lock(&ck->round_mu);
    for (int i = 0; i < ck->n; i++) {
        check_resource(ck, i, report);
        check_flags(ck, i, report);
    }
    pthread_mutex_unlock(&ck->round_mu);
}

static int64_t check_pass(void *self, int *done)
{
    checker *ck = self;
    check_round(ck, NULL);
    *done = 1;
    return ck->interval_s > 0 ? ck->interval_s * 1000 : SK_CTL_NEVER;
}

static void checker_free(void *self)
{
    checker *ck = self;
    pthread_mutex_destroy(&ck->round_mu);
    free(ck->counts);
    free(ck);
}

static const sk_ctl_def checker_def = {
    .name = "consistency-checker",
    .pass = check_pass,
    .free = checker_free,
};

sk_ctl *sk_consistency_start(sk_cache *cache, sk_store *store, const char *const *resources, int n,
                             int64_t interval_s)
{
    checker *ck = calloc(1, sizeof *ck);
    SK_CHECK_ALLOC(ck);
    ck->cache = cache;
    ck->store = store;
    ck->resources = resources;
    ck->n = n;
    ck->interval_s = interval_s;
    ck->counts = calloc((size_t)n, sizeof *ck->counts);
    SK_CHECK_ALLOC(ck->counts);
    pthread_mutex_init(&ck->round_mu, NULL);
    /* The first check waits a whole interval: the cache was just built
     * from the store. */
    return sk_ctl_start(&checker_def, ck, interval_s > 0 ? interval_s * 1000 : SK_CTL_NEVER);
}

void sk_consistency_run(sk_ctl *c, sk_buf *report)
{
    check_round(sk_ctl_self(c), report);
}

void sk_consistency_render(sk_ctl *c, sk_buf *out)
{
    checker *ck = sk_ctl_self(c);
    sk_buf_puts(out, "# HELP storage_consistency_checks_total Watch cache vs store consistency "
                     "checks by resource and result.\n"
                     "# TYPE storage_consistency_checks_total counter\n");
    for (int i = 0; i < ck->n; i++)
        for (int s = 0; s < CHECK_STATUSES; s++)
            sk_buf_printf(
                out, "storage_consistency_checks_total{resource=\"%s\",status=\"%s\"} %lld\n",
                ck->resources[i], status_names[s], (long long)atomic_load(&ck->counts[i][s]));
}
