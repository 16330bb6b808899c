/*
 * value.c - CEL values: constructors, the JSON mapping, equality, ordering
 * and map lookup (see value.h). Numbers of different kinds compare as
 * cel-go compares them: int against uint exactly, an integer against a
 * double as doubles once the double is known to be within the integer's
 * range (the conformance tests expect 2^63 - 1 >= 2^63.0).
 */
#include "cel/value.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sk_cel_val null_value = {.type = SK_CEL_V_NULL};
static const sk_cel_val true_value = {.type = SK_CEL_V_BOOL, .u.b = 1};
static const sk_cel_val false_value = {.type = SK_CEL_V_BOOL, .u.b = 0};

static sk_cel_val *make(sk_arena *a, sk_cel_vtype type)
{
    sk_cel_val *v = sk_arena_alloc(a, sizeof *v);
    v->type = type;
    return v;
}

const sk_cel_val *sk_cel_null(void)
{
    return &null_value;
}
const sk_cel_val *sk_cel_bool(int b)
{
    return b ? &true_value : &false_value;
}

sk_cel_val *sk_cel_int(sk_arena *a, int64_t i)
{
    sk_cel_val *v = make(a, SK_CEL_V_INT);
    v->u.i = i;
    return v;
}

sk_cel_val *sk_cel_uint(sk_arena *a, uint64_t u)
{
    sk_cel_val *v = make(a, SK_CEL_V_UINT);
    v->u.u = u;
    return v;
}

sk_cel_val *sk_cel_double(sk_arena *a, double d)
{
    sk_cel_val *v = make(a, SK_CEL_V_DOUBLE);
    v->u.d = d;
    return v;
}

static sk_cel_val *text(sk_arena *a, sk_cel_vtype type, const char *s, size_t len)
{
    sk_cel_val *v = make(a, type);
    v->u.str.s = s;
    v->u.str.len = len;
    return v;
}

sk_cel_val *sk_cel_string(sk_arena *a, const char *s, size_t len)
{
    return text(a, SK_CEL_V_STRING, s, len);
}

sk_cel_val *sk_cel_bytes(sk_arena *a, const char *s, size_t len)
{
    return text(a, SK_CEL_V_BYTES, s, len);
}

static sk_cel_val *moment(sk_arena *a, sk_cel_vtype type, int64_t sec, int32_t nsec)
{
    sk_cel_val *v = make(a, type);
    v->u.time.sec = sec;
    v->u.time.nsec = nsec;
    return v;
}

sk_cel_val *sk_cel_duration(sk_arena *a, int64_t sec, int32_t nsec)
{
    return moment(a, SK_CEL_V_DURATION, sec, nsec);
}

sk_cel_val *sk_cel_timestamp(sk_arena *a, int64_t sec, int32_t nsec)
{
    return moment(a, SK_CEL_V_TIMESTAMP, sec, nsec);
}

sk_cel_val *sk_cel_optional(sk_arena *a, const sk_cel_val *v)
{
    sk_cel_val *o = make(a, SK_CEL_V_OPTIONAL);
    o->u.opt = v;
    return o;
}

sk_cel_val *sk_cel_type(sk_arena *a, const char *name)
{
    return text(a, SK_CEL_V_TYPE, name, strlen(name));
}

sk_cel_val *sk_cel_error(sk_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    return text(a, SK_CEL_V_ERROR, sk_arena_strndup(a, buf, len), len);
}

sk_cel_val *sk_cel_list(sk_arena *a, const sk_cel_val *const *items, size_t n)
{
    sk_cel_val *v = make(a, SK_CEL_V_LIST);
    v->u.list.items = items;
    v->u.list.n = n;
    return v;
}

/* The storage behind lists made by concatenation: cap slots, the first
 * used of them filled by some list. */
struct sk_cel_listbuf {
    size_t cap, used;
};

sk_cel_val *sk_cel_list_concat(sk_arena *a, const sk_cel_val *x, const sk_cel_val *y,
                               size_t *copied)
{
    size_t nx = x->u.list.n, ny = y->u.list.n, n = nx + ny;
    struct sk_cel_listbuf *b = x->u.list.buf;
    const sk_cel_val **items;
    if (b && b->used == nx && n <= b->cap) {
        /* The slots past used belong to no list yet: filling them changes
         * no value anyone holds. */
        items = (const sk_cel_val **)x->u.list.items;
        memcpy(items + nx, y->u.list.items, ny * sizeof *items);
        *copied = ny;
    } else {
        b = sk_arena_alloc(a, sizeof *b);
        b->cap = n < 4 ? 8 : 2 * n;
        items = sk_arena_alloc(a, b->cap * sizeof *items);
        memcpy(items, x->u.list.items, nx * sizeof *items);
        memcpy(items + nx, y->u.list.items, ny * sizeof *items);
        *copied = n;
    }
    b->used = n;
    sk_cel_val *v = sk_cel_list(a, items, n);
    v->u.list.buf = b;
    return v;
}

sk_cel_val *sk_cel_map(sk_arena *a, const sk_cel_val *const *keys, const sk_cel_val *const *vals,
                       size_t n)
{
    sk_cel_val *v = make(a, SK_CEL_V_MAP);
    v->u.map.keys = keys;
    v->u.map.vals = vals;
    v->u.map.n = n;
    return v;
}

const sk_cel_val *sk_cel_from_json(sk_arena *a, const json_t *j)
{
    const sk_cel_val *r = &null_value;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(j), k = 0;
        const sk_cel_val **keys = sk_arena_alloc(a, (n ? n : 1) * sizeof *keys);
        const sk_cel_val **vals = sk_arena_alloc(a, (n ? n : 1) * sizeof *vals);
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)j, key, val)
        {
            keys[k] = sk_cel_string(a, key, strlen(key));
            vals[k++] = sk_cel_from_json(a, val);
        }
        r = sk_cel_map(a, keys, vals, k);
        break;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(j);
        const sk_cel_val **items = sk_arena_alloc(a, (n ? n : 1) * sizeof *items);
        for (size_t i = 0; i < n; i++)
            items[i] = sk_cel_from_json(a, json_array_get(j, i));
        r = sk_cel_list(a, items, n);
        break;
    }
    case JSON_STRING:
        r = sk_cel_string(a, json_string_value(j), json_string_length(j));
        break;
    case JSON_INTEGER:
        r = sk_cel_int(a, json_integer_value(j));
        break;
    case JSON_REAL:
        r = sk_cel_double(a, json_real_value(j));
        break;
    case JSON_TRUE:
        r = &true_value;
        break;
    case JSON_FALSE:
        r = &false_value;
        break;
    case JSON_NULL:
        break;
    }
    return r;
}

const char *sk_cel_type_named(const char *name)
{
    static const char *const names[] = {"bool", "int", "uint", "double", "string", "bytes", "list",
                                        "map", "null_type", "type", "google.protobuf.Duration",
                                        "google.protobuf.Timestamp", "optional_type",
                                        /* kube's ip and cidr libraries' */
                                        "net.IP", "net.CIDR"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0)
            return names[i];
    return NULL;
}

sk_cel_val *sk_cel_opaque(sk_arena *a, const sk_cel_opaque_type *type, const void *data)
{
    sk_cel_val *v = make(a, SK_CEL_V_OPAQUE);
    v->u.opaque.type = type;
    v->u.opaque.data = data;
    return v;
}

const char *sk_cel_type_name(const sk_cel_val *v)
{
    if (v->type == SK_CEL_V_OPAQUE)
        return v->u.opaque.type->name;
    static const char *const names[] = {
        [SK_CEL_V_NULL] = "null_type",
        [SK_CEL_V_BOOL] = "bool",
        [SK_CEL_V_INT] = "int",
        [SK_CEL_V_UINT] = "uint",
        [SK_CEL_V_DOUBLE] = "double",
        [SK_CEL_V_STRING] = "string",
        [SK_CEL_V_BYTES] = "bytes",
        [SK_CEL_V_LIST] = "list",
        [SK_CEL_V_MAP] = "map",
        [SK_CEL_V_TYPE] = "type",
        [SK_CEL_V_ERROR] = "error",
        [SK_CEL_V_DURATION] = "google.protobuf.Duration",
        [SK_CEL_V_TIMESTAMP] = "google.protobuf.Timestamp",
        [SK_CEL_V_OPTIONAL] = "optional_type",
    };
    return names[v->type];
}

static int is_number(const sk_cel_val *v)
{
    return v->type == SK_CEL_V_INT || v->type == SK_CEL_V_UINT || v->type == SK_CEL_V_DOUBLE;
}

/* An int against a double: 2 if d is NaN. As in cel-go, a double outside
 * int64's range is beyond every int, and within it the int is compared as
 * a double (so 2^63 - 1 equals 2^63.0, both being 2^63 as doubles). */
static int cmp_int_double(int64_t i, double d)
{
    if (isnan(d))
        return 2;
    if (d < -9223372036854775808.0)
        return 1;
    if (d > 9223372036854775807.0)
        return -1;
    double x = (double)i;
    return x < d ? -1 : x > d;
}

static int cmp_uint_double(uint64_t u, double d)
{
    if (isnan(d))
        return 2;
    if (d < 0)
        return 1;
    if (d > 18446744073709551615.0)
        return -1;
    double x = (double)u;
    return x < d ? -1 : x > d;
}

static int cmp_int_uint(int64_t i, uint64_t u)
{
    if (i < 0)
        return -1;
    return (uint64_t)i < u ? -1 : (uint64_t)i > u;
}

/* -1, 0, 1, or 2 for unordered (NaN). */
static int cmp_numbers(const sk_cel_val *x, const sk_cel_val *y)
{
    switch (x->type * 16 + y->type) {
    case SK_CEL_V_INT * 16 + SK_CEL_V_INT:
        return x->u.i < y->u.i ? -1 : x->u.i > y->u.i;
    case SK_CEL_V_UINT * 16 + SK_CEL_V_UINT:
        return x->u.u < y->u.u ? -1 : x->u.u > y->u.u;
    case SK_CEL_V_DOUBLE * 16 + SK_CEL_V_DOUBLE:
        if (isnan(x->u.d) || isnan(y->u.d))
            return 2;
        return x->u.d < y->u.d ? -1 : x->u.d > y->u.d;
    case SK_CEL_V_INT * 16 + SK_CEL_V_UINT:
        return cmp_int_uint(x->u.i, y->u.u);
    case SK_CEL_V_UINT * 16 + SK_CEL_V_INT:
        return -cmp_int_uint(y->u.i, x->u.u);
    case SK_CEL_V_INT * 16 + SK_CEL_V_DOUBLE:
        return cmp_int_double(x->u.i, y->u.d);
    case SK_CEL_V_DOUBLE * 16 + SK_CEL_V_INT: {
        int c = cmp_int_double(y->u.i, x->u.d);
        return c == 2 ? 2 : -c;
    }
    case SK_CEL_V_UINT * 16 + SK_CEL_V_DOUBLE:
        return cmp_uint_double(x->u.u, y->u.d);
    default: { /* double, uint */
        int c = cmp_uint_double(y->u.u, x->u.d);
        return c == 2 ? 2 : -c;
    }
    }
}

static int cmp_bytes(const sk_cel_val *x, const sk_cel_val *y)
{
    size_t n = x->u.str.len < y->u.str.len ? x->u.str.len : y->u.str.len;
    int c = memcmp(x->u.str.s, y->u.str.s, n);
    if (c == 0)
        return x->u.str.len < y->u.str.len ? -1 : x->u.str.len > y->u.str.len;
    return c < 0 ? -1 : 1;
}

int sk_cel_compare(const sk_cel_val *x, const sk_cel_val *y, int *cmp)
{
    int c;
    if (is_number(x) && is_number(y))
        c = cmp_numbers(x, y);
    else if (x->type != y->type)
        return -1;
    else if (x->type == SK_CEL_V_STRING || x->type == SK_CEL_V_BYTES)
        c = cmp_bytes(x, y);
    else if (x->type == SK_CEL_V_BOOL)
        c = x->u.b - y->u.b;
    else if (x->type == SK_CEL_V_DURATION || x->type == SK_CEL_V_TIMESTAMP)
        c = x->u.time.sec != y->u.time.sec     ? (x->u.time.sec < y->u.time.sec ? -1 : 1)
            : x->u.time.nsec != y->u.time.nsec ? (x->u.time.nsec < y->u.time.nsec ? -1 : 1)
                                               : 0;
    else
        return -1;
    if (c == 2)
        return 0;
    *cmp = c;
    return 1;
}

/* Charges n units to w; 0 once past its limit. */
static int spend(sk_cel_work *w, uint64_t n)
{
    if (!w)
        return 1;
    w->done += n;
    return w->done <= w->limit;
}

int sk_cel_equal(const sk_cel_val *x, const sk_cel_val *y, sk_cel_work *w)
{
    if (!spend(w, 1))
        return -1;
    if (is_number(x) && is_number(y))
        return cmp_numbers(x, y) == 0;
    if (x->type != y->type)
        return 0;
    switch (x->type) {
    case SK_CEL_V_NULL:
        return 1;
    case SK_CEL_V_BOOL:
        return x->u.b == y->u.b;
    case SK_CEL_V_STRING:
    case SK_CEL_V_BYTES:
    case SK_CEL_V_TYPE:
    case SK_CEL_V_ERROR:
        if (x->u.str.len != y->u.str.len)
            return 0;
        if (!spend(w, x->u.str.len / 64))
            return -1;
        return memcmp(x->u.str.s, y->u.str.s, x->u.str.len) == 0;
    case SK_CEL_V_DURATION:
    case SK_CEL_V_TIMESTAMP:
        return x->u.time.sec == y->u.time.sec && x->u.time.nsec == y->u.time.nsec;
    case SK_CEL_V_OPTIONAL:
        if (!x->u.opt || !y->u.opt)
            return x->u.opt == y->u.opt;
        return sk_cel_equal(x->u.opt, y->u.opt, w);
    case SK_CEL_V_LIST:
        if (x->u.list.n != y->u.list.n)
            return 0;
        for (size_t i = 0; i < x->u.list.n; i++) {
            int r = sk_cel_equal(x->u.list.items[i], y->u.list.items[i], w);
            if (r != 1)
                return r;
        }
        return 1;
    case SK_CEL_V_MAP:
        if (x->u.map.n != y->u.map.n)
            return 0;
        for (size_t i = 0; i < x->u.map.n; i++) {
            long k = sk_cel_map_find(y, x->u.map.keys[i], w);
            if (k < 0)
                return k == -2 ? -1 : 0;
            int r = sk_cel_equal(x->u.map.vals[i], y->u.map.vals[k], w);
            if (r != 1)
                return r;
        }
        return 1;
    case SK_CEL_V_OPAQUE:
        if (x->u.opaque.type != y->u.opaque.type)
            return 0;
        if (!spend(w, x->u.opaque.type->size(x->u.opaque.data) / 64))
            return -1;
        return x->u.opaque.type->equal(x->u.opaque.data, y->u.opaque.data);
    default:
        return 0;
    }
}

long sk_cel_map_find(const sk_cel_val *m, const sk_cel_val *key, sk_cel_work *w)
{
    for (size_t i = 0; i < m->u.map.n; i++) {
        int r = sk_cel_equal(m->u.map.keys[i], key, w);
        if (r < 0)
            return -2;
        if (r)
            return (long)i;
    }
    return -1;
}

/* The shortest decimal digits that read back as d (finite), as Go's
 * strconv finds them: at most 17, no dot, sign or trailing zeros ("0" for
 * zero); their count, and *exp the power of ten of the first. */
static int shortest_digits(double d, char digits[18], int *exp)
{
    char buf[40];
    int prec;
    for (prec = 1; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
    /* buf: [-]D[.DDD]e[+-]XX */
    int nd = 0;
    const char *p = buf + (buf[0] == '-');
    for (; *p != 'e'; p++)
        if (*p != '.')
            digits[nd++] = *p;
    *exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    return nd;
}

size_t sk_cel_double_text(double d, char fmt, char out[400])
{
    char digits[18];
    int exp, nd = shortest_digits(d, digits, &exp);
    size_t o = 0;
    if (signbit(d))
        out[o++] = '-';
    if (fmt == 'g' && (exp < -4 || exp >= 21)) {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            memcpy(out + o, digits + 1, (size_t)nd - 1);
            o += (size_t)nd - 1;
        }
        o += (size_t)snprintf(out + o, 400 - o, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
    } else if (exp < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int k = -1; k > exp; k--)
            out[o++] = '0';
        memcpy(out + o, digits, (size_t)nd);
        o += (size_t)nd;
    } else {
        for (int k = 0; k <= exp || k < nd; k++) {
            if (k == exp + 1)
                out[o++] = '.';
            out[o++] = k < nd ? digits[k] : '0';
        }
    }
    out[o] = 0;
    return o;
}

const sk_cel_val *sk_cel_double_string(sk_arena *a, double d)
{
    if (isnan(d))
        return sk_cel_string(a, "NaN", 3);
    if (isinf(d))
        return d > 0 ? sk_cel_string(a, "+Inf", 4) : sk_cel_string(a, "-Inf", 4);
    char out[400];
    size_t n = sk_cel_double_text(d, 'g', out);
    return sk_cel_string(a, sk_arena_strndup(a, out, n), n);
}
