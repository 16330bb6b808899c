/*
 * kvapply.c - see kvapply.h. etcd's range, transaction and lease semantics
 * over the backend's kv and lease primitives.
 *
 * Ranges. etcd's conventions are turned into a half-open byte interval
 * once (store/kvrange.h), which the backends' SQL takes as bounds.
 *
 * Transactions run in three passes, as etcd's apply does: decide (judge the
 * compares of each transaction on the chosen path against the state before
 * any write, remembering each choice in order), check (the requests on that
 * path that can fail without a database error), apply. So a failing request
 * never leaves half a transaction in the writer's open batch, and a nested
 * transaction's compares see what its parent's compares saw.
 *
 * Leases. A lease operation is applied in the writer's transaction too, so
 * it is ordered with the puts that name the lease (checked in pass 2). A
 * revoke or expiry is a transaction of single-key deletes built from the
 * lease's keys, through the same three passes: its tombstones are ordinary
 * ones, at one revision.
 */
#include "store/kvapply.h"
#include "core/check.h"
#include "core/util.h"
#include "store/kvrange.h"

#include <stdint.h>
#include <string.h>

/* ---- ranges --------------------------------------------------------------- */

/* Collects key-values into an arena array, copying their bytes. */
typedef struct collect {
    sk_arena *a;
    sk_kv *kvs;
    int64_t n, cap;
} collect;

static int collect_kv(void *arg, const sk_kv *kv)
{
    collect *k = arg;
    if (k->n == k->cap) {
        int64_t cap = k->cap ? 2 * k->cap : 8;
        sk_kv *kvs = sk_arena_alloc(k->a, (size_t)cap * sizeof *kvs);
        if (k->n)
            memcpy(kvs, k->kvs, (size_t)k->n * sizeof *kvs);
        k->kvs = kvs;
        k->cap = cap;
    }
    sk_kv *dst = &k->kvs[k->n++];
    *dst = *kv;
    dst->key = (unsigned char *)sk_arena_strndup(k->a, (const char *)kv->key, kv->key_len);
    dst->value = (unsigned char *)sk_arena_strndup(k->a, (const char *)kv->value, kv->value_len);
    return 0;
}

/* The live key-values of [b) at rev, all of them. */
static sk_err read_all(const sk_backend_ops *ops, sk_conn *c, const sk_kv_bounds *b, int64_t rev,
                       sk_arena *a, collect *out)
{
    *out = (collect){a, NULL, 0, 0};
    return ops->kv_range(c, b->lo, b->lo_len, b->hi, b->hi_len, rev, 0, 0, collect_kv, out);
}

/* What a range read hands its rows to: up to limit of them to fn (or into
 * a copy), the one past the limit only noted; the last key handed is kept,
 * in a buffer reused while it fits. */
typedef struct reader {
    sk_kv_fn fn; /* NULL: collect */
    void *arg;
    collect all;
    int64_t limit, n;
    int more;
    unsigned char *last;
    size_t last_len, last_cap;
} reader;

static int read_kv(void *arg, const sk_kv *kv)
{
    reader *r = arg;
    if (r->limit > 0 && r->n == r->limit) {
        r->more = 1;
        return 1;
    }
    r->n++;
    if (!r->fn)
        return collect_kv(&r->all, kv);
    if (kv->key_len > r->last_cap) {
        r->last_cap = kv->key_len > 64 ? kv->key_len : 64;
        r->last = sk_arena_alloc_uninit(r->all.a, r->last_cap);
    }
    memcpy(r->last, kv->key, kv->key_len);
    r->last_len = kv->key_len;
    return r->fn(r->arg, kv);
}

sk_err sk_kv_read(const sk_backend_ops *ops, sk_conn *c, const sk_kv_range *q, int64_t at_rev,
                  const int64_t *known_count, sk_arena *a, sk_kv_fn fn, void *arg,
                  sk_kv_range_result *out)
{
    sk_kv_bounds b = sk_kv_bounds_of(a, q->key, q->key_len, q->end, q->end_len);
    sk_kv_range_result r = {0};
    sk_err err = SK_OK;
    if (q->count_only) {
        err = ops->kv_count(c, b.lo, b.lo_len, b.hi, b.hi_len, at_rev, &r.count);
        goto out;
    }
    /* One more than the limit tells whether the limit cut the range. */
    reader k = {.fn = fn, .arg = arg, .all = {a, NULL, 0, 0}, .limit = q->limit};
    err = ops->kv_range(c, b.lo, b.lo_len, b.hi, b.hi_len, at_rev, q->limit > 0 ? q->limit + 1 : 0,
                        q->keys_only, read_kv, &k);
    if (err != SK_OK)
        goto out;
    r.kvs = k.all.kvs;
    r.n_kvs = k.n;
    r.count = k.n;
    if (k.n > 0) {
        r.last_key = fn ? k.last : k.all.kvs[k.n - 1].key;
        r.last_key_len = fn ? k.last_len : k.all.kvs[k.n - 1].key_len;
    }
    if (k.more) {
        r.more = 1;
        if (known_count)
            r.count = *known_count;
        else
            err = ops->kv_count(c, b.lo, b.lo_len, b.hi, b.hi_len, at_rev, &r.count);
    }
out:
    if (err == SK_OK)
        *out = r;
    return err;
}

/* ---- transactions ----------------------------------------------------------- */

typedef struct txn_ctx {
    const sk_backend_ops *ops;
    sk_conn *c;
    sk_arena *a;
    int64_t rev0;
    int64_t compact_rev; /* -1 until read */
    int *path;           /* the choice of each transaction on the path, in visit order */
    int n_path, cap_path, next_path;
    int sub; /* rows appended so far */
    int db_failed;
} txn_ctx;

/* Marks err as the database's (any error of a backend call is). */
static sk_err db(txn_ctx *x, sk_err err)
{
    if (err != SK_OK)
        x->db_failed = 1;
    return err;
}

static int compare_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

/* etcd's compareKV: whether kv satisfies cmp. */
static int compare_holds(const sk_kv_compare *cmp, const sk_kv *kv)
{
    int r = 0;
    switch (cmp->target) {
    case SK_KV_VALUE:
        r = sk_kv_bytes_cmp(kv->value, kv->value_len, cmp->value, cmp->value_len);
        break;
    case SK_KV_CREATE:
        r = compare_i64(kv->create_rev, cmp->number);
        break;
    case SK_KV_MOD:
        r = compare_i64(kv->mod_rev, cmp->number);
        break;
    case SK_KV_VERSION:
        r = compare_i64(kv->version, cmp->number);
        break;
    case SK_KV_LEASE:
        r = compare_i64(kv->lease, cmp->number);
        break;
    }
    switch (cmp->result) {
    case SK_KV_EQUAL:
        return r == 0;
    case SK_KV_GREATER:
        return r > 0;
    case SK_KV_LESS:
        return r < 0;
    case SK_KV_NOT_EQUAL:
        return r != 0;
    }
    return 0;
}

static sk_err compares_hold(txn_ctx *x, const sk_kv_txn *t, int *holds_out)
{
    int holds = 1;
    for (int i = 0; i < t->n_compares && holds; i++) {
        const sk_kv_compare *cmp = &t->compares[i];
        sk_kv_bounds b = sk_kv_bounds_of(x->a, cmp->key, cmp->key_len, cmp->end, cmp->end_len);
        collect k;
        sk_err err = db(x, read_all(x->ops, x->c, &b, INT64_MAX, x->a, &k));
        if (err != SK_OK)
            return err;
        if (k.n == 0) {
            sk_kv none = {0};
            holds = cmp->target != SK_KV_VALUE && compare_holds(cmp, &none);
        }
        for (int64_t j = 0; j < k.n && holds; j++)
            holds = compare_holds(cmp, &k.kvs[j]);
    }
    *holds_out = holds;
    return SK_OK;
}

static const sk_kv_op *chosen_ops(const sk_kv_txn *t, int succeeded, int *n_out)
{
    *n_out = succeeded ? t->n_success : t->n_failure;
    return succeeded ? t->success : t->failure;
}

/* Pass 1: the choice of t and of every transaction nested in its branch. */
static sk_err decide(txn_ctx *x, const sk_kv_txn *t)
{
    int holds = 0;
    sk_err err = compares_hold(x, t, &holds);
    if (err != SK_OK)
        return err;
    if (x->n_path == x->cap_path) {
        int cap = x->cap_path ? 2 * x->cap_path : 8;
        int *path = sk_arena_alloc(x->a, (size_t)cap * sizeof *path);
        if (x->n_path)
            memcpy(path, x->path, (size_t)x->n_path * sizeof *path);
        x->path = path;
        x->cap_path = cap;
    }
    x->path[x->n_path++] = holds;
    int n;
    const sk_kv_op *ops = chosen_ops(t, holds, &n);
    for (int i = 0; i < n && err == SK_OK; i++)
        if (ops[i].kind == SK_KV_OP_TXN)
            err = decide(x, ops[i].txn);
    return err;
}

/* etcd's checkRequestPut: a put that keeps the value or lease needs a live
 * key; a lease must exist (in this transaction: an expiry cannot slip
 * between the check and the write and leave the key behind). */
static sk_err check_put(txn_ctx *x, const sk_kv_op *op)
{
    sk_err err = SK_OK;
    if (op->ignore_value || op->ignore_lease) {
        sk_kv_bounds b = sk_kv_bounds_of(x->a, op->range.key, op->range.key_len, NULL, 0);
        int64_t n_live = 0;
        err = db(x, x->ops->kv_count(x->c, b.lo, b.lo_len, b.hi, b.hi_len, INT64_MAX, &n_live));
        if (err == SK_OK && n_live == 0)
            err = SK_ERR_BAD_REQUEST;
    }
    if (err == SK_OK && op->lease != 0) {
        sk_lease l;
        err = x->ops->lease_get(x->c, op->lease, &l);
        if (err != SK_ERR_NOT_FOUND)
            db(x, err);
    }
    return err;
}

/* Pass 2: the requests on the decided path that fail without the database. */
static sk_err check(txn_ctx *x, const sk_kv_txn *t)
{
    int n;
    const sk_kv_op *ops = chosen_ops(t, x->path[x->next_path++], &n);
    sk_err err = SK_OK;
    for (int i = 0; i < n && err == SK_OK; i++) {
        const sk_kv_op *op = &ops[i];
        if (op->kind == SK_KV_OP_TXN) {
            err = check(x, op->txn);
        } else if (op->kind == SK_KV_OP_PUT) {
            err = check_put(x, op);
        } else if (op->kind == SK_KV_OP_RANGE && op->range.rev > 0) {
            int64_t cur = 0;
            if (x->compact_rev < 0)
                err = db(x, x->ops->revisions(x->c, &cur, &x->compact_rev));
            if (err == SK_OK && op->range.rev > x->rev0)
                err = SK_ERR_INVALID;
            else if (err == SK_OK && op->range.rev < x->compact_rev)
                err = SK_ERR_EXPIRED;
        }
    }
    return err;
}

static sk_err append(txn_ctx *x, const sk_kv *kv, int deleted)
{
    sk_kv_row row = {*kv, x->sub, deleted};
    row.kv.mod_rev = x->rev0 + 1;
    sk_err err = db(x, x->ops->kv_append(x->c, &row));
    if (err == SK_OK)
        x->sub++;
    return err;
}

static sk_err apply_put(txn_ctx *x, const sk_kv_op *op, sk_kv_op_result *r)
{
    sk_kv_bounds b = sk_kv_bounds_of(x->a, op->range.key, op->range.key_len, NULL, 0);
    collect cur;
    sk_err err = db(x, read_all(x->ops, x->c, &b, INT64_MAX, x->a, &cur));
    if (err != SK_OK)
        return err;
    const sk_kv *prev = cur.n ? &cur.kvs[0] : NULL;
    sk_kv kv = {.key = op->range.key,
                .key_len = op->range.key_len,
                .value = op->value,
                .value_len = op->value_len,
                .create_rev = prev ? prev->create_rev : x->rev0 + 1,
                .version = prev ? prev->version + 1 : 1,
                .lease = op->lease};
    if (op->ignore_value && prev) {
        kv.value = prev->value;
        kv.value_len = prev->value_len;
    }
    if (op->ignore_lease && prev)
        kv.lease = prev->lease;
    if ((err = append(x, &kv, 0)) == SK_OK && op->prev_kv && prev)
        r->prev = cur.kvs;
    return err;
}

static sk_err apply_delete(txn_ctx *x, const sk_kv_op *op, sk_kv_op_result *r)
{
    sk_kv_bounds b =
        sk_kv_bounds_of(x->a, op->range.key, op->range.key_len, op->range.end, op->range.end_len);
    collect live;
    sk_err err = db(x, read_all(x->ops, x->c, &b, INT64_MAX, x->a, &live));
    for (int64_t i = 0; i < live.n && err == SK_OK; i++) {
        sk_kv tomb = {.key = live.kvs[i].key, .key_len = live.kvs[i].key_len};
        err = append(x, &tomb, 1);
    }
    if (err == SK_OK) {
        r->deleted = live.n;
        if (op->prev_kv)
            r->prev_kvs = live.kvs;
    }
    return err;
}

/* Pass 3: runs the decided branch of t into *out. */
static sk_err apply(txn_ctx *x, const sk_kv_txn *t, sk_kv_txn_result *out)
{
    int n;
    out->succeeded = x->path[x->next_path++];
    const sk_kv_op *ops = chosen_ops(t, out->succeeded, &n);
    out->results = sk_arena_alloc(x->a, (size_t)(n ? n : 1) * sizeof *out->results);
    out->n_results = n;
    sk_err err = SK_OK;
    for (int i = 0; i < n && err == SK_OK; i++) {
        const sk_kv_op *op = &ops[i];
        sk_kv_op_result *r = &out->results[i];
        r->kind = op->kind;
        switch (op->kind) {
        case SK_KV_OP_RANGE:
            err = db(x, sk_kv_read(x->ops, x->c, &op->range,
                                   op->range.rev > 0 ? op->range.rev : INT64_MAX, NULL, x->a,
                                   NULL, NULL, &r->range));
            break;
        case SK_KV_OP_PUT:
            err = apply_put(x, op, r);
            break;
        case SK_KV_OP_DELETE:
            err = apply_delete(x, op, r);
            break;
        case SK_KV_OP_TXN:
            r->txn = sk_arena_alloc(x->a, sizeof *r->txn);
            err = apply(x, op->txn, r->txn);
            break;
        }
        r->rev = x->rev0 + (x->sub > 0);
    }
    return err;
}

/* Sets the revision of every result in the tree: the transaction's. */
static void stamp_rev(sk_kv_txn_result *res, int64_t rev)
{
    res->rev = rev;
    for (int i = 0; i < res->n_results; i++)
        if (res->results[i].kind == SK_KV_OP_TXN)
            stamp_rev(res->results[i].txn, rev);
}

sk_err sk_kv_apply(const sk_backend_ops *ops, sk_conn *c, int64_t rev0, const sk_kv_txn *t,
                   sk_arena *a, sk_kv_txn_result *out, int *wrote_out, int *db_failed)
{
    txn_ctx x = {.ops = ops, .c = c, .a = a, .rev0 = rev0, .compact_rev = -1};
    sk_kv_txn_result res = {0};
    sk_err err = decide(&x, t);
    if (err == SK_OK) {
        x.next_path = 0;
        err = check(&x, t);
    }
    if (err == SK_OK) {
        x.next_path = 0;
        err = apply(&x, t, &res);
    }
    *db_failed = x.db_failed;
    if (err == SK_OK) {
        stamp_rev(&res, x.sub > 0 ? rev0 + 1 : rev0);
        *out = res;
        *wrote_out = x.sub > 0;
    }
    return err;
}

static void ops_keys(const sk_kv_op *ops, int n,
                     void (*fn)(void *arg, const unsigned char *key, size_t key_len), void *arg)
{
    for (int i = 0; i < n; i++) {
        const sk_kv_op *op = &ops[i];
        if (op->kind == SK_KV_OP_TXN)
            sk_kv_txn_keys(op->txn, fn, arg);
        else if (op->kind == SK_KV_OP_PUT ||
                 (op->range.end_len == 0 && (op->kind == SK_KV_OP_DELETE || op->range.rev == 0)))
            fn(arg, op->range.key, op->range.key_len);
    }
}

void sk_kv_txn_keys(const sk_kv_txn *t,
                    void (*fn)(void *arg, const unsigned char *key, size_t key_len), void *arg)
{
    for (int i = 0; i < t->n_compares; i++)
        if (t->compares[i].end_len == 0)
            fn(arg, t->compares[i].key, t->compares[i].key_len);
    ops_keys(t->success, t->n_success, fn, arg);
    ops_keys(t->failure, t->n_failure, fn, arg);
}

/* ---- leases --------------------------------------------------------------- */

/* Deletes the lease's keys at one revision (a transaction of single-key
 * deletes, in key order as etcd's Revoke sorts them), then the lease. */
static sk_err revoke(const sk_backend_ops *ops, sk_conn *c, int64_t rev0, int64_t id, sk_arena *a,
                     sk_lease_result *r, int *took_rev, int *db_failed)
{
    collect keys = {a, NULL, 0, 0};
    sk_kv_txn_result res;
    sk_err err = ops->kv_lease_keys(c, id, collect_kv, &keys);
    if (err != SK_OK) {
        *db_failed = 1;
        return err;
    }
    sk_kv_op *dels = sk_arena_alloc(a, (size_t)(keys.n ? keys.n : 1) * sizeof *dels);
    for (int64_t i = 0; i < keys.n; i++) {
        dels[i].kind = SK_KV_OP_DELETE;
        dels[i].range.key = keys.kvs[i].key;
        dels[i].range.key_len = keys.kvs[i].key_len;
    }
    sk_kv_txn t = {.success = dels, .n_success = (int)keys.n};
    err = sk_kv_apply(ops, c, rev0, &t, a, &res, took_rev, db_failed);
    if (err == SK_OK && (err = ops->lease_delete(c, id)) != SK_OK)
        *db_failed = 1;
    if (err == SK_OK) {
        r->rev = res.rev;
        r->deleted = keys.n;
    }
    return err;
}

/* An unused positive id, random as etcd's are: ids are not handed out again
 * in practice, so a stale client cannot renew a newer lease. */
static sk_err fresh_id(const sk_backend_ops *ops, sk_conn *c, int64_t *id_out)
{
    sk_err err = SK_OK;
    int64_t id = 0;
    while (err == SK_OK) {
        uint64_t u;
        sk_random_bytes(&u, sizeof u);
        id = (int64_t)(u & INT64_MAX);
        sk_lease l;
        err = id ? ops->lease_get(c, id, &l) : SK_OK;
    }
    if (err == SK_ERR_NOT_FOUND) {
        *id_out = id;
        err = SK_OK;
    }
    return err;
}

sk_err sk_kv_lease_apply(const sk_backend_ops *ops, sk_conn *c, int64_t rev0, const sk_lease_op *op,
                         sk_arena *a, sk_lease_result *out, int *took_rev_out, int *db_failed)
{
    sk_lease_result r = {.rev = rev0};
    sk_lease cur = {0};
    int took_rev = 0;
    int64_t id = op->id;
    *db_failed = 0;
    sk_err err = id == 0 && op->kind == SK_LEASE_GRANT ? fresh_id(ops, c, &id) : SK_OK;
    if (err == SK_OK)
        err = ops->lease_get(c, id, &cur);
    int exists = err == SK_OK;
    if (err != SK_OK && err != SK_ERR_NOT_FOUND) {
        *db_failed = 1;
        goto out;
    }
    err = SK_OK;
    switch (op->kind) {
    case SK_LEASE_GRANT:
        if (exists) {
            err = SK_ERR_ALREADY_EXISTS;
            break;
        }
        r.lease.id = id;
        r.lease.ttl = op->ttl < SK_LEASE_MIN_TTL ? SK_LEASE_MIN_TTL : op->ttl;
        r.lease.expires_at_ms = op->now_ms + r.lease.ttl * 1000;
        err = ops->lease_put(c, &r.lease);
        *db_failed = err != SK_OK;
        break;
    case SK_LEASE_RENEW:
        if (!exists || cur.expires_at_ms <= op->now_ms) {
            err = SK_ERR_NOT_FOUND;
            break;
        }
        r.lease = cur;
        r.lease.expires_at_ms = op->now_ms + cur.ttl * 1000;
        err = ops->lease_put(c, &r.lease);
        *db_failed = err != SK_OK;
        break;
    case SK_LEASE_EXPIRE:
    case SK_LEASE_REVOKE:
        if (!exists)
            err = SK_ERR_NOT_FOUND;
        else if (op->kind == SK_LEASE_EXPIRE && cur.expires_at_ms > op->now_ms)
            err = SK_ERR_CONFLICT; /* renewed since it was seen expired */
        else
            err = revoke(ops, c, rev0, id, a, &r, &took_rev, db_failed);
        break;
    }
out:
    if (err == SK_OK) {
        *out = r;
        *took_rev_out = took_rev;
    }
    return err;
}
