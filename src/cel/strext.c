/*
 * strext.c - the strings extension (strext.h), function by function as
 * cel-go v0.22's ext/strings.go behaves, with Go's strings.Replace,
 * SplitN and TrimSpace underneath.
 *
 * Strings are UTF-8 (value.h), so a byte-level match of one string in
 * another always starts and ends on code points: searches run on bytes
 * (glibc's memmem, linear) and only positions are converted to code point
 * indices. lastIndexOf searches the reversed bytes for the same reason,
 * so it is linear too rather than a backwards scan of every position.
 */
#include "cel/strext.h"
#include "cel/time.h"
#include "core/utf8.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const sk_cel_val *no_overload(sk_arena *a)
{
    return sk_cel_error(a, "no such overload");
}

/* Adds units to w; 0 once that passes its limit (the evaluator then
 * stops with its step-limit error). */
static int spend(sk_cel_work *w, uint64_t units)
{
    w->done += units;
    return w->done <= w->limit;
}

static const sk_cel_val *over_budget(sk_arena *a)
{
    return sk_cel_error(a, "evaluation step limit exceeded");
}

static int is_str(const sk_cel_val *v)
{
    return v->type == SK_CEL_V_STRING;
}

static int is_int(const sk_cel_val *v)
{
    return v->type == SK_CEL_V_INT;
}

static size_t runes(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* The byte offset of code point k (k <= the string's code points). */
static size_t byte_at(const char *s, size_t len, size_t k)
{
    size_t i = 0;
    for (; i < len && k > 0; k--)
        for (i++; i < len && ((unsigned char)s[i] & 0xC0) == 0x80; i++)
            ;
    return i;
}

/* The length of the character at s[i] (an invalid byte is one, as in
 * Go's []rune). */
static size_t rune_len(const char *s, size_t len, size_t i)
{
    uint32_t cp;
    return sk_utf8_decode(s + i, len - i, &cp);
}

static const sk_cel_val *string_of(sk_arena *a, const char *s, size_t len)
{
    return sk_cel_string(a, sk_arena_strndup(a, s, len), len);
}

static const sk_cel_val *out_of_range(sk_arena *a, int64_t i)
{
    return sk_cel_error(a, "index out of range: %lld", (long long)i);
}

static const sk_cel_val *char_at(sk_arena *a, const sk_cel_val *s, int64_t i)
{
    size_t n = runes(s->u.str.s, s->u.str.len);
    if (i < 0 || (uint64_t)i > n)
        return out_of_range(a, i);
    size_t b = byte_at(s->u.str.s, s->u.str.len, (size_t)i);
    return string_of(a, s->u.str.s + b,
                     (uint64_t)i == n ? 0 : rune_len(s->u.str.s, s->u.str.len, b));
}

/* indexOf(t, off): cel-go's indexOfOffset; off is a code point index. */
static const sk_cel_val *index_of(sk_arena *a, const sk_cel_val *s, const sk_cel_val *t,
                                  int64_t off)
{
    if (t->u.str.len == 0)
        return sk_cel_int(a, off);
    size_t n = runes(s->u.str.s, s->u.str.len);
    if (off < 0 || (uint64_t)off >= n)
        return out_of_range(a, off);
    size_t b = byte_at(s->u.str.s, s->u.str.len, (size_t)off);
    const char *hit = memmem(s->u.str.s + b, s->u.str.len - b, t->u.str.s, t->u.str.len);
    if (!hit)
        return sk_cel_int(a, -1);
    return sk_cel_int(a, off + (int64_t)runes(s->u.str.s + b, (size_t)(hit - s->u.str.s) - b));
}

/* lastIndexOf(t, off): cel-go's lastIndexOfOffset, the last match that
 * starts at or before code point off. */
static const sk_cel_val *last_index_of(sk_arena *a, const sk_cel_val *s, const sk_cel_val *t,
                                       int64_t off)
{
    if (t->u.str.len == 0)
        return sk_cel_int(a, off);
    size_t n = runes(s->u.str.s, s->u.str.len), m = runes(t->u.str.s, t->u.str.len);
    if (off < 0 || (uint64_t)off >= n)
        return out_of_range(a, off);
    if (m > n)
        return sk_cel_int(a, -1);
    if ((uint64_t)off > n - m)
        off = (int64_t)(n - m);
    /* Matches starting at or before off lie within the first off + m code
     * points: search that prefix, reversed, for the reversed needle. */
    size_t end = byte_at(s->u.str.s, s->u.str.len, (size_t)off + m), tl = t->u.str.len;
    char *rs = sk_arena_alloc(a, end + 1), *rt = sk_arena_alloc(a, tl + 1);
    for (size_t i = 0; i < end; i++)
        rs[i] = s->u.str.s[end - 1 - i];
    for (size_t i = 0; i < tl; i++)
        rt[i] = t->u.str.s[tl - 1 - i];
    const char *hit = memmem(rs, end, rt, tl);
    if (!hit)
        return sk_cel_int(a, -1);
    size_t start = end - (size_t)(hit - rs) - tl;
    return sk_cel_int(a, (int64_t)runes(s->u.str.s, start));
}

static const sk_cel_val *ascii_case(sk_arena *a, const sk_cel_val *s, int upper)
{
    char *r = sk_arena_strndup(a, s->u.str.s, s->u.str.len);
    for (size_t i = 0; i < s->u.str.len; i++)
        if (upper ? (r[i] >= 'a' && r[i] <= 'z') : (r[i] >= 'A' && r[i] <= 'Z'))
            r[i] = (char)(r[i] ^ 0x20);
    return sk_cel_string(a, r, s->u.str.len);
}

/* Go's strings.Replace(s, old, new, n); n < 0: every match. An empty old
 * matches before each code point and at the end. */
static const sk_cel_val *replace(sk_arena *a, const sk_cel_val *s, const sk_cel_val *old,
                                 const sk_cel_val *new, int64_t limit, sk_cel_work *w)
{
    const char *p = s->u.str.s;
    size_t len = s->u.str.len, ol = old->u.str.len, nl = new->u.str.len, count = 0;
    if (ol == 0) {
        count = runes(p, len) + 1;
    } else {
        for (const char *q = p; (q = memmem(q, len - (size_t)(q - p), old->u.str.s, ol)); q += ol)
            count++;
    }
    if (limit >= 0 && (uint64_t)limit < count)
        count = (size_t)limit;
    if (count == 0)
        return s;
    if (nl > ol && !spend(w, count * (uint64_t)(nl - ol)))
        return over_budget(a);
    size_t outlen = len + count * nl - count * ol, o = 0, i = 0;
    char *out = sk_arena_alloc(a, outlen + 1);
    for (size_t k = 0; k < count; k++) {
        size_t at;
        if (ol == 0) {
            at = i;
            if (k > 0 && i < len)
                at = i + rune_len(p, len, i);
            else if (k > 0)
                at = len;
        } else {
            at = (size_t)((const char *)memmem(p + i, len - i, old->u.str.s, ol) - p);
        }
        memcpy(out + o, p + i, at - i);
        o += at - i;
        memcpy(out + o, new->u.str.s, nl);
        o += nl;
        i = at + ol;
    }
    memcpy(out + o, p + i, len - i);
    o += len - i;
    return sk_cel_string(a, out, o);
}

/* Go's strings.SplitN(s, sep, n): n == 0 none, n < 0 all, else at most n
 * parts, the last the rest; an empty sep splits into code points. */
static const sk_cel_val *split(sk_arena *a, const sk_cel_val *s, const sk_cel_val *sep,
                               int64_t limit, sk_cel_work *w)
{
    const char *p = s->u.str.s;
    size_t len = s->u.str.len, sl = sep->u.str.len, parts = 1;
    if (limit == 0)
        return sk_cel_list(a, NULL, 0);
    if (sl == 0) {
        parts = runes(p, len);
    } else {
        for (const char *q = p; (q = memmem(q, len - (size_t)(q - p), sep->u.str.s, sl)); q += sl)
            parts++;
    }
    if (limit > 0 && (uint64_t)limit < parts)
        parts = (size_t)limit;
    if (!spend(w, parts * (uint64_t)sizeof(sk_cel_val)))
        return over_budget(a);
    const sk_cel_val **items = sk_arena_alloc(a, (parts ? parts : 1) * sizeof *items);
    size_t i = 0;
    for (size_t k = 0; k < parts; k++) {
        size_t at;
        if (k == parts - 1)
            at = len;
        else if (sl == 0)
            at = i + rune_len(p, len, i);
        else
            at = (size_t)((const char *)memmem(p + i, len - i, sep->u.str.s, sl) - p);
        items[k] = string_of(a, p + i, at - i);
        i = at + sl;
    }
    return sk_cel_list(a, items, parts);
}

static const sk_cel_val *substring(sk_arena *a, const sk_cel_val *s, int64_t start, int64_t end,
                                   int has_end)
{
    size_t n = runes(s->u.str.s, s->u.str.len);
    if (!has_end)
        end = (int64_t)n;
    if (has_end && start > end)
        return sk_cel_error(a, "invalid substring range. start: %lld, end: %lld", (long long)start,
                            (long long)end);
    if (start < 0 || (uint64_t)start > n)
        return out_of_range(a, start);
    if (end < 0 || (uint64_t)end > n)
        return out_of_range(a, end);
    size_t b = byte_at(s->u.str.s, s->u.str.len, (size_t)start);
    size_t e = b + byte_at(s->u.str.s + b, s->u.str.len - b, (size_t)(end - start));
    return string_of(a, s->u.str.s + b, e - b);
}

static const sk_cel_val *trim(sk_arena *a, const sk_cel_val *s)
{
    size_t b = 0, e = s->u.str.len;
    sk_utf8_trim_space(s->u.str.s, &b, &e);
    return string_of(a, s->u.str.s + b, e - b);
}

static const sk_cel_val *join(sk_arena *a, const sk_cel_val *l, const sk_cel_val *sep,
                              sk_cel_work *w)
{
    size_t n = l->u.list.n, sl = sep ? sep->u.str.len : 0, len = 0;
    for (size_t i = 0; i < n; i++) {
        const sk_cel_val *x = l->u.list.items[i];
        if (!is_str(x))
            return sk_cel_error(a, "join: invalid input: %s", sk_cel_type_name(x));
        len += x->u.str.len + (i ? sl : 0);
    }
    if (!spend(w, len + n))
        return over_budget(a);
    char *out = sk_arena_alloc(a, len + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && sl) {
            memcpy(out + o, sep->u.str.s, sl);
            o += sl;
        }
        memcpy(out + o, l->u.list.items[i]->u.str.s, l->u.list.items[i]->u.str.len);
        o += l->u.list.items[i]->u.str.len;
    }
    return sk_cel_string(a, out, o);
}

/* cel-go's quote: in double quotes, with CEL's escapes for the control
 * characters that have one, '\\' and '"'; other characters as they are. */
static const sk_cel_val *quote(sk_arena *a, const sk_cel_val *s, sk_cel_work *w)
{
    size_t len = s->u.str.len, o = 0;
    if (!spend(w, 2 * len + 2))
        return over_budget(a);
    char *out = sk_arena_alloc(a, 2 * len + 3);
    out[o++] = '"';
    for (size_t i = 0; i < len; i++) {
        const char *esc = strchr("\a\b\f\n\r\t\v\\\"", s->u.str.s[i]);
        if (s->u.str.s[i] && esc) {
            out[o++] = '\\';
            out[o++] = "abfnrtv\\\""[esc - "\a\b\f\n\r\t\v\\\""];
        } else {
            out[o++] = s->u.str.s[i];
        }
    }
    out[o++] = '"';
    return sk_cel_string(a, out, o);
}

/* ---- format ---- */

/* The text format builds: grown in the arena, every byte charged to w
 * before it is written (a list holding one big string many times formats
 * to far more than its size). */
typedef struct text {
    sk_arena *a;
    sk_cel_work *w;
    char *p;
    size_t len, cap;
    const char *err; /* the first error; nothing more is written */
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->err)
        return;
    if (!spend(t->w, n)) {
        t->err = "evaluation step limit exceeded";
        return;
    }
    if (t->len + n + 1 > t->cap) {
        size_t cap = 2 * t->cap > t->len + n + 1 ? 2 * t->cap : t->len + n + 1 + 64;
        char *p = sk_arena_alloc(t->a, cap);
        if (t->len)
            memcpy(p, t->p, t->len);
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = 0;
}

static void puts_(text *t, const char *s)
{
    put(t, s, strlen(s));
}

static void fail(text *t, const char *err)
{
    if (!t->err)
        t->err = err;
}

/* NaN and the infinities as the clauses spell them, or NULL. */
static const char *special_double(double d)
{
    return isnan(d) ? "NaN" : isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : NULL;
}

static void put_int(text *t, const char *fmt, const sk_cel_val *v)
{
    char buf[80];
    if (v->type == SK_CEL_V_INT)
        snprintf(buf, sizeof buf, fmt, (long long)v->u.i);
    else
        snprintf(buf, sizeof buf, fmt, (unsigned long long)v->u.u);
    puts_(t, buf);
}

/* Go's %b of an integer: binary digits, a '-' for a negative int. */
static void put_binary(text *t, const sk_cel_val *v)
{
    char buf[72], *p = buf + sizeof buf;
    uint64_t u =
        v->type == SK_CEL_V_INT ? (v->u.i < 0 ? 0 - (uint64_t)v->u.i : (uint64_t)v->u.i) : v->u.u;
    *--p = 0;
    do
        *--p = (char)('0' + (u & 1));
    while (u >>= 1);
    if (v->type == SK_CEL_V_INT && v->u.i < 0)
        *--p = '-';
    puts_(t, p);
}

static void put_signed(text *t, const char *fmt, const sk_cel_val *v)
{
    /* Go prints a negative int in %o and %x as '-' and the magnitude. */
    if (v->type == SK_CEL_V_INT && v->u.i < 0) {
        sk_cel_val m = {.type = SK_CEL_V_UINT, .u.u = 0 - (uint64_t)v->u.i};
        puts_(t, "-");
        put_int(t, fmt, &m);
        return;
    }
    put_int(t, fmt, v);
}

static void format_string(text *t, const sk_cel_val *v, int depth);

/* %s of a map: entries "k: v" sorted by the key's text. */
static void format_map(text *t, const sk_cel_val *m, int depth)
{
    size_t n = m->u.map.n;
    text *keys = sk_arena_alloc(t->a, (n ? n : 1) * sizeof *keys);
    for (size_t i = 0; i < n; i++) {
        keys[i] = (text){.a = t->a, .w = t->w};
        format_string(&keys[i], m->u.map.keys[i], depth + 1);
        if (keys[i].err)
            fail(t, keys[i].err);
    }
    if (!spend(t->w, n * n))
        fail(t, "evaluation step limit exceeded");
    size_t *order = sk_arena_alloc(t->a, (n ? n : 1) * sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    /* Insertion sort: maps here are small, and n * n was charged. */
    for (size_t i = 1; i < n && !t->err; i++)
        for (size_t k = i; k > 0; k--) {
            text *x = &keys[order[k - 1]], *y = &keys[order[k]];
            size_t l = x->len < y->len ? x->len : y->len;
            int c = memcmp(x->p ? x->p : "", y->p ? y->p : "", l);
            if (c < 0 || (c == 0 && x->len <= y->len))
                break;
            size_t tmp = order[k];
            order[k] = order[k - 1];
            order[k - 1] = tmp;
        }
    puts_(t, "{");
    for (size_t i = 0; i < n && !t->err; i++) {
        if (i)
            puts_(t, ", ");
        put(t, keys[order[i]].p ? keys[order[i]].p : "", keys[order[i]].len);
        puts_(t, ": ");
        format_string(t, m->u.map.vals[order[i]], depth + 1);
    }
    puts_(t, "}");
}

/* %s: a value's text, lists and maps element by element. depth bounds
 * the recursion as the values' nesting (made by the parser's bounded
 * literals or from JSON) already is. */
static void format_string(text *t, const sk_cel_val *v, int depth)
{
    char buf[401];
    const char *sp;
    if (depth > 100) {
        fail(t, "error during formatting: nesting too deep");
        return;
    }
    switch (v->type) {
    case SK_CEL_V_NULL:
        puts_(t, "null");
        break;
    case SK_CEL_V_BOOL:
        puts_(t, v->u.b ? "true" : "false");
        break;
    case SK_CEL_V_INT:
    case SK_CEL_V_UINT:
        put_int(t, v->type == SK_CEL_V_INT ? "%lld" : "%llu", v);
        break;
    case SK_CEL_V_DOUBLE:
        if ((sp = special_double(v->u.d)))
            puts_(t, sp);
        else
            put(t, buf, sk_cel_double_text(v->u.d, 'g', buf));
        break;
    case SK_CEL_V_STRING:
    case SK_CEL_V_BYTES:
    case SK_CEL_V_TYPE:
        put(t, v->u.str.s, v->u.str.len);
        break;
    case SK_CEL_V_DURATION:
    case SK_CEL_V_TIMESTAMP: {
        const sk_cel_val *x = sk_cel_time_string(t->a, v);
        put(t, x->u.str.s, x->u.str.len);
        break;
    }
    case SK_CEL_V_LIST:
        puts_(t, "[");
        for (size_t i = 0; i < v->u.list.n && !t->err; i++) {
            if (i)
                puts_(t, ", ");
            format_string(t, v->u.list.items[i], depth + 1);
        }
        puts_(t, "]");
        break;
    case SK_CEL_V_MAP:
        format_map(t, v, depth);
        break;
    default:
        fail(t, "error during formatting: string clause can only be used on strings, bools, bytes, "
                "ints, doubles, maps, lists, types, durations, and timestamps");
        break;
    }
}

/* One clause (the letter c, the precision prec or -1) of argument v. */
static void format_clause(text *t, char c, int prec, const sk_cel_val *v)
{
    char buf[512];
    const char *sp = v->type == SK_CEL_V_DOUBLE ? special_double(v->u.d) : NULL;
    int integer = v->type == SK_CEL_V_INT || v->type == SK_CEL_V_UINT;
    switch (c) {
    case 's':
        format_string(t, v, 0);
        break;
    case 'd':
        if (sp)
            puts_(t, sp);
        else if (integer)
            put_int(t, v->type == SK_CEL_V_INT ? "%lld" : "%llu", v);
        else
            fail(t, "error during formatting: decimal clause can only be used on integers");
        break;
    case 'f':
    case 'e':
        if (v->type != SK_CEL_V_DOUBLE) {
            fail(t, c == 'f' ? "error during formatting: fixed-point clause can only be used on "
                               "doubles"
                             : "error during formatting: scientific clause can only be used on "
                               "doubles");
        } else if (sp) {
            puts_(t, sp);
        } else {
            /* %f of 1e308 is 309 digits and its precision: within buf
             * for precisions up to 100, which the parse allows. */
            snprintf(buf, sizeof buf, c == 'f' ? "%.*f" : "%.*e", prec < 0 ? 6 : prec, v->u.d);
            puts_(t, buf);
        }
        break;
    case 'b':
        if (integer)
            put_binary(t, v);
        else if (v->type == SK_CEL_V_BOOL)
            puts_(t, v->u.b ? "1" : "0");
        else
            fail(t, "error during formatting: only integers and bools can be formatted as binary");
        break;
    case 'o':
        if (integer)
            put_signed(t, "%llo", v);
        else
            fail(t, "error during formatting: octal clause can only be used on integers");
        break;
    default: /* x, X */
        if (integer) {
            put_signed(t, c == 'x' ? "%llx" : "%llX", v);
        } else if (v->type == SK_CEL_V_STRING || v->type == SK_CEL_V_BYTES) {
            static const char lower[] = "0123456789abcdef", upper[] = "0123456789ABCDEF";
            const char *digits = c == 'x' ? lower : upper;
            for (size_t i = 0; i < v->u.str.len && !t->err; i++) {
                unsigned char b = (unsigned char)v->u.str.s[i];
                char pair[2] = {digits[b >> 4], digits[b & 15]};
                put(t, pair, 2);
            }
        } else {
            fail(t, "error during formatting: only integers, byte buffers, and strings can be "
                    "formatted as hex");
        }
        break;
    }
}

/* s.format(args): %% and the clauses %s %d %f %e %b %o %x %X, %f and %e
 * with an optional .precision, each taking the next argument. */
static const sk_cel_val *format(sk_arena *a, const sk_cel_val *s, const sk_cel_val *args,
                                sk_cel_work *w)
{
    text t = {.a = a, .w = w};
    const char *p = s->u.str.s, *end = p + s->u.str.len;
    size_t next = 0;
    put(&t, "", 0);
    while (p < end && !t.err) {
        const char *pct = memchr(p, '%', (size_t)(end - p));
        if (!pct) {
            put(&t, p, (size_t)(end - p));
            break;
        }
        put(&t, p, (size_t)(pct - p));
        p = pct + 1;
        if (p < end && *p == '%') {
            put(&t, "%", 1);
            p++;
            continue;
        }
        int prec = -1;
        if (p < end && *p == '.') {
            prec = 0;
            for (p++; p < end && *p >= '0' && *p <= '9'; p++)
                if ((prec = prec * 10 + (*p - '0')) > 100)
                    return sk_cel_error(a, "could not parse formatting clause: precision too "
                                           "large");
        }
        if (p == end || !strchr("sdfebxXo", *p) || !*p || (prec >= 0 && *p != 'f' && *p != 'e'))
            return sk_cel_error(a,
                                "could not parse formatting clause: unrecognized formatting "
                                "clause \"%c\"",
                                p < end ? *p : '%');
        if (next >= args->u.list.n)
            return sk_cel_error(a, "index %zu out of range", next);
        format_clause(&t, *p++, prec, args->u.list.items[next++]);
    }
    if (t.err)
        return strcmp(t.err, "evaluation step limit exceeded") == 0 ? over_budget(a)
                                                                    : sk_cel_error(a, "%s", t.err);
    return sk_cel_string(a, t.p, t.len);
}

const sk_cel_val *sk_cel_strext_call(sk_arena *a, const char *f, int method,
                                     const sk_cel_val *const *v, size_t n, sk_cel_work *w)
{
    if (!method) {
        if (strcmp(f, "strings.quote") != 0)
            return NULL;
        return n == 1 && is_str(v[0]) ? quote(a, v[0], w) : no_overload(a);
    }
    if (strcmp(f, "format") == 0) {
        if (n != 2 || !is_str(v[0]) || v[1]->type != SK_CEL_V_LIST)
            return no_overload(a);
        return format(a, v[0], v[1], w);
    }
    static const char *const names[] = {"charAt",     "indexOf", "lastIndexOf", "lowerAscii",
                                        "upperAscii", "replace", "split",       "substring",
                                        "trim",       "join"};
    size_t k = 0;
    while (k < sizeof names / sizeof *names && strcmp(f, names[k]) != 0)
        k++;
    if (k == sizeof names / sizeof *names)
        return NULL;
    const sk_cel_val *s = v[0];
    if (k == 9) {
        if (s->type != SK_CEL_V_LIST || n > 2 || (n == 2 && !is_str(v[1])))
            return no_overload(a);
        return join(a, s, n == 2 ? v[1] : NULL, w);
    }
    /* a list's indexOf and lastIndexOf are kube's lists library's */
    if (!is_str(s))
        return (k == 1 || k == 2) && s->type == SK_CEL_V_LIST ? NULL : no_overload(a);
    switch (k) {
    case 0:
        return n == 2 && is_int(v[1]) ? char_at(a, s, v[1]->u.i) : no_overload(a);
    case 1:
    case 2:
        if (n < 2 || n > 3 || !is_str(v[1]) || (n == 3 && !is_int(v[2])))
            return no_overload(a);
        if (k == 1)
            return index_of(a, s, v[1], n == 3 ? v[2]->u.i : 0);
        if (n == 2) {
            size_t len = runes(s->u.str.s, s->u.str.len);
            if (v[1]->u.str.len == 0)
                return sk_cel_int(a, (int64_t)len);
            if (runes(v[1]->u.str.s, v[1]->u.str.len) > len)
                return sk_cel_int(a, -1);
            return last_index_of(a, s, v[1], (int64_t)len - 1);
        }
        return last_index_of(a, s, v[1], v[2]->u.i);
    case 3:
    case 4:
        return n == 1 ? ascii_case(a, s, k == 4) : no_overload(a);
    case 5:
        if (n < 3 || n > 4 || !is_str(v[1]) || !is_str(v[2]) || (n == 4 && !is_int(v[3])))
            return no_overload(a);
        return replace(a, s, v[1], v[2], n == 4 ? v[3]->u.i : -1, w);
    case 6:
        if (n < 2 || n > 3 || !is_str(v[1]) || (n == 3 && !is_int(v[2])))
            return no_overload(a);
        return split(a, s, v[1], n == 3 ? v[2]->u.i : -1, w);
    case 7:
        if (n < 2 || n > 3 || !is_int(v[1]) || (n == 3 && !is_int(v[2])))
            return no_overload(a);
        return substring(a, s, v[1]->u.i, n == 3 ? v[2]->u.i : 0, n == 3);
    default:
        return n == 1 ? trim(a, s) : no_overload(a);
    }
}
