/*
 * fuzz_cel_eval.c - libFuzzer target: the CEL evaluator (cel/eval.h) over
 * whatever parses (cel/parse.h, macros and optional syntax on, as in
 * Kubernetes), with a JSON
 * object bound as self (a small Kubernetes-like object: maps, lists,
 * strings, ints, a double, a bool, a null) and a small step bound.
 *
 * Invariants checked: a result always comes back; past the bound it is
 * the step-limit error and nothing else; under it, it is a well-formed
 * value (no error inside a list or map, map keys of the four key types and
 * pairwise unequal); evaluating again gives the same steps and the same
 * kind of result (the evaluator is pure). Time, memory and stack are the
 * fuzzer's and the sanitizers' to watch: the bound is what keeps any input
 * from running away.
 */
#include "cel/eval.h"
#include "cel/parse.h"
#include "core/arena.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 20000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_value(const sk_cel_val *v)
{
    switch (v->type) {
    case SK_CEL_V_LIST:
        for (size_t i = 0; i < v->u.list.n; i++) {
            if (v->u.list.items[i]->type == SK_CEL_V_ERROR)
                abort();
            check_value(v->u.list.items[i]);
        }
        break;
    case SK_CEL_V_MAP:
        for (size_t i = 0; i < v->u.map.n; i++) {
            const sk_cel_val *k = v->u.map.keys[i];
            if (k->type != SK_CEL_V_BOOL && k->type != SK_CEL_V_INT && k->type != SK_CEL_V_UINT &&
                k->type != SK_CEL_V_STRING)
                abort();
            if (sk_cel_map_find(v, k, NULL) != (long)i || v->u.map.vals[i]->type == SK_CEL_V_ERROR)
                abort();
            check_value(v->u.map.vals[i]);
        }
        break;
    case SK_CEL_V_OPTIONAL:
        if (v->u.opt && v->u.opt->type == SK_CEL_V_ERROR)
            abort();
        if (v->u.opt)
            check_value(v->u.opt);
        break;
    case SK_CEL_V_DURATION:
    case SK_CEL_V_TIMESTAMP:
        if (v->u.time.nsec < 0 || v->u.time.nsec >= 1000000000)
            abort();
        break;
    case SK_CEL_V_ERROR:
        if (!v->u.str.s || !v->u.str.s[0])
            abort();
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_t *vars;
    if (!vars)
        vars = json_loads("{\"self\": {\"metadata\": {\"name\": \"a\", \"labels\": {\"k\": \"v\"}},"
                          " \"spec\": {\"replicas\": 3, \"ratio\": 0.5, \"paused\": false,"
                          " \"ports\": [{\"port\": 80, \"name\": \"http\"}, {\"port\": 443}],"
                          " \"tags\": [\"x\", \"y\", \"x\"], \"none\": null}}}",
                          0, NULL);
    sk_arena *a = sk_arena_new();
    sk_cel_parse_options popt = {.enable_optional_syntax = 1, .enable_optional_macros = 1};
    sk_cel_ast *ast = sk_cel_parse(a, (const char *)data, size, &popt);
    const sk_cel_expr *e = sk_cel_ast_expr(ast);
    if (e) {
        sk_cel_eval_options opt = {.vars = vars, .max_steps = MAX_STEPS};
        sk_cel_usage used, again_used;
        const sk_cel_val *v = sk_cel_eval(a, e, &opt, &used);
        const sk_cel_val *again = sk_cel_eval(a, e, &opt, &again_used);
        uint64_t steps = used.steps;
        if (!v || !again || steps != again_used.steps || used.cost != again_used.cost ||
            v->type != again->type)
            abort();
        if (steps > MAX_STEPS) {
            if (v->type != SK_CEL_V_ERROR ||
                strncmp(v->u.str.s, "evaluation step limit exceeded", 30) != 0)
                abort();
        } else {
            check_value(v);
        }
    }
    sk_arena_free(a);
    return 0;
}
