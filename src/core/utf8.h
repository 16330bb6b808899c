/*
 * utf8.h - UTF-8 validity, repair and boundary-safe truncation.
 *
 * Why: every client-visible message ends up in a JSON string, and JSON text
 * must be valid UTF-8 (jansson refuses to build or encode anything else).
 * Input from the network is checked with sk_utf8_valid before anything else
 * sees it; text that is cut to a length is cut with sk_utf8_prefix so a
 * multi-byte character is never split; and sk_utf8_repair is the last line
 * of defence that turns any byte string into valid UTF-8 so a reply can
 * always be encoded.
 *
 * Valid means RFC 3629: shortest forms only, no surrogates (U+D800..DFFF),
 * nothing above U+10FFFF. NUL bytes are valid UTF-8; callers that cannot
 * carry them check for them separately.
 */
#ifndef SK_CORE_UTF8_H
#define SK_CORE_UTF8_H

#include "core/buf.h"

#include <stddef.h>
#include <stdint.h>

/* Non-zero if the len bytes at s are valid UTF-8. */
int sk_utf8_valid(const char *s, size_t len);

/* The largest n <= max such that s[0..n) ends on a character boundary of
 * the len bytes at s (s need not be valid: an invalid byte is one
 * character). */
size_t sk_utf8_prefix(const char *s, size_t len, size_t max);

/* Appends the len bytes at s to out with every invalid sequence replaced by
 * U+FFFD (as Go's strings.ToValidUTF8 does, one replacement per maximal
 * invalid run). */
void sk_utf8_repair(sk_buf *out, const char *s, size_t len);

/* Decodes the character at s (len > 0 bytes available) into *cp and returns
 * its length in bytes; an invalid byte is one character, U+FFFD (what Go's
 * range over a string yields, so code point columns agree with cel-go). */
size_t sk_utf8_decode(const char *s, size_t len, uint32_t *cp);

/* Narrows the bytes [*start, *end) of s to leave out the leading
 * and trailing white space Go's strings.TrimSpace removes: unicode.IsSpace,
 * the ASCII six and U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
 * U+202F, U+205F and U+3000. kube trims expressions and messages so. */
void sk_utf8_trim_space(const char *s, size_t *start, size_t *end);

/* Writes cp (<= U+10FFFF, not a surrogate) as UTF-8 to out; its length. */
size_t sk_utf8_encode(uint32_t cp, char out[4]);

/* Appends the len bytes at s as Go's strconv.Quote writes them: \a \b \f
 * \n \r \t \v \" \\, other non-printable characters as \xNN (below
 * U+0080 and invalid bytes), \uNNNN or \UNNNNNNNN, printable ones verbatim.
 * Unlike sk_buf_go_quoted it reads NULs and decodes UTF-8. Go's
 * unicode.IsPrint is approximated without its tables: controls (C0, DEL,
 * C1), the space separators other than ' ', the format characters of the
 * Latin, Arabic, general punctuation and specials blocks, private use,
 * surrogates, noncharacters and the unassigned planes 4 to 13 are
 * non-printable; unassigned code points elsewhere (non-printable in Go) are
 * printed verbatim. */
void sk_utf8_go_quote(sk_buf *b, const char *s, size_t len);

#endif
