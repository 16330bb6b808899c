/*
 * conditions.c - see conditions.h. The texts are matchconditions/matcher.go's:
 * each failure "expression 'E' resulted in error: ..." or "compilation
 * error: ..." (the compiler's detail), joined as utilerrors' aggregate does
 * (one as itself, more in brackets, ", " between); running out of budget
 * stops at once and is the only failure reported.
 */
#include "policy/conditions.h"
#include "cel/admission.h"
#include "core/arena.h"
#include "core/buf.h"

#include <string.h>

/* celconfig.RuntimeCELCostBudgetMatchConditions, in kube's runtime cost
 * (cel/eval.h); the evaluator's steps bound beside it */
#define CONDITIONS_BUDGET 2500000

typedef struct condition {
    const char *expression;
    const sk_cel_expr *tree;
    const char *compile_error; /* when tree is NULL */
} condition;

struct sk_conditions {
    sk_arena *arena; /* everything below */
    condition *conds;
    size_t n;
};

sk_conditions *sk_conditions_new(const json_t *conds, unsigned decl)
{
    size_t n = json_array_size(conds);
    if (n == 0)
        return NULL;
    sk_arena *a = sk_arena_new();
    sk_conditions *c = sk_arena_alloc(a, sizeof *c);
    c->arena = a;
    c->n = n;
    c->conds = sk_arena_alloc(a, n * sizeof *c->conds);
    sk_cel_adm *adm = sk_cel_adm_new(a);
    for (size_t i = 0; i < n; i++) {
        condition *k = &c->conds[i];
        const char *expr =
            json_string_value(json_object_get(json_array_get(conds, i), "expression"));
        k->expression = sk_arena_strdup(a, expr ? expr : "");
        sk_buf errors = SK_BUF_INIT;
        k->tree = sk_cel_adm_compile(adm, k->expression, decl | SK_CEL_ADM_AUTHORIZER, 1,
                                     SK_CEL_ADM_BOOL, NULL, &errors);
        k->compile_error = k->tree ? NULL : sk_arena_strdup(a, errors.data ? errors.data : "");
        sk_buf_free(&errors);
    }
    return c;
}

void sk_conditions_free(sk_conditions *c)
{
    if (c)
        sk_arena_free(c->arena);
}

int sk_conditions_match(const sk_conditions *c, const sk_cel_eval_options *opt, char **failures)
{
    if (!c)
        return 1;
    sk_arena *ar = sk_arena_new();
    sk_buf all = SK_BUF_INIT; /* ", "-separated */
    size_t n_failures = 0;
    uint64_t left = CONDITIONS_BUDGET, steps_left = CONDITIONS_BUDGET * SK_CEL_STEPS_PER_COST;
    int verdict = 1;
    for (size_t i = 0; i < c->n && verdict; i++) {
        const condition *k = &c->conds[i];
        sk_buf one = SK_BUF_INIT;
        if (k->compile_error) {
            sk_buf_printf(&one, "compilation error: %s", k->compile_error);
        } else {
            sk_cel_eval_options o = *opt;
            o.cost_limit = SK_CEL_PER_CALL_LIMIT;
            o.optimize = 1;
            o.free_presence_tests = 1;
            o.max_steps = steps_left ? steps_left : 1;
            sk_cel_usage used = {0};
            const sk_cel_val *v = sk_cel_eval(ar, k->tree, &o, &used);
            steps_left -= used.steps < steps_left ? used.steps : steps_left;
            if (used.cost > left) {
                /* kube stops at once: the budget is the only failure */
                sk_buf_reset(&all);
                sk_buf_puts(&all, "validation failed due to running out of cost budget, no "
                                  "further validation rules will be run");
                n_failures = 1;
                sk_buf_free(&one);
                break;
            }
            left -= used.cost;
            if (v->type == SK_CEL_V_BOOL && !v->u.b)
                verdict = 0;
            else if (v->type == SK_CEL_V_ERROR)
                sk_buf_printf(&one, "expression '%s' resulted in error: %s", k->expression,
                              v->u.str.s);
        }
        if (one.len) {
            if (n_failures++)
                sk_buf_puts(&all, ", ");
            sk_buf_append(&all, one.data, one.len);
        }
        sk_buf_free(&one);
    }
    int rc = verdict;
    if (verdict && n_failures) {
        sk_buf text = SK_BUF_INIT;
        sk_buf_printf(&text, n_failures > 1 ? "[%s]" : "%s", all.data);
        *failures = sk_buf_steal(&text, NULL);
        rc = -1;
    }
    sk_buf_free(&all);
    sk_arena_free(ar);
    return rc;
}
