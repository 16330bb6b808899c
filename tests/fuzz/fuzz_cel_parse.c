/*
 * fuzz_cel_parse.c - libFuzzer target: the CEL parser (cel/parse.h) and its
 * debug printer over any bytes, with any options (the first byte chooses
 * them).
 *
 * Invariants checked: a parse gives a tree or at least one error, never
 * both; errors are in cel-go's order (by line, then column) at a real
 * position (line >= 1, col >= 1) or at none (-1:0, the limits); a tree's
 * debug string is non-empty and ends in a node's adornment, and it is the
 * same when the optional syntax and backquoted names are enabled and the
 * limits are the defaults (each only accepts more) (fuzz_cel_check takes
 * the trees on to the type checker). Both recursion
 * limits are small here (the first byte's high bits) so deep inputs reach
 * them often; memory errors and unbounded recursion are the sanitizers'.
 */
#include "cel/debug.h"
#include "cel/parse.h"
#include "core/arena.h"
#include "core/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    sk_cel_parse_options opt = {
        .enable_optional_syntax = data[0] & 1,
        /* The optional library's macros come with its syntax, as in
         * Kubernetes. */
        .enable_optional_macros = data[0] & 1,
        .enable_ident_escape = (data[0] >> 1) & 1,
        .disable_macros = (data[0] >> 2) & 1,
        .max_recursion_depth = (data[0] >> 3) ? (data[0] >> 3) : 0,
    };
    sk_arena *a = sk_arena_new();
    sk_cel_ast *ast = sk_cel_parse(a, (const char *)data + 1, size - 1, &opt);
    const sk_cel_expr *e = sk_cel_ast_expr(ast);
    size_t n = sk_cel_ast_error_count(ast);
    if (!e == !n)
        abort();
    for (size_t i = 0; i < n; i++) {
        const sk_cel_diag *d = sk_cel_ast_error(ast, i);
        if (!d->message || !d->message[0])
            abort();
        if (!(d->line == -1 && d->col == 0) && (d->line < 1 || d->col < 1))
            abort();
        if (i > 0) {
            const sk_cel_diag *p = sk_cel_ast_error(ast, i - 1);
            if (p->line > d->line || (p->line == d->line && p->col > d->col))
                abort();
        }
    }
    if (e) {
        sk_buf b = SK_BUF_INIT, wide = SK_BUF_INIT;
        sk_cel_debug_string(&b, e);
        if (b.len == 0 || b.data[b.len - 1] != '#')
            abort();
        sk_cel_parse_options all = {.enable_optional_syntax = 1,
                                    .enable_ident_escape = 1,
                                    .disable_macros = opt.disable_macros,
                                    .enable_optional_macros = opt.enable_optional_macros};
        const sk_cel_expr *w =
            sk_cel_ast_expr(sk_cel_parse(a, (const char *)data + 1, size - 1, &all));
        if (!w)
            abort();
        sk_cel_debug_string(&wide, w);
        if (wide.len != b.len || memcmp(wide.data, b.data, b.len) != 0)
            abort();
        sk_buf_free(&wide);
        sk_buf_free(&b);
    }
    sk_arena_free(a);
    return 0;
}
