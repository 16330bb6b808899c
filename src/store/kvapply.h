/*
 * kvapply.h - the etcd keyspace's semantics over a backend connection
 * (private to src/store): range reads with etcd's Count and More, and
 * transactions and lease operations applied inside the writer's open
 * transaction.
 *
 * store.c owns the when (pooled reads, the group-commit writer, revision
 * gates); this module owns the what, as etcd's mvcc and apply code define
 * it, so store.c stays about SQL policy.
 */
#ifndef SK_STORE_KVAPPLY_H
#define SK_STORE_KVAPPLY_H

#include "core/arena.h"
#include "core/err.h"
#include "store/backend.h"
#include "store/kv.h"

/* Reads q at revision at_rev (already validated) into *out (arena a):
 * key-values in key order up to q->limit, Count and More as etcd computes
 * them (Count: keys in the range whatever the limit; More: the limit left
 * some out; count_only: no key-values, More false). known_count (NULL if
 * none): the range's Count at at_rev, known already (rangememo.h), used
 * instead of counting in SQL when the limit cuts the range. fn NULL: the
 * key-values are copied into out->kvs. Else each is handed to fn(arg, kv)
 * as the backend reads it (borrowed for the call; fn returns 0) and
 * out->kvs stays NULL: a reply can be packed straight from the rows. */
sk_err sk_kv_read(const sk_backend_ops *ops, sk_conn *c, const sk_kv_range *q, int64_t at_rev,
                  const int64_t *known_count, sk_arena *a, sk_kv_fn fn, void *arg,
                  sk_kv_range_result *out);

/*
 * Applies t in the writer's open transaction on c, whose revision counter is
 * rev0. As etcd: every compare along the chosen path (nested transactions
 * included) is judged against the state before the transaction, then the
 * requests are checked (a put with ignore_value/ignore_lease needs a live
 * key: SK_ERR_BAD_REQUEST; a put's lease must exist: SK_ERR_NOT_FOUND; a range revision above rev0: SK_ERR_INVALID, below
 * the compact revision: SK_ERR_EXPIRED), and only then do the operations
 * run, every write at revision rev0 + 1 with its own sub-revision. Such a
 * failure writes nothing. *wrote_out is set when rows were appended (the
 * transaction took rev0 + 1). *db_failed is set for a database error (the
 * transaction is then unusable). *out (arena a) on success.
 */
sk_err sk_kv_apply(const sk_backend_ops *ops, sk_conn *c, int64_t rev0, const sk_kv_txn *t,
                   sk_arena *a, sk_kv_txn_result *out, int *wrote_out, int *db_failed);

/* Visits the single keys t may read at the newest revision (compares',
 * puts', single-key deletes' and ranges' at revision 0, in every branch,
 * nested transactions included; duplicates possible): what a backend can
 * fetch in one statement before a batch (backend.h, kv_prefetch). */
void sk_kv_txn_keys(const sk_kv_txn *t,
                    void (*fn)(void *arg, const unsigned char *key, size_t key_len), void *arg);

/*
 * Applies a lease operation (store/kv.h, sk_lease_op_kind for each kind's
 * outcome) in the writer's open transaction on c, whose revision counter is
 * rev0. Every success writes (the lease row); *took_rev_out is set when it
 * also took revision rev0 + 1 (a revoke or expiry that deleted keys).
 * *db_failed as sk_kv_apply's. *out (arena a) on success.
 */
sk_err sk_kv_lease_apply(const sk_backend_ops *ops, sk_conn *c, int64_t rev0, const sk_lease_op *op,
                         sk_arena *a, sk_lease_result *out, int *took_rev_out, int *db_failed);

#endif
