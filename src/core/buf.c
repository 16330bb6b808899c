/*
 * buf.c - growable byte buffer. Invariant: data[len] == '\0' whenever
 * data != NULL, so a buffer can always be handed to C string functions.
 */
#include "core/buf.h"
#include "core/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sk_buf_reserve(sk_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    SK_CHECK_ALLOC(p);
    b->data = p;
    b->cap = cap;
    b->data[b->len] = '\0';
}

void sk_buf_append(sk_buf *b, const void *data, size_t len)
{
    sk_buf_reserve(b, len);
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void sk_buf_puts(sk_buf *b, const char *s)
{
    sk_buf_append(b, s, strlen(s));
}

void sk_buf_putc(sk_buf *b, char c)
{
    sk_buf_append(b, &c, 1);
}

void sk_buf_vprintf(sk_buf *b, const char *fmt, va_list ap)
{
    SK_CHECK(fmt != NULL); /* also tells GCC, which warns under UBSan otherwise */
    /* One formatting pass when the text fits: into the spare capacity if
     * there is a fair amount, else onto the stack (an empty buffer's first
     * printf); a second pass only for longer text. */
    char tmp[256];
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    int direct = room >= sizeof tmp;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(direct ? b->data + b->len : tmp, direct ? room : sizeof tmp, fmt, ap);
    SK_CHECK(n >= 0);
    if ((size_t)n >= (direct ? room : sizeof tmp)) {
        sk_buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    } else if (!direct) {
        sk_buf_reserve(b, (size_t)n);
        memcpy(b->data + b->len, tmp, (size_t)n + 1);
    }
    va_end(ap2);
    b->len += (size_t)n;
}

void sk_buf_printf(sk_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sk_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *sk_go_quoted_in(const char *before, const char *s, const char *after)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_puts(&m, before);
    sk_buf_go_quoted(&m, s);
    sk_buf_puts(&m, after);
    return sk_buf_steal(&m, NULL);
}

void sk_buf_go_quoted(sk_buf *b, const char *s)
{
    static const char controls[] = "\a\b\f\n\r\t\v", letters[] = "abfnrtv";
    sk_buf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *ctl = strchr(controls, c);
        if (c == '"' || c == '\\')
            sk_buf_printf(b, "\\%c", c);
        else if (ctl)
            sk_buf_printf(b, "\\%c", letters[ctl - controls]);
        else if (c < 0x20 || c == 0x7f)
            sk_buf_printf(b, "\\x%02x", c);
        else
            sk_buf_putc(b, (char)c);
    }
    sk_buf_putc(b, '"');
}

void sk_buf_go_float(sk_buf *b, double d)
{
    char e[40];
    int prec = 1;
    if (isnan(d) || isinf(d)) {
        sk_buf_puts(b, isnan(d) ? "NaN" : d > 0 ? "+Inf" : "-Inf");
        return;
    }
    /* The fewest significant digits that read back as d: Go's shortest. */
    for (; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    snprintf(e, sizeof e, "%.*e", prec - 1, d);
    char *exp_at = strchr(e, 'e');
    int exp = atoi(exp_at + 1);
    *exp_at = '\0';
    /* 'g' switches to an exponent below 1e-4 and, when shortest, from 1e+06. */
    if (exp < -4 || exp >= 6) {
        sk_buf_printf(b, "%se%c%02d", e, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        return;
    }
    sk_buf_printf(b, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, d);
}

void sk_buf_json_string(sk_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    sk_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        switch (c) {
        case '"':
            sk_buf_puts(b, "\\\"");
            break;
        case '\\':
            sk_buf_puts(b, "\\\\");
            break;
        case '\n':
            sk_buf_puts(b, "\\n");
            break;
        case '\r':
            sk_buf_puts(b, "\\r");
            break;
        case '\t':
            sk_buf_puts(b, "\\t");
            break;
        default:
            if (c < 0x20) {
                char esc[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
                sk_buf_puts(b, esc);
            } else {
                sk_buf_putc(b, (char)c);
            }
        }
    }
    sk_buf_putc(b, '"');
}

void sk_buf_reset(sk_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

char *sk_buf_steal(sk_buf *b, size_t *len_out)
{
    sk_buf_reserve(b, 0);
    char *p = b->data;
    if (len_out)
        *len_out = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void sk_buf_free(sk_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
