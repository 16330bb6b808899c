/*
 * consistency.h - periodic cache-vs-store consistency checking (KEP-4988).
 *
 * Every interval, per resource, the watch cache and the store are hashed at
 * the same revision (sk_cache_check). A mismatch is logged and counted, the
 * resource's reads go to SQL, and the cache rebuilds from a consistent
 * list; a later check that passes brings the cache back into use. The
 * counts are storage_consistency_checks_total{resource,status} at /metrics;
 * GET /debug/consistency runs one check at once and prints it.
 *
 * The same round checks each resource's superseded flags in the store
 * (sk_store_flags_wrong: each key's newest history row, and only it,
 * unflagged), which the SQL views for people filter on and sqlkube itself
 * never reads: a wrong flag is logged and printed, not acted on. It reads
 * every history row of the resource, about what the cache check's list
 * costs once compaction has run.
 */
#ifndef SK_CTL_CONSISTENCY_H
#define SK_CTL_CONSISTENCY_H

#include "cache/cache.h"
#include "core/buf.h"
#include "ctl/ctl.h"
#include "store/store.h"

#include <stdint.h>

/* Starts checking every interval_s seconds (0: only on request). cache,
 * store and resources (n names, static) are borrowed and must outlive the
 * checker. */
sk_ctl *sk_consistency_start(sk_cache *cache, sk_store *store, const char *const *resources, int n,
                             int64_t interval_s);
/* Checks every resource of checker (a controller sk_consistency_start
 * made) now, acts on the results, appends a report. */
void sk_consistency_run(sk_ctl *checker, sk_buf *report);
/* Appends storage_consistency_checks_total in Prometheus text format. */
void sk_consistency_render(sk_ctl *checker, sk_buf *out);

#endif
