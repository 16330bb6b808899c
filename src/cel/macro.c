/*
 * macro.c - the standard macros' expansions (see macro.h), after cel-go's
 * MakeHas, makeQuantifier, MakeMap and MakeFilter: the same checks in the
 * same order, with the same messages, and the same trees; and optMap and
 * optFlatMap as cel-go's optional library expands them.
 */
#include "cel/macro.h"

#include <string.h>

#define ACCU "@result"

typedef enum kind {
    HAS,
    ALL,
    EXISTS,
    EXISTS_ONE,
    MAP,
    FILTER,
    OPT_MAP,
    OPT_FLAT_MAP,
    TRANSFORM_LIST,
    TRANSFORM_MAP,
    TRANSFORM_MAP_ENTRY,
} kind;

static const struct {
    const char *function;
    size_t nargs;
    int receiver;
    kind kind;
    unsigned lib; /* 0: standard; else the SK_CEL_MACROS_* bit it needs */
} macros[] = {
    {"has", 1, 0, HAS, 0},
    {"all", 2, 1, ALL, 0},
    {"exists", 2, 1, EXISTS, 0},
    {"exists_one", 2, 1, EXISTS_ONE, 0},
    {"existsOne", 2, 1, EXISTS_ONE, 0},
    {"map", 2, 1, MAP, 0},
    {"map", 3, 1, MAP, 0},
    {"filter", 2, 1, FILTER, 0},
    {"optMap", 2, 1, OPT_MAP, SK_CEL_MACROS_OPTIONAL},
    {"optFlatMap", 2, 1, OPT_FLAT_MAP, SK_CEL_MACROS_OPTIONAL},
    {"all", 3, 1, ALL, SK_CEL_MACROS_TWO_VAR},
    {"exists", 3, 1, EXISTS, SK_CEL_MACROS_TWO_VAR},
    {"existsOne", 3, 1, EXISTS_ONE, SK_CEL_MACROS_TWO_VAR},
    {"exists_one", 3, 1, EXISTS_ONE, SK_CEL_MACROS_TWO_VAR},
    {"transformList", 3, 1, TRANSFORM_LIST, SK_CEL_MACROS_TWO_VAR},
    {"transformList", 4, 1, TRANSFORM_LIST, SK_CEL_MACROS_TWO_VAR},
    {"transformMap", 3, 1, TRANSFORM_MAP, SK_CEL_MACROS_TWO_VAR},
    {"transformMap", 4, 1, TRANSFORM_MAP, SK_CEL_MACROS_TWO_VAR},
    {"transformMapEntry", 3, 1, TRANSFORM_MAP_ENTRY, SK_CEL_MACROS_TWO_VAR},
    {"transformMapEntry", 4, 1, TRANSFORM_MAP_ENTRY, SK_CEL_MACROS_TWO_VAR},
};

static const sk_cel_expr *accu(sk_arena *a, int line, int col)
{
    return sk_cel_new_ident(a, ACCU, line, col);
}

static const sk_cel_expr *boolean(sk_arena *a, int v, int line, int col)
{
    sk_cel_expr *e = sk_cel_new_const(a, SK_CEL_BOOL, line, col);
    e->u.lit.b = v;
    return e;
}

static const sk_cel_expr *integer(sk_arena *a, int64_t v, int line, int col)
{
    sk_cel_expr *e = sk_cel_new_const(a, SK_CEL_INT, line, col);
    e->u.lit.i = v;
    return e;
}

static const sk_cel_expr *list1(sk_arena *a, const sk_cel_expr *elem, int line, int col)
{
    const sk_cel_expr **elems = NULL;
    if (elem) {
        elems = sk_arena_alloc(a, sizeof *elems);
        elems[0] = elem;
    }
    return sk_cel_new_list(a, elems, elem ? 1 : 0, NULL, 0, line, col);
}

static const sk_cel_expr *optional_call(sk_arena *a, const char *function, const sk_cel_expr *arg,
                                        int line, int col)
{
    const sk_cel_expr **args = sk_arena_alloc(a, sizeof *args);
    args[0] = arg;
    return sk_cel_new_call(a, function, sk_cel_new_ident(a, "optional", line, col), args,
                           arg ? 1 : 0, line, col);
}

/* cel-go's optMap and optFlatMap: target.hasValue() ? [optional.of](the
 * body with v bound to target.value()) : optional.none(), the binding a
 * comprehension over an empty list whose accumulator is v. */
static const sk_cel_expr *opt_map(sk_arena *a, kind k, const sk_cel_expr *target,
                                  const sk_cel_expr *const *args, int line, int col)
{
    const sk_cel_expr *bind = sk_cel_new_comprehension(
        a, "#unused", list1(a, NULL, line, col), args[0]->u.ident,
        sk_cel_new_call(a, "value", target, NULL, 0, line, col), boolean(a, 0, line, col),
        sk_cel_new_ident(a, args[0]->u.ident, line, col), args[1], line, col);
    return sk_cel_new_call3(a, "_?_:_", sk_cel_new_call(a, "hasValue", target, NULL, 0, line, col),
                            k == OPT_MAP ? optional_call(a, "of", bind, line, col) : bind,
                            optional_call(a, "none", NULL, line, col), line, col);
}

/* all, exists and exists_one over predicate pred, as cel-go expands them
 * for one iteration variable or two: 1 with the accumulator's start, the
 * loop condition, the step and the result written (*cond and *result
 * only where they differ from the defaults the caller set), else 0 (k is
 * no quantifier). */
static int quantifier(sk_arena *a, kind k, const sk_cel_expr *pred, int line, int col,
                      const sk_cel_expr **init, const sk_cel_expr **cond,
                      const sk_cel_expr **step, const sk_cel_expr **result)
{
    switch (k) {
    case ALL:
        *init = boolean(a, 1, line, col);
        *cond =
            sk_cel_new_call3(a, "@not_strictly_false", accu(a, line, col), NULL, NULL, line, col);
        *step = sk_cel_new_call3(a, "_&&_", accu(a, line, col), pred, NULL, line, col);
        return 1;
    case EXISTS:
        *init = boolean(a, 0, line, col);
        *cond =
            sk_cel_new_call3(a, "@not_strictly_false",
                             sk_cel_new_call3(a, "!_", accu(a, line, col), NULL, NULL, line, col),
                             NULL, NULL, line, col);
        *step = sk_cel_new_call3(a, "_||_", accu(a, line, col), pred, NULL, line, col);
        return 1;
    case EXISTS_ONE:
        *init = integer(a, 0, line, col);
        *step = sk_cel_new_call3(a, "_?_:_", pred,
                                 sk_cel_new_call3(a, "_+_", accu(a, line, col),
                                                  integer(a, 1, line, col), NULL, line, col),
                                 accu(a, line, col), line, col);
        *result = sk_cel_new_call3(a, "_==_", accu(a, line, col), integer(a, 1, line, col), NULL,
                                   line, col);
        return 1;
    default:
        return 0;
    }
}

/* The two-variable comprehension of kind k over target with variables
 * args[0] and args[1] (checked), as ext/comprehensions.go expands it; its
 * filter and transform are args[2] (and args[3]). */
static void two_var(sk_arena *a, kind k, const sk_cel_expr *target, const sk_cel_expr *const *args,
                    size_t nargs, int line, int col, sk_cel_macro_result *res)
{
    for (int i = 0; i < 2; i++)
        if (args[i]->kind != SK_CEL_IDENT) {
            res->error = "argument must be a simple name";
            res->error_at = args[i];
            return;
        }
    const char *v1 = args[0]->u.ident, *v2 = args[1]->u.ident;
    if (strcmp(v1, v2) == 0) {
        res->error = sk_arena_printf(a, "duplicate variable name: %s", v1);
        res->error_at = args[1];
        return;
    }
    for (int i = 0; i < 2; i++)
        if (strcmp(args[i]->u.ident, ACCU) == 0 || strcmp(args[i]->u.ident, "__result__") == 0) {
            res->error = "iteration variable overwrites accumulator variable";
            res->error_at = args[i];
            return;
        }
    const sk_cel_expr *filter = nargs == 4 ? args[2] : NULL, *transform = args[nargs - 1];
    const sk_cel_expr *init, *cond = boolean(a, 1, line, col), *step,
                                  *result = accu(a, line, col);
    if (!quantifier(a, k, args[2], line, col, &init, &cond, &step, &result)) {
        init = k == TRANSFORM_LIST ? list1(a, NULL, line, col)
                                   : sk_cel_new_object(a, NULL, NULL, 0, line, col);
        if (k == TRANSFORM_LIST)
            step = sk_cel_new_call3(a, "_+_", accu(a, line, col), list1(a, transform, line, col),
                                    NULL, line, col);
        else if (k == TRANSFORM_MAP)
            step = sk_cel_new_call3(a, "cel.@mapInsert", accu(a, line, col),
                                    sk_cel_new_ident(a, v1, line, col), transform, line, col);
        else /* TRANSFORM_MAP_ENTRY */
            step = sk_cel_new_call3(a, "cel.@mapInsert", accu(a, line, col), transform, NULL,
                                    line, col);
        if (filter)
            step = sk_cel_new_call3(a, "_?_:_", filter, step, accu(a, line, col), line, col);
    }
    sk_cel_expr *c =
        sk_cel_new_comprehension(a, v1, target, ACCU, init, cond, step, result, line, col);
    c->u.comp.iter_var2 = v2;
    res->expr = c;
}

int sk_cel_macro_expand(sk_arena *a, const char *function, const sk_cel_expr *target,
                        const sk_cel_expr *const *args, size_t nargs, unsigned libs, int line,
                        int col, sk_cel_macro_result *res)
{
    size_t m = 0;
    for (; m < sizeof macros / sizeof macros[0]; m++)
        if (strcmp(macros[m].function, function) == 0 && macros[m].nargs == nargs &&
            macros[m].receiver == (target != NULL) && (!macros[m].lib || (libs & macros[m].lib)))
            break;
    if (m == sizeof macros / sizeof macros[0])
        return 0;
    kind k = macros[m].kind;
    memset(res, 0, sizeof *res);
    if (macros[m].lib == SK_CEL_MACROS_TWO_VAR) {
        two_var(a, k, target, args, nargs, line, col, res);
        return 1;
    }
    if (k == OPT_MAP || k == OPT_FLAT_MAP) {
        if (args[0]->kind == SK_CEL_IDENT)
            res->expr = opt_map(a, k, target, args, line, col);
        else
            res->error = k == OPT_MAP ? "optMap() variable name must be a simple identifier"
                                      : "optFlatMap() variable name must be a simple identifier";
        goto out;
    }
    if (k == HAS) {
        /* at the call, as cel-go's nextMacroID places it: a checker's
         * "undefined field" for has(x.f) points at has's '(' */
        if (args[0]->kind == SK_CEL_SELECT)
            res->expr = sk_cel_new_select(a, args[0]->u.select.operand, args[0]->u.select.field, 1,
                                          line, col);
        else
            res->error = "invalid argument to has() macro";
        goto out;
    }
    if (args[0]->kind != SK_CEL_IDENT) {
        res->error = k == MAP || k == FILTER ? "argument is not an identifier"
                                             : "argument must be a simple name";
        goto out;
    }
    const char *v = args[0]->u.ident;
    if (strcmp(v, ACCU) == 0 || strcmp(v, "__result__") == 0) {
        res->error = "iteration variable overwrites accumulator variable";
        goto out;
    }
    const sk_cel_expr *init, *cond = boolean(a, 1, line, col), *step,
                                  *result = accu(a, line, col);
    if (!quantifier(a, k, args[1], line, col, &init, &cond, &step, &result)) {
        /* MAP, FILTER */
        init = list1(a, NULL, line, col);
        step = sk_cel_new_call3(a, "_+_", accu(a, line, col),
                                list1(a, k == FILTER ? args[0] : args[nargs - 1], line, col), NULL,
                                line, col);
        if (k == FILTER || nargs == 3)
            step = sk_cel_new_call3(a, "_?_:_", args[1], step, accu(a, line, col), line, col);
    }
    res->expr = sk_cel_new_comprehension(a, v, target, ACCU, init, cond, step, result, line, col);
out:
    if (res->error)
        res->error_at = args[0];
    return 1;
}
