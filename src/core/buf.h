/*
 * buf.h - a growable byte buffer.
 *
 * Used to render JSON fragments and HTTP bodies. Growth doubles, so appends
 * are amortised O(1). The buffer owns its bytes; sk_buf_steal hands them to
 * the caller. Allocation failure aborts (see SK_CHECK_ALLOC): a server that
 * cannot allocate a few KiB cannot make progress or report it honestly.
 */
#ifndef SK_CORE_BUF_H
#define SK_CORE_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct sk_buf {
    char *data; /* always NUL-terminated when cap > 0 */
    size_t len;
    size_t cap;
} sk_buf;

#define SK_BUF_INIT {NULL, 0, 0}

void sk_buf_reserve(sk_buf *b, size_t extra);
void sk_buf_append(sk_buf *b, const void *data, size_t len);
void sk_buf_puts(sk_buf *b, const char *s);
void sk_buf_putc(sk_buf *b, char c);
void sk_buf_printf(sk_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sk_buf_vprintf(sk_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Appends s as a JSON string literal, quotes included. */
void sk_buf_json_string(sk_buf *b, const char *s);
/* Appends s as Go's %q writes it, which Kubernetes error messages quote
 * with: \" \\ \a \b \f \n \r \t \v, other control bytes as \xNN,
 * everything else (UTF-8 included) verbatim. */
void sk_buf_go_quoted(sk_buf *b, const char *s);
/* A new string: before, s as %q, after (a message in kube's words). */
char *sk_go_quoted_in(const char *before, const char *s, const char *after);
/* Appends d as Go's %v writes a float64 (strconv 'g', shortest): "1.5",
 * "100000", "1e+06", "1e-05", "NaN", "+Inf". */
void sk_buf_go_float(sk_buf *b, double d);
void sk_buf_reset(sk_buf *b);
/* Returns the bytes (new reference for the caller, NUL-terminated) and empties b. */
char *sk_buf_steal(sk_buf *b, size_t *len_out);
void sk_buf_free(sk_buf *b);

#endif
