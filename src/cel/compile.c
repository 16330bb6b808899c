/*
 * compile.c - see compile.h.
 *
 * The reference check walks the tree with the names comprehensions bind in
 * scope (a macro's iteration variable and its accumulator are seen by the
 * loop's condition, step and result, not by the range or the initial
 * value), and reports every free identifier that is neither declared nor a
 * type, and every message literal (kube declares no message type). A select chain a.b.c is reported at its root a: the variables kube
 * declares have plain names, so a dotted name can only resolve through its
 * first part, unless the whole chain names a type (net.IP). A call of a
 * namespaced function (sets.contains, optional.of) is no method of a
 * variable. Errors are reported in source order, as cel-go sorts them.
 */
#include "cel/compile.h"
#include "cel/issues.h"
#include "cel/lib.h"
#include "cel/value.h"

#include <stdlib.h>
#include <string.h>

/* Names a comprehension binds, innermost first. */
typedef struct scope {
    const char *iter, *iter2, *accu; /* iter2: NULL for one variable */
    const struct scope *outer;
} scope;

typedef struct refs {
    sk_arena *a;
    const char *const *variables;
    sk_cel_diag *found;
    size_t n, cap;
} refs;

static int declared(const refs *r, const scope *s, const char *name)
{
    for (; s; s = s->outer)
        if (strcmp(s->iter, name) == 0 || strcmp(s->accu, name) == 0 ||
            (s->iter2 && strcmp(s->iter2, name) == 0))
            return 1;
    for (size_t i = 0; r->variables[i]; i++)
        if (strcmp(r->variables[i], name) == 0)
            return 1;
    return sk_cel_type_named(name) != NULL;
}

static void undeclared(refs *r, int line, int col, const char *name)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4;
        sk_cel_diag *grown = sk_arena_alloc(r->a, cap * sizeof *grown);
        if (r->n)
            memcpy(grown, r->found, r->n * sizeof *grown);
        r->found = grown;
        r->cap = cap;
    }
    sk_buf m = SK_BUF_INIT;
    sk_buf_printf(&m, "undeclared reference to '%s' (in container '')", name);
    r->found[r->n++] = (sk_cel_diag){line, col, sk_arena_strdup(r->a, m.data)};
    sk_buf_free(&m);
}

static void walk(refs *r, const sk_cel_expr *e, const scope *s)
{
    if (!e)
        return;
    switch (e->kind) {
    case SK_CEL_IDENT:
        if (!declared(r, s, e->u.ident))
            undeclared(r, e->line, e->col, e->u.ident);
        break;
    case SK_CEL_SELECT:
        if (!sk_cel_names_type(r->a, e))
            walk(r, e->u.select.operand, s);
        break;
    case SK_CEL_CALL:
        /* sets.contains(a, b) and the like: no variable's method */
        if (!(e->u.call.target && e->u.call.target->kind == SK_CEL_IDENT &&
              !declared(r, s, e->u.call.target->u.ident) &&
              sk_cel_lib_qualified(e->u.call.target->u.ident, e->u.call.function)))
            walk(r, e->u.call.target, s);
        for (size_t i = 0; i < e->u.call.nargs; i++)
            walk(r, e->u.call.args[i], s);
        break;
    case SK_CEL_LIST:
        for (size_t i = 0; i < e->u.list.n; i++)
            walk(r, e->u.list.elems[i], s);
        break;
    case SK_CEL_STRUCT:
        /* no message type is declared: cel-go refuses the type and looks
         * no further into the literal */
        undeclared(r, e->line, e->col, e->u.obj.message);
        break;
    case SK_CEL_MAP:
        for (size_t i = 0; i < e->u.obj.n; i++) {
            walk(r, e->u.obj.entries[i].key, s);
            walk(r, e->u.obj.entries[i].value, s);
        }
        break;
    case SK_CEL_COMPREHENSION: {
        walk(r, e->u.comp.iter_range, s);
        walk(r, e->u.comp.accu_init, s);
        scope inner = {e->u.comp.iter_var, e->u.comp.iter_var2, e->u.comp.accu_var, s};
        walk(r, e->u.comp.loop_cond, &inner);
        walk(r, e->u.comp.loop_step, &inner);
        walk(r, e->u.comp.result, &inner);
        break;
    }
    case SK_CEL_CONST:
    case SK_CEL_ERROR_NODE:
        break;
    }
}

int sk_cel_names_type(sk_arena *a, const sk_cel_expr *e)
{
    size_t len = 0;
    const sk_cel_expr *x = e;
    for (; x->kind == SK_CEL_SELECT && !x->u.select.test_only; x = x->u.select.operand)
        len += strlen(x->u.select.field) + 1;
    if (x->kind != SK_CEL_IDENT)
        return 0;
    len += strlen(x->u.ident);
    char *name = sk_arena_alloc(a, len + 1), *end = name + len;
    *end = '\0';
    for (x = e; x->kind == SK_CEL_SELECT; x = x->u.select.operand) {
        size_t n = strlen(x->u.select.field);
        end -= n;
        memcpy(end, x->u.select.field, n);
        *--end = '.';
    }
    memcpy(name, x->u.ident, strlen(x->u.ident));
    return sk_cel_type_named(name) != NULL;
}

static int by_position(const void *pa, const void *pb)
{
    const sk_cel_diag *a = pa, *b = pb;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return (a->col > b->col) - (a->col < b->col);
}

const sk_cel_expr *sk_cel_compile(sk_arena *a, const char *src, size_t len,
                                  const char *const *variables, const sk_cel_parse_options *opt,
                                  sk_buf *errors)
{
    /* kube's environment has cel.OptionalTypes (the syntax and its macros)
     * and, from 1.32, TwoVarComprehensions */
    static const sk_cel_parse_options kube = {
        .enable_optional_syntax = 1, .enable_optional_macros = 1, .enable_two_var_macros = 1};
    sk_cel_ast *ast = sk_cel_parse(a, src, len, opt ? opt : &kube);
    const sk_cel_expr *e = sk_cel_ast_expr(ast);
    refs r = {a, variables, NULL, 0, 0};
    const sk_cel_diag *diags = NULL;
    size_t n = 0;
    if (e) {
        walk(&r, e, NULL);
        if (r.n > 1)
            qsort(r.found, r.n, sizeof *r.found, by_position);
        diags = r.found;
        n = r.n;
    }
    if (!e)
        sk_cel_issues_format(errors, src, len, ast);
    for (size_t i = 0; i < n; i++) {
        if (i)
            sk_buf_putc(errors, '\n');
        sk_cel_issue_format(errors, src, len, diags[i].line, diags[i].col, diags[i].message);
    }
    return e && n == 0 ? e : NULL;
}
