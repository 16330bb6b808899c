/*
 * typed.c - see typed.h. One walker over a parsed object and its schema
 * rebuilds the object as Go's json.Unmarshal into the kind's struct and
 * json.Marshal back would: it is also the one place undeclared fields are
 * dropped (kube-apiserver's typed decoding drops them) and the one place a
 * body's value types are checked.
 *
 * Decoding rules kept from encoding/json (Go 1.22, as kube-apiserver 1.32
 * is built), because clients see their effects:
 *  - A value of the wrong JSON type is recorded (the first one wins) and
 *    decoding goes on; an error from a type that decodes itself (Time,
 *    MicroTime, Quantity, IntOrString) stops it at once and wins.
 *  - The error names the innermost Go struct and the JSON path from the
 *    root without list indices or map keys ("PodSpec.spec.containers").
 *  - null leaves a value at its zero (pointers, slices and maps nil).
 * Encoding rules: struct fields in declaration order; omitempty drops "",
 * 0, false, nil or empty slices and maps and nil pointers, never a struct;
 * a struct-typed field without a pointer is always written; map keys sorted.
 *
 * Numbers: jansson keeps integers exactly (int64) and reals as doubles, so
 * a real's text in an error is its shortest round-tripping form ("1.5"),
 * which differs from the request's text only for forms like "1.0" or "1e3".
 * Quantities whose digits exceed 36 are kept as sent (Go's arbitrary
 * precision path is not reproduced beyond 128-bit arithmetic).
 *
 * The same walk notes, for its first error, what the unstructured
 * converter would say instead (restore_words), rather than a second walker
 * that would have to agree with this one on where the first error is. The
 * syntax checker follows encoding/json's scanner states, which decide the
 * words of each error; it never builds a value.
 */
#include "kube/typed.h"
#include "core/civil.h"
#include "kube/schema.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/quantity.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct walk {
    char *saved; /* first type error: decoding went on */
    char *fatal; /* a self-decoding type's error: decoding stopped */
    char *restore; /* the unstructured converter's words for the first
                    * error, when it words it (restore_words) */
    sk_buf path; /* JSON path of the value being decoded, for errors */
} walk;

/* ---- errors ------------------------------------------------------------- */

const char *sk_typed_go_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    default:
        return "null";
    }
}

/* A real's shortest text that reads back as the same double. */
static void put_real(sk_buf *b, double d)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    sk_buf_puts(b, tmp);
}

/* "<Struct>" from a Go type spelling "v1.PodSpec". */
static const char *struct_word(const char *go_type)
{
    const char *dot = go_type ? strrchr(go_type, '.') : NULL;
    return dot ? dot + 1 : go_type ? go_type : "";
}

/* UnmarshalTypeError: "json: cannot unmarshal <value> into Go struct field
 * <Struct>.<path> of type <type>". */
static char *type_error(walk *w, const char *value, const char *in_struct, const char *go_type)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, "json: cannot unmarshal %s into Go struct field %s.%s of type %s", value,
                  in_struct, w->path.data ? w->path.data : "", go_type);
    return sk_buf_steal(&b, NULL);
}

static void save(walk *w, char *msg)
{
    if (!w->saved)
        w->saved = msg;
    else
        free(msg);
}

static void stop(walk *w, char *msg)
{
    if (!w->fatal)
        w->fatal = msg;
    else
        free(msg);
}

/* The reflect kind of v decoded into interface{} (integers kept, as a
 * strategic merge patch decodes), as the unstructured converter names it. */
static const char *unstructured_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "map";
    case JSON_ARRAY:
        return "slice";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "int64";
    case JSON_REAL:
        return "float64";
    default:
        return "bool";
    }
}

/* What runtime.DefaultUnstructuredConverter's fromUnstructured answers
 * for v (not null) where s wants another JSON kind, or NULL where it
 * converts v (a whole float64 into an int) or words it otherwise. */
static char *restore_words(const json_t *v, const sk_schema *s)
{
    if (!v)
        return NULL;
    const char *src = unstructured_kind(v);
    const char *dst = NULL;
    sk_buf b = SK_BUF_INIT;
    switch (sk_schema_kind_of(s)) {
    case SK_SCHEMA_STRUCT:
        sk_buf_printf(&b, "cannot restore struct from: %s", src);
        break;
    case SK_SCHEMA_ARRAY:
        sk_buf_printf(&b, "cannot restore slice from %s", src);
        break;
    case SK_SCHEMA_BYTES:
        /* an array's numbers convert to bytes one by one */
        if (!json_is_array(v))
            sk_buf_printf(&b, "cannot restore slice from %s", src);
        break;
    case SK_SCHEMA_MAP:
        sk_buf_printf(&b, "cannot restore map from %s", src);
        break;
    case SK_SCHEMA_STRING:
        dst = "string";
        break;
    case SK_SCHEMA_BOOL:
        dst = "bool";
        break;
    case SK_SCHEMA_INT32:
        dst = "int32";
        break;
    case SK_SCHEMA_INT64:
        dst = "int64";
        break;
    case SK_SCHEMA_DOUBLE:
        dst = "float64";
        break;
    default:
        break;
    }
    if (dst) {
        int to_int = !strcmp(dst, "int32") || !strcmp(dst, "int64");
        /* reflect converts an integer to a string and a float to an int,
         * which the converter allows only for a whole float */
        if ((json_is_integer(v) && !strcmp(dst, "string")) || (json_is_real(v) && to_int)) {
            if (json_is_integer(v) || json_real_value(v) != trunc(json_real_value(v)))
                sk_buf_printf(&b, "cannot convert %s to %s", src, dst);
        } else {
            sk_buf_printf(&b, "unrecognized type: %s", dst);
        }
    }
    return b.data ? sk_buf_steal(&b, NULL) : NULL;
}

/* Records the converter's words for what is about to be the first error. */
static void note_restore(walk *w, const json_t *v, const sk_schema *s)
{
    if (!w->saved && !w->fatal)
        w->restore = restore_words(v, s);
}

static void mismatch(walk *w, const json_t *v, const char *in_struct, const sk_schema *s)
{
    note_restore(w, v, s);
    save(w, type_error(w, sk_typed_go_kind(v), in_struct, sk_schema_go_type(s)));
}

/* ---- base64 (Go's base64.StdEncoding, CR and LF skipped) ----------------- */

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

static size_t skip_newlines(const char *s, size_t si, size_t len)
{
    while (si < len && (s[si] == '\n' || s[si] == '\r'))
        si++;
    return si;
}

/* Decodes s into out (room for len*3/4+3 bytes) as Go does; the decoded
 * length, or -1 with *bad_at the input byte Go's CorruptInputError names. */
static long b64_decode(const char *s, unsigned char *out, size_t *bad_at)
{
    size_t len = strlen(s), si = 0;
    long n = 0;
    for (;;) {
        int q[4];
        size_t j = 0;
        while (j < 4) {
            si = skip_newlines(s, si, len);
            if (si == len) {
                if (j == 0)
                    return n;
                *bad_at = si - j;
                return -1;
            }
            char c = s[si++];
            int v = b64_value(c);
            if (v >= 0) {
                q[j++] = v;
                continue;
            }
            if (c != '=' || j < 2) {
                *bad_at = si - 1;
                return -1;
            }
            if (j == 2) {
                si = skip_newlines(s, si, len);
                if (si == len || s[si] != '=') {
                    *bad_at = si == len ? len : si - 1;
                    return -1;
                }
                si++;
            }
            si = skip_newlines(s, si, len);
            if (si < len) {
                *bad_at = si;
                return -1;
            }
            /* j is 2 or 3: one or two bytes. */
            if (out) {
                out[n] = (unsigned char)(q[0] << 2 | q[1] >> 4);
                if (j == 3)
                    out[n + 1] = (unsigned char)(q[1] << 4 | q[2] >> 2);
            }
            return n + (long)j - 1;
        }
        if (out) {
            out[n] = (unsigned char)(q[0] << 2 | q[1] >> 4);
            out[n + 1] = (unsigned char)(q[1] << 4 | q[2] >> 2);
            out[n + 2] = (unsigned char)(q[2] << 6 | q[3]);
        }
        n += 3;
    }
}

long sk_typed_base64_len(const char *s)
{
    size_t bad_at;
    return b64_decode(s, NULL, &bad_at);
}

unsigned char *sk_typed_base64_decode(const char *s, size_t *n_out)
{
    size_t bad_at;
    unsigned char *out = malloc(strlen(s) * 3 / 4 + 4);
    SK_CHECK_ALLOC(out);
    long n = b64_decode(s, out, &bad_at);
    if (n < 0) {
        free(out);
        return NULL;
    }
    out[n] = 0;
    *n_out = (size_t)n;
    return out;
}

static json_t *b64_encode(const unsigned char *in, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    sk_buf b = SK_BUF_INIT;
    sk_buf_reserve(&b, (n + 2) / 3 * 4 + 1);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        sk_buf_putc(&b, tab[v >> 18 & 63]);
        sk_buf_putc(&b, tab[v >> 12 & 63]);
        sk_buf_putc(&b, i + 1 < n ? tab[v >> 6 & 63] : '=');
        sk_buf_putc(&b, i + 2 < n ? tab[v & 63] : '=');
    }
    json_t *s = json_stringn(b.data ? b.data : "", b.len);
    SK_CHECK_ALLOC(s);
    sk_buf_free(&b);
    return s;
}

/* ---- times (metav1.Time: RFC3339; MicroTime: RFC3339 with 6 digits) ----- */

#define TIME_LAYOUT "2006-01-02T15:04:05Z07:00"
#define MICRO_LAYOUT "2006-01-02T15:04:05.000000Z07:00"

/* time.ParseError text: a range error if range is set, else "cannot parse
 * <rest> as <elem>" (new string). */
static char *time_error(const char *layout, const char *v, const char *rest, const char *elem,
                        const char *range)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_puts(&b, "parsing time ");
    sk_buf_go_quoted(&b, v);
    if (range) {
        sk_buf_printf(&b, ": %s out of range", range);
    } else {
        sk_buf_printf(&b, " as \"%s\": cannot parse ", layout);
        sk_buf_go_quoted(&b, rest);
        sk_buf_printf(&b, " as \"%s\"", elem);
    }
    return sk_buf_steal(&b, NULL);
}


/* v's last n decimal digits at p (v >= 0). */
static void put_digits(char *p, int64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v /= 10)
        p[i] = (char)('0' + v % 10);
}

/*
 * time.Parse(layout, v) for the two layouts: micro requires exactly six
 * fractional digits; RFC3339 takes any fraction after the seconds (Go
 * accepts one there even when the layout has none). NULL and *canon (new,
 * UTC, as MarshalJSON writes it) on success, else the ParseError (new).
 */
static char *parse_time(const char *v, int micro, char **canon)
{
    static const struct {
        const char *elem;
        char lead;
        int digits, lo, hi;
        const char *range;
    } layout[] = {
        {"2006", 0, 4, 0, 9999, NULL}, {"-", '-', 0, 0, 0, NULL},     {"01", 0, 2, 1, 12, "month"},
        {"-", '-', 0, 0, 0, NULL},     {"02", 0, 2, 1, 31, "day"},    {"T", 'T', 0, 0, 0, NULL},
        {"15", 0, 2, 0, 23, "hour"},   {":", ':', 0, 0, 0, NULL},     {"04", 0, 2, 0, 59, "minute"},
        {":", ':', 0, 0, 0, NULL},     {"05", 0, 2, 0, 59, "second"},
    };
    const char *lay = micro ? MICRO_LAYOUT : TIME_LAYOUT;
    int f[sizeof layout / sizeof layout[0]];
    const char *p = v;
    long usec = 0;
    for (size_t i = 0; i < sizeof layout / sizeof layout[0]; i++) {
        const char *start = p;
        int val = 0;
        if (layout[i].lead && *p++ != layout[i].lead)
            return time_error(lay, v, start, layout[i].elem, NULL);
        for (int d = 0; d < layout[i].digits; d++, p++) {
            if (*p < '0' || *p > '9')
                return time_error(lay, v, start, layout[i].elem, NULL);
            val = val * 10 + (*p - '0');
        }
        if (layout[i].range && (val < layout[i].lo || val > layout[i].hi))
            return time_error(lay, v, NULL, NULL, layout[i].range);
        f[i] = val;
    }
    if (micro) {
        const char *start = p;
        if (*p++ != '.')
            return time_error(lay, v, start, ".000000", NULL);
        for (int d = 0; d < 6; d++, p++) {
            if (*p < '0' || *p > '9')
                return time_error(lay, v, start, ".000000", NULL);
            usec = usec * 10 + (*p - '0');
        }
    } else if (*p == '.' && isdigit((unsigned char)p[1])) {
        long scale = 100000;
        for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
            usec += scale * (*p - '0');
    }
    int off = 0;
    if (strcmp(p, "Z") != 0) {
        int ok = (p[0] == '+' || p[0] == '-') && isdigit((unsigned char)p[1]) &&
                 isdigit((unsigned char)p[2]) && p[3] == ':' && isdigit((unsigned char)p[4]) &&
                 isdigit((unsigned char)p[5]) && p[6] == '\0';
        if (!ok)
            return time_error(lay, v, p, "Z07:00", NULL);
        off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 + ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
        if (p[0] == '-')
            off = -off;
    }
    if (f[4] > sk_civil_days_in_month(f[0], f[2]))
        return time_error(lay, v, NULL, NULL, "day");
    int64_t secs =
        sk_civil_days_from(f[0], f[2], f[4]) * 86400 + f[6] * 3600 + f[8] * 60 + f[10] - off;
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t rem = secs - days * 86400, y;
    int m, d;
    sk_civil_from_days(days, &y, &m, &d);
    sk_buf b = SK_BUF_INIT;
    if (y >= 0 && y <= 9999) {
        /* every object's creationTimestamp comes here: without printf */
        char t[sizeof "2006-01-02T15:04:05.000000Z"];
        put_digits(t, y, 4);
        t[4] = '-';
        put_digits(t + 5, m, 2);
        t[7] = '-';
        put_digits(t + 8, d, 2);
        t[10] = 'T';
        put_digits(t + 11, rem / 3600, 2);
        t[13] = ':';
        put_digits(t + 14, rem / 60 % 60, 2);
        t[16] = ':';
        put_digits(t + 17, rem % 60, 2);
        size_t n = 19;
        if (micro) {
            t[n++] = '.';
            put_digits(t + n, usec, 6);
            n += 6;
        }
        sk_buf_append(&b, t, n);
    } else {
        sk_buf_printf(&b, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d", y, m, d, (int)(rem / 3600),
                      (int)(rem / 60 % 60), (int)(rem % 60));
        if (micro)
            sk_buf_printf(&b, ".%06ld", usec);
    }
    sk_buf_putc(&b, 'Z');
    *canon = sk_buf_steal(&b, NULL);
    return NULL;
}

/* ---- quantities (k8s.io/apimachinery/pkg/api/resource; syntax: core) ---- */

typedef unsigned __int128 u128;

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static void put_u128(sk_buf *b, int negative, u128 v)
{
    char tmp[48];
    size_t n = sizeof tmp;
    tmp[--n] = '\0';
    do {
        tmp[--n] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    if (negative)
        tmp[--n] = '-';
    sk_buf_puts(b, tmp + n);
}

static const u128 U128_MAX = ~(u128)0;

/* CanonicalizeBytes of sign * u * 10^e in format fmt (new string). */
static char *q_canonical(int negative, u128 u, int e, sk_quantity_format fmt)
{
    sk_buf b = SK_BUF_INIT;
    if (u == 0) {
        sk_buf_puts(&b, "0");
        goto out;
    }
    if (fmt == SK_QUANTITY_BINARY_SI) {
        /* Exact integer value, if any, and below 1024 in magnitude? */
        u128 v = u;
        int exact = 1;
        for (int i = e; i < 0 && exact; i++) {
            exact = v % 10 == 0;
            v /= 10;
        }
        for (int i = 0; i < e && exact; i++) {
            exact = v <= U128_MAX / 10;
            v *= 10;
        }
        int small = exact ? v < 1024 : 0;
        if (!exact || small) {
            /* |q| < 1024 with a fraction is small too: it shows as decimal. */
            fmt = SK_QUANTITY_DECIMAL_SI;
        } else {
            static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
            int k = 0;
            while (v >= 1024 && v % 1024 == 0 && k < 6) {
                v /= 1024;
                k++;
            }
            put_u128(&b, negative, v);
            sk_buf_puts(&b, bin[k]);
            goto out;
        }
    }
    while (u % 10 == 0) {
        u /= 10;
        e++;
    }
    while (((e % 3) + 3) % 3 != 0) {
        u *= 10;
        e--;
    }
    put_u128(&b, negative, u);
    if (fmt == SK_QUANTITY_DECIMAL_EXPONENT) {
        if (e != 0)
            sk_buf_printf(&b, "e%d", e);
    } else {
        static const char *const dec[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
        if (e >= -9 && e <= 18)
            sk_buf_puts(&b, dec[(e + 9) / 3]);
    }
out:
    return sk_buf_steal(&b, NULL);
}

static char *dup_str(const char *s)
{
    char *d = strdup(s);
    SK_CHECK_ALLOC(d);
    return d;
}

/* q's value * base^exp as *u * 10^*e10, rounded up to 1n as inf.Dec is,
 * and the format it prints in (*fmt updated). 0 when it has more digits
 * than a u128 holds: Go keeps such a string as it was sent. */
static int q_exact(const sk_quantity_parts *q, int base, int exp, sk_quantity_format *fmt,
                   u128 *u_out, int *e10_out)
{
    u128 u = 0;
    int e10 = -(int)q->denom_len, digits = 0;
    for (size_t i = 0; i < q->value_len; i++) {
        char c = q->value[i];
        if (!is_digit(c) || (u == 0 && c == '0'))
            continue; /* sign, point, leading zeros */
        if (++digits > 36)
            return 0;
        u = u * 10 + (u128)(c - '0');
    }
    if (base == 10) {
        e10 += exp;
    } else {
        for (int i = 0; i < exp; i++) {
            if (u > U128_MAX / 2)
                return 0;
            u *= 2;
        }
    }
    if (u != 0 && e10 < -9) {
        int rest = 0;
        while (e10 < -9) {
            rest |= u % 10 != 0;
            u /= 10;
            e10++;
        }
        u += rest;
    }
    if (*fmt == SK_QUANTITY_BINARY_SI) {
        /* Capped at the largest int64; between 0 and 1 it is decimal. */
        u128 whole = u;
        for (int i = e10; i < 0; i++)
            whole /= 10;
        int big = 0;
        for (int i = 0; i < e10 && !big; i++) {
            big = whole > (u128)INT64_MAX;
            whole *= 10;
        }
        if (big || whole > (u128)INT64_MAX) {
            u = (u128)INT64_MAX;
            e10 = 0;
        } else if (whole == 0 && u != 0) {
            *fmt = SK_QUANTITY_DECIMAL_SI;
        }
    }
    *u_out = u;
    *e10_out = e10;
    return 1;
}

sk_err sk_typed_quantity(const char *s, char **out, const char **err)
{
    sk_quantity_parts q;
    int base, exp;
    sk_quantity_format fmt;
    const char *e = NULL;
    if (!*s) {
        e = sk_quantity_err_format;
        goto fail;
    }
    if (strcmp(s, "0") == 0) {
        *out = dup_str(s);
        return SK_OK;
    }
    if ((e = sk_quantity_split(s, &q)) != NULL)
        goto fail;
    if (!sk_quantity_suffix(q.suffix, q.suffix_len, &base, &exp, &fmt)) {
        e = sk_quantity_err_suffix;
        goto fail;
    }
    /* The int64 fast path, whose results Go may keep as the input string. */
    int precision = 0, scale = 0;
    int64_t mantissa = 1;
    if (fmt == SK_QUANTITY_BINARY_SI) {
        if (exp >= 0 && q.denom_len == 0) {
            mantissa = (int64_t)1 << exp;
            precision = 15 - (int)q.num_len - (int)((float)exp * 3 / 10) - 1;
        } else {
            precision = -1;
        }
    } else {
        scale = exp;
        precision = 18 - (int)(q.num_len + q.denom_len);
    }
    if (precision >= 0 && scale - (int)q.denom_len >= -9) {
        scale -= (int)q.denom_len;
        char shifted[40];
        snprintf(shifted, sizeof shifted, "%.*s%.*s", (int)q.num_len, q.num, (int)q.denom_len,
                 q.denom ? q.denom : "");
        u128 value = 0;
        for (const char *p = shifted; *p; p++)
            value = value * 10 + (u128)(*p - '0');
        u128 result = value * (u128)mantissa;
        if (result <= (u128)INT64_MAX) {
            size_t sl = strlen(shifted);
            int keep = fmt == SK_QUANTITY_BINARY_SI
                           ? exp % 10 == 0 && (value & 7) != 0
                           : scale % 3 == 0 && !(sl >= 3 && strcmp(shifted + sl - 3, "000") == 0) &&
                                 shifted[0] != '0';
            *out = keep ? dup_str(s) : q_canonical(!q.positive, result, scale, fmt);
            return SK_OK;
        }
    }
    /* The arbitrary-precision path: value * base^exp, rounded up to 1n. */
    /* inf.Dec.SetString fails on a value of no digits or ending in '.'. */
    if (q.value_len == 0 || q.value[q.value_len - 1] == '.') {
        e = sk_quantity_err_numeric;
        goto fail;
    }
    u128 u;
    int e10;
    *out =
        q_exact(&q, base, exp, &fmt, &u, &e10) ? q_canonical(!q.positive, u, e10, fmt) : dup_str(s);
    return SK_OK;
fail:
    *err = e;
    return SK_ERR_BAD_REQUEST;
}

char *sk_typed_quantity_round_up_milli(const char *s)
{
    sk_quantity_parts q;
    int base, exp, e10, rest = 0;
    sk_quantity_format fmt;
    u128 u;
    if (sk_quantity_split(s, &q) ||
        !sk_quantity_suffix(q.suffix, q.suffix_len, &base, &exp, &fmt) || q.value_len == 0 ||
        q.value[q.value_len - 1] == '.' || !q_exact(&q, base, exp, &fmt, &u, &e10))
        return NULL;
    while (e10 < -3) {
        rest |= u % 10 != 0;
        u /= 10;
        e10++;
    }
    return rest ? q_canonical(!q.positive, u + 1, e10, fmt) : NULL;
}

/* ---- the walker ---------------------------------------------------------- */

static json_t *convert(walk *w, const sk_schema *s, const json_t *v, const char *in_struct);

/* The JSON encoding of s's Go zero value. */
static json_t *zero_of(walk *w, const sk_schema *s, const char *in_struct)
{
    switch (sk_schema_kind_of(s)) {
    case SK_SCHEMA_STRING:
        return json_string("");
    case SK_SCHEMA_BOOL:
        return json_false();
    case SK_SCHEMA_INT32:
    case SK_SCHEMA_INT64:
    case SK_SCHEMA_DOUBLE:
    case SK_SCHEMA_INT_OR_STRING:
        return json_integer(0);
    case SK_SCHEMA_QUANTITY:
        return json_string("0");
    case SK_SCHEMA_STRUCT:
        return convert(w, s, NULL, in_struct);
    default: /* nil slices, maps, []byte; zero times; empty raw values */
        return json_null();
    }
}

/* Whether s's Go zero value is empty to omitempty, so that an omitempty
 * field left out of the body is left out of the result without building
 * its zero value first (most of ObjectMeta's fields in most bodies). */
static int zero_is_empty(const sk_schema *s)
{
    switch (sk_schema_kind_of(s)) {
    case SK_SCHEMA_STRING:
    case SK_SCHEMA_BYTES:
    case SK_SCHEMA_BOOL:
    case SK_SCHEMA_INT32:
    case SK_SCHEMA_INT64:
    case SK_SCHEMA_DOUBLE:
    case SK_SCHEMA_ARRAY:
    case SK_SCHEMA_MAP:
        return 1;
    default: /* structs, times, quantities, IntOrString, raw values */
        return 0;
    }
}

/* Go's isEmptyValue for what was encoded. */
static int is_empty(const sk_schema *s, const json_t *v)
{
    switch (sk_schema_kind_of(s)) {
    case SK_SCHEMA_STRING:
        return json_string_length(v) == 0;
    case SK_SCHEMA_BYTES:
        return json_is_null(v) || json_string_length(v) == 0;
    case SK_SCHEMA_BOOL:
        return json_is_false(v);
    case SK_SCHEMA_INT32:
    case SK_SCHEMA_INT64:
    case SK_SCHEMA_DOUBLE:
        return json_number_value(v) == 0;
    case SK_SCHEMA_ARRAY:
        return json_is_null(v) || json_array_size(v) == 0;
    case SK_SCHEMA_MAP:
        return json_is_null(v) || json_object_size(v) == 0;
    default: /* structs are never empty */
        return 0;
    }
}

static void push(walk *w, const char *name, size_t *mark)
{
    *mark = w->path.len;
    if (w->path.len)
        sk_buf_putc(&w->path, '.');
    sk_buf_puts(&w->path, name);
}

static void pop(walk *w, size_t mark)
{
    w->path.len = mark;
    w->path.data[mark] = '\0';
}

static json_t *convert_struct(walk *w, const sk_schema *s, const json_t *v)
{
    json_t *out = json_object();
    SK_CHECK_ALLOC(out);
    const char *me = struct_word(sk_schema_go_type(s));
    size_t n = sk_schema_field_count(s);
    for (size_t i = 0; i < n && !w->fatal; i++) {
        const sk_schema_field *f = sk_schema_field_at(s, i);
        const char *name = sk_schema_field_name(f);
        const sk_schema *t = sk_schema_field_type(f);
        unsigned flags = sk_schema_field_flags(f);
        /* TypeMeta's kind/apiVersion: inline, omitempty, not on the protobuf wire. */
        int omit = (flags & SK_FIELD_OMITEMPTY) ||
                   (sk_schema_field_number(f) == 0 &&
                    (strcmp(name, "kind") == 0 || strcmp(name, "apiVersion") == 0));
        const json_t *in = v ? json_object_get(v, name) : NULL;
        json_t *val;
        size_t mark;
        if ((!in || json_is_null(in)) && omit && !(flags & SK_FIELD_POINTER) && zero_is_empty(t))
            continue;
        push(w, name, &mark);
        if (flags & SK_FIELD_POINTER) {
            if (!in || json_is_null(in)) {
                pop(w, mark);
                if (!omit)
                    json_object_set_new(out, name, json_null());
                continue;
            }
            val = convert(w, t, in, me);
        } else {
            val = in && !json_is_null(in) ? convert(w, t, in, me) : zero_of(w, t, me);
        }
        pop(w, mark);
        if (omit && !(flags & SK_FIELD_POINTER) && is_empty(t, val))
            json_decref(val);
        else
            SK_CHECK(json_object_set_new(out, name, val) == 0);
    }
    return out;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *convert_int(walk *w, const sk_schema *s, const json_t *v, const char *in_struct,
                           int stop_on_error)
{
    int is32 = sk_schema_kind_of(s) != SK_SCHEMA_INT64;
    const char *go = is32 ? "int32" : sk_schema_go_type(s);
    if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);
        if (!is32 || (n >= INT32_MIN && n <= INT32_MAX))
            return json_integer(n);
    }
    sk_buf word = SK_BUF_INIT;
    if (json_is_number(v)) {
        sk_buf_puts(&word, "number ");
        if (json_is_integer(v))
            sk_buf_printf(&word, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else
            put_real(&word, json_real_value(v));
    } else {
        sk_buf_puts(&word, sk_typed_go_kind(v));
    }
    char *msg = type_error(w, word.data, in_struct, go);
    sk_buf_free(&word);
    if (stop_on_error) {
        stop(w, msg);
    } else {
        note_restore(w, v, s);
        save(w, msg);
    }
    return json_integer(0);
}

/* The raw JSON text Go hands a self-decoding type, unquoted for strings. */
static char *raw_text(const json_t *v)
{
    if (json_is_string(v))
        return dup_str(json_string_value(v));
    if (json_is_real(v)) {
        sk_buf b = SK_BUF_INIT;
        put_real(&b, json_real_value(v));
        return sk_buf_steal(&b, NULL);
    }
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    SK_CHECK_ALLOC(t);
    return t;
}

static json_t *convert(walk *w, const sk_schema *s, const json_t *v, const char *in_struct)
{
    json_t *out = NULL;
    if (w->fatal)
        return json_null();
    if (v && json_is_null(v))
        return zero_of(w, s, in_struct);
    switch (sk_schema_kind_of(s)) {
    case SK_SCHEMA_STRUCT:
        if (v && !json_is_object(v)) {
            mismatch(w, v, in_struct, s);
            v = NULL;
        }
        return convert_struct(w, s, v);
    case SK_SCHEMA_STRING:
        if (json_is_string(v))
            return json_incref((json_t *)v);
        mismatch(w, v, in_struct, s);
        return json_string("");
    case SK_SCHEMA_BOOL:
        if (json_is_boolean(v))
            return json_incref((json_t *)v);
        mismatch(w, v, in_struct, s);
        return json_false();
    case SK_SCHEMA_INT32:
    case SK_SCHEMA_INT64:
        return convert_int(w, s, v, in_struct, 0);
    case SK_SCHEMA_DOUBLE:
        /* Go prints a whole float64 without a fraction: integers stay integers. */
        if (json_is_number(v))
            return json_incref((json_t *)v);
        mismatch(w, v, in_struct, s);
        return json_integer(0);
    case SK_SCHEMA_BYTES: {
        if (!json_is_string(v)) {
            mismatch(w, v, in_struct, s);
            return json_null();
        }
        const char *str = json_string_value(v);
        unsigned char *buf = malloc(strlen(str) / 4 * 3 + 4);
        SK_CHECK_ALLOC(buf);
        size_t bad_at = 0;
        long n = b64_decode(str, buf, &bad_at);
        if (n < 0) {
            sk_buf b = SK_BUF_INIT;
            sk_buf_printf(&b, "illegal base64 data at input byte %zu", bad_at);
            save(w, sk_buf_steal(&b, NULL));
            out = json_string("");
        } else {
            out = b64_encode(buf, (size_t)n);
        }
        free(buf);
        return out;
    }
    case SK_SCHEMA_ARRAY: {
        if (!json_is_array(v)) {
            mismatch(w, v, in_struct, s);
            return json_null();
        }
        out = json_array();
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x)
        {
            SK_CHECK(json_array_append_new(out, convert(w, sk_schema_elem(s), x, in_struct)) == 0);
        }
        return out;
    }
    case SK_SCHEMA_MAP: {
        if (!json_is_object(v)) {
            mismatch(w, v, in_struct, s);
            return json_null();
        }
        size_t n = json_object_size(v), k = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        SK_CHECK_ALLOC(keys);
        const char *key;
        const json_t *x;
        json_object_foreach((json_t *)v, key, x) keys[k++] = key;
        qsort(keys, n, sizeof *keys, by_key);
        out = json_object();
        for (k = 0; k < n; k++)
            json_object_set_new(
                out, keys[k],
                convert(w, sk_schema_elem(s), json_object_get(v, keys[k]), in_struct));
        free(keys);
        return out;
    }
    case SK_SCHEMA_TIME:
    case SK_SCHEMA_MICROTIME: {
        char *canon = NULL, *err;
        if (!json_is_string(v)) {
            /* Time.UnmarshalJSON decodes a string first; the decoder names the field. */
            stop(w, type_error(w, sk_typed_go_kind(v), in_struct, "string"));
            return json_null();
        }
        err = parse_time(json_string_value(v), sk_schema_kind_of(s) == SK_SCHEMA_MICROTIME, &canon);
        if (err) {
            stop(w, err);
            return json_null();
        }
        out = json_string(canon);
        free(canon);
        return out;
    }
    case SK_SCHEMA_QUANTITY: {
        char *text = raw_text(v), *canon = NULL;
        /* UnmarshalJSON trims surrounding space (strings.TrimSpace). */
        char *start = text, *end = text + strlen(text);
        while (*start && isspace((unsigned char)*start))
            start++;
        while (end > start && isspace((unsigned char)end[-1]))
            *--end = '\0';
        const char *qerr = NULL;
        if (sk_typed_quantity(start, &canon, &qerr) != SK_OK) {
            stop(w, dup_str(qerr));
            out = json_string("0");
        } else {
            out = json_string(canon);
            free(canon);
        }
        free(text);
        return out;
    }
    case SK_SCHEMA_INT_OR_STRING:
        if (json_is_string(v))
            return json_incref((json_t *)v);
        return convert_int(w, s, v, in_struct, 1);
    default: /* RawExtension, FieldsV1: any JSON, kept */
        return json_deep_copy(v);
    }
}

static char *decode_error(const sk_resource *r, const char *detail)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, "%s in version \"%s\" cannot be handled as a %s: %s", r->kind, r->version,
                  r->kind, detail);
    return sk_buf_steal(&b, NULL);
}

sk_err sk_typed_normalize(const sk_resource *r, const json_t *obj, json_t **out, char **msg)
{
    sk_err err = SK_OK;
    walk w = {NULL, NULL, NULL, SK_BUF_INIT};
    sk_buf_reserve(&w.path, 0);
    json_t *res;
    if (r->custom) {
        /* A custom resource decodes as unstructured JSON but for its
         * ObjectMeta, which is typed (kube/structural prunes the rest). */
        const sk_schema *meta = sk_schema_named("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
        res = json_deep_copy(obj);
        SK_CHECK_ALLOC(res);
        const json_t *m = json_object_get(obj, "metadata");
        if (json_is_object(m)) {
            push(&w, "metadata", &(size_t){0});
            json_object_set_new(res, "metadata", convert(&w, meta, m, "ObjectMeta"));
        }
    } else {
        res = convert(&w, r->schema, obj, struct_word(sk_schema_go_type(r->schema)));
    }
    const char *bad = w.fatal ? w.fatal : w.saved;
    if (bad) {
        *msg = decode_error(r, bad);
        err = SK_ERR_BAD_REQUEST;
        json_decref(res);
    } else {
        *out = res;
    }
    free(w.fatal);
    free(w.saved);
    free(w.restore);
    sk_buf_free(&w.path);
    return err;
}

sk_err sk_typed_normalize_value(const sk_schema *s, const json_t *v, json_t **out, char **msg)
{
    sk_err err = SK_OK;
    walk w = {NULL, NULL, NULL, SK_BUF_INIT};
    json_t *res = NULL;
    if (sk_schema_kind_of(s) == SK_SCHEMA_STRUCT && !json_is_object(v) && !json_is_null(v)) {
        sk_buf b = SK_BUF_INIT;
        sk_buf_printf(&b, "json: cannot unmarshal %s into Go value of type %s", sk_typed_go_kind(v),
                      sk_schema_go_type(s));
        *msg = sk_buf_steal(&b, NULL);
        return SK_ERR_BAD_REQUEST;
    }
    sk_buf_reserve(&w.path, 0);
    res = convert(&w, s, v, struct_word(sk_schema_go_type(s)));
    const char *bad = w.fatal ? w.fatal : w.saved;
    if (bad) {
        *msg = strdup(bad);
        SK_CHECK_ALLOC(*msg);
        err = SK_ERR_BAD_REQUEST;
        json_decref(res);
    } else {
        *out = res;
    }
    free(w.fatal);
    free(w.saved);
    free(w.restore);
    sk_buf_free(&w.path);
    return err;
}

sk_err sk_typed_check(const sk_resource *r, const json_t *obj, char **msg)
{
    json_t *out = NULL;
    sk_err err = sk_typed_normalize(r, obj, &out, msg);
    json_decref(out);
    return err;
}

sk_err sk_typed_restore_error(const sk_resource *r, const json_t *obj, char **msg)
{
    sk_err err = SK_OK;
    walk w = {NULL, NULL, NULL, SK_BUF_INIT};
    sk_buf_reserve(&w.path, 0);
    if (!r->custom)
        json_decref(convert(&w, r->schema, obj, struct_word(sk_schema_go_type(r->schema))));
    if (w.restore) {
        *msg = w.restore;
        w.restore = NULL;
        err = SK_ERR_INVALID;
    }
    free(w.fatal);
    free(w.saved);
    sk_buf_free(&w.path);
    return err;
}

const char *sk_typed_go_type_name(const json_t *v)
{
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_OBJECT:
        return "map[string]interface {}";
    case JSON_ARRAY:
        return "[]interface {}";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "int64";
    case JSON_REAL:
        return "float64";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    default:
        return "<nil>";
    }
}

/* %v (verb_s 0) or %s of v: %s prints strings alone and other scalars as
 * %!s(TYPE=VALUE); a nil inside a map or list is <nil> either way. */
static void go_print(sk_buf *b, const json_t *v, int verb_s)
{
    size_t i, n;
    const char *key;
    json_t *x;
    if (verb_s && v && !json_is_object(v) && !json_is_array(v) && !json_is_string(v) &&
        !json_is_null(v)) {
        sk_buf_printf(b, "%%!s(%s=", sk_typed_go_type_name(v));
        go_print(b, v, 0);
        sk_buf_putc(b, ')');
        return;
    }
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_OBJECT: {
        /* fmt prints a map's keys sorted */
        const char **keys = malloc((json_object_size(v) + 1) * sizeof *keys);
        SK_CHECK_ALLOC(keys);
        n = 0;
        json_object_foreach((json_t *)v, key, x) keys[n++] = key;
        qsort(keys, n, sizeof *keys, by_key);
        sk_buf_puts(b, "map[");
        for (i = 0; i < n; i++) {
            sk_buf_printf(b, "%s%s:", i ? " " : "", keys[i]);
            go_print(b, json_object_get(v, keys[i]), verb_s);
        }
        sk_buf_putc(b, ']');
        free(keys);
        break;
    }
    case JSON_ARRAY:
        sk_buf_putc(b, '[');
        json_array_foreach(v, i, x)
        {
            if (i)
                sk_buf_putc(b, ' ');
            go_print(b, x, verb_s);
        }
        sk_buf_putc(b, ']');
        break;
    case JSON_STRING:
        sk_buf_append(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        sk_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        sk_buf_go_float(b, json_real_value(v));
        break;
    case JSON_TRUE:
        sk_buf_puts(b, "true");
        break;
    case JSON_FALSE:
        sk_buf_puts(b, "false");
        break;
    default:
        sk_buf_puts(b, "<nil>");
        break;
    }
}

void sk_typed_go_print(sk_buf *b, const json_t *v)
{
    go_print(b, v, 0);
}

void sk_typed_go_print_s(sk_buf *b, const json_t *v)
{
    go_print(b, v, 1);
}

/* ---- encoding/json's syntax errors (scanner.go) -------------------------- */

/* quoteChar: how the scanner names the byte it refused. */
static void go_quote_char(sk_buf *b, unsigned char c)
{
    static const char short_esc[] = "\a\b\f\n\r\t\v";
    static const char short_name[] = "abfnrtv";
    const char *e = c ? strchr(short_esc, c) : NULL;
    sk_buf_putc(b, '\'');
    if (c == '\'')
        sk_buf_puts(b, "\\'");
    else if (e)
        sk_buf_printf(b, "\\%c", short_name[e - short_esc]);
    else if (c < 0x20 || c == 0x7f)
        sk_buf_printf(b, "\\x%02x", c);
    else if (c == '\\')
        sk_buf_puts(b, "\\\\");
    else if (c < 0x80)
        sk_buf_putc(b, (char)c);
    else if (c <= 0xa0 || c == 0xad) /* string(c) is U+00XX: not printable */
        sk_buf_printf(b, "\\u%04x", c);
    else
        sk_buf_printf(b, "%c%c", (char)(0xc0 | (c >> 6)), (char)(0x80 | (c & 0x3f)));
    sk_buf_putc(b, '\'');
}

static int go_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

#define GO_MAX_DEPTH 10000 /* the scanner's maxNestingDepth */

/* Where the scanner is between values: the states that decide what may
 * come next. */
enum { GS_VALUE, GS_VALUE_OR_CLOSE, GS_KEY, GS_KEY_OR_CLOSE, GS_END };

char *sk_typed_go_syntax_error(const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    char *stack = malloc(GO_MAX_DEPTH); /* '{' or '[' per open container */
    size_t depth = 0;
    int state = GS_VALUE;
    const char *why = NULL;
    char literal[48];
    unsigned char bad = 0;
    SK_CHECK_ALLOC(stack);
    while (p < end && !why) {
        unsigned char c = *p;
        if (go_space(c)) {
            p++;
            continue;
        }
        if (state == GS_END) {
            if (depth == 0) {
                why = "after top-level value";
            } else if (stack[depth - 1] == ':') {
                /* a key just ended */
                if (c == ':') {
                    stack[depth - 1] = '{';
                    state = GS_VALUE;
                } else {
                    why = "after object key";
                }
            } else if (c == ',') {
                state = stack[depth - 1] == '{' ? GS_KEY : GS_VALUE;
            } else if (c == (stack[depth - 1] == '{' ? '}' : ']')) {
                depth--;
            } else {
                why =
                    stack[depth - 1] == '{' ? "after object key:value pair" : "after array element";
            }
            if (!why)
                p++;
            else
                bad = c;
            continue;
        }
        if ((state == GS_VALUE_OR_CLOSE && c == ']') || (state == GS_KEY_OR_CLOSE && c == '}')) {
            depth--;
            state = GS_END;
            p++;
            continue;
        }
        if ((state == GS_KEY || state == GS_KEY_OR_CLOSE) && c != '"') {
            why = "looking for beginning of object key string";
            bad = c;
            continue;
        }
        if (c == '{' || c == '[') {
            if (depth == GO_MAX_DEPTH) {
                why = "exceeded max depth";
                break;
            }
            stack[depth++] = (char)c;
            state = c == '{' ? GS_KEY_OR_CLOSE : GS_VALUE_OR_CLOSE;
            p++;
            continue;
        }
        int is_key = state == GS_KEY || state == GS_KEY_OR_CLOSE;
        if (c == '"') {
            for (p++; p < end && *p != '"' && !why; p++) {
                if (*p < 0x20) {
                    why = "in string literal";
                } else if (*p == '\\') {
                    if (++p == end)
                        break;
                    if (*p == 'u') {
                        for (int i = 0; i < 4 && !why && ++p < end; i++)
                            if (!isxdigit(*p))
                                why = "in \\u hexadecimal character escape";
                        if (p == end)
                            break;
                    } else if (!strchr("bfnrt\\/\"", *p) || !*p) {
                        why = "in string escape code";
                    }
                }
                if (why)
                    bad = *p;
            }
            if (why || p == end)
                break;
            p++;
            if (is_key)
                stack[depth - 1] = ':';
            state = GS_END;
            continue;
        }
        if (c == 't' || c == 'f' || c == 'n') {
            const char *word = c == 't' ? "true" : c == 'f' ? "false" : "null";
            size_t i = 1;
            for (p++; word[i] && p < end && *p == (unsigned char)word[i]; p++)
                i++;
            if (word[i] && p < end) {
                snprintf(literal, sizeof literal, "in literal %s (expecting '%c')", word, word[i]);
                why = literal;
                bad = *p;
            } else if (!word[i]) {
                state = GS_END;
                continue;
            }
            break;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            /* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
            if (c == '-' && (++p == end || !isdigit(*p))) {
                why = p == end ? NULL : "in numeric literal";
                if (p < end)
                    bad = *p;
                break;
            }
            if (*p++ != '0')
                while (p < end && isdigit(*p))
                    p++;
            if (p < end && *p == '.') {
                if (++p == end || !isdigit(*p)) {
                    why = p == end ? NULL : "after decimal point in numeric literal";
                    if (p < end)
                        bad = *p;
                    break;
                }
                while (p < end && isdigit(*p))
                    p++;
            }
            if (p < end && (*p == 'e' || *p == 'E')) {
                if (++p < end && (*p == '+' || *p == '-'))
                    p++;
                if (p == end || !isdigit(*p)) {
                    why = p == end ? NULL : "in exponent of numeric literal";
                    if (p < end)
                        bad = *p;
                    break;
                }
                while (p < end && isdigit(*p))
                    p++;
            }
            state = GS_END;
            continue;
        }
        why = "looking for beginning of value";
        bad = c;
    }
    free(stack);
    sk_buf b = SK_BUF_INIT;
    if (why && !strcmp(why, "exceeded max depth")) {
        sk_buf_puts(&b, why);
    } else if (why) {
        sk_buf_puts(&b, "invalid character ");
        go_quote_char(&b, bad);
        sk_buf_printf(&b, " %s", why);
    } else if (state != GS_END || depth > 0 || p < end) {
        sk_buf_puts(&b, "unexpected end of JSON input");
    }
    return b.data ? sk_buf_steal(&b, NULL) : NULL;
}
