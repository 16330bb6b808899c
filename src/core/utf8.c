/*
 * utf8.c - see utf8.h. One decoder (valid_len) serves every function,
 * so validity, repair, truncation and decoding can never disagree about where a
 * character ends.
 */
#include "core/utf8.h"

#include <string.h>

/* Length of the valid UTF-8 character at s (at most n bytes available), or
 * 0 if the bytes there are not one. */
static size_t valid_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t need;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        need = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        need = 3;
        if (c == 0xe0)
            lo = 0xa0; /* no overlong forms */
        else if (c == 0xed)
            hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (n < need || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return need;
}

int sk_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t n = valid_len(p + i, len - i);
        if (n == 0)
            return 0;
        i += n;
    }
    return 1;
}

size_t sk_utf8_prefix(const char *s, size_t len, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    if (max >= len)
        return len;
    while (i < max) {
        size_t n = valid_len(p + i, len - i);
        if (n == 0)
            n = 1;
        if (i + n > max)
            break;
        i += n;
    }
    return i;
}

void sk_utf8_repair(sk_buf *out, const char *s, size_t len)
{
    static const char replacement[] = "\xef\xbf\xbd";
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    int in_bad_run = 0;
    sk_buf_reserve(out, len);
    while (i < len) {
        size_t n = valid_len(p + i, len - i);
        if (n == 0) {
            if (!in_bad_run)
                sk_buf_append(out, replacement, 3);
            in_bad_run = 1;
            i++;
            continue;
        }
        in_bad_run = 0;
        sk_buf_append(out, s + i, n);
        i += n;
    }
}

/* The length of the character at s[i] (of len bytes) if unicode.IsSpace
 * holds for it, else 0. */
static size_t space_at(const char *s, size_t len, size_t i)
{
    static const uint32_t spaces[] = {'\t', '\n',   '\v',   '\f',   '\r',   ' ',    0x85,
                                      0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
    uint32_t cp;
    size_t n = sk_utf8_decode(s + i, len - i, &cp);
    if (cp >= 0x2000 && cp <= 0x200A)
        return n;
    for (size_t k = 0; k < sizeof spaces / sizeof *spaces; k++)
        if (cp == spaces[k])
            return n;
    return 0;
}

void sk_utf8_trim_space(const char *s, size_t *start, size_t *end)
{
    size_t b = *start, e = *end, k;
    while (b < e && (k = space_at(s, e, b)))
        b += k;
    while (e > b) {
        size_t last = e - 1;
        while (last > b && ((unsigned char)s[last] & 0xC0) == 0x80)
            last--;
        if (!space_at(s, e, last))
            break;
        e = last;
    }
    *start = b;
    *end = e;
}

size_t sk_utf8_decode(const char *s, size_t len, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = valid_len(p, len);
    if (n == 0) {
        *cp = 0xfffd;
        return 1;
    }
    if (n == 1)
        *cp = p[0];
    else if (n == 2)
        *cp = (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
    else if (n == 3)
        *cp = (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
    else
        *cp = (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 |
              (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
    return n;
}

size_t sk_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Go's unicode.IsPrint, as far as it can be told without Unicode's tables
 * (see utf8.h). */
static int go_printable(uint32_t c)
{
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0xad)
        return 0;
    if (c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) ||
        (c >= 0x205f && c <= 0x206f) || c == 0x3000)
        return 0;
    if ((c >= 0x600 && c <= 0x605) || c == 0x61c || c == 0x6dd || c == 0x70f || c == 0x180e)
        return 0;
    if (c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb) || (c & 0xfffe) == 0xfffe ||
        (c >= 0xfdd0 && c <= 0xfdef))
        return 0;
    /* Surrogates, private use, and the planes above CJK's, all unassigned
     * but for the variation selectors E0100..E01EF. */
    if ((c >= 0xd800 && c <= 0xf8ff) || (c >= 0x323b0 && c <= 0xe00ff) || c >= 0xe01f0)
        return 0;
    return 1;
}

void sk_utf8_go_quote(sk_buf *b, const char *s, size_t len)
{
    static const char controls[] = "\a\b\f\n\r\t\v", letters[] = "abfnrtv";
    sk_buf_putc(b, '"');
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t n = sk_utf8_decode(s + i, len - i, &c);
        int invalid = c == 0xfffd && n == 1;
        const char *ctl = c && c < 0x80 ? strchr(controls, (int)c) : NULL;
        if (c == '"' || c == '\\')
            sk_buf_printf(b, "\\%c", (char)c);
        else if (ctl)
            sk_buf_printf(b, "\\%c", letters[ctl - controls]);
        else if (invalid || c < 0x80) {
            if (invalid || !go_printable(c))
                sk_buf_printf(b, "\\x%02x", (unsigned char)s[i]);
            else
                sk_buf_putc(b, (char)c);
        } else if (go_printable(c))
            sk_buf_append(b, s + i, n);
        else if (c < 0x10000)
            sk_buf_printf(b, "\\u%04x", (unsigned)c);
        else
            sk_buf_printf(b, "\\U%08x", (unsigned)c);
        i += n;
    }
    sk_buf_putc(b, '"');
}
