/*
 * fuzz_cel_regex.c - libFuzzer target: the RE2 engine (cel/regex.h) over
 * any bytes. The input up to its first NUL is the pattern, the rest the
 * text searched (from an offset the first byte of the text chooses).
 *
 * Invariants checked: a pattern either compiles or gives Go's
 * "error parsing regexp: " message; a program is never larger than
 * SK_CEL_RE_MAX_PROG and the memory reported covers at least its working
 * memory; a match lies within the text, after the offset, on
 * character boundaries (of valid UTF-8); the yes/no search agrees with the positional one;
 * a search costs at most twice the program's size a character (the linear
 * bound) and one given a small limit stops with -1 soon after passing it.
 * Memory errors are the sanitizers'.
 */
#include "cel/regex.h"
#include "core/arena.h"
#include "core/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    const char *nul = memchr(p, 0, size);
    size_t plen = nul ? (size_t)(nul - p) : size;
    const char *s = nul ? nul + 1 : "";
    size_t slen = nul ? size - plen - 1 : 0;
    size_t from = slen ? (unsigned char)s[0] % (slen + 1) : 0;
    sk_arena *a = sk_arena_new();
    const char *err = NULL;
    size_t bytes = 0;
    sk_cel_re *re = sk_cel_re_compile(a, p, plen, &err, &bytes);
    if (!re) {
        if (!err || strncmp(err, "error parsing regexp: ", 22) != 0)
            abort();
        goto out;
    }
    size_t n = sk_cel_re_size(re);
    if (n == 0 || n > SK_CEL_RE_MAX_PROG || bytes < 40 * n)
        abort();
    size_t start = 0, end = 0;
    uint64_t work = 0;
    int r = sk_cel_re_search(re, s, slen, from, &start, &end, &work, UINT64_MAX);
    if (r != 0 && r != 1)
        abort();
    if (work > 2 * (uint64_t)n * (slen - from + 1) + n)
        abort();
    if (r == 1) {
        if (start < from || start > end || end > slen)
            abort();
        /* on character boundaries of valid text (CEL's strings are; in
         * invalid text a stray byte is a character of its own) */
        if (sk_utf8_valid(s, slen) &&
            ((start < slen && start > from && ((unsigned char)s[start] & 0xC0) == 0x80) ||
             (end < slen && end > start && ((unsigned char)s[end] & 0xC0) == 0x80)))
            abort();
    }
    uint64_t w2 = 0;
    if (sk_cel_re_search(re, s, slen, from, NULL, NULL, &w2, UINT64_MAX) != r)
        abort();
    uint64_t w3 = 0;
    int limited = sk_cel_re_search(re, s, slen, from, NULL, NULL, &w3, 16);
    if (limited == -1 ? w3 <= 16 || w3 > 16 + 4 * (uint64_t)n : w3 > 16 || limited != r)
        abort();
out:
    sk_arena_free(a);
    return 0;
}
