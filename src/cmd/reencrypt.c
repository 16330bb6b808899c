/*
 * reencrypt.c - `sqlkube reencrypt` (see reencrypt.h).
 *
 * Why the store and not a running server. The rewrite must be a proper
 * revision that every instance's watch cache sees, and must never undo a
 * concurrent update. The store gives both to any process that opens the
 * database: revisions come from the database's counter under its revision
 * lock (BEGIN IMMEDIATE in SQLite, a row lock in PostgreSQL), every
 * instance follows other processes' commits (PostgreSQL's NOTIFY, SQLite's
 * counter polled every 100 ms), and an update preconditioned on the
 * revision it read fails, instead of overwriting, when anything wrote the
 * object in between. That is what `sqlkube compact` already relies on to
 * run beside live servers. A server-side admin endpoint would add an
 * authenticated surface and a long-running request for no gain in safety:
 * it would write through the same store calls, and would still reach only
 * the one instance it is sent to, while the others sharing the database
 * need the same configuration anyway. So the command opens the database
 * itself, with the file it is given as its codec, like any instance.
 *
 * What is rewritten. A live object whose stored value the file's first
 * provider and key did not write (the store's read marks it stale) is
 * updated to the very object read, preconditioned on its revision: the
 * writer stamps the new resourceVersion and seals it with the first key.
 * Only metadata.resourceVersion changes, as when kube's GuaranteedUpdate
 * writes an unchanged but stale object. A recorded expiry (Events) moves
 * to the new revision with its time kept. On a conflict the object is read
 * again: sealed with the first key by now (another writer did it) it is
 * skipped, else it is rewritten from the newer version; so a concurrent
 * update is either what is rewritten or what wins.
 *
 * An object no configured key decrypts is named on stderr with the key
 * and reason, counted as failed and left as it is (no write is attempted
 * for it); the others are still rewritten, and the exit status is 1.
 *
 * Each page's rewrites are queued together and their answers awaited, so
 * the store's writer commits them a batch at a time (one fsync for up to
 * a page), not one transaction per object; conflicts are then settled one
 * object at a time.
 *
 * Lists page at one snapshot revision in key order; objects created after
 * it were written by whoever created them. A snapshot that compaction
 * overtakes is taken again at the current revision, from the same key.
 */
#include "cmd/reencrypt.h"

#include "cmd/encryption.h"
#include "core/check.h"
#include "store/store.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Objects read per page: one list statement each. */
#define PAGE 256
/* Conflicts one object may meet before it is given up on: only an object
 * updated without pause, by writers still on an old key, meets many. */
#define MAX_ATTEMPTS 100

typedef struct counts {
    long long rewritten, skipped, failed;
} counts;

typedef struct rewriter {
    sk_store *store;
    const sk_store_codec *codec;
    counts c;
} rewriter;

typedef struct page {
    sk_row rows[PAGE];
    int n;
} page;

static int keep_row(void *arg, const sk_row *row)
{
    page *p = arg;
    sk_row_copy(&p->rows[p->n++], row);
    return 0;
}

/* Says on stderr why row (its value as read) cannot be rewritten: the
 * codec's reason when no key reads it, else that it is no object. */
static void report_unreadable(const rewriter *rw, const sk_row *row)
{
    char *plain = NULL, *msg = NULL;
    size_t n = 0;
    int stale = 0;
    if (rw->codec->open(rw->codec->ctx, row->resource, row->ns, row->name, row->value,
                        row->value_len, &plain, &n, &stale, &msg) != SK_OK)
        fprintf(stderr, "sqlkube: %s %s%s%s (revision %lld): %s; left as it is\n", row->resource,
                row->ns, *row->ns ? "/" : "", row->name, (long long)row->rev, msg);
    else
        fprintf(stderr,
                "sqlkube: %s %s%s%s (revision %lld): its stored value is not an object with a "
                "metadata.uid; left as it is\n",
                row->resource, row->ns, *row->ns ? "/" : "", row->name, (long long)row->rev);
    free(plain);
    free(msg);
}

/* The object of row if it can be written back (an object with a uid, as
 * the writer requires), else NULL. New reference. */
static json_t *object_of(const sk_row *row)
{
    json_t *obj = json_loadb(row->value, row->value_len, 0, NULL);
    json_t *uid = json_object_get(json_object_get(obj, "metadata"), "uid");
    if (!json_is_string(uid)) {
        json_decref(obj);
        obj = NULL;
    }
    return obj;
}

/* What row needs: nothing (counted skipped), nothing it can have (counted
 * failed, said on stderr), or a write of *obj (new). */
enum { SKIP, FAIL, WRITE };
static int classify(rewriter *rw, const sk_row *row, json_t **obj)
{
    int what = WRITE;
    json_t *o = NULL;
    /* Not stale and an object: its first key wrote it. A value the codec
     * could not read comes back as stored, never stale, and is no JSON
     * object (a sealed value starts with kube's prefix). */
    if (!row->stale && row->value_len > 0 && row->value[0] == '{') {
        rw->c.skipped++;
        what = SKIP;
    } else if (!(o = object_of(row))) {
        report_unreadable(rw, row);
        rw->c.failed++;
        what = FAIL;
    } else {
        *obj = o;
    }
    return what;
}

/* The rewrite of row: the object as read, at the revision read. */
static sk_write rewrite_of(const sk_row *row, json_t *obj)
{
    return (sk_write){.op = SK_WRITE_UPDATE,
                      .resource = row->resource,
                      .ns = row->ns,
                      .name = row->name,
                      .expected_rev = row->rev,
                      .object = obj,
                      .keep_expiry = 1};
}

/* Counts the answer err to the rewrite of *row; on a conflict reads the
 * object again (into *row) and decides again, rewriting it one write at a
 * time until it is done. An error only when the store fails (then the
 * command stops). */
static sk_err settle(rewriter *rw, sk_row *row, sk_err err)
{
    for (int attempt = 1;; attempt++) {
        if (err == SK_OK) {
            rw->c.rewritten++;
            break;
        }
        if (err == SK_ERR_NOT_FOUND) { /* deleted meanwhile: nothing left to seal */
            rw->c.skipped++;
            err = SK_OK;
            break;
        }
        if (err != SK_ERR_CONFLICT)
            break;
        sk_row now = {0};
        err = sk_store_get(rw->store, row->resource, row->ns, row->name, 0, &now);
        if (err != SK_OK)
            continue; /* NOT_FOUND: skipped, above; else the store's error */
        sk_row_clear(row);
        *row = now;
        json_t *obj = NULL;
        if (classify(rw, row, &obj) != WRITE)
            break;
        if (attempt == MAX_ATTEMPTS) {
            json_decref(obj);
            fprintf(stderr,
                    "sqlkube: %s %s%s%s: updated %d times while being rewritten; left as it "
                    "is, run again\n",
                    row->resource, row->ns, *row->ns ? "/" : "", row->name, MAX_ATTEMPTS);
            rw->c.failed++;
            break;
        }
        sk_write w = rewrite_of(row, obj);
        err = sk_store_write(rw->store, &w, NULL);
    }
    return err;
}

/* The page's writes in flight: queued together, so the writer commits
 * them in few transactions (group commit) instead of one each. */
typedef struct inflight {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pending;
    sk_err err[PAGE];
} inflight;

typedef struct slot {
    inflight *in;
    int i;
} slot;

static void write_done(void *arg, sk_err err, const sk_row *result)
{
    (void)result;
    slot *sl = arg;
    pthread_mutex_lock(&sl->in->mu);
    sl->in->err[sl->i] = err;
    if (--sl->in->pending == 0)
        pthread_cond_signal(&sl->in->cv);
    pthread_mutex_unlock(&sl->in->mu);
}

/* Rewrites what the page's rows need: every write queued at once, then
 * each answer settled. */
static sk_err rewrite_page(rewriter *rw, page *p)
{
    inflight in = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {SK_OK}};
    slot slots[PAGE];
    int queued[PAGE];
    for (int i = 0; i < p->n; i++) {
        json_t *obj = NULL;
        queued[i] = classify(rw, &p->rows[i], &obj) == WRITE;
        if (!queued[i])
            continue;
        slots[i] = (slot){&in, i};
        pthread_mutex_lock(&in.mu);
        in.pending++;
        pthread_mutex_unlock(&in.mu);
        sk_write w = rewrite_of(&p->rows[i], obj);
        sk_store_write_async(rw->store, &w, write_done, &slots[i]);
    }
    pthread_mutex_lock(&in.mu);
    while (in.pending > 0)
        pthread_cond_wait(&in.cv, &in.mu);
    pthread_mutex_unlock(&in.mu);
    sk_err err = SK_OK;
    for (int i = 0; err == SK_OK && i < p->n; i++)
        if (queued[i])
            err = settle(rw, &p->rows[i], in.err[i]);
    return err;
}

/* Rewrites every live object of resource; adds to rw's counts. */
static sk_err rewrite_resource(rewriter *rw, const char *resource)
{
    page *p = calloc(1, sizeof *p);
    SK_CHECK_ALLOC(p);
    char *after_ns = NULL, *after_name = NULL;
    int64_t rev = 0, compact = 0;
    sk_err err = sk_store_revisions(rw->store, &rev, &compact);
    while (err == SK_OK && rev > 0) {
        sk_list_query q = {resource, NULL, after_ns, after_name, rev, PAGE};
        p->n = 0;
        err = sk_store_list(rw->store, &q, keep_row, p);
        if (err == SK_ERR_EXPIRED) { /* compacted past the snapshot: a newer one */
            err = sk_store_revisions(rw->store, &rev, &compact);
            continue;
        }
        if (err == SK_OK)
            err = rewrite_page(rw, p);
        if (err == SK_OK && p->n > 0) {
            free(after_ns);
            free(after_name);
            after_ns = strdup(p->rows[p->n - 1].ns);
            after_name = strdup(p->rows[p->n - 1].name);
            SK_CHECK_ALLOC(after_ns);
            SK_CHECK_ALLOC(after_name);
        }
        int more = p->n == PAGE;
        for (int i = 0; i < p->n; i++)
            sk_row_clear(&p->rows[i]);
        if (!more)
            break;
    }
    free(after_ns);
    free(after_name);
    free(p);
    return err;
}

typedef struct found {
    const sk_encryption *enc;
    char **names;
    size_t n, cap;
} found;

static int add_covered(void *arg, const char *resource)
{
    found *f = arg;
    if (!sk_encryption_covers(f->enc, resource))
        return 0;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->names = realloc(f->names, f->cap * sizeof *f->names);
        SK_CHECK_ALLOC(f->names);
    }
    f->names[f->n] = strdup(resource);
    SK_CHECK_ALLOC(f->names[f->n]);
    f->n++;
    return 0;
}

int sk_cmd_reencrypt(const char *db, const char *config_path, const char *const *resources,
                     size_t n)
{
    char *msg = NULL;
    sk_store *store = NULL;
    found f = {0};
    int rc = 1;
    sk_encryption *enc = sk_encryption_load(config_path, &msg);
    if (!enc) {
        fprintf(stderr, "sqlkube: %s\n", msg ? msg : "cannot load the encryption config");
        goto out;
    }
    f.enc = enc;
    for (size_t i = 0; i < n; i++)
        if (!sk_encryption_covers(enc, resources[i])) {
            fprintf(stderr,
                    "sqlkube: --resource %s: %s names no provider for it (a resource column: "
                    "secrets, deployments.apps)\n",
                    resources[i], config_path);
            goto out;
        }
    if (sk_store_open(db, &store, &msg) != SK_OK) {
        fprintf(stderr, "sqlkube: %s\n", msg ? msg : "cannot open the database");
        goto out;
    }
    sk_store_set_codec(store, sk_encryption_codec(enc));
    sk_err err = SK_OK;
    for (size_t i = 0; i < n; i++)
        add_covered(&f, resources[i]);
    if (n == 0)
        err = sk_store_resources(store, add_covered, &f);
    rewriter rw = {store, sk_encryption_codec(enc), {0, 0, 0}};
    for (size_t i = 0; err == SK_OK && i < f.n; i++) {
        counts before = rw.c;
        err = rewrite_resource(&rw, f.names[i]);
        if (err == SK_OK)
            printf("%s: %lld rewritten, %lld skipped, %lld failed\n", f.names[i],
                   rw.c.rewritten - before.rewritten, rw.c.skipped - before.skipped,
                   rw.c.failed - before.failed);
    }
    if (err != SK_OK) {
        fprintf(stderr,
                "sqlkube: reencrypt stopped: the store answered %s; what was rewritten is "
                "committed, run again to finish\n",
                sk_err_name(err));
        goto out;
    }
    printf("total: %lld rewritten, %lld skipped, %lld failed\n", rw.c.rewritten, rw.c.skipped,
           rw.c.failed);
    rc = rw.c.failed > 0;
out:
    for (size_t i = 0; i < f.n; i++)
        free(f.names[i]);
    free(f.names);
    sk_store_close(store);
    sk_encryption_free(enc);
    free(msg);
    return rc;
}
