/*
 * ast.c - constructors of CEL expression nodes (see ast.h), and the one
 * enumeration of a node's children the tree walks share. Every node is
 * zeroed arena memory, so a constructor sets only what its kind reads.
 */
#include "cel/ast.h"

static sk_cel_expr *node(sk_arena *a, sk_cel_kind kind, int line, int col)
{
    sk_cel_expr *e = sk_arena_alloc(a, sizeof *e);
    e->kind = kind;
    e->line = line;
    e->col = col;
    return e;
}

sk_cel_expr *sk_cel_new_const(sk_arena *a, sk_cel_const_kind kind, int line, int col)
{
    sk_cel_expr *e = node(a, SK_CEL_CONST, line, col);
    e->u.lit.kind = kind;
    return e;
}

sk_cel_expr *sk_cel_new_ident(sk_arena *a, const char *name, int line, int col)
{
    sk_cel_expr *e = node(a, SK_CEL_IDENT, line, col);
    e->u.ident = name;
    return e;
}

sk_cel_expr *sk_cel_new_select(sk_arena *a, const sk_cel_expr *operand, const char *field,
                               int test_only, int line, int col)
{
    sk_cel_expr *e = node(a, SK_CEL_SELECT, line, col);
    e->u.select.operand = operand;
    e->u.select.field = field;
    e->u.select.test_only = test_only;
    return e;
}

sk_cel_expr *sk_cel_new_call(sk_arena *a, const char *function, const sk_cel_expr *target,
                             const sk_cel_expr *const *args, size_t nargs, int line, int col)
{
    sk_cel_expr *e = node(a, SK_CEL_CALL, line, col);
    e->u.call.function = function;
    e->u.call.target = target;
    e->u.call.args = args;
    e->u.call.nargs = nargs;
    return e;
}

sk_cel_expr *sk_cel_new_call3(sk_arena *a, const char *function, const sk_cel_expr *a0,
                              const sk_cel_expr *a1, const sk_cel_expr *a2, int line, int col)
{
    const sk_cel_expr **args = sk_arena_alloc(a, 3 * sizeof *args);
    size_t n = 0;
    if (a0)
        args[n++] = a0;
    if (a1)
        args[n++] = a1;
    if (a2)
        args[n++] = a2;
    return sk_cel_new_call(a, function, NULL, args, n, line, col);
}

sk_cel_expr *sk_cel_new_list(sk_arena *a, const sk_cel_expr *const *elems, size_t n,
                             const size_t *optional, size_t noptional, int line, int col)
{
    sk_cel_expr *e = node(a, SK_CEL_LIST, line, col);
    e->u.list.elems = elems;
    e->u.list.n = n;
    e->u.list.optional = optional;
    e->u.list.noptional = noptional;
    return e;
}

sk_cel_expr *sk_cel_new_object(sk_arena *a, const char *message, const sk_cel_entry *entries,
                               size_t n, int line, int col)
{
    sk_cel_expr *e = node(a, message ? SK_CEL_STRUCT : SK_CEL_MAP, line, col);
    e->u.obj.message = message;
    e->u.obj.entries = entries;
    e->u.obj.n = n;
    return e;
}

sk_cel_expr *sk_cel_new_comprehension(sk_arena *a, const char *iter_var,
                                      const sk_cel_expr *iter_range, const char *accu_var,
                                      const sk_cel_expr *accu_init, const sk_cel_expr *loop_cond,
                                      const sk_cel_expr *loop_step, const sk_cel_expr *result,
                                      int line, int col)
{
    sk_cel_expr *e = node(a, SK_CEL_COMPREHENSION, line, col);
    e->u.comp.iter_var = iter_var;
    e->u.comp.iter_var2 = NULL;
    e->u.comp.iter_range = iter_range;
    e->u.comp.accu_var = accu_var;
    e->u.comp.accu_init = accu_init;
    e->u.comp.loop_cond = loop_cond;
    e->u.comp.loop_step = loop_step;
    e->u.comp.result = result;
    return e;
}

sk_cel_expr *sk_cel_new_error_node(sk_arena *a, int line, int col)
{
    return node(a, SK_CEL_ERROR_NODE, line, col);
}

int sk_cel_children(const sk_cel_expr *e, int (*fn)(void *ctx, const sk_cel_expr *child),
                    void *ctx)
{
    const sk_cel_expr *comp[5];
    const sk_cel_expr *const *kids = NULL;
    size_t n = 0;
    int r = 0;
    switch (e->kind) {
    case SK_CEL_SELECT:
        kids = &e->u.select.operand;
        n = 1;
        break;
    case SK_CEL_CALL:
        if (e->u.call.target && (r = fn(ctx, e->u.call.target)) != 0)
            return r;
        kids = e->u.call.args;
        n = e->u.call.nargs;
        break;
    case SK_CEL_LIST:
        kids = e->u.list.elems;
        n = e->u.list.n;
        break;
    case SK_CEL_MAP:
    case SK_CEL_STRUCT:
        for (size_t i = 0; i < e->u.obj.n && r == 0; i++) {
            const sk_cel_entry *en = &e->u.obj.entries[i];
            if (en->key)
                r = fn(ctx, en->key);
            if (r == 0 && en->value)
                r = fn(ctx, en->value);
        }
        return r;
    case SK_CEL_COMPREHENSION:
        comp[0] = e->u.comp.iter_range;
        comp[1] = e->u.comp.accu_init;
        comp[2] = e->u.comp.loop_cond;
        comp[3] = e->u.comp.loop_step;
        comp[4] = e->u.comp.result;
        kids = comp;
        n = 5;
        break;
    default:
        break;
    }
    for (size_t i = 0; i < n && r == 0; i++)
        if (kids[i])
            r = fn(ctx, kids[i]);
    return r;
}
