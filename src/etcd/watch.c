/*
 * watch.c - see watch.h. The registry (streams, their watches, the feed's
 * revision) under one lock; the feed thread's rounds; the Watch method's
 * callbacks.
 *
 * A round: under the lock, find the lowest cursor short of the feed's
 * revision `top` among watches whose stream can take data; read the span
 * (lo, min(top, lo + SPAN)] without the lock; build each change's Event
 * once (with and without prev_kv); then, under the lock, give every watch
 * whose cursor lies in the span the events at or after its cursor that it
 * selects, one response per revision (header: that revision, as etcd sends
 * a commit's events), and move its cursor past the span.
 *
 * A watch that is behind gets its span's events in as few responses as a
 * response's budget allows (whole revisions; header: the last event's
 * revision, or the span's end for the response that ends the span), as etcd
 * batches the events of its "unsynced" watches (started at a past revision)
 * and "victims" (a full send queue). A watch is behind from such a start,
 * or once a send is refused or a round passes it over because its stream
 * cannot take data (half its queue bound queued), until a round brings it
 * to the feed's revision; every watch of a stream with COALESCE_QUEUED
 * bytes queued for its client counts as behind too. A span is at most SPAN
 * revisions (etcd batches up to 1,000). A client that fell behind then decodes a message per watch
 * per round, not one per revision: with 1,000 watches on one stream that
 * cut the client's lag to about a third (bench/README.md, "Fan-out against
 * etcd").
 *
 * A refused send (full queue) leaves the cursor: the watch is read again
 * from it once its stream drains. Rounds repeat while they move cursors,
 * each pass a round for the live watches (cursors within a span of top) and
 * one from the lowest cursor, so a watch catching up on a long history does
 * not delay the live ones; the feed then waits for the cache's next
 * revision (or WAIT_MS, which bounds how late a new watch with an old start
 * revision or a drained stream is looked at).
 *
 * etcd's replies kept here: watch ids from 0 per stream when the client
 * leaves them 0; a created response first (header: the current revision);
 * an empty or negative request range answered with created and canceled at
 * watch id -1 and etcd's reason; a cancel of an unknown id ignored; a cursor
 * below the compact revision canceled with compact_revision set (header
 * revision 0, as etcd's compaction response carries none); DELETE events
 * carrying etcd's tombstone (the key and its mod_revision); prev_kv only for
 * events that are not creations; a watch created with `fragment` gets a
 * response past etcd's limit in parts, cut where etcd cuts them.
 */
#include "etcd/watch.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "etcd/kv.pb-c.h"
#include "etcd/rpc.pb-c.h"
#include "etcd/watchsel.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SPAN 100      /* revisions read per round */
#define WAIT_MS 50    /* the feed's longest wait for the cache */
#define MAX_ROUNDS 64 /* rounds between looks at stopping and progress */
/* A stream with this much queued for its client is behind (see the top);
 * a coalesced response carries up to about COALESCE_BYTES of events
 * (previous versions included), unless one revision alone is more. */
#define COALESCE_QUEUED ((size_t)16 * 1024)
#define COALESCE_BYTES ((size_t)1024 * 1024)
/* What an Event or KeyValue adds beyond its key and value: tags, lengths,
 * revisions (an upper bound, for the budget). */
#define EVENT_OVERHEAD 48

#define MSG_COMPACTED "etcdserver: mvcc: required revision has been compacted"
#define MSG_EMPTY_RANGE "mvcc: watcher range is empty"
#define MSG_DUPLICATE_ID "mvcc: duplicate watch ID provided on the WatchStream"

typedef struct watcher {
    int64_t id;
    sk_arena *a; /* sel's bytes */
    sk_watch_sel sel;
    int64_t next; /* every event before this revision was sent */
    int prev_kv, progress_notify;
    int fragment; /* asked for a large revision's events in several responses */
    int quiet;  /* no event sent since the last progress tick */
    int behind; /* started in the past, refused a send or passed over for a stream
                   that could not take data, and not caught up since */
    struct watcher *link;
} watcher;

typedef struct wstream {
    sk_etcd_watches *hub;
    sk_etcd_stream *st;
    watcher *watchers;
    int64_t next_id; /* the next id to try for a watch created with id 0 */
    int progress_wanted;
    struct wstream *prev, *next;
} wstream;

struct sk_etcd_watches {
    const sk_etcd_service *svc;
    sk_cache *cache;
    int progress_ms;
    pthread_t feed;
    pthread_mutex_t mu;
    int stopping;     /* under mu */
    wstream *streams; /* under mu */
    int64_t top;      /* the newest revision the feed knows committed; under mu */
};

static void *pb_alloc(void *arena, size_t n)
{
    return sk_arena_alloc(arena, n);
}

static void pb_free(void *arena, void *p) {}

static void watcher_free(watcher *w)
{
    sk_arena_free(w->a);
    free(w);
}

/* Packs and sends one response. Registry lock held: responses of a stream
 * leave in the order they were decided. */
static sk_err send_response(wstream *ws, sk_etcd_send_kind kind,
                            const Etcdserverpb__WatchResponse *m)
{
    size_t n = protobuf_c_message_get_packed_size(&m->base);
    uint8_t *buf = malloc(n ? n : 1);
    SK_CHECK_ALLOC(buf);
    protobuf_c_message_pack(&m->base, buf);
    sk_err err = sk_etcd_stream_send(ws->st, kind, buf, n);
    free(buf);
    return err;
}

typedef struct reply {
    int64_t rev, id;
    int created, canceled;
    int64_t compact;
    const char *reason;
} reply;

static void send_control(wstream *ws, const reply *r)
{
    Etcdserverpb__ResponseHeader h;
    sk_etcd_header_init(ws->hub->svc, &h, r->rev);
    Etcdserverpb__WatchResponse m = ETCDSERVERPB__WATCH_RESPONSE__INIT;
    m.header = &h;
    m.watch_id = r->id;
    m.created = r->created;
    m.canceled = r->canceled;
    m.compact_revision = r->compact;
    m.cancel_reason = (char *)(r->reason ? r->reason : "");
    send_response(ws, SK_ETCD_SEND_CONTROL, &m);
}

static watcher *find(wstream *ws, int64_t id, watcher ***link_out)
{
    for (watcher **pp = &ws->watchers; *pp; pp = &(*pp)->link) {
        if ((*pp)->id == id) {
            *link_out = pp;
            return *pp;
        }
    }
    return NULL;
}

/* ---- the feed --------------------------------------------------------------- */

typedef struct change {
    sk_kv kv;
    int deleted;
    Mvccpb__Event *plain, *with_prev; /* the Event without and with prev_kv */
    /* Roughly the bytes this change and the later ones of its revision add
     * to a response, without and with prev_kv (size_rest), once the batch is
     * read (revision_sizes); this change's own until then. */
    size_t size_rest, size_rest_with_prev;
} change;

typedef struct batch {
    sk_arena *a;
    change *v;
    size_t n, cap;
} batch;

static const unsigned char *dup_bytes(sk_arena *a, const unsigned char *p, size_t n)
{
    unsigned char *c = sk_arena_alloc(a, n ? n : 1);
    if (n)
        memcpy(c, p, n);
    return c;
}

static Mvccpb__KeyValue *kv_msg(sk_arena *a, const sk_kv *kv)
{
    Mvccpb__KeyValue *m = sk_arena_alloc(a, sizeof *m);
    mvccpb__key_value__init(m);
    m->key = (ProtobufCBinaryData){kv->key_len, (uint8_t *)kv->key};
    m->value = (ProtobufCBinaryData){kv->value_len, (uint8_t *)kv->value};
    m->create_revision = kv->create_rev;
    m->mod_revision = kv->mod_rev;
    m->version = kv->version;
    m->lease = kv->lease;
    return m;
}

static int collect(void *arg, const sk_kv_row *row, const sk_kv *prev)
{
    batch *b = arg;
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->v = realloc(b->v, b->cap * sizeof *b->v);
        SK_CHECK_ALLOC(b->v);
    }
    change *c = &b->v[b->n++];
    c->kv = row->kv;
    c->deleted = row->deleted;
    c->kv.key = dup_bytes(b->a, row->kv.key, row->kv.key_len);
    c->kv.value = dup_bytes(b->a, row->kv.value, row->kv.value_len);
    Mvccpb__Event *e = sk_arena_alloc(b->a, sizeof *e);
    mvccpb__event__init(e);
    if (row->deleted) {
        /* etcd's tombstone: the key and the revision of its deletion */
        e->type = MVCCPB__EVENT__EVENT_TYPE__DELETE;
        e->kv = sk_arena_alloc(b->a, sizeof *e->kv);
        mvccpb__key_value__init(e->kv);
        e->kv->key = (ProtobufCBinaryData){c->kv.key_len, (uint8_t *)c->kv.key};
        e->kv->mod_revision = c->kv.mod_rev;
    } else {
        e->type = MVCCPB__EVENT__EVENT_TYPE__PUT;
        e->kv = kv_msg(b->a, &c->kv);
    }
    c->plain = c->with_prev = e;
    c->size_rest = c->size_rest_with_prev = EVENT_OVERHEAD + c->kv.key_len + c->kv.value_len;
    /* etcd looks up no previous version for a creation */
    int creation = !row->deleted && row->kv.create_rev == row->kv.mod_rev;
    if (prev && !creation) {
        sk_kv p = *prev;
        p.key = c->kv.key;
        p.value = dup_bytes(b->a, prev->value, prev->value_len);
        c->with_prev = sk_arena_alloc(b->a, sizeof *e);
        *c->with_prev = *e;
        c->with_prev->prev_kv = kv_msg(b->a, &p);
        c->size_rest_with_prev += EVENT_OVERHEAD + p.key_len + p.value_len;
    }
    return 0;
}

/* The watches whose cursor is below the compact revision end as etcd ends
 * them. */
static void cancel_compacted(sk_etcd_watches *hub)
{
    int64_t rev = 0, compact = 0;
    if (sk_store_revisions(hub->svc->store, &rev, &compact) != SK_OK)
        return;
    pthread_mutex_lock(&hub->mu);
    for (wstream *ws = hub->streams; ws; ws = ws->next) {
        for (watcher **pp = &ws->watchers; *pp;) {
            watcher *w = *pp;
            if (w->next >= compact) {
                pp = &w->link;
                continue;
            }
            send_control(ws, &(reply){.rev = 0, .id = w->id, .canceled = 1, .compact = compact});
            *pp = w->link;
            watcher_free(w);
        }
    }
    pthread_mutex_unlock(&hub->mu);
}

/* Bytes a length-delimited field of n bytes takes in its message: tag,
 * length, body (an Event's tag is one byte). */
static size_t delimited_size(size_t n)
{
    size_t len = 1;
    for (size_t v = n; v >= 0x80; v >>= 7)
        len++;
    return 1 + len + n;
}

/* Sends m, a response of events, as etcd's sendFragments does for a watch
 * that asked for fragments: whole while it is under the limit (the request
 * limit plus gRPC's overhead) or holds one event, else in parts each under
 * it (or of one event), all but the last marked fragment, each with m's
 * header. The parts go out all or none (sk_etcd_stream_send_all), so a
 * refused send leaves the cursor before a whole revision, never within one.
 * Registry lock held. */
static sk_err send_fragmented(wstream *ws, Etcdserverpb__WatchResponse *m)
{
    size_t limit = ws->hub->svc->max_request_bytes + SK_ETCD_GRPC_OVERHEAD_BYTES;
    if (m->n_events < 2 || protobuf_c_message_get_packed_size(&m->base) < limit)
        return send_response(ws, SK_ETCD_SEND_DATA, m);
    Mvccpb__Event **events = m->events;
    size_t n = m->n_events;
    uint8_t **parts = malloc(n * sizeof *parts);
    size_t *lens = malloc(n * sizeof *lens);
    SK_CHECK_ALLOC(parts);
    SK_CHECK_ALLOC(lens);
    m->fragment = 1;
    m->n_events = 0;
    size_t base = protobuf_c_message_get_packed_size(&m->base), k = 0;
    for (size_t i = 0; i < n; k++) {
        size_t size = base, first = i;
        for (; i < n; i++) {
            size_t field = delimited_size(protobuf_c_message_get_packed_size(&events[i]->base));
            if (i > first && size + field >= limit)
                break;
            size += field;
        }
        m->events = events + first;
        m->n_events = i - first;
        m->fragment = i < n;
        lens[k] = protobuf_c_message_get_packed_size(&m->base);
        parts[k] = malloc(lens[k] ? lens[k] : 1);
        SK_CHECK_ALLOC(parts[k]);
        protobuf_c_message_pack(&m->base, parts[k]);
    }
    sk_err err = sk_etcd_stream_send_all(ws->st, SK_ETCD_SEND_DATA,
                                         (const uint8_t *const *)parts, lens, k);
    for (size_t j = 0; j < k; j++)
        free(parts[j]);
    free(parts);
    free(lens);
    return err;
}

/* Sends w the events gathered in scratch[0..k), the last of revision rev,
 * in one response whose header has revision header_rev (>= rev), or in
 * fragments if w asked for them, and moves its cursor past rev. Registry
 * lock held. */
static int send_events(wstream *ws, watcher *w, int64_t header_rev, int64_t rev,
                       Mvccpb__Event **scratch, size_t k)
{
    Etcdserverpb__ResponseHeader h;
    sk_etcd_header_init(ws->hub->svc, &h, header_rev);
    Etcdserverpb__WatchResponse m = ETCDSERVERPB__WATCH_RESPONSE__INIT;
    m.header = &h;
    m.watch_id = w->id;
    m.events = scratch;
    m.n_events = k;
    if ((w->fragment ? send_fragmented(ws, &m) : send_response(ws, SK_ETCD_SEND_DATA, &m)) !=
        SK_OK) {
        w->behind = 1;
        return 0;
    }
    w->next = rev + 1;
    w->quiet = 0;
    return 1;
}

/* Makes each change's size_rest cover the later changes of its revision
 * too: once per batch, so that a watch's budget check costs no scan of its
 * own (those the watch does not select are counted too: an upper bound). */
static void revision_sizes(batch *b)
{
    for (size_t i = b->n; i-- > 1;) {
        change *c = &b->v[i - 1];
        if (c->kv.mod_rev == b->v[i].kv.mod_rev) {
            c->size_rest += b->v[i].size_rest;
            c->size_rest_with_prev += b->v[i].size_rest_with_prev;
        }
    }
}

/* Sends w the events of b it selects at or after its cursor, a response
 * per revision, or coalesced if it is behind (see the top), then moves it
 * past hi; it has caught up if hi is the feed's revision top. A refused send
 * leaves the cursor at the first revision of that response: it is read
 * again once the stream drains. Registry lock held. scratch holds b->n
 * pointers. */
static void serve(wstream *ws, watcher *w, const batch *b, int64_t hi, int64_t top,
                  Mvccpb__Event **scratch)
{
    size_t k = 0, bytes = 0;
    size_t budget =
        w->behind || sk_etcd_stream_queued(ws->st) >= COALESCE_QUEUED ? COALESCE_BYTES : 0;
    int64_t rev = 0;
    for (size_t i = 0; i < b->n; i++) {
        const change *c = &b->v[i];
        if (c->kv.mod_rev < w->next ||
            !sk_watch_sel_wants(&w->sel, c->kv.key, c->kv.key_len, c->deleted))
            continue;
        if (c->kv.mod_rev != rev) {
            size_t size = !budget ? 0 : w->prev_kv ? c->size_rest_with_prev : c->size_rest;
            if (k && (!budget || bytes + size > budget)) {
                if (!send_events(ws, w, rev, rev, scratch, k))
                    return;
                k = 0;
                bytes = 0;
            }
            bytes += size;
        }
        rev = c->kv.mod_rev;
        scratch[k++] = w->prev_kv ? c->with_prev : c->plain;
    }
    /* A coalesced response that ends the span says so in its header, as
     * etcd's batches carry its current revision. */
    if (k && !send_events(ws, w, budget ? hi : rev, rev, scratch, k))
        return;
    w->next = hi + 1;
    if (hi >= top)
        w->behind = 0;
}

/* One round (see the top) over the cursors at or after floor. Returns
 * whether a cursor moved or a watch ended. */
static int round_once(sk_etcd_watches *hub, int64_t floor)
{
    int64_t lo = INT64_MAX, top;
    pthread_mutex_lock(&hub->mu);
    top = hub->top;
    for (wstream *ws = hub->streams; ws; ws = ws->next) {
        if (!ws->watchers)
            continue;
        if (!sk_etcd_stream_writable(ws->st)) {
            /* passed over: as behind as a refused send */
            for (watcher *w = ws->watchers; w; w = w->link)
                w->behind |= w->next - 1 < top;
            continue;
        }
        for (watcher *w = ws->watchers; w; w = w->link)
            if (w->next - 1 >= floor && w->next - 1 < top && w->next - 1 < lo)
                lo = w->next - 1;
    }
    pthread_mutex_unlock(&hub->mu);
    if (lo == INT64_MAX)
        return 0;
    int64_t hi = top - lo > SPAN ? lo + SPAN : top;
    batch b = {sk_arena_new(), NULL, 0, 0};
    sk_err err = sk_store_kv_changes(hub->svc->store, lo, hi, collect, &b);
    int moved = 0;
    if (err == SK_ERR_EXPIRED) {
        cancel_compacted(hub);
        moved = 1;
    } else if (err != SK_OK) {
        sk_log_warn("etcd watch: cannot read revisions %lld..%lld: %s", (long long)lo + 1,
                    (long long)hi, sk_err_name(err));
    } else {
        revision_sizes(&b);
        Mvccpb__Event **scratch = malloc((b.n ? b.n : 1) * sizeof *scratch);
        SK_CHECK_ALLOC(scratch);
        pthread_mutex_lock(&hub->mu);
        for (wstream *ws = hub->streams; ws; ws = ws->next) {
            if (!ws->watchers || !sk_etcd_stream_writable(ws->st))
                continue;
            for (watcher *w = ws->watchers; w; w = w->link) {
                if (w->next - 1 >= lo && w->next - 1 < hi) {
                    int64_t was = w->next;
                    serve(ws, w, &b, hi, top, scratch);
                    moved |= w->next != was;
                }
            }
        }
        pthread_mutex_unlock(&hub->mu);
        free(scratch);
    }
    free(b.v);
    sk_arena_free(b.a);
    return moved;
}

/* Answers the progress requests whose stream has caught up with top and,
 * on a tick, notifies the idle caught-up watches that asked for it. */
static void progress(sk_etcd_watches *hub, int tick)
{
    pthread_mutex_lock(&hub->mu);
    int64_t top = hub->top;
    for (wstream *ws = hub->streams; ws; ws = ws->next) {
        int synced = 1;
        for (watcher *w = ws->watchers; w; w = w->link)
            synced &= w->next - 1 >= top;
        if (ws->progress_wanted && synced) {
            /* etcd announces progress on one of the stream's watches: with
             * none, nothing is sent */
            if (ws->watchers)
                send_control(ws, &(reply){.rev = top, .id = -1});
            ws->progress_wanted = 0;
        }
        if (!tick)
            continue;
        for (watcher *w = ws->watchers; w; w = w->link) {
            if (w->progress_notify && w->quiet && w->next - 1 >= top)
                send_control(ws, &(reply){.rev = top, .id = w->id});
            w->quiet = 1;
        }
    }
    pthread_mutex_unlock(&hub->mu);
}

static void *feed_main(void *arg)
{
    sk_etcd_watches *hub = arg;
    int64_t next_tick = sk_now_ms() + hub->progress_ms;
    for (;;) {
        pthread_mutex_lock(&hub->mu);
        int stop = hub->stopping;
        int64_t known = hub->top;
        pthread_mutex_unlock(&hub->mu);
        if (stop)
            break;
        sk_cache_state st;
        sk_cache_wait(hub->cache, known + 1, WAIT_MS, &st);
        pthread_mutex_lock(&hub->mu);
        if (st.rev > hub->top)
            hub->top = st.rev;
        pthread_mutex_unlock(&hub->mu);
        /* The live watches (within a span of the top) get a round of their
         * own each time, so one catching up on a long history never holds
         * them back. */
        for (int i = 0; i < MAX_ROUNDS; i++) {
            int moved = round_once(hub, st.rev - SPAN);
            if (!(round_once(hub, INT64_MIN) | moved))
                break;
        }
        int64_t now = sk_now_ms();
        int tick = now >= next_tick;
        if (tick)
            next_tick = now + hub->progress_ms;
        progress(hub, tick);
    }
    return NULL;
}

sk_etcd_watches *sk_etcd_watches_start(const sk_etcd_service *svc, sk_cache *cache, int progress_ms)
{
    SK_CHECK(cache != NULL);
    sk_etcd_watches *hub = calloc(1, sizeof *hub);
    SK_CHECK_ALLOC(hub);
    hub->svc = svc;
    hub->cache = cache;
    hub->progress_ms = progress_ms > 0 ? progress_ms : SK_ETCD_PROGRESS_MS;
    sk_cache_state st;
    sk_cache_get_state(cache, &st);
    hub->top = st.rev;
    pthread_mutex_init(&hub->mu, NULL);
    SK_CHECK(pthread_create(&hub->feed, NULL, feed_main, hub) == 0);
    pthread_setname_np(hub->feed, "sk-etcd-feed");
    return hub;
}

void sk_etcd_watches_stop(sk_etcd_watches *hub)
{
    if (!hub)
        return;
    pthread_mutex_lock(&hub->mu);
    hub->stopping = 1;
    SK_CHECK(hub->streams == NULL);
    pthread_mutex_unlock(&hub->mu);
    pthread_join(hub->feed, NULL);
    pthread_mutex_destroy(&hub->mu);
    free(hub);
}

/* ---- the method ----------------------------------------------------------------- */

static void *watch_open(const sk_etcd_service *svc, sk_etcd_stream *st)
{
    sk_etcd_watches *hub = svc->watches;
    wstream *ws = calloc(1, sizeof *ws);
    SK_CHECK_ALLOC(ws);
    ws->hub = hub;
    ws->st = st;
    pthread_mutex_lock(&hub->mu);
    ws->next = hub->streams;
    if (hub->streams)
        hub->streams->prev = ws;
    hub->streams = ws;
    pthread_mutex_unlock(&hub->mu);
    return ws;
}

static void watch_create(wstream *ws, const Etcdserverpb__WatchCreateRequest *r)
{
    sk_etcd_watches *hub = ws->hub;
    int64_t rev = 0, compact = 0;
    if (sk_store_revisions(hub->svc->store, &rev, &compact) != SK_OK) {
        sk_etcd_stream_end(ws->st, SK_GRPC_UNAVAILABLE, "sqlkube: the store is unavailable");
        return;
    }
    reply refused = {.rev = rev, .id = -1, .created = 1, .canceled = 1};
    int no_put = 0, no_delete = 0;
    for (size_t i = 0; i < r->n_filters; i++) {
        no_put |= r->filters[i] == ETCDSERVERPB__WATCH_CREATE_REQUEST__FILTER_TYPE__NOPUT;
        no_delete |= r->filters[i] == ETCDSERVERPB__WATCH_CREATE_REQUEST__FILTER_TYPE__NODELETE;
    }
    watcher *w = calloc(1, sizeof *w);
    SK_CHECK_ALLOC(w);
    w->a = sk_arena_new();
    pthread_mutex_lock(&hub->mu);
    watcher **link;
    if (r->start_revision < 0) {
        refused.reason = MSG_COMPACTED;
    } else if (!sk_watch_sel_init(w->a, r->key.data, r->key.len, r->range_end.data,
                                  r->range_end.len, no_put, no_delete, &w->sel)) {
        refused.reason = MSG_EMPTY_RANGE;
    } else if (r->watch_id != 0 && find(ws, r->watch_id, &link)) {
        refused.reason = MSG_DUPLICATE_ID;
    } else {
        if (r->watch_id != 0) {
            w->id = r->watch_id;
        } else {
            while (find(ws, ws->next_id, &link))
                ws->next_id++;
            w->id = ws->next_id++;
        }
        w->next = r->start_revision > 0 ? r->start_revision : rev + 1;
        w->behind = w->next <= rev; /* etcd's "unsynced" */
        w->prev_kv = r->prev_kv;
        w->progress_notify = r->progress_notify;
        w->fragment = r->fragment;
        w->quiet = 1;
        send_control(ws, &(reply){.rev = rev, .id = w->id, .created = 1});
        w->link = ws->watchers;
        ws->watchers = w;
        w = NULL;
    }
    if (w) {
        send_control(ws, &refused);
        watcher_free(w);
    }
    pthread_mutex_unlock(&hub->mu);
}

static void watch_cancel(wstream *ws, int64_t id)
{
    sk_etcd_watches *hub = ws->hub;
    pthread_mutex_lock(&hub->mu);
    watcher **link;
    watcher *w = find(ws, id, &link);
    if (w) {
        *link = w->link;
        watcher_free(w);
        send_control(ws, &(reply){.rev = hub->top, .id = id, .canceled = 1});
    }
    pthread_mutex_unlock(&hub->mu);
}

static void watch_message(void *state, const uint8_t *msg, size_t len)
{
    wstream *ws = state;
    sk_arena *a = sk_arena_new();
    ProtobufCAllocator pb = {pb_alloc, pb_free, a};
    Etcdserverpb__WatchRequest *req = etcdserverpb__watch_request__unpack(&pb, len, msg);
    if (!req) {
        sk_etcd_stream_end(ws->st, SK_GRPC_INTERNAL, "grpc: error unmarshalling request");
    } else if (req->request_union_case ==
               ETCDSERVERPB__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST) {
        watch_create(ws, req->create_request);
    } else if (req->request_union_case ==
               ETCDSERVERPB__WATCH_REQUEST__REQUEST_UNION_CANCEL_REQUEST) {
        watch_cancel(ws, req->cancel_request->watch_id);
    } else if (req->request_union_case ==
               ETCDSERVERPB__WATCH_REQUEST__REQUEST_UNION_PROGRESS_REQUEST) {
        pthread_mutex_lock(&ws->hub->mu);
        ws->progress_wanted = 1;
        pthread_mutex_unlock(&ws->hub->mu);
    }
    /* else: etcd ignores a request of no known kind */
    sk_arena_free(a);
}

static void watch_close(void *state)
{
    wstream *ws = state;
    sk_etcd_watches *hub = ws->hub;
    pthread_mutex_lock(&hub->mu);
    if (ws->prev)
        ws->prev->next = ws->next;
    else
        hub->streams = ws->next;
    if (ws->next)
        ws->next->prev = ws->prev;
    pthread_mutex_unlock(&hub->mu);
    for (watcher *w = ws->watchers, *next; w; w = next) {
        next = w->link;
        watcher_free(w);
    }
    free(ws);
}

const sk_etcd_stream_ops sk_etcd_watch_ops = {watch_open, watch_message, watch_close};
