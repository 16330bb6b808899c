/*
 * utf8.c - see utf8.h. One decoder (valid_len) serves all three functions,
 * so validity, repair and truncation can never disagree about where a
 * character ends.
 */
#include "core/utf8.h"

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
