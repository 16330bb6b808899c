/*
 * postgres.c - the PostgreSQL backend (see backend.h for the contract).
 *
 * Owns one libpq session per sk_conn, the SQL of every query the store
 * runs against PostgreSQL, and the runner for migrations/postgres.
 *
 * Ordering. Writers serialise on the row lock of the single sk_revision row
 * (SELECT ... FOR UPDATE in begin_write), held until COMMIT. So, across any
 * number of processes, transactions that allocate revisions commit one after
 * another in revision order, and a reader that sees revision N sees every
 * revision below it: a transaction's row lock is released only after its
 * commit is visible. Writes run at READ COMMITTED, so every statement after
 * the lock sees everything committed before it, which is what the
 * precondition checks in store.c need.
 *
 * Plans. Statements are prepared lazily, once per session, under fixed names.
 * Prepared statements drift to generic plans (planned without parameter
 * values), and a list query whose good plan depended on the values was seen
 * to flip to a sequential scan plus sort, 0.5 s per page. So each query here
 * has a shape whose only reasonable plan is an index range scan bounded by its
 * LIMIT, with no OR over optional parameters: optional filters are separate
 * statements. The sessions also price sequential scans off (pg_connect),
 * so that a plan made while a table was nearly empty still probes the
 * index once the table has grown.
 *
 * Held rows. Each etcd write reads its key's current version, then appends
 * the new one: two round trips a key, one after the other. kv_append
 * therefore only copies its row into the connection, and the rows go to the
 * server just before the next statement that could see them: any
 * statement, except a kv_range or kv_count whose key interval holds none of
 * their keys (the next put's read of its own key), one that the known keys
 * answer (below), or one that reads neither sk_kv nor the object tables
 * (TTL and claims). An object version (append), a tombstone too, is held
 * the same way: a delete's TTL and claims statements do not wait for it,
 * and a cascade's deletes go as one statement. Held rows go as ONE
 * prepared statement per kind (kv_insert, append_held), whatever their
 * number: INSERT ... SELECT FROM unnest() of one array parameter per
 * column, in PostgreSQL's binary array format, so they are parsed and
 * planned once per session, not once per batch size as a multi-row VALUES
 * list was, and values need no escaping. A key's live version is its
 * newest sk_history row (unless a tombstone), so a write is that one row
 * and the superseded flag of the row it replaces, in the same statement:
 * no second index of live keys to keep (migration 0009 dropped sk_current,
 * 29-42% of the row-insert time: bench/README.md, "What sk_current costs a
 * write"; the flag is an unindexed column, bench/README.md "Views at
 * 100,000 objects").
 *
 * Flights. Every round trip costs both sides a send, a receive and a
 * wake-up, which on the benchmark VM cost more CPU than the statements
 * (bench/README.md). So the held rows travel with the statement that
 * needed them, in libpq's pipeline mode (flight): all sent, one Sync, then
 * the answers read. commit_write sends the held rows, the counter update
 * with its NOTIFY and the batch's identity (sk_writer, one statement), and
 * COMMIT as one flight: a batch of N etcd puts or N
 * REST creates costs two round trips whatever N: the begin flight (BEGIN,
 * the revision lock and the prefetch statements below, which kv_prefetch
 * and prefetch_current only queue: the lock is taken before they run, in
 * the same flight) and the commit flight. After a failed statement PostgreSQL skips
 * the rest of the flight, COMMIT included, and the transaction stays
 * failed, so the flight fails, the batch is rolled back and replayed one
 * write per transaction (store.c), where the error is its own write's
 * again. Because COMMIT does not wait for set_rev's answer, set_rev fails
 * (rather than returning no row) when the counter is not behind the batch.
 *
 * Known keys. That still left one read per write, and a round trip costs
 * more than the read: measured on the etcd face at 32 clients, the server
 * and PostgreSQL's backend spent most of their CPU per put in the
 * send/receive/wake-up of each read (bench/README.md, "PostgreSQL group
 * commit in constant round trips"). So the live version of every single
 * key the batch's transactions will read is read in ONE statement (unnest
 * of a bytea[] joined laterally to a backward probe of the (key, rev)
 * index: one row per key however long its history): kv_prefetch names the
 * keys before the batch begins, begin_write reads them right after the
 * revision lock, in its flight, and keeps them in a hash table on the
 * connection. Every
 * kv_append then records its row as its key's version (a tombstone as
 * absent), so a kv_range or kv_count at the newest revision over exactly
 * one known key is answered from memory as the database would answer it,
 * later writes of the batch included: this writer holds the revision lock,
 * every writer of sk_kv takes it, and compaction only removes versions that
 * are not any key's newest live one. Other reads (ranges, past revisions,
 * unknown keys) go to the database as before, after the held rows. Known
 * keys are cleared at commit and rollback. Objects (the REST face) are
 * known keys too: prefetch_current names a batch's objects and the
 * namespaces they need, whose current rows begin_write reads in one
 * statement of the same flight, append records
 * what it wrote, and get_current answers from them.
 *
 * Text travels in libpq's text format with client_encoding UTF8, except
 * the object JSON and the held rows' arrays, sent in binary format with
 * their lengths: the server stores exactly value_len bytes, and an embedded
 * NUL is rejected by the server (text's binary input validates the
 * encoding, element by element in an array) instead of silently
 * truncating the value.
 */
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "store/backend.h"
#include "store/kvrange.h"
#include "store/migrations.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pg_advisory_xact_lock key serialising migrations ("skmigrat" in ASCII). */
#define MIGRATE_LOCK_KEY "8316861436344295796"

/* Every row-returning query selects these columns in this order. */
#define ROW_COLS                                                                                   \
    "h.rev, h.create_rev, h.prev_rev, h.deleted, h.resource, h.namespace, h.name, h.uid, h.value"
enum {
    COL_REV,
    COL_CREATE_REV,
    COL_PREV_REV,
    COL_DELETED,
    COL_RESOURCE,
    COL_NS,
    COL_NAME,
    COL_UID,
    COL_VALUE
};

/*
 * The read gate (see backend.h): the statement's own snapshot has not been
 * compacted past revision P. It has no column of the scanned rows, so the
 * planner makes it a one-time filter (an InitPlan) above the unchanged scan.
 */
#define NOT_COMPACTED(P) "(SELECT compact_rev FROM sk_revision WHERE id = 1) <= " P

/*
 * A key's version is the one visible at snapshot $2 if no newer version of the
 * same key is also at or below $2. The outer index scan on
 * (resource, namespace, name, rev) already yields key order and the NOT
 * EXISTS probes that index right beside the outer row, so the LIMIT stops the
 * scan after one page whatever the table size. OFFSET 0 keeps the NOT EXISTS
 * a per-row subplan: as a join, generic plans for one namespace chose a merge
 * anti-join that sorts the whole namespace first (75 ms for a page of a
 * 150k-row namespace, growing with it). A version not superseded (migration
 * 0011) has no newer one at all: OR evaluates left to right and stops there,
 * so the probe runs only for versions a later write replaced (the sqlite.c
 * twin says what it saved). Parameters: $1 resource, $2 snapshot revision,
 * $3 page size, then the key range's.
 */
#define LIST_SQL(KEY_RANGE)                                                                        \
    "SELECT " ROW_COLS " FROM sk_history h WHERE h.resource = $1" KEY_RANGE                        \
    " AND h.rev <= $2 AND NOT h.deleted AND (NOT h.superseded OR NOT EXISTS (SELECT 1 FROM"        \
    " sk_history n WHERE n.resource = h.resource AND n.namespace = h.namespace"                    \
    " AND n.name = h.name AND n.rev > h.rev AND n.rev <= $2 OFFSET 0)) AND " NOT_COMPACTED(        \
        "$2") " ORDER BY h.namespace, h.name LIMIT $3"
#define COUNT_SQL(KEY_RANGE) "SELECT count(*) FROM (" LIST_SQL(KEY_RANGE) ") x"

/*
 * The etcd keyspace: the live version of each key from $1 (the caller's END
 * adds the upper bound) at revision $2, values left out when $3. As LIST_SQL:
 * the (key, rev) index yields key order, the NOT EXISTS probes beside it.
 * Keys and values travel as binary parameters (bytea), come back as text.
 */
#define KV_SQL(END)                                                                                \
    "SELECT k.key, k.create_rev, k.rev, k.version, k.lease, CASE WHEN $3 THEN ''::bytea"           \
    " ELSE k.value END FROM sk_kv k WHERE k.key >= $1" END " AND k.rev <= $2 AND NOT k.deleted"     \
    " AND NOT EXISTS (SELECT 1 FROM sk_kv n WHERE n.key = k.key AND n.rev > k.rev"                  \
    " AND n.rev <= $2 OFFSET 0) AND " NOT_COMPACTED("$2")

/* The newest row of key (R, N, M) if it is not a tombstone: a backward
 * probe of sk_history_key, however many versions the key has. OFFSET 0
 * keeps it a probe inside a LATERAL join. */
#define NEWEST_ROW(R, N, M)                                                                        \
    "(SELECT * FROM sk_history n WHERE n.resource = " R " AND n.namespace = " N " AND n.name = " M \
    " ORDER BY n.rev DESC LIMIT 1 OFFSET 0) h WHERE NOT h.deleted"

typedef enum {
    ST_GET_CURRENT,
    ST_SET_REV,
    ST_LAST_BATCH,
    ST_REVISIONS,
    ST_GET_AT,
    ST_LIST_ALL,
    ST_LIST_ALL_AFTER,
    ST_LIST_NS,
    ST_LIST_NS_AFTER,
    ST_COUNT_ALL,
    ST_COUNT_ALL_AFTER,
    ST_COUNT_NS,
    ST_COUNT_NS_AFTER,
    ST_HISTORY,
    ST_COMPACT,
    ST_CLAIM,
    ST_SET_EXPIRY,
    ST_CLEAR_EXPIRY,
    ST_MOVE_EXPIRY,
    ST_EXPIRED,
    ST_META_GET,
    ST_SET_COMPACTED,
    ST_CLAIM_TAKEN,
    ST_CLAIMS_RELEASE,
    ST_CLAIM_INSERT,
    ST_CLAIMS_LIST,
    ST_KV_RANGE,
    ST_KV_RANGE_FROM,
    ST_KV_COUNT,
    ST_KV_COUNT_FROM,
    ST_KV_COMPACT,
    ST_DB_SIZE,
    ST_FLAGS_WRONG,
    ST_RESOURCES,
    ST_KV_CHANGES,
    ST_KV_KEPT,
    ST_KV_ROWS_AFTER,
    ST_KV_DOCS_PUT,
    ST_KV_DOCS_LAST,
    ST_LEASE_GET,
    ST_LEASE_PUT,
    ST_LEASE_DELETE,
    ST_LEASES,
    ST_KV_LEASE_KEYS,
    ST_KV_PREFETCH,
    ST_PREFETCH_CURRENT,
    ST_KV_INSERT,
    ST_APPEND_HELD,
    ST_BEGIN,
    ST_LOCK,
    ST_COMMIT,
    ST__COUNT
} stmt_id;

/* Each statement is prepared under its name; the names also label log lines. */
static const struct {
    const char *name;
    const char *sql;
} stmts[ST__COUNT] = {
    [ST_GET_CURRENT] = {"get_current", "SELECT " ROW_COLS " FROM " NEWEST_ROW("$1", "$2", "$3")},
    /* Listeners learn of a commit from NOTIFY, delivered only at COMMIT. The
     * counter only moves forward: no row updated means something else moved
     * it, and the statement then fails (a zero divisor, as plain SQL cannot
     * raise), because COMMIT follows it in the same flight without waiting
     * for its answer. The batch's identity ($2 writer, $3 batch: sk_writer)
     * rides in the same statement, so marking a batch costs no statement. */
    [ST_SET_REV] = {"set_rev",
                    "WITH u AS (UPDATE sk_revision SET rev = $1 WHERE id = 1 AND rev <= $1"
                    " RETURNING rev),"
                    " b AS (INSERT INTO sk_writer (writer, batch) VALUES ($2, $3)"
                    " ON CONFLICT (writer) DO UPDATE SET batch = excluded.batch)"
                    " SELECT pg_notify('sqlkube_commit', $1::text)"
                    " WHERE 1 / (SELECT count(*) FROM u) = 1"},
    [ST_LAST_BATCH] = {"last_batch", "SELECT batch FROM sk_writer WHERE writer = $1"},
    [ST_REVISIONS] = {"revisions", "SELECT rev, compact_rev FROM sk_revision WHERE id = 1"},
    [ST_GET_AT] = {"get_at", "SELECT " ROW_COLS " FROM sk_history h WHERE h.resource = $1"
                             " AND h.namespace = $2 AND h.name = $3 AND h.rev <= $4"
                             " AND " NOT_COMPACTED("$4") " ORDER BY h.rev DESC LIMIT 1"},
    [ST_LIST_ALL] = {"list_all", LIST_SQL("")},
    [ST_LIST_ALL_AFTER] = {"list_all_after", LIST_SQL(" AND (h.namespace, h.name) > ($4, $5)")},
    [ST_LIST_NS] = {"list_ns", LIST_SQL(" AND h.namespace = $4")},
    [ST_LIST_NS_AFTER] = {"list_ns_after", LIST_SQL(" AND h.namespace = $4 AND h.name > $5")},
    /* The same rows counted: the list with no LIMIT ($3 NULL) under count(*),
     * so the predicate is the list's own; PostgreSQL drops the subquery's
     * unused outputs, so no value is read. */
    [ST_COUNT_ALL] = {"count_all", COUNT_SQL("")},
    [ST_COUNT_ALL_AFTER] = {"count_all_after", COUNT_SQL(" AND (h.namespace, h.name) > ($4, $5)")},
    [ST_COUNT_NS] = {"count_ns", COUNT_SQL(" AND h.namespace = $4")},
    [ST_COUNT_NS_AFTER] = {"count_ns_after", COUNT_SQL(" AND h.namespace = $4 AND h.name > $5")},
    /* Both tables in revision order; an etcd revision is its first row,
     * without an object. Each arm has its own LIMIT, so each stays an index
     * range scan that stops after one page: the generic plan of a bare
     * UNION ALL ... ORDER BY ... LIMIT sorts every row after $1. */
    [ST_HISTORY] = {"history", "(SELECT " ROW_COLS " FROM sk_history h WHERE h.rev > $1"
                               " AND " NOT_COMPACTED("$1") " ORDER BY h.rev LIMIT $2)"
                               " UNION ALL (SELECT k.rev, 0, 0, false, '', '', '', '', ''"
                               " FROM sk_kv k WHERE k.rev > $1 AND k.sub = 0"
                               " AND " NOT_COMPACTED("$1") " ORDER BY k.rev LIMIT $2)"
                               " ORDER BY 1 LIMIT $2"},
    /*
     * One compaction batch ($1 upto, $2 batch size), as one statement, so one
     * snapshot and one short implicit transaction.
     *
     * compact_rev doubles as the cursor: compaction up to C is complete when
     * every version superseded by a version at or below C and every tombstone
     * at or below C is gone. Each history row n in (compact_rev, upto] retires
     * its immediate predecessor (the superseded version, unless that is a
     * tombstone, which retires itself) and, if n is a tombstone, n itself. So
     * victims are produced in order of the revision s that retires them, by a
     * primary-key range scan starting where the last batch stopped: no batch
     * rescans what earlier ones kept.
     *
     * A batch takes whole s: the victims of every s up to S, the s of the
     * batch-th candidate (so batch + 1 rows at most, as an s retires at most
     * two). Cutting inside an s would be wrong twice over: dropping the
     * predecessor leaves it gone while reads at s - 1 still count as valid,
     * and dropping a tombstone before the version it hides would resurrect a
     * deleted object. Of batch + 2 candidates, any beyond S mean compaction
     * is complete up to the revision before the first of them and compact_rev
     * moves there, else it moves to upto (capped at the current revision:
     * compacting the future would skip rows not yet written). The revision
     * row is locked only by that final UPDATE, just before commit. The result
     * is (rows deleted, whether compaction reached its bound).
     */
    [ST_COMPACT] =
        {"compact",
         "WITH bound AS (SELECT compact_rev AS lo, LEAST(rev, $1::bigint) AS hi FROM sk_revision"
         " WHERE id = 1),"
         " cand AS (SELECT n.rev AS s, v.victim FROM sk_history n CROSS JOIN LATERAL ("
         " SELECT p.rev AS victim FROM (SELECT rev, deleted FROM sk_history p"
         " WHERE p.resource = n.resource AND p.namespace = n.namespace AND p.name = n.name"
         " AND p.rev < n.rev ORDER BY p.rev DESC LIMIT 1) p WHERE NOT p.deleted"
         " UNION ALL SELECT n.rev WHERE n.deleted) v"
         " WHERE n.rev > (SELECT lo FROM bound) AND n.rev <= (SELECT hi FROM bound)"
         " ORDER BY n.rev, v.victim LIMIT $2::bigint + 2),"
         " cut AS (SELECT s FROM cand ORDER BY s, victim OFFSET $2::bigint - 1 LIMIT 1),"
         " rest AS (SELECT min(s) AS s FROM cand WHERE s > (SELECT s FROM cut)),"
         " gone AS (DELETE FROM sk_history WHERE rev IN (SELECT victim FROM cand"
         " WHERE s <= COALESCE((SELECT s FROM cut), (SELECT hi FROM bound))) RETURNING rev),"
         " mark AS (UPDATE sk_revision SET compact_rev = GREATEST(compact_rev,"
         " COALESCE((SELECT s - 1 FROM rest), (SELECT hi FROM bound))) WHERE id = 1)"
         " SELECT (SELECT count(*) FROM gone), (SELECT s FROM rest) IS NULL"},
    /*
     * Claims a compaction pass ($1 interval in ms, 0: unconditionally; $2
     * claimant) by the server's clock, so instances on hosts with skewed
     * clocks still agree. At READ COMMITTED a claimer that finds the row
     * updated by a concurrent claim waits for it to commit and re-evaluates
     * the condition against the new value: a compare-and-set, one winner.
     */
    [ST_CLAIM] =
        {"claim",
         "WITH t AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now)"
         " UPDATE sk_revision SET compact_claimed_at = t.now, compact_claimed_by = $2"
         " FROM t WHERE id = 1 AND ($1::bigint = 0 OR compact_claimed_at <= t.now - $1::bigint)"},
    [ST_SET_EXPIRY] = {"set_expiry",
                       "INSERT INTO sk_ttl (resource, namespace, name, rev, expires_at_ms)"
                       " VALUES ($1, $2, $3, $4::bigint, $5::bigint)"
                       " ON CONFLICT (resource, namespace, name)"
                       " DO UPDATE SET rev = excluded.rev, expires_at_ms = excluded.expires_at_ms"},
    [ST_CLEAR_EXPIRY] = {"clear_expiry",
                         "DELETE FROM sk_ttl WHERE resource = $1 AND namespace = $2 AND name = $3"},
    [ST_MOVE_EXPIRY] = {"move_expiry",
                        "UPDATE sk_ttl SET rev = $5::bigint WHERE resource = $1 AND namespace = $2"
                        " AND name = $3 AND rev = $4::bigint"},
    [ST_EXPIRED] = {"expired", "SELECT " ROW_COLS " FROM sk_ttl t JOIN sk_history h"
                               " ON h.rev = t.rev WHERE t.expires_at_ms <= $1::bigint"
                               " ORDER BY t.expires_at_ms LIMIT $2::bigint"},
    [ST_META_GET] = {"meta_get", "SELECT value FROM sk_meta WHERE key = $1"},
    [ST_SET_COMPACTED] = {"set_compacted",
                          "UPDATE sk_revision SET compact_rev = $1, kv_compact_rev = $2 WHERE id = 1"},
    [ST_CLAIM_TAKEN] = {"claim_taken",
                        "SELECT 1 FROM sk_allocation WHERE kind = $1 AND value = $2 AND NOT"
                        " (resource = $3 AND namespace = $4 AND name = $5)"},
    [ST_CLAIMS_RELEASE] = {"claims_release", "DELETE FROM sk_allocation WHERE resource = $1"
                                             " AND namespace = $2 AND name = $3"},
    [ST_CLAIM_INSERT] = {"claim_insert",
                         "INSERT INTO sk_allocation (kind, value, resource, namespace, name)"
                         " VALUES ($1, $2, $3, $4, $5)"},
    [ST_CLAIMS_LIST] = {"claims_list", "SELECT value FROM sk_allocation WHERE kind = $1"},
    [ST_KV_RANGE] = {"kv_range", KV_SQL(" AND k.key < $5") " ORDER BY k.key LIMIT $4"},
    [ST_KV_RANGE_FROM] = {"kv_range_from", KV_SQL("") " ORDER BY k.key LIMIT $4"},
    [ST_KV_COUNT] = {"kv_count", "SELECT count(*) FROM (" KV_SQL(" AND k.key < $4") ") r"},
    [ST_KV_COUNT_FROM] = {"kv_count_from", "SELECT count(*) FROM (" KV_SQL("") ") r"},
    [ST_DB_SIZE] = {"db_size", "SELECT pg_database_size(current_database())"},
    /* A flag is right when it is set exactly if a newer row of the key
     * exists; OFFSET 0 keeps the EXISTS a probe per row (LIST_SQL). */
    [ST_FLAGS_WRONG] = {"flags_wrong",
                        "SELECT count(*) FROM sk_history h WHERE h.resource = $1 AND h.superseded"
                        " <> EXISTS (SELECT 1 FROM sk_history n WHERE n.resource = h.resource AND"
                        " n.namespace = h.namespace AND n.name = h.name AND n.rev > h.rev"
                        " OFFSET 0)"},
    /* The next resource after the last one, by the index, until none. */
    [ST_RESOURCES] = {"resources",
                      "WITH RECURSIVE r(resource) AS (SELECT min(resource) FROM sk_history"
                      " UNION ALL SELECT (SELECT min(h.resource) FROM sk_history h WHERE"
                      " h.resource > r.resource) FROM r WHERE r.resource IS NOT NULL)"
                      " SELECT resource FROM r WHERE resource IS NOT NULL"},
    /* The writes in ($1, $2] with the version each replaced (the newest
     * older version of its key unless a tombstone): one (key, rev) index
     * probe per row. */
    [ST_KV_CHANGES] = {"kv_changes",
                       "SELECT k.rev, k.sub, k.key, k.create_rev, k.version, k.lease, k.deleted,"
                       " k.value, p.rev, p.create_rev, p.version, p.lease, p.value FROM sk_kv k"
                       " LEFT JOIN LATERAL (SELECT * FROM sk_kv q WHERE q.key = k.key AND"
                       " q.rev < k.rev ORDER BY q.rev DESC LIMIT 1) p ON NOT p.deleted"
                       " WHERE k.rev > $1::bigint AND k.rev <= $2::bigint AND "
                       NOT_COMPACTED("$1::bigint + 1") " ORDER BY k.rev, k.sub"},
    /* Rows above the compaction $2, and at or below it each key's newest
     * live row up to $1: one (key, rev) index probe per old row. */
    [ST_KV_KEPT] = {"kv_kept",
                    "SELECT k.rev, k.sub, k.key, k.create_rev, k.version, k.lease, k.deleted,"
                    " k.value FROM sk_kv k WHERE k.rev <= $1::bigint AND (k.rev > $2::bigint OR"
                    " (NOT k.deleted AND NOT EXISTS (SELECT 1 FROM sk_kv n WHERE n.key = k.key"
                    " AND n.rev > k.rev AND n.rev <= $1::bigint))) ORDER BY k.rev, k.sub"},
    /* The same columns as kv_kept: rows after ($1, $2), the primary key's order. */
    [ST_KV_ROWS_AFTER] = {"kv_rows_after",
                          "SELECT k.rev, k.sub, k.key, k.create_rev, k.version, k.lease, k.deleted,"
                          " k.value FROM sk_kv k WHERE (k.rev, k.sub) > ($1::bigint, $2::int)"
                          " ORDER BY k.rev, k.sub LIMIT $3::int"},
    /* A batch of docs as arrays (array_literal), one statement. */
    [ST_KV_DOCS_PUT] = {"kv_docs_put",
                        "INSERT INTO sk_kv_doc (rev, sub, key_text, \"group\", resource, namespace,"
                        " name, encoding, kind, api_version, doc) SELECT v.* FROM unnest($1::bigint[],"
                        " $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],"
                        " $8::text[], $9::text[], $10::text[], $11::jsonb[]) AS v(rev, sub, key_text,"
                        " g, resource, namespace, name, encoding, kind, api_version, doc) WHERE"
                        " EXISTS (SELECT 1 FROM sk_kv k WHERE k.rev = v.rev AND k.sub = v.sub)"
                        " ON CONFLICT DO NOTHING"},
    [ST_KV_DOCS_LAST] = {"kv_docs_last",
                         "SELECT rev, sub FROM sk_kv_doc ORDER BY rev DESC, sub DESC LIMIT 1"},
    [ST_LEASE_GET] = {"lease_get", "SELECT id, ttl, expires_at_ms FROM sk_lease WHERE id = $1"},
    [ST_LEASE_PUT] = {"lease_put", "INSERT INTO sk_lease (id, ttl, expires_at_ms)"
                                   " VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET"
                                   " ttl = excluded.ttl, expires_at_ms = excluded.expires_at_ms"},
    [ST_LEASE_DELETE] = {"lease_delete", "DELETE FROM sk_lease WHERE id = $1"},
    [ST_LEASES] = {"leases", "SELECT id, ttl, expires_at_ms FROM sk_lease"
                             " WHERE expires_at_ms <= $1::bigint ORDER BY expires_at_ms"
                             " LIMIT $2::bigint"},
    /* The rows naming the lease (its partial index: the planner needs the
     * literal lease <> 0 to use it), kept if no newer row of the key exists:
     * a key re-put without the lease has one. */
    [ST_KV_LEASE_KEYS] = {"kv_lease_keys",
                          "SELECT k.key, k.create_rev, k.rev, k.version, k.lease FROM sk_kv k"
                          " WHERE k.lease = $1::bigint AND k.lease <> 0 AND NOT k.deleted"
                          " AND NOT EXISTS (SELECT 1 FROM sk_kv n WHERE n.key = k.key"
                          " AND n.rev > k.rev OFFSET 0) ORDER BY k.key"},
    /* The newest row of each key of $1 (bytea[]) if live: one backward
     * probe of the (key, rev) index per key, however many versions it has. */
    [ST_KV_PREFETCH] = {"kv_prefetch",
                        "SELECT k.key, k.create_rev, k.rev, k.version, k.lease, k.value"
                        " FROM unnest($1::bytea[]) u(key) CROSS JOIN LATERAL (SELECT * FROM sk_kv n"
                        " WHERE n.key = u.key ORDER BY n.rev DESC LIMIT 1) k WHERE NOT k.deleted"},
    /* The live row of each key of ($1, $2, $3) (text[] each, in step): one
     * backward probe of sk_history_key per key. LATERAL with OFFSET 0 leaves
     * the planner only those probes: as plain joins, the generic plan made
     * while the tables were small hashed a sequential scan, and kept doing
     * so in every batch as the table grew (seen on the REST create
     * benchmark, when an index of live keys was read whole in nearly every
     * batch). */
    [ST_PREFETCH_CURRENT] = {"prefetch_current",
                             "SELECT " ROW_COLS " FROM unnest($1::text[], $2::text[], $3::text[])"
                             " u(r, n, m) CROSS JOIN LATERAL " NEWEST_ROW("u.r", "u.n", "u.m")},
    /*
     * The held rows (see "Held rows" above): one array per column, in step,
     * so one statement (parsed and planned once) serves every batch size.
     * Each also keeps the superseded flags (schema/postgres.sql) in the same
     * statement: the CTE flags each key's newest row from before the
     * statement (its snapshot cannot see the rows being inserted), found by
     * one backward probe of the key index and updated by its tuple id, so no
     * plan but that one is possible; of the batch's own rows, all but each
     * key's last go in flagged. Rows sent in an earlier chunk or flight of
     * the same transaction are visible here, and flagged here.
     */
    [ST_KV_INSERT] =
        {"kv_insert",
         "WITH u AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bigint[],"
         " $5::bigint[], $6::bigint[], $7::boolean[], $8::bytea[])"
         " u(rev, sub, key, create_rev, version, lease, deleted, value)),"
         " s AS (UPDATE sk_kv SET superseded = true WHERE ctid = ANY (ARRAY("
         "SELECT p.ctid FROM (SELECT DISTINCT key FROM u) d CROSS JOIN LATERAL (SELECT ctid"
         " FROM sk_kv n WHERE n.key = d.key ORDER BY n.rev DESC LIMIT 1 OFFSET 0) p))"
         " AND NOT superseded)"
         " INSERT INTO sk_kv (rev, sub, key, create_rev, version, lease, deleted, value,"
         " superseded) SELECT *, row_number() OVER (PARTITION BY key"
         " ORDER BY rev DESC, sub DESC) > 1 FROM u"},
    /* The held object versions and tombstones ($1-$9, in step): one
     * statement per batch, one parse and plan per session, one round trip;
     * flags as kv_insert. */
    [ST_APPEND_HELD] =
        {"append_held",
         "WITH u AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[],"
         " $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::boolean[], $9::text[])"
         " u(rev, resource, namespace, name, uid, create_rev, prev_rev, deleted, value)),"
         " s AS (UPDATE sk_history SET superseded = true WHERE ctid = ANY (ARRAY("
         "SELECT p.ctid FROM (SELECT DISTINCT resource, namespace, name FROM u) d CROSS JOIN"
         " LATERAL (SELECT ctid FROM sk_history n WHERE n.resource = d.resource AND n.namespace"
         " = d.namespace AND n.name = d.name ORDER BY n.rev DESC LIMIT 1 OFFSET 0) p))"
         " AND NOT superseded)"
         " INSERT INTO sk_history (rev, resource, namespace, name, uid, create_rev, prev_rev,"
         " deleted, value, superseded) SELECT *, row_number() OVER (PARTITION BY resource,"
         " namespace, name ORDER BY rev DESC) > 1 FROM u"},
    /* Prepared too, and sent as one flight: begin_write parses nothing. */
    [ST_BEGIN] = {"begin", "BEGIN"},
    [ST_LOCK] = {"lock", "SELECT rev FROM sk_revision WHERE id = 1 FOR UPDATE"},
    [ST_COMMIT] = {"commit", "COMMIT"},
    /* What the rows n in (kv_compact_rev, hi] retire, hi being compact_rev or
     * $1 revisions further, whichever is lower: every older version of n's
     * key and n itself if it is a tombstone (older ones went in earlier
     * passes). One statement: one snapshot, one transaction. The result is
     * (rows deleted, whether kv_compact_rev caught up with compact_rev). */
    [ST_KV_COMPACT] =
        {"kv_compact",
         "WITH b AS (SELECT kv_compact_rev AS lo, LEAST(compact_rev, kv_compact_rev + $1::bigint)"
         " AS hi, compact_rev AS top FROM sk_revision WHERE id = 1),"
         " gone AS (DELETE FROM sk_kv WHERE (rev, sub) IN (SELECT p.rev, p.sub FROM b, sk_kv n"
         " JOIN sk_kv p ON p.key = n.key AND p.rev < n.rev WHERE n.rev > b.lo AND n.rev <= b.hi"
         " UNION ALL SELECT k.rev, k.sub FROM b, sk_kv k WHERE k.rev > b.lo AND k.rev <= b.hi"
         " AND k.deleted) RETURNING 1),"
         " m AS (UPDATE sk_revision SET kv_compact_rev = (SELECT hi FROM b)"
         " WHERE id = 1 AND kv_compact_rev < (SELECT hi FROM b))"
         " SELECT (SELECT count(*) FROM gone), (SELECT hi >= top FROM b)"},
};

/* The statements returning keys or values (bytea) ask for their answers in
 * binary format: in text format PostgreSQL hex-encodes each byte (two
 * characters) and libpq's PQunescapeBytea decodes them into a new copy,
 * which on etcd puts was a visible share of both processes' CPU (the
 * follower feeds read every value, and its previous version, back). The
 * column readers (int_at, bool_at, bytes_at) read either format. */
static const int binary_answers[ST__COUNT] = {
    [ST_KV_RANGE] = 1,      [ST_KV_RANGE_FROM] = 1, [ST_KV_CHANGES] = 1, [ST_KV_KEPT] = 1,
    [ST_KV_ROWS_AFTER] = 1, [ST_KV_LEASE_KEYS] = 1, [ST_KV_PREFETCH] = 1,
};

_Static_assert(ST__COUNT <= 64, "sk_conn.prepared has a bit per statement");

/* An etcd key-value version held back by kv_append (see "Held rows" above). */
typedef struct held_row {
    int64_t ints[5]; /* rev, sub, create_rev, version, lease */
    int deleted;
    size_t key_off, key_len, value_off, value_len; /* in sk_conn.held_bytes */
} held_row;

/* An object version held back by append (see "Held rows" above). */
typedef struct held_obj {
    int64_t rev, create_rev, prev_rev;
    int deleted;
    size_t resource_off, ns_off, name_off, uid_off, value_off, value_len; /* in held_bytes */
} held_obj;

/* A key's live version as the writer's transaction sees it (see "Known
 * keys" above): an etcd key's (kind 'k': n = create_rev, mod_rev, version,
 * lease) or an object's (kind 'r', key resource NUL namespace NUL name: n =
 * rev, create_rev, prev_rev; uid); live 0: none. */
typedef struct known_kv {
    char kind;
    int live;
    int64_t n[4];
    size_t key_off, key_len, value_off, value_len, uid_off; /* in sk_conn.known_bytes */
} known_kv;

struct sk_conn {
    PGconn *pg;
    uint64_t prepared; /* bit i set: stmts[i].sql is prepared in this session */
    int listening;     /* LISTEN sqlkube_commit issued (a notification connection) */
    held_row *held;    /* the writer's unsent kv_append rows */
    size_t n_held, cap_held;
    held_obj *objs; /* and its unsent append rows */
    size_t n_objs, cap_objs;
    sk_buf held_bytes; /* their keys, values and names */
    known_kv *known;   /* the writer's known keys, until commit or rollback */
    size_t n_known, cap_known;
    uint32_t *slots; /* hash of known: index + 1, 0 free; n_slots a power of 2 */
    size_t n_slots;
    sk_buf known_bytes;
    sk_buf probe;        /* an object's key being looked up */
    sk_buf asked_kv;     /* kv_prefetch's keys for begin_write: a bytea[] literal */
    sk_buf asked_row[3]; /* prefetch_current's resources, namespaces, names: text[] */
    uint64_t round_trips; /* since take_round_trips */
};

/* Length of s up to its first newline: libpq messages run on with hints. */
static int first_line_len(const char *s)
{
    return (int)strcspn(s, "\n");
}

/* The primary message of a failed result, else the connection's message. */
static const char *error_text(const sk_conn *c, const PGresult *res)
{
    const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    return msg ? msg : PQerrorMessage(c->pg);
}

/*
 * Maps a failure to sk_err: a lost connection, an overloaded or restarting
 * server and a rolled-back transaction (serialisation failure, deadlock) are
 * transient (store.c drops the connection and the client may retry), a
 * cancelled statement is a timeout, anything else is a bug or corruption.
 */
static sk_err classify(const sk_conn *c, const char *sqlstate)
{
    const char *s = sqlstate ? sqlstate : "";
    sk_err err = SK_ERR_INTERNAL;
    if (strcmp(s, "53100") == 0) /* disk_full */
        err = SK_ERR_NO_SPACE;
    else if (PQstatus(c->pg) == CONNECTION_BAD || strncmp(s, "08", 2) == 0 ||
             strncmp(s, "40", 2) == 0 || strncmp(s, "53", 2) == 0 || strncmp(s, "57P", 3) == 0)
        err = SK_ERR_UNAVAILABLE;
    else if (strcmp(s, "57014") == 0)
        err = SK_ERR_TIMEOUT;
    return err;
}

/* SK_OK if res (possibly NULL) succeeded; else logs what failed and classifies it. */
static sk_err check(const sk_conn *c, const PGresult *res, const char *what)
{
    ExecStatusType st = PQresultStatus(res);
    sk_err err = SK_OK;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        const char *msg = error_text(c, res);
        sk_log_warn("postgres: %s failed (%s): %.*s", what, sqlstate ? sqlstate : "no SQLSTATE",
                    first_line_len(msg), msg);
        err = classify(c, sqlstate);
    }
    return err;
}

/* Prepares statement id in this session unless it already is. */
static sk_err prepare(sk_conn *c, stmt_id id)
{
    sk_err err = SK_OK;
    if (!(c->prepared & ((uint64_t)1 << id))) {
        PGresult *res = PQprepare(c->pg, stmts[id].name, stmts[id].sql, 0, NULL);
        c->round_trips++;
        if ((err = check(c, res, stmts[id].name)) == SK_OK)
            c->prepared |= (uint64_t)1 << id;
        PQclear(res);
    }
    return err;
}

/* Runs statement id (prepared on first use in this session) without sending
 * the held rows first; on success *out is the result, which the caller
 * PQclears. formats NULL: all text. */
static sk_err run_unheld(sk_conn *c, stmt_id id, int nparams, const char *const *values,
                         const int *lengths, const int *formats, PGresult **out)
{
    PGresult *res = NULL;
    sk_err err = prepare(c, id);
    if (err != SK_OK)
        goto out;
    res = PQexecPrepared(c->pg, stmts[id].name, nparams, values, lengths, formats,
                         binary_answers[id]);
    c->round_trips++;
    if ((err = check(c, res, stmts[id].name)) != SK_OK)
        goto out;
    *out = res;
    res = NULL;
out:
    PQclear(res);
    return err;
}

/* Runs statement id as run_unheld does, but hands each row to fn(arg, res)
 * as it arrives (libpq's single-row mode: res holds that row alone, row 0,
 * valid for the call) instead of holding the whole result: a Range of
 * megabytes is then packed while PostgreSQL still sends it, and never held
 * twice. fn's nonzero stops the handing (the rest is read and dropped). A
 * failure after some rows (a lost connection) is still the call's error:
 * what fn made of the rows is the caller's to drop. */
static sk_err run_rows(sk_conn *c, stmt_id id, int nparams, const char *const *values,
                       const int *lengths, const int *formats,
                       int (*fn)(void *arg, const PGresult *row), void *arg)
{
    sk_err err = prepare(c, id);
    if (err != SK_OK)
        goto out;
    c->round_trips++;
    if (!PQsendQueryPrepared(c->pg, stmts[id].name, nparams, values, lengths, formats,
                             binary_answers[id])) {
        err = check(c, NULL, stmts[id].name);
        goto out;
    }
    SK_CHECK(PQsetSingleRowMode(c->pg)); /* right after the send, it cannot refuse */
    int stopped = 0;
    PGresult *res;
    while ((res = PQgetResult(c->pg))) {
        if (PQresultStatus(res) == PGRES_SINGLE_TUPLE) {
            if (!stopped && err == SK_OK)
                stopped = fn(arg, res);
        } else if (err == SK_OK) {
            err = check(c, res, stmts[id].name); /* the end (no rows), or the failure */
        }
        PQclear(res);
    }
out:
    return err;
}

static void format_i64(char out[24], int64_t v)
{
    snprintf(out, 24, "%" PRId64, v);
}

/*
 * Arrays travel in PostgreSQL's binary array format (what array_recv
 * reads): dimensions 1, no NULLs, the element type's OID, the length and
 * lower bound 1, then each element as a 4-byte length and its bytes, all
 * integers big-endian. Binary, the values need no escaping and no parsing.
 */
enum { OID_BOOL = 16, OID_BYTEA = 17, OID_INT8 = 20, OID_TEXT = 25 };

static void put_u32(sk_buf *b, uint32_t v)
{
    const unsigned char x[4] = {v >> 24, v >> 16, v >> 8, v};
    sk_buf_append(b, x, sizeof x);
}

/* Starts b as an array of n elements of type oid. */
static void array_start(sk_buf *b, uint32_t oid, size_t n)
{
    sk_buf_reset(b);
    put_u32(b, 1);
    put_u32(b, 0);
    put_u32(b, oid);
    put_u32(b, (uint32_t)n);
    put_u32(b, 1);
}

static void array_bytes(sk_buf *b, const void *bytes, size_t len)
{
    put_u32(b, (uint32_t)len);
    sk_buf_append(b, bytes, len);
}

static void array_str(sk_buf *b, const char *s)
{
    array_bytes(b, s, strlen(s));
}

static void array_bool(sk_buf *b, int v)
{
    const unsigned char x = v != 0;
    array_bytes(b, &x, 1);
}

static void array_i64(sk_buf *b, int64_t v)
{
    put_u32(b, 8);
    put_u32(b, (uint32_t)((uint64_t)v >> 32));
    put_u32(b, (uint32_t)v);
}

/* Appends bytes (NULL if len is 0) and a NUL to held_bytes; returns their offset. */
static size_t held_put(sk_conn *c, const void *bytes, size_t len)
{
    size_t off = c->held_bytes.len;
    sk_buf_append(&c->held_bytes, len ? bytes : "", len);
    sk_buf_putc(&c->held_bytes, 0);
    return off;
}

/* Parameters of kv_insert and of append_held: one array per column. */
#define HELD_COLS 8
#define OBJ_COLS 9
#define MAX_ARRAY_COLS (HELD_COLS > OBJ_COLS ? HELD_COLS : OBJ_COLS)
/* Bytes of keys and values per INSERT: each array stays far below the
 * 1 GB PostgreSQL allows a value and a message. */
#define HELD_CHUNK_BYTES ((size_t)64 << 20)

/* Queues statement id with the n binary arrays cols as its parameters, in
 * pipeline mode. Returns libpq's 1 or 0. */
static int send_arrays(sk_conn *c, stmt_id id, const sk_buf *cols, int n)
{
    SK_CHECK(n <= MAX_ARRAY_COLS);
    const char *values[MAX_ARRAY_COLS];
    int lengths[MAX_ARRAY_COLS], formats[MAX_ARRAY_COLS];
    for (int k = 0; k < n; k++) {
        values[k] = cols[k].data;
        lengths[k] = (int)cols[k].len;
        formats[k] = 1;
    }
    return PQsendQueryPrepared(c->pg, stmts[id].name, n, values, lengths, formats, 0);
}

/* Queues (PQsendQueryPrepared, in pipeline mode) the INSERT of the held rows
 * from *next on, as many as one chunk takes (at least one); moves *next
 * past them. cols are the caller's scratch buffers. Returns libpq's 1 or 0. */
static int queue_held(sk_conn *c, size_t *next, sk_buf cols[HELD_COLS])
{
    size_t from = *next, to = from, bytes = 0;
    while (to < c->n_held && (to == from || bytes < HELD_CHUNK_BYTES)) {
        bytes += c->held[to].key_len + c->held[to].value_len;
        to++;
    }
    static const uint32_t oids[HELD_COLS] = {OID_INT8, OID_INT8, OID_BYTEA, OID_INT8,
                                             OID_INT8, OID_INT8, OID_BOOL,  OID_BYTEA};
    for (int k = 0; k < HELD_COLS; k++)
        array_start(&cols[k], oids[k], to - from);
    for (size_t i = from; i < to; i++) {
        const held_row *h = &c->held[i];
        array_i64(&cols[0], h->ints[0]);
        array_i64(&cols[1], h->ints[1]);
        array_bytes(&cols[2], c->held_bytes.data + h->key_off, h->key_len);
        array_i64(&cols[3], h->ints[2]);
        array_i64(&cols[4], h->ints[3]);
        array_i64(&cols[5], h->ints[4]);
        array_bool(&cols[6], h->deleted);
        array_bytes(&cols[7], c->held_bytes.data + h->value_off, h->value_len);
    }
    *next = to;
    return send_arrays(c, ST_KV_INSERT, cols, HELD_COLS);
}

/* As queue_held, for the held object versions (append_held). */
static int queue_objs(sk_conn *c, size_t *next, sk_buf cols[OBJ_COLS])
{
    size_t from = *next, to = from, bytes = 0;
    while (to < c->n_objs && (to == from || bytes < HELD_CHUNK_BYTES))
        bytes += c->objs[to++].value_len;
    static const uint32_t oids[OBJ_COLS] = {OID_INT8, OID_TEXT, OID_TEXT, OID_TEXT, OID_TEXT,
                                            OID_INT8, OID_INT8, OID_BOOL, OID_TEXT};
    for (int k = 0; k < OBJ_COLS; k++)
        array_start(&cols[k], oids[k], to - from);
    const char *b = c->held_bytes.data;
    for (size_t i = from; i < to; i++) {
        const held_obj *o = &c->objs[i];
        array_i64(&cols[0], o->rev);
        array_str(&cols[1], b + o->resource_off);
        array_str(&cols[2], b + o->ns_off);
        array_str(&cols[3], b + o->name_off);
        array_str(&cols[4], b + o->uid_off);
        array_i64(&cols[5], o->create_rev);
        array_i64(&cols[6], o->prev_rev);
        array_bool(&cols[7], o->deleted);
        array_bytes(&cols[8], b + o->value_off, o->value_len);
    }
    *next = to;
    return send_arrays(c, ST_APPEND_HELD, cols, OBJ_COLS);
}

/* Drops the prefetch statements' queued keys (sent or abandoned). */
static void forget_asked(sk_conn *c)
{
    sk_buf_reset(&c->asked_kv);
    for (int a = 0; a < 3; a++)
        sk_buf_reset(&c->asked_row[a]);
}

/* Drops the held rows (sent or abandoned). */
static void forget_held(sk_conn *c)
{
    c->n_held = c->n_objs = 0;
    sk_buf_reset(&c->held_bytes);
}

/* A prepared statement and its parameters, for flight. */
typedef struct stmt_call {
    stmt_id id;
    int nparams;
    const char *const *values;
    const int *lengths, *formats; /* NULL: all text */
} stmt_call;

/*
 * Sends the held rows' INSERTs and then calls[0..n) as one flight: libpq's
 * pipeline mode queues them all, one Sync ends them, and only then are the
 * answers read, so the batch pays one round trip (and one wake-up of each
 * side) for all of them. After a failed statement PostgreSQL skips the rest
 * up to the Sync (PGRES_PIPELINE_ABORTED; inside BEGIN the transaction is
 * then failed, as after any error), so the first failure is the flight's
 * error. On success outs[i] is calls[i]'s result (the caller PQclears).
 * The held rows are forgotten either way.
 */
static sk_err flight(sk_conn *c, const stmt_call *calls, int n, PGresult **outs)
{
    sk_err err = c->n_held ? prepare(c, ST_KV_INSERT) : SK_OK;
    if (err == SK_OK && c->n_objs)
        err = prepare(c, ST_APPEND_HELD);
    for (int i = 0; i < n && err == SK_OK; i++)
        err = prepare(c, calls[i].id);
    if (err != SK_OK)
        goto forget;
    if (!PQenterPipelineMode(c->pg)) {
        err = check(c, NULL, "pipeline");
        goto forget;
    }
    sk_buf cols[MAX_ARRAY_COLS];
    for (int k = 0; k < MAX_ARRAY_COLS; k++)
        cols[k] = (sk_buf)SK_BUF_INIT;
    int sent = 0, n_kv = 0, n_inserts = 0, ok = 1;
    for (size_t next = 0; ok && next < c->n_held; n_kv++, n_inserts++, sent++)
        ok = queue_held(c, &next, cols);
    for (size_t next = 0; ok && next < c->n_objs; n_inserts++, sent++)
        ok = queue_objs(c, &next, cols);
    for (int i = 0; ok && i < n; i++, sent++)
        ok = PQsendQueryPrepared(c->pg, stmts[calls[i].id].name, calls[i].nparams, calls[i].values,
                                 calls[i].lengths, calls[i].formats, binary_answers[calls[i].id]);
    for (int k = 0; k < MAX_ARRAY_COLS; k++)
        sk_buf_free(&cols[k]);
    c->round_trips++;
    if (!ok || !PQpipelineSync(c->pg)) {
        /* Only a lost connection fails a send: no answers will come, and
         * the writer replaces the connection when the replay fails too. */
        err = check(c, NULL, "pipeline");
        goto forget;
    }
    int got = 0;
    for (; got < sent; got++) {
        PGresult *res = PQgetResult(c->pg);
        if (!res) /* the connection broke */
            break;
        int call = got - n_inserts; /* < 0: an INSERT of held rows */
        if (err == SK_OK && PQresultStatus(res) != PGRES_PIPELINE_ABORTED)
            err = check(c, res,
                        call >= 0    ? stmts[calls[call].id].name
                        : got < n_kv ? "kv_append"
                                     : "append");
        if (call >= 0)
            outs[call] = res;
        else
            PQclear(res);
        PQclear(PQgetResult(c->pg)); /* the NULL that ends each statement's answers */
    }
    PGresult *sync = got == sent ? PQgetResult(c->pg) : NULL;
    int synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC && PQexitPipelineMode(c->pg);
    PQclear(sync);
    if (!synced && err == SK_OK)
        err = check(c, NULL, "pipeline");
    if (err != SK_OK)
        for (int i = 0; i < got - n_inserts; i++) {
            PQclear(outs[i]);
            outs[i] = NULL;
        }
forget:
    forget_held(c);
    return err;
}

/* run_unheld after the held rows, which the statement may read: in one
 * flight with them. */
static sk_err run(sk_conn *c, stmt_id id, int nparams, const char *const *values,
                  const int *lengths, const int *formats, PGresult **out)
{
    const stmt_call call = {id, nparams, values, lengths, formats};
    return c->n_held || c->n_objs ? flight(c, &call, 1, out)
                                  : run_unheld(c, id, nparams, values, lengths, formats, out);
}

/* Whether a held row's key lies in [lo, hi) (hi NULL: no upper bound). */
static int held_in(const sk_conn *c, const unsigned char *lo, size_t lo_len,
                   const unsigned char *hi, size_t hi_len)
{
    for (size_t i = 0; i < c->n_held; i++) {
        const unsigned char *k = (const unsigned char *)c->held_bytes.data + c->held[i].key_off;
        size_t klen = c->held[i].key_len;
        if (sk_kv_bytes_cmp(k, klen, lo, lo_len) >= 0 &&
            (!hi || sk_kv_bytes_cmp(k, klen, hi, hi_len) < 0))
            return 1;
    }
    return 0;
}

/* ---- known keys ---------------------------------------------------------- */

static uint64_t key_hash(const unsigned char *key, size_t len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ key[i]) * 1099511628211ULL;
    return h;
}

/* The slot holding (kind, key), or the free slot where it would go. */
static uint32_t *known_slot(sk_conn *c, char kind, const unsigned char *key, size_t len)
{
    size_t mask = c->n_slots - 1;
    for (size_t i = (key_hash(key, len) ^ (unsigned char)kind) & mask;; i = (i + 1) & mask) {
        uint32_t *slot = &c->slots[i];
        const known_kv *k = *slot ? &c->known[*slot - 1] : NULL;
        if (!k || (k->kind == kind && k->key_len == len &&
                   (len == 0 || memcmp(c->known_bytes.data + k->key_off, key, len) == 0)))
            return slot;
    }
}

static known_kv *known_find(sk_conn *c, char kind, const unsigned char *key, size_t len)
{
    uint32_t *slot = c->n_slots ? known_slot(c, kind, key, len) : NULL;
    return slot && *slot ? &c->known[*slot - 1] : NULL;
}

/* Appends bytes and a NUL (so offsets never point into a NULL buffer). */
static size_t known_put(sk_conn *c, const void *bytes, size_t len)
{
    size_t off = c->known_bytes.len;
    sk_buf_append(&c->known_bytes, len ? bytes : "", len);
    sk_buf_putc(&c->known_bytes, 0);
    return off;
}

/* The entry of (kind, key), made (not live) if new. */
static known_kv *known_entry(sk_conn *c, char kind, const unsigned char *key, size_t len)
{
    known_kv *k = known_find(c, kind, key, len);
    if (k)
        return k;
    if (2 * (c->n_known + 1) > c->n_slots) { /* grow and rehash: load at most 1/2 */
        c->n_slots = c->n_slots ? 2 * c->n_slots : 256;
        free(c->slots);
        c->slots = calloc(c->n_slots, sizeof *c->slots);
        SK_CHECK_ALLOC(c->slots);
        for (size_t i = 0; i < c->n_known; i++)
            *known_slot(c, c->known[i].kind,
                        (const unsigned char *)c->known_bytes.data + c->known[i].key_off,
                        c->known[i].key_len) = (uint32_t)(i + 1);
    }
    if (c->n_known == c->cap_known) {
        c->cap_known = c->cap_known ? 2 * c->cap_known : 64;
        c->known = realloc(c->known, c->cap_known * sizeof *c->known);
        SK_CHECK_ALLOC(c->known);
    }
    k = &c->known[c->n_known++];
    *k = (known_kv){.kind = kind, .key_len = len};
    k->key_off = known_put(c, key, len);
    *known_slot(c, kind, key, len) = (uint32_t)c->n_known;
    return k;
}

/* Records kv (NULL: none live) as etcd key's version. */
static void known_set(sk_conn *c, const unsigned char *key, size_t len, const sk_kv *kv)
{
    known_kv *k = known_entry(c, 'k', key, len);
    k->live = kv != NULL;
    if (kv) {
        k->n[0] = kv->create_rev;
        k->n[1] = kv->mod_rev;
        k->n[2] = kv->version;
        k->n[3] = kv->lease;
        k->value_off = known_put(c, kv->value, kv->value_len);
        k->value_len = kv->value_len;
    }
}

/* An object's key as a known key: resource NUL namespace NUL name (in b). */
static void row_key(sk_buf *b, const char *resource, const char *ns, const char *name)
{
    sk_buf_reset(b);
    sk_buf_append(b, resource, strlen(resource) + 1);
    sk_buf_append(b, ns, strlen(ns) + 1);
    sk_buf_puts(b, name);
}

/* Records row (NULL or a tombstone: none live) as its key's current
 * version. */
static void known_set_row(sk_conn *c, const char *resource, const char *ns, const char *name,
                          const sk_row *row)
{
    row_key(&c->probe, resource, ns, name);
    known_kv *k = known_entry(c, 'r', (const unsigned char *)c->probe.data, c->probe.len);
    k->live = row && !row->deleted;
    if (k->live) {
        k->n[0] = row->rev;
        k->n[1] = row->create_rev;
        k->n[2] = row->prev_rev;
        k->value_off = known_put(c, row->value, row->value_len);
        k->value_len = row->value_len;
        k->uid_off = known_put(c, row->uid, strlen(row->uid));
    }
}

static void known_clear(sk_conn *c)
{
    c->n_known = 0;
    if (c->n_slots)
        memset(c->slots, 0, c->n_slots * sizeof *c->slots);
    sk_buf_reset(&c->known_bytes);
}

/* The known key that [lo, hi) at rev names exactly, if any: a read that
 * memory can answer (see "Known keys" above). */
static const known_kv *known_range(sk_conn *c, const unsigned char *lo, size_t lo_len,
                                   const unsigned char *hi, size_t hi_len, int64_t rev)
{
    int single = rev == INT64_MAX && hi && hi_len == lo_len + 1 && hi[lo_len] == 0 &&
                 (lo_len == 0 || memcmp(lo, hi, lo_len) == 0);
    return single && c->n_known ? known_find(c, 'k', lo, lo_len) : NULL;
}

/* Points *row at row i of res: fields are borrowed and live until PQclear. */
static sk_err row_view(const PGresult *res, int i, sk_row *row)
{
    sk_row r = {0};
    r.rev = sk_parse_i64(PQgetvalue(res, i, COL_REV));
    r.create_rev = sk_parse_i64(PQgetvalue(res, i, COL_CREATE_REV));
    r.prev_rev = sk_parse_i64(PQgetvalue(res, i, COL_PREV_REV));
    sk_err err = r.rev < 0 || r.create_rev < 0 || r.prev_rev < 0 ? SK_ERR_INTERNAL : SK_OK;
    r.deleted = PQgetvalue(res, i, COL_DELETED)[0] == 't';
    r.resource = PQgetvalue(res, i, COL_RESOURCE);
    r.ns = PQgetvalue(res, i, COL_NS);
    r.name = PQgetvalue(res, i, COL_NAME);
    r.uid = PQgetvalue(res, i, COL_UID);
    r.value = PQgetvalue(res, i, COL_VALUE);
    r.value_len = (size_t)PQgetlength(res, i, COL_VALUE);
    if (err == SK_OK)
        *row = r;
    return err;
}

/* Runs a row query and hands each row to fn until fn asks to stop. */
static sk_err visit_rows(sk_conn *c, stmt_id id, int nparams, const char *const *values,
                         sk_row_fn fn, void *arg)
{
    PGresult *res = NULL;
    sk_err err = run(c, id, nparams, values, NULL, NULL, &res);
    for (int i = 0; err == SK_OK && i < PQntuples(res); i++) {
        sk_row row;
        if ((err = row_view(res, i, &row)) == SK_OK && fn(arg, &row))
            break;
    }
    PQclear(res);
    return err;
}

/* Runs a query for at most one row and copies it to *out. */
static sk_err get_row(sk_conn *c, stmt_id id, int nparams, const char *const *values, sk_row *out)
{
    PGresult *res = NULL;
    sk_row row;
    sk_err err = run(c, id, nparams, values, NULL, NULL, &res);
    if (err != SK_OK)
        goto out;
    if (PQntuples(res) == 0) {
        err = SK_ERR_NOT_FOUND;
        goto out;
    }
    if ((err = row_view(res, 0, &row)) != SK_OK)
        goto out;
    sk_row_copy(out, &row);
out:
    PQclear(res);
    return err;
}

/* Server notices (e.g. "relation already exists, skipping") are routine. */
static void log_notice(void *arg, const char *message)
{
    sk_log_debug("postgres: %.*s", first_line_len(message), message);
}

/* "cannot connect to PostgreSQL at host:port: reason", the reason being
 * libpq's first line without its own "connection to server ... failed: "
 * preamble, which would repeat the address. */
static char *connect_error(PGconn *pg)
{
    static const char preamble[] = "connection to server ";
    const char *msg = PQerrorMessage(pg);
    const char *rest = strstr(msg, " failed: ");
    if (strncmp(msg, preamble, sizeof preamble - 1) == 0 && rest)
        msg = rest + strlen(" failed: ");
    if (strncmp(msg, "FATAL:  ", 8) == 0)
        msg += 8;
    const char *host = PQhost(pg), *port = PQport(pg);
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, "cannot connect to PostgreSQL at %s:%s: %.*s", host ? host : "?",
                  port ? port : "?", first_line_len(msg), msg);
    return sk_buf_steal(&b, NULL);
}

static sk_err pg_connect(const char *url, sk_conn **out, char **errmsg)
{
    /*
     * libpq applies these in order and the URL expands in place of dbname:
     * the application name and connect timeout are defaults a URL may
     * override; the encoding comes last because values are UTF-8 JSON.
     */
    static const char *const keys[] = {"application_name", "connect_timeout", "dbname",
                                       "client_encoding", NULL};
    const char *const values[] = {"sqlkube", "10", url, "UTF8", NULL};
    sk_err err = SK_OK;
    PGconn *pg = NULL;
    /* A URL libpq cannot parse stays so: said apart from a server that
     * does not answer (yet), which is worth waiting for (store.h). libpq
     * expands dbname as a URI or a conninfo string when it is one (a URI
     * prefix, or an '='), else takes it as a bare database name. */
    if (strchr(url, '=') || strncmp(url, "postgres://", 11) == 0 ||
        strncmp(url, "postgresql://", 13) == 0) {
        char *bad = NULL;
        PQconninfoOption *parsed = PQconninfoParse(url, &bad);
        if (!parsed) {
            const char *why = bad ? bad : "out of memory";
            sk_buf b = SK_BUF_INIT;
            sk_buf_printf(&b, "invalid PostgreSQL URL: %.*s", first_line_len(why), why);
            *errmsg = sk_buf_steal(&b, NULL);
            PQfreemem(bad);
            err = SK_ERR_BAD_REQUEST;
            goto out;
        }
        PQconninfoFree(parsed);
    }
    pg = PQconnectdbParams(keys, values, 1);
    SK_CHECK_ALLOC(pg);
    if (PQstatus(pg) != CONNECTION_OK) {
        *errmsg = connect_error(pg);
        err = SK_ERR_UNAVAILABLE;
        goto out;
    }
    PQsetNoticeProcessor(pg, log_notice, NULL);
    /* JIT compilation is priced for analytics: a namespace lookup whose row
     * estimate crossed jit_above_cost spent 140 ms compiling a 1 ms query.
     * Sequential scans are priced off (see "Plans" above): every statement
     * here has an index path, and a scan is cheaper only while a table is
     * tiny, which is exactly when a generic plan gets cached for the
     * session. Autovacuum's ANALYZE of a nearly empty table of live keys
     * (sk_current, before migration 0009), seconds before a burst of
     * creates, left prefetch_current scanning it once per key of every
     * batch for the rest of the session: 1,600 creates a second instead of
     * 9,500 (bench/README.md, "A plan made while the tables were empty"). */
    PGresult *res = PQexec(pg, "SET jit = off; SET enable_seqscan = off");
    ExecStatusType st = PQresultStatus(res);
    PQclear(res);
    if (st != PGRES_COMMAND_OK) {
        *errmsg = connect_error(pg);
        err = SK_ERR_UNAVAILABLE;
        goto out;
    }
    sk_conn *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->pg = pg;
    pg = NULL;
    *out = c;
out:
    PQfinish(pg);
    return err;
}

/* An idle session has nothing to read: anything there (the FATAL of a
 * terminated backend, the end of the stream) means it is gone, or not worth
 * keeping. */
static int pg_idle_ok(sk_conn *c)
{
    struct pollfd p = {.fd = PQsocket(c->pg), .events = POLLIN};
    return p.fd >= 0 && PQstatus(c->pg) == CONNECTION_OK && poll(&p, 1, 0) == 0;
}

static void pg_disconnect(sk_conn *c)
{
    if (c) {
        PQfinish(c->pg);
        free(c->held);
        free(c->objs);
        sk_buf_free(&c->held_bytes);
        free(c->known);
        free(c->slots);
        sk_buf_free(&c->known_bytes);
        sk_buf_free(&c->probe);
        sk_buf_free(&c->asked_kv);
        for (int a = 0; a < 3; a++)
            sk_buf_free(&c->asked_row[a]);
    }
    free(c);
}

/* One migration step: runs sql (with text params if n > 0). On success the
 * result goes to *out, or is dropped if out is NULL; on failure why gets
 * "<doing>: <server message>". */
static sk_err migrate_step(sk_conn *c, const char *doing, const char *sql, int n,
                           const char *const *values, sk_buf *why, PGresult **out)
{
    PGresult *res =
        n > 0 ? PQexecParams(c->pg, sql, n, NULL, values, NULL, NULL, 0) : PQexec(c->pg, sql);
    sk_err err = check(c, res, doing);
    if (err != SK_OK) {
        const char *msg = error_text(c, res);
        sk_buf_printf(why, "%s: %.*s", doing, first_line_len(msg), msg);
    } else if (out) {
        *out = res;
        res = NULL;
    }
    PQclear(res);
    return err;
}

/*
 * The advisory lock makes concurrent migrators take turns: the second one
 * finds the steps recorded and has nothing to do. The whole run is one
 * transaction (PostgreSQL DDL is transactional), so a failed step leaves the
 * schema as it was.
 */
static sk_err pg_migrate(sk_conn *c, char **errmsg)
{
    sk_buf why = SK_BUF_INIT;
    PGresult *res = NULL;
    sk_err err = migrate_step(c, "locking the schema",
                              "BEGIN; SELECT pg_advisory_xact_lock(" MIGRATE_LOCK_KEY ");"
                              " CREATE TABLE IF NOT EXISTS sk_migrations (version integer PRIMARY"
                              " KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT"
                              " now()); SELECT coalesce(max(version), 0) FROM sk_migrations",
                              0, NULL, &why, &res);
    if (err != SK_OK)
        goto out;
    int64_t applied = sk_parse_i64(PQgetvalue(res, 0, 0));
    int known = 0;
    for (const sk_migration *m = sk_migrations_postgres; m->sql; m++)
        known = m->version;
    if (applied < 0 || applied > known) {
        sk_buf_printf(&why, "the database schema is at version %s, newer than this sqlkube (%d)",
                      PQgetvalue(res, 0, 0), known);
        err = SK_ERR_INTERNAL;
        goto out;
    }
    for (const sk_migration *m = sk_migrations_postgres; m->sql; m++) {
        if (m->version <= applied)
            continue;
        char version[24];
        format_i64(version, m->version);
        const char *const record[] = {version, m->name};
        if ((err = migrate_step(c, m->name, m->sql, 0, NULL, &why, NULL)) != SK_OK ||
            (err = migrate_step(c, m->name,
                                "INSERT INTO sk_migrations (version, name) VALUES ($1, $2)", 2,
                                record, &why, NULL)) != SK_OK)
            goto out;
    }
    unsigned char secret[32];
    char hex[2 * sizeof secret + 1];
    sk_random_bytes(secret, sizeof secret);
    for (size_t i = 0; i < sizeof secret; i++)
        snprintf(hex + 2 * i, 3, "%02x", secret[i]);
    const char *const seed[] = {hex};
    if ((err = migrate_step(c, "seeding the token secret",
                            "INSERT INTO sk_meta (key, value) VALUES ('token_secret', $1)"
                            " ON CONFLICT (key) DO NOTHING",
                            1, seed, &why, NULL)) != SK_OK)
        goto out;
    err = migrate_step(c, "committing", "COMMIT", 0, NULL, &why, NULL);
out:
    PQclear(res);
    if (err != SK_OK) {
        PQclear(PQexec(c->pg, "ROLLBACK"));
        *errmsg = sk_buf_steal(&why, NULL);
    }
    sk_buf_free(&why);
    return err;
}

/* An integer column (int8, int4) of row i, in either format. */
static int64_t int_at(const PGresult *res, int i, int col)
{
    const unsigned char *v = (const unsigned char *)PQgetvalue(res, i, col);
    if (!PQfformat(res, col))
        return sk_parse_i64((const char *)v);
    int len = PQgetlength(res, i, col);
    SK_CHECK(len == 8 || len == 4);
    uint64_t u = 0;
    for (int k = 0; k < len; k++)
        u = u << 8 | v[k];
    return len == 8 ? (int64_t)u : (int64_t)(int32_t)(uint32_t)u;
}

/* A boolean column of row i, in either format. */
static int bool_at(const PGresult *res, int i, int col)
{
    const char *v = PQgetvalue(res, i, col);
    return PQfformat(res, col) ? v[0] != 0 : v[0] == 't';
}

/* A bytea column of row i of a binary answer: borrowed from res. */
static const unsigned char *bytes_at(const PGresult *res, int i, int col, size_t *len)
{
    SK_CHECK(PQfformat(res, col) == 1);
    *len = (size_t)PQgetlength(res, i, col);
    return (const unsigned char *)PQgetvalue(res, i, col);
}

/* Row i of a key-value query whose columns are key, create_rev, mod_rev,
 * version, lease[, value]: key and value borrowed from res. */
static sk_kv kv_row(const PGresult *res, int i, int with_value)
{
    sk_kv kv = {.create_rev = int_at(res, i, 1),
                .mod_rev = int_at(res, i, 2),
                .version = int_at(res, i, 3),
                .lease = int_at(res, i, 4)};
    kv.key = bytes_at(res, i, 0, &kv.key_len);
    if (with_value)
        kv.value = bytes_at(res, i, 5, &kv.value_len);
    return kv;
}

/* Closes a queued array literal (NULL if nothing was queued). */
static const char *asked_array(sk_buf *b)
{
    if (!b->len)
        return NULL;
    sk_buf_putc(b, '}');
    return b->data;
}

/* BEGIN, the revision lock and the queued prefetch statements, as one
 * flight; the answers of the prefetch become known keys. */
static sk_err pg_begin_write(sk_conn *c, int64_t *rev_out)
{
    /* commit_write and rollback leave nothing held; known keys so far are
     * the prefetches' absent entries, which the answers fill in */
    SK_CHECK(c->n_held == 0 && c->n_objs == 0);
    const char *kv_keys[] = {asked_array(&c->asked_kv)};
    const char *rows[3];
    for (int a = 0; a < 3; a++)
        rows[a] = asked_array(&c->asked_row[a]);
    stmt_call calls[4] = {{ST_BEGIN, 0, NULL, NULL, NULL}, {ST_LOCK, 0, NULL, NULL, NULL}};
    int n = 2, kv_at = -1, rows_at = -1;
    if (kv_keys[0]) {
        kv_at = n;
        calls[n++] = (stmt_call){ST_KV_PREFETCH, 1, kv_keys, NULL, NULL};
    }
    if (rows[0]) {
        rows_at = n;
        calls[n++] = (stmt_call){ST_PREFETCH_CURRENT, 3, rows, NULL, NULL};
    }
    PGresult *res[4] = {NULL, NULL, NULL, NULL};
    sk_err err = flight(c, calls, n, res);
    forget_asked(c);
    int64_t rev =
        err == SK_OK && PQntuples(res[1]) == 1 ? sk_parse_i64(PQgetvalue(res[1], 0, 0)) : -1;
    if (err == SK_OK && rev < 0)
        err = SK_ERR_INTERNAL;
    for (int i = 0; err == SK_OK && kv_at >= 0 && i < PQntuples(res[kv_at]); i++) {
        sk_kv kv = kv_row(res[kv_at], i, 1);
        known_set(c, kv.key, kv.key_len, &kv);
    }
    for (int i = 0; err == SK_OK && rows_at >= 0 && i < PQntuples(res[rows_at]); i++) {
        sk_row row;
        if ((err = row_view(res[rows_at], i, &row)) == SK_OK)
            known_set_row(c, row.resource, row.ns, row.name, &row);
    }
    if (err == SK_OK)
        *rev_out = rev;
    for (int i = 0; i < n; i++)
        PQclear(res[i]);
    return err;
}

static sk_err pg_get_current(sk_conn *c, const char *resource, const char *ns, const char *name,
                             sk_row *out)
{
    const char *const values[] = {resource, ns, name};
    const known_kv *k = NULL;
    if (c->n_known) {
        row_key(&c->probe, resource, ns, name);
        k = known_find(c, 'r', (const unsigned char *)c->probe.data, c->probe.len);
    }
    if (!k)
        return get_row(c, ST_GET_CURRENT, 3, values, out);
    if (!k->live)
        return SK_ERR_NOT_FOUND;
    sk_row row = {.rev = k->n[0],
                  .create_rev = k->n[1],
                  .prev_rev = k->n[2],
                  .resource = (char *)resource,
                  .ns = (char *)ns,
                  .name = (char *)name,
                  .uid = c->known_bytes.data + k->uid_off,
                  .value = c->known_bytes.data + k->value_off,
                  .value_len = k->value_len};
    sk_row_copy(out, &row);
    return SK_OK;
}

/* Appends s to a PostgreSQL array literal as one quoted element. */
static void array_text(sk_buf *b, const char *s)
{
    sk_buf_putc(b, b->len ? ',' : '{');
    sk_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sk_buf_putc(b, '\\');
        sk_buf_putc(b, *s);
    }
    sk_buf_putc(b, '"');
}

/* Queues the keys for begin_write's flight (see backend.h). */
static sk_err pg_prefetch_current(sk_conn *c, const char *const *resources, const char *const *nss,
                                  const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        row_key(&c->probe, resources[i], nss[i], names[i]);
        if (known_find(c, 'r', (const unsigned char *)c->probe.data, c->probe.len))
            continue;
        /* absent unless answered */
        known_set_row(c, resources[i], nss[i], names[i], NULL);
        array_text(&c->asked_row[0], resources[i]);
        array_text(&c->asked_row[1], nss[i]);
        array_text(&c->asked_row[2], names[i]);
    }
    return SK_OK;
}

static sk_err pg_append(sk_conn *c, const sk_row *row)
{
    SK_CHECK(row->value_len <= INT32_MAX); /* libpq lengths are int */
    if (c->n_objs == c->cap_objs) {
        c->cap_objs = c->cap_objs ? 2 * c->cap_objs : 64;
        c->objs = realloc(c->objs, c->cap_objs * sizeof *c->objs);
        SK_CHECK_ALLOC(c->objs);
    }
    known_set_row(c, row->resource, row->ns, row->name, row);
    held_obj *o = &c->objs[c->n_objs++];
    *o = (held_obj){.rev = row->rev,
                    .create_rev = row->create_rev,
                    .prev_rev = row->prev_rev,
                    .deleted = row->deleted,
                    .value_len = row->value_len};
    o->resource_off = held_put(c, row->resource, strlen(row->resource));
    o->ns_off = held_put(c, row->ns, strlen(row->ns));
    o->name_off = held_put(c, row->name, strlen(row->name));
    o->uid_off = held_put(c, row->uid, strlen(row->uid));
    o->value_off = held_put(c, row->value, row->value_len);
    return SK_OK;
}

/* The held rows, the counter, the batch's mark and NOTIFY, and COMMIT: one
 * flight. */
static sk_err pg_commit_write(sk_conn *c, int64_t rev, int64_t writer, int64_t batch)
{
    char text[3][24];
    format_i64(text[0], rev);
    format_i64(text[1], writer);
    format_i64(text[2], batch);
    const char *const values[] = {text[0], text[1], text[2]};
    const stmt_call calls[] = {{ST_SET_REV, 3, values, NULL, NULL},
                               {ST_COMMIT, 0, NULL, NULL, NULL}};
    PGresult *res[2] = {NULL, NULL};
    sk_err err = flight(c, calls, 2, res);
    known_clear(c);
    /* set_rev fails unless it moved the counter; COMMIT of a transaction
     * that had failed "succeeds" as a rollback. */
    if (err == SK_OK && (PQntuples(res[0]) != 1 || strcmp(PQcmdStatus(res[1]), "COMMIT") != 0))
        err = SK_ERR_INTERNAL;
    PQclear(res[0]);
    PQclear(res[1]);
    return err;
}

static void pg_rollback(sk_conn *c)
{
    forget_held(c);
    forget_asked(c);
    known_clear(c);
    PQclear(PQexec(c->pg, "ROLLBACK"));
    c->round_trips++;
}

static sk_err pg_last_batch(sk_conn *c, int64_t writer, int64_t *batch_out)
{
    char text[24];
    format_i64(text, writer);
    const char *const values[] = {text};
    PGresult *res = NULL;
    sk_err err = run(c, ST_LAST_BATCH, 1, values, NULL, NULL, &res);
    int64_t batch = err == SK_OK && PQntuples(res) == 1 ? sk_parse_i64(PQgetvalue(res, 0, 0)) : 0;
    if (err == SK_OK && batch < 0)
        err = SK_ERR_INTERNAL;
    if (err == SK_OK)
        *batch_out = batch;
    PQclear(res);
    return err;
}

static sk_err pg_revisions(sk_conn *c, int64_t *rev_out, int64_t *compact_rev_out)
{
    PGresult *res = NULL;
    sk_err err = run(c, ST_REVISIONS, 0, NULL, NULL, NULL, &res);
    if (err != SK_OK)
        goto out;
    if (PQntuples(res) != 1) {
        err = SK_ERR_INTERNAL;
        goto out;
    }
    int64_t rev = sk_parse_i64(PQgetvalue(res, 0, 0));
    int64_t compact_rev = sk_parse_i64(PQgetvalue(res, 0, 1));
    if (rev < 0 || compact_rev < 0) {
        err = SK_ERR_INTERNAL;
        goto out;
    }
    *rev_out = rev;
    *compact_rev_out = compact_rev;
out:
    PQclear(res);
    return err;
}

static sk_err pg_get_at(sk_conn *c, const char *resource, const char *ns, const char *name,
                        int64_t at_rev, sk_row *out)
{
    char at[24];
    format_i64(at, at_rev > 0 ? at_rev : INT64_MAX);
    const char *const values[] = {resource, ns, name, at};
    return get_row(c, ST_GET_AT, 4, values, out);
}

/* A list's statement (count: its count's) and parameters for q: 0, or -1
 * when the start key lies beyond q's namespace (no rows). values has 5
 * slots, [1] and [2] the caller's (revision, limit). */
static int list_stmt(const sk_list_query *q, int count, const char **values, stmt_id *id,
                     int *nparams)
{
    values[0] = q->resource;
    if (!q->ns) {
        *id = count ? (q->after_ns ? ST_COUNT_ALL_AFTER : ST_COUNT_ALL)
                    : (q->after_ns ? ST_LIST_ALL_AFTER : ST_LIST_ALL);
        *nparams = q->after_ns ? 5 : 3;
        values[3] = q->after_ns;
        values[4] = q->after_name;
        return 0;
    }
    /* The start key precedes the namespace (list all of it), falls in it
     * (list the rest) or lies beyond it (nothing): byte order, as
     * COLLATE "C" compares. */
    int where = q->after_ns ? strcmp(q->after_ns, q->ns) : -1;
    if (where > 0)
        return -1;
    *id = count ? (where == 0 ? ST_COUNT_NS_AFTER : ST_COUNT_NS)
                : (where == 0 ? ST_LIST_NS_AFTER : ST_LIST_NS);
    *nparams = where == 0 ? 5 : 4;
    values[3] = q->ns;
    values[4] = q->after_name;
    return 0;
}

static sk_err pg_list(sk_conn *c, const sk_list_query *q, sk_row_fn fn, void *arg)
{
    char rev[24], limit[24];
    format_i64(rev, q->rev);
    format_i64(limit, q->limit);
    const char *values[5] = {NULL, rev, limit, NULL, NULL};
    stmt_id id;
    int nparams;
    if (list_stmt(q, 0, values, &id, &nparams) != 0)
        return SK_OK;
    return visit_rows(c, id, nparams, values, fn, arg);
}

static sk_err pg_count(sk_conn *c, const sk_list_query *q, int64_t *out)
{
    char rev[24];
    format_i64(rev, q->rev);
    const char *values[5] = {NULL, rev, NULL /* LIMIT NULL: every row */, NULL, NULL};
    stmt_id id;
    int nparams;
    int64_t n = 0;
    PGresult *res = NULL;
    sk_err err = SK_OK;
    if (list_stmt(q, 1, values, &id, &nparams) == 0 &&
        (err = run(c, id, nparams, values, NULL, NULL, &res)) == SK_OK) {
        if (PQntuples(res) == 1)
            n = sk_parse_i64(PQgetvalue(res, 0, 0));
        else
            err = SK_ERR_INTERNAL;
    }
    PQclear(res);
    if (err == SK_OK)
        *out = n;
    return err;
}

static sk_err pg_history(sk_conn *c, int64_t after_rev, int limit, sk_row_fn fn, void *arg)
{
    char after[24], n[24];
    format_i64(after, after_rev);
    format_i64(n, limit);
    const char *const values[] = {after, n};
    return visit_rows(c, ST_HISTORY, 2, values, fn, arg);
}

static sk_err pg_compact_batch(sk_conn *c, int64_t upto_rev, int batch, int64_t *removed_out,
                               int *done_out)
{
    char upto[24], size[24];
    format_i64(upto, upto_rev);
    format_i64(size, batch);
    const char *const values[] = {upto, size};
    PGresult *res = NULL;
    sk_err err = run(c, ST_COMPACT, 2, values, NULL, NULL, &res);
    if (err != SK_OK)
        goto out;
    int64_t removed = sk_parse_i64(PQgetvalue(res, 0, 0));
    if (removed < 0) {
        err = SK_ERR_INTERNAL;
        goto out;
    }
    *removed_out = removed;
    *done_out = PQgetvalue(res, 0, 1)[0] == 't';
out:
    PQclear(res);
    return err;
}

static sk_err pg_compact_claim(sk_conn *c, int64_t interval_ms, const char *claimant, int *won_out)
{
    char interval[24];
    format_i64(interval, interval_ms);
    const char *const values[] = {interval, claimant};
    PGresult *res = NULL;
    sk_err err = run(c, ST_CLAIM, 2, values, NULL, NULL, &res);
    if (err == SK_OK)
        *won_out = strcmp(PQcmdTuples(res), "1") == 0;
    PQclear(res);
    return err;
}

static sk_err pg_set_expiry(sk_conn *c, const char *resource, const char *ns, const char *name,
                            int64_t rev, int64_t expires_at_ms)
{
    char rev_text[24], at_text[24];
    format_i64(rev_text, rev);
    format_i64(at_text, expires_at_ms);
    const char *const values[] = {resource, ns, name, rev_text, at_text};
    PGresult *res = NULL;
    sk_err err = run_unheld(c, expires_at_ms > 0 ? ST_SET_EXPIRY : ST_CLEAR_EXPIRY,
                            expires_at_ms > 0 ? 5 : 3, values, NULL, NULL, &res);
    PQclear(res);
    return err;
}

static sk_err pg_move_expiry(sk_conn *c, const char *resource, const char *ns, const char *name,
                             int64_t from_rev, int64_t to_rev)
{
    char from_text[24], to_text[24];
    format_i64(from_text, from_rev);
    format_i64(to_text, to_rev);
    const char *const values[] = {resource, ns, name, from_text, to_text};
    PGresult *res = NULL;
    sk_err err = run_unheld(c, ST_MOVE_EXPIRY, 5, values, NULL, NULL, &res);
    PQclear(res);
    return err;
}

static sk_err pg_expired(sk_conn *c, int64_t now_ms, int limit, sk_row_fn fn, void *arg)
{
    char now_text[24], limit_text[24];
    format_i64(now_text, now_ms);
    format_i64(limit_text, limit);
    const char *const values[] = {now_text, limit_text};
    return visit_rows(c, ST_EXPIRED, 2, values, fn, arg);
}

static sk_err pg_wait_notify(sk_conn *c, int timeout_ms, int64_t *notified_rev_out)
{
    sk_err err = SK_OK;
    PGnotify *n;
    if (!c->listening) {
        PGresult *res = PQexec(c->pg, "LISTEN sqlkube_commit");
        err = check(c, res, "listen");
        PQclear(res);
        if (err != SK_OK)
            return err;
        c->listening = 1;
        *notified_rev_out = -1;
        return SK_OK;
    }
    struct pollfd p = {.fd = PQsocket(c->pg), .events = POLLIN};
    if (p.fd < 0)
        return SK_ERR_UNAVAILABLE;
    if (poll(&p, 1, timeout_ms) < 0 && errno != EINTR)
        return SK_ERR_UNAVAILABLE;
    if (!PQconsumeInput(c->pg)) {
        sk_log_warn("postgres: notification connection: %.*s",
                    first_line_len(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
        return SK_ERR_UNAVAILABLE;
    }
    int64_t top = 0;
    while ((n = PQnotifies(c->pg)) != NULL) {
        /* set_rev's payload; anything else (a NOTIFY sent by hand) makes
         * the caller read the counter */
        int64_t rev = sk_parse_i64(n->extra);
        if (rev <= 0)
            top = -1;
        else if (top >= 0 && rev > top)
            top = rev;
        PQfreemem(n);
    }
    *notified_rev_out = top;
    return SK_OK;
}

static sk_err pg_meta_get(sk_conn *c, const char *key, char **value_out)
{
    const char *const values[] = {key};
    PGresult *res = NULL;
    sk_err err = run(c, ST_META_GET, 1, values, NULL, NULL, &res);
    if (err != SK_OK)
        goto out;
    if (PQntuples(res) == 0) {
        err = SK_ERR_NOT_FOUND;
        goto out;
    }
    char *value = strdup(PQgetvalue(res, 0, 0));
    SK_CHECK_ALLOC(value);
    *value_out = value;
out:
    PQclear(res);
    return err;
}

static sk_err pg_kv_flush(sk_conn *c)
{
    sk_err err = c->n_held || c->n_objs ? flight(c, NULL, 0, NULL) : SK_OK;
    known_clear(c);
    return err;
}

static sk_err pg_set_compacted(sk_conn *c, int64_t compact_rev, int64_t kv_compact_rev)
{
    char text[2][24];
    format_i64(text[0], compact_rev);
    format_i64(text[1], kv_compact_rev);
    const char *const values[] = {text[0], text[1]};
    PGresult *res = NULL;
    sk_err err = run_unheld(c, ST_SET_COMPACTED, 2, values, NULL, NULL, &res);
    PQclear(res);
    return err;
}

static sk_err pg_claim_taken(sk_conn *c, const char *kind, const char *value, const char *resource,
                             const char *ns, const char *name, int *taken_out)
{
    const char *const values[] = {kind, value, resource, ns, name};
    PGresult *res = NULL;
    sk_err err = run_unheld(c, ST_CLAIM_TAKEN, 5, values, NULL, NULL, &res);
    if (err == SK_OK)
        *taken_out = PQntuples(res) > 0;
    PQclear(res);
    return err;
}

static sk_err pg_claims_release(sk_conn *c, const char *resource, const char *ns, const char *name)
{
    const char *const values[] = {resource, ns, name};
    PGresult *res = NULL;
    sk_err err = run_unheld(c, ST_CLAIMS_RELEASE, 3, values, NULL, NULL, &res);
    PQclear(res);
    return err;
}

static sk_err pg_claim_insert(sk_conn *c, const char *kind, const char *value, const char *resource,
                              const char *ns, const char *name)
{
    const char *const values[] = {kind, value, resource, ns, name};
    PGresult *res = NULL;
    sk_err err = run_unheld(c, ST_CLAIM_INSERT, 5, values, NULL, NULL, &res);
    PQclear(res);
    return err;
}

static sk_err pg_claims_list(sk_conn *c, const char *kind, int (*fn)(void *arg, const char *value),
                             void *arg)
{
    const char *const values[] = {kind};
    PGresult *res = NULL;
    sk_err err = run(c, ST_CLAIMS_LIST, 1, values, NULL, NULL, &res);
    for (int i = 0; err == SK_OK && i < PQntuples(res); i++)
        if (fn(arg, PQgetvalue(res, i, 0)))
            break;
    PQclear(res);
    return err;
}

static sk_err pg_resources(sk_conn *c, int (*fn)(void *arg, const char *resource), void *arg)
{
    PGresult *res = NULL;
    sk_err err = run(c, ST_RESOURCES, 0, NULL, NULL, NULL, &res);
    for (int i = 0; err == SK_OK && i < PQntuples(res); i++)
        if (fn(arg, PQgetvalue(res, i, 0)))
            break;
    PQclear(res);
    return err;
}

/* run_rows's rows as key-values for an sk_kv_fn. */
typedef struct kv_sink {
    sk_kv_fn fn;
    void *arg;
} kv_sink;

static int kv_sink_row(void *arg, const PGresult *row)
{
    const kv_sink *k = arg;
    sk_kv kv = kv_row(row, 0, 1);
    return k->fn(k->arg, &kv);
}

static sk_err pg_kv_range(sk_conn *c, const unsigned char *lo, size_t lo_len,
                          const unsigned char *hi, size_t hi_len, int64_t rev, int64_t limit,
                          int keys_only, sk_kv_fn fn, void *arg)
{
    SK_CHECK(lo_len <= INT32_MAX && hi_len <= INT32_MAX); /* libpq lengths are int */
    char rev_text[24], limit_text[24];
    format_i64(rev_text, rev);
    format_i64(limit_text, limit);
    const char *const values[] = {(const char *)lo, rev_text, keys_only ? "t" : "f",
                                  limit > 0 ? limit_text : NULL, (const char *)hi};
    const int lengths[] = {(int)lo_len, 0, 0, 0, (int)hi_len};
    const int formats[] = {1, 0, 0, 0, 1};
    const known_kv *k = known_range(c, lo, lo_len, hi, hi_len, rev);
    if (k) {
        const char *bytes = c->known_bytes.data;
        sk_kv kv = {.key = (const unsigned char *)bytes + k->key_off,
                    .key_len = k->key_len,
                    .value = (const unsigned char *)bytes + (keys_only ? 0 : k->value_off),
                    .value_len = keys_only ? 0 : k->value_len,
                    .create_rev = k->n[0],
                    .mod_rev = k->n[1],
                    .version = k->n[2],
                    .lease = k->n[3]};
        if (k->live)
            fn(arg, &kv);
        return SK_OK;
    }
    stmt_id id = hi ? ST_KV_RANGE : ST_KV_RANGE_FROM;
    if (!held_in(c, lo, lo_len, hi, hi_len)) {
        kv_sink sink = {fn, arg};
        return run_rows(c, id, hi ? 5 : 4, values, lengths, formats, kv_sink_row, &sink);
    }
    PGresult *res = NULL;
    sk_err err = run(c, id, hi ? 5 : 4, values, lengths, formats, &res);
    for (int i = 0; err == SK_OK && i < PQntuples(res); i++) {
        sk_kv kv = kv_row(res, i, 1);
        if (fn(arg, &kv))
            break;
    }
    PQclear(res);
    return err;
}

/* Row i of a binary answer whose first columns are rev, sub, key,
 * create_rev, version, lease, deleted, value (kv_changes, kv_kept,
 * kv_rows_after): key and value borrowed from res. */
static sk_kv_row kv_row_at(const PGresult *res, int i)
{
    sk_kv_row row = {.kv = {.mod_rev = int_at(res, i, 0),
                            .create_rev = int_at(res, i, 3),
                            .version = int_at(res, i, 4),
                            .lease = int_at(res, i, 5)},
                     .sub = (int)int_at(res, i, 1),
                     .deleted = bool_at(res, i, 6)};
    row.kv.key = bytes_at(res, i, 2, &row.kv.key_len);
    row.kv.value = bytes_at(res, i, 7, &row.kv.value_len);
    return row;
}

static sk_err pg_kv_changes(sk_conn *c, int64_t after_rev, int64_t upto_rev, sk_kv_change_fn fn,
                            void *arg)
{
    char after[24], upto[24];
    format_i64(after, after_rev);
    format_i64(upto, upto_rev);
    const char *const values[] = {after, upto};
    PGresult *res = NULL;
    sk_err err = run(c, ST_KV_CHANGES, 2, values, NULL, NULL, &res);
    for (int i = 0; err == SK_OK && i < PQntuples(res); i++) {
        sk_kv_row row = kv_row_at(res, i);
        int has_prev = !PQgetisnull(res, i, 8);
        sk_kv prev = {.key = row.kv.key, .key_len = row.kv.key_len};
        if (has_prev) {
            prev.mod_rev = int_at(res, i, 8);
            prev.create_rev = int_at(res, i, 9);
            prev.version = int_at(res, i, 10);
            prev.lease = int_at(res, i, 11);
            prev.value = bytes_at(res, i, 12, &prev.value_len);
        }
        if (fn(arg, &row, has_prev ? &prev : NULL))
            break;
    }
    PQclear(res);
    return err;
}

/* Visits res's rows (kv_row_at's columns); clears res. */
static void visit_kv_rows(PGresult *res, sk_kv_row_fn fn, void *arg)
{
    for (int i = 0; i < PQntuples(res); i++) {
        sk_kv_row row = kv_row_at(res, i);
        if (fn(arg, &row))
            break;
    }
    PQclear(res);
}

static sk_err pg_kv_kept(sk_conn *c, int64_t upto_rev, int64_t compact_rev, sk_kv_row_fn fn,
                         void *arg)
{
    char upto[24], compact[24];
    format_i64(upto, upto_rev);
    format_i64(compact, compact_rev);
    const char *const values[] = {upto, compact};
    PGresult *res = NULL;
    sk_err err = run(c, ST_KV_KEPT, 2, values, NULL, NULL, &res);
    if (err == SK_OK)
        visit_kv_rows(res, fn, arg);
    return err;
}

static sk_err pg_kv_rows_after(sk_conn *c, int64_t rev, int sub, int limit, sk_kv_row_fn fn,
                               void *arg)
{
    char rev_text[24], sub_text[24], limit_text[24];
    format_i64(rev_text, rev);
    format_i64(sub_text, sub);
    format_i64(limit_text, limit);
    const char *const values[] = {rev_text, sub_text, limit_text};
    PGresult *res = NULL;
    sk_err err = run(c, ST_KV_ROWS_AFTER, 3, values, NULL, NULL, &res);
    if (err == SK_OK)
        visit_kv_rows(res, fn, arg);
    return err;
}

/* Appends s as an element of a PostgreSQL array literal: NULL, or quoted
 * with '"' and '\' escaped. */
static void array_element(sk_buf *b, const char *s, int first)
{
    if (!first)
        sk_buf_append(b, ",", 1);
    if (!s) {
        sk_buf_append(b, "NULL", 4);
        return;
    }
    sk_buf_append(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            sk_buf_append(b, "\\", 1);
        sk_buf_append(b, p, 1);
    }
    sk_buf_append(b, "\"", 1);
}

static sk_err pg_kv_docs_put(sk_conn *c, const sk_kv_doc *docs, size_t n)
{
    enum { COLS = 11 };
    sk_buf arrays[COLS];
    for (int j = 0; j < COLS; j++) {
        arrays[j] = (sk_buf)SK_BUF_INIT;
        sk_buf_append(&arrays[j], "{", 1);
    }
    for (size_t i = 0; i < n; i++) {
        const sk_kv_doc *d = &docs[i];
        char rev[24], sub[24];
        format_i64(rev, d->rev);
        format_i64(sub, d->sub);
        const char *col[COLS] = {rev, sub, d->key_text, d->group, d->resource, d->ns, d->name,
                                 d->encoding, d->kind, d->api_version, d->doc};
        for (int j = 0; j < COLS; j++)
            array_element(&arrays[j], col[j], i == 0);
    }
    const char *values[COLS];
    for (int j = 0; j < COLS; j++) {
        sk_buf_append(&arrays[j], "}", 2); /* with the NUL */
        values[j] = arrays[j].data;
    }
    PGresult *res = NULL;
    sk_err err = run(c, ST_KV_DOCS_PUT, COLS, values, NULL, NULL, &res);
    PQclear(res);
    for (int j = 0; j < COLS; j++)
        sk_buf_free(&arrays[j]);
    return err;
}

static uint64_t pg_take_round_trips(sk_conn *c)
{
    uint64_t n = c->round_trips;
    c->round_trips = 0;
    return n;
}

static sk_err pg_kv_docs_last(sk_conn *c, int64_t *rev_out, int *sub_out)
{
    PGresult *res = NULL;
    sk_err err = run(c, ST_KV_DOCS_LAST, 0, NULL, NULL, NULL, &res);
    if (err == SK_OK) {
        int any = PQntuples(res) > 0;
        *rev_out = any ? sk_parse_i64(PQgetvalue(res, 0, 0)) : 0;
        *sub_out = any ? (int)sk_parse_i64(PQgetvalue(res, 0, 1)) : 0;
    }
    PQclear(res);
    return err;
}

static sk_err pg_kv_count(sk_conn *c, const unsigned char *lo, size_t lo_len,
                          const unsigned char *hi, size_t hi_len, int64_t rev, int64_t *count_out)
{
    SK_CHECK(lo_len <= INT32_MAX && hi_len <= INT32_MAX);
    char rev_text[24];
    format_i64(rev_text, rev);
    const char *const values[] = {(const char *)lo, rev_text, "t", (const char *)hi};
    const int lengths[] = {(int)lo_len, 0, 0, (int)hi_len};
    const int formats[] = {1, 0, 0, 1};
    const known_kv *k = known_range(c, lo, lo_len, hi, hi_len, rev);
    if (k) {
        *count_out = k->live;
        return SK_OK;
    }
    PGresult *res = NULL;
    sk_err err = (held_in(c, lo, lo_len, hi, hi_len) ? run : run_unheld)(
        c, hi ? ST_KV_COUNT : ST_KV_COUNT_FROM, hi ? 4 : 3, values, lengths, formats, &res);
    if (err == SK_OK) {
        int64_t n = PQntuples(res) == 1 ? sk_parse_i64(PQgetvalue(res, 0, 0)) : -1;
        if (n < 0)
            err = SK_ERR_INTERNAL;
        else
            *count_out = n;
    }
    PQclear(res);
    return err;
}

static sk_err pg_kv_append(sk_conn *c, const sk_kv_row *row)
{
    SK_CHECK(row->kv.key_len <= INT32_MAX && row->kv.value_len <= INT32_MAX);
    if (c->n_held == c->cap_held) {
        c->cap_held = c->cap_held ? 2 * c->cap_held : 64;
        c->held = realloc(c->held, c->cap_held * sizeof *c->held);
        SK_CHECK_ALLOC(c->held);
    }
    held_row *h = &c->held[c->n_held++];
    *h = (held_row){{row->kv.mod_rev, row->sub, row->kv.create_rev, row->kv.version, row->kv.lease},
                    row->deleted,
                    held_put(c, row->kv.key, row->kv.key_len),
                    row->kv.key_len,
                    held_put(c, row->kv.value, row->kv.value_len),
                    row->kv.value_len};
    known_set(c, row->kv.key, row->kv.key_len, row->deleted ? NULL : &row->kv);
    return SK_OK;
}

/* Queues the keys for begin_write's flight (see backend.h), as a bytea[]
 * literal: {"\\x6b6579",...}. */
static sk_err pg_kv_prefetch(sk_conn *c, const unsigned char *const *keys, const size_t *lens,
                             size_t n)
{
    static const char hex[] = "0123456789abcdef";
    sk_buf *array = &c->asked_kv;
    for (size_t i = 0; i < n; i++) {
        if (known_find(c, 'k', keys[i], lens[i]))
            continue;
        known_set(c, keys[i], lens[i], NULL); /* absent unless the answer has it */
        sk_buf_puts(array, array->len ? ",\"\\\\x" : "{\"\\\\x");
        for (size_t j = 0; j < lens[i]; j++) {
            sk_buf_putc(array, hex[keys[i][j] >> 4]);
            sk_buf_putc(array, hex[keys[i][j] & 15]);
        }
        sk_buf_putc(array, '"');
    }
    return SK_OK;
}

static sk_err pg_kv_compact(sk_conn *c, int64_t span, int64_t *removed_out, int *done_out)
{
    char span_text[24];
    format_i64(span_text, span);
    const char *const values[] = {span_text};
    PGresult *res = NULL;
    sk_err err = run(c, ST_KV_COMPACT, 1, values, NULL, NULL, &res);
    if (err == SK_OK) {
        int64_t n = sk_parse_i64(PQgetvalue(res, 0, 0));
        if (n < 0) {
            err = SK_ERR_INTERNAL;
        } else {
            *removed_out = n;
            *done_out = PQgetvalue(res, 0, 1)[0] == 't';
        }
    }
    PQclear(res);
    return err;
}

static sk_err pg_db_size(sk_conn *c, int64_t *bytes_out)
{
    PGresult *res = NULL;
    sk_err err = run(c, ST_DB_SIZE, 0, NULL, NULL, NULL, &res);
    if (err == SK_OK) {
        int64_t n = PQntuples(res) == 1 ? sk_parse_i64(PQgetvalue(res, 0, 0)) : -1;
        if (n < 0)
            err = SK_ERR_INTERNAL;
        else
            *bytes_out = n;
    }
    PQclear(res);
    return err;
}

/* VACUUM cannot be prepared nor run in a transaction block: a plain
 * PQexec, on a pooled connection that holds no transaction. */
static sk_err pg_reclaim(sk_conn *c)
{
    PGresult *res = PQexec(c->pg, "VACUUM sk_history, sk_kv");
    sk_err err = check(c, res, "vacuum");
    PQclear(res);
    return err;
}

static sk_err pg_flags_wrong(sk_conn *c, const char *resource, int64_t *count_out)
{
    PGresult *res = NULL;
    const char *const values[] = {resource};
    sk_err err = run(c, ST_FLAGS_WRONG, 1, values, NULL, NULL, &res);
    if (err == SK_OK) {
        int64_t n = PQntuples(res) == 1 ? sk_parse_i64(PQgetvalue(res, 0, 0)) : -1;
        if (n < 0)
            err = SK_ERR_INTERNAL;
        else
            *count_out = n;
    }
    PQclear(res);
    return err;
}

static sk_lease lease_of(const PGresult *res, int i)
{
    return (sk_lease){sk_parse_i64(PQgetvalue(res, i, 0)), sk_parse_i64(PQgetvalue(res, i, 1)),
                      sk_parse_i64(PQgetvalue(res, i, 2))};
}

static sk_err pg_lease_get(sk_conn *c, int64_t id, sk_lease *out)
{
    char id_text[24];
    format_i64(id_text, id);
    const char *const values[] = {id_text};
    PGresult *res = NULL;
    sk_err err = run(c, ST_LEASE_GET, 1, values, NULL, NULL, &res);
    if (err == SK_OK && PQntuples(res) == 0)
        err = SK_ERR_NOT_FOUND;
    else if (err == SK_OK)
        *out = lease_of(res, 0);
    PQclear(res);
    return err;
}

static sk_err pg_lease_put(sk_conn *c, const sk_lease *l)
{
    char id[24], ttl[24], at[24];
    format_i64(id, l->id);
    format_i64(ttl, l->ttl);
    format_i64(at, l->expires_at_ms);
    const char *const values[] = {id, ttl, at};
    PGresult *res = NULL;
    sk_err err = run(c, ST_LEASE_PUT, 3, values, NULL, NULL, &res);
    PQclear(res);
    return err;
}

static sk_err pg_lease_delete(sk_conn *c, int64_t id)
{
    char id_text[24];
    format_i64(id_text, id);
    const char *const values[] = {id_text};
    PGresult *res = NULL;
    sk_err err = run(c, ST_LEASE_DELETE, 1, values, NULL, NULL, &res);
    PQclear(res);
    return err;
}

static sk_err pg_leases(sk_conn *c, int64_t before_ms, int limit, sk_lease_fn fn, void *arg)
{
    char before_text[24], limit_text[24];
    format_i64(before_text, before_ms);
    format_i64(limit_text, limit);
    const char *const values[] = {before_text, limit > 0 ? limit_text : NULL};
    PGresult *res = NULL;
    sk_err err = run(c, ST_LEASES, 2, values, NULL, NULL, &res);
    for (int i = 0; err == SK_OK && i < PQntuples(res); i++) {
        sk_lease l = lease_of(res, i);
        if (fn(arg, &l))
            break;
    }
    PQclear(res);
    return err;
}

static sk_err pg_kv_lease_keys(sk_conn *c, int64_t lease, sk_kv_fn fn, void *arg)
{
    char lease_text[24];
    format_i64(lease_text, lease);
    const char *const values[] = {lease_text};
    PGresult *res = NULL;
    sk_err err = run(c, ST_KV_LEASE_KEYS, 1, values, NULL, NULL, &res);
    for (int i = 0; err == SK_OK && i < PQntuples(res); i++) {
        sk_kv kv = kv_row(res, i, 0);
        if (fn(arg, &kv))
            break;
    }
    PQclear(res);
    return err;
}

const sk_backend_ops sk_backend_postgres = {
    .name = "postgres",
    .server = 1,
    .connect = pg_connect,
    .disconnect = pg_disconnect,
    .idle_ok = pg_idle_ok,
    .migrate = pg_migrate,
    .begin_write = pg_begin_write,
    .get_current = pg_get_current,
    .append = pg_append,
    .commit_write = pg_commit_write,
    .rollback = pg_rollback,
    .last_batch = pg_last_batch,
    .revisions = pg_revisions,
    .get_at = pg_get_at,
    .list = pg_list,
    .count = pg_count,
    .history = pg_history,
    .compact_batch = pg_compact_batch,
    .compact_claim = pg_compact_claim,
    .wait_notify = pg_wait_notify,
    .set_expiry = pg_set_expiry,
    .move_expiry = pg_move_expiry,
    .expired = pg_expired,
    .meta_get = pg_meta_get,
    .kv_flush = pg_kv_flush,
    .set_compacted = pg_set_compacted,
    .claim_taken = pg_claim_taken,
    .claims_release = pg_claims_release,
    .claim_insert = pg_claim_insert,
    .claims_list = pg_claims_list,
    .kv_range = pg_kv_range,
    .kv_changes = pg_kv_changes,
    .kv_kept = pg_kv_kept,
    .kv_rows_after = pg_kv_rows_after,
    .kv_docs_put = pg_kv_docs_put,
    .kv_docs_last = pg_kv_docs_last,
    .take_round_trips = pg_take_round_trips,
    .reclaim = pg_reclaim,
    .kv_count = pg_kv_count,
    .kv_append = pg_kv_append,
    .kv_prefetch = pg_kv_prefetch,
    .prefetch_current = pg_prefetch_current,
    .kv_compact = pg_kv_compact,
    .db_size = pg_db_size,
    .flags_wrong = pg_flags_wrong,
    .resources = pg_resources,
    .lease_get = pg_lease_get,
    .lease_put = pg_lease_put,
    .lease_delete = pg_lease_delete,
    .leases = pg_leases,
    .kv_lease_keys = pg_kv_lease_keys,
};
