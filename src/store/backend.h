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

#include "core/err.h"
#include "store/kv.h"
#include "store/rows.h"

typedef struct sk_conn sk_conn;

typedef struct sk_backend_ops {
    const char *name;
    /* 1: a database server, which may answer later than it does now
     * (PostgreSQL); 0: a local file (SQLite), which waiting never opens. */
    int server;
    /* Opens a connection. *errmsg (new) names the problem on failure:
     * SK_ERR_UNAVAILABLE when the database could not be reached or refused
     * the session, another error when the URL itself is wrong. */
    sk_err (*connect)(const char *url, sk_conn **out, char **errmsg);
    void (*disconnect)(sk_conn *c);
    /* Optional (NULL: always): 0 if an idle connection is known to be gone
     * without asking the server (PostgreSQL: the server closed it, or said
     * something unasked, as when it terminates a session). No I/O waits. */
    int (*idle_ok)(sk_conn *c);
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
    /* Optional, as kv_prefetch: names the current rows of the n keys
     * (resources[i], nss[i], names[i]) for begin_write to read, so that
     * until commit_write or rollback get_current of such a key, or of one
     * written since by append, answers from memory. */
    sk_err (*prefetch_current)(sk_conn *c, const char *const *resources, const char *const *nss,
                               const char *const *names, size_t n);
    /* Inserts the history row: the key's newest row is its live version,
     * unless it is a tombstone (row->deleted). In the same transaction it
     * sets the superseded flag of the key's previous newest row, so that
     * exactly the newest row of each key is unflagged (schema/). */
    sk_err (*append)(sk_conn *c, const sk_row *row);
    /* Stores the counter (= last revision of the batch; the one read by
     * begin_write when the batch only wrote rows that take no revision, such
     * as leases) and the batch's identity (sk_writer: writer's last batch is
     * batch), notifies listeners (PostgreSQL: one NOTIFY sqlkube_commit,
     * payload the revision), COMMIT. An error leaves it unknown whether the
     * batch committed (the connection may have broken with COMMIT in
     * flight): last_batch tells. */
    sk_err (*commit_write)(sk_conn *c, int64_t rev, int64_t writer, int64_t batch);
    void (*rollback)(sk_conn *c);
    /* In the writer's transaction, after begin_write: the last batch writer
     * committed (0: none). Every batch's transaction took the revision lock,
     * which begin_write now holds, so each of writer's batches has ended,
     * committed or not. */
    sk_err (*last_batch)(sk_conn *c, int64_t writer, int64_t *batch_out);

    /*
     * Reads (autocommit, each statement one consistent snapshot). get_at, list
     * and history are each ONE statement that also reads compact_rev and
     * yields no row at all when the snapshot's compact_rev is above the read's
     * revision (at_rev, q->rev, after_rev): a row never comes from a range
     * that compaction has begun to delete. store.c tells such an empty answer
     * from a truly empty one by reading compact_rev afterwards (it only grows).
     */
    sk_err (*revisions)(sk_conn *c, int64_t *rev_out, int64_t *compact_rev_out);
    /* Newest version of a key with rev <= at_rev (at_rev 0 = latest), tombstones
     * included (the caller interprets deleted). SK_ERR_NOT_FOUND if none. */
    sk_err (*get_at)(sk_conn *c, const char *resource, const char *ns, const char *name,
                     int64_t at_rev, sk_row *out);
    sk_err (*list)(sk_conn *c, const sk_list_query *q, sk_row_fn fn, void *arg);
    /* How many rows list would visit for q with no limit (q->limit unused),
     * values unread. */
    sk_err (*count)(sk_conn *c, const sk_list_query *q, int64_t *out);
    /* history also yields each revision of the etcd keyspace (sk_kv) as one
     * row with resource "" and no object, so the feed has no gap. */
    sk_err (*history)(sk_conn *c, int64_t after_rev, int limit, sk_row_fn fn, void *arg);
    /*
     * One bounded compaction batch toward hi = min(upto_rev, current rev), in
     * one transaction. A history row at revision s "retires" the version it
     * superseded (unless that is a tombstone) and, if it is a tombstone,
     * itself. Taking s upward from compact_rev, the batch deletes the victims
     * of whole s (about batch rows: at most batch + 1, since a tombstone goes
     * with the version it hides, never after it) and, in the same
     * transaction, sets compact_rev to the revision below the first s it
     * left, or to hi when none is left (*done_out = 1). compact_rev is thus
     * both the cursor and the read barrier: it never falls behind a deleted
     * row, and it never moves backwards. *removed_out = rows deleted.
     * SQLite: when done, it also returns free pages and truncates the WAL.
     */
    sk_err (*compact_batch)(sk_conn *c, int64_t upto_rev, int batch, int64_t *removed_out,
                            int *done_out);
    /*
     * Claims a compaction pass for claimant ("host:pid"): one conditional
     * UPDATE of the revision row that records the database's clock (ms since
     * the epoch) and claimant only if the recorded claim is at least
     * interval_ms old (interval_ms 0: unconditionally). Concurrent claimers
     * serialise on the row, and each re-checks the condition against the
     * winner's value, so exactly one of them gets *won_out = 1.
     */
    sk_err (*compact_claim)(sk_conn *c, int64_t interval_ms, const char *claimant, int *won_out);
    /*
     * Commit notifications from every process (PostgreSQL LISTEN
     * sqlkube_commit; NULL for SQLite, whose only writer is in-process).
     * The first call on a connection starts listening and sets
     * *notified_rev_out to -1: what committed before was not notified, so
     * the caller reads the counter. Each later call waits up to timeout_ms
     * for a notification, drains all that are queued and sets
     * *notified_rev_out to the highest revision they carry (0 if none
     * came): a notification is sent at COMMIT and writers take turns on the
     * revision row, so that revision and every one below it are committed.
     * SK_OK whether notified or timed out. The connection is then used for
     * nothing else.
     */
    sk_err (*wait_notify)(sk_conn *c, int timeout_ms, int64_t *notified_rev_out);
    /*
     * Object expiry (the sk_ttl table), in the writer's transaction with the
     * write: expires_at_ms > 0 records that the key's version rev expires
     * then (upsert); 0 removes the key's row.
     */
    sk_err (*set_expiry)(sk_conn *c, const char *resource, const char *ns, const char *name,
                         int64_t rev, int64_t expires_at_ms);
    /* In the writer's transaction: the key's row, if it names version
     * from_rev, names to_rev instead, its time kept. */
    sk_err (*move_expiry)(sk_conn *c, const char *resource, const char *ns, const char *name,
                          int64_t from_rev, int64_t to_rev);
    /* Visits the versions named by up to limit rows of sk_ttl with
     * expires_at_ms <= now_ms, soonest first. (A row names a live version:
     * the write that supersedes or deletes it rewrites, moves or clears the
     * row.) */
    sk_err (*expired)(sk_conn *c, int64_t now_ms, int limit, sk_row_fn fn, void *arg);
    /*
     * Allocations (sk_allocation), in the writer's transaction. claim_taken:
     * *taken_out = 1 if (kind, value) is owned by a key other than
     * (resource, ns, name). claims_release: drops every row the key owns.
     * claim_insert: records the key as the owner (the caller checked first).
     */
    sk_err (*claim_taken)(sk_conn *c, const char *kind, const char *value, const char *resource,
                          const char *ns, const char *name, int *taken_out);
    sk_err (*claims_release)(sk_conn *c, const char *resource, const char *ns, const char *name);
    sk_err (*claim_insert)(sk_conn *c, const char *kind, const char *value, const char *resource,
                           const char *ns, const char *name);
    /* Read (autocommit): visits the value of every row of kind. */
    sk_err (*claims_list)(sk_conn *c, const char *kind, int (*fn)(void *arg, const char *value),
                          void *arg);
    /*
     * The etcd keyspace (sk_kv, store/kv.h). Keys in [lo, hi) bytewise, hi
     * NULL: no upper bound. kv_range visits the live version of each key at
     * revision rev (INT64_MAX: the newest, which on the writer's connection
     * includes its open transaction's rows) in key order, at most limit
     * (0: all), values left empty when keys_only; kv_count counts them. Both
     * are gated on compact_rev like get_at (no row, count 0, when compacted
     * past rev). kv_append inserts one version row (writer's transaction)
     * and flags the key's previous newest row superseded, as append does.
     * kv_compact, its own transaction, takes the next span of at most
     * `span` revisions above kv_compact_rev (up to compact_rev): removes the
     * versions superseded within it and its tombstones, and records how far
     * it got (kv_compact_rev); *done_out = 1 once kv_compact_rev has caught
     * up with compact_rev.
     */
    sk_err (*kv_range)(sk_conn *c, const unsigned char *lo, size_t lo_len, const unsigned char *hi,
                       size_t hi_len, int64_t rev, int64_t limit, int keys_only, sk_kv_fn fn,
                       void *arg);
    sk_err (*kv_count)(sk_conn *c, const unsigned char *lo, size_t lo_len, const unsigned char *hi,
                       size_t hi_len, int64_t rev, int64_t *count_out);
    sk_err (*kv_append)(sk_conn *c, const sk_kv_row *row);
    /*
     * Optional (NULL where a read costs no round trip, as SQLite's). Called
     * just before begin_write (and rollback if that is not reached): names
     * keys[0..n) (lens[i] bytes; duplicates allowed), whose live versions
     * begin_write reads after taking the revision lock, in the same round
     * trip, and keeps, so that until commit_write or rollback a kv_range or
     * kv_count at INT64_MAX over exactly one key so read, or written since
     * by kv_append, answers from memory what the database would (later
     * writes of the batch included).
     */
    sk_err (*kv_prefetch)(sk_conn *c, const unsigned char *const *keys, const size_t *lens,
                          size_t n);
    sk_err (*kv_compact)(sk_conn *c, int64_t span, int64_t *removed_out, int *done_out);
    /* Read: the rows with rev in (after_rev, upto_rev] in (rev, sub) order,
     * each with the live version it replaced, in one statement gated on
     * compact_rev (no row when compact_rev > after_rev + 1). */
    sk_err (*kv_changes)(sk_conn *c, int64_t after_rev, int64_t upto_rev, sk_kv_change_fn fn,
                         void *arg);
    /* Read: the rows sk_store_kv_kept visits, in one statement. */
    sk_err (*kv_kept)(sk_conn *c, int64_t upto_rev, int64_t compact_rev, sk_kv_row_fn fn,
                      void *arg);
    /* The decoded rows (sk_kv_doc; sk_store_kv_docs_* say what they mean).
     * kv_rows_after: up to limit rows of sk_kv after (rev, sub) in (rev,
     * sub) order, one statement. kv_docs_put: its own transaction; a doc
     * whose row is gone (compacted) or that is there already is skipped.
     * kv_docs_last: the newest decoded row's (rev, sub), (0, 0) if none. */
    sk_err (*kv_rows_after)(sk_conn *c, int64_t rev, int sub, int limit, sk_kv_row_fn fn,
                            void *arg);
    sk_err (*kv_docs_put)(sk_conn *c, const sk_kv_doc *docs, size_t n);
    sk_err (*kv_docs_last)(sk_conn *c, int64_t *rev_out, int *sub_out);
    /* The round trips c made to the database server since the last call
     * (a pipelined flight is one), and starts counting again: always 0 for
     * an embedded database. */
    uint64_t (*take_round_trips)(sk_conn *c);
    /*
     * Leases (sk_lease; on the writer's connection inside its transaction,
     * or on a pooled one as reads). lease_get: SK_ERR_NOT_FOUND if absent.
     * lease_put: inserts or replaces the row. lease_delete: removes it (no
     * error if absent). leases visits those with expires_at_ms <= before_ms
     * (INT64_MAX: all), soonest first, at most limit (0: all).
     * kv_lease_keys visits the newest live version of every key attached to
     * lease, in key order (values left empty).
     */
    sk_err (*lease_get)(sk_conn *c, int64_t id, sk_lease *out);
    sk_err (*lease_put)(sk_conn *c, const sk_lease *l);
    sk_err (*lease_delete)(sk_conn *c, int64_t id);
    sk_err (*leases)(sk_conn *c, int64_t before_ms, int limit, sk_lease_fn fn, void *arg);
    sk_err (*kv_lease_keys)(sk_conn *c, int64_t lease, sk_kv_fn fn, void *arg);
    /* The database's size on disk in bytes (read, autocommit). */
    sk_err (*db_size)(sk_conn *c, int64_t *bytes_out);
    /* Hands space that compaction freed back (etcd's Defragment): SQLite's
     * incremental vacuum a chunk at a time and a WAL truncation; VACUUM of
     * the history tables on PostgreSQL, which takes no lock writers wait
     * for. */
    sk_err (*reclaim)(sk_conn *c);
    /* How many of resource's history rows have a wrong superseded flag (set
     * on its key's newest row, or clear on an older one), at one snapshot;
     * one probe of sk_history_key per row (read, autocommit). */
    sk_err (*flags_wrong)(sk_conn *c, const char *resource, int64_t *count_out);
    /* Read (autocommit): visits every resource column of sk_history once,
     * in order, one probe of sk_history_key each (a skip scan, whatever
     * the table's size). */
    sk_err (*resources)(sk_conn *c, int (*fn)(void *arg, const char *resource), void *arg);
    /* Optional (NULL where rows are not held back, as SQLite's): sends the
     * rows kv_append and append hold back now, in the open transaction,
     * and forgets the known keys (the database answers for them from
     * then on), so that a transaction of many rows holds bounded memory. */
    sk_err (*kv_flush)(sk_conn *c);
    /* In the writer's transaction (an import into an empty store): sets
     * compact_rev and kv_compact_rev as they are, not only upwards. */
    sk_err (*set_compacted)(sk_conn *c, int64_t compact_rev, int64_t kv_compact_rev);
    /* Reads sk_meta.value for key (new string). SK_ERR_NOT_FOUND if absent. */
    sk_err (*meta_get)(sk_conn *c, const char *key, char **value_out);
} sk_backend_ops;

extern const sk_backend_ops sk_backend_sqlite;
extern const sk_backend_ops sk_backend_postgres;

#endif
