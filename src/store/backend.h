/*
 * backend.h - the function table each SQL backend implements (private to
 * src/store). store.c owns all policy (group commit, retries, pooling,
 * precondition checks); a backend only runs SQL on one connection.
 *
 * A connection is used by one thread at a time. Write primitives run only
 * on the writer's connection, between begin_write and commit_write/rollback.
 * All out-params are written only on success.
 */
#ifndef SK_STORE_BACKEND_H
#define SK_STORE_BACKEND_H

#include "store/store.h"

typedef struct sk_conn sk_conn;

typedef struct sk_backend_ops {
    const char *name;
    /* Opens a connection. *errmsg (new) names the problem on failure. */
    sk_err (*connect)(const char *url, sk_conn **out, char **errmsg);
    void (*disconnect)(sk_conn *c);
    /* Applies pending migrations/<backend>/NNNN_*.sql (compiled in) in order,
     * recording each in sk_migrations; safe to run concurrently from several
     * processes (PostgreSQL: advisory lock). Seeds the revision row and the
     * token secret on first run. */
    sk_err (*migrate)(sk_conn *c, char **errmsg);

    /* BEGIN, take the revision lock (SQLite: BEGIN IMMEDIATE; PostgreSQL:
     * SELECT ... FOR UPDATE on the one-row revision table), read the counter. */
    sk_err (*begin_write)(sk_conn *c, int64_t *rev_out);
    /* The live current version of a key (SK_ERR_NOT_FOUND if none). */
    sk_err (*get_current)(sk_conn *c, const char *resource, const char *ns, const char *name,
                          sk_row *out);
    /* Live keys of every resource in namespace ns (for cascading namespace
     * deletion); visits rows with resource/ns/name/rev/uid/value set. */
    sk_err (*list_namespace)(sk_conn *c, const char *ns, sk_row_fn fn, void *arg);
    /* Inserts the history row, then points the current index at it (or drops
     * the key from the current index when row->deleted). */
    sk_err (*append)(sk_conn *c, const sk_row *row);
    /* Stores the counter (= last revision of the batch), notifies listeners
     * (PostgreSQL: one NOTIFY sqlkube_commit, payload the revision), COMMIT. */
    sk_err (*commit_write)(sk_conn *c, int64_t rev);
    void (*rollback)(sk_conn *c);

    /* Reads (autocommit, each statement one consistent snapshot). */
    sk_err (*revisions)(sk_conn *c, int64_t *rev_out, int64_t *compact_rev_out);
    /* Newest version of a key with rev <= at_rev (at_rev 0 = latest), tombstones
     * included (the caller interprets deleted). SK_ERR_NOT_FOUND if none. */
    sk_err (*get_at)(sk_conn *c, const char *resource, const char *ns, const char *name,
                     int64_t at_rev, sk_row *out);
    sk_err (*list)(sk_conn *c, const sk_list_query *q, sk_row_fn fn, void *arg);
    sk_err (*history)(sk_conn *c, int64_t after_rev, int limit, sk_row_fn fn, void *arg);
    /* One bounded compaction batch: deletes at most batch rows that are
     * superseded by a version with rev <= upto_rev, or tombstones with
     * rev <= upto_rev (and sets compact_rev = max(compact_rev, upto_rev) when
     * nothing is left). *removed_out = rows deleted in this batch. */
    sk_err (*compact_batch)(sk_conn *c, int64_t upto_rev, int batch, int64_t *removed_out);
    /* Reads sk_meta.value for key (new string). SK_ERR_NOT_FOUND if absent. */
    sk_err (*meta_get)(sk_conn *c, const char *key, char **value_out);
} sk_backend_ops;

extern const sk_backend_ops sk_backend_sqlite;
extern const sk_backend_ops sk_backend_postgres;

#endif
