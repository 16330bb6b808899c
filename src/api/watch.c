/*
 * watch.c - WATCH (?watch=true) as a cursor over committed history.
 *
 * A watch stream is: optional initial events (every object at a revision
 * R, as ADDED, streamed in chunks by list.c: constant memory), optionally a
 * BOOKMARK marking their end (watch-list, sendInitialEvents=true), then
 * every later change of the resource in revision order, read from the
 * store's gap-free history after the stream's cursor. Because the history
 * is the source, no event can be lost and a resumed watch (resourceVersion
 * N) gets exactly the changes after N; a cursor older than the compact
 * revision gets an ERROR event with 410 Expired, as kube-apiserver sends.
 * The events come from the cache's window, or, for a cursor older than the
 * window (a resume from before a restart, a watcher that fell behind), from
 * the store's history a page at a time (read/reader.h), the stream yielding
 * its HTTP thread between pages, until the window holds the cursor again.
 *
 * With selectors, a change is judged against the object before and after
 * it: entering the selection is ADDED, leaving it is DELETED (the new
 * object), as kube-apiserver's watch cache does.
 *
 * When nothing is left to send the stream parks in the watch hub and the
 * HTTP layer suspends the connection: no thread and no queue per watcher.
 *
 * In protobuf an event is a frame whose object is a reference to the
 * version's kept message (api/pbwire.h): encoded once, by the first
 * protobuf reader, for every watcher. Bookmarks and errors are built as
 * JSON lines and transcoded: they are small and rare.
 */
#include "api/crconvert.h"
#include "api/list.h"
#include "api/metawire.h"
#include "api/outq.h"
#include "api/pbwire.h"
#include "api/served.h"
#include "api/verbs.h"
#include "core/check.h"
#include "core/util.h"
#include "kube/protobuf.h"
#include "kube/status.h"
#include "watch/hub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_HIGH_WATER (256 * 1024) /* stop reading events past this much output */
#define BOOKMARK_GAP_MS 1000
#define EXPIRED_REASON_FMT "too old resource version: %lld (%lld)"

typedef struct watch_stream {
    sk_api *api;
    const sk_resource *res;
    sk_list_stream *ls; /* scope, selectors, initial events */
    int initial;        /* initial events still streaming */
    int end_bookmark;
    int bookmarks;
    uint64_t gen;   /* the cache generation the cursor belongs to */
    int64_t cursor; /* last revision examined */
    int64_t bookmark_rev;
    int64_t deadline_ms; /* 0: none */
    int64_t start_us;
    uint32_t spread; /* at shutdown, ends this fraction (of 2^32) into the grace period */
    int64_t last_bookmark_ms;
    sk_outq out;
    int64_t rendered; /* events rendered by the read in progress, for the hub's counter */
    int ended;
    uint64_t ticket;
    sk_api_wake_fn wake;
    void *wake_arg;
    sk_as as;                  /* Tables or metadata only (Accept: ...;as=...) */
    const char *meta_version;  /* of meta.k8s.io, for those */
    sk_include_object include; /* with their objects as asked */
    int protobuf;              /* frames of Kubernetes protobuf, not JSON lines */
    int failed;                /* an event could not be encoded: the stream ends */
    json_t *failure; /* an event its CRD's webhook could not convert: the Status */
} watch_stream;

/* Queues one event rendered as a JSON line in line (emptied). */
static void emit_line(watch_stream *ws, sk_buf *line)
{
    if (!ws->protobuf)
        sk_buf_append(&ws->out.text, line->data, line->len);
    else if (sk_pbwire_json_event(&ws->out, line->data, line->len) < 0)
        ws->failed = 1;
    sk_buf_reset(line);
}

static void render_bookmark(watch_stream *ws, int64_t rev, int initial_end)
{
    int partial = ws->as == SK_AS_PARTIAL;
    sk_buf line = SK_BUF_INIT;
    sk_buf_printf(&line,
                  "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s%s\","
                  "\"metadata\":{\"resourceVersion\":\"%lld\"",
                  partial ? "PartialObjectMetadata" : ws->res->kind, partial ? "meta.k8s.io/" : "",
                  partial ? ws->meta_version : ws->res->api_version, (long long)rev);
    if (initial_end)
        sk_buf_puts(&line, ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}");
    sk_buf_puts(&line, "}}}\n");
    emit_line(ws, &line);
    sk_buf_free(&line);
    ws->bookmark_rev = rev;
}

/* Queues one event: the object as a reference to the cache's shared bytes
 * (a Table or its metadata from what the version keeps: api/metawire.h).
 * obj: the stored form, parsed if needed; served: the URL's version of it
 * when that differs (shared storage), else NULL. Returns 0 when the object
 * cannot be read and no event is queued (skipped, as in lists), else 1. */
static int render_event(watch_stream *ws, const char *type, sk_blob *blob, json_t *obj,
                        json_t *served, int64_t rev)
{
    if (ws->protobuf) {
        if (sk_pbwire_event(&ws->out, type, ws->res, blob, served,
                            ws->as == SK_AS_OBJECT ? NULL : ws->meta_version) < 0)
            ws->failed = 1;
        return 1;
    }
    if (ws->as != SK_AS_OBJECT) {
        char prefix[48];
        snprintf(prefix, sizeof prefix, "{\"type\":\"%s\",\"object\":", type);
        /* a row of a version its webhook converted is that version's (a
         * custom resource's row is made per request: nothing is kept) */
        const json_t *row_of = served && sk_crconvert_webhook(ws->res) ? served : obj;
        int rc = ws->as == SK_AS_TABLE ? sk_metawire_table(&ws->out, prefix, ws->res, blob, row_of,
                                                           ws->include, rev, sk_wall_s())
                                       : sk_metawire_partial(&ws->out, prefix, ws->res, blob, obj,
                                                             served, ws->meta_version);
        if (rc == 0)
            sk_buf_puts(&ws->out.text, "}\n");
        return rc == 0;
    }
    /* Plain appends, no printf: this runs per event per watcher. */
    sk_buf_puts(&ws->out.text, "{\"type\":\"");
    sk_buf_puts(&ws->out.text, type);
    sk_buf_puts(&ws->out.text, "\",\"object\":");
    if (served)
        sk_served_append(&ws->out.text, served);
    else
        sk_outq_blob(&ws->out, blob);
    sk_buf_puts(&ws->out.text, "}\n");
    return 1;
}

/* An ERROR event carrying st (borrowed), the stream's last. */
static void render_error(watch_stream *ws, const json_t *st)
{
    char *text = json_dumps(st, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    sk_buf line = SK_BUF_INIT;
    sk_buf_printf(&line, "{\"type\":\"ERROR\",\"object\":%s}\n", text);
    emit_line(ws, &line);
    sk_buf_free(&line);
    free(text);
}

static void render_expired(watch_stream *ws, int64_t oldest)
{
    char msg[160];
    snprintf(msg, sizeof msg, EXPIRED_REASON_FMT, (long long)ws->cursor, (long long)oldest);
    json_t *st = sk_status_new(SK_ERR_EXPIRED, msg, NULL, NULL, NULL, NULL);
    render_error(ws, st);
    json_decref(st);
}

/* The event's object, parsed; NULL (logged) if it does not parse. */
static json_t *parse_blob(const watch_stream *ws, const sk_blob *b)
{
    size_t len;
    const char *data = sk_blob_data(b, &len);
    return sk_call_parse_stored(ws->res, data, len, sk_blob_name(b));
}

/* Turns one cache event into zero or one watch event. */
static void render_cache_event(watch_stream *ws, const sk_cache_event *ev)
{
    const char *ns = sk_list_stream_ns(ws->ls);
    if (ns && strcmp(sk_blob_ns(ev->obj), ns) != 0)
        return;
    int filters = sk_list_stream_filters(ws->ls), convert = sk_crconvert_needed(ws->res);
    json_t *obj = NULL, *served = NULL;
    if (filters || convert) { /* Tables and metadata parse on their own (api/metawire.h) */
        obj = parse_blob(ws, ev->obj);
        if (!obj)
            return; /* an unreadable object is skipped, as in lists */
        /* by a CRD's webhook: once per version, kept in the blob for the
         * other watchers of the version; one already in the version
         * asked is sent as stored */
        if (convert && !sk_crconvert_as_is(ws->res, obj) &&
            !(served = sk_crconvert_from_stored(ws->api, ws->res, obj, ev->obj, &ws->failure))) {
            json_decref(obj);
            return;
        }
    }
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED"};
    const char *type = names[ev->type];
    if (filters) {
        /* A tombstone carries the object's last state. */
        json_t *cur = served ? served : obj;
        int now = ev->type != SK_EVENT_DELETED && sk_list_stream_matches(ws->ls, cur);
        int before = 0;
        if (ev->type == SK_EVENT_DELETED) {
            before = sk_list_stream_matches(ws->ls, cur);
        } else if (ev->prev) {
            json_t *pobj = parse_blob(ws, ev->prev);
            if (pobj && convert && !sk_crconvert_as_is(ws->res, pobj)) {
                json_t *p = sk_crconvert_from_stored(ws->api, ws->res, pobj, ev->prev,
                                                     &ws->failure);
                json_decref(pobj);
                pobj = p;
            }
            if (ws->failure) {
                json_decref(served);
                json_decref(obj);
                return;
            }
            before = pobj && sk_list_stream_matches(ws->ls, pobj);
            json_decref(pobj);
        }
        type = now && before ? "MODIFIED" : now ? "ADDED" : before ? "DELETED" : NULL;
    }
    if (type && render_event(ws, type, ev->obj, obj, served, ev->rev))
        ws->rendered++;
    json_decref(served);
    json_decref(obj);
}

static int take_event(void *arg, const sk_cache_event *ev)
{
    watch_stream *ws = arg;
    render_cache_event(ws, ev);
    return ws->failure || sk_outq_size(&ws->out) >= OUT_HIGH_WATER;
}

/* Reads the events after the cursor into the output. Returns -1 if the
 * stream must end (the ERROR event is already rendered), 1 after a page of
 * SQL history (a cursor older than the cache's window: the caller yields
 * before the next page, so a long catch-up never holds the HTTP thread),
 * else 0. */
static int read_events(watch_stream *ws)
{
    while (sk_outq_size(&ws->out) < OUT_HIGH_WATER) {
        sk_read_events q = {.resource = ws->res->storage,
                            .gen = ws->gen,
                            .after_rev = ws->cursor,
                            .with_prev = sk_list_stream_filters(ws->ls)};
        int64_t scanned = ws->cursor;
        sk_read_source source;
        sk_err err = sk_reader_events(ws->api->reader, &q, take_event, ws, &scanned, &source);
        /* Counted per read, not per event: the counter is shared by every
         * HTTP thread, and 1,000 watchers each add every event. */
        sk_watch_hub_count(ws->api->hub, 0, ws->rendered, 0);
        ws->rendered = 0;
        if (ws->failure) {
            render_error(ws, ws->failure);
            return -1;
        }
        if (err == SK_ERR_EXPIRED) {
            sk_cache_state st;
            sk_cache_get_state(ws->api->cache, &st);
            int64_t cur = 0, compact = 0;
            sk_store_revisions(ws->api->store, &cur, &compact);
            render_expired(ws, ws->cursor < compact ? compact : st.oldest);
            sk_watch_hub_count(ws->api->hub, 0, 0, 1);
            return -1;
        }
        if (err != SK_OK || scanned == ws->cursor)
            break; /* nothing new (a store error: tried again at the next wake) */
        ws->cursor = scanned;
        if (source == SK_READ_SQL)
            return 1;
    }
    return 0;
}

static ssize_t watch_stream_read(void *self, char *buf, size_t max)
{
    watch_stream *ws = self;
    for (;;) {
        size_t n = sk_outq_read(&ws->out, buf, max);
        if (n > 0)
            return (ssize_t)n;
        if (ws->failed)
            return -1;
        if (ws->ended)
            return 0;
        if (ws->initial) {
            ssize_t got = sk_list_stream_read(ws->ls, buf, max);
            if (got != 0)
                return got;
            ws->initial = 0;
            if (ws->end_bookmark) {
                render_bookmark(ws, ws->cursor, 1);
                sk_metrics_watch_list(ws->api->metrics, sk_now_us() - ws->start_us);
            }
            continue;
        }
        int64_t now = sk_now_ms();
        if ((ws->api->stopping &&
             now >= ws->api->stop_at_ms + (((int64_t)ws->api->stop_grace_ms * ws->spread) >> 32)) ||
            (ws->deadline_ms && now >= ws->deadline_ms)) {
            ws->ended = 1;
            continue;
        }
        uint64_t seen = sk_watch_hub_seq(ws->api->hub);
        int got = read_events(ws);
        if (got < 0) {
            ws->ended = 1;
            continue;
        }
        if (sk_outq_size(&ws->out) > 0)
            continue;
        if (got > 0) {
            /* More history to page through: come back at once, after the
             * HTTP thread has served its other connections. */
            ws->wake(ws->wake_arg);
            return -2;
        }
        /* The revision moved without events for this watcher: tell it, at
         * most once per BOOKMARK_GAP_MS (commits elsewhere must not turn
         * into a bookmark each). */
        if (ws->bookmarks && ws->cursor > ws->bookmark_rev &&
            now - ws->last_bookmark_ms >= BOOKMARK_GAP_MS) {
            render_bookmark(ws, ws->cursor, 0);
            ws->last_bookmark_ms = now;
            continue;
        }
        uint64_t ticket = sk_watch_hub_park(ws->api->hub, seen, ws->wake, ws->wake_arg);
        if (ticket == SK_HUB_STOPPED) {
            ws->ended = 1;
            continue;
        }
        if (ticket == SK_HUB_MOVED)
            continue; /* the cache moved while we looked: look again */
        ws->ticket = ticket;
        return -2;
    }
}

static void watch_stream_release(void *self)
{
    watch_stream *ws = self;
    if (ws->ticket)
        sk_watch_hub_cancel(ws->api->hub, ws->ticket);
    sk_watch_hub_count(ws->api->hub, -1, 0, 0);
    sk_outq_free(&ws->out);
    json_decref(ws->failure);
}

/* The stream's start: its revision (waiting for the cache to reach it, see
 * sk_call_plan_read) and whether it begins with initial events. */
static int watch_start(sk_api_call *call)
{
    sk_list_request *wst = call->verb_state;
    const sk_list_options *o = &wst->opts;
    int64_t want = o->rv < 0 ? 0 : o->rv;
    /* Initial events: legacy watches without a revision (or "0"), and
     * watch-list (sendInitialEvents=true) at a revision not older than asked;
     * an unset revision is a consistent read. Otherwise the changes after
     * the given revision, once the cache has reached it. */
    int initial = o->send_initial_events == 1 || (o->send_initial_events < 0 && want == 0);
    sk_cache_state st;
    sk_cache_get_state(call->api->cache, &st);
    int64_t start = want, cur = 0, compact = 0;
    /* The store knows a compaction at once; the cache within a tick. */
    sk_err err = want > 0 ? sk_store_revisions(call->api->store, &cur, &compact) : SK_OK;
    if (err != SK_OK) {
        sk_call_reply_store_error(call, err, "");
        return SK_STEP_DONE;
    }
    if (initial || o->rv <= 0 || want > st.rev) {
        int rc = sk_call_plan_read(call, o->rv, watch_start, &start);
        if (rc != SK_PLAN_NOW)
            return rc;
    }
    if (!initial && want > 0)
        start = want;
    watch_stream *ws = sk_arena_alloc(call->arena, sizeof *ws);
    sk_arena_defer(call->arena, watch_stream_release, ws);
    ws->api = call->api;
    ws->res = call->res;
    ws->ls = wst->ls;
    ws->bookmarks = o->allow_bookmarks;
    ws->as = call->out_as.as;
    ws->meta_version = call->out_as.meta_version;
    ws->include = o->include_object;
    ws->protobuf = call->out_as.protobuf; /* objects or their metadata: see list.c */
    ws->wake = call->wake;
    ws->wake_arg = call->wake_arg;
    ws->start_us = call->start_us;
    if (o->timeout_s > 0)
        ws->deadline_ms = sk_now_ms() + o->timeout_s * 1000;
    ws->gen = st.generation;
    sk_random_bytes(&ws->spread, sizeof ws->spread);
    ws->cursor = start;
    if (initial) {
        ws->initial = 1;
        ws->end_bookmark = o->send_initial_events == 1;
        sk_list_stream_start_initial(ws->ls, start);
    } else if (start < compact) {
        render_expired(ws, compact);
        sk_watch_hub_count(call->api->hub, 0, 0, 1);
        ws->ended = 1;
    }
    ws->bookmark_rev = ws->cursor;
    sk_watch_hub_count(call->api->hub, 1, 0, 0);
    call->stream = (sk_call_stream){watch_stream_read, ws, 1};
    call->status = 200;
    call->content_type_out = ws->protobuf ? SK_PROTOBUF_WATCH_MEDIA : "application/json";
    return SK_STEP_DONE;
}

int sk_verb_watch(sk_api_call *call)
{
    return sk_list_request_begin(call, 1) ? watch_start(call) : SK_STEP_DONE;
}
