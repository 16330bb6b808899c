/*
 * types.c - see types.h.
 */
#include "cel/types.h"
#include "core/check.h"

#include <string.h>

static const sk_cel_ty prims[] = {
    [SK_CEL_TY_DYN] = {SK_CEL_TY_DYN, NULL, {0}, 0, NULL},
    [SK_CEL_TY_ERROR] = {SK_CEL_TY_ERROR, NULL, {0}, 0, NULL},
    [SK_CEL_TY_NULL] = {SK_CEL_TY_NULL, NULL, {0}, 0, NULL},
    [SK_CEL_TY_BOOL] = {SK_CEL_TY_BOOL, NULL, {0}, 0, NULL},
    [SK_CEL_TY_INT] = {SK_CEL_TY_INT, NULL, {0}, 0, NULL},
    [SK_CEL_TY_UINT] = {SK_CEL_TY_UINT, NULL, {0}, 0, NULL},
    [SK_CEL_TY_DOUBLE] = {SK_CEL_TY_DOUBLE, NULL, {0}, 0, NULL},
    [SK_CEL_TY_STRING] = {SK_CEL_TY_STRING, NULL, {0}, 0, NULL},
    [SK_CEL_TY_BYTES] = {SK_CEL_TY_BYTES, NULL, {0}, 0, NULL},
    [SK_CEL_TY_DURATION] = {SK_CEL_TY_DURATION, NULL, {0}, 0, NULL},
    [SK_CEL_TY_TIMESTAMP] = {SK_CEL_TY_TIMESTAMP, NULL, {0}, 0, NULL},
    [SK_CEL_TY_TYPE] = {SK_CEL_TY_TYPE, NULL, {0}, 0, NULL},
};

const sk_cel_ty *sk_cel_ty_of(sk_cel_ty_kind kind)
{
    SK_CHECK(kind < sizeof prims / sizeof *prims && kind != SK_CEL_TY_LIST &&
             kind != SK_CEL_TY_MAP);
    return &prims[kind];
}

/* t, copied into a. */
static const sk_cel_ty *made(sk_arena *a, sk_cel_ty t)
{
    sk_cel_ty *p = sk_arena_alloc(a, sizeof *p);
    *p = t;
    return p;
}

const sk_cel_ty *sk_cel_ty_list(sk_arena *a, const sk_cel_ty *elem)
{
    return made(a, (sk_cel_ty){SK_CEL_TY_LIST, NULL, {elem, NULL}, 1, NULL});
}

const sk_cel_ty *sk_cel_ty_map(sk_arena *a, const sk_cel_ty *key, const sk_cel_ty *val)
{
    return made(a, (sk_cel_ty){SK_CEL_TY_MAP, NULL, {key, val}, 2, NULL});
}

const sk_cel_ty *sk_cel_ty_optional(sk_arena *a, const sk_cel_ty *v)
{
    return made(a, (sk_cel_ty){SK_CEL_TY_OPAQUE, "optional_type", {v, NULL}, 1, NULL});
}

const sk_cel_ty *sk_cel_ty_object(sk_arena *a, const char *name, const void *data)
{
    return made(a, (sk_cel_ty){SK_CEL_TY_OBJECT, name, {NULL, NULL}, 0, data});
}

const char *sk_cel_ty_name(const sk_cel_ty *t)
{
    static const char *const names[] = {
        [SK_CEL_TY_DYN] = "dyn",
        [SK_CEL_TY_ERROR] = "*error*",
        [SK_CEL_TY_NULL] = "null_type",
        [SK_CEL_TY_BOOL] = "bool",
        [SK_CEL_TY_INT] = "int",
        [SK_CEL_TY_UINT] = "uint",
        [SK_CEL_TY_DOUBLE] = "double",
        [SK_CEL_TY_STRING] = "string",
        [SK_CEL_TY_BYTES] = "bytes",
        [SK_CEL_TY_DURATION] = "google.protobuf.Duration",
        [SK_CEL_TY_TIMESTAMP] = "google.protobuf.Timestamp",
        [SK_CEL_TY_LIST] = "list",
        [SK_CEL_TY_MAP] = "map",
        [SK_CEL_TY_TYPE] = "type",
    };
    return t->name ? t->name : names[t->kind];
}

void sk_cel_ty_format(sk_buf *b, const sk_cel_ty *t)
{
    switch (t->kind) {
    case SK_CEL_TY_ERROR:
        sk_buf_puts(b, "!error!");
        return;
    case SK_CEL_TY_NULL:
        sk_buf_puts(b, "null");
        return;
    case SK_CEL_TY_DURATION:
        sk_buf_puts(b, "duration");
        return;
    case SK_CEL_TY_TIMESTAMP:
        sk_buf_puts(b, "timestamp");
        return;
    default:
        break;
    }
    sk_buf_puts(b, sk_cel_ty_name(t));
    if (!t->np)
        return;
    sk_buf_putc(b, '(');
    for (size_t i = 0; i < t->np; i++) {
        if (i)
            sk_buf_puts(b, ", ");
        sk_cel_ty_format(b, t->p[i]);
    }
    sk_buf_putc(b, ')');
}

void sk_cel_ty_string(sk_buf *b, const sk_cel_ty *t)
{
    sk_buf_puts(b, sk_cel_ty_name(t));
    if (!t->np)
        return;
    sk_buf_putc(b, '(');
    for (size_t i = 0; i < t->np; i++) {
        if (i)
            sk_buf_puts(b, ", ");
        sk_cel_ty_string(b, t->p[i]);
    }
    sk_buf_putc(b, ')');
}
