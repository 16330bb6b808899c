/*
 * cel_eval.c - the CEL evaluator (src/cel) as a filter, for
 * tests/cel/eval_test.py: reads a JSON array of tests {"expr", "bindings":
 * {name: value}, "disableMacros"} on stdin and writes a JSON array with,
 * for each, {"value": value}, {"error": message} (an error value) or
 * {"parse_error": message}.
 *
 * Values are tagged so that JSON keeps CEL's types: ["null"], ["bool", b],
 * ["int", "decimal"], ["uint", "decimal"], ["double", number or "NaN",
 * "Infinity", "-Infinity"], ["string", s], ["bytes", "hex"], ["list",
 * [values]], ["map", [[key, value], ...]], ["type", name], ["duration",
 * "nanoseconds"], ["timestamp", "unix seconds", nanos], ["optional"] (none)
 * or ["optional", value]. Bindings are
 * handed to the evaluator through its resolve callback, as a caller with
 * values JSON cannot spell (uint, bytes) would.
 *
 * usage: cel_eval [--max-steps N]
 */
#include "cel/eval.h"
#include "cel/parse.h"
#include "core/arena.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sk_cel_val *from_tagged(sk_arena *a, const json_t *t)
{
    const char *tag = json_string_value(json_array_get(t, 0));
    const json_t *v = json_array_get(t, 1);
    if (!tag)
        return NULL;
    if (strcmp(tag, "null") == 0)
        return sk_cel_null();
    if (strcmp(tag, "bool") == 0)
        return sk_cel_bool(json_is_true(v));
    if (strcmp(tag, "int") == 0)
        return sk_cel_int(a, strtoll(json_string_value(v), NULL, 10));
    if (strcmp(tag, "uint") == 0)
        return sk_cel_uint(a, strtoull(json_string_value(v), NULL, 10));
    if (strcmp(tag, "double") == 0)
        return sk_cel_double(a, json_is_string(v) ? strtod(json_string_value(v), NULL)
                                                  : json_number_value(v));
    if (strcmp(tag, "string") == 0)
        return sk_cel_string(a, sk_arena_strndup(a, json_string_value(v), json_string_length(v)),
                             json_string_length(v));
    if (strcmp(tag, "bytes") == 0) {
        const char *hex = json_string_value(v);
        size_t n = strlen(hex) / 2;
        char *b = sk_arena_alloc(a, n + 1);
        for (size_t i = 0; i < n; i++) {
            unsigned x;
            sscanf(hex + 2 * i, "%2x", &x);
            b[i] = (char)x;
        }
        return sk_cel_bytes(a, b, n);
    }
    if (strcmp(tag, "type") == 0)
        return sk_cel_type(a, sk_arena_strdup(a, json_string_value(v)));
    if (strcmp(tag, "duration") == 0) {
        long long ns = strtoll(json_string_value(v), NULL, 10);
        long long sec = ns / 1000000000 - (ns % 1000000000 < 0);
        return sk_cel_duration(a, sec, (int32_t)((ns % 1000000000 + 1000000000) % 1000000000));
    }
    if (strcmp(tag, "timestamp") == 0)
        return sk_cel_timestamp(a, strtoll(json_string_value(v), NULL, 10),
                                (int32_t)json_integer_value(json_array_get(t, 2)));
    if (strcmp(tag, "optional") == 0) {
        const sk_cel_val *x = v ? from_tagged(a, v) : NULL;
        return v && !x ? NULL : sk_cel_optional(a, x);
    }
    if (strcmp(tag, "list") == 0) {
        size_t n = json_array_size(v);
        const sk_cel_val **items = sk_arena_alloc(a, (n + 1) * sizeof *items);
        for (size_t i = 0; i < n; i++)
            if (!(items[i] = from_tagged(a, json_array_get(v, i))))
                return NULL;
        return sk_cel_list(a, items, n);
    }
    if (strcmp(tag, "map") == 0) {
        size_t n = json_array_size(v);
        const sk_cel_val **keys = sk_arena_alloc(a, (n + 1) * sizeof *keys);
        const sk_cel_val **vals = sk_arena_alloc(a, (n + 1) * sizeof *vals);
        for (size_t i = 0; i < n; i++) {
            const json_t *kv = json_array_get(v, i);
            keys[i] = from_tagged(a, json_array_get(kv, 0));
            vals[i] = from_tagged(a, json_array_get(kv, 1));
            if (!keys[i] || !vals[i])
                return NULL;
        }
        return sk_cel_map(a, keys, vals, n);
    }
    return NULL;
}

static json_t *to_tagged(const sk_cel_val *v)
{
    char buf[32];
    switch (v->type) {
    case SK_CEL_V_NULL:
        return json_pack("[s]", "null");
    case SK_CEL_V_BOOL:
        return json_pack("[s,b]", "bool", v->u.b);
    case SK_CEL_V_INT:
        snprintf(buf, sizeof buf, "%lld", (long long)v->u.i);
        return json_pack("[s,s]", "int", buf);
    case SK_CEL_V_UINT:
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->u.u);
        return json_pack("[s,s]", "uint", buf);
    case SK_CEL_V_DOUBLE:
        if (isnan(v->u.d))
            return json_pack("[s,s]", "double", "NaN");
        if (isinf(v->u.d))
            return json_pack("[s,s]", "double", v->u.d > 0 ? "Infinity" : "-Infinity");
        return json_pack("[s,f]", "double", v->u.d);
    case SK_CEL_V_STRING:
        return json_pack("[s,s#]", "string", v->u.str.s, v->u.str.len);
    case SK_CEL_V_BYTES: {
        char *hex = malloc(2 * v->u.str.len + 1);
        for (size_t i = 0; i < v->u.str.len; i++)
            snprintf(hex + 2 * i, 3, "%02x", (unsigned char)v->u.str.s[i]);
        hex[2 * v->u.str.len] = 0;
        json_t *r = json_pack("[s,s]", "bytes", hex);
        free(hex);
        return r;
    }
    case SK_CEL_V_LIST: {
        json_t *items = json_array();
        for (size_t i = 0; i < v->u.list.n; i++)
            json_array_append_new(items, to_tagged(v->u.list.items[i]));
        return json_pack("[s,o]", "list", items);
    }
    case SK_CEL_V_MAP: {
        json_t *entries = json_array();
        for (size_t i = 0; i < v->u.map.n; i++)
            json_array_append_new(entries, json_pack("[o,o]", to_tagged(v->u.map.keys[i]),
                                                     to_tagged(v->u.map.vals[i])));
        return json_pack("[s,o]", "map", entries);
    }
    case SK_CEL_V_TYPE:
        return json_pack("[s,s]", "type", v->u.str.s);
    case SK_CEL_V_DURATION:
        snprintf(buf, sizeof buf, "%lld",
                 (long long)((__int128)v->u.time.sec * 1000000000 + v->u.time.nsec));
        return json_pack("[s,s]", "duration", buf);
    case SK_CEL_V_TIMESTAMP:
        snprintf(buf, sizeof buf, "%lld", (long long)v->u.time.sec);
        return json_pack("[s,s,i]", "timestamp", buf, (json_int_t)v->u.time.nsec);
    case SK_CEL_V_OPTIONAL:
        return v->u.opt ? json_pack("[s,o]", "optional", to_tagged(v->u.opt))
                        : json_pack("[s]", "optional");
    default:
        return NULL;
    }
}

typedef struct bindings {
    sk_arena *a;
    const json_t *values;
} bindings;

static const sk_cel_val *resolve(void *ctx, sk_arena *a, const char *name)
{
    bindings *b = ctx;
    const json_t *t = json_object_get(b->values, name);
    return t ? from_tagged(a, t) : NULL;
}

int main(int argc, char **argv)
{
    uint64_t max_steps = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max-steps") == 0 && i + 1 < argc) {
            max_steps = strtoull(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [--max-steps N]\n", argv[0]);
            return 2;
        }
    }
    json_error_t jerr;
    json_t *in = json_loadf(stdin, JSON_ALLOW_NUL, &jerr);
    if (!json_is_array(in)) {
        fprintf(stderr, "cel_eval: stdin is not a JSON array: %s\n", jerr.text);
        return 2;
    }
    json_t *out = json_array();
    size_t i;
    json_t *test;
    json_array_foreach(in, i, test)
    {
        sk_arena *a = sk_arena_new();
        const json_t *src = json_object_get(test, "expr");
        /* cel-go's conformance runner parses with backquoted names on. */
        sk_cel_parse_options popt = {.disable_macros =
                                         json_is_true(json_object_get(test, "disableMacros")),
                                     .enable_ident_escape = 1,
                                     .enable_optional_syntax = 1,
                                     .enable_optional_macros = 1,
                                     .enable_two_var_macros = 1};
        sk_cel_ast *ast = sk_cel_parse(a, json_string_value(src), json_string_length(src), &popt);
        const sk_cel_expr *e = sk_cel_ast_expr(ast);
        json_t *r;
        if (!e) {
            r = json_pack("{s:s}", "parse_error", sk_cel_ast_error(ast, 0)->message);
        } else {
            bindings b = {a, json_object_get(test, "bindings")};
            sk_cel_eval_options opt = {
                .resolve = resolve, .resolve_ctx = &b, .max_steps = max_steps};
            const sk_cel_val *v = sk_cel_eval(a, e, &opt, NULL);
            if (v->type == SK_CEL_V_ERROR)
                r = json_pack("{s:s#}", "error", v->u.str.s, v->u.str.len);
            else
                r = json_pack("{s:o}", "value", to_tagged(v));
        }
        json_array_append_new(out, r);
        sk_arena_free(a);
    }
    json_dumpf(out, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17));
    putchar('\n');
    json_decref(out);
    json_decref(in);
    return 0;
}
