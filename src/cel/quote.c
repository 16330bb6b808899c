/*
 * quote.c - Go's %q into the arena (quote.h), over core's
 * sk_utf8_go_quote.
 */
#include "cel/quote.h"

#include "core/buf.h"
#include "core/utf8.h"

const char *sk_cel_go_quote(sk_arena *a, const char *s, size_t len)
{
    sk_buf b = SK_BUF_INIT;
    sk_utf8_go_quote(&b, s, len);
    const char *q = sk_arena_strndup(a, b.data ? b.data : "", b.len);
    sk_buf_free(&b);
    return q;
}
