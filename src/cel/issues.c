/*
 * issues.c - see issues.h. cel-go's Error.ToDisplayString: tabs in the
 * snippet become spaces, the indicator counts code points (a multi-byte
 * one is U+FF0E, the caret under one U+FF3E), and an error without a line
 * (line -1: a limit) has no snippet. cel-go reports at most 100 errors,
 * then "%d more errors were truncated", and shows no line longer than
 * 16384 bytes.
 */
#include "cel/issues.h"

#include <string.h>

#define MAX_REPORTED 100
#define MAX_SNIPPET 16384 /* bytes of a line cel-go still shows */

/* The length of the UTF-8 sequence starting with byte c (1 for a stray byte). */
static size_t seq_len(unsigned char c)
{
    return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
}

void sk_cel_issue_format(sk_buf *b, const char *src, size_t len, int line, int col,
                         const char *message)
{
    sk_buf_printf(b, "ERROR: <input>:%d:%d: %s", line, col, message);
    if (line < 1)
        return;
    size_t start = 0;
    for (int l = 1; l < line && start <= len; l++) {
        const char *nl = memchr(src + start, '\n', len - start);
        if (!nl)
            return; /* no such line: no snippet */
        start = (size_t)(nl - src) + 1;
    }
    const char *nl = memchr(src + start, '\n', len - start);
    size_t end = nl ? (size_t)(nl - src) : len;
    if (end - start > MAX_SNIPPET)
        return;
    sk_buf_puts(b, "\n | ");
    for (size_t i = start; i < end; i++)
        sk_buf_putc(b, src[i] == '\t' ? ' ' : src[i]);
    sk_buf_puts(b, "\n | ");
    size_t i = start;
    for (int c = 1; c < col && i < end; c++) {
        size_t n = seq_len((unsigned char)src[i]);
        sk_buf_puts(b, n > 1 ? "\xEF\xBC\x8E" : ".");
        i += n;
    }
    sk_buf_puts(b, i < end && seq_len((unsigned char)src[i]) > 1 ? "\xEF\xBC\xBE" : "^");
}

void sk_cel_issues_format(sk_buf *b, const char *src, size_t len, const sk_cel_ast *ast)
{
    size_t n = sk_cel_ast_error_count(ast);
    for (size_t i = 0; i < n && i < MAX_REPORTED; i++) {
        const sk_cel_diag *d = sk_cel_ast_error(ast, i);
        if (i > 0)
            sk_buf_putc(b, '\n');
        sk_cel_issue_format(b, src, len, d->line, d->col, d->message);
    }
    if (n > MAX_REPORTED)
        sk_buf_printf(b, "\n%zu more errors were truncated", n - MAX_REPORTED);
}
