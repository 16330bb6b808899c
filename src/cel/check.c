/*
 * check.c - see check.h. A port of the algorithm of cel-go's checker
 * (checker.go, types.go, mapping.go at v0.22), written anew over this
 * layer's tree:
 *
 * - Every node gets a type; functions resolve against the overloads of
 *   check_decls.h, each overload's type parameters instantiated with fresh
 *   variables (_var0, _var1, ... in the order cel-go makes them, since
 *   error messages show them), unified through a substitution that a
 *   failed attempt leaves untouched. The substitution is a persistent
 *   list (a binding is prepended, the newest wins), so "copy, try, commit"
 *   is keeping or dropping a pointer.
 * - Several matching overloads give their common result type, or dyn.
 * - After the walk every node's type is substituted, free variables
 *   becoming dyn (cel-go's final pass).
 * - Errors are collected, sorted by position (stable), and formatted as
 *   cel-go's Issues (cel/issues.h).
 */
#include "cel/check.h"
#include "cel/check_decls.h"
#include "cel/eval.h"
#include "cel/issues.h"
#include "cel/regex.h"
#include "core/check.h"

#include <stdint.h>
#include <string.h>

static int exact(const sk_cel_ty *t1, const sk_cel_ty *t2)
{
    if (t1 == t2)
        return 1;
    if (t1->kind != t2->kind || t1->np != t2->np ||
        strcmp(sk_cel_ty_name(t1), sk_cel_ty_name(t2)) != 0)
        return 0;
    for (size_t i = 0; i < t1->np; i++)
        if (!exact(t1->p[i], t2->p[i]))
            return 0;
    return 1;
}

static int is_dyn(const sk_cel_ty *t)
{
    return t->kind == SK_CEL_TY_DYN;
}

static int is_dyn_or_error(const sk_cel_ty *t)
{
    return t->kind == SK_CEL_TY_DYN || t->kind == SK_CEL_TY_ERROR;
}

static int is_optional(const sk_cel_ty *t)
{
    return t->kind == SK_CEL_TY_OPAQUE && strcmp(t->name, "optional_type") == 0;
}

/* ---- the substitution ------------------------------------------------------- */

typedef struct subst {
    const char *param;
    const sk_cel_ty *t;
    const struct subst *next;
} subst;

typedef struct ck {
    sk_arena *a;
    const sk_cel_check_env *env;
    const subst *m;
    int nextvar;
    sk_cel_diag *diags;
    size_t nd, capd;
    sk_cel_checked *out;
    /* the overloads the call just resolved, for check() to record */
    const sk_cel_overload **ovs;
    size_t novs;
} ck;

static const sk_cel_ty *find(const subst *m, const sk_cel_ty *t)
{
    if (t->kind != SK_CEL_TY_PARAM)
        return NULL;
    for (; m; m = m->next)
        if (strcmp(m->param, t->name) == 0)
            return m->t;
    return NULL;
}

static void bind(ck *c, const subst **m, const sk_cel_ty *param, const sk_cel_ty *t)
{
    subst *s = sk_arena_alloc(c->a, sizeof *s);
    *s = (subst){param->name, t, *m};
    *m = s;
}

static const sk_cel_ty *with_params(sk_arena *a, const sk_cel_ty *t, const sk_cel_ty *p0,
                                    const sk_cel_ty *p1)
{
    if (p0 == t->p[0] && p1 == t->p[1])
        return t;
    sk_cel_ty *n = sk_arena_alloc(a, sizeof *n);
    *n = *t;
    n->p[0] = p0;
    n->p[1] = p1;
    return n;
}

static const sk_cel_ty *substitute(ck *c, const subst *m, const sk_cel_ty *t, int to_dyn)
{
    const sk_cel_ty *sub = find(m, t);
    if (sub)
        return substitute(c, m, sub, to_dyn);
    if (to_dyn && t->kind == SK_CEL_TY_PARAM)
        return sk_cel_ty_of(SK_CEL_TY_DYN);
    if (t->kind != SK_CEL_TY_OPAQUE && t->kind != SK_CEL_TY_LIST && t->kind != SK_CEL_TY_MAP &&
        t->kind != SK_CEL_TY_TYPE)
        return t;
    const sk_cel_ty *p0 = t->np > 0 ? substitute(c, m, t->p[0], to_dyn) : NULL;
    const sk_cel_ty *p1 = t->np > 1 ? substitute(c, m, t->p[1], to_dyn) : NULL;
    return with_params(c->a, t, p0, p1);
}

static int less_specific(const sk_cel_ty *t1, const sk_cel_ty *t2)
{
    if (is_dyn(t1) || t1->kind == SK_CEL_TY_PARAM)
        return 1;
    if (is_dyn(t2) || t2->kind == SK_CEL_TY_PARAM)
        return 0;
    if (t1->kind != t2->kind)
        return 0;
    switch (t1->kind) {
    case SK_CEL_TY_OPAQUE:
        if (strcmp(t1->name, t2->name) != 0 || t1->np != t2->np)
            return 0;
        /* fall through */
    case SK_CEL_TY_LIST:
    case SK_CEL_TY_MAP:
        for (size_t i = 0; i < t1->np; i++)
            if (!less_specific(t1->p[i], t2->p[i]))
                return 0;
        return 1;
    case SK_CEL_TY_TYPE:
        return 1;
    default:
        return exact(t1, t2);
    }
}

static const sk_cel_ty *most_general(const sk_cel_ty *t1, const sk_cel_ty *t2)
{
    return less_specific(t1, t2) ? t1 : t2;
}

static int not_referenced_in(const subst *m, const sk_cel_ty *t, const sk_cel_ty *within)
{
    if (exact(t, within))
        return 0;
    switch (within->kind) {
    case SK_CEL_TY_PARAM: {
        const sk_cel_ty *sub = find(m, within);
        return !sub || not_referenced_in(m, t, sub);
    }
    case SK_CEL_TY_OPAQUE:
    case SK_CEL_TY_LIST:
    case SK_CEL_TY_MAP:
    case SK_CEL_TY_TYPE:
        for (size_t i = 0; i < within->np; i++)
            if (!not_referenced_in(m, t, within->p[i]))
                return 0;
        return 1;
    default:
        return 1;
    }
}

/* t.IsAssignableType(from): cel-go's default, for types without params
 * of their own rules. */
static int assignable_type(const sk_cel_ty *t, const sk_cel_ty *from)
{
    if (t == from || t->kind == SK_CEL_TY_DYN || t->kind == SK_CEL_TY_PARAM)
        return 1;
    if (t->kind != from->kind || strcmp(sk_cel_ty_name(t), sk_cel_ty_name(from)) != 0 ||
        t->np != from->np)
        return 0;
    for (size_t i = 0; i < t->np; i++)
        if (!assignable_type(t->p[i], from->p[i]))
            return 0;
    return 1;
}

static int nullable(const sk_cel_ty *t)
{
    return t->kind == SK_CEL_TY_OPAQUE || t->kind == SK_CEL_TY_OBJECT ||
           t->kind == SK_CEL_TY_DURATION || t->kind == SK_CEL_TY_TIMESTAMP ||
           assignable_type(t, sk_cel_ty_of(SK_CEL_TY_NULL));
}

static int assignable_in(ck *c, const subst **m, const sk_cel_ty *t1, const sk_cel_ty *t2);

/* isValidTypeSubstitution: t2 a type parameter. */
static int valid_subst(ck *c, const subst **m, const sk_cel_ty *t1, const sk_cel_ty *t2,
                       int *has_sub)
{
    *has_sub = 0;
    if (t1->kind == t2->kind && exact(t1, t2)) {
        *has_sub = 1;
        return 1;
    }
    const sk_cel_ty *sub = find(*m, t2);
    if (sub) {
        *has_sub = 1;
        if (t1->kind == sub->kind && exact(t1, sub))
            return 1;
        if (assignable_in(c, m, t1, sub)) {
            const sk_cel_ty *n = most_general(t1, sub);
            if (not_referenced_in(*m, t2, n))
                bind(c, m, t2, n);
            return 1;
        }
        return 0;
    }
    if (not_referenced_in(*m, t2, t1)) {
        bind(c, m, t2, t1);
        return 1;
    }
    return 0;
}

static int assignable_in(ck *c, const subst **m, const sk_cel_ty *t1, const sk_cel_ty *t2)
{
    int has_sub;
    if (t2->kind == SK_CEL_TY_PARAM) {
        if (valid_subst(c, m, t1, t2, &has_sub))
            return 1;
        if (has_sub)
            return 0;
    }
    if (t1->kind == SK_CEL_TY_PARAM)
        return valid_subst(c, m, t2, t1, &has_sub);
    if (is_dyn_or_error(t1) || is_dyn_or_error(t2))
        return 1;
    if (t1->kind == SK_CEL_TY_NULL)
        return nullable(t2);
    if (t2->kind == SK_CEL_TY_NULL)
        return nullable(t1);
    switch (t1->kind) {
    case SK_CEL_TY_TYPE:
        return t2->kind == SK_CEL_TY_TYPE;
    case SK_CEL_TY_OPAQUE:
    case SK_CEL_TY_LIST:
    case SK_CEL_TY_MAP:
        if (t1->kind != t2->kind || strcmp(sk_cel_ty_name(t1), sk_cel_ty_name(t2)) != 0 ||
            t1->np != t2->np)
            return 0;
        for (size_t i = 0; i < t1->np; i++)
            if (!assignable_in(c, m, t1->p[i], t2->p[i]))
                return 0;
        return 1;
    default:
        return assignable_type(t2, t1);
    }
}

/* isAssignable / isAssignableList: the substitution changes only when the
 * answer is yes. */
static int assignable(ck *c, const sk_cel_ty *t1, const sk_cel_ty *t2)
{
    const subst *m = c->m;
    if (!assignable_in(c, &m, t1, t2))
        return 0;
    c->m = m;
    return 1;
}

static int assignable_list(ck *c, const sk_cel_ty *const *l1, const sk_cel_ty *const *l2, size_t n)
{
    const subst *m = c->m;
    for (size_t i = 0; i < n; i++)
        if (!assignable_in(c, &m, l1[i], l2[i]))
            return 0;
    c->m = m;
    return 1;
}

static const sk_cel_ty *new_var(ck *c)
{
    sk_cel_ty *t = sk_arena_alloc(c->a, sizeof *t);
    *t = (sk_cel_ty){SK_CEL_TY_PARAM, sk_arena_printf(c->a, "_var%d", c->nextvar++), {0}, 0, NULL};
    return t;
}

/* ---- the result: node types -------------------------------------------------- */

struct sk_cel_checked {
    const sk_cel_expr *root;
    const sk_cel_expr **keys;
    const sk_cel_ty **vals;
    const sk_cel_overload *const **ovs; /* a call's overloads, NULL-ended */
    size_t cap, n;
    const char **used;
    size_t nused, capused;
};

static size_t slot(const sk_cel_checked *c, const sk_cel_expr *e)
{
    size_t h = ((uintptr_t)e >> 4) * 0x9E3779B97F4A7C15ULL;
    size_t i = h & (c->cap - 1);
    while (c->keys[i] && c->keys[i] != e)
        i = (i + 1) & (c->cap - 1);
    return i;
}

static void set_type(ck *c, const sk_cel_expr *e, const sk_cel_ty *t,
                     const sk_cel_overload *const *ovs)
{
    sk_cel_checked *o = c->out;
    if (2 * (o->n + 1) > o->cap) {
        sk_cel_checked old = *o;
        o->cap = old.cap ? old.cap * 2 : 64;
        o->keys = sk_arena_alloc(c->a, o->cap * sizeof *o->keys);
        o->vals = sk_arena_alloc(c->a, o->cap * sizeof *o->vals);
        o->ovs = sk_arena_alloc(c->a, o->cap * sizeof *o->ovs);
        memset(o->keys, 0, o->cap * sizeof *o->keys);
        o->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i]) {
                size_t s = slot(o, old.keys[i]);
                o->keys[s] = old.keys[i];
                o->vals[s] = old.vals[i];
                o->ovs[s] = old.ovs[i];
                o->n++;
            }
    }
    size_t s = slot(o, e);
    if (!o->keys[s])
        o->n++;
    o->keys[s] = e;
    o->vals[s] = t;
    o->ovs[s] = ovs;
}

static const sk_cel_ty *get_type(const sk_cel_checked *o, const sk_cel_expr *e)
{
    if (!o->cap)
        return NULL;
    size_t s = slot(o, e);
    return o->keys[s] ? o->vals[s] : NULL;
}

const sk_cel_ty *sk_cel_checked_node_type(const sk_cel_checked *c, const sk_cel_expr *n)
{
    return get_type(c, n);
}

const sk_cel_expr *sk_cel_checked_expr(const sk_cel_checked *c)
{
    return c->root;
}

const sk_cel_ty *sk_cel_checked_type(const sk_cel_checked *c)
{
    return get_type(c, c->root);
}

const sk_cel_overload *const *sk_cel_checked_overloads(const sk_cel_checked *c,
                                                       const sk_cel_expr *n, size_t *count)
{
    const sk_cel_overload *const *ovs = NULL;
    if (c->cap) {
        size_t s = slot(c, n);
        ovs = c->keys[s] ? c->ovs[s] : NULL;
    }
    *count = 0;
    while (ovs && ovs[*count])
        (*count)++;
    return ovs;
}

int sk_cel_checked_uses(const sk_cel_checked *c, const char *name)
{
    for (size_t i = 0; i < c->nused; i++)
        if (strcmp(c->used[i], name) == 0)
            return 1;
    return 0;
}

static void note_use(ck *c, const char *name)
{
    sk_cel_checked *o = c->out;
    if (sk_cel_checked_uses(o, name))
        return;
    o->used = sk_arena_grow(c->a, o->used, o->nused, &o->capused, sizeof *o->used);
    o->used[o->nused++] = name;
}

/* ---- errors -------------------------------------------------------------------- */

static void error(ck *c, const sk_cel_expr *e, const char *message)
{
    c->diags = sk_arena_grow(c->a, c->diags, c->nd, &c->capd, sizeof *c->diags);
    c->diags[c->nd++] = (sk_cel_diag){e->line, e->col, message};
}

static const char *fmt_type(ck *c, const sk_cel_ty *t)
{
    sk_buf b = SK_BUF_INIT;
    sk_cel_ty_format(&b, t);
    const char *s = sk_arena_strdup(c->a, b.data ? b.data : "");
    sk_buf_free(&b);
    return s;
}

static void type_mismatch(ck *c, const sk_cel_expr *e, const sk_cel_ty *want, const sk_cel_ty *got)
{
    error(c, e,
          sk_arena_printf(c->a, "expected type '%s' but found '%s'", fmt_type(c, want),
                          fmt_type(c, got)));
}

static void undeclared(ck *c, const sk_cel_expr *e, const char *name)
{
    error(c, e, sk_arena_printf(c->a, "undeclared reference to '%s' (in container '')", name));
}

/* ---- names ---------------------------------------------------------------------- */

typedef struct scope {
    const char *n1, *n2;
    const sk_cel_ty *t1, *t2;
    const struct scope *up;
} scope;

static const sk_cel_ty *lookup_ident(ck *c, const scope *sc, const char *name)
{
    for (; sc; sc = sc->up) {
        if (sc->n1 && strcmp(sc->n1, name) == 0)
            return sc->t1;
        if (sc->n2 && strcmp(sc->n2, name) == 0)
            return sc->t2;
    }
    for (size_t i = 0; i < c->env->nvars; i++)
        if (strcmp(c->env->vars[i].name, name) == 0)
            return c->env->vars[i].type;
    return sk_cel_ty_ident(name);
}

const char *sk_cel_qualified_name(sk_arena *a, const sk_cel_expr *e)
{
    if (e->kind == SK_CEL_IDENT)
        return e->u.ident;
    if (e->kind != SK_CEL_SELECT || e->u.select.test_only)
        return NULL;
    const char *prefix = sk_cel_qualified_name(a, e->u.select.operand);
    return prefix ? sk_arena_printf(a, "%s.%s", prefix, e->u.select.field) : NULL;
}

/* ---- the walk --------------------------------------------------------------------- */

static const sk_cel_ty *check(ck *c, const sk_cel_expr *e, const scope *sc);

static const sk_cel_ty *ty(ck *c, const sk_cel_expr *e)
{
    const sk_cel_ty *t = get_type(c->out, e);
    return t ? t : sk_cel_ty_of(SK_CEL_TY_ERROR);
}

static const sk_cel_ty *select_field(ck *c, const sk_cel_expr *e, const sk_cel_expr *operand,
                                     const char *field, int optional, const scope *sc)
{
    check(c, operand, sc);
    const sk_cel_ty *t = substitute(c, c->m, ty(c, operand), 0);
    int opt = is_optional(t);
    if (opt)
        t = t->p[0];
    const sk_cel_ty *r = sk_cel_ty_of(SK_CEL_TY_ERROR);
    switch (t->kind) {
    case SK_CEL_TY_MAP:
        r = t->p[1];
        break;
    case SK_CEL_TY_OBJECT: {
        /* lookupFieldType: a type the provider does not know (an object
         * type without data: the libraries' cel.ObjectTypes) fails first */
        const sk_cel_ty *f =
            c->env->field && t->data ? c->env->field(c->env->field_ctx, c->a, t, field) : NULL;
        if (f)
            r = f;
        else if (!t->data)
            error(c, e, sk_arena_printf(c->a, "unexpected failed resolution of '%s'", t->name));
        else
            error(c, e, sk_arena_printf(c->a, "undefined field '%s'", field));
        break;
    }
    case SK_CEL_TY_PARAM:
        assignable(c, sk_cel_ty_of(SK_CEL_TY_DYN), t);
        r = sk_cel_ty_of(SK_CEL_TY_DYN);
        break;
    default:
        if (!is_dyn_or_error(t))
            error(c, e,
                  sk_arena_printf(c->a, "type '%s' does not support field selection",
                                  fmt_type(c, t)));
        r = sk_cel_ty_of(SK_CEL_TY_DYN);
        break;
    }
    return opt || optional ? sk_cel_ty_optional(c->a, r) : r;
}

/* resolveOverload: the call's type, or NULL after reporting why none. */
static const sk_cel_ty *resolve(ck *c, const sk_cel_expr *e, const char *fn,
                                const sk_cel_overload *ovs, size_t nov, const sk_cel_expr *target,
                                const sk_cel_expr *const *args, size_t nargs)
{
    size_t n = nargs + (target != NULL);
    const sk_cel_ty **at = sk_arena_alloc(c->a, (n + 1) * sizeof *at);
    size_t k = 0;
    if (target)
        at[k++] = ty(c, target);
    for (size_t i = 0; i < nargs; i++)
        at[k++] = ty(c, args[i]);
    const sk_cel_ty *result = NULL;
    c->ovs = sk_arena_alloc(c->a, (nov + 1) * sizeof *c->ovs);
    c->novs = 0;
    for (size_t i = 0; i < nov; i++) {
        const sk_cel_overload *o = &ovs[i];
        if (o->cross && !c->env->cross_type_numeric)
            continue;
        if ((target == NULL) == o->member)
            continue;
        if (strcmp(fn, "_&&_") == 0 || strcmp(fn, "_||_") == 0) {
            int bad = 0;
            for (size_t j = 0; j < n; j++)
                if (!assignable(c, at[j], sk_cel_ty_of(SK_CEL_TY_BOOL))) {
                    type_mismatch(c, args[j], sk_cel_ty_of(SK_CEL_TY_BOOL), at[j]);
                    bad = 1;
                }
            c->ovs[c->novs++] = o;
            return bad ? NULL : sk_cel_ty_of(SK_CEL_TY_BOOL);
        }
        if (o->nargs != n)
            continue;
        const sk_cel_ty *const *params = o->args;
        const sk_cel_ty *res = o->result;
        if (o->nparams) {
            const subst *fresh = NULL;
            for (int p = 0; p < o->nparams; p++) {
                subst *s = sk_arena_alloc(c->a, sizeof *s);
                *s = (subst){o->params[p], new_var(c), fresh};
                fresh = s;
            }
            const sk_cel_ty **inst = sk_arena_alloc(c->a, (n + 1) * sizeof *inst);
            for (size_t j = 0; j < n; j++)
                inst[j] = substitute(c, fresh, params[j], 0);
            params = inst;
            res = substitute(c, fresh, res, 0);
        }
        if (!assignable_list(c, at, params, n))
            continue;
        c->ovs[c->novs++] = o;
        const sk_cel_ty *r = substitute(c, c->m, res, 0);
        if (!result)
            result = r;
        else if (!is_dyn(result) && !exact(r, result))
            result = sk_cel_ty_of(SK_CEL_TY_DYN);
    }
    if (result)
        return result;
    sk_buf b = SK_BUF_INIT;
    k = 0;
    if (target) {
        sk_cel_ty_format(&b, substitute(c, c->m, at[k++], 1));
        sk_buf_putc(&b, '.');
    }
    sk_buf_putc(&b, '(');
    for (size_t j = 0; k < n; j++, k++) {
        if (j)
            sk_buf_puts(&b, ", ");
        sk_cel_ty_format(&b, substitute(c, c->m, at[k], 1));
    }
    sk_buf_putc(&b, ')');
    error(c, e,
          sk_arena_printf(c->a, "found no matching overload for '%s' applied to '%s'", fn, b.data));
    sk_buf_free(&b);
    return NULL;
}

static const sk_cel_ty *check_call(ck *c, const sk_cel_expr *e, const scope *sc)
{
    const char *fn = e->u.call.function;
    const sk_cel_expr *target = e->u.call.target;
    const sk_cel_expr *const *args = e->u.call.args;
    size_t nargs = e->u.call.nargs, nov;
    const sk_cel_overload *ovs;
    if (strcmp(fn, "_?._") == 0 && !target && nargs == 2) {
        if (args[1]->kind != SK_CEL_CONST || args[1]->u.lit.kind != SK_CEL_STRING) {
            error(c, args[1], "unsupported optional field selection");
            return sk_cel_ty_of(SK_CEL_TY_ERROR);
        }
        const sk_cel_ty *t =
            substitute(c, c->m, select_field(c, e, args[0], args[1]->u.lit.s, 1, sc), 0);
        ovs = sk_cel_overloads(fn, &nov);
        c->ovs = sk_arena_alloc(c->a, 2 * sizeof *c->ovs);
        c->ovs[0] = ovs;
        c->novs = 1;
        return t;
    }
    for (size_t i = 0; i < nargs; i++)
        check(c, args[i], sc);
    if (target) {
        /* a namespaced function (sets.contains, optional.of) */
        const char *q = sk_cel_qualified_name(c->a, target);
        if (q) {
            const char *name = sk_arena_printf(c->a, "%s.%s", q, fn);
            ovs = sk_cel_overloads(name, &nov);
            if (ovs)
                return resolve(c, e, name, ovs, nov, NULL, args, nargs);
        }
        check(c, target, sc);
    }
    ovs = sk_cel_overloads(fn, &nov);
    if (!ovs) {
        undeclared(c, e, fn);
        return NULL;
    }
    return resolve(c, e, fn, ovs, nov, target, args, nargs);
}

/* joinTypes for a literal's elements (aggregate literals of mixed types are
 * dyn here; Kubernetes' homogeneity is a validator after the check). */
static const sk_cel_ty *join(ck *c, const sk_cel_ty *prev, const sk_cel_ty *cur)
{
    if (!prev)
        return cur;
    if (assignable(c, prev, cur))
        return most_general(prev, cur);
    return sk_cel_ty_of(SK_CEL_TY_DYN);
}

/* An optional entry's value: its optional's type, or a mismatch. */
static const sk_cel_ty *unwrap_entry(ck *c, const sk_cel_expr *v, const sk_cel_ty *t)
{
    if (is_optional(t))
        return t->p[0];
    if (!is_dyn(t))
        type_mismatch(c, v, sk_cel_ty_optional(c->a, t), t);
    return t;
}

static const sk_cel_ty *check_struct(ck *c, const sk_cel_expr *e, const scope *sc)
{
    const char *name = e->u.obj.message;
    const sk_cel_ty *it = lookup_ident(c, sc, name);
    if (!it) {
        undeclared(c, e, name);
        return sk_cel_ty_of(SK_CEL_TY_ERROR);
    }
    const sk_cel_ty *r = sk_cel_ty_of(SK_CEL_TY_ERROR);
    if (it->kind != SK_CEL_TY_TYPE) {
        error(c, e, sk_arena_printf(c->a, "'%s' is not a type", fmt_type(c, it)));
    } else if (it->np && it->p[0]->kind == SK_CEL_TY_OBJECT) {
        r = it->p[0];
    } else {
        error(c, e,
              sk_arena_printf(c->a, "'%s' is not a message type",
                              it->np ? fmt_type(c, it->p[0]) : "type"));
    }
    for (size_t i = 0; i < e->u.obj.n; i++) {
        const sk_cel_entry *f = &e->u.obj.entries[i];
        check(c, f->value, sc);
        const sk_cel_ty *ft = NULL;
        if (r->kind == SK_CEL_TY_OBJECT && c->env->field && r->data)
            ft = c->env->field(c->env->field_ctx, c->a, r, f->field);
        if (r->kind != SK_CEL_TY_OBJECT)
            error(c, f->value, sk_arena_printf(c->a, "unexpected failed resolution of '%s'", name));
        else if (!ft)
            error(c, f->value, sk_arena_printf(c->a, "undefined field '%s'", f->field));
        const sk_cel_ty *vt = ty(c, f->value);
        if (f->optional)
            vt = unwrap_entry(c, f->value, vt);
        if (!ft)
            ft = sk_cel_ty_of(SK_CEL_TY_ERROR);
        if (!assignable(c, ft, vt))
            error(c, f->value,
                  sk_arena_printf(c->a,
                                  "expected type of field '%s' is '%s' but provided type is '%s'",
                                  f->field, fmt_type(c, ft), fmt_type(c, vt)));
    }
    return r;
}

static const sk_cel_ty *check_comprehension(ck *c, const sk_cel_expr *e, const scope *sc)
{
    const sk_cel_expr *range = e->u.comp.iter_range;
    check(c, range, sc);
    check(c, e->u.comp.accu_init, sc);
    const sk_cel_ty *rt = substitute(c, c->m, ty(c, range), 0);
    const sk_cel_ty *accu = ty(c, e->u.comp.accu_init);
    scope accu_scope = {e->u.comp.accu_var, NULL, accu, NULL, sc};
    const sk_cel_ty *v1 = NULL, *v2 = NULL;
    int two = e->u.comp.iter_var2 != NULL;
    switch (rt->kind) {
    case SK_CEL_TY_LIST:
        v1 = rt->p[0];
        if (two) {
            v2 = v1;
            v1 = sk_cel_ty_of(SK_CEL_TY_INT);
        }
        break;
    case SK_CEL_TY_MAP:
        v1 = rt->p[0];
        if (two)
            v2 = rt->p[1];
        break;
    case SK_CEL_TY_DYN:
    case SK_CEL_TY_ERROR:
    case SK_CEL_TY_PARAM:
        assignable(c, sk_cel_ty_of(SK_CEL_TY_DYN), rt);
        v1 = sk_cel_ty_of(SK_CEL_TY_DYN);
        break;
    default:
        error(c, range,
              sk_arena_printf(c->a,
                              "expression of type '%s' cannot be range of a comprehension "
                              "(must be list, map, or dynamic)",
                              fmt_type(c, rt)));
        v1 = sk_cel_ty_of(SK_CEL_TY_ERROR);
        break;
    }
    /* cel-go leaves the second variable's type unset (nil) for a dynamic
     * range; dyn is what it then reads as */
    if (two && !v2)
        v2 = sk_cel_ty_of(SK_CEL_TY_DYN);
    scope loop = {e->u.comp.iter_var, e->u.comp.iter_var2, v1, v2, &accu_scope};
    check(c, e->u.comp.loop_cond, &loop);
    const sk_cel_ty *bt = sk_cel_ty_of(SK_CEL_TY_BOOL);
    if (!assignable(c, bt, ty(c, e->u.comp.loop_cond)))
        type_mismatch(c, e->u.comp.loop_cond, bt, ty(c, e->u.comp.loop_cond));
    check(c, e->u.comp.loop_step, &loop);
    if (!assignable(c, accu, ty(c, e->u.comp.loop_step)))
        type_mismatch(c, e->u.comp.loop_step, accu, ty(c, e->u.comp.loop_step));
    check(c, e->u.comp.result, &accu_scope);
    return substitute(c, c->m, ty(c, e->u.comp.result), 0);
}

static const sk_cel_ty *check_node(ck *c, const sk_cel_expr *e, const scope *sc)
{
    static const sk_cel_ty_kind lit[] = {
        [SK_CEL_NULL] = SK_CEL_TY_NULL,     [SK_CEL_BOOL] = SK_CEL_TY_BOOL,
        [SK_CEL_INT] = SK_CEL_TY_INT,       [SK_CEL_UINT] = SK_CEL_TY_UINT,
        [SK_CEL_DOUBLE] = SK_CEL_TY_DOUBLE, [SK_CEL_STRING] = SK_CEL_TY_STRING,
        [SK_CEL_BYTES] = SK_CEL_TY_BYTES,
    };
    switch (e->kind) {
    case SK_CEL_CONST:
        return sk_cel_ty_of(lit[e->u.lit.kind]);
    case SK_CEL_IDENT: {
        const sk_cel_ty *t = lookup_ident(c, sc, e->u.ident);
        if (t) {
            note_use(c, e->u.ident);
            return t;
        }
        undeclared(c, e, e->u.ident);
        return NULL;
    }
    case SK_CEL_SELECT: {
        const char *q = sk_cel_qualified_name(c->a, e);
        const sk_cel_ty *t = q ? lookup_ident(c, sc, q) : NULL;
        if (t) {
            note_use(c, q);
            return t;
        }
        t = select_field(c, e, e->u.select.operand, e->u.select.field, 0, sc);
        if (e->u.select.test_only)
            t = sk_cel_ty_of(SK_CEL_TY_BOOL);
        return substitute(c, c->m, t, 0);
    }
    case SK_CEL_CALL:
        return check_call(c, e, sc);
    case SK_CEL_LIST: {
        const sk_cel_ty *elem = NULL;
        size_t o = 0;
        for (size_t i = 0; i < e->u.list.n; i++) {
            const sk_cel_expr *x = e->u.list.elems[i];
            const sk_cel_ty *t = check(c, x, sc);
            if (o < e->u.list.noptional && e->u.list.optional[o] == i) {
                o++;
                t = unwrap_entry(c, x, t);
            }
            elem = join(c, elem, t);
        }
        return sk_cel_ty_list(c->a, elem ? elem : new_var(c));
    }
    case SK_CEL_MAP: {
        const sk_cel_ty *kt = NULL, *vt = NULL;
        for (size_t i = 0; i < e->u.obj.n; i++) {
            const sk_cel_entry *en = &e->u.obj.entries[i];
            kt = join(c, kt, check(c, en->key, sc));
            const sk_cel_ty *t = check(c, en->value, sc);
            if (en->optional)
                t = unwrap_entry(c, en->value, t);
            vt = join(c, vt, t);
        }
        if (!kt) {
            kt = new_var(c);
            vt = new_var(c);
        }
        return sk_cel_ty_map(c->a, kt, vt);
    }
    case SK_CEL_STRUCT:
        return check_struct(c, e, sc);
    case SK_CEL_COMPREHENSION:
        return check_comprehension(c, e, sc);
    case SK_CEL_ERROR_NODE:
        break;
    }
    return NULL;
}

static const sk_cel_ty *check(ck *c, const sk_cel_expr *e, const scope *sc)
{
    c->ovs = NULL;
    c->novs = 0;
    const sk_cel_ty *t = check_node(c, e, sc);
    if (!t)
        t = sk_cel_ty_of(SK_CEL_TY_ERROR);
    const sk_cel_overload *const *ovs = NULL;
    if (e->kind == SK_CEL_CALL && c->novs) {
        c->ovs[c->novs] = NULL;
        ovs = c->ovs;
    }
    c->ovs = NULL;
    c->novs = 0;
    set_type(c, e, t, ovs);
    return t;
}

/* IsEquivalentType: exact, but for the names of type parameters. */
static int equivalent(const sk_cel_ty *t1, const sk_cel_ty *t2)
{
    if (t1 == t2)
        return 1;
    if (t1->kind != t2->kind || t1->np != t2->np ||
        (t1->kind != SK_CEL_TY_PARAM && strcmp(sk_cel_ty_name(t1), sk_cel_ty_name(t2)) != 0))
        return 0;
    for (size_t i = 0; i < t1->np; i++)
        if (!equivalent(t1->p[i], t2->p[i]))
            return 0;
    return 1;
}

/* An optional entry's declared type is its optional's parameter. */
static const sk_cel_ty *entry_type(ck *c, const sk_cel_expr *e, int optional)
{
    const sk_cel_ty *t = ty(c, e);
    return optional && t->np ? t->p[0] : t;
}

/* cel-go's homogeneous aggregate literal validator over the checked tree:
 * a list reports its first element of another type than the first; a map
 * every key and value of another type than the first entry's. */
static int homogeneous_child(void *c, const sk_cel_expr *child);

static void homogeneous(ck *c, const sk_cel_expr *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case SK_CEL_LIST: {
        const sk_cel_ty *first = NULL;
        size_t o = 0;
        int reported = 0;
        for (size_t i = 0; i < e->u.list.n; i++) {
            const sk_cel_expr *x = e->u.list.elems[i];
            int opt = o < e->u.list.noptional && e->u.list.optional[o] == i;
            o += opt;
            const sk_cel_ty *t = entry_type(c, x, opt);
            if (!first)
                first = t;
            else if (!reported && !equivalent(first, t)) {
                type_mismatch(c, x, first, t);
                reported = 1;
            }
            homogeneous(c, x);
        }
        break;
    }
    case SK_CEL_MAP: {
        const sk_cel_ty *kt = NULL, *vt = NULL;
        for (size_t i = 0; i < e->u.obj.n; i++) {
            const sk_cel_entry *en = &e->u.obj.entries[i];
            const sk_cel_ty *k = ty(c, en->key), *v = entry_type(c, en->value, en->optional);
            if (!kt) {
                kt = k;
                vt = v;
            } else {
                if (!equivalent(kt, k))
                    type_mismatch(c, en->key, kt, k);
                if (!equivalent(vt, v))
                    type_mismatch(c, en->value, vt, v);
            }
            homogeneous(c, en->key);
            homogeneous(c, en->value);
        }
        break;
    }
    default:
        sk_cel_children(e, homogeneous_child, c);
        break;
    }
}

static int homogeneous_child(void *c, const sk_cel_expr *child)
{
    homogeneous(c, child);
    return 0;
}

/* cel-go's format validators over the checked tree: a call of duration()
 * or timestamp() on a literal that does not evaluate, a matches() whose
 * first argument (the pattern of a method call, the string of a function
 * call, as cel-go looks) is a literal that is no regular expression. */
static int literals_child(void *c, const sk_cel_expr *child);

static void literals(ck *c, const sk_cel_expr *e)
{
    sk_cel_children(e, literals_child, c);
    if (e->kind != SK_CEL_CALL || !e->u.call.nargs || e->u.call.args[0]->kind != SK_CEL_CONST)
        return;
    const char *f = e->u.call.function;
    const sk_cel_expr *arg = e->u.call.args[0];
    if ((strcmp(f, "duration") == 0 || strcmp(f, "timestamp") == 0) && !e->u.call.target) {
        const sk_cel_val *v = sk_cel_eval(c->a, e, NULL, NULL);
        if (v->type == SK_CEL_V_ERROR)
            error(c, arg, sk_arena_printf(c->a, "invalid %s argument", f));
    } else if (strcmp(f, "matches") == 0 && arg->u.lit.kind == SK_CEL_STRING) {
        const char *err = NULL;
        size_t bytes;
        if (!sk_cel_re_compile(c->a, arg->u.lit.s, arg->u.lit.len, &err, &bytes))
            error(c, arg, "invalid matches argument");
    }
}

static int literals_child(void *c, const sk_cel_expr *child)
{
    literals(c, child);
    return 0;
}

static int by_position(const sk_cel_diag *a, const sk_cel_diag *b)
{
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return (a->col > b->col) - (a->col < b->col);
}

sk_cel_checked *sk_cel_check(sk_arena *a, const sk_cel_expr *e, const char *src, size_t len,
                             const sk_cel_check_env *env, sk_buf *errors)
{
    sk_cel_checked *out = sk_arena_alloc(a, sizeof *out);
    memset(out, 0, sizeof *out);
    out->root = e;
    ck c = {.a = a, .env = env, .out = out};
    check(&c, e, NULL);
    if (!c.nd) {
        for (size_t i = 0; i < out->cap; i++)
            if (out->keys[i])
                out->vals[i] = substitute(&c, c.m, out->vals[i], 1);
        if (env->homogeneous_literals)
            homogeneous(&c, e);
        if (env->literal_validators)
            literals(&c, e);
    }
    if (c.nd) {
        /* cel-go sorts its errors by position, stably */
        for (size_t i = 1; i < c.nd; i++)
            for (size_t j = i; j > 0 && by_position(&c.diags[j - 1], &c.diags[j]) > 0; j--) {
                sk_cel_diag t = c.diags[j];
                c.diags[j] = c.diags[j - 1];
                c.diags[j - 1] = t;
            }
        for (size_t i = 0; i < c.nd; i++) {
            if (i)
                sk_buf_putc(errors, '\n');
            sk_cel_issue_format(errors, src, len, c.diags[i].line, c.diags[i].col,
                                c.diags[i].message);
        }
        return NULL;
    }
    return out;
}
