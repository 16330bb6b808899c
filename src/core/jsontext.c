/*
 * jsontext.c - see jsontext.h.
 *
 * Values are built with the calls jansson's own parser makes (an object's
 * members by json_object_setn_new_nocheck, so a repeated key keeps its
 * first place and its last value), hence the same values in the same key
 * order. The parser never reports an error itself: a NULL from parse_*
 * means "not the common shape", and the caller reparses with jansson.
 * Likewise the encoder: -1 from dump_* means "jansson's to spell".
 */
#include "core/jsontext.h"
#include "core/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than this is left to jansson (bodies of real kinds stay far above it). */
#define FAST_MAX_DEPTH 64
/* 18 digits always fit an int64; longer ones are left to jansson's range check. */
#define FAST_MAX_DIGITS 18

typedef struct parser {
    const char *p, *end;
    char *scratch; /* an escaped string's bytes */
    size_t scratch_cap;
} parser;

static json_t *parse_value(parser *ps, int depth);

#define BYTES_OF(c) (0x0101010101010101ull * (uint64_t)(c))
#define HIGH_BITS BYTES_OF(0x80)

/* Whether any byte of x is 0 (exact as a yes/no, not as to which byte). */
static uint64_t has_zero_byte(uint64_t x)
{
    return (x - BYTES_OF(1)) & ~x & HIGH_BITS;
}

/* The length of s's leading run of bytes a JSON string holds as they are
 * (0x20-0x7f but '"' and '\\'), eight at a time: string values are most of
 * an object's bytes, and both the parser and the encoder stop only at the
 * end of such a run. */
static size_t plain_run(const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if ((x & HIGH_BITS) || has_zero_byte(x & ~BYTES_OF(0x1f)) ||
            has_zero_byte(x ^ BYTES_OF('"')) || has_zero_byte(x ^ BYTES_OF('\\')))
            break;
    }
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
            break;
    }
    return i;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

/* After a member or an element: 1 at the closing character, 0 after a comma
 * (each consumed, with the spaces after a comma), -1 at anything else. */
static int next_or_close(parser *ps, char close)
{
    skip_ws(ps);
    if (ps->p == ps->end)
        return -1;
    if (*ps->p == close) {
        ps->p++;
        return 1;
    }
    if (*ps->p != ',')
        return -1;
    ps->p++;
    skip_ws(ps);
    return 0;
}

static int scratch_put(parser *ps, size_t at, char c)
{
    if (at == ps->scratch_cap) {
        size_t cap = ps->scratch_cap ? 2 * ps->scratch_cap : 256;
        char *n = realloc(ps->scratch, cap);
        if (!n)
            return -1;
        ps->scratch = n;
        ps->scratch_cap = cap;
    }
    ps->scratch[at] = c;
    return 0;
}

/* A string after its opening quote: *out and *len_out point into the text
 * when it has no escape, else into ps->scratch (valid until the next
 * string). -1 when it is not the common shape. */
static int parse_string(parser *ps, const char **out, size_t *len_out)
{
    const char *start = ps->p;
    ps->p += plain_run(ps->p, (size_t)(ps->end - ps->p));
    if (ps->p < ps->end && *ps->p == '"') {
        *out = start;
        *len_out = (size_t)(ps->p - start);
        ps->p++;
        return 0;
    }
    size_t n = (size_t)(ps->p - start);
    for (size_t i = 0; i < n; i++)
        if (scratch_put(ps, i, start[i]) < 0)
            return -1;
    while (ps->p < ps->end) {
        unsigned char c = (unsigned char)*ps->p++;
        if (c == '"') {
            *out = ps->scratch ? ps->scratch : "";
            *len_out = n;
            return 0;
        }
        if (c < 0x20 || c >= 0x80)
            return -1;
        if (c == '\\') {
            if (ps->p == ps->end)
                return -1;
            switch (*ps->p++) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case '/': c = '/'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            default: return -1; /* \u and anything wrong: jansson's */
            }
        }
        if (scratch_put(ps, n++, (char)c) < 0)
            return -1;
    }
    return -1;
}

static json_t *parse_number(parser *ps)
{
    int neg = *ps->p == '-';
    if (neg)
        ps->p++;
    const char *digits = ps->p;
    int64_t v = 0;
    size_t n = 0;
    for (; ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9'; ps->p++, n++)
        if (n < FAST_MAX_DIGITS) /* beyond, the number is jansson's anyway */
            v = v * 10 + (*ps->p - '0');
    if (n == 0 || n > FAST_MAX_DIGITS || (digits[0] == '0' && n > 1))
        return NULL;
    if (ps->p < ps->end && (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E'))
        return NULL; /* a real: jansson's strtod and its range checks */
    return json_integer(neg ? -v : v);
}

static json_t *parse_literal(parser *ps, const char *word, json_t *value)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return NULL;
    ps->p += n;
    return value;
}

static json_t *parse_object(parser *ps, int depth)
{
    json_t *obj = json_object();
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        return obj;
    }
    while (obj) {
        const char *key;
        size_t key_len;
        json_t *v = NULL;
        if (ps->p == ps->end || *ps->p != '"')
            goto fail;
        ps->p++;
        if (parse_string(ps, &key, &key_len) < 0)
            goto fail;
        /* an escaped key sits in scratch, which the value's strings reuse */
        char small[64];
        char *owned = NULL;
        if (key == ps->scratch) {
            owned = key_len < sizeof small ? small : malloc(key_len);
            if (!owned)
                goto fail;
            memcpy(owned, key, key_len);
            key = owned;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ':') {
            ps->p++;
            skip_ws(ps);
            v = parse_value(ps, depth);
        }
        int set = v && json_object_setn_new_nocheck(obj, key, key_len, v) == 0;
        if (owned != small)
            free(owned);
        if (!set)
            goto fail;
        int closed = next_or_close(ps, '}');
        if (closed < 0)
            goto fail;
        if (closed)
            return obj;
    }
fail:
    json_decref(obj);
    return NULL;
}

static json_t *parse_array(parser *ps, int depth)
{
    json_t *arr = json_array();
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        return arr;
    }
    while (arr) {
        json_t *v = parse_value(ps, depth);
        if (!v || json_array_append_new(arr, v) != 0)
            goto fail;
        int closed = next_or_close(ps, ']');
        if (closed < 0)
            goto fail;
        if (closed)
            return arr;
    }
fail:
    json_decref(arr);
    return NULL;
}

static json_t *parse_value(parser *ps, int depth)
{
    if (ps->p == ps->end || depth >= FAST_MAX_DEPTH)
        return NULL;
    switch (*ps->p) {
    case '{':
        ps->p++;
        return parse_object(ps, depth + 1);
    case '[':
        ps->p++;
        return parse_array(ps, depth + 1);
    case '"': {
        const char *s;
        size_t n;
        ps->p++;
        return parse_string(ps, &s, &n) < 0 ? NULL : json_stringn_nocheck(s, n);
    }
    case 't':
        return parse_literal(ps, "true", json_true());
    case 'f':
        return parse_literal(ps, "false", json_false());
    case 'n':
        return parse_literal(ps, "null", json_null());
    default:
        return *ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9') ? parse_number(ps) : NULL;
    }
}

json_t *sk_jsontext_load(const char *buf, size_t len, json_error_t *err)
{
    parser ps = {buf, buf + len, NULL, 0};
    json_t *v = NULL;
    skip_ws(&ps);
    /* jansson's default: the text is an object or an array */
    if (ps.p < ps.end && (*ps.p == '{' || *ps.p == '[')) {
        v = parse_value(&ps, 0);
        skip_ws(&ps);
        if (v && ps.p != ps.end) {
            json_decref(v);
            v = NULL;
        }
    }
    free(ps.scratch);
    return v ? v : json_loadb(buf, len, 0, err);
}

/* ---- encoding ---- */

static int dump_string(sk_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    sk_buf_reserve(b, n + 2);
    sk_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        size_t run = plain_run(s + i, n - i);
        sk_buf_append(b, s + i, run);
        i += run;
        if (i == n)
            break;
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80)
            return -1;
        char esc[6] = {'\\', 0};
        size_t len = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            len = 6;
        }
        sk_buf_append(b, esc, len);
    }
    sk_buf_putc(b, '"');
    return 0;
}

/* What a dump writes into, and the value whose offset it reports. */
typedef struct dumper {
    sk_buf b;
    const json_t *mark;
    size_t mark_at; /* SIZE_MAX until mark is written */
} dumper;

static int dump_value(dumper *d, const json_t *v, int depth)
{
    sk_buf *b = &d->b;
    if (depth >= FAST_MAX_DEPTH)
        return -1;
    if (v == d->mark)
        d->mark_at = b->len;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        sk_buf_putc(b, '{');
        int first = 1;
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            if (!first)
                sk_buf_putc(b, ',');
            first = 0;
            if (dump_string(b, json_object_iter_key(it), json_object_iter_key_len(it)) < 0)
                return -1;
            sk_buf_putc(b, ':');
            if (dump_value(d, json_object_iter_value(it), depth + 1) < 0)
                return -1;
        }
        sk_buf_putc(b, '}');
        return 0;
    }
    case JSON_ARRAY: {
        sk_buf_putc(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                sk_buf_putc(b, ',');
            if (dump_value(d, json_array_get(v, i), depth + 1) < 0)
                return -1;
        }
        sk_buf_putc(b, ']');
        return 0;
    }
    case JSON_STRING:
        return dump_string(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER: {
        char num[24];
        int n = snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        sk_buf_append(b, num, (size_t)n);
        return 0;
    }
    case JSON_TRUE:
        sk_buf_append(b, "true", 4);
        return 0;
    case JSON_FALSE:
        sk_buf_append(b, "false", 5);
        return 0;
    case JSON_NULL:
        sk_buf_append(b, "null", 4);
        return 0;
    default:
        return -1; /* a real */
    }
}

char *sk_jsontext_dump_marked(const json_t *v, const json_t *mark, size_t *len_out,
                              size_t *mark_at_out)
{
    dumper d = {SK_BUF_INIT, mark, SIZE_MAX};
    char *out = NULL;
    size_t len = 0;
    /* json_dumps' default: only an object or an array */
    sk_buf_reserve(&d.b, 1024); /* one allocation for a typical object */
    if ((json_is_object(v) || json_is_array(v)) && dump_value(&d, v, 0) == 0) {
        out = sk_buf_steal(&d.b, &len);
    } else {
        out = json_dumps(v, JSON_COMPACT);
        len = out ? strlen(out) : 0;
        d.mark_at = SIZE_MAX;
    }
    sk_buf_free(&d.b);
    if (out) {
        *len_out = len;
        *mark_at_out = d.mark_at;
    }
    return out;
}

char *sk_jsontext_dump(const json_t *v, size_t *len_out)
{
    size_t unused;
    return sk_jsontext_dump_marked(v, NULL, len_out, &unused);
}
