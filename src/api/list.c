/*
 * list.c - LIST: consistent, paged, streamed.
 *
 * Every list reads at one snapshot revision R (the store's current revision
 * for a fresh list, the token's for a continued one) in chunks of keyset
 * range queries, so a list of any size costs O(chunk) memory: items are
 * rendered into a small buffer as the HTTP layer pulls bytes, and each chunk
 * is a short query (no transaction held open while a slow client reads).
 *
 * Paging (limit/continue): a page holds at most `limit` matching items; the
 * continue token (token.c) names R and the last key returned, is signed with
 * the store's secret, and is bound to the resource and namespace scope of
 * the list. Selectors filter after the range read, so a page may hold fewer
 * items than `limit` and still carry a token; scanning per page is bounded.
 *
 * The list's metadata (resourceVersion, continue) is written after the
 * items: JSON key order is free, and the token is only known at the end.
 */
#include "api/internal.h"
#include "api/outq.h"
#include "api/status.h"
#include "api/token.h"
#include "core/check.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_ROWS 500
#define CHUNK_BYTES (256 * 1024) /* a chunk ends early past this much output */
#define SCAN_FACTOR 10           /* a filtered page scans at most limit * SCAN_FACTOR rows */

typedef enum { LS_HEAD, LS_ITEMS, LS_TAIL, LS_END } ls_phase;

struct list_stream {
    sk_api *api;
    const sk_resource *res;
    char *ns; /* NULL: all namespaces / cluster-scoped */
    int64_t rev;
    int limit; /* 0: unlimited */
    int table;
    int include_object; /* Table rows: 0 none, 1 metadata, 2 object */
    sk_label_selector *labels;
    sk_field_selector *fields;
    char *after_ns, *after_name;
    int emitted, scanned_page, exhausted, has_more, first_item;
    ls_phase phase;
    int watch_events; /* render items as ADDED watch events, no list framing */
    sk_outq out;
    int failed;
};

/* ---- Table rendering --------------------------------------------------- */

typedef struct table_column {
    const char *name, *type, *format, *description;
} table_column;

static void human_age(int64_t secs, char *out, size_t n)
{
    if (secs < 0) {
        snprintf(out, n, "0s");
        return;
    }
    int64_t m = secs / 60, h = secs / 3600, d = h / 24, y = d / 365;
    if (secs < 120)
        snprintf(out, n, "%llds", (long long)secs);
    else if (m < 10 && secs % 60)
        snprintf(out, n, "%lldm%llds", (long long)m, (long long)(secs % 60));
    else if (m < 180)
        snprintf(out, n, "%lldm", (long long)m);
    else if (h < 8 && m % 60)
        snprintf(out, n, "%lldh%lldm", (long long)h, (long long)(m % 60));
    else if (h < 48)
        snprintf(out, n, "%lldh", (long long)h);
    else if (h < 192 && h % 24)
        snprintf(out, n, "%lldd%lldh", (long long)d, (long long)(h % 24));
    else if (d < 730)
        snprintf(out, n, "%lldd", (long long)d);
    else if (y < 8 && d % 365)
        snprintf(out, n, "%lldy%lldd", (long long)y, (long long)(d % 365));
    else
        snprintf(out, n, "%lldy", (long long)y);
}

/* Kind-specific middle columns (between Name and Age), as kubectl shows them. */
static int kind_columns(const sk_resource *r, const table_column **cols)
{
    static const table_column cm[] = {{"Data", "integer", "", "Number of data keys"}};
    static const table_column secret[] = {{"Type", "string", "", "The type of the secret"},
                                          {"Data", "integer", "", "Number of data keys"}};
    static const table_column sa[] = {{"Secrets", "integer", "", "Number of secrets"}};
    static const table_column ns[] = {{"Status", "string", "", "The phase of the namespace"}};
    static const table_column lease[] = {{"Holder", "string", "", "The holder of the lease"}};
    static const table_column ev[] = {{"Type", "string", "", "Event type"},
                                      {"Reason", "string", "", "Event reason"},
                                      {"Object", "string", "", "The involved object"},
                                      {"Message", "string", "", "Event message"}};
    struct {
        const char *kind;
        const table_column *cols;
        int n;
    } table[] = {{"ConfigMap", cm, 1}, {"Secret", secret, 2}, {"ServiceAccount", sa, 1},
                 {"Namespace", ns, 1}, {"Lease", lease, 1},   {"Event", ev, 4}};
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        if (strcmp(table[i].kind, r->kind) == 0) {
            *cols = table[i].cols;
            return table[i].n;
        }
    }
    *cols = NULL;
    return 0;
}

static json_t *kind_cells(const sk_resource *r, json_t *obj)
{
    json_t *cells = json_array();
    const char *k = r->kind;
    if (strcmp(k, "ConfigMap") == 0 || strcmp(k, "Secret") == 0) {
        if (strcmp(k, "Secret") == 0) {
            const char *t = json_string_value(json_object_get(obj, "type"));
            json_array_append_new(cells, json_string(t ? t : ""));
        }
        size_t n = json_object_size(json_object_get(obj, "data")) +
                   json_object_size(json_object_get(obj, "binaryData"));
        json_array_append_new(cells, json_integer((json_int_t)n));
    } else if (strcmp(k, "ServiceAccount") == 0) {
        json_array_append_new(
            cells, json_integer((json_int_t)json_array_size(json_object_get(obj, "secrets"))));
    } else if (strcmp(k, "Namespace") == 0) {
        const char *p = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
        json_array_append_new(cells, json_string(p ? p : ""));
    } else if (strcmp(k, "Lease") == 0) {
        const char *h =
            json_string_value(json_object_get(json_object_get(obj, "spec"), "holderIdentity"));
        json_array_append_new(cells, json_string(h ? h : ""));
    } else if (strcmp(k, "Event") == 0) {
        json_t *io = json_object_get(obj, "involvedObject");
        const char *t = json_string_value(json_object_get(obj, "type"));
        const char *reason = json_string_value(json_object_get(obj, "reason"));
        const char *ik = json_string_value(json_object_get(io, "kind"));
        const char *in = json_string_value(json_object_get(io, "name"));
        const char *m = json_string_value(json_object_get(obj, "message"));
        char object[512];
        snprintf(object, sizeof object, "%s/%s", ik ? ik : "", in ? in : "");
        for (char *p = object; *p && *p != '/'; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        json_array_append_new(cells, json_string(t ? t : ""));
        json_array_append_new(cells, json_string(reason ? reason : ""));
        json_array_append_new(cells, json_string(object));
        json_array_append_new(cells, json_string(m ? m : ""));
    }
    return cells;
}

static void table_head(sk_buf *b, const sk_resource *r)
{
    json_t *defs = json_array();
    json_array_append_new(defs,
                          json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", "Name", "type", "string",
                                    "format", "name", "description",
                                    "Name must be unique within a namespace.", "priority", 0));
    const table_column *cols;
    int n = kind_columns(r, &cols);
    for (int i = 0; i < n; i++)
        json_array_append_new(defs, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", cols[i].name,
                                              "type", cols[i].type, "format", cols[i].format,
                                              "description", cols[i].description, "priority", 0));
    json_array_append_new(defs, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", "Age", "type",
                                          "string", "format", "", "description",
                                          "CreationTimestamp is a timestamp representing the "
                                          "server time when this object was created.",
                                          "priority", 0));
    char *text = json_dumps(defs, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    sk_buf_printf(b,
                  "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"columnDefinitions\":%s,"
                  "\"rows\":[",
                  text);
    free(text);
    json_decref(defs);
}

/* Appends one Table row for obj. */
static void table_row(sk_buf *b, const sk_resource *r, json_t *obj, int include_object)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *created = json_string_value(json_object_get(meta, "creationTimestamp"));
    char age[32] = "<unknown>";
    if (created) {
        int64_t t = sk_parse_rfc3339(created);
        if (t >= 0)
            human_age(sk_wall_s() - t, age, sizeof age);
    }
    json_t *cells = json_array();
    json_array_append_new(cells, json_string(name ? name : ""));
    json_array_extend(cells, kind_cells(r, obj));
    json_array_append_new(cells, json_string(age));
    json_t *row = json_pack("{s:o}", "cells", cells);
    if (include_object == 2) {
        json_object_set(row, "object", obj);
    } else if (include_object == 1) {
        json_object_set_new(row, "object",
                            json_pack("{s:s, s:s, s:O}", "kind", "PartialObjectMetadata",
                                      "apiVersion", "meta.k8s.io/v1", "metadata", meta));
    }
    char *text = json_dumps(row, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    sk_buf_puts(b, text);
    free(text);
    json_decref(row);
}

static int include_object_mode(const char *s)
{
    if (!s || !*s || strcmp(s, "Metadata") == 0)
        return 1;
    if (strcmp(s, "None") == 0)
        return 0;
    if (strcmp(s, "Object") == 0)
        return 2;
    return -1;
}

void table_render_single(sk_buf *b, const sk_resource *r, json_t *obj, int include_object,
                         int64_t rev)
{
    table_head(b, r);
    table_row(b, r, obj, include_object);
    sk_buf_printf(b, "],\"metadata\":{\"resourceVersion\":\"%lld\"}}", (long long)rev);
}

void table_reply_single(sk_api_call *call, const sk_row *row)
{
    int mode = include_object_mode(call->q.include_object);
    json_t *obj = parse_stored(call->res, row->value, row->value_len, row->name);
    if (!obj) {
        call_reply_errorf(call, SK_ERR_INTERNAL, "the stored object %s \"%s\" cannot be decoded",
                          call->res->resource, row->name);
        return;
    }
    sk_buf b = SK_BUF_INIT;
    table_render_single(&b, call->res, obj, mode < 0 ? 1 : mode, row->rev);
    call_reply_raw(call, 200, b.data, b.len);
    sk_buf_free(&b);
    json_decref(obj);
}

/* ---- the stream ------------------------------------------------------- */

static const char *scope_ns(const list_stream *ls)
{
    return ls->ns ? ls->ns : "";
}

typedef struct chunk_ctx {
    list_stream *ls;
    int rows;
    int cut;       /* stopped before the range's end: more may follow */
    sk_blob *blob; /* the row's bytes as a shared cache blob, NULL for SQL rows */
} chunk_ctx;

/* Queues the row's object bytes: a reference to the cache's blob, or a copy
 * of a SQL row's value. */
static void put_value(list_stream *ls, const chunk_ctx *cc, const sk_row *row)
{
    if (cc->blob)
        sk_outq_blob(&ls->out, cc->blob);
    else
        sk_buf_append(&ls->out.text, row->value, row->value_len);
}

static void set_after(list_stream *ls, const char *ns, const char *name)
{
    free(ls->after_ns);
    free(ls->after_name);
    ls->after_ns = strdup(ns);
    ls->after_name = strdup(name);
    SK_CHECK(ls->after_ns && ls->after_name);
}

static int chunk_row(void *arg, const sk_row *row)
{
    chunk_ctx *cc = arg;
    list_stream *ls = cc->ls;
    if (ls->limit && ls->emitted == ls->limit) {
        ls->has_more = 1; /* a key exists beyond a full page */
        return 1;
    }
    cc->rows++;
    ls->scanned_page++;
    set_after(ls, row->ns, row->name);
    json_t *obj = NULL;
    int match = 1;
    if (ls->table || !sk_label_selector_is_empty(ls->labels) || ls->fields) {
        obj = parse_stored(ls->res, row->value, row->value_len, row->name);
        match = obj &&
                sk_label_selector_matches(
                    ls->labels, json_object_get(json_object_get(obj, "metadata"), "labels")) &&
                (!ls->fields || sk_field_selector_matches(ls->fields, obj));
    }
    if (match && ls->watch_events) {
        sk_buf_puts(&ls->out.text, "{\"type\":\"ADDED\",\"object\":");
        if (ls->table)
            table_render_single(&ls->out.text, ls->res, obj, ls->include_object, row->rev);
        else
            put_value(ls, cc, row);
        sk_buf_puts(&ls->out.text, "}\n");
        ls->emitted++;
    } else if (match) {
        if (!ls->first_item)
            sk_buf_putc(&ls->out.text, ',');
        ls->first_item = 0;
        if (ls->table)
            table_row(&ls->out.text, ls->res, obj, ls->include_object);
        else
            put_value(ls, cc, row);
        ls->emitted++;
    }
    json_decref(obj);
    if (ls->limit && ls->emitted < ls->limit && ls->scanned_page >= ls->limit * SCAN_FACTOR) {
        ls->has_more = 1; /* bounded work per page: hand back a token early */
        return 1;
    }
    if (sk_outq_size(&ls->out) >= CHUNK_BYTES) {
        cc->cut = 1; /* bounded memory per stream: send this, read on later */
        return 1;
    }
    return 0;
}

/* The cache's items as rows (borrowed bytes) for chunk_row. */
/* The cache's items of one chunk, taken under its read lock as references;
 * filtering and rendering run after the lock is released. */
typedef struct cache_chunk {
    sk_blob **blobs;
    int n;
} cache_chunk;

static int cache_item(void *arg, const char *ns, const char *name, sk_blob *blob)
{
    cache_chunk *ch = arg;
    ch->blobs[ch->n++] = sk_blob_ref(blob);
    return 0;
}

/* Feeds the chunk's blobs to chunk_row (as rows with borrowed bytes) until
 * it stops; drops every reference. */
static void render_cache_chunk(chunk_ctx *cc, cache_chunk *ch)
{
    int stopped = 0;
    for (int i = 0; i < ch->n; i++) {
        sk_blob *blob = ch->blobs[i];
        if (!stopped) {
            sk_row row = {.ns = (char *)sk_blob_ns(blob),
                          .name = (char *)sk_blob_name(blob),
                          .rev = sk_blob_rev(blob)};
            row.value = (char *)sk_blob_data(blob, &row.value_len);
            cc->blob = blob;
            stopped = chunk_row(cc, &row);
            cc->blob = NULL;
        }
        sk_blob_unref(blob);
    }
}

/* Reads and renders the next chunk. */
static sk_err fetch_chunk(list_stream *ls)
{
    int want = CHUNK_ROWS;
    if (ls->limit) {
        int left = ls->limit - ls->emitted + 1;
        if (left < want)
            want = left;
    }
    sk_list_query q = {
        .resource = ls->res->resource,
        .ns = ls->ns,
        .after_ns = ls->after_ns,
        .after_name = ls->after_name,
        .rev = ls->rev,
        .limit = want,
    };
    chunk_ctx cc = {ls, 0, 0, NULL};
    sk_cache_list_query cq = {
        .res = sk_cache_resource(ls->api->cache, ls->res->resource),
        .ns = ls->ns,
        .after_ns = ls->after_ns,
        .after_name = ls->after_name,
        .rev = ls->rev,
        .limit = want,
    };
    int visited = 0;
    sk_blob *blobs[CHUNK_ROWS + 1];
    cache_chunk ch = {blobs, 0};
    SK_CHECK(want <= CHUNK_ROWS + 1);
    sk_err err = sk_cache_list(ls->api->cache, &cq, cache_item, &ch, &visited);
    render_cache_chunk(&cc, &ch);
    int from_cache = err == SK_OK;
    if (!from_cache) /* older than the cache's window, or newer than the cache: SQL */
        err = sk_store_list(ls->api->store, &q, chunk_row, &cc);
    sk_metrics_list_chunk(ls->api->metrics, from_cache);
    if (err != SK_OK)
        return err;
    if (ls->has_more || (cc.rows < want && !cc.cut))
        ls->exhausted = 1;
    return SK_OK;
}

static void render_tail(list_stream *ls)
{
    sk_buf_printf(&ls->out.text, "],\"metadata\":{\"resourceVersion\":\"%lld\"",
                  (long long)ls->rev);
    if (ls->has_more) {
        unsigned char secret[32];
        char qbuf[SK_QUALIFIED_RESOURCE_MAX];
        if (sk_store_token_secret(ls->api->store, secret) == SK_OK) {
            sk_token t = {
                .rev = ls->rev,
                .resource = (char *)call_qualified_resource(ls->res, qbuf, sizeof qbuf),
                .ns = (char *)scope_ns(ls),
                .last_ns = ls->after_ns,
                .last_name = ls->after_name,
            };
            char *tok = sk_token_encode(&t, secret);
            sk_buf_puts(&ls->out.text, ",\"continue\":");
            sk_buf_json_string(&ls->out.text, tok);
            free(tok);
        } else {
            ls->failed = 1;
        }
    }
    sk_buf_puts(&ls->out.text, "}}");
}

/* Produces more output; returns -1 if the stream failed. */
static int advance(list_stream *ls)
{
    switch (ls->phase) {
    case LS_HEAD:
        if (ls->watch_events)
            ;
        else if (ls->table)
            table_head(&ls->out.text, ls->res);
        else
            sk_buf_printf(&ls->out.text, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"items\":[",
                          ls->res->list_kind, sk_registry_api_version(ls->res));
        ls->phase = LS_ITEMS;
        return 0;
    case LS_ITEMS:
        if (ls->exhausted) {
            ls->phase = LS_TAIL;
            return 0;
        }
        return fetch_chunk(ls) == SK_OK ? 0 : -1;
    case LS_TAIL:
        if (!ls->watch_events)
            render_tail(ls);
        ls->phase = LS_END;
        return ls->failed ? -1 : 0;
    case LS_END:
        return 0;
    }
    return -1;
}

ssize_t list_stream_read(list_stream *ls, char *buf, size_t max)
{
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
        if (ls->phase == LS_ITEMS && !ls->watch_events && sk_outq_size(&ls->out) == 0)
            sk_buf_putc(&ls->out.text, ' ');
    }
    return (ssize_t)n;
}

void list_stream_free(list_stream *ls)
{
    if (!ls)
        return;
    free(ls->ns);
    free(ls->after_ns);
    free(ls->after_name);
    sk_label_selector_free(ls->labels);
    sk_field_selector_free(ls->fields);
    sk_outq_free(&ls->out);
    free(ls);
}

/* ---- request handling ----------------------------------------------------- */

static void reply_expired_token(sk_api_call *call, list_stream *ls)
{
    /* As Kubernetes: 410 with a token that continues the same key range at
     * the current revision, for clients that accept an inconsistent list. */
    json_t *st = sk_status_new(
        SK_ERR_EXPIRED,
        "The provided continue parameter is too old to display a consistent list result. You can "
        "start a new list without the continue parameter, or use the continue token in this "
        "response to retrieve the remainder of the results. Continuing with the provided token "
        "results in an inconsistent list - objects that were created, modified, or deleted "
        "between the time the first chunk was returned and now may show up in the list.",
        NULL, NULL, NULL, NULL);
    int64_t cur = 0;
    unsigned char secret[32];
    char qbuf[SK_QUALIFIED_RESOURCE_MAX];
    if (sk_store_revisions(call->api->store, &cur, NULL) == SK_OK &&
        sk_store_token_secret(call->api->store, secret) == SK_OK) {
        sk_token t = {
            .rev = cur,
            .resource = (char *)call_qualified_resource(ls->res, qbuf, sizeof qbuf),
            .ns = (char *)scope_ns(ls),
            .last_ns = ls->after_ns,
            .last_name = ls->after_name,
        };
        char *tok = sk_token_encode(&t, secret);
        json_object_set_new(json_object_get(st, "metadata"), "continue", json_string(tok));
        free(tok);
    }
    call_reply_json(call, 410, st);
    json_decref(st);
}

void reply_invalid_list_options(sk_api_call *call, const char *field, const char *msg)
{
    json_t *causes = json_array();
    sk_status_add_cause(causes, "FieldValueForbidden", msg, field);
    char full[512];
    snprintf(full, sizeof full, "ListOptions.meta.k8s.io \"\" is invalid: %s: Forbidden: %s", field,
             msg);
    call_reply_status(call, SK_ERR_INVALID, full, "meta.k8s.io", "ListOptions", "", causes);
}

/* Applies continue/resourceVersion/resourceVersionMatch to ls->rev and the
 * start key. PLAN_NOW, or the step code to return (it replied, or the call
 * waits for a future revision: see plan_read). */
static int settle_revision(sk_api_call *call, list_stream *ls)
{
    const char *rv = call->q.rv && *call->q.rv ? call->q.rv : NULL;
    const char *rvm = call->q.rvm && *call->q.rvm ? call->q.rvm : NULL;
    const char *cont = call->q.cont && *call->q.cont ? call->q.cont : NULL;
    if (rvm && !rv && !cont) {
        reply_invalid_list_options(call, "resourceVersionMatch",
                                   "resourceVersionMatch is forbidden unless resourceVersion is "
                                   "provided");
        return STEP_DONE;
    }
    if (rvm && strcmp(rvm, "Exact") != 0 && strcmp(rvm, "NotOlderThan") != 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "resourceVersionMatch: Unsupported value: \"%s\"", rvm);
        call_reply_error(call, SK_ERR_INVALID, msg);
        return STEP_DONE;
    }
    if (cont) {
        if (rv) {
            call_reply_error(call, SK_ERR_BAD_REQUEST,
                             "specifying resource version is not allowed when using continue");
            return STEP_DONE;
        }
        if (rvm) {
            reply_invalid_list_options(call, "resourceVersionMatch",
                                       "resourceVersionMatch is forbidden for continue");
            return STEP_DONE;
        }
        unsigned char secret[32];
        sk_err err = sk_store_token_secret(call->api->store, secret);
        if (err != SK_OK) {
            call_reply_store_error(call, err, "");
            return STEP_DONE;
        }
        sk_token t = {0};
        char *msg = NULL;
        err = sk_token_decode(cont, secret, &t, &msg);
        char qbuf[SK_QUALIFIED_RESOURCE_MAX];
        const char *qres = call_qualified_resource(ls->res, qbuf, sizeof qbuf);
        int ok = err == SK_OK && strcmp(t.resource, qres) == 0 && strcmp(t.ns, scope_ns(ls)) == 0 &&
                 (!ls->ns || strcmp(t.last_ns, ls->ns) == 0);
        if (!ok) {
            call_reply_error(call, SK_ERR_BAD_REQUEST,
                             err != SK_OK && msg ? msg
                                                 : "continue key is not valid: it belongs to "
                                                   "another list");
            free(msg);
            sk_token_clear(&t);
            return STEP_DONE;
        }
        ls->rev = t.rev;
        set_after(ls, t.last_ns, t.last_name);
        sk_token_clear(&t);
        /* The cache may still hold a compacted revision: the store decides. */
        int64_t cur, compact;
        if ((err = sk_store_revisions(call->api->store, &cur, &compact)) != SK_OK) {
            call_reply_store_error(call, err, "");
            return STEP_DONE;
        }
        if (ls->rev < compact) {
            reply_expired_token(call, ls);
            return STEP_DONE;
        }
        return PLAN_NOW;
    }
    int64_t want = rv ? sk_parse_i64(rv) : -1;
    if (rv && want < 0) {
        call_reply_error(call, SK_ERR_BAD_REQUEST, "invalid resource version");
        return STEP_DONE;
    }
    int rc = plan_read(call, want, handle_list, &ls->rev);
    if (rc != PLAN_NOW)
        return rc;
    if (!rv)
        return PLAN_NOW; /* consistent read: at least the store's current revision */
    int exact = rvm ? strcmp(rvm, "Exact") == 0 : (ls->limit > 0 && want > 0);
    if (exact && want == 0) {
        reply_invalid_list_options(call, "resourceVersionMatch",
                                   "resourceVersionMatch \"exact\" is forbidden for "
                                   "resourceVersion \"0\"");
        return STEP_DONE;
    }
    if (exact) {
        /* The cache may hold a revision the store has compacted for a tick. */
        int64_t cur, compact;
        sk_err err;
        if ((err = sk_store_revisions(call->api->store, &cur, &compact)) != SK_OK ||
            want < compact) {
            call_reply_store_error(call, err != SK_OK ? err : SK_ERR_EXPIRED, "");
            return STEP_DONE;
        }
        ls->rev = want;
    }
    return PLAN_NOW;
}

/* A stream with the call's scope and selectors; replies and returns NULL on
 * a bad parameter. */
static list_stream *stream_new(sk_api_call *call)
{
    list_stream *ls = calloc(1, sizeof *ls);
    SK_CHECK_ALLOC(ls);
    ls->api = call->api;
    ls->res = call->res;
    ls->table = call->want_table;
    ls->first_item = 1;
    ls->include_object = include_object_mode(call->q.include_object);
    if (call->res->namespaced && !call->all_namespaces) {
        ls->ns = strdup(call->ns);
        SK_CHECK_ALLOC(ls->ns);
    }
    char *msg = NULL;
    sk_err err;
    if (ls->include_object < 0) {
        call_reply_error(call, SK_ERR_BAD_REQUEST, "includeObject: unsupported value");
        goto fail;
    }
    err = sk_label_selector_parse(call->q.label_selector ? call->q.label_selector : "", &ls->labels,
                                  &msg);
    if (err == SK_OK && call->q.field_selector && *call->q.field_selector)
        err = sk_field_selector_parse(call->q.field_selector, call->res, &ls->fields, &msg);
    if (err != SK_OK) {
        call_reply_error(call, err, msg ? msg : "invalid selector");
        goto fail;
    }
    if (ls->fields && !ls->ns && call->res->namespaced) {
        /* metadata.namespace=X narrows an all-namespaces list to one range. */
        const char *fns = sk_field_selector_required(ls->fields, "metadata.namespace");
        if (fns) {
            ls->ns = strdup(fns);
            SK_CHECK_ALLOC(ls->ns);
        }
    }
    free(msg);
    return ls;
fail:
    free(msg);
    list_stream_free(ls);
    return NULL;
}

list_stream *list_stream_for_watch(sk_api_call *call)
{
    list_stream *ls = stream_new(call);
    if (ls) {
        ls->watch_events = 1;
        ls->exhausted = 1; /* no initial events until list_stream_start_initial */
    }
    return ls;
}

void list_stream_start_initial(list_stream *ls, int64_t rev)
{
    ls->rev = rev;
    ls->exhausted = rev == 0;
    ls->phase = LS_ITEMS;
}

const char *list_stream_ns(const list_stream *ls)
{
    return ls->ns;
}

int list_stream_matches(const list_stream *ls, json_t *obj)
{
    return sk_label_selector_matches(ls->labels,
                                     json_object_get(json_object_get(obj, "metadata"), "labels")) &&
           (!ls->fields || sk_field_selector_matches(ls->fields, obj));
}

int list_stream_filters(const list_stream *ls)
{
    return !sk_label_selector_is_empty(ls->labels) || ls->fields != NULL;
}

int list_stream_table_mode(const list_stream *ls)
{
    return ls->table ? ls->include_object : -1;
}

int handle_list(sk_api_call *call)
{
    list_stream *ls = stream_new(call);
    if (!ls)
        return STEP_DONE;
    sk_err err;
    if (call->q.limit && *call->q.limit) {
        int64_t limit = sk_parse_i64(call->q.limit);
        if (limit < 0) {
            call_reply_error(call, SK_ERR_BAD_REQUEST, "limit must be a non-negative integer");
            goto fail;
        }
        ls->limit = limit > 1000000 ? 1000000 : (int)limit;
    }
    int rc = settle_revision(call, ls);
    if (rc != PLAN_NOW) {
        list_stream_free(ls);
        return rc;
    }
    if (ls->rev == 0)
        ls->exhausted = 1; /* an empty store */
    /* Read the first chunk now so that errors (410 Expired) are proper Status replies. */
    advance(ls);
    if (!ls->exhausted && (err = fetch_chunk(ls)) != SK_OK) {
        if (err == SK_ERR_EXPIRED && call->q.cont && *call->q.cont)
            reply_expired_token(call, ls);
        else
            call_reply_store_error(call, err, "");
        goto fail;
    }
    call->status = 200;
    call->content_type_out = "application/json";
    call->stream = ls;
    return STEP_DONE;
fail:
    list_stream_free(ls);
    return STEP_DONE;
}
