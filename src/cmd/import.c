/*
 * import.c - `sqlkube import --etcd-snapshot FILE | --from-etcd ENDPOINTS`
 * (see import.h).
 *
 * The file is read into memory and checked whole before the store is
 * touched: the SHA-256 that `etcdctl snapshot save` appends (present when
 * the size is 32 more than a multiple of 512, the test etcd's own restore
 * applies), then every page and row (core/etcdsnap). A member's db file
 * copied directly has no such hash; it is taken, checked page by page, as
 * `etcdctl snapshot restore --skip-hash-check` would take it.
 *
 * Leases are granted afresh: each one's TTL runs from the import, as an
 * etcd member's leases restart their TTL when it becomes leader (a
 * lease's remaining time is not in the file unless checkpointing was on).
 *
 * Progress goes to stderr only when it is a terminal, at most every 200 ms,
 * so logs and pipes see only the summary.
 */
#include "cmd/import.h"

#include "core/buf.h"
#include "core/check.h"
#include "core/etcdsnap.h"
#include "core/util.h"
#include "etcd/client.h"
#include "etcd/rpc.pb-c.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SHA256_LEN = 32 };

typedef struct importer {
    const sk_etcdsnap *snap;
    const sk_etcdsnap_info *info;
    int tty;
    int64_t done, last_ms, now_ms;
    sk_import_row_fn emit_row;
    sk_import_lease_fn emit_lease;
    void *emit_arg;
} importer;

static sk_err row_fn(void *arg, const sk_etcdsnap_kv *kv)
{
    importer *im = arg;
    sk_kv_row row = {{kv->key, kv->key_len, kv->value, kv->value_len, kv->create_rev, kv->rev,
                      kv->version, kv->lease},
                     kv->sub,
                     kv->tombstone};
    sk_err err = im->emit_row(im->emit_arg, &row);
    im->done++;
    if (im->tty && im->done % 1024 == 0) {
        int64_t now = sk_now_ms();
        if (now - im->last_ms >= 200) {
            fprintf(stderr, "\rimporting: %lld of %lld rows (%d%%)", (long long)im->done,
                    (long long)im->info->rows, (int)(100 * im->done / im->info->rows));
            im->last_ms = now;
        }
    }
    return err;
}

static sk_err rows(void *arg, sk_import_row_fn emit, void *emit_arg)
{
    importer *im = arg;
    im->emit_row = emit;
    im->emit_arg = emit_arg;
    sk_err err = sk_etcdsnap_each_kv(im->snap, row_fn, im);
    if (err == SK_OK && im->tty && im->done >= 1024)
        fprintf(stderr, "\rimporting: %lld of %lld rows (100%%); leases, then commit",
                (long long)im->done, (long long)im->info->rows);
    return err;
}

static sk_err lease_fn(void *arg, int64_t id, int64_t ttl)
{
    importer *im = arg;
    if (ttl < SK_LEASE_MIN_TTL)
        ttl = SK_LEASE_MIN_TTL;
    sk_lease l = {id, ttl, im->now_ms + ttl * 1000};
    return im->emit_lease(im->emit_arg, &l);
}

static sk_err leases(void *arg, sk_import_lease_fn emit, void *emit_arg)
{
    importer *im = arg;
    im->emit_lease = emit;
    im->emit_arg = emit_arg;
    im->now_ms = sk_wall_ms();
    return sk_etcdsnap_each_lease(im->snap, lease_fn, im);
}

/* 0 if the file has etcdctl's hash and it matches, or has none (*hashed
 * says which); else 1 with the reason printed. */
static int check_hash(const char *path, const unsigned char *data, size_t len, int *hashed)
{
    *hashed = len % 512 == SHA256_LEN;
    if (!*hashed)
        return 0;
    unsigned char sum[SHA256_LEN];
    SK_CHECK(gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len - SHA256_LEN, sum) == 0);
    if (memcmp(sum, data + len - SHA256_LEN, SHA256_LEN) == 0)
        return 0;
    fprintf(stderr,
            "sqlkube: %s: the snapshot's SHA-256 does not match its contents: the file is "
            "damaged; nothing was imported\n",
            path);
    return 1;
}

/* Imports the snapshot in data[0..len) into db; label names its source in
 * every message. 0 with *rev (the snapshot's revision) set, or 1 with the
 * reason printed and the store as it was. */
static int import_bytes(const char *db, const char *label, const unsigned char *data, size_t len,
                        int64_t start_ms, int64_t *rev)
{
    int rc = 1, hashed = 0;
    sk_etcdsnap *snap = NULL;
    char *why = NULL;
    if (check_hash(label, data, len, &hashed) != 0)
        goto out;
    if (sk_etcdsnap_open(data, hashed ? len - SHA256_LEN : len, &snap, &why) != SK_OK) {
        fprintf(stderr, "sqlkube: %s: not a usable etcd snapshot: %s; nothing was imported\n",
                label, why);
        goto out;
    }
    const sk_etcdsnap_info *info = sk_etcdsnap_info_of(snap);
    importer im = {snap, info, isatty(STDERR_FILENO), 0, 0, 0, NULL, NULL, NULL};
    sk_store_import imp = {.rev = info->rev,
                           .compact_rev = info->compact_rev,
                           .compact_done = info->compact_finished,
                           .arg = &im,
                           .rows = rows,
                           .leases = leases};
    sk_err err = sk_store_kv_import(db, &imp, &why);
    if (im.tty && im.done >= 1024)
        fputc('\n', stderr);
    if (err != SK_OK) {
        fprintf(stderr, "sqlkube: import of %s failed: %s; the store is unchanged\n", label,
                why ? why : sk_err_name(err));
        goto out;
    }
    int64_t ms = sk_now_ms() - start_ms;
    printf("imported %s%s: %lld rows (%lld deletions), %lld leases; revision %lld, compacted "
           "at %lld; %.1f s, %.0f rows/s\n",
           label, hashed ? "" : " (no SHA-256 appended: checked page by page)",
           (long long)info->rows, (long long)info->tombstones, (long long)info->leases,
           (long long)info->rev, (long long)info->compact_rev, (double)ms / 1000,
           ms > 0 ? (double)info->rows * 1000 / (double)ms : (double)info->rows);
    fflush(stdout);
    *rev = info->rev;
    rc = 0;
out:
    free(why);
    sk_etcdsnap_free(snap);
    return rc;
}

int sk_cmd_import_snapshot(const char *db, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 1;
    struct stat st;
    unsigned char *data = NULL;
    int64_t start = sk_now_ms(), rev = 0;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "sqlkube: %s: %s\n", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        fprintf(stderr, "sqlkube: %s: not a snapshot file (%s)\n", path,
                S_ISREG(st.st_mode) ? "empty" : "not a regular file");
        goto out;
    }
    /* Read into memory, not mapped: the whole file is checked and then
     * walked again for the rows, and a mapping (even MAP_PRIVATE) shows a
     * member's db file changing underneath, which would turn rows that
     * passed the check into a failure halfway through the import. */
    size_t len = 0;
    data = (unsigned char *)sk_read_file(path, (size_t)st.st_size, &len);
    if (!data) {
        fprintf(stderr, "sqlkube: %s: %s\n", path,
                errno == EFBIG ? "the file grew while it was read" : strerror(errno));
        goto out;
    }
    rc = import_bytes(db, path, data, len, start, &rev);
out:
    free(data);
    if (fd >= 0)
        close(fd);
    return rc;
}

/*
 * `import --from-etcd`: the source's own Snapshot (Maintenance.Snapshot, the
 * bbolt file `etcdctl snapshot save` writes, with its SHA-256) goes through
 * the same import as a file: history from the source's compaction on,
 * leases, the compaction. Then a Watch of every key from the snapshot's
 * revision + 1 brings each later revision, committed as a follow-up of the
 * import (store.h, after_rev): rows keep the source's revisions, and a
 * revision's events keep their order, which is their sub-revision. A watch
 * never splits one revision's events across responses, and pending events
 * are committed only at a response's end, so the store always holds a
 * prefix of the source's history, whole revisions only.
 *
 * Commits: when nothing more arrived for FOLLOW_IDLE_MS, at FOLLOW_BATCH
 * rows, or FOLLOW_MAX_MS after the first pending row; each opens the store
 * anew (a follow-up is one transaction on a connection of its own, as the
 * import is), which a cut-over's pace affords.
 *
 * Caught up: a watch response's header carries the source's revision when
 * it was sent; once every revision up to the newest such header is
 * committed and nothing is pending, the store equals the source as of
 * then. --until-synced stops there; otherwise SIGINT or SIGTERM stops the
 * follow (what was received is committed first). Either way the leases
 * are then read from the source (LeaseLeases, LeaseTimeToLive) and stored
 * with their remaining time, since leases granted or renewed during the
 * follow never show in a watch.
 */
enum { FOLLOW_IDLE_MS = 100, FOLLOW_MAX_MS = 250, FOLLOW_BATCH = 8192 };

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
}

typedef struct follower {
    const char *db, *endpoint;
    int until_synced, tty;
    sk_buf snap;
    int64_t snap_expected;
    int64_t applied, source_rev, first_pending_ms;
    int64_t rows, commits, caught_up_at;
    Etcdserverpb__WatchResponse **pending;
    size_t n_pending, cap_pending, pending_rows;
    Etcdserverpb__LeaseTimeToLiveResponse **leases;
    size_t n_leases;
    int64_t lease_now_ms;
    char *error;
} follower;

static int take_snapshot_chunk(void *arg, const uint8_t *msg, size_t len)
{
    follower *f = arg;
    Etcdserverpb__SnapshotResponse *r = etcdserverpb__snapshot_response__unpack(NULL, len, msg);
    if (!r) {
        f->error = strdup("the snapshot stream carried something that is not a snapshot chunk");
        return 1;
    }
    sk_buf_append(&f->snap, r->blob.data, r->blob.len);
    if (f->tty)
        fprintf(stderr, "\rreceiving the snapshot: %.1f of %.1f MiB", (double)f->snap.len / 1048576,
                (double)(f->snap.len + r->remaining_bytes) / 1048576);
    etcdserverpb__snapshot_response__free_unpacked(r, NULL);
    return stop_signal != 0;
}

static int stop_requested(void *arg)
{
    (void)arg;
    return stop_signal != 0;
}

static sk_err pending_rows(void *arg, sk_import_row_fn emit, void *emit_arg)
{
    follower *f = arg;
    sk_err err = SK_OK;
    int64_t rev = 0;
    int sub = 0;
    for (size_t i = 0; i < f->n_pending && err == SK_OK; i++) {
        Etcdserverpb__WatchResponse *r = f->pending[i];
        for (size_t j = 0; j < r->n_events && err == SK_OK; j++) {
            const Mvccpb__Event *ev = r->events[j];
            const Mvccpb__KeyValue *kv = ev->kv;
            sub = kv->mod_revision == rev ? sub + 1 : 0;
            rev = kv->mod_revision;
            int tombstone = ev->type == MVCCPB__EVENT__EVENT_TYPE__DELETE;
            sk_kv_row row = {{kv->key.data, kv->key.len, tombstone ? NULL : kv->value.data,
                              tombstone ? 0 : kv->value.len, tombstone ? 0 : kv->create_revision,
                              kv->mod_revision, tombstone ? 0 : kv->version,
                              tombstone ? 0 : kv->lease},
                             sub,
                             tombstone};
            err = emit(emit_arg, &row);
        }
    }
    return err;
}

static void drop_pending(follower *f)
{
    for (size_t i = 0; i < f->n_pending; i++)
        etcdserverpb__watch_response__free_unpacked(f->pending[i], NULL);
    f->n_pending = f->pending_rows = 0;
    f->first_pending_ms = 0;
}

/* Commits the pending revisions: 0, or 1 with f->error set. */
static int commit_pending(follower *f)
{
    if (!f->n_pending)
        return 0;
    Etcdserverpb__WatchResponse *last = f->pending[f->n_pending - 1];
    int64_t rev = last->events[last->n_events - 1]->kv->mod_revision;
    char *why = NULL;
    sk_store_import imp = {.rev = rev, .after_rev = f->applied, .arg = f, .rows = pending_rows};
    sk_err err = sk_store_kv_import(f->db, &imp, &why);
    if (err != SK_OK) {
        SK_CHECK(asprintf(&f->error, "revisions %lld to %lld could not be stored: %s",
                          (long long)f->applied + 1, (long long)rev, why) >= 0);
        free(why);
        return 1;
    }
    f->rows += (int64_t)f->pending_rows;
    f->commits++;
    f->applied = rev;
    drop_pending(f);
    return 0;
}

static int caught_up(follower *f)
{
    if (f->n_pending || f->applied < f->source_rev)
        return 0;
    if (f->caught_up_at != f->applied) {
        if (!f->caught_up_at)
            printf("caught up with %s at revision %lld%s\n", f->endpoint, (long long)f->applied,
                   f->until_synced ? "" : "; following it until SIGINT or SIGTERM");
        fflush(stdout);
        f->caught_up_at = f->applied;
    }
    return 1;
}

static int take_watch_response(void *arg, const uint8_t *msg, size_t len)
{
    follower *f = arg;
    Etcdserverpb__WatchResponse *r = etcdserverpb__watch_response__unpack(NULL, len, msg);
    if (!r) {
        f->error = strdup("the watch carried something that is not a watch response");
        return 1;
    }
    if (r->canceled) {
        if (r->compact_revision)
            SK_CHECK(asprintf(&f->error,
                              "the source compacted revision %lld before the follow "
                              "read it (its compaction is at %lld)",
                              (long long)f->applied + 1, (long long)r->compact_revision) >= 0);
        else
            SK_CHECK(asprintf(&f->error, "the source ended the watch: %s",
                              r->cancel_reason && *r->cancel_reason ? r->cancel_reason
                                                                    : "no reason given") >= 0);
        etcdserverpb__watch_response__free_unpacked(r, NULL);
        return 1;
    }
    if (r->header && r->header->revision > f->source_rev)
        f->source_rev = r->header->revision;
    if (!r->n_events) {
        etcdserverpb__watch_response__free_unpacked(r, NULL);
    } else {
        if (f->n_pending == f->cap_pending) {
            f->cap_pending = f->cap_pending ? 2 * f->cap_pending : 64;
            f->pending = realloc(f->pending, f->cap_pending * sizeof *f->pending);
            SK_CHECK_ALLOC(f->pending);
        }
        f->pending[f->n_pending++] = r;
        f->pending_rows += r->n_events;
        if (!f->first_pending_ms)
            f->first_pending_ms = sk_now_ms();
        if ((f->pending_rows >= FOLLOW_BATCH ||
             sk_now_ms() - f->first_pending_ms >= FOLLOW_MAX_MS) &&
            commit_pending(f) != 0)
            return 1;
    }
    return stop_signal != 0 || (f->until_synced && caught_up(f));
}

static int follow_idle(void *arg)
{
    follower *f = arg;
    if (commit_pending(f) != 0)
        return 1;
    int synced = caught_up(f);
    return stop_signal != 0 || (f->until_synced && synced);
}

static sk_err source_leases(void *arg, sk_import_lease_fn emit, void *emit_arg)
{
    follower *f = arg;
    sk_err err = SK_OK;
    for (size_t i = 0; i < f->n_leases && err == SK_OK; i++) {
        const Etcdserverpb__LeaseTimeToLiveResponse *t = f->leases[i];
        int64_t ttl = t->grantedttl < SK_LEASE_MIN_TTL ? SK_LEASE_MIN_TTL : t->grantedttl;
        sk_lease l = {t->id, ttl, f->lease_now_ms + t->ttl * 1000};
        err = emit(emit_arg, &l);
    }
    return err;
}

/* Reads the source's leases and stores them with their remaining time: 0,
 * or 1 with f->error set. */
static int sync_leases(follower *f, sk_etcd_client *c)
{
    char *why = NULL;
    int rc = 1;
    Etcdserverpb__LeaseLeasesRequest lreq = ETCDSERVERPB__LEASE_LEASES_REQUEST__INIT;
    Etcdserverpb__LeaseLeasesResponse *list = NULL;
    if (sk_etcd_client_unary(c, "/etcdserverpb.Lease/LeaseLeases", &lreq.base,
                             &etcdserverpb__lease_leases_response__descriptor,
                             (ProtobufCMessage **)&list, &why) != SK_OK)
        goto out;
    f->leases = calloc(list->n_leases + 1, sizeof *f->leases);
    SK_CHECK_ALLOC(f->leases);
    f->lease_now_ms = sk_wall_ms();
    for (size_t i = 0; i < list->n_leases; i++) {
        Etcdserverpb__LeaseTimeToLiveRequest treq = ETCDSERVERPB__LEASE_TIME_TO_LIVE_REQUEST__INIT;
        treq.id = list->leases[i]->id;
        Etcdserverpb__LeaseTimeToLiveResponse *t = NULL;
        if (sk_etcd_client_unary(c, "/etcdserverpb.Lease/LeaseTimeToLive", &treq.base,
                                 &etcdserverpb__lease_time_to_live_response__descriptor,
                                 (ProtobufCMessage **)&t, &why) != SK_OK)
            goto out;
        if (t->ttl > 0) /* -1: it expired meanwhile (its keys' deletion follows in the watch) */
            f->leases[f->n_leases++] = t;
        else
            etcdserverpb__lease_time_to_live_response__free_unpacked(t, NULL);
    }
    sk_store_import imp = {
        .rev = f->applied, .after_rev = f->applied, .arg = f, .leases = source_leases};
    if (sk_store_kv_import(f->db, &imp, &why) != SK_OK)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        SK_CHECK(asprintf(&f->error, "the leases could not be copied: %s",
                          why ? why : "no reason given") >= 0);
    free(why);
    if (list)
        etcdserverpb__lease_leases_response__free_unpacked(list, NULL);
    return rc;
}

int sk_cmd_import_from_etcd(const char *db, const char *endpoints, const sk_etcd_client_tls *tls,
                            int until_synced)
{
    int rc = 1;
    char *why = NULL;
    sk_etcd_client *c = NULL;
    int64_t start = sk_now_ms();
    follower f = {.db = db, .until_synced = until_synced, .tty = isatty(STDERR_FILENO)};
    f.snap = (sk_buf)SK_BUF_INIT;
    /* main blocked the shutdown signals for serve's sigwait; here they
     * interrupt the follow's poll instead (no SA_RESTART: it returns). */
    struct sigaction sa = {0}, old_int, old_term;
    sigset_t stops, old_mask;
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &stops, &old_mask);
    if (sk_etcd_client_connect(endpoints, tls, &c, &why) != SK_OK) {
        fprintf(stderr,
                "sqlkube: cannot reach the etcd to import from: %s; nothing was "
                "imported\n",
                why);
        goto out;
    }
    f.endpoint = sk_etcd_client_endpoint(c);
    Etcdserverpb__SnapshotRequest sreq = ETCDSERVERPB__SNAPSHOT_REQUEST__INIT;
    sk_err err = sk_etcd_client_call(c, "/etcdserverpb.Maintenance/Snapshot", &sreq.base,
                                     take_snapshot_chunk, stop_requested, 200, &f, &why);
    if (f.tty && f.snap.len)
        fputc('\n', stderr);
    if (err != SK_OK || f.error || stop_signal) {
        fprintf(stderr, "sqlkube: the snapshot of %s %s: %s; nothing was imported\n", f.endpoint,
                stop_signal ? "was interrupted" : "failed",
                stop_signal ? strsignal(stop_signal)
                : f.error   ? f.error
                            : why);
        goto out;
    }
    char label[512];
    snprintf(label, sizeof label, "the snapshot of %s", f.endpoint);
    if (import_bytes(db, label, (const unsigned char *)f.snap.data, f.snap.len, start,
                     &f.applied) != 0)
        goto out;
    sk_buf_free(&f.snap);
    f.source_rev = f.applied;
    int64_t from = f.applied;
    Etcdserverpb__WatchCreateRequest create = ETCDSERVERPB__WATCH_CREATE_REQUEST__INIT;
    uint8_t all = 0; /* key "\0" with range_end "\0": every key */
    create.key = (ProtobufCBinaryData){1, &all};
    create.range_end = (ProtobufCBinaryData){1, &all};
    create.start_revision = f.applied + 1;
    Etcdserverpb__WatchRequest wreq = ETCDSERVERPB__WATCH_REQUEST__INIT;
    wreq.request_union_case = ETCDSERVERPB__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
    wreq.create_request = &create;
    err = sk_etcd_client_call(c, "/etcdserverpb.Watch/Watch", &wreq.base, take_watch_response,
                              follow_idle, FOLLOW_IDLE_MS, &f, &why);
    if (err == SK_OK && !f.error)
        commit_pending(&f);
    drop_pending(&f);
    if (err == SK_OK && !f.error)
        sync_leases(&f, c);
    if (err != SK_OK || f.error) {
        fprintf(stderr,
                "sqlkube: following %s stopped: %s; the store holds its keyspace up to "
                "revision %lld, whole revisions only\n",
                f.endpoint, f.error ? f.error : why, (long long)f.applied);
        goto out;
    }
    printf("followed %s from revision %lld to %lld: %lld rows in %lld commits; %zu leases%s\n",
           f.endpoint, (long long)from, (long long)f.applied, (long long)f.rows,
           (long long)f.commits, f.n_leases, stop_signal ? " (stopped by a signal)" : "; in sync");
    rc = 0;
out:
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    for (size_t i = 0; i < f.n_leases; i++)
        etcdserverpb__lease_time_to_live_response__free_unpacked(f.leases[i], NULL);
    free(f.leases);
    free(f.pending);
    free(f.error);
    free(why);
    sk_buf_free(&f.snap);
    sk_etcd_client_free(c);
    return rc;
}
