/*
 * list.c - LIST: consistent, paged, streamed (and the stream a watch's
 * initial events use).
 *
 * Every list reads at one revision R (the store's current revision for a
 * fresh list, the token's for a continued one) in chunks through the read
 * path, so a list of any size costs O(chunk) memory: items are rendered
 * into a small queue as the HTTP layer pulls bytes, and no transaction or
 * lock stays held while a slow client reads.
 *
 * Paging (limit/continue): a page holds at most `limit` matching items; the
 * continue token (kube/token.h) names R and the last key returned, is
 * signed with the store's secret, and is bound to the resource and
 * namespace scope of the list. Selectors filter after the range read, so a
 * page may hold fewer items than `limit` and still carry a token; scanning
 * per page is bounded.
 *
 * A page of an unfiltered list that has more also says how many
 * (remainingItemCount), as kube-apiserver does for lists without selectors.
 *
 * The answer is laid out as kube-apiserver's: kind, apiVersion, metadata,
 * then the items, each built-in item without its kind and apiVersion (the
 * list names them; custom resources' items keep theirs, as kube's do). A
 * list without a limit knows its metadata (the revision) before its first
 * item and streams; a page's continue token and remaining count are known
 * only once its last item is, so a page is queued whole (items: references
 * to cached objects, text for the rest) and its head written before it.
 * That holds at most `limit` items, the size the client asked for, as
 * kube-apiserver holds every page.
 *
 * In protobuf (api/pbwire.h) the list's envelope starts with the length of
 * everything in it, so every protobuf list is held as a page is: items as
 * references to each version's kept message, the head written once the
 * last item is known. Watches' initial events are frames of their own and
 * stream.
 */
#include "api/list.h"
#include "api/crconvert.h"
#include "api/metawire.h"
#include "api/outq.h"
#include "api/pbwire.h"
#include "api/served.h"
#include "api/verbs.h"
#include "core/check.h"
#include "core/util.h"
#include "kube/convert.h"
#include "kube/partial.h"
#include "kube/protobuf.h"
#include "kube/selector.h"
#include "kube/status.h"
#include "kube/table.h"
#include "kube/token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_ROWS 500
#define CHUNK_BYTES (256 * 1024) /* a chunk ends early past this much output */
#define SCAN_FACTOR 10           /* a filtered page scans at most limit * SCAN_FACTOR rows */

typedef enum { LS_HEAD, LS_ITEMS, LS_TAIL, LS_END } ls_phase;

struct sk_list_stream {
    sk_api *api;
    const sk_resource *res;
    const char *ns; /* NULL: all namespaces / cluster-scoped (in the call's arena) */
    int64_t rev;
    int64_t limit; /* 0: unlimited */
    sk_as as;      /* Tables or metadata only (Accept: ...;as=...) */
    const char *meta_version;
    sk_include_object include_object;
    sk_label_selector *labels;
    sk_field_selector *fields;
    char *after_ns, *after_name;
    int64_t emitted, scanned_page;
    int exhausted, has_more, first_item;
    ls_phase phase;
    int watch_events; /* render items as ADDED watch events, no list framing */
    int hold_page;    /* a paged list: items queue in `page` until the head is known */
    int protobuf;     /* Kubernetes protobuf, not JSON (api/pbwire.h) */
    uint32_t items_field; /* a protobuf list's items field (sk_pbwire_items_field) */
    /* `{"kind":"K","apiVersion":"V",` as the server writes a built-in
     * object of the list's resource: what a list item leaves out (in the
     * call's arena; NULL where items are written whole) */
    const char *item_typemeta;
    sk_outq out;
    sk_outq page;
    int failed;
    json_t *failure; /* why a chunk failed to convert (a Status), if it did */
};

static const char *scope_ns(const sk_list_stream *ls)
{
    return ls->ns ? ls->ns : "";
}

static void set_after(sk_list_stream *ls, const char *ns, const char *name)
{
    free(ls->after_ns);
    free(ls->after_name);
    ls->after_ns = strdup(ns);
    ls->after_name = strdup(name);
    SK_CHECK(ls->after_ns && ls->after_name);
}

/* Where items are rendered: the page, while its head is not yet known. */
static sk_outq *items_out(sk_list_stream *ls)
{
    return ls->hold_page ? &ls->page : &ls->out;
}

/* One object of a list as kube-apiserver writes it: a built-in kind's item
 * without kind and apiVersion. The stored (or served) JSON starts with
 * exactly those two members when the server wrote it; a value that does
 * not (moved in by hand, say) is parsed and rewritten. */
static void append_list_object(sk_list_stream *ls, sk_outq *q, sk_blob *blob, json_t *served)
{
    if (!ls->item_typemeta) {
        if (served)
            sk_served_append(&q->text, served);
        else
            sk_outq_blob(q, blob);
        return;
    }
    if (served) {
        json_t *copy = json_copy(served); /* shallow: served stays whole */
        SK_CHECK_ALLOC(copy);
        json_object_del(copy, "kind");
        json_object_del(copy, "apiVersion");
        sk_served_append(&q->text, copy);
        json_decref(copy);
        return;
    }
    size_t len, n = strlen(ls->item_typemeta);
    const char *data = sk_blob_data(blob, &len);
    if (n <= len && memcmp(data, ls->item_typemeta, n) == 0) {
        sk_buf_putc(&q->text, '{');
        sk_outq_blob_from(q, blob, n);
        return;
    }
    json_t *obj = json_loadb(data, len, 0, NULL);
    if (json_is_object(obj)) {
        json_object_del(obj, "kind");
        json_object_del(obj, "apiVersion");
        sk_served_append(&q->text, obj);
    } else {
        sk_outq_blob(q, blob);
    }
    json_decref(obj);
}

/* Renders one item; returns non-zero to stop the chunk. conv: the item
 * converted by its CRD's webhook (borrowed, with parsed, its stored form),
 * or NULL to convert here. */
static int render_item(sk_list_stream *ls, sk_blob *blob, json_t *parsed, json_t *conv,
                       int *cut)
{
    sk_outq *q = items_out(ls);
    if (ls->limit && ls->emitted == ls->limit) {
        ls->has_more = 1; /* a key exists beyond a full page */
        return 1;
    }
    ls->scanned_page++;
    set_after(ls, sk_blob_ns(blob), sk_blob_name(blob));
    json_t *obj = NULL, *served = NULL; /* stored form; the URL's version if it differs */
    int match = 1, convert = sk_crconvert_needed(ls->res);
    if (conv) {
        /* one already in the version asked is written as stored */
        obj = json_incref(parsed);
        served = sk_crconvert_as_is(ls->res, parsed) ? NULL : json_incref(conv);
        match = sk_list_stream_matches(ls, served ? served : obj);
    } else if (convert || sk_list_stream_filters(ls)) {
        size_t len;
        const char *data = sk_blob_data(blob, &len);
        obj = sk_call_parse_stored(ls->res, data, len, sk_blob_name(blob));
        if (obj && convert)
            served = sk_convert_from_stored(ls->res, obj);
        match = obj && sk_list_stream_matches(ls, served ? served : obj);
    } else {
        /* Unparsed, a stored value that is no JSON object (one no
         * configured key decrypts: store.c, opened_value) would be copied
         * into the list as it is; it is left out, as the parsed paths
         * leave it out, so the list goes on without it. (Tables and
         * metadata parse it when they have not kept what they take from
         * it: api/metawire.h, which leaves it out too.) */
        size_t len;
        const char *data = sk_blob_data(blob, &len);
        match = len > 0 && data[0] == '{';
    }
    if (match && ls->protobuf) {
        const json_t *as_served = convert ? served : NULL;
        const char *partial = ls->as == SK_AS_OBJECT ? NULL : ls->meta_version;
        if ((ls->watch_events ? sk_pbwire_event(q, "ADDED", ls->res, blob, as_served, partial)
                              : sk_pbwire_list_item(q, ls->items_field, ls->res, blob, as_served,
                                                    partial)) < 0)
            ls->failed = 1;
        ls->emitted++;
    } else if (match && ls->as != SK_AS_OBJECT) {
        const char *prefix = ls->watch_events ? "{\"type\":\"ADDED\",\"object\":"
                             : ls->first_item ? ""
                                              : ",";
        /* a row of a version its webhook converted is that version's (a
         * custom resource's row is made per request: nothing is kept) */
        const json_t *row_of = conv && served ? served : obj;
        int rc =
            ls->as != SK_AS_TABLE
                ? sk_metawire_partial(q, prefix, ls->res, blob, obj, served, ls->meta_version)
            : ls->watch_events
                ? sk_metawire_table(q, prefix, ls->res, blob, row_of, ls->include_object,
                                    sk_blob_rev(blob), sk_wall_s())
                : sk_metawire_row(q, prefix, ls->res, blob, row_of, ls->include_object,
                                  sk_wall_s());
        if (rc == 0) {
            if (ls->watch_events)
                sk_buf_puts(&q->text, "}\n");
            ls->first_item = 0;
            ls->emitted++;
        }
    } else if (match) {
        if (ls->watch_events)
            sk_buf_puts(&q->text, "{\"type\":\"ADDED\",\"object\":");
        else if (!ls->first_item)
            sk_buf_putc(&q->text, ',');
        ls->first_item = 0;
        append_list_object(ls, q, blob, convert ? served : NULL);
        if (ls->watch_events)
            sk_buf_puts(&q->text, "}\n");
        ls->emitted++;
    }
    json_decref(served);
    json_decref(obj);
    if (ls->limit && ls->emitted < ls->limit && ls->scanned_page >= ls->limit * SCAN_FACTOR) {
        ls->has_more = 1; /* bounded work per page: hand back a token early */
        return 1;
    }
    /* Bounded memory per stream: send this, read on later. Not for a held
     * page, which is sent only once whole: there a cut would end every
     * later chunk after one item, each re-reading up to CHUNK_ROWS rows. */
    if (!ls->hold_page && sk_outq_size(q) >= CHUNK_BYTES) {
        *cut = 1;
        return 1;
    }
    return 0;
}

/* Reads and renders the next chunk. */
static sk_err fetch_chunk(sk_list_stream *ls)
{
    int want = CHUNK_ROWS;
    if (ls->limit && ls->limit - ls->emitted + 1 < want)
        want = (int)(ls->limit - ls->emitted + 1);
    sk_read_query q = {
        .resource = ls->res->storage,
        .ns = ls->ns,
        .after_ns = ls->after_ns,
        .after_name = ls->after_name,
        .rev = ls->rev,
        .limit = want,
    };
    sk_blob *items[CHUNK_ROWS];
    int n = 0, rendered = 0, cut = 0;
    sk_read_source source;
    sk_err err = sk_reader_list(ls->api->reader, &q, items, &n, &source);
    if (err != SK_OK)
        return err;
    sk_metrics_list_chunk(ls->api->metrics, source == SK_READ_CACHE);
    /* A CRD's conversion webhook converts the chunk in one review */
    json_t *parsed[CHUNK_ROWS], *conv[CHUNK_ROWS];
    int by_webhook = sk_crconvert_webhook(ls->res);
    if (by_webhook) {
        for (int i = 0; i < n; i++) {
            size_t len;
            const char *data = sk_blob_data(items[i], &len);
            parsed[i] = sk_call_parse_stored(ls->res, data, len, sk_blob_name(items[i]));
        }
        if (sk_crconvert_list_from_stored(ls->api, ls->res, parsed, items, (size_t)n, conv,
                                          &ls->failure) < 0) {
            for (int i = 0; i < n; i++) {
                json_decref(parsed[i]);
                sk_blob_unref(items[i]);
            }
            return SK_ERR_INTERNAL;
        }
    }
    for (int i = 0; i < n; i++) {
        /* Filtering and rendering happen here, after the read released
         * every lock; the references are dropped as they are used. */
        if (rendered == i && !render_item(ls, items[i], by_webhook ? parsed[i] : NULL,
                                          by_webhook ? conv[i] : NULL, &cut))
            rendered++;
        if (by_webhook) {
            json_decref(parsed[i]);
            json_decref(conv[i]);
        }
        sk_blob_unref(items[i]);
    }
    if (ls->has_more || (n < want && !cut))
        ls->exhausted = 1;
    return SK_OK;
}

static char *encode_token(sk_list_stream *ls, int64_t rev)
{
    unsigned char secret[32];
    char qbuf[SK_QUALIFIED_RESOURCE_MAX];
    if (sk_store_token_secret(ls->api->store, secret) != SK_OK)
        return NULL;
    sk_token t = {
        .rev = rev,
        .resource = (char *)sk_call_qualified_resource(ls->res, qbuf, sizeof qbuf),
        .ns = (char *)scope_ns(ls),
        .last_ns = ls->after_ns ? ls->after_ns : "",
        .last_name = ls->after_name ? ls->after_name : "",
    };
    return sk_token_encode(&t, secret);
}

/* The number of items after the page's last key at the list's revision,
 * -1 if it cannot be read. kube-apiserver reports it (remainingItemCount)
 * on an unfiltered page that has more; etcd counts the rest of the range
 * for it on every page, the cache's snapshot knows it from its key counts
 * (cache/btree.h), and only a read outside the cache walks the rest. */
static int64_t count_remaining(sk_list_stream *ls)
{
    int64_t count = -1;
    sk_read_query q = {
        .resource = ls->res->storage,
        .ns = ls->ns,
        .after_ns = ls->after_ns,
        .after_name = ls->after_name,
        .rev = ls->rev,
        .limit = 1,
    };
    if (sk_reader_count(ls->api->reader, &q, &count) != SK_OK)
        count = -1;
    return count;
}

/* The list's metadata, as kube's ListMeta orders it. */
static void render_list_meta(sk_list_stream *ls, sk_buf *b)
{
    sk_buf_printf(b, "{\"resourceVersion\":\"%lld\"", (long long)ls->rev);
    if (ls->has_more) {
        char *tok = encode_token(ls, ls->rev);
        if (tok) {
            sk_buf_puts(b, ",\"continue\":");
            sk_buf_json_string(b, tok);
            free(tok);
        } else {
            ls->failed = 1;
        }
        int64_t remaining = sk_list_stream_filters(ls) ? -1 : count_remaining(ls);
        if (remaining > 0)
            sk_buf_printf(b, ",\"remainingItemCount\":%lld", (long long)remaining);
    }
    sk_buf_putc(b, '}');
}

/* Everything before the first item: kind, apiVersion, metadata, and the
 * opening of the items (rows for a Table). */
static void render_head(sk_list_stream *ls)
{
    sk_buf meta = SK_BUF_INIT;
    render_list_meta(ls, &meta);
    if (ls->as == SK_AS_TABLE)
        sk_table_begin(&ls->out.text, ls->res, meta.data);
    else if (ls->as == SK_AS_PARTIAL_LIST)
        sk_partial_list_begin(&ls->out.text, ls->meta_version, meta.data);
    else
        sk_buf_printf(&ls->out.text,
                      "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":%s,"
                      "\"items\":[",
                      ls->res->list_kind, ls->res->api_version, meta.data);
    sk_buf_free(&meta);
}

/* A protobuf list, its page complete: head, items, end. */
static void render_protobuf_list(sk_list_stream *ls)
{
    sk_buf meta = SK_BUF_INIT;
    render_list_meta(ls, &meta);
    if (sk_pbwire_list(&ls->out, ls->res, ls->as == SK_AS_OBJECT ? NULL : ls->meta_version,
                       meta.data, &ls->page) < 0)
        ls->failed = 1;
    sk_buf_free(&meta);
}

/* Produces more output; returns -1 if the stream failed. */
static int advance(sk_list_stream *ls)
{
    switch (ls->phase) {
    case LS_HEAD:
        if (!ls->watch_events && !ls->hold_page)
            render_head(ls);
        ls->phase = LS_ITEMS;
        return 0;
    case LS_ITEMS:
        if (ls->exhausted) {
            ls->phase = LS_TAIL;
            return 0;
        }
        return fetch_chunk(ls) == SK_OK ? 0 : -1;
    case LS_TAIL:
        if (ls->protobuf && !ls->watch_events) {
            render_protobuf_list(ls);
        } else {
            if (ls->hold_page) {
                render_head(ls);
                sk_outq_append(&ls->out, &ls->page);
            }
            if (!ls->watch_events)
                sk_buf_puts(&ls->out.text, "]}\n"); /* as kube's JSON encoder ends it */
        }
        ls->phase = LS_END;
        return ls->failed ? -1 : 0;
    case LS_END:
        return 0;
    }
    return -1;
}

ssize_t sk_list_stream_read(void *self, char *buf, size_t max)
{
    sk_list_stream *ls = self;
    size_t n;
    while ((n = sk_outq_read(&ls->out, buf, max)) == 0) {
        if (ls->phase == LS_END)
            return 0;
        if (advance(ls) < 0)
            return -1;
        /* A chunk whose rows all failed the selectors yields nothing: hand
         * MHD one space (legal between list items) rather than scanning the
         * whole resource in this one callback while this thread's other
         * connections wait. Watch streams are lines, where it is not. */
        if (ls->phase == LS_ITEMS && !ls->watch_events && !ls->hold_page &&
            sk_outq_size(&ls->out) == 0)
            sk_buf_putc(&ls->out.text, ' ');
    }
    return (ssize_t)n;
}

static void stream_release(void *self)
{
    sk_list_stream *ls = self;
    free(ls->after_ns);
    free(ls->after_name);
    sk_label_selector_free(ls->labels);
    sk_field_selector_free(ls->fields);
    sk_outq_free(&ls->out);
    sk_outq_free(&ls->page);
    json_decref(ls->failure);
}

/* A watch of one object is the collection's narrowed by metadata.name, the
 * name escaped as a field selector value. */
static const char *narrow_to_item(sk_api_call *call, const char *more)
{
    sk_buf sel = SK_BUF_INIT;
    sk_buf_puts(&sel, "metadata.name=");
    for (const char *p = call->name; *p; p++) {
        if (*p == ',' || *p == '=' || *p == '\\')
            sk_buf_putc(&sel, '\\');
        sk_buf_putc(&sel, *p);
    }
    if (more)
        sk_buf_printf(&sel, ",%s", more);
    const char *s = sk_arena_strdup(call->arena, sel.data);
    sk_buf_free(&sel);
    return s;
}

static sk_list_stream *stream_new(sk_api_call *call, const sk_list_options *opts, int watch)
{
    sk_list_stream *ls = sk_arena_alloc(call->arena, sizeof *ls);
    sk_arena_defer(call->arena, stream_release, ls);
    ls->api = call->api;
    ls->res = call->res;
    ls->as = call->out_as.as;
    ls->meta_version = call->out_as.meta_version;
    ls->include_object = opts->include_object;
    ls->first_item = 1;
    ls->limit = watch ? 0 : opts->limit;
    ls->watch_events = watch;
    /* Negotiation (kube/accept.h) chose protobuf only for the objects of
     * kinds that have it and for metadata-only answers, never Tables. */
    ls->protobuf = call->out_as.protobuf;
    if (ls->protobuf && !watch)
        ls->items_field =
            sk_pbwire_items_field(ls->res, ls->as == SK_AS_OBJECT ? NULL : ls->meta_version);
    ls->hold_page = ls->limit > 0 || (ls->protobuf && !watch);
    if (!watch && !call->res->custom && !ls->protobuf) {
        sk_buf tm = SK_BUF_INIT;
        sk_buf_printf(&tm, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",", call->res->kind,
                      call->res->api_version);
        ls->item_typemeta = sk_arena_strdup(call->arena, tm.data);
        sk_buf_free(&tm);
    }
    ls->exhausted = watch; /* no initial events until sk_list_stream_start_initial */
    if (call->res->namespaced && !call->route.all_namespaces)
        ls->ns = call->ns;
    const char *fields =
        call->name ? narrow_to_item(call, opts->field_selector) : opts->field_selector;
    char *msg = NULL;
    sk_err err = sk_label_selector_parse(opts->label_selector ? opts->label_selector : "",
                                         &ls->labels, &msg);
    if (err == SK_OK && fields)
        err = sk_field_selector_parse(fields, call->res, &ls->fields, &msg);
    if (err != SK_OK) {
        sk_call_reply_error(call, err, msg ? msg : "invalid selector");
        free(msg);
        return NULL;
    }
    if (ls->fields && !ls->ns && call->res->namespaced) {
        /* metadata.namespace=X narrows an all-namespaces list to one range. */
        const char *fns = sk_field_selector_required(ls->fields, "metadata.namespace");
        if (fns)
            ls->ns = sk_arena_strdup(call->arena, fns);
    }
    return ls;
}

sk_list_request *sk_list_request_begin(sk_api_call *call, int watch)
{
    /* a watch's events carry objects, a list is a list */
    if (sk_call_refuse_partial(call, !watch))
        return NULL;
    sk_list_request *rq = sk_arena_alloc(call->arena, sizeof *rq);
    call->verb_state = rq;
    json_t *status = NULL;
    if (sk_list_options_parse(sk_call_query, call, watch, &rq->opts, &status) != SK_OK) {
        sk_call_reply_status_object(call, status);
        return NULL;
    }
    return (rq->ls = stream_new(call, &rq->opts, watch)) ? rq : NULL;
}

void sk_list_stream_start_initial(sk_list_stream *ls, int64_t rev)
{
    ls->rev = rev;
    ls->exhausted = rev == 0;
    ls->phase = LS_ITEMS;
}

const char *sk_list_stream_ns(const sk_list_stream *ls)
{
    return ls->ns;
}

int sk_list_stream_matches(const sk_list_stream *ls, json_t *obj)
{
    return sk_label_selector_matches(ls->labels,
                                     json_object_get(json_object_get(obj, "metadata"), "labels")) &&
           (!ls->fields || sk_field_selector_matches(ls->fields, obj));
}

int sk_list_stream_filters(const sk_list_stream *ls)
{
    return !sk_label_selector_is_empty(ls->labels) || ls->fields != NULL;
}

/* ---- the LIST verb --------------------------------------------------------- */

/* 410 for a continue token whose revision was compacted, with a token that
 * continues the same key range at the current revision, as Kubernetes does
 * for clients that accept an inconsistent list. */
static void reply_expired_token(sk_api_call *call, sk_list_stream *ls)
{
    json_t *st = sk_status_new(
        SK_ERR_EXPIRED,
        "The provided continue parameter is too old to display a consistent list result. You can "
        "start a new list without the continue parameter, or use the continue token in this "
        "response to retrieve the remainder of the results. Continuing with the provided token "
        "results in an inconsistent list - objects that were created, modified, or deleted "
        "between the time the first chunk was returned and now may show up in the list.",
        NULL, NULL, NULL, NULL);
    int64_t cur = 0;
    char *tok =
        sk_store_revisions(call->api->store, &cur, NULL) == SK_OK ? encode_token(ls, cur) : NULL;
    if (tok)
        json_object_set_new(json_object_get(st, "metadata"), "continue", json_string(tok));
    free(tok);
    sk_call_reply_status_object(call, st);
}

/* A continued list: its revision and start key from the token. */
static int settle_continue(sk_api_call *call, sk_list_stream *ls, const char *cont)
{
    unsigned char secret[32];
    sk_err err = sk_store_token_secret(call->api->store, secret);
    if (err != SK_OK) {
        sk_call_reply_store_error(call, err, "");
        return SK_STEP_DONE;
    }
    sk_token t = {0};
    char *msg = NULL;
    err = sk_token_decode(cont, secret, &t, &msg);
    char qbuf[SK_QUALIFIED_RESOURCE_MAX];
    const char *qres = sk_call_qualified_resource(ls->res, qbuf, sizeof qbuf);
    int ok = err == SK_OK && strcmp(t.resource, qres) == 0 && strcmp(t.ns, scope_ns(ls)) == 0 &&
             (!ls->ns || strcmp(t.last_ns, ls->ns) == 0);
    if (!ok) {
        sk_call_reply_error(
            call, SK_ERR_BAD_REQUEST,
            err != SK_OK && msg ? msg : "continue key is not valid: it belongs to another list");
        free(msg);
        sk_token_clear(&t);
        return SK_STEP_DONE;
    }
    ls->rev = t.rev;
    set_after(ls, t.last_ns, t.last_name);
    sk_token_clear(&t);
    /* The cache may still hold a compacted revision: the store decides. */
    int64_t cur, compact;
    if ((err = sk_store_revisions(call->api->store, &cur, &compact)) != SK_OK) {
        sk_call_reply_store_error(call, err, "");
        return SK_STEP_DONE;
    }
    if (ls->rev < compact) {
        reply_expired_token(call, ls);
        return SK_STEP_DONE;
    }
    return SK_PLAN_NOW;
}

static int list_settle(sk_api_call *call);

/* The revision the list reads at: SK_PLAN_NOW, or the step code to return
 * (it replied, or the call waits for a revision: see sk_call_plan_read). */
static int settle_revision(sk_api_call *call, sk_list_request *st)
{
    const sk_list_options *o = &st->opts;
    sk_list_stream *ls = st->ls;
    if (o->cont)
        return settle_continue(call, ls, o->cont);
    int rc = sk_call_plan_read(call, o->rv, list_settle, &ls->rev);
    if (rc != SK_PLAN_NOW || o->rv < 0)
        return rc; /* unset: a consistent read, at least the store's current revision */
    int exact = o->rvm != SK_RVM_UNSET ? o->rvm == SK_RVM_EXACT : (o->limit > 0 && o->rv > 0);
    if (exact && o->rv == 0) {
        sk_call_reply_status_object(
            call, sk_list_options_forbidden("resourceVersionMatch",
                                            "resourceVersionMatch \"exact\" is forbidden for "
                                            "resourceVersion \"0\""));
        return SK_STEP_DONE;
    }
    if (exact) {
        /* The cache may hold a revision the store has compacted for a tick. */
        int64_t cur, compact;
        sk_err err;
        if ((err = sk_store_revisions(call->api->store, &cur, &compact)) != SK_OK ||
            o->rv < compact) {
            sk_call_reply_store_error(call, err != SK_OK ? err : SK_ERR_EXPIRED, "");
            return SK_STEP_DONE;
        }
        ls->rev = o->rv;
    }
    return SK_PLAN_NOW;
}

static int list_settle(sk_api_call *call)
{
    sk_list_request *st = call->verb_state;
    sk_list_stream *ls = st->ls;
    int rc = settle_revision(call, st);
    if (rc != SK_PLAN_NOW)
        return rc;
    if (ls->rev == 0)
        ls->exhausted = 1; /* an empty store */
    /* Read the first chunk now so that errors (410 Expired) are proper Status replies. */
    advance(ls);
    sk_err err;
    if (!ls->exhausted && (err = fetch_chunk(ls)) != SK_OK) {
        if (err == SK_ERR_EXPIRED && st->opts.cont)
            reply_expired_token(call, ls);
        else if (ls->failure)
            sk_call_reply_status_object(call, json_incref(ls->failure));
        else
            sk_call_reply_store_error(call, err, "");
        return SK_STEP_DONE;
    }
    call->status = 200;
    call->content_type_out = ls->protobuf ? SK_PROTOBUF_MEDIA : "application/json";
    call->stream = (sk_call_stream){sk_list_stream_read, ls, 0};
    return SK_STEP_DONE;
}

int sk_verb_list(sk_api_call *call)
{
    return sk_list_request_begin(call, 0) ? list_settle(call) : SK_STEP_DONE;
}
