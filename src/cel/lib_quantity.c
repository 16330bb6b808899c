/*
 * lib_quantity.c - k8s.io/apiserver/pkg/cel/library/quantity.go at
 * release-1.32: quantity(), isQuantity(), sign, isInteger, asInteger,
 * asApproximateFloat, add, sub (a Quantity or an int), isGreaterThan,
 * isLessThan, compareTo, and equality by value (Quantity.Equal is Cmp).
 *
 * Values are as apimachinery's resource.Quantity holds them, because
 * kube's answers depend on it: an int64Amount (value x 10^scale) when
 * ParseQuantity's fast path or int64 arithmetic could keep one, else an
 * inf.Dec (unscaled x 10^-scale, here a decimal digit string), which
 * ParseQuantity's slow path rounds up to scale 9 (1n) and caps at 2^63-1
 * for BinarySI. isInteger / asInteger are AsInt64, which only an
 * int64Amount of scale >= 0 passes (so quantity('1.0').isInteger() is
 * false in kube, and here); asApproximateFloat is AsApproximateFloat64
 * (the unscaled value as a double times math.Pow10(exponent)). The syntax
 * is core/quantity.c's, shared with kube/typed.c.
 *
 * Work: arithmetic on digit strings is linear in the digits, which are
 * charged (64 a step) before they are made, so `quantity('1e999999999')`
 * (a billion digits at scale 9) spends the budget instead of memory.
 */
#include "cel/lib_quantity.h"

#include "core/quantity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct qty {
    int dec;              /* an inf.Dec, else an int64Amount */
    int64_t value, scale; /* int64Amount: value x 10^scale */
    int neg;              /* inf.Dec: -digits x 10^-dscale if neg */
    const char *digits;   /* no leading zeros; "" for 0 */
    int64_t dscale;
} qty;

/* An exact decimal: (neg ? -1 : 1) x digits x 10^exp. */
typedef struct num {
    int neg;
    const char *digits;
    size_t nd;
    int64_t exp;
} num;

static const char *strip(const char *d)
{
    while (*d == '0')
        d++;
    return d;
}

/* q's value; an int64Amount's digits go into buf. */
static num num_of(const qty *q, char buf[24])
{
    num n;
    if (q->dec) {
        n.neg = q->neg;
        n.digits = q->digits;
        n.exp = -q->dscale;
    } else {
        uint64_t m = q->value < 0 ? 0 - (uint64_t)q->value : (uint64_t)q->value;
        snprintf(buf, 24, "%llu", (unsigned long long)m);
        n.neg = q->value < 0;
        n.digits = strip(buf);
        n.exp = q->scale;
    }
    n.nd = strlen(n.digits);
    if (n.nd == 0)
        n.neg = 0;
    return n;
}

/* Magnitudes compared: -1, 0, 1. */
static int cmp_mag(const num *x, const num *y)
{
    if (!x->nd || !y->nd)
        return (x->nd != 0) - (y->nd != 0);
    int64_t lx = (int64_t)x->nd + x->exp, ly = (int64_t)y->nd + y->exp;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    size_t n = x->nd > y->nd ? x->nd : y->nd;
    for (size_t i = 0; i < n; i++) {
        char cx = i < x->nd ? x->digits[i] : '0', cy = i < y->nd ? y->digits[i] : '0';
        if (cx != cy)
            return cx < cy ? -1 : 1;
    }
    return 0;
}

static int cmp(const num *x, const num *y)
{
    int sx = x->nd ? (x->neg ? -1 : 1) : 0, sy = y->nd ? (y->neg ? -1 : 1) : 0;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    int m = cmp_mag(x, y);
    return sx < 0 ? -m : m;
}

/* x's digits shifted to exponent e (<= x->exp), into out[0..len). */
static void aligned(const num *x, int64_t e, char *out, size_t len)
{
    size_t zeros = (size_t)(x->exp - e);
    memset(out, '0', len);
    if (x->nd)
        memcpy(out + len - zeros - x->nd, x->digits, x->nd);
}

/* x + y (or x - y) as an inf.Dec at scale max(-x.exp, -y.exp), as
 * inf.Dec.Add does; NULL once the budget is spent. */
static qty *dec_add(sk_cel_env *env, const num *x, const num *y, int sub)
{
    sk_arena *a = sk_cel_env_arena(env);
    int64_t e = x->exp < y->exp ? x->exp : y->exp;
    int64_t lx = (int64_t)x->nd + (x->exp - e), ly = (int64_t)y->nd + (y->exp - e);
    size_t len = (size_t)(lx > ly ? lx : ly) + 1;
    if (!sk_cel_env_charge(env, 3 * len / 64))
        return NULL;
    char *p = sk_arena_alloc(a, len + 1), *q = sk_arena_alloc(a, len + 1);
    aligned(x, e, p, len);
    aligned(y, e, q, len);
    p[len] = q[len] = 0;
    int yneg = y->nd && (y->neg != sub);
    int xneg = x->nd && x->neg;
    char *r = sk_arena_alloc(a, len + 1);
    r[len] = 0;
    int neg;
    if (xneg == yneg) {
        int carry = 0;
        for (size_t i = len; i-- > 0;) {
            int d = (p[i] - '0') + (q[i] - '0') + carry;
            r[i] = (char)('0' + d % 10);
            carry = d / 10;
        }
        neg = xneg;
    } else {
        /* the larger magnitude minus the smaller */
        const char *big = p, *small = q;
        neg = xneg;
        if (strcmp(p, q) < 0) {
            big = q, small = p;
            neg = yneg;
        }
        int borrow = 0;
        for (size_t i = len; i-- > 0;) {
            int d = (big[i] - '0') - (small[i] - '0') - borrow;
            borrow = d < 0;
            r[i] = (char)('0' + (d + 10) % 10);
        }
    }
    qty *res = sk_arena_alloc(a, sizeof *res);
    *res = (qty){.dec = 1, .digits = strip(r), .dscale = -e};
    res->neg = *res->digits ? neg : 0;
    return res;
}

/* int64Multiply */
static int mul64(int64_t x, int64_t y, int64_t *r)
{
    if (x == 0 || y == 0 || x == 1 || y == 1) {
        *r = x * y;
        return 1;
    }
    if (x == INT64_MIN || y == INT64_MIN)
        return 0;
    return !__builtin_mul_overflow(x, y, r);
}

/* positiveScaleInt64; 0 stays 0 at once (Go loops over the whole scale,
 * which '0e999999999' makes a billion) and any other value overflows
 * within 19 steps, so this is O(1). */
static int scale64(int64_t v, int64_t scale, int64_t *r)
{
    for (int64_t i = 0; i < scale && v != 0; i++)
        if (!mul64(v, 10, &v))
            return 0;
    *r = v;
    return 1;
}

/* int64Amount.Add: 1 with *x updated, 0 (x unchanged) on overflow. */
static int amount_add(qty *x, int64_t bv, int64_t bs)
{
    int64_t c;
    if (bv == 0)
        return 1;
    if (x->value == 0) {
        x->value = bv;
        x->scale = bs;
        return 1;
    }
    if (x->scale == bs) {
        if (__builtin_add_overflow(x->value, bv, &c))
            return 0;
    } else if (x->scale > bs) {
        if (!scale64(x->value, x->scale - bs, &c) || __builtin_add_overflow(c, bv, &c))
            return 0;
        x->scale = bs;
    } else {
        if (!scale64(bv, bs - x->scale, &c) || __builtin_add_overflow(x->value, c, &c))
            return 0;
    }
    x->value = c;
    return 1;
}

/* Quantity.Add / Sub. */
static const qty *add(sk_cel_env *env, const qty *x, const qty *y, int sub)
{
    sk_arena *a = sk_cel_env_arena(env);
    if (!x->dec && !y->dec) {
        qty *r = sk_arena_alloc(a, sizeof *r);
        *r = *x;
        /* int64Amount.Sub negates as Go does, wrapping at the minimum */
        int64_t bv = sub ? (int64_t)(0 - (uint64_t)y->value) : y->value;
        if (amount_add(r, bv, y->scale))
            return r;
    }
    char bx[24], by[24];
    num nx = num_of(x, bx), ny = num_of(y, by);
    return dec_add(env, &nx, &ny, sub);
}

/* ParseQuantity of s (NUL-terminated, len bytes): a quantity, or NULL with
 * *err apimachinery's message (NULL too once the budget is spent, *err
 * NULL). */
static qty *parse(sk_cel_env *env, const char *s, size_t len, const char **err)
{
    sk_arena *a = sk_cel_env_arena(env);
    sk_quantity_parts p;
    int base, exp;
    sk_quantity_format fmt;
    qty *q = sk_arena_alloc(a, sizeof *q);
    memset(q, 0, sizeof *q);
    *err = NULL;
    if (len == 0 || memchr(s, 0, len)) {
        *err = sk_quantity_err_format;
        return NULL;
    }
    if (strcmp(s, "0") == 0)
        return q;
    if ((*err = sk_quantity_split(s, &p)))
        return NULL;
    if (!sk_quantity_suffix(p.suffix, p.suffix_len, &base, &exp, &fmt)) {
        *err = sk_quantity_err_suffix;
        return NULL;
    }
    /* the fast path: an int64Amount */
    int64_t precision, scale = 0, mantissa = 1;
    if (fmt == SK_QUANTITY_BINARY_SI) {
        if (exp >= 0 && p.denom_len == 0) {
            mantissa = (int64_t)1 << exp;
            precision = 15 - (int64_t)p.num_len - (int64_t)((float)exp * 3 / 10) - 1;
        } else {
            precision = -1;
        }
    } else {
        scale = exp;
        precision = 18 - (int64_t)(p.num_len + p.denom_len);
    }
    if (precision >= 0 && scale - (int64_t)p.denom_len >= -9) {
        int64_t v = 0, r;
        for (size_t i = 0; i < p.num_len; i++)
            v = v * 10 + (p.num[i] - '0');
        for (size_t i = 0; i < p.denom_len; i++)
            v = v * 10 + (p.denom[i] - '0');
        if (mul64(v, mantissa, &r)) {
            q->value = p.positive ? r : -r;
            q->scale = scale - (int64_t)p.denom_len;
            return q;
        }
    }
    /* the slow path: an inf.Dec (v0.9.1's SetString, which takes "5." but
     * not a number of no digits); unscaled: every digit of the number;
     * scale: the fraction's length less a decimal exponent */
    size_t nd = 0;
    char *digits = sk_arena_alloc(a, p.value_len + 1);
    for (size_t i = 0; i < p.value_len; i++)
        if (p.value[i] >= '0' && p.value[i] <= '9')
            digits[nd++] = p.value[i];
    digits[nd] = 0;
    if (nd == 0) {
        *err = sk_quantity_err_numeric;
        return NULL;
    }
    int64_t dscale = (int64_t)p.denom_len - (base == 10 ? exp : 0);
    const char *u = strip(digits);
    if (base == 2 && *u) {
        /* times 2^exp, at most 2^60: a digit string times 2^30 twice */
        size_t n = strlen(u);
        char *m = sk_arena_alloc(a, n + 20);
        if (!sk_cel_env_charge(env, 2 * (n + 20) / 64))
            return NULL;
        memset(m, '0', n + 19);
        memcpy(m + 19, u, n);
        m[n + 19] = 0;
        for (int left = exp; left > 0; left -= 30) {
            uint64_t f = (uint64_t)1 << (left > 30 ? 30 : left), carry = 0;
            for (size_t i = n + 19; i-- > 0;) {
                uint64_t d = (uint64_t)(m[i] - '0') * f + carry;
                m[i] = (char)('0' + d % 10);
                carry = d / 10;
            }
        }
        u = strip(m);
    }
    num value = {0, u, strlen(u), -dscale};
    if (value.nd) {
        /* Round(amount, 9, RoundUp): to scale 9 exactly, away from zero */
        if (dscale <= 9) {
            uint64_t more = (uint64_t)(9 - dscale);
            if (!sk_cel_env_charge(env, (value.nd + more) / 64 + 1))
                return NULL;
            char *m = sk_arena_alloc(a, value.nd + more + 1);
            memcpy(m, value.digits, value.nd);
            memset(m + value.nd, '0', more);
            m[value.nd + more] = 0;
            u = m;
        } else {
            uint64_t cut = (uint64_t)(dscale - 9);
            size_t keep = cut >= value.nd ? 0 : value.nd - (size_t)cut;
            int rest = 0;
            for (size_t i = keep; i < value.nd && !rest; i++)
                rest = value.digits[i] != '0';
            char *m = sk_arena_strndup(a, value.digits, keep);
            if (rest) {
                /* add one at the last kept digit */
                size_t k = keep;
                while (k > 0 && m[k - 1] == '9')
                    m[--k] = '0';
                if (k == 0)
                    m = sk_arena_printf(a, "1%s", m);
                else
                    m[k - 1]++;
            }
            u = strip(m);
        }
        dscale = 9;
    }
    q->dec = 1;
    q->digits = u;
    q->dscale = dscale;
    if (fmt == SK_QUANTITY_BINARY_SI) {
        static const num max = {0, "9223372036854775807", 19, 0};
        num got = {0, u, strlen(u), -dscale};
        if (cmp(&got, &max) > 0) {
            q->digits = max.digits;
            q->dscale = 0;
        }
    }
    q->neg = !p.positive && *q->digits;
    return q;
}

/* math.Pow10, from the same tables. */
static double pow10_go(int64_t n)
{
    static const double tab[32] = {1e00, 1e01, 1e02, 1e03, 1e04, 1e05, 1e06, 1e07, 1e08, 1e09, 1e10,
                                   1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
                                   1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31};
    static const double pos32[] = {1e00,  1e32,  1e64,  1e96,  1e128,
                                   1e160, 1e192, 1e224, 1e256, 1e288};
    static const double neg32[] = {1e-00,  1e-32,  1e-64,  1e-96,  1e-128, 1e-160,
                                   1e-192, 1e-224, 1e-256, 1e-288, 1e-320};
    if (n >= 0 && n <= 308)
        return pos32[n / 32] * tab[n % 32];
    if (n >= -323 && n <= 0)
        return neg32[-n / 32] / tab[-n % 32];
    return n > 0 ? INFINITY : 0;
}

static double approximate(const qty *q)
{
    double base;
    int64_t e;
    if (q->dec) {
        base = *q->digits ? strtod(q->digits, NULL) : 0;
        if (q->neg)
            base = -base;
        e = -q->dscale;
    } else {
        base = (double)q->value;
        e = q->scale;
    }
    return e == 0 ? base : base * pow10_go(e);
}

static int qty_equal(const void *x, const void *y)
{
    /* Quantity.Equal is Cmp == 0 */
    char bx[24], by[24];
    num nx = num_of(x, bx), ny = num_of(y, by);
    return cmp(&nx, &ny) == 0;
}

static size_t qty_size(const void *x)
{
    const qty *q = x;
    return q->dec ? strlen(q->digits) : sizeof *q;
}

static const sk_cel_opaque_type qty_type = {"kubernetes.Quantity", qty_equal, qty_size, NULL};

static const qty *as_qty(const sk_cel_val *v)
{
    return v->type == SK_CEL_V_OPAQUE && v->u.opaque.type == &qty_type ? v->u.opaque.data : NULL;
}

static const sk_cel_val *method_of(sk_cel_env *env, const char *f, const qty *q,
                                   const sk_cel_val *arg)
{
    sk_arena *a = sk_cel_env_arena(env);
    if (!arg) {
        if (strcmp(f, "sign") == 0) {
            int s = q->dec ? (*q->digits ? (q->neg ? -1 : 1) : 0) : (q->value > 0) - (q->value < 0);
            return sk_cel_int(a, s);
        }
        int is_int = strcmp(f, "isInteger") == 0, as_int = strcmp(f, "asInteger") == 0;
        if (is_int || as_int) {
            int64_t r = 0;
            int ok = !q->dec && q->scale >= 0 && scale64(q->value, q->scale, &r);
            if (is_int)
                return sk_cel_bool(ok);
            return ok ? sk_cel_int(a, r) : sk_cel_error(a, "cannot convert value to integer");
        }
        if (strcmp(f, "asApproximateFloat") == 0)
            return sk_cel_double(a, approximate(q));
        return NULL;
    }
    int is_add = strcmp(f, "add") == 0, is_sub = strcmp(f, "sub") == 0;
    int gt = strcmp(f, "isGreaterThan") == 0, lt = strcmp(f, "isLessThan") == 0;
    int compare = strcmp(f, "compareTo") == 0;
    if (!(is_add || is_sub || gt || lt || compare))
        return NULL;
    const qty *y = as_qty(arg);
    if (!y && (is_add || is_sub) && arg->type == SK_CEL_V_INT) {
        qty *n = sk_arena_alloc(a, sizeof *n);
        *n = (qty){.value = arg->u.i}; /* NewQuantity(i, DecimalExponent) */
        y = n;
    }
    if (!y)
        return sk_cel_error(a, "no such overload");
    if (is_add || is_sub) {
        const qty *r = add(env, q, y, is_sub);
        return r ? sk_cel_opaque(a, &qty_type, r) : sk_cel_env_exhausted(env);
    }
    char bx[24], by[24];
    num nx = num_of(q, bx), ny = num_of(y, by);
    if (!sk_cel_env_charge(env, (nx.nd + ny.nd) / 64))
        return sk_cel_env_exhausted(env);
    int c = cmp(&nx, &ny);
    if (compare)
        return sk_cel_int(a, c);
    return sk_cel_bool(gt ? c > 0 : c < 0);
}

const sk_cel_val *sk_cel_lib_quantity(sk_cel_env *env, const char *f, int method,
                                      const sk_cel_val *const *v, size_t n)
{
    sk_arena *a = sk_cel_env_arena(env);
    /* sign is declared as a function of a Quantity; cel-go's unchecked
     * dispatch takes q.sign() too */
    if (!method && n == 1 && strcmp(f, "sign") == 0 && as_qty(v[0]))
        return method_of(env, f, as_qty(v[0]), NULL);
    if (method) {
        const qty *q = as_qty(v[0]);
        return q && n <= 2 ? method_of(env, f, q, n == 2 ? v[1] : NULL) : NULL;
    }
    int is = strcmp(f, "isQuantity") == 0;
    if (n != 1 || (!is && strcmp(f, "quantity") != 0))
        return NULL;
    if (v[0]->type != SK_CEL_V_STRING)
        return sk_cel_error(a, "no such overload");
    const char *err;
    qty *q = parse(env, v[0]->u.str.s, v[0]->u.str.len, &err);
    if (!q && !err)
        return sk_cel_env_exhausted(env);
    if (is)
        return sk_cel_bool(q != NULL);
    return q ? sk_cel_opaque(a, &qty_type, q) : sk_cel_error(a, "%s", err);
}
