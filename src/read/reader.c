/*
 * reader.c - see reader.h. The cache is asked first, under its read lock
 * for one short step (taking references, never rendering); only an answer
 * it cannot give (a revision outside its snapshots, a distrusted resource,
 * a revision it has not applied yet) goes to SQL, whose rows become blobs
 * like the cache's, so nothing above tells the two apart.
 *
 * Events from SQL: the history rows of every resource are paged in
 * revision order (sk_store_history, the cache feed's own read), this
 * resource's kept. A row's type follows from it alone (a tombstone, or a
 * previous version or none), as the cache's tree would judge it; the
 * previous version, when asked for, is the key's version live one
 * revision before the row (never below the cursor, so never compacted
 * while the cursor is not). The page is collected first and visited
 * after, so no visitor runs while a statement holds a connection.
 */
#include "read/reader.h"
#include "core/check.h"
#include "core/jsontext.h"

#include <stdlib.h>
#include <string.h>

#define EVENTS_PAGE_ROWS 256
#define EVENTS_PAGE_BYTES ((size_t)1 << 20)

struct sk_reader {
    sk_store *store;
    sk_cache *cache;
};

sk_reader *sk_reader_new(sk_store *store, sk_cache *cache)
{
    sk_reader *rd = calloc(1, sizeof *rd);
    SK_CHECK_ALLOC(rd);
    rd->store = store;
    rd->cache = cache;
    return rd;
}

void sk_reader_free(sk_reader *rd)
{
    free(rd);
}

static sk_blob *blob_of(const sk_row *row)
{
    return sk_blob_new(row->ns, row->name, row->rev, row->value, row->value_len);
}

sk_err sk_reader_get(sk_reader *rd, const char *resource, const char *ns, const char *name,
                     int64_t rev, sk_blob **out)
{
    int res = sk_cache_resource(rd->cache, resource);
    sk_err err = res < 0 ? SK_ERR_EXPIRED : sk_cache_get(rd->cache, res, ns, name, rev, out);
    if (err == SK_OK || err == SK_ERR_NOT_FOUND)
        return err;
    sk_row row = {0};
    err = sk_store_get(rd->store, resource, ns, name, rev, &row);
    if (err == SK_OK)
        *out = blob_of(&row);
    sk_row_clear(&row);
    return err;
}

typedef struct collect {
    sk_blob **items;
    int n;
} collect;

static int take_blob(void *arg, const char *ns, const char *name, sk_blob *blob)
{
    collect *c = arg;
    c->items[c->n++] = sk_blob_ref(blob);
    return 0;
}

static int take_row(void *arg, const sk_row *row)
{
    collect *c = arg;
    c->items[c->n++] = blob_of(row);
    return 0;
}

sk_err sk_reader_list(sk_reader *rd, const sk_read_query *q, sk_blob **items, int *n_out,
                      sk_read_source *source_out)
{
    SK_CHECK(q->limit > 0 && q->limit <= SK_READ_MAX_ITEMS);
    collect c = {items, 0};
    sk_read_source source = SK_READ_CACHE;
    int res = sk_cache_resource(rd->cache, q->resource);
    sk_err err = SK_ERR_EXPIRED;
    if (res >= 0) {
        sk_cache_list_query cq = {
            .res = res,
            .ns = q->ns,
            .after_ns = q->after_ns,
            .after_name = q->after_name,
            .rev = q->rev,
            .limit = q->limit,
        };
        int visited = 0;
        err = sk_cache_list(rd->cache, &cq, take_blob, &c, &visited);
    }
    if (err != SK_OK) {
        /* Outside the cache's snapshots, or ahead of it: the same read in
         * SQL. (A cache that refuses visits nothing.) */
        SK_CHECK(c.n == 0);
        sk_list_query sq = {
            .resource = q->resource,
            .ns = q->ns,
            .after_ns = q->after_ns,
            .after_name = q->after_name,
            .rev = q->rev,
            .limit = q->limit,
        };
        source = SK_READ_SQL;
        err = sk_store_list(rd->store, &sq, take_row, &c);
    }
    if (err != SK_OK) {
        for (int i = 0; i < c.n; i++)
            sk_blob_unref(c.items[i]);
        return err;
    }
    *n_out = c.n;
    *source_out = source;
    return SK_OK;
}

json_t *sk_reader_object(const sk_blob *item)
{
    size_t len;
    const char *data = sk_blob_data(item, &len);
    json_t *obj = sk_jsontext_load(data, len, NULL);
    if (!json_is_object(obj)) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

int64_t sk_reader_cache_rev(sk_reader *rd)
{
    sk_cache_state st;
    sk_cache_get_state(rd->cache, &st);
    return st.rev;
}

/* Visits every object after q's start key (q->limit: the page size), as
 * sk_reader_scan does from the first. */
static sk_err scan_from(sk_reader *rd, const sk_read_query *start, sk_reader_item_fn fn, void *arg)
{
    sk_read_query q = *start;
    q.limit = SK_READ_MAX_ITEMS;
    char *after_ns = start->after_ns ? strdup(start->after_ns) : NULL;
    char *after_name = start->after_name ? strdup(start->after_name) : NULL;
    SK_CHECK(after_ns || !start->after_ns);
    SK_CHECK(after_name || !start->after_name);
    int n = SK_READ_MAX_ITEMS, stop = 0;
    sk_err err = SK_OK;
    while (err == SK_OK && n == SK_READ_MAX_ITEMS && !stop) {
        sk_blob *items[SK_READ_MAX_ITEMS];
        sk_read_source source;
        q.after_ns = after_ns;
        q.after_name = after_name;
        if ((err = sk_reader_list(rd, &q, items, &n, &source)) != SK_OK)
            break;
        for (int i = 0; i < n; i++) {
            if (!stop)
                stop = fn(arg, items[i]);
            if (i == n - 1) {
                free(after_ns);
                free(after_name);
                after_ns = strdup(sk_blob_ns(items[i]));
                after_name = strdup(sk_blob_name(items[i]));
                SK_CHECK_ALLOC(after_ns);
                SK_CHECK_ALLOC(after_name);
            }
            sk_blob_unref(items[i]);
        }
    }
    free(after_ns);
    free(after_name);
    return err;
}

sk_err sk_reader_scan(sk_reader *rd, const char *resource, const char *ns, int64_t rev,
                      sk_reader_item_fn fn, void *arg)
{
    sk_read_query q = {.resource = resource, .ns = ns, .rev = rev, .limit = SK_READ_MAX_ITEMS};
    return scan_from(rd, &q, fn, arg);
}

sk_err sk_reader_count(sk_reader *rd, const sk_read_query *q, int64_t *count_out)
{
    int64_t count = 0;
    int res = sk_cache_resource(rd->cache, q->resource);
    sk_err err = SK_ERR_EXPIRED;
    if (res >= 0) {
        sk_cache_list_query cq = {
            .res = res,
            .ns = q->ns,
            .after_ns = q->after_ns,
            .after_name = q->after_name,
            .rev = q->rev,
            .limit = 1,
        };
        err = sk_cache_count(rd->cache, &cq, &count);
    }
    if (err != SK_OK) {
        /* Outside the cache's snapshots: SQL counts the rows, reading no
         * value. */
        sk_list_query sq = {
            .resource = q->resource,
            .ns = q->ns,
            .after_ns = q->after_ns,
            .after_name = q->after_name,
            .rev = q->rev,
            .limit = 1,
        };
        err = sk_store_count(rd->store, &sq, &count);
    }
    if (err == SK_OK)
        *count_out = count;
    return err;
}

/* Visits the window's events after the cursor. A cursor the window drops
 * meanwhile keeps what it was given: SK_OK at the revision it reached (the
 * next call reads on from SQL), SK_ERR_EXPIRED only if nothing was given. */
static sk_err events_from_cache(sk_reader *rd, int res, const sk_read_events *q,
                                sk_reader_event_fn fn, void *arg, int64_t *scanned_out)
{
    int64_t cursor = q->after_rev;
    sk_err err;
    for (;;) {
        sk_cache_event ev = {0};
        int64_t scanned = cursor;
        err = sk_cache_next_event(rd->cache, q->gen, res, cursor, &ev, &scanned);
        if (err == SK_ERR_NOT_FOUND) {
            cursor = scanned;
            err = SK_OK;
            break;
        }
        /* The cache was rebuilt after some events went out: they stand, and
         * the caller's next call meets the expiry at the cursor. */
        if (err == SK_ERR_EXPIRED && cursor != q->after_rev) {
            err = SK_OK;
            break;
        }
        if (err != SK_OK)
            break;
        cursor = ev.rev;
        int stop = fn(arg, &ev);
        sk_cache_event_clear(&ev);
        if (stop)
            break;
    }
    if (err == SK_OK)
        *scanned_out = cursor;
    return err;
}

typedef struct history_page {
    const char *resource;
    int64_t upto; /* the cache's revision: rows after it are left for later */
    sk_cache_event *evs;
    int n, rows;
    int64_t last; /* the last revision taken */
    size_t bytes;
    int full, past_upto;
} history_page;

static int take_history_row(void *arg, const sk_row *row)
{
    history_page *p = arg;
    if (row->rev > p->upto) {
        p->past_upto = 1;
        return 1;
    }
    p->last = row->rev;
    p->full = ++p->rows == EVENTS_PAGE_ROWS;
    if (strcmp(row->resource, p->resource) != 0)
        return 0;
    sk_cache_event *ev = &p->evs[p->n++];
    ev->rev = row->rev;
    ev->type = row->deleted        ? SK_EVENT_DELETED
               : row->prev_rev > 0 ? SK_EVENT_MODIFIED
                                   : SK_EVENT_ADDED;
    ev->obj = blob_of(row);
    p->bytes += row->value_len;
    p->full |= p->bytes >= EVENTS_PAGE_BYTES;
    return p->full;
}

/* Visits one page of the store's history after the cursor, up to upto. */
static sk_err events_from_sql(sk_reader *rd, const sk_read_events *q, int64_t upto,
                              sk_reader_event_fn fn, void *arg, int64_t *scanned_out)
{
    history_page p = {.resource = q->resource, .upto = upto};
    p.evs = calloc(EVENTS_PAGE_ROWS, sizeof *p.evs);
    SK_CHECK_ALLOC(p.evs);
    sk_err err = SK_OK;
    int64_t scanned = q->after_rev;
    if (upto > q->after_rev) {
        err = sk_store_history(rd->store, q->after_rev, upto, EVENTS_PAGE_ROWS, take_history_row,
                               &p);
        /* A short page saw the whole history up to upto (read before it). */
        scanned = p.full && !p.past_upto ? p.last : upto;
    }
    for (int i = 0; err == SK_OK && q->with_prev && i < p.n; i++) {
        sk_cache_event *ev = &p.evs[i];
        if (ev->type != SK_EVENT_MODIFIED)
            continue;
        sk_row row = {0};
        err = sk_store_get(rd->store, q->resource, sk_blob_ns(ev->obj), sk_blob_name(ev->obj),
                           ev->rev - 1, &row);
        if (err == SK_OK)
            ev->prev = blob_of(&row);
        else if (err == SK_ERR_NOT_FOUND)
            err = SK_OK;
        sk_row_clear(&row);
    }
    for (int i = 0; err == SK_OK && i < p.n; i++) {
        if (fn(arg, &p.evs[i])) {
            scanned = p.evs[i].rev;
            break;
        }
    }
    for (int i = 0; i < p.n; i++)
        sk_cache_event_clear(&p.evs[i]);
    free(p.evs);
    if (err == SK_OK)
        *scanned_out = scanned;
    return err;
}

sk_err sk_reader_events(sk_reader *rd, const sk_read_events *q, sk_reader_event_fn fn, void *arg,
                        int64_t *scanned_out, sk_read_source *source_out)
{
    int res = sk_cache_resource(rd->cache, q->resource);
    sk_err err = SK_ERR_EXPIRED;
    sk_read_source source = SK_READ_CACHE;
    if (res >= 0 && q->after_rev >= sk_cache_events_from(rd->cache, res))
        err = events_from_cache(rd, res, q, fn, arg, scanned_out);
    /* Older than the window (or dropped by it since): the store's history,
     * up to what the cache has applied (read first: the page then ends
     * where the window can take over). */
    if (err == SK_ERR_EXPIRED && (res < 0 || q->after_rev < sk_cache_events_from(rd->cache, res))) {
        source = SK_READ_SQL;
        err = events_from_sql(rd, q, sk_reader_cache_rev(rd), fn, arg, scanned_out);
    }
    if (err == SK_OK)
        *source_out = source;
    return err;
}

int sk_reader_changes_held(sk_reader *rd, const char *resource, int64_t after_rev)
{
    int res = sk_cache_resource(rd->cache, resource);
    return res >= 0 && after_rev >= sk_cache_events_from(rd->cache, res);
}

sk_err sk_reader_changes(sk_reader *rd, int64_t after_rev, int64_t upto_rev, sk_reader_change_fn fn,
                         void *arg)
{
    return sk_cache_visit_events(rd->cache, after_rev, upto_rev, fn, arg);
}
