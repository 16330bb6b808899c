/*
 * target.c - see target.h. Each piece (a path segment, a query key or
 * value) is decoded into its own allocation and checked as a whole; a
 * failure frees everything built so far, so the caller's target is written
 * only on success.
 */
#include "http/target.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/utf8.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

typedef enum { PIECE_SEGMENT, PIECE_QUERY } piece_kind;

static void set_msg(char **errmsg, const char *what, const char *s, size_t len)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_puts(&b, what);
    if (s) {
        sk_buf_puts(&b, " \"");
        sk_utf8_repair(&b, s, len);
        sk_buf_putc(&b, '"');
    }
    *errmsg = sk_buf_steal(&b, NULL);
}

/* Decodes the len bytes at s into a new string *out. */
static sk_err decode_piece(const char *s, size_t len, piece_kind kind, char **out, char **errmsg)
{
    sk_err err = SK_ERR_BAD_REQUEST;
    char *d = malloc(len + 1);
    SK_CHECK_ALLOC(d);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '+' && kind == PIECE_QUERY) {
            c = ' ';
        } else if (c == '%') {
            int hi = -1, lo = -1;
            if (i + 2 < len) {
                hi = sk_hex_value(s[i + 1]);
                lo = sk_hex_value(s[i + 2]);
            }
            if (hi < 0 || lo < 0) {
                size_t shown = len - i < 3 ? len - i : 3;
                set_msg(errmsg, "invalid URL escape", s + i, shown);
                goto out;
            }
            c = (char)(hi << 4 | lo);
            i += 2;
            if (c == '/' && kind == PIECE_SEGMENT) {
                err = SK_ERR_NOT_FOUND;
                set_msg(errmsg, "the server could not find the requested resource", NULL, 0);
                goto out;
            }
        }
        if (c == '\0') {
            set_msg(errmsg,
                    kind == PIECE_SEGMENT ? "the request path contains a NUL byte"
                                          : "a query parameter contains a NUL byte",
                    NULL, 0);
            goto out;
        }
        d[n++] = c;
    }
    d[n] = '\0';
    if (!sk_utf8_valid(d, n)) {
        set_msg(errmsg,
                kind == PIECE_SEGMENT ? "the request path is not valid UTF-8"
                                      : "a query parameter is not valid UTF-8",
                NULL, 0);
        goto out;
    }
    *out = d;
    d = NULL;
    err = SK_OK;
out:
    free(d);
    return err;
}

static sk_err parse_path(const char *p, size_t len, sk_target *t, char **errmsg)
{
    sk_err err = SK_OK;
    if (len == 0 || p[0] != '/') {
        set_msg(errmsg, "the request target must be an absolute path", NULL, 0);
        return SK_ERR_BAD_REQUEST;
    }
    /* Segments start after each '/'; a final empty one (a trailing '/') is dropped. */
    size_t i = 1;
    while (i < len) {
        size_t end = i;
        while (end < len && p[end] != '/')
            end++;
        char *seg = NULL;
        if ((err = decode_piece(p + i, end - i, PIECE_SEGMENT, &seg, errmsg)) != SK_OK)
            break;
        t->segs = realloc(t->segs, (t->n_segs + 1) * sizeof *t->segs);
        SK_CHECK_ALLOC(t->segs);
        t->segs[t->n_segs++] = seg;
        i = end + 1;
    }
    return err;
}

static sk_err parse_query(const char *q, size_t len, sk_target *t, char **errmsg)
{
    sk_err err = SK_OK;
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && q[end] != '&')
            end++;
        size_t eq = i;
        while (eq < end && q[eq] != '=')
            eq++;
        if (eq > i) { /* "&&" and "&=v" carry no key: skipped, as Go does */
            if (t->n_params == SK_TARGET_MAX_PARAMS) {
                set_msg(errmsg, "too many query parameters", NULL, 0);
                err = SK_ERR_BAD_REQUEST;
                break;
            }
            char *key = NULL, *value = NULL;
            err = decode_piece(q + i, eq - i, PIECE_QUERY, &key, errmsg);
            if (err == SK_OK)
                err = decode_piece(q + eq + (eq < end), end - eq - (eq < end), PIECE_QUERY, &value,
                                   errmsg);
            if (err != SK_OK) {
                free(key);
                break;
            }
            t->params = realloc(t->params, (t->n_params + 1) * sizeof *t->params);
            SK_CHECK_ALLOC(t->params);
            t->params[t->n_params++] = (sk_target_param){key, value};
        }
        i = end + 1;
    }
    return err;
}

sk_err sk_target_parse(const char *raw, size_t len, sk_target *out, char **errmsg)
{
    sk_target t = {0};
    const char *qmark = memchr(raw, '?', len);
    size_t path_len = qmark ? (size_t)(qmark - raw) : len;
    sk_err err = parse_path(raw, path_len, &t, errmsg);
    if (err == SK_OK && qmark)
        err = parse_query(qmark + 1, len - path_len - 1, &t, errmsg);
    if (err != SK_OK) {
        sk_target_clear(&t);
        return err;
    }
    *out = t;
    return SK_OK;
}

const char *sk_target_query(const sk_target *t, const char *key)
{
    for (size_t i = 0; i < t->n_params; i++)
        if (strcmp(t->params[i].key, key) == 0)
            return t->params[i].value;
    return NULL;
}

void sk_target_clear(sk_target *t)
{
    for (size_t i = 0; i < t->n_segs; i++)
        free(t->segs[i]);
    free(t->segs);
    for (size_t i = 0; i < t->n_params; i++) {
        free(t->params[i].key);
        free(t->params[i].value);
    }
    free(t->params);
    memset(t, 0, sizeof *t);
}
