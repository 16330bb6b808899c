/*
 * store.h - MVCC object storage over SQL: the only way upper layers touch
 * the database.
 *
 * Model. Every create, update and delete appends one history row carrying a
 * new global revision; revisions are gap-free (1, 2, 3, ...) and commit in
 * revision order, across threads and across processes sharing PostgreSQL.
 * A delete appends a tombstone. An object's resourceVersion IS the revision
 * of the row that wrote it. A key is (resource, namespace, name); cluster-
 * scoped objects use namespace "".
 *
 * Writes. Callers hand write intents to one writer thread per store, which
 * groups every waiting intent (up to a bound) into ONE transaction (group
 * commit: one fsync per batch). Each intent's precondition is checked
 * against the current row inside that transaction; a failed precondition
 * fails that intent alone and burns no revision. If the batch hits a
 * database error, it is rolled back and every intent is retried in a
 * transaction of its own, so one bad write never fails its neighbours.
 *
 * Reads. Reads run on pooled connections from any thread. A list reads at a
 * snapshot revision R: for each key, the newest version with rev <= R,
 * tombstones skipped, in (namespace, name) order, starting after an
 * exclusive key: a keyset range query, O(page) at any table size.
 *
 * Compaction. Any process sharing the database may compact. A read at a
 * revision below the compact revision fails with SK_ERR_EXPIRED, judged in
 * the same database snapshot as the rows it reads: it never answers from a
 * range another process has begun to compact, and it visits no row before
 * failing.
 *
 * The etcd keyspace. Byte keys and values (store/kv.h) live in their own
 * MVCC table but take their revisions from the same counter, through the
 * same writer: an etcd transaction is one write intent that evaluates its
 * compares and runs its operations inside the writer's transaction, taking
 * ONE revision if it writes anything (its writes told apart by etcd's
 * sub-revision), none if it only reads. The commit feed (sk_store_history)
 * shows such a revision as one row without an object; compaction covers
 * both tables.
 *
 * Rows are store/rows.h's.
 */
#ifndef SK_STORE_STORE_H
#define SK_STORE_STORE_H

#include "core/err.h"
#include "core/arena.h"
#include "store/kv.h"
#include "store/rows.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sk_store sk_store;

typedef enum { SK_WRITE_CREATE, SK_WRITE_UPDATE, SK_WRITE_DELETE } sk_write_op;

/*
 * A claim on a value that at most one live object may own at a time (table
 * sk_allocation): kind names the value space ("clusterip", "nodeport"), value
 * is its canonical text. The store knows nothing of what they mean.
 */
typedef struct sk_claim {
    const char *kind;  /* borrowed */
    const char *value; /* borrowed */
    /* Set by the writer (and only then) when the write failed with
     * SK_ERR_CONFLICT because another object owns this value. */
    int taken;
} sk_claim;

typedef struct sk_write {
    sk_write_op op;
    const char *resource; /* borrowed; must outlive the write */
    const char *ns;       /* borrowed; "" for cluster-scoped */
    const char *name;     /* borrowed */
    /*
     * CREATE: fails with SK_ERR_ALREADY_EXISTS if the key is live.
     * UPDATE/DELETE: fails with SK_ERR_NOT_FOUND if the key is not live;
     *   expected_rev > 0 must equal the current rev, else SK_ERR_CONFLICT.
     * DELETE: expected_uid (if non-NULL) must equal the current uid, else
     *   SK_ERR_CONFLICT.
     */
    int64_t expected_rev;
    const char *expected_uid;
    /*
     * CREATE/UPDATE: the new object (stolen by sk_store_write*), stored
     * with metadata.resourceVersion = the new revision (serialized on the
     * caller's thread, the revision spliced in by the writer);
     * metadata.uid is recorded in the uid column. DELETE: the tombstone
     * holds the last version re-stamped with the delete's revision; object
     * (stolen, may be NULL) is only its skeleton (kind, apiVersion) for a
     * stored version that does not parse, which is still deleted.
     */
    json_t *object;
    /* If non-NULL, the namespace object of this name must be live at commit
     * time, else SK_ERR_NOT_FOUND (no orphans, checked atomically). */
    const char *require_namespace;
    /* With require_namespace, optional: called on the writer's thread with
     * that namespace's stored object (borrowed) in the same transaction;
     * 0 fails the write with SK_ERR_FORBIDDEN (kube/lifecycle.h's
     * sk_lifecycle_namespace_open: no create lands in a namespace whose
     * deletion was committed first, whatever the request saw). */
    int (*namespace_open)(const char *ns, size_t len);
    /* Expiry, recorded in sk_ttl in the same transaction: > 0, the object
     * expires at this time (ms since the Unix epoch); < 0, it no longer
     * expires; 0, nothing to record. A delete always clears it. */
    int64_t expires_at_ms;
    /* UPDATE with expires_at_ms 0: an expiry recorded for the version
     * replaced moves to the new one, its time kept (a rewrite that leaves
     * the object as it was, such as re-encryption's, is no new lifetime). */
    int keep_expiry;
    /* CREATE/UPDATE: the serialized object may take at most this many bytes
     * (0: no limit), else SK_ERR_TOO_LARGE. Checked by the writer, which
     * serializes the object anyway. */
    size_t max_bytes;
    /*
     * Allocations. CREATE/UPDATE with set_claims: after the write the object
     * owns exactly claims[0..n_claims) (values it owned before and no longer
     * lists are released), in the same transaction. If another live object
     * owns one of them, nothing is written: the write fails with
     * SK_ERR_CONFLICT and that claim's taken is set. Without set_claims an
     * update leaves the object's allocations as they are. A DELETE releases
     * everything the object owns.
     * claims is borrowed, written by the writer, and must outlive the write.
     */
    int set_claims;
    sk_claim *claims;
    int n_claims;
} sk_write;

/*
 * Completion callback. Runs on the writer thread after the commit is
 * durable (or the intent failed). result is the written row (the tombstone
 * for deletes) when err == SK_OK, else NULL; borrowed for the call. Must not
 * block: hand the result over and return. A failed precondition is only
 * ever reported against state the write's own commit did not make;
 * SK_ERR_UNAVAILABLE means the database could not be reached, or that
 * whether the write committed cannot be known (store.c, "Ambiguous
 * commits").
 */
typedef void (*sk_write_done_fn)(void *arg, sk_err err, const sk_row *result);

/*
 * A value codec: how the value column keeps a version's JSON text
 * (encryption at rest, issue 47). The store applies seal to every row it
 * appends (versions and tombstones) and open to every row it reads from SQL
 * (get, list, history, expiry, the writer's own reads of current rows), so
 * callers, the commit hand-off and the watch cache only ever see plain
 * text. cmd wires it to src/enc: the store knows nothing of ciphers.
 *
 * seal: a new value of *out_len bytes (NUL-terminated) for text, or NULL
 * when resource's values are kept as they are. open: SK_OK with *out new
 * (NUL-terminated, *out_len bytes) and *stale set when other than the first
 * provider and key read it, or with *out NULL when the stored text is
 * already the object; on failure (SK_ERR_INTERNAL) *errmsg is new. Both
 * run on any thread at once.
 */
typedef struct sk_store_codec {
    void *ctx;
    char *(*seal)(void *ctx, const char *resource, const char *ns, const char *name,
                  const char *text, size_t len, size_t *out_len);
    sk_err (*open)(void *ctx, const char *resource, const char *ns, const char *name,
                   const char *stored, size_t len, char **out, size_t *out_len, int *stale,
                   char **errmsg);
} sk_store_codec;

/* Opens (and migrates) the store. url: "sqlite:PATH" or a libpq URI/conninfo
 * ("postgres://...", "postgresql://...", "host=... dbname=..."). On failure
 * *errmsg is a new string naming the problem (caller frees), and the error
 * says whether trying again may help: SK_ERR_UNAVAILABLE when a database
 * server could not be reached or refused the session (down, starting,
 * unknown host, a wrong password or a database not created yet: each may
 * change without sqlkube changing), anything else when it cannot (a URL
 * libpq cannot parse, an SQLite file that cannot be opened, a migration
 * the database refuses). */
sk_err sk_store_open(const char *url, sk_store **out, char **errmsg);
/*
 * Import of an etcd keyspace (`sqlkube import`), with its revisions as they
 * were: each row keeps its revision and sub-revision, the store's revision
 * becomes the source's, so that the next write takes rev + 1, and reads
 * below compact_rev are refused as the source refused them. compact_done
 * (<= compact_rev) is how far the source had removed superseded rows; the
 * store's compaction removes the rest.
 *
 * rows visits the version rows in strictly increasing (rev, sub) order,
 * each with 1 <= rev <= the import's rev, through emit (row borrowed for
 * the call; a tombstone has only its key); leases likewise each lease as
 * it is to be stored (id > 0, ttl and absolute expiry). Either returns the
 * first non-OK emit answer, or its own error; either may be NULL (none).
 */
typedef sk_err (*sk_import_row_fn)(void *emit_arg, const sk_kv_row *row);
typedef sk_err (*sk_import_lease_fn)(void *emit_arg, const sk_lease *l);
typedef struct sk_store_import {
    int64_t rev, compact_rev, compact_done;
    /* 0: into an empty store. Else the store must be at exactly this
     * revision (a follow-up of an import, `import --from-etcd` following
     * its source), rows come after it, leases are upserted, and the
     * compaction stays where it is (compact_rev and compact_done unused). */
    int64_t after_rev;
    void *arg;
    sk_err (*rows)(void *arg, sk_import_row_fn emit, void *emit_arg);
    sk_err (*leases)(void *arg, sk_import_lease_fn emit, void *emit_arg);
} sk_store_import;

/* Opens (and migrates) the store at url and imports imp in ONE
 * transaction, on a connection of its own: all of it commits or none. The
 * store must be empty: revision 0 and no lease (one that was ever served
 * has written objects of its own), or at imp->after_rev when that is set,
 * else SK_ERR_CONFLICT; a row out of
 * order is SK_ERR_INVALID. On failure *errmsg is new, and the store is as
 * it was. No sqlkube may serve the store meanwhile (one started on the
 * empty store would not see the import). */
sk_err sk_store_kv_import(const char *url, const sk_store_import *imp, char **errmsg);
/* Makes codec (borrowed: must outlive the store) the store's, before any
 * read or write; without one values are kept as they are. */
void sk_store_set_codec(sk_store *s, const sk_store_codec *codec);
/* Applies migrations and closes (for `sqlkube migrate`). */
sk_err sk_store_migrate_only(const char *url, char **errmsg);
/* Drains queued writes and stops the writer; later writes fail with
 * SK_ERR_UNAVAILABLE. Reads keep working. Idempotent. */
void sk_store_stop_writes(sk_store *s);
/* Stops writes (if not yet) and closes everything. NULL-safe. */
void sk_store_close(sk_store *s);
/* "sqlite" or "postgres". */
const char *sk_store_backend_name(const sk_store *s);
/* How many write batches failed and were replayed one write per
 * transaction (so that a bad write fails alone): a batch fails when one of
 * its writes makes the database refuse the whole transaction. */
int64_t sk_store_batch_replays(const sk_store *s);
/* How many write transactions the store's writer committed: group commits,
 * and the one-write transactions of a replay (compaction's are not
 * counted). */
int64_t sk_store_commits(const sk_store *s);
/* Round trips the writer's connections made to the database server, all
 * batches together (a pipelined flight is one): over sk_store_commits, what
 * a group commit costs in waits on the network. 0 on SQLite. */
int64_t sk_store_writer_round_trips(const sk_store *s);
/* Commits whose answer was lost (the connection broke with COMMIT in
 * flight), by what the writer then found out: that the batch committed,
 * that it did not (it was run again), or nothing (the database could not be
 * asked; its writes answered SK_ERR_UNAVAILABLE). */
typedef struct sk_store_resolved {
    int64_t committed, not_committed, unknown;
} sk_store_resolved;
sk_store_resolved sk_store_commits_resolved(const sk_store *s);

/* Queues a write; done runs exactly once. Steals w->object. */
void sk_store_write_async(sk_store *s, sk_write *w, sk_write_done_fn done, void *arg);
/* Blocking form; on SK_OK and out != NULL, *out is a copy of the written row. */
sk_err sk_store_write(sk_store *s, sk_write *w, sk_row *out);

/* Current revision and compact revision (0 before any compaction). */
sk_err sk_store_revisions(sk_store *s, int64_t *rev_out, int64_t *compact_rev_out);

/* The version of a key live at revision at_rev (0 = latest). SK_ERR_NOT_FOUND
 * if absent at that revision, SK_ERR_EXPIRED if at_rev < the compact rev. */
sk_err sk_store_get(sk_store *s, const char *resource, const char *ns, const char *name,
                    int64_t at_rev, sk_row *out);

/* Visits up to q->limit live objects at q->rev in key order. SK_ERR_EXPIRED
 * (no row visited) if q->rev is older than the compact revision. */
sk_err sk_store_list(sk_store *s, const sk_list_query *q, sk_row_fn fn, void *arg);
/* How many objects sk_store_list would visit for q with no limit
 * (q->limit unused), counted in SQL without reading a value
 * (remainingItemCount). Errors as sk_store_list's. */
sk_err sk_store_count(sk_store *s, const sk_list_query *q, int64_t *count_out);

/* Reads an etcd range (store/kv.h) at q->rev (0: current) into *out, its
 * memory in arena a; *rev_out is the current revision (etcd's header
 * revision). SK_ERR_EXPIRED if q->rev is below the compact revision,
 * SK_ERR_INVALID if above the current one (a future revision). */
sk_err sk_store_kv_range(sk_store *s, const sk_kv_range *q, sk_arena *a, sk_kv_range_result *out,
                         int64_t *rev_out);
/* sk_store_kv_range with each key-value handed to fn(arg, kv) as the
 * backend reads it (borrowed for the call; fn returns 0) instead of
 * copied: out->kvs stays NULL, out->n_kvs counts those handed. If it fails,
 * fn may have seen some key-values already: the caller drops what it made
 * of them. */
sk_err sk_store_kv_range_each(sk_store *s, const sk_kv_range *q, sk_arena *a, sk_kv_fn fn,
                              void *arg, sk_kv_range_result *out, int64_t *rev_out);
/* Applies an etcd transaction through the writer (blocking; see kvapply.h
 * for the order of compares, checks and writes). txn is borrowed for the
 * call; *out (arena a) on SK_OK, its rev the revision the transaction took
 * (or the current one if it wrote nothing). SK_ERR_BAD_REQUEST: a put with
 * ignore_value/ignore_lease names no live key; SK_ERR_NOT_FOUND: a put names
 * a lease that does not exist; SK_ERR_EXPIRED/INVALID: a
 * range revision compacted/in the future. Then nothing is written. */
sk_err sk_store_kv_txn(sk_store *s, const sk_kv_txn *txn, sk_arena *a, sk_kv_txn_result *out);
/* Completion of an etcd transaction queued without waiting: runs once on
 * the writer thread after the commit is durable (or the transaction
 * failed), like sk_write_done_fn, so it must not block. */
typedef void (*sk_kv_done_fn)(void *arg, sk_err err);
/* Queues txn as sk_store_kv_txn applies it, without waiting: txn, a and out
 * are borrowed until done runs, *out written (before done) only on SK_OK.
 * The writer uses arena a while the transaction runs, so the caller must not
 * touch a until done. */
void sk_store_kv_txn_async(sk_store *s, const sk_kv_txn *txn, sk_arena *a, sk_kv_txn_result *out,
                           sk_kv_done_fn done, void *arg);

/*
 * etcd leases (store/kv.h). sk_store_lease_write applies op through the
 * writer (blocking), in the same transactions as the keyspace's: a revoke or
 * expiry deletes the lease's keys at ONE revision, a put naming the lease is
 * checked against it in its own transaction, so no key outlives its lease.
 * Errors per sk_lease_op_kind; *out (arena a) on SK_OK. A lease's expiry is
 * stored as an absolute time: sk_store_leases lists those due by before_ms
 * (INT64_MAX: all, limit 0: no limit) for a collector to expire.
 */
sk_err sk_store_lease_write(sk_store *s, const sk_lease_op *op, sk_arena *a, sk_lease_result *out);
/* SK_ERR_NOT_FOUND if there is no lease id. */
sk_err sk_store_lease_get(sk_store *s, int64_t id, sk_lease *out);
sk_err sk_store_leases(sk_store *s, int64_t before_ms, int limit, sk_lease_fn fn, void *arg);
/* Visits the live keys attached to lease id, in key order, without values. */
sk_err sk_store_lease_keys(sk_store *s, int64_t id, sk_kv_fn fn, void *arg);

/* Visits history rows with rev > after_rev in revision order, at most limit
 * (the commit feed: what a watch cache replays); fewer than limit only when
 * no committed row at or below upto_rev (a revision the caller knows to be
 * committed; INT64_MAX: none) follows the last one. A revision of the etcd
 * keyspace is one row with resource "" and an empty value. SK_ERR_EXPIRED (no row
 * visited) if after_rev is older than the compact revision: the feed after it
 * may have lost rows. From the compact revision on it is complete. Revisions
 * this process committed are answered from memory when they continue
 * after_rev up to upto_rev (store.c, "the commit hand-off"): the same rows,
 * no SQL read. */
sk_err sk_store_history(sk_store *s, int64_t after_rev, int64_t upto_rev, int limit, sk_row_fn fn,
                        void *arg);

/* Visits the writes of the etcd keyspace with rev in (after_rev, upto_rev]
 * in revision order, each with the version it replaced (etcd's prev_kv),
 * read in one statement: the watch fan-out reads a span once for every
 * watcher. SK_ERR_EXPIRED (nothing visited) if after_rev + 1 is older than
 * the compact revision: as in etcd, changes may be read from the compact
 * revision itself (whose tombstones compaction has removed, as etcd's has). */
sk_err sk_store_kv_changes(sk_store *s, int64_t after_rev, int64_t upto_rev, sk_kv_change_fn fn,
                           void *arg);

/*
 * Visits, in (rev, sub) order, the version rows of the etcd keyspace that
 * etcd's HashKV reads at upto_rev when compact_rev is its compaction:
 * every row in (compact_rev, upto_rev], and of the rows at or below
 * compact_rev only those its kvindex keeps at upto_rev (each key's newest
 * row up to upto_rev, if live). One statement: one snapshot of the table.
 * Rows are fetched whole, values included (see docs: a hash of a large
 * keyspace holds it in memory on PostgreSQL).
 */
sk_err sk_store_kv_kept(sk_store *s, int64_t upto_rev, int64_t compact_rev, sk_kv_row_fn fn,
                        void *arg);

/*
 * The etcd keyspace decoded for SQL (table sk_kv_doc, what the views
 * sk_kv_history and sk_kv_latest show), filled off the commit path by a
 * follower (ctl/kvdecode.h), so a put pays nothing for it: the follower
 * reads the rows after the last one decoded (sk_store_kv_rows_after, up to
 * limit, in (rev, sub) order, however compacted), decodes them and writes
 * the docs in one transaction (sk_store_kv_docs_put: a row compacted away
 * meanwhile, or decoded already by another instance on the same database,
 * is skipped). Compaction removes a row's doc with the row.
 */
sk_err sk_store_kv_rows_after(sk_store *s, int64_t rev, int sub, int limit, sk_kv_row_fn fn,
                              void *arg);
sk_err sk_store_kv_docs_put(sk_store *s, const sk_kv_doc *docs, size_t n);
/* The newest decoded row's (rev, sub); (0, 0) if none. */
sk_err sk_store_kv_docs_last(sk_store *s, int64_t *rev_out, int *sub_out);

/*
 * Waits until the store's revision exceeds after_rev or timeout_ms passes,
 * then sets *rev_out to the current revision and *compact_rev_out to the
 * compact revision (one read of both). SQLite: this process's commits
 * wake the waiter at once. PostgreSQL: every process's commits do, through
 * LISTEN/NOTIFY on a connection of its own (one NOTIFY per committed batch).
 * Meant for one feed: concurrent callers take turns.
 */
sk_err sk_store_wait_commit(sk_store *s, int64_t after_rev, int timeout_ms, int64_t *rev_out,
                            int64_t *compact_rev_out);

/* Non-zero while the last write that ended found the database or its disk
 * full (SK_ERR_NO_SPACE); the next write that commits clears it. For
 * /readyz, which says so instead of "ok". Any thread. */
int sk_store_out_of_space(const sk_store *s);

/* Removes versions superseded at or before upto_rev and tombstones at or
 * before it (REST objects and the etcd keyspace alike), in short batches (each its own transaction, advancing the
 * compact revision with its deletions); the compact revision ends at upto_rev,
 * capped at the current revision. *removed_out counts deleted rows. Runs
 * whether or not this process holds the claim below. */
sk_err sk_store_compact(sk_store *s, int64_t upto_rev, int64_t *removed_out);

/*
 * Claims a compaction pass for this process ("host:pid"), for when several
 * processes share the database: one conditional UPDATE records the claim
 * only if the last recorded claim, by anyone, is at least interval_ms old by
 * the database's clock. Concurrent claimers within one interval: exactly one
 * gets *won_out = 1, the rest 0 and skip the pass. interval_ms 0 claims
 * unconditionally (a manual pass records itself so periodic ones skip).
 */
sk_err sk_store_compact_claim(sk_store *s, int64_t interval_ms, int *won_out);

/* Visits up to limit versions whose expiry is at or before now_ms, soonest
 * first (row->rev is the revision the expiry belongs to). */
sk_err sk_store_expired(sk_store *s, int64_t now_ms, int limit, sk_row_fn fn, void *arg);
/* Visits the value of every live claim of kind (in no particular order);
 * fn returns non-zero to stop. One consistent snapshot. */
typedef int (*sk_claim_fn)(void *arg, const char *value);
sk_err sk_store_claims(sk_store *s, const char *kind, sk_claim_fn fn, void *arg);
/* The database's size on disk in bytes (SQLite: the main file's pages;
 * PostgreSQL: pg_database_size), as etcd's Status reports its dbSize. */
sk_err sk_store_db_size(sk_store *s, int64_t *bytes_out);
/* Gives the space compactions freed back to the file system (SQLite) or to
 * the tables' free space maps (PostgreSQL), without holding writers up for
 * long: etcd's Defragment. Pages a live row holds stay where they are. */
sk_err sk_store_reclaim(sk_store *s);
/* How many of resource's history rows have a wrong superseded flag
 * (migration 0011: each key's newest row, and only it, has the flag clear;
 * the views for people rely on it, sqlkube's reads do not), at one
 * snapshot. Reads every history row of the resource: for periodic checks. */
sk_err sk_store_flags_wrong(sk_store *s, const char *resource, int64_t *count_out);
/* Visits every resource column the history holds rows of (live or not),
 * in order, once each; fn returns non-zero to stop. One index probe per
 * resource. */
typedef int (*sk_resource_fn)(void *arg, const char *resource);
sk_err sk_store_resources(sk_store *s, sk_resource_fn fn, void *arg);
/* The 32-byte secret (created at first migration) that signs continue tokens. */
sk_err sk_store_token_secret(sk_store *s, unsigned char out[32]);

#endif
