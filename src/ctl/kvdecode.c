/*
 * kvdecode.c - see kvdecode.h. A batch's docs live in one arena, freed
 * after they are written: the rows' bytes are the store's only for the
 * visit, so each is decoded and copied there and then.
 */
#include "ctl/kvdecode.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/log.h"
#include "kube/etcdkey.h"

#include <stdlib.h>
#include <string.h>

#define DECODE_BATCH 500
#define DECODE_IDLE_MS 100

typedef struct kvdecode {
    sk_store *store;
    int started;
    int64_t rev; /* the last row decoded: (rev, sub) */
    int sub;
} kvdecode;

typedef struct batch {
    sk_arena *a;
    sk_kv_doc docs[DECODE_BATCH];
    size_t n;
} batch;

static const char *span_dup(sk_arena *a, sk_etcdkey_span s)
{
    return s.len ? sk_arena_strndup(a, s.p, s.len) : NULL;
}

static int decode_row(void *arg, const sk_kv_row *row)
{
    batch *b = arg;
    SK_CHECK(b->n < DECODE_BATCH);
    sk_kv_doc *d = &b->docs[b->n++];
    *d = (sk_kv_doc){.rev = row->kv.mod_rev, .sub = row->sub};
    sk_etcdkey k;
    sk_etcdkey_parse((const char *)row->kv.key, row->kv.key_len, &k);
    if (k.text)
        d->key_text = sk_arena_strndup(b->a, (const char *)row->kv.key, row->kv.key_len);
    if (k.is_object) {
        d->group = span_dup(b->a, k.group);
        d->resource = span_dup(b->a, k.resource);
        d->ns = span_dup(b->a, k.namespace);
        d->name = span_dup(b->a, k.name);
    }
    if (!row->deleted) {
        sk_etcdval v;
        sk_etcdval_parse((const char *)row->kv.value, row->kv.value_len, &v);
        d->encoding = sk_etcdval_encoding_name(v.encoding);
        d->kind = sk_arena_strdup(b->a, v.kind);
        d->api_version = sk_arena_strdup(b->a, v.api_version);
        d->doc = sk_arena_strdup(b->a, v.doc);
        sk_etcdval_clear(&v);
    }
    return 0;
}

static int64_t decode_pass(void *self, int *done)
{
    kvdecode *d = self;
    int64_t next = DECODE_IDLE_MS;
    sk_err err = SK_OK;
    if (!d->started && (err = sk_store_kv_docs_last(d->store, &d->rev, &d->sub)) == SK_OK)
        d->started = 1;
    batch *b = NULL;
    if (err == SK_OK) {
        b = calloc(1, sizeof *b);
        SK_CHECK_ALLOC(b);
        b->a = sk_arena_new();
        err = sk_store_kv_rows_after(d->store, d->rev, d->sub, DECODE_BATCH, decode_row, b);
    }
    if (err == SK_OK)
        err = sk_store_kv_docs_put(d->store, b->docs, b->n);
    if (err == SK_OK) {
        if (b->n) {
            d->rev = b->docs[b->n - 1].rev;
            d->sub = b->docs[b->n - 1].sub;
        }
        if (b->n == DECODE_BATCH)
            next = 0;
        *done = 1;
    } else {
        sk_log_warn("kv decode: %s; trying again", sk_err_name(err));
    }
    if (b) {
        sk_arena_free(b->a);
        free(b);
    }
    return next;
}

static void decode_free(void *self)
{
    free(self);
}

static const sk_ctl_def decode_def = {"kv-decode", decode_pass, decode_free};

sk_ctl *sk_kvdecode_start(sk_store *store)
{
    kvdecode *d = calloc(1, sizeof *d);
    SK_CHECK_ALLOC(d);
    d->store = store;
    return sk_ctl_start(&decode_def, d, 0);
}
