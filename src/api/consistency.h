/*
 * consistency.h - periodic cache-vs-store consistency checking (KEP-4988).
 *
 * Every interval, per resource, the watch cache and the store are hashed at
 * the same revision (sk_cache_check). A mismatch is logged and counted, the
 * resource's reads go to SQL, and the cache rebuilds from a consistent
 * list; a later check that passes brings the cache back into use. The
 * counts are storage_consistency_checks_total{resource,status} at /metrics;
 * GET /debug/consistency runs one check at once and prints it.
 */
#ifndef SK_API_CONSISTENCY_H
#define SK_API_CONSISTENCY_H

#include "cache/cache.h"
#include "core/buf.h"

#include <stdint.h>

typedef struct sk_checker sk_checker;
/* Starts checking every interval_s seconds (0: only on request). cache and
 * resources (n names, static) are borrowed and must outlive the checker. */
sk_checker *sk_checker_start(sk_cache *cache, const char *const *resources, int n,
                             int64_t interval_s);
/* Stops and joins. NULL-safe. */
void sk_checker_stop(sk_checker *ck);
/* Checks every resource now, acts on the results, appends a report. */
void sk_checker_run(sk_checker *ck, sk_buf *report);
/* Appends storage_consistency_checks_total in Prometheus text format. */
void sk_checker_render(sk_checker *ck, sk_buf *out);

#endif
