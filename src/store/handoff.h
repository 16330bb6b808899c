/*
 * handoff.h - the batches this process's writer committed, kept in memory
 * for its commit feed (private to src/store).
 *
 * Why. The watch cache's feed applies every revision in order by reading
 * history after the last one it applied (sk_store_history). Most of those
 * rows were written by this very process a moment before, and reading them
 * back from SQL cost ~15% of the server's CPU per REST create on SQLite (and
 * a PostgreSQL backend's time per batch). The writer therefore publishes
 * each committed batch here, and history answers from it when it can.
 *
 * A batch is the run of revisions [first, last] one transaction committed,
 * one row per revision, as the backends' history yields them: an object's
 * version, or for a revision of the etcd keyspace a row with resource "" and
 * no object. It is published only after its COMMIT succeeded (a batch rolled
 * back and replayed is never seen), and it is immutable once published:
 * readers visit it without the lock, holding a reference.
 *
 * Visiting answers only a run that begins exactly at after_rev + 1 (inside
 * or at the start of the oldest batch not yet passed), follows it through
 * batches that continue it with no gap, and reaches the revision the caller
 * knows to be committed (upto_rev) or fills its page: a page short of that
 * would hide revisions of another process. Anything else (revisions another
 * process committed in between, a batch dropped by the bounds) is not here:
 * the caller reads SQL, as before, and the batches it passes are dropped by
 * its next visit. So revisions stay in order, without gap or duplicate,
 * whichever source answers.
 *
 * Memory is bounded (rows and bytes): publishing drops the oldest batches
 * beyond the bounds, so a feed that falls behind reads SQL until it has
 * caught up with what is still held.
 */
#ifndef SK_STORE_HANDOFF_H
#define SK_STORE_HANDOFF_H

#include "store/rows.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sk_handoff sk_handoff;
typedef struct sk_handoff_batch sk_handoff_batch;

/* A queue holding at most max_rows rows and max_bytes of their bytes. */
sk_handoff *sk_handoff_new(size_t max_rows, size_t max_bytes);
/* Frees the queue and the batches only it still references. NULL-safe. */
void sk_handoff_free(sk_handoff *h);

/* A new, unpublished batch for revisions [first_rev, first_rev + n), n > 0:
 * every row starts as an etcd revision (no object). Owned by the caller
 * until published. */
sk_handoff_batch *sk_handoff_batch_new(int64_t first_rev, int n);
/* Makes the row of revision row->rev (inside the batch) a copy of row
 * (borrowed). Only before the batch is published. */
void sk_handoff_batch_set(sk_handoff_batch *b, const sk_row *row);
/* Frees an unpublished batch. NULL-safe. */
void sk_handoff_batch_free(sk_handoff_batch *b);

/* Publishes b (stolen; immutable from now on) after the batches already
 * held, then drops the oldest while the bounds are exceeded. */
void sk_handoff_publish(sk_handoff *h, sk_handoff_batch *b);

/* First drops the batches wholly at or below after_rev. Then, only if the
 * held batches hold every revision of (after_rev, min(upto_rev, after_rev +
 * limit)] without a gap, visits the rows from after_rev + 1 on, in revision
 * order, through the batches that continue them: at most limit rows (past
 * upto_rev too, as SQL's history would), until fn returns non-zero. Returns
 * how many rows fn saw; 0 means that run is not held (read SQL instead),
 * so a short answer is never given while revisions up to upto_rev, perhaps
 * another process's, remain unread. fn runs without the queue's lock; rows
 * are borrowed for the call. */
int sk_handoff_visit(sk_handoff *h, int64_t after_rev, int64_t upto_rev, int limit, sk_row_fn fn,
                     void *arg);

#endif
