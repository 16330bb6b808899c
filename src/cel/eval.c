/*
 * eval.c - the CEL evaluator: a recursive walk of the tree (eval.h).
 *
 * The walk's depth is the tree's, which the parser bounds (its recursion
 * limits), plus nothing: comprehensions iterate, they do not recurse. Local
 * variables (a comprehension's iteration and accumulator variables) are a
 * stack of name/value pairs searched innermost first, so an inner macro's
 * variable shadows an outer one as in cel-go. Once the step budget is spent
 * the context is marked exhausted and every node returns the same error at
 * once, so the walk unwinds without doing more work and no `&&` can absorb
 * the error. Passing the cost limit marks it exhausted the same way.
 *
 * The cost follows cel-go's planner, which makes a chain of selects and
 * indexes one attribute: cel-go observes the attribute once (1) and each
 * qualifier (1 each), and a conditional's branches, an index's operand
 * and an index that is itself an attribute are resolved, not evaluated,
 * so their own attribute cost of 1 is not counted. The walk passes that
 * down in ctx.resolving, which the node evaluated next reads and clears.
 */
#include "cel/eval.h"
#include "cel/callcost.h"
#include "cel/optional.h"
#include "cel/strext.h"
#include "cel/time.h"

#include "cel/env.h"
#include "cel/lib.h"
#include "cel/lib_format.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct local {
    const char *name;
    const sk_cel_val *val;
    struct local *next;
} local;

typedef struct var_cache {
    const char *name;
    const sk_cel_val *val; /* NULL: not bound */
    struct var_cache *next;
} var_cache;

/* The context is what env.h calls an sk_cel_env. */
typedef struct sk_cel_env {
    sk_arena *a;
    const sk_cel_eval_options *opt;
    uint64_t steps, max_steps;
    uint64_t cost;       /* cel-go's actual cost so far */
    int resolving;       /* the next node is resolved as an attribute */
    struct folds *folds; /* optimize: the literals cel-go folds, once made */
    const sk_cel_val *exhausted;
    local *locals;
    var_cache *vars;
    void *lib_state;
} ctx;

static const sk_cel_val *eval(ctx *c, const sk_cel_expr *e);

/* Charges n steps; 0 once the budget is spent. */
static int charge(ctx *c, uint64_t n)
{
    if (c->exhausted)
        return 0;
    c->steps += n;
    if (c->steps > c->max_steps) {
        c->exhausted = sk_cel_error(c->a, "evaluation step limit exceeded (%llu steps)",
                                    (unsigned long long)c->max_steps);
        return 0;
    }
    return 1;
}

/* Adds n to the actual cost; 0 once past the cost limit (or the steps). */
static int cost(ctx *c, uint64_t n)
{
    if (c->exhausted)
        return 0;
    c->cost = c->cost > UINT64_MAX - n ? UINT64_MAX : c->cost + n;
    if (c->opt->cost_limit && c->cost > c->opt->cost_limit) {
        c->exhausted = sk_cel_error(c->a, "%s", SK_CEL_COST_EXCEEDED);
        return 0;
    }
    return 1;
}

/* A budget for the work of one comparison or lookup (value.h): what is
 * left of the steps, 64 units a step. */
static sk_cel_work budget(ctx *c)
{
    uint64_t left = c->max_steps - c->steps;
    sk_cel_work w = {0, left > UINT64_MAX / 128 ? UINT64_MAX : left * 64 + 63};
    return w;
}

/* Charges the work done; 0 once the budget is spent (a comparison that
 * gave up has always spent it). */
static int settle(ctx *c, const sk_cel_work *w)
{
    return charge(c, w->done / 64);
}

/* ---- env.h, for the libraries (lib.h) ---- */

sk_arena *sk_cel_env_arena(sk_cel_env *env)
{
    return env->a;
}

int sk_cel_env_charge(sk_cel_env *env, uint64_t n)
{
    return charge(env, n);
}

const sk_cel_val *sk_cel_env_exhausted(sk_cel_env *env)
{
    return env->exhausted;
}

uint64_t sk_cel_env_work_left(sk_cel_env *env)
{
    return env->exhausted ? 0 : budget(env).limit;
}

sk_cel_format_fn sk_cel_env_format(sk_cel_env *env)
{
    return env->opt->format_validate;
}

void **sk_cel_env_lib_state(sk_cel_env *env)
{
    return &env->lib_state;
}

static const sk_cel_val *arith(ctx *c, const char *f, const sk_cel_val *x, const sk_cel_val *y);
static const sk_cel_val *no_overload(ctx *c);

const sk_cel_val *sk_cel_env_add(sk_cel_env *env, const sk_cel_val *x, const sk_cel_val *y)
{
    if (x->type != SK_CEL_V_DURATION)
        return arith(env, "_+_", x, y);
    const sk_cel_val *v[] = {x, y};
    sk_cel_work w = budget(env);
    const sk_cel_val *r = sk_cel_time_call(sk_cel_env_arena(env), "_+_", 0, v, 2, &w);
    if (!settle(env, &w))
        return env->exhausted;
    return r ? r : no_overload(env);
}

/* cel-go's words for a function with no overload for its arguments. */
static const sk_cel_val *no_overload(ctx *c)
{
    return sk_cel_error(c->a, "no such overload");
}

static int is_err(const sk_cel_val *v)
{
    return v->type == SK_CEL_V_ERROR;
}

/* ---- variables ---- */

/* The type a name spells (value.h's list), or NULL. */
static const sk_cel_val *type_named(ctx *c, const char *name)
{
    const char *type = sk_cel_type_named(name);
    return type ? sk_cel_type(c->a, type) : NULL;
}

static int is_local(ctx *c, const char *name)
{
    for (local *l = c->locals; l; l = l->next)
        if (strcmp(l->name, name) == 0)
            return 1;
    return 0;
}

/* A variable of the caller's (callback, then JSON), or NULL. Answers are
 * kept for the rest of the evaluation, misses too: a rule reading
 * self.spec.x in a loop converts self once and asks for "self.spec.x" and
 * "self.spec" once. */
static const sk_cel_val *bound(ctx *c, const char *name)
{
    /* The scan is charged: a source of many names and a loop over them
     * would otherwise do unbounded work in a bounded number of steps.
     * Exhaustion is seen by the next node. */
    uint64_t scanned = 0;
    for (var_cache *v = c->vars; v; v = v->next, scanned++) {
        if (strcmp(v->name, name) == 0) {
            charge(c, scanned / 64);
            return v->val;
        }
    }
    charge(c, scanned / 64);
    const sk_cel_val *r = NULL;
    if (c->opt->resolve)
        r = c->opt->resolve(c->opt->resolve_ctx, c->a, name);
    if (!r && c->opt->vars) {
        const json_t *j = json_object_get(c->opt->vars, name);
        if (j)
            r = sk_cel_from_json(c->a, j);
    }
    var_cache *v = sk_arena_alloc(c->a, sizeof *v);
    v->name = name;
    v->val = r;
    v->next = c->vars;
    c->vars = v;
    return r;
}

static const sk_cel_val *lookup(ctx *c, const char *name)
{
    for (local *l = c->locals; l; l = l->next)
        if (strcmp(l->name, name) == 0)
            return l->val;
    const sk_cel_val *r = bound(c, name);
    if (!r)
        r = type_named(c, name);
    if (r)
        return r;
    return sk_cel_error(c->a, "undeclared reference to '%s'", name);
}

/* An identifier: an attribute (1, unless resolved), but a type's name,
 * which kube's checker makes a constant. */
static const sk_cel_val *ident(ctx *c, const char *name, int resolved)
{
    const sk_cel_val *r = lookup(c, name);
    int type = r->type == SK_CEL_V_TYPE && sk_cel_type_named(name) && !is_local(c, name);
    if (!resolved && !type && !cost(c, 1))
        return c->exhausted;
    return r;
}

/* ---- what cel-go's planner folds (kube's OptOptimize) ---- */

static int is_conversion(const sk_cel_expr *e)
{
    if (e->kind != SK_CEL_CALL)
        return 0;
    /* (every call's evaluation asks: the first letter rules out most) */
    switch (e->u.call.function[0]) {
    case 'b':
    case 'd':
    case 'i':
    case 's':
    case 't':
    case 'u':
        break;
    default:
        return 0;
    }
    static const char *const fns[] = {"bool", "bytes",  "double",    "duration", "dyn",
                                      "int",  "string", "timestamp", "type",     "uint"};
    if (e->kind != SK_CEL_CALL || e->u.call.target || e->u.call.nargs != 1)
        return 0;
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
        if (strcmp(e->u.call.function, fns[i]) == 0)
            return 1;
    return 0;
}

/* Whether e is a constant in kube's program: a literal, a list or map
 * literal of constants, a conversion of a constant. */
static int folded(const ctx *c, const sk_cel_expr *e)
{
    if (e->kind == SK_CEL_CONST)
        return 1;
    if (!c->opt->optimize)
        return 0;
    if (e->kind == SK_CEL_LIST) {
        if (e->u.list.noptional)
            return 0;
        for (size_t i = 0; i < e->u.list.n; i++)
            if (!folded(c, e->u.list.elems[i]))
                return 0;
        return 1;
    }
    if (e->kind == SK_CEL_MAP && !e->u.obj.message) {
        for (size_t i = 0; i < e->u.obj.n; i++)
            if (e->u.obj.entries[i].optional || !folded(c, e->u.obj.entries[i].key) ||
                !folded(c, e->u.obj.entries[i].value))
                return 0;
        return 1;
    }
    return is_conversion(e) && folded(c, e->u.call.args[0]);
}

/* x in L with L a constant list of bool, int, uint, double and string
 * values, which kube's program makes a set lookup of no cost. */
static int set_membership(const ctx *c, const sk_cel_expr *list)
{
    if (list->kind != SK_CEL_LIST || !folded(c, list))
        return 0;
    for (size_t i = 0; i < list->u.list.n; i++) {
        const sk_cel_expr *x = list->u.list.elems[i];
        if (x->kind == SK_CEL_CALL) {
            const char *f = x->u.call.function;
            if (strcmp(f, "bool") && strcmp(f, "double") && strcmp(f, "int") &&
                strcmp(f, "string") && strcmp(f, "uint"))
                return 0;
        } else if (x->kind != SK_CEL_CONST || x->u.lit.kind == SK_CEL_BYTES ||
                   x->u.lit.kind == SK_CEL_NULL) {
            return 0;
        }
    }
    return 1;
}

/* ---- literals ---- */

static const sk_cel_val *constant(ctx *c, const sk_cel_expr *e)
{
    switch (e->u.lit.kind) {
    case SK_CEL_NULL:
        return sk_cel_null();
    case SK_CEL_BOOL:
        return sk_cel_bool(e->u.lit.b);
    case SK_CEL_INT:
        return sk_cel_int(c->a, e->u.lit.i);
    case SK_CEL_UINT:
        return sk_cel_uint(c->a, e->u.lit.u);
    case SK_CEL_DOUBLE:
        return sk_cel_double(c->a, e->u.lit.d);
    case SK_CEL_STRING:
        return sk_cel_string(c->a, e->u.lit.s, e->u.lit.len);
    default:
        return sk_cel_bytes(c->a, e->u.lit.s, e->u.lit.len);
    }
}

/* The value of an optional element or entry ([?x], {?k: x}): x's value,
 * or NULL when x is none, or an error when x is no optional. */
static const sk_cel_val *optional_part(ctx *c, const sk_cel_val *x, const sk_cel_val **err)
{
    if (x->type != SK_CEL_V_OPTIONAL)
        *err = sk_cel_error(c->a, "cannot initialize optional entry from non-optional value");
    return x->type == SK_CEL_V_OPTIONAL ? x->u.opt : NULL;
}

static const sk_cel_val *list_literal(ctx *c, const sk_cel_expr *e)
{
    size_t n = e->u.list.n, k = 0, o = 0;
    if (!folded(c, e) && !cost(c, SK_CEL_LIST_CREATE))
        return c->exhausted;
    const sk_cel_val **items = sk_arena_alloc(c->a, (n ? n : 1) * sizeof *items);
    for (size_t i = 0; i < n; i++) {
        const sk_cel_val *x = eval(c, e->u.list.elems[i]), *err = NULL;
        if (is_err(x))
            return x;
        if (o < e->u.list.noptional && e->u.list.optional[o] == i) {
            o++;
            x = optional_part(c, x, &err);
            if (err)
                return err;
        }
        if (x)
            items[k++] = x;
    }
    return sk_cel_list(c->a, items, k);
}

static int valid_key(const sk_cel_val *k)
{
    return k->type == SK_CEL_V_BOOL || k->type == SK_CEL_V_INT || k->type == SK_CEL_V_UINT ||
           k->type == SK_CEL_V_STRING;
}

static const sk_cel_val *map_literal(ctx *c, const sk_cel_expr *e)
{
    if (!folded(c, e) && !cost(c, e->u.obj.message ? SK_CEL_STRUCT_CREATE : SK_CEL_MAP_CREATE))
        return c->exhausted;
    if (e->u.obj.message)
        return sk_cel_error(c->a, "message literals are not supported: %s", e->u.obj.message);
    size_t n = e->u.obj.n;
    const sk_cel_val **keys = sk_arena_alloc(c->a, (n ? n : 1) * sizeof *keys);
    const sk_cel_val **vals = sk_arena_alloc(c->a, (n ? n : 1) * sizeof *vals);
    for (size_t i = 0, at = 0; at < e->u.obj.n; at++) {
        const sk_cel_entry *en = &e->u.obj.entries[at];
        keys[i] = eval(c, en->key);
        if (is_err(keys[i]))
            return keys[i];
        vals[i] = eval(c, en->value);
        if (is_err(vals[i]))
            return vals[i];
        if (en->optional) {
            const sk_cel_val *err = NULL;
            vals[i] = optional_part(c, vals[i], &err);
            if (err)
                return err;
            if (!vals[i]) {
                n--;
                continue;
            }
        }
        if (!valid_key(keys[i]))
            return sk_cel_error(c->a, "unsupported key type: %s", sk_cel_type_name(keys[i]));
        sk_cel_work w = budget(c);
        int repeated = 0;
        for (size_t k = 0; k < i && !repeated; k++)
            repeated = sk_cel_equal(keys[k], keys[i], &w);
        if (!settle(c, &w))
            return c->exhausted;
        if (repeated)
            return sk_cel_error(c->a, "Failed with repeated key");
        i++;
    }
    return sk_cel_map(c->a, keys, vals, n);
}

/* ---- member access ---- */

/* x[i]; a missing key or an index out of range also sets *missing (if
 * not NULL). */
static const sk_cel_val *index_plain(ctx *c, const sk_cel_val *x, const sk_cel_val *i, int *missing)
{
    if (x->type == SK_CEL_V_MAP) {
        /* A key of a type no map key has is just not found, as in cel-go. */
        sk_cel_work w = budget(c);
        long k = sk_cel_map_find(x, i, &w);
        if (!settle(c, &w))
            return c->exhausted;
        if (k >= 0)
            return x->u.map.vals[k];
        if (missing)
            *missing = 1;
        switch (i->type) {
        case SK_CEL_V_STRING:
            return sk_cel_error(c->a, "no such key: %s", i->u.str.s);
        case SK_CEL_V_INT:
            return sk_cel_error(c->a, "no such key: %lld", (long long)i->u.i);
        case SK_CEL_V_UINT:
            return sk_cel_error(c->a, "no such key: %llu", (unsigned long long)i->u.u);
        case SK_CEL_V_BOOL:
            return sk_cel_error(c->a, "no such key: %s", i->u.b ? "true" : "false");
        default:
            return sk_cel_error(c->a, "no such key");
        }
    }
    if (x->type != SK_CEL_V_LIST)
        return no_overload(c);
    int64_t at;
    if (i->type == SK_CEL_V_INT)
        at = i->u.i;
    else if (i->type == SK_CEL_V_UINT)
        at = i->u.u > INT64_MAX ? -1 : (int64_t)i->u.u;
    else if (i->type == SK_CEL_V_DOUBLE && i->u.d == trunc(i->u.d) && fabs(i->u.d) < 9.2e18)
        at = (int64_t)i->u.d;
    else
        return no_overload(c);
    if ((at < 0 || (uint64_t)at >= x->u.list.n) && missing)
        *missing = 1;
    if (at < 0 || (uint64_t)at >= x->u.list.n)
        return sk_cel_error(c->a, "index '%lld' out of range in list size '%zu'", (long long)at,
                            x->u.list.n);
    return x->u.list.items[at];
}

/* x[i]; on an optional, x[?i] on its value (none stays none). */
static const sk_cel_val *index_value(ctx *c, const sk_cel_val *x, const sk_cel_val *i)
{
    if (x->type != SK_CEL_V_OPTIONAL)
        return index_plain(c, x, i, NULL);
    if (!x->u.opt)
        return x;
    int missing = 0;
    const sk_cel_val *r = index_plain(c, x->u.opt, i, &missing);
    if (missing)
        return sk_cel_optional(c->a, NULL);
    return is_err(r) ? r : sk_cel_optional(c->a, r);
}

/* x.f, or has(x.f); on an optional, x.?f on its value (none stays none,
 * and has() of it is false). */
static const sk_cel_val *field(ctx *c, const sk_cel_val *x, const char *f, int test_only)
{
    int opt = x->type == SK_CEL_V_OPTIONAL;
    if (opt && !x->u.opt)
        return test_only ? sk_cel_bool(0) : x;
    if (opt)
        x = x->u.opt;
    if (x->type != SK_CEL_V_MAP)
        return sk_cel_error(c->a, "type '%s' does not support field selection",
                            sk_cel_type_name(x));
    sk_cel_val key = {.type = SK_CEL_V_STRING, .u.str = {f, strlen(f)}};
    sk_cel_work w = budget(c);
    long k = sk_cel_map_find(x, &key, &w);
    if (!settle(c, &w))
        return c->exhausted;
    if (test_only)
        return sk_cel_bool(k >= 0);
    if (opt)
        return sk_cel_optional(c->a, k >= 0 ? x->u.map.vals[k] : NULL);
    if (k < 0)
        return sk_cel_error(c->a, "no such key: %s", f);
    return x->u.map.vals[k];
}

static int is_qualifier(const char *f)
{
    return f[0] == '_' && (f[1] == '[' || f[1] == '?') &&
           (strcmp(f, "_[_]") == 0 || strcmp(f, "_[?_]") == 0 || strcmp(f, "_?._") == 0);
}

/* Whether the chain of selects and indexes e ends in a conditional,
 * whose attribute cel-go observes at no cost. */
static int conditional_root(const sk_cel_expr *e)
{
    for (;;) {
        if (e->kind == SK_CEL_SELECT && !e->u.select.test_only)
            e = e->u.select.operand;
        else if (e->kind == SK_CEL_CALL && !e->u.call.target && e->u.call.nargs == 2 &&
                 is_qualifier(e->u.call.function))
            e = e->u.call.args[0];
        else
            return e->kind == SK_CEL_CALL && !e->u.call.target && e->u.call.nargs == 3 &&
                   strcmp(e->u.call.function, "_?_:_") == 0;
    }
}

/* The cost of observing the attribute that select or index e ends: none
 * when resolved or rooted in a conditional. */
static uint64_t attribute_cost(const sk_cel_expr *e, int resolved)
{
    return !resolved && !conditional_root(e);
}

/* Whether parts[0..k] joined by dots is a name the caller declares. */
static int declared(const ctx *c, const char *const *parts, size_t k)
{
    for (const char *const *d = c->opt->declared; d && *d; d++) {
        const char *p = *d;
        size_t i = 0;
        for (; i <= k; i++) {
            size_t n = strlen(parts[i]);
            if (strncmp(p, parts[i], n) != 0 || p[n] != (i < k ? '.' : '\0'))
                break;
            p += n + (i < k);
        }
        if (i > k)
            return 1;
    }
    return 0;
}

/* a.b.c: when a is not a local variable, cel-go reads it as the longest
 * dotted prefix the caller binds ("a.b.c", then "a.b" and its field c, ...,
 * then a and its fields b and c), so variables may have qualified names. */
static const sk_cel_val *select_field(ctx *c, const sk_cel_expr *e, int resolved)
{
    int test_only = e->u.select.test_only;
    /* has(): the attribute's 1 only where presence tests cost */
    if (!cost(c, test_only ? !c->opt->free_presence_tests : attribute_cost(e, resolved)))
        return c->exhausted;
    size_t n = 1;
    const sk_cel_expr *root = e->u.select.operand;
    while (root->kind == SK_CEL_SELECT && !root->u.select.test_only) {
        n++;
        root = root->u.select.operand;
    }
    if (root->kind != SK_CEL_IDENT || is_local(c, root->u.ident)) {
        c->resolving = 1;
        const sk_cel_val *x = eval(c, e->u.select.operand);
        if (is_err(x))
            return x;
        if (!cost(c, 1))
            return c->exhausted;
        return field(c, x, e->u.select.field, test_only);
    }
    /* parts[0] the identifier, parts[1..n] the fields, outermost last */
    const char **parts = sk_arena_alloc(c->a, (n + 1) * sizeof *parts);
    const sk_cel_expr *s = e;
    for (size_t i = n; i > 0; i--, s = s->u.select.operand)
        parts[i] = s->u.select.field;
    parts[0] = root->u.ident;
    const sk_cel_val *x = NULL;
    size_t k = test_only ? n - 1 : n;
    for (; k > 0; k--) {
        size_t len = 0;
        for (size_t i = 0; i <= k; i++)
            len += strlen(parts[i]) + 1;
        if (!charge(c, 1 + len / 64))
            return c->exhausted;
        char *name = sk_arena_alloc(c->a, len), *p = name;
        for (size_t i = 0; i <= k; i++)
            p += sprintf(p, i ? ".%s" : "%s", parts[i]);
        if ((x = bound(c, name)) || (k == n && (x = type_named(c, name))))
            break;
    }
    /* a qualified name stands for its qualifiers, unless declared whole */
    if (!cost(c, x && declared(c, parts, k) ? 0 : k))
        return c->exhausted;
    if (!x)
        x = lookup(c, parts[0]);
    for (size_t i = k + 1; i <= n && !is_err(x); i++) {
        if (!charge(c, 1) || !cost(c, 1))
            return c->exhausted;
        x = field(c, x, parts[i], test_only && i == n);
    }
    return x;
}

/* ---- arithmetic ---- */

static const sk_cel_val *overflow(ctx *c, const char *what)
{
    return sk_cel_error(c->a, "%s overflow", what);
}

static const sk_cel_val *concat(ctx *c, const sk_cel_val *x, const sk_cel_val *y)
{
    if (x->type == SK_CEL_V_LIST) {
        /* The copy is at most twice the lists' items, which were charged
         * when they were made; its work is charged after. */
        size_t copied;
        const sk_cel_val *r = sk_cel_list_concat(c->a, x, y, &copied);
        if (!charge(c, copied / 64))
            return c->exhausted;
        return r;
    }
    size_t n = x->u.str.len + y->u.str.len;
    char *s = sk_arena_alloc(c->a, n + 1);
    memcpy(s, x->u.str.s, x->u.str.len);
    memcpy(s + x->u.str.len, y->u.str.s, y->u.str.len);
    sk_cel_val *r = sk_cel_string(c->a, s, n);
    r->type = x->type;
    return r;
}

static const sk_cel_val *arith(ctx *c, const char *f, const sk_cel_val *x, const sk_cel_val *y)
{
    char op = f[1];
    if (x->type != y->type)
        return no_overload(c);
    switch (x->type) {
    case SK_CEL_V_INT: {
        int64_t a = x->u.i, b = y->u.i, r;
        switch (op) {
        case '+':
            if (__builtin_add_overflow(a, b, &r))
                return overflow(c, "integer");
            break;
        case '-':
            if (__builtin_sub_overflow(a, b, &r))
                return overflow(c, "integer");
            break;
        case '*':
            if (__builtin_mul_overflow(a, b, &r))
                return overflow(c, "integer");
            break;
        case '/':
            if (b == 0)
                return sk_cel_error(c->a, "division by zero");
            if (a == INT64_MIN && b == -1)
                return overflow(c, "integer");
            r = a / b;
            break;
        default:
            if (b == 0)
                return sk_cel_error(c->a, "modulus by zero");
            if (a == INT64_MIN && b == -1)
                return overflow(c, "integer");
            r = a % b;
            break;
        }
        return sk_cel_int(c->a, r);
    }
    case SK_CEL_V_UINT: {
        uint64_t a = x->u.u, b = y->u.u, r;
        switch (op) {
        case '+':
            if (__builtin_add_overflow(a, b, &r))
                return overflow(c, "unsigned integer");
            break;
        case '-':
            if (__builtin_sub_overflow(a, b, &r))
                return overflow(c, "unsigned integer");
            break;
        case '*':
            if (__builtin_mul_overflow(a, b, &r))
                return overflow(c, "unsigned integer");
            break;
        case '/':
            if (b == 0)
                return sk_cel_error(c->a, "division by zero");
            r = a / b;
            break;
        default:
            if (b == 0)
                return sk_cel_error(c->a, "modulus by zero");
            r = a % b;
            break;
        }
        return sk_cel_uint(c->a, r);
    }
    case SK_CEL_V_DOUBLE: {
        double a = x->u.d, b = y->u.d;
        switch (op) {
        case '+':
            return sk_cel_double(c->a, a + b);
        case '-':
            return sk_cel_double(c->a, a - b);
        case '*':
            return sk_cel_double(c->a, a * b);
        case '/':
            return sk_cel_double(c->a, a / b);
        default:
            return no_overload(c);
        }
    }
    case SK_CEL_V_STRING:
    case SK_CEL_V_BYTES:
    case SK_CEL_V_LIST:
        if (op == '+')
            return concat(c, x, y);
        return no_overload(c);
    default:
        return no_overload(c);
    }
}

static const sk_cel_val *negate(ctx *c, const sk_cel_val *x)
{
    if (x->type == SK_CEL_V_INT) {
        if (x->u.i == INT64_MIN)
            return overflow(c, "integer");
        return sk_cel_int(c->a, -x->u.i);
    }
    if (x->type == SK_CEL_V_DOUBLE)
        return sk_cel_double(c->a, -x->u.d);
    return no_overload(c);
}

/* ---- relations ---- */

static const sk_cel_val *relation(ctx *c, const char *f, const sk_cel_val *x, const sk_cel_val *y)
{
    if (strcmp(f, "_==_") == 0 || strcmp(f, "_!=_") == 0) {
        sk_cel_work w = budget(c);
        int eq = sk_cel_equal(x, y, &w);
        if (!settle(c, &w))
            return c->exhausted;
        return sk_cel_bool(eq == (f[1] == '='));
    }
    int cmp = 0;
    int ordered = sk_cel_compare(x, y, &cmp);
    if (ordered < 0)
        return no_overload(c);
    if (!ordered)
        return sk_cel_bool(0);
    if (strcmp(f, "_<_") == 0)
        return sk_cel_bool(cmp < 0);
    if (strcmp(f, "_<=_") == 0)
        return sk_cel_bool(cmp <= 0);
    if (strcmp(f, "_>_") == 0)
        return sk_cel_bool(cmp > 0);
    return sk_cel_bool(cmp >= 0);
}

static const sk_cel_val *in(ctx *c, const sk_cel_val *x, const sk_cel_val *y)
{
    int found = 0;
    sk_cel_work w = budget(c);
    if (y->type == SK_CEL_V_LIST) {
        for (size_t i = 0; i < y->u.list.n && !found; i++)
            found = sk_cel_equal(x, y->u.list.items[i], &w);
    } else if (y->type == SK_CEL_V_MAP) {
        found = sk_cel_map_find(y, x, &w) >= 0;
    } else {
        return no_overload(c);
    }
    if (!settle(c, &w))
        return c->exhausted;
    return sk_cel_bool(found);
}

/* ---- strings ---- */

static size_t utf8_length(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static int utf8_valid(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char b = s[i];
        size_t n;
        uint32_t cp, min;
        if (b < 0x80) {
            i++;
            continue;
        } else if ((b & 0xE0) == 0xC0) {
            n = 1, cp = b & 0x1F, min = 0x80;
        } else if ((b & 0xF0) == 0xE0) {
            n = 2, cp = b & 0x0F, min = 0x800;
        } else if ((b & 0xF8) == 0xF0) {
            n = 3, cp = b & 0x07, min = 0x10000;
        } else {
            return 0;
        }
        for (size_t k = 1; k <= n; k++) {
            if (i + k >= len || (s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += n + 1;
    }
    return 1;
}

static const sk_cel_val *string_test(ctx *c, const char *f, const sk_cel_val *s,
                                     const sk_cel_val *t)
{
    if (s->type != SK_CEL_V_STRING || t->type != SK_CEL_V_STRING)
        return no_overload(c);
    /* glibc's memmem is linear (two-way) in both lengths. */
    size_t n = s->u.str.len, m = t->u.str.len;
    if (m > n)
        return sk_cel_bool(0);
    if (strcmp(f, "startsWith") == 0)
        return sk_cel_bool(memcmp(s->u.str.s, t->u.str.s, m) == 0);
    if (strcmp(f, "endsWith") == 0)
        return sk_cel_bool(memcmp(s->u.str.s + n - m, t->u.str.s, m) == 0);
    return sk_cel_bool(m == 0 || memmem(s->u.str.s, n, t->u.str.s, m) != NULL);
}

static const sk_cel_val *size_of(ctx *c, const sk_cel_val *x)
{
    switch (x->type) {
    case SK_CEL_V_STRING:
        return sk_cel_int(c->a, (int64_t)utf8_length(x->u.str.s, x->u.str.len));
    case SK_CEL_V_BYTES:
        return sk_cel_int(c->a, (int64_t)x->u.str.len);
    case SK_CEL_V_LIST:
        return sk_cel_int(c->a, (int64_t)x->u.list.n);
    case SK_CEL_V_MAP:
        return sk_cel_int(c->a, (int64_t)x->u.map.n);
    default:
        return no_overload(c);
    }
}

/* ---- conversions ---- */

/* cel-go's words for a string that does not parse as the type. */
static const sk_cel_val *conversion_error(ctx *c, const char *type)
{
    return sk_cel_error(c->a, "type conversion error from 'string' to '%s'", type);
}

static const sk_cel_val *to_int(ctx *c, const sk_cel_val *x)
{
    switch (x->type) {
    case SK_CEL_V_INT:
        return x;
    case SK_CEL_V_UINT:
        if (x->u.u > INT64_MAX)
            return overflow(c, "integer");
        return sk_cel_int(c->a, (int64_t)x->u.u);
    case SK_CEL_V_DOUBLE:
        /* cel-go refuses both ends: -2^63 itself is out of range there. */
        if (isnan(x->u.d) || x->u.d <= -9223372036854775808.0 || x->u.d >= 9223372036854775808.0)
            return overflow(c, "integer");
        return sk_cel_int(c->a, (int64_t)x->u.d);
    case SK_CEL_V_STRING: {
        const char *s = x->u.str.s;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (x->u.str.len == 0 || *end || (size_t)(end - s) != x->u.str.len || errno ||
            !(s[0] == '-' || s[0] == '+' || (s[0] >= '0' && s[0] <= '9')))
            return conversion_error(c, "int");
        return sk_cel_int(c->a, v);
    }
    default:
        return no_overload(c);
    }
}

static const sk_cel_val *to_uint(ctx *c, const sk_cel_val *x)
{
    switch (x->type) {
    case SK_CEL_V_UINT:
        return x;
    case SK_CEL_V_INT:
        if (x->u.i < 0)
            return overflow(c, "unsigned integer");
        return sk_cel_uint(c->a, (uint64_t)x->u.i);
    case SK_CEL_V_DOUBLE:
        if (isnan(x->u.d) || x->u.d < 0 || x->u.d >= 18446744073709551616.0)
            return overflow(c, "unsigned integer");
        return sk_cel_uint(c->a, (uint64_t)x->u.d);
    case SK_CEL_V_STRING: {
        const char *s = x->u.str.s;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (x->u.str.len == 0 || *end || (size_t)(end - s) != x->u.str.len || errno ||
            !(s[0] >= '0' && s[0] <= '9'))
            return conversion_error(c, "uint");
        return sk_cel_uint(c->a, v);
    }
    default:
        return no_overload(c);
    }
}

static const sk_cel_val *to_double(ctx *c, const sk_cel_val *x)
{
    switch (x->type) {
    case SK_CEL_V_DOUBLE:
        return x;
    case SK_CEL_V_INT:
        return sk_cel_double(c->a, (double)x->u.i);
    case SK_CEL_V_UINT:
        return sk_cel_double(c->a, (double)x->u.u);
    case SK_CEL_V_STRING: {
        const char *s = x->u.str.s;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        /* Go's ParseFloat, which cel-go uses, is strtod but for: no
         * leading space, no "nan(...)", a hex mantissa only with a p
         * exponent, and a finite number too large for a double is an
         * error, not an infinity (a too small one is still 0). */
        int hex = strpbrk(s, "xX") != NULL;
        if (x->u.str.len == 0 || *end || (size_t)(end - s) != x->u.str.len ||
            !(s[0] == '-' || s[0] == '+' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9') ||
              s[0] == 'i' || s[0] == 'I' || s[0] == 'n' || s[0] == 'N') ||
            strchr(s, '(') || (hex && !strpbrk(s, "pP")) || (errno == ERANGE && isinf(v)))
            return conversion_error(c, "double");
        return sk_cel_double(c->a, v);
    }
    default:
        return no_overload(c);
    }
}

static const sk_cel_val *to_string(ctx *c, const sk_cel_val *x)
{
    char buf[32];
    int n;
    switch (x->type) {
    case SK_CEL_V_STRING:
        return x;
    case SK_CEL_V_INT:
        n = snprintf(buf, sizeof buf, "%lld", (long long)x->u.i);
        return sk_cel_string(c->a, sk_arena_strndup(c->a, buf, (size_t)n), (size_t)n);
    case SK_CEL_V_UINT:
        n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)x->u.u);
        return sk_cel_string(c->a, sk_arena_strndup(c->a, buf, (size_t)n), (size_t)n);
    case SK_CEL_V_DOUBLE:
        return sk_cel_double_string(c->a, x->u.d);
    case SK_CEL_V_BOOL:
        return x->u.b ? sk_cel_string(c->a, "true", 4) : sk_cel_string(c->a, "false", 5);
    case SK_CEL_V_BYTES:
        if (!utf8_valid((const unsigned char *)x->u.str.s, x->u.str.len))
            return sk_cel_error(c->a, "invalid UTF-8 in bytes, cannot convert to string");
        return sk_cel_string(c->a, x->u.str.s, x->u.str.len);
    default:
        return no_overload(c);
    }
}

static const sk_cel_val *to_bool(ctx *c, const sk_cel_val *x)
{
    /* Go's strconv.ParseBool, which cel-go's bool(string) is. */
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    if (x->type == SK_CEL_V_BOOL)
        return x;
    if (x->type != SK_CEL_V_STRING)
        return no_overload(c);
    for (size_t i = 0; i < 6; i++) {
        if (strlen(yes[i]) == x->u.str.len && strcmp(x->u.str.s, yes[i]) == 0)
            return sk_cel_bool(1);
        if (strlen(no[i]) == x->u.str.len && strcmp(x->u.str.s, no[i]) == 0)
            return sk_cel_bool(0);
    }
    return conversion_error(c, "bool");
}

static const sk_cel_val *to_bytes(ctx *c, const sk_cel_val *x)
{
    if (x->type == SK_CEL_V_BYTES)
        return x;
    if (x->type == SK_CEL_V_STRING)
        return sk_cel_bytes(c->a, x->u.str.s, x->u.str.len);
    return no_overload(c);
}

/* ---- calls ---- */

static const sk_cel_val *logic(ctx *c, const sk_cel_expr *e, int is_and)
{
    /* The absorbing value is false for && and true for ||; either operand
     * having it decides, whatever the other is (an error included). */
    const sk_cel_val *x = eval(c, e->u.call.args[0]);
    if (c->exhausted)
        return c->exhausted;
    if (x->type == SK_CEL_V_BOOL && x->u.b != is_and)
        return x;
    const sk_cel_val *y = eval(c, e->u.call.args[1]);
    if (c->exhausted)
        return c->exhausted;
    if (y->type == SK_CEL_V_BOOL && y->u.b != is_and)
        return y;
    if (x->type == SK_CEL_V_BOOL && y->type == SK_CEL_V_BOOL)
        return x;
    if (is_err(x))
        return x;
    if (is_err(y))
        return y;
    return no_overload(c);
}

static const sk_cel_val *conditional(ctx *c, const sk_cel_expr *e)
{
    const sk_cel_val *x = eval(c, e->u.call.args[0]);
    if (is_err(x))
        return x;
    if (x->type != SK_CEL_V_BOOL)
        return no_overload(c);
    c->resolving = 1;
    return eval(c, e->u.call.args[x->u.b ? 1 : 2]);
}

/* x.or(y), x.orValue(y): y is evaluated only when x is none (cel-go's
 * evalOptionalOr). */
static const sk_cel_val *optional_or(ctx *c, const sk_cel_expr *target, const sk_cel_expr *arg,
                                     int or_value)
{
    const sk_cel_val *x = eval(c, target);
    if (is_err(x))
        return x;
    if (x->type != SK_CEL_V_OPTIONAL)
        return no_overload(c);
    if (x->u.opt)
        return or_value ? x->u.opt : x;
    const sk_cel_val *y = eval(c, arg);
    if (is_err(y) || or_value || y->type == SK_CEL_V_OPTIONAL)
        return y;
    return no_overload(c);
}

/* The value an optional gets for x.?f and x[?i] (its value selected). */
static const sk_cel_val *as_optional(ctx *c, const sk_cel_val *x)
{
    return x->type == SK_CEL_V_OPTIONAL ? x : sk_cel_optional(c->a, x);
}

/* cel.@mapInsert(m, k, v) and cel.@mapInsert(m, entries) of the
 * two-variable comprehensions' map macros: m with the new entries, an
 * error ("insert failed: key ... already exists") when a key is in m. The
 * copy is charged: a transformMap over n entries costs n^2/2 copies, as
 * the work it does. */
static const sk_cel_val *map_insert(ctx *c, const sk_cel_val *m, const sk_cel_val *const *keys,
                                    const sk_cel_val *const *vals, size_t add)
{
    if (m->type != SK_CEL_V_MAP)
        return no_overload(c);
    size_t n = m->u.map.n;
    if (!charge(c, (n + add) / 8 + 1))
        return c->exhausted;
    const sk_cel_val **k = sk_arena_alloc(c->a, (n + add) * sizeof *k);
    const sk_cel_val **v = sk_arena_alloc(c->a, (n + add) * sizeof *v);
    memcpy(k, m->u.map.keys, n * sizeof *k);
    memcpy(v, m->u.map.vals, n * sizeof *v);
    for (size_t i = 0; i < add; i++) {
        if (!valid_key(keys[i]))
            return sk_cel_error(c->a, "unsupported key type: %s", sk_cel_type_name(keys[i]));
        sk_cel_work w = budget(c);
        sk_cel_val probe = {.type = SK_CEL_V_MAP, .u.map = {k, v, n + i}};
        long at = sk_cel_map_find(&probe, keys[i], &w);
        if (!settle(c, &w))
            return c->exhausted;
        if (at >= 0) {
            const sk_cel_val *shown = to_string(c, keys[i]);
            return sk_cel_error(c->a, "insert failed: key %s already exists",
                                shown->type == SK_CEL_V_STRING ? shown->u.str.s : "?");
        }
        k[n + i] = keys[i];
        v[n + i] = vals[i];
    }
    return sk_cel_map(c->a, k, v, n + add);
}

/* ---- the cost of a call ---- */

/* cel-go's actualSize: a string's characters, bytes, entries, else 1. */
static uint64_t actual_size(const sk_cel_val *v)
{
    switch (v->type) {
    case SK_CEL_V_STRING:
        return utf8_length(v->u.str.s, v->u.str.len);
    case SK_CEL_V_BYTES:
        return v->u.str.len;
    case SK_CEL_V_LIST:
        return v->u.list.n;
    case SK_CEL_V_MAP:
        return v->u.map.n;
    case SK_CEL_V_OPAQUE:
        return v->u.opaque.type->cost_size ? v->u.opaque.type->cost_size(v->u.opaque.data) : 1;
    default:
        return 1;
    }
}

/* kube's traversalCost: a tenth of each string's bytes (rounded down),
 * 1 each other scalar, through lists and maps. */
static uint64_t traversal_cost(const sk_cel_val *v)
{
    uint64_t sum = 0;
    switch (v->type) {
    case SK_CEL_V_STRING:
    case SK_CEL_V_BYTES:
        return (uint64_t)((double)v->u.str.len * SK_CEL_STRING_TRAVERSAL);
    case SK_CEL_V_LIST:
        for (size_t i = 0; i < v->u.list.n; i++)
            sum += traversal_cost(v->u.list.items[i]);
        return sum;
    case SK_CEL_V_MAP:
        for (size_t i = 0; i < v->u.map.n; i++)
            sum += traversal_cost(v->u.map.keys[i]) + traversal_cost(v->u.map.vals[i]);
        return sum;
    default:
        return 1;
    }
}

static int is_kind(const sk_cel_val *v, sk_cel_vtype t)
{
    return v->type == t;
}

/* A regular expression of regex_size bytes run over a string of str_size:
 * the string's traversal (one more, so "" costs) times the expression's
 * length factor, as cel-go's matches and kube's find and validate cost it. */
static uint64_t regex_cost(uint64_t str_size, uint64_t regex_size)
{
    return sk_cel_cost_factor(str_size + 1, SK_CEL_STRING_TRAVERSAL) *
           sk_cel_cost_factor(regex_size, SK_CEL_REGEX_LENGTH);
}

/* Kubernetes' CallCost (callcost.h's table): 1 with *out, or 0 for cel-go's
 * own cost. v: the receiver first, then the arguments; r the result. */
static int kube_call_cost(const char *f, int method, const sk_cel_val *const *v, size_t n,
                          const sk_cel_val *r, uint64_t *out)
{
    const double t = SK_CEL_STRING_TRAVERSAL;
    uint64_t c0 = n > 0 ? actual_size(v[0]) : 0, c1 = n > 1 ? actual_size(v[1]) : 0;
    sk_cel_kube_fn kind = sk_cel_kube_fn_of(f);
    switch (kind) {
    case SK_CEL_KFN_CHECK:
        *out = 350000;
        return 1;
    case SK_CEL_KFN_UNIT:
        *out = 1;
        return 1;
    case SK_CEL_KFN_SELECTOR:
        if (n < 2)
            return 0;
        *out = sk_cel_selector_cost(c1);
        return 1;
    case SK_CEL_KFN_TRAVERSAL:
        *out = n > 0 ? traversal_cost(v[0]) : 0;
        return 1;
    case SK_CEL_KFN_URL:
    case SK_CEL_KFN_STRING:
    case SK_CEL_KFN_PARSE:
        if (n < 1)
            return 0;
        *out = sk_cel_cost_factor(c0, t);
        return 1;
    case SK_CEL_KFN_REPLACE:
    case SK_CEL_KFN_SPLIT:
    case SK_CEL_KFN_IP_CANONICAL:
        if (n < 1)
            return 0;
        *out = sk_cel_cost_factor(c0 * 2, t);
        return 1;
    case SK_CEL_KFN_JOIN:
        if (n < 1)
            return 0;
        *out = sk_cel_cost_factor(actual_size(r) * 2, t);
        return 1;
    case SK_CEL_KFN_FIND:
        if (n < 2)
            return 0;
        *out = regex_cost(c0, c1);
        return 1;
    case SK_CEL_KFN_IP:
        if (n < 1)
            return 0;
        /* cidr.ip() reads a field */
        *out = method ? 1 : sk_cel_cost_factor(c0, t);
        return 1;
    case SK_CEL_KFN_CONTAINS_IP:
    case SK_CEL_KFN_CONTAINS_CIDR:
        if (n < 2)
            return 0;
        *out = sk_cel_cost_factor(c0 + c0, t);
        if (kind == SK_CEL_KFN_CONTAINS_CIDR)
            *out += sk_cel_cost_factor(c0, t) + 1;
        if (is_kind(v[1], SK_CEL_V_STRING))
            *out += sk_cel_cost_factor(c1, t);
        return 1;
    case SK_CEL_KFN_VALIDATE: {
        uint64_t regex = n < 2 ? 0 : sk_cel_format_regex_size(v[0]);
        if (!regex)
            return 0;
        *out = regex_cost(c1, regex); /* the expression format.go assumes */
        return 1;
    }
    case SK_CEL_KFN_NONE:
        break;
    }
    return 0;
}

/* What a call costs: ext.Sets' trackers, then kube's CallCost (its
 * functions, and equality of its own types, all opaque here), then
 * cel-go's defaults (runtimecost.go costCall), by the overload the values
 * select. */
/* cel-go's default cost of an operator (f "_op_" or "@in") on two values:
 * equality, string and bytes order and concatenation by size, `in` a
 * list by its items, else 1. */
static uint64_t operator_cost(const char *f, const sk_cel_val *const *v)
{
    const double t = SK_CEL_STRING_TRAVERSAL;
    uint64_t l = actual_size(v[0]), r = actual_size(v[1]);
    int strings = (is_kind(v[0], SK_CEL_V_STRING) && is_kind(v[1], SK_CEL_V_STRING)) ||
                  (is_kind(v[0], SK_CEL_V_BYTES) && is_kind(v[1], SK_CEL_V_BYTES));
    if (f[0] == '@')
        return strcmp(f, "@in") == 0 && is_kind(v[1], SK_CEL_V_LIST) ? r : 1;
    /* _==_ _!=_, and _<_ _>_ _<=_ _>=_ on strings or bytes */
    if ((f[2] == '=' && (f[1] == '=' || f[1] == '!')) || (strings && (f[1] == '<' || f[1] == '>')))
        return sk_cel_cost_factor(r < l ? r : l, t);
    if (strings && strcmp(f, "_+_") == 0)
        return sk_cel_cost_factor(l + r, t);
    return 1;
}

/* What a call costs: ext.Sets' trackers, then kube's CallCost (its
 * functions, and equality of its own types, all opaque here), then
 * cel-go's defaults (runtimecost.go costCall), by the overload the values
 * select. */
static uint64_t call_cost(const char *f, int method, const sk_cel_val *const *v, size_t n,
                          const sk_cel_val *r)
{
    const double t = SK_CEL_STRING_TRAVERSAL;
    uint64_t out;
    if (f[0] == '_' || f[0] == '@') {
        if (n != 2)
            return 1;
        if (is_kind(v[0], SK_CEL_V_OPAQUE) && strcmp(f, "_==_") == 0)
            return 1;
        return operator_cost(f, v);
    }
    if (f[0] == '!' || f[0] == '-')
        return 1;
    if (kube_call_cost(f, method, v, n, r, &out))
        return out;
    if (method && n == 2) {
        if (strcmp(f, "startsWith") == 0 || strcmp(f, "endsWith") == 0 || strcmp(f, "format") == 0)
            return sk_cel_cost_factor(actual_size(v[0]), t);
        /* matches(s, re), the global overload, is not costed by size */
        if (strcmp(f, "matches") == 0)
            return regex_cost(actual_size(v[0]), actual_size(v[1]));
        if (strcmp(f, "contains") == 0 && is_kind(v[0], SK_CEL_V_STRING))
            return sk_cel_cost_factor(actual_size(v[0]), t) *
                   sk_cel_cost_factor(actual_size(v[1]), t);
        return 1;
    }
    if (method)
        return 1;
    if (n == 2 && is_kind(v[0], SK_CEL_V_LIST) && is_kind(v[1], SK_CEL_V_LIST) &&
        strncmp(f, "sets.", 5) == 0) {
        double factor = strcmp(f, "sets.equivalent") == 0 ? 2 : 1;
        return 1 + (uint64_t)((double)(actual_size(v[0]) * actual_size(v[1])) * factor);
    }
    if (n == 1 && ((strcmp(f, "bytes") == 0 && is_kind(v[0], SK_CEL_V_STRING)) ||
                   (strcmp(f, "string") == 0 && is_kind(v[0], SK_CEL_V_BYTES)) ||
                   strcmp(f, "strings.quote") == 0))
        return sk_cel_cost_factor(actual_size(v[0]), t);
    return 1;
}

/* x[i], x[?i], x.?f: a qualifier of the attribute x is (cel-go's
 * planIndex): x and i are resolved, the qualifier costs 1. */
static const sk_cel_val *qualify(ctx *c, const sk_cel_expr *e, const char *f, int resolved)
{
    if (!cost(c, attribute_cost(e, resolved)))
        return c->exhausted;
    c->resolving = 1;
    const sk_cel_val *x = eval(c, e->u.call.args[0]);
    c->resolving = 1;
    const sk_cel_val *i = eval(c, e->u.call.args[1]);
    if (c->exhausted)
        return c->exhausted;
    if (is_err(x))
        return x;
    if (is_err(i))
        return i;
    if (!cost(c, 1))
        return c->exhausted;
    if (f[1] == '[' && f[2] == '_')
        return index_value(c, x, i);
    if (f[1] == '[')
        return index_value(c, as_optional(c, x), i);
    if (i->type != SK_CEL_V_STRING)
        return no_overload(c);
    return field(c, as_optional(c, x), i->u.str.s, 0);
}

static const sk_cel_val *apply(ctx *c, const char *f, int method, const sk_cel_val **v, size_t n);

static const sk_cel_val *call(ctx *c, const sk_cel_expr *e, int resolved)
{
    const char *f = e->u.call.function;
    const sk_cel_expr *target = e->u.call.target;
    size_t nargs = e->u.call.nargs;
    /* optional.of(x), strings.quote(s), sets.contains(a, b) and the like
     * parse as methods of an identifier: they are the qualified functions
     * unless a comprehension names a variable so. */
    if (target && target->kind == SK_CEL_IDENT && !is_local(c, target->u.ident)) {
        const char *q = sk_cel_lib_qualified(target->u.ident, f);
        if (q) {
            f = q;
            target = NULL;
        }
    }
    int is_and = strcmp(f, "_&&_") == 0;
    if (!target && nargs == 2 && (is_and || strcmp(f, "_||_") == 0))
        return logic(c, e, is_and);
    if (!target && nargs == 3 && strcmp(f, "_?_:_") == 0)
        return conditional(c, e);
    if (target && nargs == 1 && (strcmp(f, "or") == 0 || strcmp(f, "orValue") == 0))
        return optional_or(c, target, e->u.call.args[0], f[2] == 'V');
    if (!target && nargs == 1 && strcmp(f, "@not_strictly_false") == 0) {
        const sk_cel_val *x = eval(c, e->u.call.args[0]);
        if (!cost(c, 1))
            return c->exhausted;
        return x->type == SK_CEL_V_BOOL ? x : sk_cel_bool(1);
    }
    if (!target && nargs == 2 && is_qualifier(f))
        return qualify(c, e, f, resolved);
    /* kube's program folds a conversion of a constant, and makes `in` a
     * constant list a set lookup (an empty one: false, x not evaluated) */
    int no_cost = folded(c, e);
    if (c->opt->optimize && !target && nargs == 2 && strcmp(f, "@in") == 0 &&
        set_membership(c, e->u.call.args[1])) {
        if (e->u.call.args[1]->u.list.n == 0)
            return sk_cel_bool(0);
        no_cost = 1;
    }
    /* Every other function is strict: the first error among the receiver
     * and the arguments, left to right, is the result. */
    const sk_cel_val *v[4];
    size_t n = 0;
    if (target)
        v[n++] = eval(c, target);
    if (nargs + n > 4)
        return no_overload(c);
    for (size_t i = 0; i < nargs; i++)
        v[n++] = eval(c, e->u.call.args[i]);
    if (c->exhausted)
        return c->exhausted;
    const sk_cel_val *r = apply(c, f, target != NULL, v, n);
    if (c->exhausted || (!no_cost && !cost(c, call_cost(f, target != NULL, v, n, r))))
        return c->exhausted;
    return r;
}

/* f of v[0..n) (the receiver first when method), evaluated. */
static const sk_cel_val *apply(ctx *c, const char *f, int method, const sk_cel_val **v, size_t n)
{
    /* Every function of strings and bytes here (concatenation, ordering,
     * search, size, conversion, error messages quoting them) is linear in
     * their lengths: charged once for all of them. */
    for (size_t i = 0; i < n; i++) {
        if (is_err(v[i]))
            return v[i];
        if ((v[i]->type == SK_CEL_V_STRING || v[i]->type == SK_CEL_V_BYTES) &&
            !charge(c, v[i]->u.str.len / 64))
            return c->exhausted;
    }
    sk_cel_work w = budget(c);
    const sk_cel_val *r = sk_cel_time_call(c->a, f, method, v, n, &w);
    if (!r)
        r = sk_cel_optional_call(c->a, f, method, v, n, &w);
    if (!r)
        r = sk_cel_strext_call(c->a, f, method, v, n, &w);
    if (!r)
        r = sk_cel_authz_call(c->a, f, method, v, n, c->opt->authorize, c->opt->authorize_ctx);
    if (!settle(c, &w))
        return c->exhausted;
    if (r)
        return r;
    if (n == 1 && !method) {
        if (strcmp(f, "!_") == 0)
            return v[0]->type == SK_CEL_V_BOOL ? sk_cel_bool(!v[0]->u.b) : no_overload(c);
        if (strcmp(f, "-_") == 0)
            return negate(c, v[0]);
        if (strcmp(f, "int") == 0)
            return to_int(c, v[0]);
        if (strcmp(f, "uint") == 0)
            return to_uint(c, v[0]);
        if (strcmp(f, "double") == 0)
            return to_double(c, v[0]);
        if (strcmp(f, "string") == 0 && v[0]->type != SK_CEL_V_OPAQUE)
            return to_string(c, v[0]);
        if (strcmp(f, "bytes") == 0)
            return to_bytes(c, v[0]);
        if (strcmp(f, "bool") == 0)
            return to_bool(c, v[0]);
        if (strcmp(f, "type") == 0)
            return sk_cel_type(c->a, sk_cel_type_name(v[0]));
        if (strcmp(f, "dyn") == 0)
            return v[0];
    }
    if (n == 1 && strcmp(f, "size") == 0)
        return size_of(c, v[0]);
    if (!method && strcmp(f, "cel.@mapInsert") == 0) {
        if (n == 3)
            return map_insert(c, v[0], &v[1], &v[2], 1);
        if (n == 2 && v[1]->type == SK_CEL_V_MAP)
            return map_insert(c, v[0], v[1]->u.map.keys, v[1]->u.map.vals, v[1]->u.map.n);
        return no_overload(c);
    }
    if (n == 2 && !method) {
        if (strcmp(f, "_+_") == 0 || strcmp(f, "_-_") == 0 || strcmp(f, "_*_") == 0 ||
            strcmp(f, "_/_") == 0 || strcmp(f, "_%_") == 0)
            return arith(c, f, v[0], v[1]);
        if (strcmp(f, "_==_") == 0 || strcmp(f, "_!=_") == 0 || strcmp(f, "_<_") == 0 ||
            strcmp(f, "_<=_") == 0 || strcmp(f, "_>_") == 0 || strcmp(f, "_>=_") == 0)
            return relation(c, f, v[0], v[1]);
        if (strcmp(f, "@in") == 0)
            return in(c, v[0], v[1]);
    }
    /* contains, startsWith and endsWith are methods only (cel-go's
     * overloads). */
    if (n == 2 && method &&
        (strcmp(f, "contains") == 0 || strcmp(f, "startsWith") == 0 || strcmp(f, "endsWith") == 0))
        return string_test(c, f, v[0], v[1]);
    r = sk_cel_lib_call(c, f, method, v, n);
    return r ? r : no_overload(c);
}

/* ---- comprehensions ---- */

static const sk_cel_val *comprehension(ctx *c, const sk_cel_expr *e)
{
    const sk_cel_val *range = eval(c, e->u.comp.iter_range);
    if (is_err(range))
        return range;
    const sk_cel_val *const *items;
    size_t n;
    if (range->type == SK_CEL_V_LIST) {
        items = range->u.list.items;
        n = range->u.list.n;
    } else if (range->type == SK_CEL_V_MAP) {
        items = range->u.map.keys;
        n = range->u.map.n;
    } else {
        return sk_cel_error(c->a, "expression of type '%s' cannot be range of a comprehension",
                            sk_cel_type_name(range));
    }
    local accu = {e->u.comp.accu_var, eval(c, e->u.comp.accu_init), c->locals};
    local iter = {e->u.comp.iter_var, NULL, &accu};
    /* two variables: a list's index and item, a map's key and value */
    local iter2 = {e->u.comp.iter_var2, NULL, &iter};
    int two = e->u.comp.iter_var2 != NULL;
    local *saved = c->locals;
    const sk_cel_val *r;
    for (size_t i = 0; i < n; i++) {
        if (!charge(c, 1))
            break;
        if (two && range->type == SK_CEL_V_LIST) {
            iter.val = sk_cel_int(c->a, (int64_t)i);
            iter2.val = items[i];
        } else {
            iter.val = items[i];
            iter2.val = two ? range->u.map.vals[i] : NULL;
        }
        c->locals = two ? &iter2 : &iter;
        const sk_cel_val *cond = eval(c, e->u.comp.loop_cond);
        if (cond->type == SK_CEL_V_BOOL && !cond->u.b)
            break;
        accu.val = eval(c, e->u.comp.loop_step);
    }
    c->locals = &accu;
    r = eval(c, e->u.comp.result);
    c->locals = saved;
    return r;
}

/* With optimize, the list and map literals and conversions cel-go folds
 * into constants when it plans the program are made once an evaluation
 * (a node and its value, or NULL when the node does not fold), as cel-go
 * makes them once: a constant list in a loop costs its steps and memory
 * once, not each time round. An open-addressing table keyed by node. */
typedef struct folds {
    const sk_cel_expr **keys;
    const sk_cel_val **vals;
    size_t cap, n;
} folds;

static size_t fold_slot(const folds *f, const sk_cel_expr *e)
{
    size_t i = (((uintptr_t)e >> 4) * 0x9E3779B97F4A7C15ULL) & (f->cap - 1);
    while (f->keys[i] && f->keys[i] != e)
        i = (i + 1) & (f->cap - 1);
    return i;
}

/* The slot of e in c's folds, added (value NULL) when new. */
static const sk_cel_val **fold_entry(ctx *c, const sk_cel_expr *e, int *added)
{
    folds *f = c->folds;
    if (!f) {
        f = c->folds = sk_arena_alloc(c->a, sizeof *f);
        memset(f, 0, sizeof *f);
    }
    if (2 * (f->n + 1) > f->cap) {
        folds old = *f;
        f->cap = old.cap ? old.cap * 2 : 16;
        f->keys = sk_arena_alloc(c->a, f->cap * sizeof *f->keys);
        f->vals = sk_arena_alloc(c->a, f->cap * sizeof *f->vals);
        memset(f->keys, 0, f->cap * sizeof *f->keys);
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i]) {
                size_t k = fold_slot(f, old.keys[i]);
                f->keys[k] = old.keys[i];
                f->vals[k] = old.vals[i];
            }
    }
    size_t k = fold_slot(f, e);
    *added = !f->keys[k];
    if (*added) {
        f->keys[k] = e;
        f->vals[k] = NULL;
        f->n++;
    }
    return &f->vals[k];
}

static const sk_cel_val *eval_node(ctx *c, const sk_cel_expr *e, int resolved);

static const sk_cel_val *eval(ctx *c, const sk_cel_expr *e)
{
    int resolved = c->resolving;
    c->resolving = 0;
    if (!charge(c, 1))
        return c->exhausted;
    if (c->opt->optimize && (e->kind == SK_CEL_LIST || e->kind == SK_CEL_MAP || is_conversion(e))) {
        int added;
        const sk_cel_val **v = fold_entry(c, e, &added);
        if (!added)
            return *v ? *v : eval_node(c, e, resolved);
        if (!folded(c, e))
            return eval_node(c, e, resolved);
        const sk_cel_val *r = eval_node(c, e, resolved);
        /* the table may have grown meanwhile */
        if (!c->exhausted)
            *fold_entry(c, e, &added) = r;
        return r;
    }
    return eval_node(c, e, resolved);
}

static const sk_cel_val *eval_node(ctx *c, const sk_cel_expr *e, int resolved)
{
    switch (e->kind) {
    case SK_CEL_CONST:
        return constant(c, e);
    case SK_CEL_IDENT:
        return ident(c, e->u.ident, resolved);
    case SK_CEL_SELECT:
        return select_field(c, e, resolved);
    case SK_CEL_CALL:
        return call(c, e, resolved);
    case SK_CEL_LIST:
        return list_literal(c, e);
    case SK_CEL_MAP:
    case SK_CEL_STRUCT:
        return map_literal(c, e);
    case SK_CEL_COMPREHENSION:
        return comprehension(c, e);
    default:
        return sk_cel_error(c->a, "expression with errors");
    }
}

const sk_cel_val *sk_cel_eval(sk_arena *a, const sk_cel_expr *e, const sk_cel_eval_options *opt,
                              sk_cel_usage *used)
{
    static const sk_cel_eval_options none = {0};
    ctx c = {.a = a, .opt = opt ? opt : &none};
    uint64_t limit = c.opt->cost_limit, per_cost = SK_CEL_STEPS_PER_COST;
    uint64_t cap = !limit                          ? SK_CEL_DEFAULT_MAX_STEPS
                   : limit > UINT64_MAX / per_cost ? UINT64_MAX
                                                   : limit * per_cost;
    c.max_steps = c.opt->max_steps && (!limit || c.opt->max_steps < cap) ? c.opt->max_steps : cap;
    const sk_cel_val *r = eval(&c, e);
    if (c.exhausted)
        r = c.exhausted;
    if (used) {
        used->steps = c.steps;
        used->cost = c.cost;
    }
    return r;
}
