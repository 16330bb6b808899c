/*
 * compactor.h - the controller that compacts the store's history, and the
 * one-shot pass `sqlkube compact` runs.
 *
 * Each interval the compactor keeps `retain` revisions of history and
 * removes versions superseded before that. Of several instances sharing a
 * database only the one whose claim lands compacts in an interval
 * (sk_store_compact_claim, judged by the database's clock); the others skip
 * it and see the new compact revision when they read.
 */
#ifndef SK_CTL_COMPACTOR_H
#define SK_CTL_COMPACTOR_H

#include "ctl/ctl.h"
#include "store/store.h"

#include <stdint.h>

/* One pass: compacts up to the current revision less retain. *upto_out is
 * that revision, *removed_out the rows removed (0 when nothing was due). */
sk_err sk_compactor_run_once(sk_store *store, int64_t retain, int64_t *upto_out,
                             int64_t *removed_out);

/* Starts compacting every interval_s seconds (> 0) over store (borrowed;
 * must outlive it). */
sk_ctl *sk_compactor_start(sk_store *store, int64_t interval_s, int64_t retain);

#endif
