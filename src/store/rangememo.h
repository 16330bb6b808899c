/*
 * rangememo.h - the counts of paged etcd ranges, remembered from one page
 * to the next (private to src/store).
 *
 * Why. etcd answers a Range with a limit with Count, every key of the range
 * at its revision, and a client pages by asking again from the last key +
 * "\0" at the first page's revision (kube-apiserver's etcd3 store does, for
 * every paged LIST and its watch cache's first list). Counted in SQL, each
 * page counted what was left of the range: a pass over n keys in pages of
 * l cost n^2/2l rows, 47 s at 100,000 ConfigMaps of 10 KiB on SQLite, where
 * etcd counts in memory. But a range at a revision the store has committed
 * never changes, so the next page's count is this page's less the keys it
 * returned: a memo of that makes a whole pass one count.
 *
 * An entry is (the next page's bounds, revision) -> count; only an exact
 * match answers, so a client that asks anything else (another start,
 * another revision, the current one moving on) counts in SQL as before.
 * A compaction does not make an entry wrong: a read at a compacted revision
 * fails before its count is used. A few entries, the least recently used
 * replaced; any thread.
 */
#ifndef SK_STORE_RANGEMEMO_H
#define SK_STORE_RANGEMEMO_H

#include "store/kvrange.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sk_range_memo sk_range_memo;

/* New, empty; freed with sk_range_memo_free. */
sk_range_memo *sk_range_memo_new(void);
void sk_range_memo_free(sk_range_memo *m);

/* 1 and *count_out: the keys in b at rev, as a page before left them; 0 if
 * no page did. */
int sk_range_memo_find(sk_range_memo *m, const sk_kv_bounds *b, int64_t rev, int64_t *count_out);

/* Remembers that [next_lo, b->hi) holds count keys at rev (borrowed bytes,
 * copied). */
void sk_range_memo_put(sk_range_memo *m, const sk_kv_bounds *b, const unsigned char *next_lo,
                       size_t next_lo_len, int64_t rev, int64_t count);

#endif
