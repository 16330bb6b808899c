/*
 * store.c - store policy over a backend: the group-commit writer, the read
 * connection pool, preconditions, compaction passes (see store.h).
 *
 * The writer. One thread per store owns the write connection. It sleeps on
 * a queue; when woken it takes every waiting intent (up to MAX_BATCH) and
 * applies them in ONE transaction:
 *   kv_prefetch, prefetch_current (PostgreSQL): name every single etcd
 *     key and every object the batch will read
 *   begin_write (revision lock, read counter; PostgreSQL: then the named
 *     keys' current versions, one statement per kind, in the same round
 *     trip, so the batch's reads cost no round trip each: postgres.c)
 *   for each intent: read the current row, check the precondition; only if
 *     the write will happen, take rev = counter + 1 and append the row
 *   commit_write(counter, the batch's identity: "Ambiguous commits" below)
 *     -> one fsync / one NOTIFY for the whole batch
 *   then run every completion callback.
 * etcd lease intents (grant, keep-alive) write a row without a revision; a
 * batch with such a row commits with the counter unchanged.
 * A failed precondition fails its intent alone and takes no revision, so
 * revisions stay gap-free. A database error (not a precondition) aborts the
 * batch; it is then replayed one intent per transaction so the error stays
 * with the intent that caused it (if the writer cannot even reconnect, the
 * rest answer SK_ERR_UNAVAILABLE unrun). Throughput thus grows with
 * concurrency: 32 waiting writers cost one commit, not 32.
 *
 * Ambiguous commits. A replay is only right for a batch that did not
 * commit. When commit_write fails, the connection may have broken with
 * COMMIT in flight, and the batch may well be stored: replayed, each
 * precondition would fail against the intent's own result (a CAS update
 * answered CONFLICT, a create ALREADY_EXISTS, a delete NOT_FOUND, an etcd
 * compare failed), and its caller would apply its change twice. So each
 * batch that goes to COMMIT carries an identity, (writer_id, batch_seq):
 * writer_id drawn at random when the store opens, batch_seq counting up,
 * written to sk_writer by commit_write in the same transaction (PostgreSQL:
 * in the counter's statement; nothing more in the normal path). After a
 * failed commit_write the writer reconnects, takes the revision lock and
 * reads its sk_writer row (commit_outcome). The lock matters: the old
 * transaction held it until it ended, so once it is taken the batch has
 * committed or never will, even if the old session outlived its socket.
 * Equal to the batch: it committed, and the outcomes computed for it are
 * exactly what committed, so they are answered and handed off as after a
 * plain commit. Lower: it did not, and it is replayed. Only this writer
 * writes its row, and one batch at a time, so nothing else can explain
 * either value; "the row at revision N exists" would not do, as another
 * process may have taken N. If the database cannot be asked, every intent
 * of the batch answers SK_ERR_UNAVAILABLE: a definite failure for a write
 * that may be stored is the one answer never given.
 *
 * Invariant (checked): within a batch revisions are assigned consecutively
 * from counter + 1, and the counter stored at commit equals the last one.
 *
 * Allocations (sk_write.claims). An intent's claims are checked inside the
 * same transaction, after its precondition and before anything of it is
 * written: a value owned by another key fails the intent alone, like a
 * precondition (SK_ERR_CONFLICT, the claim marked taken, no revision). The
 * writer holds the revision lock, so no other writer, in this process or
 * another sharing the database, can claim between the check and the insert;
 * the primary key of sk_allocation stands behind that. A deleted object's
 * rows go with its tombstone.
 *
 * Reads borrow a pooled connection per call, so any number of threads can
 * read while the writer writes (SQLite WAL snapshots, PostgreSQL MVCC).
 *
 * The commit hand-off (handoff.h). Once a batch's COMMIT has succeeded the
 * writer publishes its rows (copies of the results it hands its callers;
 * a row without object for each etcd revision) to a bounded in-memory
 * queue, and sk_store_history answers from it when a held batch continues
 * after_rev, before going to SQL: the watch cache's feed, which follows
 * every commit of this process, then reads its own writes back from memory
 * instead of SQL. The store keeps the queue, not the cache, so the layers
 * stay as they were (store knows no cache; cache.c is unchanged) and every
 * reader of history gets the same rows whichever source answers. Revisions
 * other processes committed in between are not held, so those reads go to
 * SQL as before; a rolled-back batch is never published. The compact gate:
 * memory answers only from the compact revision this process last read or
 * set on (every feed round reads it); a compaction by another process not
 * yet read may thus let it serve rows SQL has just removed, which are still
 * exactly what was committed.
 *
 * Compaction and reads. Another process may compact at any moment, so a
 * check of compact_rev before a read proves nothing about the read. Instead
 * each backend read is one statement gated on compact_rev in its own
 * snapshot (backend.h): it yields rows only from a snapshot in which its
 * revision is still valid. An empty answer is then ambiguous, and only then
 * is compact_rev read again: it only grows, so if the gate closed it is
 * still closed, and the read expires instead of answering incompletely.
 */
#include "store/store.h"
#include "core/check.h"
#include "core/jsontext.h"
#include "core/log.h"
#include "core/util.h"
#include "store/backend.h"
#include "store/handoff.h"
#include "store/kvapply.h"
#include "store/rangememo.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_BATCH 256
#define POOL_KEEP 16
#define COMPACT_BATCH 1000
/* Revisions of the etcd keyspace compacted per transaction. */
#define KV_COMPACT_SPAN 1000
/* What the commit hand-off holds at most (see the top): a few batches
 * ahead of a feed that keeps up, far less than it reads from SQL at once. */
#define HANDOFF_ROWS (8 * MAX_BATCH)
#define HANDOFF_BYTES ((size_t)16 * 1024 * 1024)

typedef struct pending {
    sk_write w; /* unused for an etcd transaction or lease operation */
    const sk_kv_txn *kv;
    const sk_lease_op *lease;
    sk_arena *kv_arena; /* either's results */
    sk_kv_txn_result *kv_out; /* &kv_res: a replayed batch rewrites it, the caller's copy once */
    sk_kv_txn_result kv_res, *kv_dest;
    sk_lease_result *lease_out;
    sk_write_done_fn done; /* an sk_write's or lease's; an etcd transaction's is kv_done */
    sk_kv_done_fn kv_done;
    void *arg;
    sk_err err; /* result, valid after the batch */
    sk_row result;
    /* The object as dumped on the caller's thread with an empty
     * resourceVersion, whose opening quote is at pre_at; NULL: the writer
     * dumps it (see predump). */
    char *pre_text;
    size_t pre_len, pre_at;
    struct pending *next;
} pending;

struct sk_store {
    const sk_backend_ops *ops;
    char *url;
    char *claimant; /* "host:pid", recorded with compaction claims */
    /* The value codec (store.h); NULL: values kept as they are. */
    const sk_store_codec *codec;

    pthread_t writer;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pending *head, *tail;
    int stopping;
    sk_conn *wconn;

    pthread_mutex_t pool_mu;
    sk_conn *pool[POOL_KEEP];
    int pool_len;

    pthread_mutex_t secret_mu;
    unsigned char secret[32];
    int have_secret;

    /* sk_store_wait_commit: one waiter at a time on the notification
     * connection (PostgreSQL LISTEN; NULL until first used), and what it
     * knows of the database: the highest revision known committed (from
     * the counter or a notification), the compact revision and when the
     * counter was last read, and whether it must be read before trusting
     * the rest (listening just began). */
    pthread_mutex_t notify_mu;
    sk_conn *notify_conn;
    int64_t known_rev, known_compact, counter_read_ms;
    int must_read_counter;

    /* Commit notification: the last revision this process committed, and
     * the revisions (lo, hi] of the commit whose answer the writer awaits
     * (0, 0: none), which the database may already announce. */
    pthread_mutex_t commit_mu;
    pthread_cond_t commit_cv;
    int64_t committed_rev, awaited_lo, awaited_hi;

    /* This process's committed batches, for sk_store_history (see the top),
     * and the highest compact revision this process has read or set: below
     * it history answers from SQL, which expires. */
    sk_handoff *handoff;
    atomic_llong compact_seen;

    /* The counts of paged etcd ranges (rangememo.h). */
    sk_range_memo *range_memo;

    /* Batches rolled back and replayed one write per transaction. */
    atomic_llong batch_replays;
    /* The last write that ended found the database or its disk full
     * (sk_store_out_of_space); the next that commits clears it. */
    atomic_int out_of_space;
    atomic_llong commits; /* write transactions committed */
    atomic_llong round_trips; /* the writer's connections' (take_round_trips) */

    /* The writer's identity in sk_writer (random, > 0) and the number of
     * its last batch that went to COMMIT (see "Ambiguous commits" at the
     * top); the writer's thread alone uses them. */
    int64_t writer_id, batch_seq;
    /* Lost COMMIT answers, by outcome (committed, not committed, unknown). */
    atomic_llong resolved[3];
};

/* What a lost COMMIT answer turned out to be (indexes sk_store.resolved). */
enum { LANDED, NOT_LANDED, UNKNOWN };

/* Pauses (ms) before each attempt to ask whether a batch whose COMMIT
 * answer was lost committed; after the last its writes answer 503. About
 * two seconds: a server that restarted or cut the connection answers at
 * once, and a caller should not wait longer to learn that it must retry. */
static const int resolve_pause_ms[] = {0, 100, 400, 1500};

static const sk_backend_ops *backend_for(const char *url)
{
    if (strncmp(url, "sqlite:", 7) == 0)
        return &sk_backend_sqlite;
    return &sk_backend_postgres;
}

/* ---- read pool ---------------------------------------------------------- */

static sk_err pool_get(sk_store *s, sk_conn **out)
{
    sk_conn *c = NULL;
    pthread_mutex_lock(&s->pool_mu);
    if (s->pool_len > 0)
        c = s->pool[--s->pool_len];
    pthread_mutex_unlock(&s->pool_mu);
    /* A pooled connection the server has since closed (a restart, a cut)
     * would fail the read: replaced here, it costs a connect, not a 503. */
    if (c && s->ops->idle_ok && !s->ops->idle_ok(c)) {
        s->ops->disconnect(c);
        c = NULL;
    }
    if (c) {
        *out = c;
        return SK_OK;
    }
    char *msg = NULL;
    sk_err err = s->ops->connect(s->url, &c, &msg);
    if (err != SK_OK) {
        sk_log_error("store: %s", msg ? msg : "cannot connect");
        free(msg);
        return SK_ERR_UNAVAILABLE;
    }
    *out = c;
    return SK_OK;
}

/* Returns c to the pool, or closes it if the last call left it suspect. */
static void pool_put(sk_store *s, sk_conn *c, sk_err last)
{
    int keep = last != SK_ERR_UNAVAILABLE && last != SK_ERR_INTERNAL;
    pthread_mutex_lock(&s->pool_mu);
    if (keep && s->pool_len < POOL_KEEP) {
        s->pool[s->pool_len++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&s->pool_mu);
    if (c)
        s->ops->disconnect(c);
}

/* ---- the value codec (store.h) ------------------------------------------ */

/* row's value as the codec reads it: a new text, or NULL when the stored
 * one is the object. A value the codec cannot read is logged and NULL: it
 * stays as stored and then does not parse as an object, which every reader
 * already handles (lists and watches skip it, a read or a read-modify-write
 * of it is a 500 naming it, a delete still works), so one undecryptable row
 * never stops other reads. */
static char *opened_value(const sk_store *s, const sk_row *row, size_t *len_out, int *stale)
{
    char *plain = NULL, *msg = NULL;
    if (!s->codec || !row->value || !*row->resource)
        return NULL;
    if (s->codec->open(s->codec->ctx, row->resource, row->ns, row->name, row->value, row->value_len,
                       &plain, len_out, stale, &msg) != SK_OK) {
        sk_log_warn("store: cannot read %s %s/%s at revision %lld: %s", row->resource, row->ns,
                    row->name, (long long)row->rev, msg);
        free(msg);
        plain = NULL;
    }
    return plain;
}

/* opened_value in place, for a row that owns its value. */
static void open_row(const sk_store *s, sk_row *row)
{
    size_t n = 0;
    char *plain = opened_value(s, row, &n, &row->stale);
    if (plain) {
        free(row->value);
        row->value = plain;
        row->value_len = n;
    }
}

/* Appends row (its value plain) as the codec keeps it. */
static sk_err append_row(sk_store *s, const sk_row *row)
{
    size_t n = 0;
    char *sealed = s->codec ? s->codec->seal(s->codec->ctx, row->resource, row->ns, row->name,
                                             row->value, row->value_len, &n)
                            : NULL;
    if (!sealed)
        return s->ops->append(s->wconn, row);
    sk_row stored = *row;
    stored.value = sealed;
    stored.value_len = n;
    sk_err err = s->ops->append(s->wconn, &stored);
    free(sealed);
    return err;
}

/* The writer's read of a key's live version, its value plain. */
static sk_err get_current(sk_store *s, const char *resource, const char *ns, const char *name,
                          sk_row *out)
{
    sk_err err = s->ops->get_current(s->wconn, resource, ns, name, out);
    if (err == SK_OK)
        open_row(s, out);
    return err;
}

/* ---- the writer --------------------------------------------------------- */

/* Serializes obj with metadata.resourceVersion = rev. */
static char *stamp(json_t *obj, int64_t rev, size_t *len_out)
{
    char rv[24];
    snprintf(rv, sizeof rv, "%lld", (long long)rev);
    json_t *meta = json_object_get(obj, "metadata");
    SK_CHECK(json_is_object(meta));
    json_object_set_new(meta, "resourceVersion", json_string(rv));
    char *text = sk_jsontext_dump(obj, len_out);
    SK_CHECK_ALLOC(text);
    return text;
}

/* p's object text with metadata.resourceVersion = rev, spliced into the
 * caller's dump. */
static char *splice_rev(const pending *p, int64_t rev, size_t *len_out)
{
    char rv[24];
    size_t n = (size_t)snprintf(rv, sizeof rv, "%lld", (long long)rev);
    size_t len = p->pre_len + n;
    char *text = malloc(len + 1);
    SK_CHECK_ALLOC(text);
    memcpy(text, p->pre_text, p->pre_at + 1);
    memcpy(text + p->pre_at + 1, rv, n);
    memcpy(text + p->pre_at + 1 + n, p->pre_text + p->pre_at + 1, p->pre_len - p->pre_at - 1);
    text[len] = '\0';
    *len_out = len;
    return text;
}

/* The last state of a stored version that does not parse (written by an
 * older version, or damaged): what the tombstone carries instead, so such
 * an object can still be deleted. skeleton (borrowed, may be NULL) is the
 * caller's idea of the object, e.g. its kind and apiVersion. */
static json_t *unreadable_last_state(const sk_row *cur, const json_t *skeleton)
{
    json_t *obj = skeleton ? json_deep_copy(skeleton) : json_object();
    SK_CHECK_ALLOC(obj);
    json_t *meta = json_object();
    json_object_set_new(meta, "name", json_string(cur->name));
    if (*cur->ns)
        json_object_set_new(meta, "namespace", json_string(cur->ns));
    if (cur->uid && *cur->uid)
        json_object_set_new(meta, "uid", json_string(cur->uid));
    json_object_set_new(obj, "metadata", meta);
    return obj;
}

/* Appends a tombstone for cur (the live version) at rev; skeleton as for
 * unreadable_last_state. On success the tombstone row is in *out. */
static sk_err append_tombstone(sk_store *s, const sk_row *cur, int64_t rev,
                               const json_t *skeleton, sk_row *out)
{
    json_error_t jerr;
    json_t *obj = json_loadb(cur->value, cur->value_len, 0, &jerr);
    if (!obj || !json_is_object(json_object_get(obj, "metadata"))) {
        sk_log_warn("store: stored object %s %s/%s does not parse (%s); its tombstone carries "
                    "only its key",
                    cur->resource, cur->ns, cur->name, obj ? "no metadata" : jerr.text);
        json_decref(obj);
        obj = unreadable_last_state(cur, skeleton);
    }
    sk_row row = *cur;
    row.rev = rev;
    row.prev_rev = cur->rev;
    row.deleted = 1;
    row.value = stamp(obj, rev, &row.value_len);
    json_decref(obj);
    sk_err err = append_row(s, &row);
    if (err == SK_OK) /* a deleted object no longer expires */
        err = s->ops->set_expiry(s->wconn, row.resource, row.ns, row.name, rev, 0);
    if (err == SK_OK) /* nor owns anything */
        err = s->ops->claims_release(s->wconn, row.resource, row.ns, row.name);
    if (err == SK_OK && out)
        sk_row_copy(out, &row);
    free(row.value);
    return err;
}

/* Whether w's claims are free for its key; marks those that are not.
 * SK_ERR_CONFLICT if any is taken; another error is the database's. */
static sk_err check_claims(sk_store *s, sk_write *w)
{
    sk_err err = SK_OK;
    int any = 0;
    for (int i = 0; i < w->n_claims && err == SK_OK; i++) {
        sk_claim *c = &w->claims[i];
        int taken = 0;
        c->taken = 0;
        err = s->ops->claim_taken(s->wconn, c->kind, c->value, w->resource, w->ns, w->name, &taken);
        if (err == SK_OK && taken)
            c->taken = any = 1;
    }
    return err == SK_OK && any ? SK_ERR_CONFLICT : err;
}

/* Makes w's key own exactly its claims (checked free by check_claims). A
 * value listed twice is recorded once. */
static sk_err record_claims(sk_store *s, const sk_write *w)
{
    sk_err err = s->ops->claims_release(s->wconn, w->resource, w->ns, w->name);
    for (int i = 0; i < w->n_claims && err == SK_OK; i++) {
        const sk_claim *c = &w->claims[i];
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(w->claims[j].kind, c->kind) == 0 && strcmp(w->claims[j].value, c->value) == 0;
        if (!seen)
            err = s->ops->claim_insert(s->wconn, c->kind, c->value, w->resource, w->ns, w->name);
    }
    return err;
}

/*
 * Applies one intent inside the open transaction. *rev is the last assigned
 * revision; it advances only for writes that happen. *ns_live names a
 * namespace already seen live and open in this transaction (creates usually
 * come in runs into one namespace: one lookup serves the run). Returns the intent's
 * outcome; *db_failed is set when the error came from the database (the
 * transaction is then unusable). *dirty is set when it wrote a row that
 * takes no revision (an etcd lease's), so the batch must commit anyway.
 */
static sk_err apply_one(sk_store *s, pending *p, int64_t *rev, const char **ns_live, int *db_failed,
                        int *dirty)
{
    sk_write *w = &p->w;
    sk_row cur = {0};
    sk_err err;
    *db_failed = 0;

    if (p->lease) {
        int took_rev = 0;
        err = sk_kv_lease_apply(s->ops, s->wconn, *rev, p->lease, p->kv_arena, p->lease_out,
                                &took_rev, db_failed);
        if (err == SK_OK)
            *dirty = 1; /* a lease row, even without a revision */
        if (err == SK_OK && took_rev)
            (*rev)++;
        goto out;
    }
    if (p->kv) {
        int wrote = 0;
        err = sk_kv_apply(s->ops, s->wconn, *rev, p->kv, p->kv_arena, p->kv_out, &wrote, db_failed);
        if (err == SK_OK && wrote)
            (*rev)++;
        goto out;
    }

    if (strcmp(w->resource, "namespaces") == 0)
        *ns_live = NULL; /* a namespace may go or close: verify again */
    if (w->require_namespace && !(*ns_live && strcmp(*ns_live, w->require_namespace) == 0)) {
        sk_row nsrow = {0};
        err = get_current(s, "namespaces", "", w->require_namespace, &nsrow);
        int closed = err == SK_OK && w->namespace_open &&
                     !w->namespace_open(nsrow.value, nsrow.value_len);
        sk_row_clear(&nsrow);
        if (err != SK_OK) {
            *db_failed = err != SK_ERR_NOT_FOUND;
            goto out;
        }
        if (closed) {
            err = SK_ERR_FORBIDDEN;
            goto out;
        }
        /* Remembered only once checked open: a write that asked only for
         * existence must not spare a later one the check. */
        if (w->namespace_open)
            *ns_live = w->require_namespace;
    }
    err = get_current(s, w->resource, w->ns, w->name, &cur);
    if (err != SK_OK && err != SK_ERR_NOT_FOUND) {
        *db_failed = 1;
        goto out;
    }
    int exists = err == SK_OK;
    if (w->op == SK_WRITE_CREATE && exists) {
        err = SK_ERR_ALREADY_EXISTS;
        goto out;
    }
    if (w->op != SK_WRITE_CREATE && !exists) {
        err = SK_ERR_NOT_FOUND;
        goto out;
    }
    if (w->op != SK_WRITE_CREATE && w->expected_rev > 0 && w->expected_rev != cur.rev) {
        err = SK_ERR_CONFLICT;
        goto out;
    }
    if (w->op == SK_WRITE_DELETE && w->expected_uid && strcmp(w->expected_uid, cur.uid) != 0) {
        err = SK_ERR_CONFLICT;
        goto out;
    }

    if (w->op == SK_WRITE_DELETE) {
        err = append_tombstone(s, &cur, *rev + 1, w->object, &p->result);
        if (err != SK_OK) {
            *db_failed = 1;
            goto out;
        }
        (*rev)++;
        goto out;
    }

    if (w->set_claims && (err = check_claims(s, w)) != SK_OK) {
        *db_failed = err != SK_ERR_CONFLICT;
        goto out;
    }
    json_t *uid = json_object_get(json_object_get(w->object, "metadata"), "uid");
    SK_CHECK(json_is_string(uid));
    sk_row row = {0};
    row.rev = *rev + 1;
    row.create_rev = exists ? cur.create_rev : row.rev;
    row.prev_rev = exists ? cur.rev : 0;
    row.deleted = 0;
    row.resource = (char *)w->resource;
    row.ns = (char *)w->ns;
    row.name = (char *)w->name;
    row.uid = (char *)json_string_value(uid);
    row.value = p->pre_text ? splice_rev(p, row.rev, &row.value_len)
                            : stamp(w->object, row.rev, &row.value_len);
    if (w->max_bytes > 0 && row.value_len > w->max_bytes) {
        free(row.value);
        err = SK_ERR_TOO_LARGE;
        goto out;
    }
    err = append_row(s, &row);
    if (err == SK_OK && w->expires_at_ms != 0)
        err = s->ops->set_expiry(s->wconn, row.resource, row.ns, row.name, row.rev,
                                 w->expires_at_ms > 0 ? w->expires_at_ms : 0);
    else if (err == SK_OK && w->keep_expiry && exists)
        err = s->ops->move_expiry(s->wconn, row.resource, row.ns, row.name, cur.rev, row.rev);
    if (err == SK_OK && w->set_claims)
        err = record_claims(s, w);
    if (err == SK_OK) {
        sk_row_copy(&p->result, &row);
        (*rev)++;
    } else {
        *db_failed = 1;
    }
    free(row.value);
out:
    sk_row_clear(&cur);
    return err;
}

/* The etcd keys a batch will read. */
typedef struct batch_keys {
    const unsigned char **keys;
    size_t *lens;
    size_t n, cap;
} batch_keys;

static void add_key(void *arg, const unsigned char *key, size_t key_len)
{
    batch_keys *k = arg;
    if (k->n == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 64;
        k->keys = realloc(k->keys, k->cap * sizeof *k->keys);
        k->lens = realloc(k->lens, k->cap * sizeof *k->lens);
        SK_CHECK_ALLOC(k->keys);
        SK_CHECK_ALLOC(k->lens);
    }
    k->keys[k->n] = key ? key : (const unsigned char *)"";
    k->lens[k->n++] = key_len;
}

/* Names what the intents [first, first+n) will read, for begin_write to
 * read in one statement per kind of key, where the backend can
 * (kv_prefetch, prefetch_current). An
 * object write reads its own key and at most its namespace: the columns of
 * the objects' keys (resources, namespaces, names) hold 2n at most. */
static sk_err prefetch(sk_store *s, pending *first, int n)
{
    batch_keys k = {0};
    const char **cols = malloc(3 * 2 * (size_t)n * sizeof *cols);
    SK_CHECK_ALLOC(cols);
    const char **resources = cols, **nss = cols + 2 * n, **names = cols + 4 * n;
    size_t n_rows = 0;
    pending *p = first;
    for (int i = 0; i < n; i++, p = p->next) {
        if (p->kv) {
            sk_kv_txn_keys(p->kv, add_key, &k);
        } else if (!p->lease) {
            if (p->w.require_namespace) {
                resources[n_rows] = "namespaces";
                nss[n_rows] = "";
                names[n_rows++] = p->w.require_namespace;
            }
            resources[n_rows] = p->w.resource;
            nss[n_rows] = p->w.ns;
            names[n_rows++] = p->w.name;
        }
    }
    sk_err err =
        k.n && s->ops->kv_prefetch ? s->ops->kv_prefetch(s->wconn, k.keys, k.lens, k.n) : SK_OK;
    if (err == SK_OK && n_rows && s->ops->prefetch_current)
        err = s->ops->prefetch_current(s->wconn, resources, nss, names, n_rows);
    free(cols);
    free(k.keys);
    free(k.lens);
    return err;
}

/* Publishes the committed revisions (rev0, rev] of intents [first, first+n)
 * to the commit hand-off: an object write's row is its result, any other
 * revision (an etcd transaction's or lease's) a row without object. Called
 * only once COMMIT succeeded. */
static void hand_off(sk_store *s, int64_t rev0, int64_t rev, pending *first, int n)
{
    sk_handoff_batch *b = sk_handoff_batch_new(rev0 + 1, (int)(rev - rev0));
    pending *p = first;
    for (int i = 0; i < n; i++, p = p->next)
        if (p->err == SK_OK && p->result.rev > 0)
            sk_handoff_batch_set(b, &p->result);
    sk_handoff_publish(s->handoff, b);
}

/* The commit whose answer the writer awaits has revisions (lo, hi], which
 * the database may announce before the writer hears its COMMIT answer (see
 * sk_store_wait_commit). */
static void begin_awaited(sk_store *s, int64_t lo, int64_t hi)
{
    pthread_mutex_lock(&s->commit_mu);
    s->awaited_lo = lo;
    s->awaited_hi = hi;
    pthread_mutex_unlock(&s->commit_mu);
}

/* Ends the awaited commit, committed up to rev (0: failed), and wakes whoever
 * waits for commits. */
static void end_awaited(sk_store *s, int64_t rev)
{
    pthread_mutex_lock(&s->commit_mu);
    if (rev > s->committed_rev)
        s->committed_rev = rev;
    s->awaited_lo = s->awaited_hi = 0;
    pthread_cond_broadcast(&s->commit_cv);
    pthread_mutex_unlock(&s->commit_mu);
}

/* Drops the results of intents [first, first+n), each then failing with err
 * (SK_OK: to be run again). */
static void reset_results(pending *first, int n, sk_err err)
{
    pending *p = first;
    for (int i = 0; i < n; i++, p = p->next) {
        sk_row_clear(&p->result);
        p->err = err;
    }
}

/* Replaces the writer's connection; 0 if no new one could be opened (the
 * old one is kept, to be replaced at the next failure). */
static int reconnect_writer(sk_store *s)
{
    sk_conn *c = NULL;
    char *msg = NULL;
    int ok = s->ops->connect(s->url, &c, &msg) == SK_OK;
    if (ok) {
        atomic_fetch_add(&s->round_trips, (long long)s->ops->take_round_trips(s->wconn));
        s->ops->disconnect(s->wconn);
        s->wconn = c;
    } else {
        sk_log_error("store: writer reconnect failed: %s", msg ? msg : "?");
    }
    free(msg);
    return ok;
}

/* After commit_write of batch failed: whether it committed, asked on a new
 * connection under the revision lock (see "Ambiguous commits" at the top). */
static int commit_outcome(sk_store *s, int64_t batch)
{
    int outcome = UNKNOWN;
    for (size_t i = 0; outcome == UNKNOWN && i < sizeof resolve_pause_ms / sizeof *resolve_pause_ms;
         i++) {
        if (resolve_pause_ms[i])
            usleep((useconds_t)resolve_pause_ms[i] * 1000);
        if (!reconnect_writer(s))
            continue;
        int64_t rev0 = 0, last = 0;
        sk_err err = s->ops->begin_write(s->wconn, &rev0);
        if (err == SK_OK)
            err = s->ops->last_batch(s->wconn, s->writer_id, &last);
        s->ops->rollback(s->wconn);
        if (err == SK_OK) {
            /* batches are numbered upward, and none of this writer's ran since */
            SK_CHECK(last <= batch);
            outcome = last == batch ? LANDED : NOT_LANDED;
        }
    }
    atomic_fetch_add(&s->resolved[outcome], 1);
    sk_log_warn("store: the answer to COMMIT of batch %lld was lost; it %s", (long long)batch,
                outcome == LANDED       ? "committed: answering its results"
                : outcome == NOT_LANDED ? "did not commit: running it again"
                                        : "cannot be known: its writes answer unavailable");
    return outcome;
}

/* Runs intents [first, first+n) (a linked run) in one transaction. SK_OK
 * when every intent has its answer: committed, nothing to commit, or the
 * outcome unknown (each intent SK_ERR_UNAVAILABLE); else the database error
 * that aborted the transaction, of which nothing committed. */
static sk_err run_batch(sk_store *s, pending *first, int n)
{
    int roll_back = 1;
    int64_t rev0 = 0;
    /* the prefetch names its keys first: begin_write reads them after the lock */
    sk_err err = s->ops->kv_prefetch || s->ops->prefetch_current ? prefetch(s, first, n) : SK_OK;
    if (err == SK_OK)
        err = s->ops->begin_write(s->wconn, &rev0);
    if (err != SK_OK)
        goto out;
    int64_t rev = rev0;
    const char *ns_live = NULL;
    int dirty = 0;
    pending *p = first;
    for (int i = 0; i < n; i++, p = p->next) {
        int db_failed = 0;
        p->err = apply_one(s, p, &rev, &ns_live, &db_failed, &dirty);
        if (db_failed) {
            SK_CHECK(p->err != SK_OK);
            err = p->err;
            goto out;
        }
    }
    if (rev == rev0 && !dirty)
        goto out; /* nothing written: no revision, no fsync */
    int64_t batch = ++s->batch_seq;
    begin_awaited(s, rev0, rev);
    sk_err commit_err = s->ops->commit_write(s->wconn, rev, s->writer_id, batch);
    if (commit_err == SK_ERR_NO_SPACE) {
        /* The database answered, so no answer was lost: nothing committed. */
        end_awaited(s, 0);
        err = commit_err;
        goto out;
    }
    if (commit_err != SK_OK) {
        /* commit_outcome leaves a new connection with no transaction open */
        roll_back = 0;
        switch (commit_outcome(s, batch)) {
        case LANDED: /* the results computed above are what committed */
            break;
        case NOT_LANDED:
            end_awaited(s, 0);
            err = SK_ERR_UNAVAILABLE;
            goto out;
        default: /* answered unavailable: the callers cannot know either */
            end_awaited(s, 0);
            reset_results(first, n, SK_ERR_UNAVAILABLE);
            goto out;
        }
    }
    roll_back = 0;
    atomic_fetch_add(&s->commits, 1);
    if (rev > rev0)
        hand_off(s, rev0, rev, first, n);
    end_awaited(s, rev);
out:
    if (roll_back)
        s->ops->rollback(s->wconn);
    atomic_fetch_add(&s->round_trips, (long long)s->ops->take_round_trips(s->wconn));
    return err;
}

/* Reports p's outcome to its caller and frees it. */
static void finish(pending *p)
{
    if (p->kv_done) {
        if (p->err == SK_OK)
            *p->kv_dest = p->kv_res;
        p->kv_done(p->arg, p->err);
    } else {
        p->done(p->arg, p->err, p->err == SK_OK ? &p->result : NULL);
    }
    sk_row_clear(&p->result);
    json_decref(p->w.object);
    free(p->pre_text);
    free(p);
}

static void process(sk_store *s, pending *batch, int n)
{
    /* a connection closed while idle would fail the batch into a replay */
    if (s->ops->idle_ok && !s->ops->idle_ok(s->wconn))
        reconnect_writer(s);
    if (run_batch(s, batch, n) != SK_OK) {
        atomic_fetch_add(&s->batch_replays, 1);
        reset_results(batch, n, SK_OK);
        /* Replay one per transaction so a bad intent fails alone. A dropped
         * connection looks like one until the writer reconnects; if it
         * cannot, the database is unreachable and the rest fail unrun. */
        int reachable = 1;
        pending *p = batch;
        for (int i = 0; i < n; i++, p = p->next) {
            sk_err err = reachable ? run_batch(s, p, 1) : SK_ERR_UNAVAILABLE;
            /* a full disk is no dropped connection: a new one would fail to open */
            if (err != SK_OK && err != SK_ERR_NO_SPACE && reachable) {
                reset_results(p, 1, SK_OK);
                reachable = reconnect_writer(s);
                err = reachable ? run_batch(s, p, 1) : SK_ERR_UNAVAILABLE;
            }
            if (err == SK_OK)
                continue;
            /* the database's classes (a bug or corruption is internal) */
            reset_results(p, 1,
                          err == SK_ERR_UNAVAILABLE || err == SK_ERR_TIMEOUT ||
                                  err == SK_ERR_NO_SPACE
                              ? err
                              : SK_ERR_INTERNAL);
            if (p->kv || p->lease)
                sk_log_error("store: an etcd %s failed (%s)", p->kv ? "transaction" : "lease write",
                             sk_err_name(p->err));
            else
                sk_log_error("store: write of %s/%s/%s failed (%s)", p->w.resource, p->w.ns,
                             p->w.name, sk_err_name(p->err));
        }
    }
    pending *p = batch;
    for (int i = 0; i < n; i++) {
        pending *next = p->next;
        if (p->err == SK_ERR_NO_SPACE || p->err == SK_OK)
            atomic_store(&s->out_of_space, p->err == SK_ERR_NO_SPACE);
        finish(p);
        p = next;
    }
}

int sk_store_out_of_space(const sk_store *s)
{
    return atomic_load(&s->out_of_space);
}

static void *writer_main(void *arg)
{
    sk_store *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->head && !s->stopping)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->head) {
            pthread_mutex_unlock(&s->mu);
            break;
        }
        pending *batch = s->head;
        pending *last = batch;
        int n = 1;
        while (last->next && n < MAX_BATCH) {
            last = last->next;
            n++;
        }
        s->head = last->next;
        if (!s->head)
            s->tail = NULL;
        last->next = NULL;
        pthread_mutex_unlock(&s->mu);
        process(s, batch, n);
    }
    return NULL;
}

/* Queues p for the writer (or fails it at once if writes have stopped). */
static void enqueue(sk_store *s, pending *p)
{
    pthread_mutex_lock(&s->mu);
    int stopping = s->stopping;
    if (!stopping) {
        if (s->tail)
            s->tail->next = p;
        else
            s->head = p;
        s->tail = p;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    if (stopping) {
        p->err = SK_ERR_UNAVAILABLE;
        finish(p);
    }
}

/*
 * Dumps p's object on the caller's thread, with an empty resourceVersion
 * whose place is kept, so that the writer, the one serial stage of every
 * write, only splices the revision in: the dump was 5-8% of the writer's
 * time. Text that jansson writes (strings with bytes above 0x7f, reals)
 * has no mark, and the writer dumps it as before.
 */
static void predump(pending *p)
{
    json_t *meta = json_object_get(p->w.object, "metadata");
    if (!json_is_object(meta))
        return;
    json_t *mark = json_string("");
    json_object_set_new(meta, "resourceVersion", mark);
    size_t len, at;
    char *text = sk_jsontext_dump_marked(p->w.object, mark, &len, &at);
    if (text && at != SIZE_MAX) {
        SK_CHECK(at + 2 <= len && text[at] == '"' && text[at + 1] == '"');
        p->pre_text = text;
        p->pre_len = len;
        p->pre_at = at;
    } else {
        free(text);
    }
}

void sk_store_write_async(sk_store *s, sk_write *w, sk_write_done_fn done, void *arg)
{
    SK_CHECK(w->op == SK_WRITE_DELETE || json_is_object(w->object));
    pending *p = calloc(1, sizeof *p);
    SK_CHECK_ALLOC(p);
    p->w = *w;
    p->done = done;
    p->arg = arg;
    w->object = NULL;
    if (p->w.op != SK_WRITE_DELETE)
        predump(p);
    enqueue(s, p);
}

typedef struct sync_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int finished;
    sk_err err;
    sk_row *out;
} sync_wait;

static void sync_done(void *arg, sk_err err, const sk_row *result)
{
    sync_wait *sw = arg;
    pthread_mutex_lock(&sw->mu);
    sw->err = err;
    if (err == SK_OK && sw->out)
        sk_row_copy(sw->out, result);
    sw->finished = 1;
    pthread_cond_signal(&sw->cv);
    pthread_mutex_unlock(&sw->mu);
}

/* Waits until sw's intent has finished; its outcome. */
static sk_err sync_wait_end(sync_wait *sw)
{
    pthread_mutex_lock(&sw->mu);
    while (!sw->finished)
        pthread_cond_wait(&sw->cv, &sw->mu);
    pthread_mutex_unlock(&sw->mu);
    return sw->err;
}

sk_err sk_store_write(sk_store *s, sk_write *w, sk_row *out)
{
    sync_wait sw = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, SK_OK, out};
    sk_store_write_async(s, w, sync_done, &sw);
    return sync_wait_end(&sw);
}

/* Queues p (an etcd transaction or lease operation) and waits for it. */
static sk_err run_pending(sk_store *s, pending *p)
{
    sync_wait sw = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, SK_OK, NULL};
    p->done = sync_done;
    p->arg = &sw;
    enqueue(s, p);
    return sync_wait_end(&sw);
}

void sk_store_kv_txn_async(sk_store *s, const sk_kv_txn *txn, sk_arena *a, sk_kv_txn_result *out,
                           sk_kv_done_fn done, void *arg)
{
    pending *p = calloc(1, sizeof *p);
    SK_CHECK_ALLOC(p);
    p->kv = txn;
    p->kv_arena = a;
    p->kv_out = &p->kv_res;
    p->kv_dest = out;
    p->kv_done = done;
    p->arg = arg;
    enqueue(s, p);
}

static void kv_sync_done(void *arg, sk_err err)
{
    sync_done(arg, err, NULL);
}

sk_err sk_store_kv_txn(sk_store *s, const sk_kv_txn *txn, sk_arena *a, sk_kv_txn_result *out)
{
    sync_wait sw = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, SK_OK, NULL};
    sk_store_kv_txn_async(s, txn, a, out, kv_sync_done, &sw);
    return sync_wait_end(&sw);
}

sk_err sk_store_lease_write(sk_store *s, const sk_lease_op *op, sk_arena *a, sk_lease_result *out)
{
    sk_lease_result res = {0};
    pending *p = calloc(1, sizeof *p);
    SK_CHECK_ALLOC(p);
    p->lease = op;
    p->kv_arena = a;
    p->lease_out = &res;
    sk_err err = run_pending(s, p);
    if (err == SK_OK)
        *out = res;
    return err;
}

/* ---- open / close ------------------------------------------------------- */

/* SK_ERR_UNAVAILABLE only for a database server that may answer later
 * (store.h, sk_store_open): a file that cannot be opened or migrated now
 * will not be by waiting. */
static sk_err open_and_migrate(const char *url, const sk_backend_ops **ops_out, sk_conn **out,
                               char **errmsg)
{
    const sk_backend_ops *ops = backend_for(url);
    sk_conn *c = NULL;
    char *why = NULL;
    sk_err err = ops->connect(url, &c, errmsg);
    if (err != SK_OK)
        goto out;
    err = ops->migrate(c, &why);
    if (err != SK_OK) {
        if (asprintf(errmsg, "cannot migrate the %s database: %s", ops->name,
                     why ? why : "unknown error") < 0)
            *errmsg = NULL;
        ops->disconnect(c);
        goto out;
    }
    *ops_out = ops;
    *out = c;
out:
    free(why);
    if (err == SK_ERR_UNAVAILABLE && !ops->server)
        err = SK_ERR_INTERNAL;
    return err;
}

sk_err sk_store_migrate_only(const char *url, char **errmsg)
{
    const sk_backend_ops *ops;
    sk_conn *c;
    sk_err err = open_and_migrate(url, &ops, &c, errmsg);
    if (err == SK_OK)
        ops->disconnect(c);
    return err;
}

/*
 * Import (store.h, sk_store_kv_import). One writer's transaction on a
 * connection of its own, so the revision lock serialises it with any other
 * writer, and the emptiness check and the rows are one atomic step. The
 * rows go through kv_append, as the etcd face's writes do, so each keeps
 * its revision and sub-revision and the superseded flags (migration 0011)
 * come out as for any write: set on every row but its key's newest. Every
 * other column of sk_kv is the source's. The commit sets the counter to the
 * source's revision; set_compacted puts the read barrier where the
 * source's was, and the compaction cursor where the source's removals
 * ended. A follow-up (after_rev) appends the source's later revisions the
 * same way, checked against the revision it continues instead of emptiness.
 */
enum { IMPORT_CHUNK = 8192 };

typedef struct import_ctx {
    const sk_backend_ops *ops;
    sk_conn *c;
    int64_t rev, last_rev, last_sub, held;
    char **errmsg;
} import_ctx;

static sk_err import_row(void *arg, const sk_kv_row *row)
{
    import_ctx *x = arg;
    int64_t rev = row->kv.mod_rev;
    if (rev < 1 || rev > x->rev || rev < x->last_rev ||
        (rev == x->last_rev && row->sub <= x->last_sub) || row->sub < 0) {
        SK_CHECK(asprintf(x->errmsg, "row %lld.%d is out of order or beyond revision %lld",
                          (long long)rev, row->sub, (long long)x->rev) >= 0);
        return SK_ERR_INVALID;
    }
    x->last_rev = rev;
    x->last_sub = row->sub;
    sk_err err = x->ops->kv_append(x->c, row);
    /* PostgreSQL holds appended rows back until the next statement: send
     * them in chunks, so an import's memory does not grow with the file. */
    if (err == SK_OK && x->ops->kv_flush && ++x->held % IMPORT_CHUNK == 0)
        err = x->ops->kv_flush(x->c);
    return err;
}

static sk_err import_lease(void *arg, const sk_lease *l)
{
    import_ctx *x = arg;
    return x->ops->lease_put(x->c, l);
}

static int any_lease(void *arg, const sk_lease *l)
{
    (void)l;
    *(int *)arg = 1;
    return 1;
}

sk_err sk_store_kv_import(const char *url, const sk_store_import *imp, char **errmsg)
{
    SK_CHECK(imp->after_rev ? imp->after_rev <= imp->rev
                            : imp->compact_done <= imp->compact_rev && imp->compact_rev <= imp->rev);
    char *why = NULL;
    /* a follow-up's rows come strictly after the revision it continues */
    import_ctx x = {NULL, NULL, imp->rev, imp->after_rev, imp->after_rev ? INT64_MAX : -1, 0,
                    &why};
    int64_t rev = -1, writer = 0;
    int leased = 0, begun = 0;
    sk_err err = open_and_migrate(url, &x.ops, &x.c, &why);
    if (err != SK_OK) {
        *errmsg = why;
        return err;
    }
    if ((err = x.ops->begin_write(x.c, &rev)) != SK_OK)
        goto out;
    begun = 1;
    if ((err = x.ops->leases(x.c, INT64_MAX, 1, any_lease, &leased)) != SK_OK)
        goto out;
    if (imp->after_rev && rev != imp->after_rev) {
        SK_CHECK(asprintf(&why, "the store moved away from the import (revision %lld, not "
                                "%lld): it was served or written meanwhile",
                          (long long)rev, (long long)imp->after_rev) >= 0);
        err = SK_ERR_CONFLICT;
        goto out;
    }
    if (!imp->after_rev && (rev != 0 || leased)) {
        SK_CHECK(asprintf(&why, "the store is not empty (revision %lld%s): import only into a "
                                  "new one, before it is first served",
                          (long long)rev, leased ? ", leases" : "") >= 0);
        err = SK_ERR_CONFLICT;
        goto out;
    }
    if ((imp->rows && (err = imp->rows(imp->arg, import_row, &x)) != SK_OK) ||
        (imp->leases && (err = imp->leases(imp->arg, import_lease, &x)) != SK_OK))
        goto out;
    if (!imp->after_rev &&
        (err = x.ops->set_compacted(x.c, imp->compact_rev, imp->compact_done)) != SK_OK)
        goto out;
    while (writer <= 0) { /* as sk_store_open's writer id */
        sk_random_bytes(&writer, sizeof writer);
        writer &= INT64_MAX;
    }
    /* A failed commit rolled back (one connection, no one else's batch):
     * the store is still empty. */
    begun = 0;
    if ((err = x.ops->commit_write(x.c, imp->rev, writer, 1)) != SK_OK)
        x.ops->rollback(x.c);
out:
    if (begun)
        x.ops->rollback(x.c);
    if (err != SK_OK && !why)
        SK_CHECK(asprintf(&why, "the import failed: %s", sk_err_name(err)) >= 0);
    if (err != SK_OK)
        *errmsg = why;
    x.ops->disconnect(x.c);
    return err;
}

sk_err sk_store_open(const char *url, sk_store **out, char **errmsg)
{
    sk_store *s = calloc(1, sizeof *s);
    SK_CHECK_ALLOC(s);
    sk_err err = open_and_migrate(url, &s->ops, &s->wconn, errmsg);
    if (err != SK_OK) {
        free(s);
        return err;
    }
    s->url = strdup(url);
    SK_CHECK_ALLOC(s->url);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    SK_CHECK(asprintf(&s->claimant, "%s:%d", host, (int)getpid()) >= 0);
    while (s->writer_id <= 0) { /* 63 random bits, not 0 (no batch yet) */
        sk_random_bytes(&s->writer_id, sizeof s->writer_id);
        s->writer_id &= INT64_MAX;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_mutex_init(&s->pool_mu, NULL);
    pthread_mutex_init(&s->secret_mu, NULL);
    pthread_mutex_init(&s->commit_mu, NULL);
    pthread_mutex_init(&s->notify_mu, NULL);
    sk_cond_init_monotonic(&s->commit_cv);
    s->handoff = sk_handoff_new(HANDOFF_ROWS, HANDOFF_BYTES);
    s->range_memo = sk_range_memo_new();
    SK_CHECK(pthread_create(&s->writer, NULL, writer_main, s) == 0);
    pthread_setname_np(s->writer, "sk-writer");
    *out = s;
    return SK_OK;
}

void sk_store_stop_writes(sk_store *s)
{
    pthread_mutex_lock(&s->mu);
    int was = s->stopping;
    s->stopping = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (!was)
        pthread_join(s->writer, NULL);
}

void sk_store_close(sk_store *s)
{
    if (!s)
        return;
    sk_store_stop_writes(s);
    s->ops->disconnect(s->wconn);
    for (int i = 0; i < s->pool_len; i++)
        s->ops->disconnect(s->pool[i]);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->pool_mu);
    pthread_mutex_destroy(&s->secret_mu);
    pthread_mutex_destroy(&s->commit_mu);
    pthread_mutex_destroy(&s->notify_mu);
    if (s->notify_conn)
        s->ops->disconnect(s->notify_conn);
    pthread_cond_destroy(&s->commit_cv);
    sk_handoff_free(s->handoff);
    sk_range_memo_free(s->range_memo);
    free(s->url);
    free(s->claimant);
    free(s);
}

void sk_store_set_codec(sk_store *s, const sk_store_codec *codec)
{
    s->codec = codec;
}

const char *sk_store_backend_name(const sk_store *s)
{
    return s->ops->name;
}

int64_t sk_store_batch_replays(const sk_store *s)
{
    return atomic_load(&s->batch_replays);
}

int64_t sk_store_writer_round_trips(const sk_store *s)
{
    return atomic_load(&s->round_trips);
}

int64_t sk_store_commits(const sk_store *s)
{
    return atomic_load(&s->commits);
}

sk_store_resolved sk_store_commits_resolved(const sk_store *s)
{
    return (sk_store_resolved){.committed = atomic_load(&s->resolved[LANDED]),
                               .not_committed = atomic_load(&s->resolved[NOT_LANDED]),
                               .unknown = atomic_load(&s->resolved[UNKNOWN])};
}

/* ---- reads -------------------------------------------------------------- */

/* Records a compact revision read from the database (it only grows). */
static void saw_compact(sk_store *s, int64_t compact)
{
    long long seen = atomic_load(&s->compact_seen);
    while (compact > seen && !atomic_compare_exchange_weak(&s->compact_seen, &seen, compact))
        ;
}

sk_err sk_store_revisions(sk_store *s, int64_t *rev_out, int64_t *compact_rev_out)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    int64_t rev = 0, compact = 0;
    err = s->ops->revisions(c, &rev, &compact);
    pool_put(s, c, err);
    if (err == SK_OK) {
        saw_compact(s, compact);
        *rev_out = rev;
        if (compact_rev_out)
            *compact_rev_out = compact;
    }
    return err;
}

/* After a gated read came back empty (see the top): SK_ERR_EXPIRED if rev is
 * below the compact revision now, else SK_OK (the answer was truly empty). */
static sk_err expired_if_compacted(sk_store *s, sk_conn *c, int64_t rev)
{
    int64_t cur, compact;
    sk_err err = s->ops->revisions(c, &cur, &compact);
    if (err == SK_OK)
        saw_compact(s, compact);
    if (err == SK_OK && rev < compact)
        err = SK_ERR_EXPIRED;
    return err;
}

/* Passes rows on to the caller's visitor, counting them, their values
 * read through the codec. */
typedef struct counted {
    const sk_store *s;
    sk_row_fn fn;
    void *arg;
    int64_t n;
} counted;

static int count_row(void *arg, const sk_row *row)
{
    counted *k = arg;
    k->n++;
    sk_row plain = *row; /* borrowed fields; only the value may be replaced */
    char *text = opened_value(k->s, row, &plain.value_len, &plain.stale);
    if (!text)
        return k->fn(k->arg, row);
    plain.value = text;
    int stop = k->fn(k->arg, &plain);
    free(text);
    return stop;
}

sk_err sk_store_get(sk_store *s, const char *resource, const char *ns, const char *name,
                    int64_t at_rev, sk_row *out)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    sk_row row = {0};
    err = s->ops->get_at(c, resource, ns, name, at_rev, &row);
    if (err == SK_ERR_NOT_FOUND && at_rev > 0) {
        sk_err why = expired_if_compacted(s, c, at_rev);
        if (why != SK_OK)
            err = why;
    }
    if (err == SK_OK && row.deleted)
        err = SK_ERR_NOT_FOUND;
    if (err == SK_OK) {
        open_row(s, &row);
        *out = row;
        memset(&row, 0, sizeof row);
    }
    sk_row_clear(&row);
    pool_put(s, c, err);
    return err;
}

/* A one-namespace range with a start key from another namespace starts at
 * the range's beginning or lies wholly before the key: backends only ever
 * see a start name inside the namespace. *out is q's range put so; 0 when
 * it holds nothing. */
static int list_range(const sk_list_query *q, sk_list_query *out)
{
    *out = *q;
    if (q->ns && q->after_ns) {
        int order = strcmp(q->after_ns, q->ns);
        if (order > 0)
            return 0;
        if (order < 0)
            out->after_ns = out->after_name = NULL;
    }
    return 1;
}

sk_err sk_store_list(sk_store *s, const sk_list_query *q, sk_row_fn fn, void *arg)
{
    SK_CHECK(q->rev > 0 && q->limit > 0);
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    counted k = {s, fn, arg, 0};
    sk_list_query nq;
    if (list_range(q, &nq))
        err = s->ops->list(c, &nq, count_row, &k);
    if (err == SK_OK && k.n == 0)
        err = expired_if_compacted(s, c, q->rev);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_count(sk_store *s, const sk_list_query *q, int64_t *count_out)
{
    SK_CHECK(q->rev > 0);
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    int64_t n = 0;
    sk_list_query nq;
    if (list_range(q, &nq))
        err = s->ops->count(c, &nq, &n);
    if (err == SK_OK && n == 0)
        err = expired_if_compacted(s, c, q->rev);
    pool_put(s, c, err);
    if (err == SK_OK)
        *count_out = n;
    return err;
}

static sk_err kv_range(sk_store *s, const sk_kv_range *q, sk_arena *a, sk_kv_fn fn, void *arg,
                       sk_kv_range_result *out, int64_t *rev_out)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    int64_t cur = 0, compact = 0;
    sk_kv_range_result res = {0};
    if ((err = s->ops->revisions(c, &cur, &compact)) != SK_OK)
        goto out;
    int64_t at = q->rev > 0 ? q->rev : cur;
    sk_kv_bounds b = sk_kv_bounds_of(a, q->key, q->key_len, q->end, q->end_len);
    int64_t known = 0;
    int paged = q->limit > 0 && !q->count_only;
    if (at > cur)
        err = SK_ERR_INVALID;
    else if (at < compact)
        err = SK_ERR_EXPIRED;
    else
        err = sk_kv_read(s->ops, c, q, at,
                         paged && sk_range_memo_find(s->range_memo, &b, at, &known) ? &known : NULL,
                         a, fn, arg, &res);
    /* Gated reads (see the top): nothing at all may mean compacted since. */
    if (err == SK_OK && res.count == 0)
        err = expired_if_compacted(s, c, at);
    /* The next page, from the last key + "\0" at this revision, holds the
     * rest of this one's count (rangememo.h). */
    if (err == SK_OK && paged && res.more && res.count > res.n_kvs) {
        unsigned char *next = sk_arena_alloc_uninit(a, res.last_key_len + 1);
        memcpy(next, res.last_key, res.last_key_len);
        next[res.last_key_len] = 0;
        sk_range_memo_put(s->range_memo, &b, next, res.last_key_len + 1, at, res.count - res.n_kvs);
    }
out:
    pool_put(s, c, err);
    if (err == SK_OK) {
        *out = res;
        *rev_out = cur;
    }
    return err;
}

sk_err sk_store_kv_range(sk_store *s, const sk_kv_range *q, sk_arena *a, sk_kv_range_result *out,
                         int64_t *rev_out)
{
    return kv_range(s, q, a, NULL, NULL, out, rev_out);
}

sk_err sk_store_kv_range_each(sk_store *s, const sk_kv_range *q, sk_arena *a, sk_kv_fn fn,
                              void *arg, sk_kv_range_result *out, int64_t *rev_out)
{
    return kv_range(s, q, a, fn, arg, out, rev_out);
}

sk_err sk_store_history(sk_store *s, int64_t after_rev, int64_t upto_rev, int limit, sk_row_fn fn,
                        void *arg)
{
    /* This process's own commits, from memory when they continue after_rev
     * (see the top); the compact gate as SQL's, by the last one seen. */
    if (after_rev >= atomic_load(&s->compact_seen) &&
        sk_handoff_visit(s->handoff, after_rev, upto_rev, limit, fn, arg) > 0)
        return SK_OK;
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    counted k = {s, fn, arg, 0};
    err = s->ops->history(c, after_rev, limit, count_row, &k);
    if (err == SK_OK && k.n == 0)
        err = expired_if_compacted(s, c, after_rev);
    pool_put(s, c, err);
    return err;
}

/* Passes changes on to the caller's visitor, counting them. */
typedef struct counted_kv {
    sk_kv_change_fn fn;
    void *arg;
    int64_t n;
} counted_kv;

static int count_change(void *arg, const sk_kv_row *row, const sk_kv *prev)
{
    counted_kv *k = arg;
    k->n++;
    return k->fn(k->arg, row, prev);
}

sk_err sk_store_kv_changes(sk_store *s, int64_t after_rev, int64_t upto_rev, sk_kv_change_fn fn,
                           void *arg)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    counted_kv k = {fn, arg, 0};
    err = s->ops->kv_changes(c, after_rev, upto_rev, count_change, &k);
    if (err == SK_OK && k.n == 0)
        err = expired_if_compacted(s, c, after_rev + 1);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_kv_kept(sk_store *s, int64_t upto_rev, int64_t compact_rev, sk_kv_row_fn fn,
                        void *arg)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    err = s->ops->kv_kept(c, upto_rev, compact_rev, fn, arg);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_kv_rows_after(sk_store *s, int64_t rev, int sub, int limit, sk_kv_row_fn fn,
                              void *arg)
{
    SK_CHECK(limit > 0);
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    err = s->ops->kv_rows_after(c, rev, sub, limit, fn, arg);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_kv_docs_put(sk_store *s, const sk_kv_doc *docs, size_t n)
{
    if (!n)
        return SK_OK;
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    err = s->ops->kv_docs_put(c, docs, n);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_kv_docs_last(sk_store *s, int64_t *rev_out, int *sub_out)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    int64_t rev = 0;
    int sub = 0;
    err = s->ops->kv_docs_last(c, &rev, &sub);
    pool_put(s, c, err);
    if (err == SK_OK) {
        *rev_out = rev;
        *sub_out = sub;
    }
    return err;
}

/* One wait for a commit notification from any process, up to wait_ms, on
 * the store's notification connection (opened on first use, reopened after
 * an error); what it tells is folded into the store's notify_mu fields. */
static sk_err wait_notify(sk_store *s, int wait_ms)
{
    sk_err err = SK_OK;
    if (!s->notify_conn) {
        char *msg = NULL;
        if ((err = s->ops->connect(s->url, &s->notify_conn, &msg)) != SK_OK) {
            sk_log_warn("store: cannot open the notification connection: %s", msg ? msg : "");
            free(msg);
            return err;
        }
    }
    int64_t notified = 0;
    if ((err = s->ops->wait_notify(s->notify_conn, wait_ms, &notified)) != SK_OK) {
        s->ops->disconnect(s->notify_conn);
        s->notify_conn = NULL;
        s->must_read_counter = 1; /* notifications may have been missed */
    } else if (notified < 0) {
        s->must_read_counter = 1;
    } else if (notified > s->known_rev) {
        s->known_rev = notified;
    }
    return err;
}

/* Under notify_mu and commit_mu: the known revision is one of the commit
 * the writer awaits (only revisions above the one before it, lo, are its
 * own), not yet handed off. */
static int own_commit_pending(const sk_store *s)
{
    return s->known_rev > s->awaited_lo && s->known_rev <= s->awaited_hi;
}

sk_err sk_store_wait_commit(sk_store *s, int64_t after_rev, int timeout_ms, int64_t *rev_out,
                            int64_t *compact_rev_out)
{
    /* SQLite: this process's writer signals commit_cv, and the counter is
     * read after each wake. PostgreSQL: every process's commit NOTIFYs with
     * its revision, which is trusted as read (see backend.h), so a stream
     * of commits costs no query each; the counter is still read at least
     * this often, should a notification be lost, and for the compact
     * revision, which other processes move without notifying. This
     * process's own commits count as soon as they are made. */
    const int poll_ms = s->ops->wait_notify ? 1000 : 100;
    pthread_mutex_lock(&s->notify_mu);
    int64_t deadline = sk_now_ms() + timeout_ms;
    sk_err err = SK_OK;
    for (;;) {
        int64_t now = sk_now_ms();
        if (!s->ops->wait_notify || s->must_read_counter ||
            now - s->counter_read_ms >= poll_ms) {
            int64_t rev = 0, compact = 0;
            if ((err = sk_store_revisions(s, &rev, &compact)) != SK_OK)
                break;
            if (rev > s->known_rev)
                s->known_rev = rev;
            s->known_compact = compact;
            s->counter_read_ms = now;
            s->must_read_counter = 0;
            now = sk_now_ms();
        }
        pthread_mutex_lock(&s->commit_mu);
        /* A commit is in the database, for PostgreSQL's NOTIFY as for
         * SQLite's counter, a moment before its writer hears the COMMIT
         * answer: revisions this process is committing are known before
         * they are handed off, and reading them now would read them from
         * SQL. Wait for the hand-off instead (the writer ends the wait
         * whether the commit succeeds or not). */
        if (own_commit_pending(s)) {
            struct timespec answer_by;
            sk_deadline_after_ms(&answer_by, deadline > now ? deadline - now : 0);
            while (own_commit_pending(s) &&
                   pthread_cond_timedwait(&s->commit_cv, &s->commit_mu, &answer_by) == 0)
                ;
            now = sk_now_ms();
        }
        int64_t rev = s->committed_rev > s->known_rev ? s->committed_rev : s->known_rev;
        pthread_mutex_unlock(&s->commit_mu);
        if (rev > after_rev || now >= deadline) {
            *rev_out = rev;
            *compact_rev_out = s->known_compact;
            break;
        }
        int64_t until_read = s->counter_read_ms + poll_ms - now;
        int64_t wait_ms = deadline - now < until_read ? deadline - now : until_read;
        if (wait_ms < 0)
            wait_ms = 0;
        if (s->ops->wait_notify) {
            if ((err = wait_notify(s, (int)wait_ms)) != SK_OK)
                break;
            continue;
        }
        struct timespec until;
        sk_deadline_after_ms(&until, (int)wait_ms);
        pthread_mutex_lock(&s->commit_mu);
        while (s->committed_rev <= after_rev &&
               pthread_cond_timedwait(&s->commit_cv, &s->commit_mu, &until) == 0)
            ;
        pthread_mutex_unlock(&s->commit_mu);
    }
    pthread_mutex_unlock(&s->notify_mu);
    return err;
}

sk_err sk_store_compact(sk_store *s, int64_t upto_rev, int64_t *removed_out)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    int64_t total = 0;
    int done = 0;
    while (err == SK_OK && !done) {
        int64_t removed = 0;
        err = s->ops->compact_batch(c, upto_rev, COMPACT_BATCH, &removed, &done);
        total += removed;
    }
    /* The etcd keyspace follows the compact revision just set: its rows are
     * only removed once reads below that revision already expire. */
    for (done = 0; err == SK_OK && !done;) {
        int64_t removed = 0;
        err = s->ops->kv_compact(c, KV_COMPACT_SPAN, &removed, &done);
        total += removed;
    }
    int64_t cur, compact;
    if (err == SK_OK && (err = s->ops->revisions(c, &cur, &compact)) == SK_OK)
        saw_compact(s, compact); /* this process's history reads expire at once */
    pool_put(s, c, err);
    if (err == SK_OK && removed_out)
        *removed_out = total;
    return err;
}

sk_err sk_store_compact_claim(sk_store *s, int64_t interval_ms, int *won_out)
{
    SK_CHECK(interval_ms >= 0);
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    int won = 0;
    err = s->ops->compact_claim(c, interval_ms, s->claimant, &won);
    pool_put(s, c, err);
    if (err == SK_OK)
        *won_out = won;
    return err;
}

sk_err sk_store_expired(sk_store *s, int64_t now_ms, int limit, sk_row_fn fn, void *arg)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    counted k = {s, fn, arg, 0};
    err = s->ops->expired(c, now_ms, limit, count_row, &k);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_lease_get(sk_store *s, int64_t id, sk_lease *out)
{
    sk_conn *c = NULL;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    err = s->ops->lease_get(c, id, out);
    pool_put(s, c, err == SK_ERR_NOT_FOUND ? SK_OK : err);
    return err;
}

sk_err sk_store_leases(sk_store *s, int64_t before_ms, int limit, sk_lease_fn fn, void *arg)
{
    sk_conn *c = NULL;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    err = s->ops->leases(c, before_ms, limit, fn, arg);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_lease_keys(sk_store *s, int64_t id, sk_kv_fn fn, void *arg)
{
    sk_conn *c = NULL;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    err = s->ops->kv_lease_keys(c, id, fn, arg);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_claims(sk_store *s, const char *kind, sk_claim_fn fn, void *arg)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    err = s->ops->claims_list(c, kind, fn, arg);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_reclaim(sk_store *s)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    err = s->ops->reclaim(c);
    pool_put(s, c, err);
    return err;
}

sk_err sk_store_db_size(sk_store *s, int64_t *bytes_out)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    int64_t n = 0;
    err = s->ops->db_size(c, &n);
    pool_put(s, c, err);
    if (err == SK_OK)
        *bytes_out = n;
    return err;
}

sk_err sk_store_flags_wrong(sk_store *s, const char *resource, int64_t *count_out)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    int64_t n = 0;
    err = s->ops->flags_wrong(c, resource, &n);
    pool_put(s, c, err);
    if (err == SK_OK)
        *count_out = n;
    return err;
}

sk_err sk_store_resources(sk_store *s, sk_resource_fn fn, void *arg)
{
    sk_conn *c;
    sk_err err = pool_get(s, &c);
    if (err != SK_OK)
        return err;
    err = s->ops->resources(c, fn, arg);
    pool_put(s, c, err);
    return err;
}

static int hex_nibble(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

sk_err sk_store_token_secret(sk_store *s, unsigned char out[32])
{
    sk_err err = SK_OK;
    pthread_mutex_lock(&s->secret_mu);
    if (!s->have_secret) {
        sk_conn *c;
        char *hex = NULL;
        if ((err = pool_get(s, &c)) != SK_OK)
            goto out;
        err = s->ops->meta_get(c, "token_secret", &hex);
        pool_put(s, c, err);
        if (err != SK_OK)
            goto out;
        if (strlen(hex) != 64)
            err = SK_ERR_INTERNAL;
        for (int i = 0; i < 32 && err == SK_OK; i++) {
            int hi = hex_nibble(hex[2 * i]), lo = hi < 0 ? -1 : hex_nibble(hex[2 * i + 1]);
            if (hi < 0 || lo < 0)
                err = SK_ERR_INTERNAL;
            else
                s->secret[i] = (unsigned char)(hi << 4 | lo);
        }
        free(hex);
        if (err != SK_OK)
            goto out;
        s->have_secret = 1;
    }
    memcpy(out, s->secret, 32);
out:
    pthread_mutex_unlock(&s->secret_mu);
    return err;
}
