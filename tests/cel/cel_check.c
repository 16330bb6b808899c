/*
 * cel_check.c - the CEL type checker (src/cel/check.h) as a filter, for
 * tests/cel/check_test.py: reads a JSON array of tests {"expr", "vars":
 * [[name, type], ...], "cross": bool, "disableMacros": bool,
 * "twoVar": bool (default true: two-variable comprehension macros)} on stdin and writes a JSON array
 * with, for each, {"type": "list(int)"} (cel-go's FormatCELType of the
 * result), {"error": issues} (cel-go's display form) or {"parse_error":
 * issues}.
 *
 * A type is written as a JSON array: ["int"] (any primitive by its CEL
 * name, "dyn", "null_type", "duration", "timestamp"), ["list", t],
 * ["map", k, v], ["type", t], ["param", name], ["opaque", name, params...].
 */
#include "cel/check.h"
#include "cel/issues.h"
#include "cel/parse.h"
#include "core/arena.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const sk_cel_ty *type_of(sk_arena *a, const json_t *j)
{
    static const struct {
        const char *name;
        sk_cel_ty_kind kind;
    } prims[] = {{"dyn", SK_CEL_TY_DYN},           {"null_type", SK_CEL_TY_NULL},
                 {"bool", SK_CEL_TY_BOOL},         {"int", SK_CEL_TY_INT},
                 {"uint", SK_CEL_TY_UINT},         {"double", SK_CEL_TY_DOUBLE},
                 {"string", SK_CEL_TY_STRING},     {"bytes", SK_CEL_TY_BYTES},
                 {"duration", SK_CEL_TY_DURATION}, {"timestamp", SK_CEL_TY_TIMESTAMP}};
    const char *tag = json_string_value(json_array_get(j, 0));
    if (!tag)
        return NULL;
    for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
        if (strcmp(tag, prims[i].name) == 0)
            return sk_cel_ty_of(prims[i].kind);
    if (strcmp(tag, "list") == 0)
        return sk_cel_ty_list(a, type_of(a, json_array_get(j, 1)));
    if (strcmp(tag, "map") == 0)
        return sk_cel_ty_map(a, type_of(a, json_array_get(j, 1)), type_of(a, json_array_get(j, 2)));
    sk_cel_ty *t = sk_arena_alloc(a, sizeof *t);
    memset(t, 0, sizeof *t);
    if (strcmp(tag, "type") == 0) {
        t->kind = SK_CEL_TY_TYPE;
        if (json_array_size(j) > 1)
            t->p[t->np++] = type_of(a, json_array_get(j, 1));
        return t;
    }
    if (strcmp(tag, "param") == 0) {
        t->kind = SK_CEL_TY_PARAM;
        t->name = sk_arena_strdup(a, json_string_value(json_array_get(j, 1)));
        return t;
    }
    t->kind = SK_CEL_TY_OPAQUE;
    t->name = sk_arena_strdup(a, json_string_value(json_array_get(j, 1)));
    for (size_t i = 2; i < json_array_size(j) && t->np < 2; i++)
        t->p[t->np++] = type_of(a, json_array_get(j, i));
    return t;
}

int main(void)
{
    json_error_t jerr;
    json_t *in = json_loadf(stdin, JSON_ALLOW_NUL, &jerr);
    if (!json_is_array(in)) {
        fprintf(stderr, "cel_check: stdin is not a JSON array: %s\n", jerr.text);
        return 2;
    }
    json_t *out = json_array();
    size_t i;
    json_t *test;
    json_array_foreach(in, i, test)
    {
        sk_arena *a = sk_arena_new();
        const json_t *expr = json_object_get(test, "expr");
        const char *src = json_string_value(expr);
        size_t len = json_string_length(expr);
        sk_cel_parse_options popt = {.disable_macros =
                                         json_is_true(json_object_get(test, "disableMacros")),
                                     .enable_optional_syntax = 1,
                                     .enable_optional_macros = 1,
                                     .enable_two_var_macros =
                                         !json_is_false(json_object_get(test, "twoVar"))};
        sk_cel_ast *ast = sk_cel_parse(a, src, len, &popt);
        const sk_cel_expr *e = sk_cel_ast_expr(ast);
        sk_buf errors = SK_BUF_INIT;
        json_t *r;
        if (!e) {
            sk_cel_issues_format(&errors, src, len, ast);
            r = json_pack("{ss}", "parse_error", errors.data ? errors.data : "");
        } else {
            const json_t *vars = json_object_get(test, "vars");
            size_t n = json_array_size(vars);
            sk_cel_check_var *v = sk_arena_alloc(a, (n + 1) * sizeof *v);
            for (size_t k = 0; k < n; k++) {
                const json_t *d = json_array_get(vars, k);
                v[k].name = json_string_value(json_array_get(d, 0));
                v[k].type = type_of(a, json_array_get(d, 1));
            }
            sk_cel_check_env env = {.vars = v,
                                    .nvars = n,
                                    .cross_type_numeric =
                                        json_is_true(json_object_get(test, "cross"))};
            sk_cel_checked *c = sk_cel_check(a, e, src, len, &env, &errors);
            if (c) {
                sk_buf t = SK_BUF_INIT;
                sk_cel_ty_format(&t, sk_cel_checked_type(c));
                r = json_pack("{ss}", "type", t.data ? t.data : "");
                sk_buf_free(&t);
            } else {
                r = json_pack("{ss}", "error", errors.data ? errors.data : "");
            }
        }
        sk_buf_free(&errors);
        json_array_append_new(out, r);
        sk_arena_free(a);
    }
    json_dumpf(out, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(out);
    json_decref(in);
    return 0;
}
