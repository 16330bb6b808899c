/*
 * cel_parse.c - the CEL parser (src/cel) as a filter, for
 * tests/cel/parse_test.py: reads a JSON array of expressions on stdin and
 * writes a JSON array with, for each, {"ast": debug string} or {"errors":
 * [{"line", "col", "message"}], "display": the errors as cel-go prints
 * them} in cel-go's order.
 *
 * usage: cel_parse [--max-depth N] [--optional] [--escape] [--no-macros]
 *                  [--check]
 * (the options of cel-go's parser the expected trees were made with;
 * --check: type-checked by cel/check.h with nothing declared, as cel-go's
 * checker ran on the parsing suite, so every free identifier but a type's
 * name is refused, and only "display" is written for a refusal).
 */
#include "cel/check.h"
#include "cel/debug.h"
#include "cel/issues.h"
#include "cel/parse.h"
#include "core/arena.h"
#include "core/buf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    sk_cel_parse_options opt = {0};
    int check = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max-depth") == 0 && i + 1 < argc)
            opt.max_recursion_depth = atoi(argv[++i]);
        else if (strcmp(argv[i], "--optional") == 0)
            opt.enable_optional_syntax = 1;
        else if (strcmp(argv[i], "--escape") == 0)
            opt.enable_ident_escape = 1;
        else if (strcmp(argv[i], "--no-macros") == 0)
            opt.disable_macros = 1;
        else if (strcmp(argv[i], "--check") == 0)
            check = 1;
        else {
            fprintf(stderr,
                    "usage: %s [--max-depth N] [--optional] [--escape] [--no-macros] [--check]\n",
                    argv[0]);
            return 2;
        }
    }
    json_error_t jerr;
    json_t *in = json_loadf(stdin, JSON_ALLOW_NUL, &jerr);
    if (!json_is_array(in)) {
        fprintf(stderr, "cel_parse: stdin is not a JSON array: %s\n", jerr.text);
        return 2;
    }
    json_t *out = json_array();
    size_t i;
    json_t *item;
    json_array_foreach(in, i, item)
    {
        sk_arena *a = sk_arena_new();
        const char *src = json_string_value(item);
        size_t len = json_string_length(item);
        if (check) {
            static const sk_cel_check_env nothing_declared = {0};
            sk_buf errors = SK_BUF_INIT, b = SK_BUF_INIT;
            sk_cel_ast *ast = sk_cel_parse(a, src, len, &opt);
            const sk_cel_expr *e = sk_cel_ast_expr(ast);
            if (!e)
                sk_cel_issues_format(&errors, src, len, ast);
            else if (!sk_cel_check(a, e, src, len, &nothing_declared, &errors))
                e = NULL;
            if (e)
                sk_cel_debug_string(&b, e);
            json_array_append_new(out, e ? json_pack("{s:s#}", "ast", b.data, b.len)
                                         : json_pack("{s:s#}", "display", errors.data, errors.len));
            sk_buf_free(&errors);
            sk_buf_free(&b);
            sk_arena_free(a);
            continue;
        }
        sk_cel_ast *ast = sk_cel_parse(a, src, len, &opt);
        const sk_cel_expr *e = sk_cel_ast_expr(ast);
        if (e) {
            sk_buf b = SK_BUF_INIT;
            sk_cel_debug_string(&b, e);
            json_array_append_new(out, json_pack("{s:s#}", "ast", b.data, b.len));
            sk_buf_free(&b);
        } else {
            json_t *errs = json_array();
            sk_buf display = SK_BUF_INIT;
            for (size_t k = 0; k < sk_cel_ast_error_count(ast); k++) {
                const sk_cel_diag *d = sk_cel_ast_error(ast, k);
                json_array_append_new(errs, json_pack("{s:i,s:i,s:s}", "line", d->line, "col",
                                                      d->col, "message", d->message));
            }
            sk_cel_issues_format(&display, src, len, ast);
            json_array_append_new(out, json_pack("{s:o,s:s#}", "errors", errs, "display",
                                                 display.data ? display.data : "", display.len));
            sk_buf_free(&display);
        }
        sk_arena_free(a);
    }
    json_dumpf(out, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(out);
    json_decref(in);
    return 0;
}
