/*
 * reader.c - see reader.h. The cache is asked first, under its read lock
 * for one short step (taking references, never rendering); only an answer
 * it cannot give (a revision outside its snapshots, a distrusted resource,
 * a revision it has not applied yet) goes to SQL, whose rows become blobs
 * like the cache's, so nothing above tells the two apart.
 */
#include "read/reader.h"
#include "core/check.h"

#include <stdlib.h>
#include <string.h>

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
    json_t *obj = json_loadb(data, len, 0, NULL);
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

sk_err sk_reader_scan(sk_reader *rd, const char *resource, const char *ns, int64_t rev,
                      sk_reader_item_fn fn, void *arg)
{
    sk_read_query q = {.resource = resource, .ns = ns, .rev = rev, .limit = SK_READ_MAX_ITEMS};
    char *after_ns = NULL, *after_name = NULL;
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
