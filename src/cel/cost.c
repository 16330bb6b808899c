/*
 * cost.c - see cost.h. The walk of cel-go's coster: each node's cost, the
 * path of what it reads (an identifier's name, a select's field, a
 * comprehension variable standing for its range's "@items" or "@keys", an
 * index's "@items" or "@values"), and the sizes calls and comprehensions
 * compute, which the nodes above read before asking the caller.
 *
 * Overloads are told apart by function and declared signature
 * (check_decls.h), where cel-go and Kubernetes test overload ids. Two of
 * cel-go's quirks are kept because kube's numbers come from them: the
 * estimator's target pointer is never nil (so Kubernetes' "target != nil"
 * tests always pass), and a two-variable comprehension's second variable
 * is not scoped (its path is its bare name, which the caller resolves
 * from its root).
 */
#include "cel/cost.h"
#include "cel/check_decls.h"
#include "core/utf8.h"

#include <math.h>
#include <string.h>

#define MAX UINT64_MAX

/* ---- saturating arithmetic (cel-go's *NoOverflow) ---------------------------- */

static uint64_t add(uint64_t x, uint64_t y)
{
    return y > 0 && x > MAX - y ? MAX : x + y;
}

static uint64_t mul(uint64_t x, uint64_t y)
{
    return y != 0 && x > MAX / y ? MAX : x * y;
}

static sk_cel_range r_add(sk_cel_range a, sk_cel_range b)
{
    return (sk_cel_range){add(a.min, b.min), add(a.max, b.max)};
}

static sk_cel_range r_mul(sk_cel_range a, sk_cel_range b)
{
    return (sk_cel_range){mul(a.min, b.min), mul(a.max, b.max)};
}

static sk_cel_range r_factor(sk_cel_range a, double f)
{
    return (sk_cel_range){sk_cel_cost_factor(a.min, f), sk_cel_cost_factor(a.max, f)};
}

static sk_cel_range r_union(sk_cel_range a, sk_cel_range b)
{
    return (sk_cel_range){b.min < a.min ? b.min : a.min, b.max > a.max ? b.max : a.max};
}

static const sk_cel_range ONE = {1, 1};
#define STRING_TRAVERSAL SK_CEL_STRING_TRAVERSAL
#define REGEX_LENGTH SK_CEL_REGEX_LENGTH
#define LIST_CREATE SK_CEL_LIST_CREATE
#define MAP_CREATE SK_CEL_MAP_CREATE
#define STRUCT_CREATE SK_CEL_STRUCT_CREATE
#define MAX_NAME_FORMAT_REGEX 128 /* k8s.io/apiserver/pkg/cel MaxNameFormatRegexSize */
#define MAX_FORMAT 64             /* MaxFormatSize */

/* ---- what the walk knows of each node ---------------------------------------- */

typedef struct info {
    const char **path; /* NULL: none */
    size_t npath;
    int sized;
    sk_cel_range size;
} info;

typedef struct scope {
    const char *var;
    const sk_cel_expr *range;
    const struct scope *up;
} scope;

typedef struct coster {
    sk_arena *a;
    const sk_cel_checked *c;
    const sk_cel_cost_options *opt;
    const sk_cel_expr **keys;
    info *vals;
    size_t cap, n;
} coster;

static size_t slot(const coster *c, const sk_cel_expr *e)
{
    size_t i = (((uintptr_t)e >> 4) * 0x9E3779B97F4A7C15ULL) & (c->cap - 1);
    while (c->keys[i] && c->keys[i] != e)
        i = (i + 1) & (c->cap - 1);
    return i;
}

static info *at(coster *c, const sk_cel_expr *e)
{
    if (2 * (c->n + 1) > c->cap) {
        coster old = *c;
        c->cap = old.cap ? old.cap * 2 : 64;
        c->keys = sk_arena_alloc(c->a, c->cap * sizeof *c->keys);
        c->vals = sk_arena_alloc(c->a, c->cap * sizeof *c->vals);
        memset(c->keys, 0, c->cap * sizeof *c->keys);
        c->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i]) {
                size_t s = slot(c, old.keys[i]);
                c->keys[s] = old.keys[i];
                c->vals[s] = old.vals[i];
                c->n++;
            }
    }
    size_t s = slot(c, e);
    if (!c->keys[s]) {
        c->keys[s] = e;
        memset(&c->vals[s], 0, sizeof c->vals[s]);
        c->n++;
    }
    return &c->vals[s];
}

/* The path of p extended by one name. */
static void set_path(coster *c, const sk_cel_expr *e, const info *p, const char *name)
{
    const char **path = sk_arena_alloc(c->a, ((p ? p->npath : 0) + 1) * sizeof *path);
    size_t n = 0;
    if (p && p->path) {
        memcpy(path, p->path, p->npath * sizeof *path);
        n = p->npath;
    }
    path[n++] = name;
    info *i = at(c, e);
    i->path = path;
    i->npath = n;
}

/* cel-go's AstNode: a node's path (none for the accumulator's), type, and
 * the size computed for it or, for literals, seen in it. */
typedef struct node {
    const char **path;
    size_t npath;
    const sk_cel_ty *type;
    const sk_cel_expr *e; /* NULL: a list's items (Kubernetes' itemsNode) */
    int sized;
    sk_cel_range size;
} node;

static node new_node(coster *c, const sk_cel_expr *e)
{
    node n = {0};
    n.e = e;
    n.type = sk_cel_checked_node_type(c->c, e);
    const info *i = at(c, e);
    if (i->path && strcmp(i->path[0], "@result") != 0 && strcmp(i->path[0], "__result__") != 0) {
        n.path = i->path;
        n.npath = i->npath;
    }
    n.sized = i->sized;
    n.size = i->size;
    return n;
}

/* ComputedSize: a literal's own size, else what was computed. */
static int computed_size(const node *n, sk_cel_range *out)
{
    if (n->sized) {
        *out = n->size;
        return 1;
    }
    const sk_cel_expr *e = n->e;
    uint64_t v = 0;
    if (!e)
        return 0;
    if (e->kind == SK_CEL_CONST) {
        if (e->u.lit.kind == SK_CEL_STRING) {
            uint32_t cp;
            for (size_t i = 0; i < e->u.lit.len; v++)
                i += sk_utf8_decode(e->u.lit.s + i, e->u.lit.len - i, &cp);
        } else {
            v = e->u.lit.kind == SK_CEL_BYTES ? e->u.lit.len : 1;
        }
    } else if (e->kind == SK_CEL_LIST) {
        v = e->u.list.n;
    } else if (e->kind == SK_CEL_MAP) {
        v = e->u.obj.n;
    } else {
        return 0;
    }
    *out = (sk_cel_range){v, v};
    return 1;
}

/* n's size when it is known: computed, else the caller's. */
static int known_size(coster *c, const node *n, sk_cel_range *out)
{
    return computed_size(n, out) ||
           (n->npath && c->opt->size && c->opt->size(c->opt->size_ctx, n->path, n->npath, out));
}

/* Kubernetes' sizeEstimate: known, else any. */
static sk_cel_range kube_size(coster *c, const node *n)
{
    sk_cel_range r;
    return known_size(c, n, &r) ? r : (sk_cel_range){0, MAX};
}

static int scalar(const sk_cel_ty *t)
{
    switch (t ? t->kind : SK_CEL_TY_DYN) {
    case SK_CEL_TY_BOOL:
    case SK_CEL_TY_DOUBLE:
    case SK_CEL_TY_DURATION:
    case SK_CEL_TY_INT:
    case SK_CEL_TY_TIMESTAMP:
    case SK_CEL_TY_UINT:
        return 1;
    default:
        return 0;
    }
}

/* cel-go's sizeEstimate: Kubernetes' with scalars of size 1. */
static sk_cel_range size_of(coster *c, const node *n)
{
    sk_cel_range r;
    if (known_size(c, n, &r))
        return r;
    return scalar(n->type) ? ONE : (sk_cel_range){0, MAX};
}

/* listElementNode: the items of a list (or the keys of a map: the first
 * type parameter), as a node with the list's path and "@items". */
static int element_node(coster *c, const node *list, node *out)
{
    if (!list->type || !list->type->np)
        return 0;
    memset(out, 0, sizeof *out);
    out->type = list->type->p[0];
    if (list->path) {
        out->path = sk_arena_alloc(c->a, (list->npath + 1) * sizeof *out->path);
        memcpy(out->path, list->path, list->npath * sizeof *out->path);
        out->path[list->npath] = "@items";
        out->npath = list->npath + 1;
    }
    return 1;
}

/* ---- function costs ----------------------------------------------------------- */

typedef struct call_est {
    sk_cel_range cost;
    int sized;
    sk_cel_range size;
} call_est;

static int is(const sk_cel_overload *o, const char *fn, const char *sig)
{
    return strcmp(o->function, fn) == 0 && (!sig || strcmp(o->sig, sig) == 0);
}

/* kube's selectorCostEstimate over a size range */
static sk_cel_range selector_cost(sk_cel_range len)
{
    return (sk_cel_range){sk_cel_selector_cost(len.min), sk_cel_selector_cost(len.max)};
}

/* k8s.io/apiserver's CostEstimator.EstimateCallCost: 1 with *out, or 0. */
static int kube_call(coster *c, const sk_cel_overload *o, const node *target, const node *args,
                     size_t nargs, call_est *out)
{
    const char *f = o->function;
    sk_cel_kube_fn kind = sk_cel_kube_fn_of(f);
    memset(out, 0, sizeof *out);
    if (kind == SK_CEL_KFN_CHECK) {
        out->cost = (sk_cel_range){350000, 350000};
    } else if (kind == SK_CEL_KFN_UNIT) {
        out->cost = ONE;
    } else if (kind == SK_CEL_KFN_SELECTOR) {
        if (nargs != 1)
            return 0;
        out->cost = selector_cost(kube_size(c, &args[0]));
    } else if (kind == SK_CEL_KFN_TRAVERSAL) {
        node el;
        if (!target)
            return 0;
        if (element_node(c, target, &el)) {
            sk_cel_range elc = ONE;
            if (el.type->kind == SK_CEL_TY_STRING || el.type->kind == SK_CEL_TY_BYTES)
                elc = r_add(elc, r_factor(kube_size(c, &el), STRING_TRAVERSAL));
            out->cost = r_mul(kube_size(c, target), elc);
        } else {
            out->cost = r_factor(kube_size(c, target), STRING_TRAVERSAL);
        }
    } else if (kind == SK_CEL_KFN_URL) {
        if (nargs != 1)
            return 0;
        out->size = kube_size(c, &args[0]);
        out->sized = 1;
        out->cost = r_factor(out->size, STRING_TRAVERSAL);
    } else if (kind == SK_CEL_KFN_STRING) {
        if (!target)
            return 0;
        out->size = kube_size(c, target);
        out->sized = 1;
        out->cost = r_factor(out->size, STRING_TRAVERSAL);
    } else if (kind == SK_CEL_KFN_REPLACE) {
        if (!target || nargs < 2)
            return 0;
        sk_cel_range sz = kube_size(c, target), from = kube_size(c, &args[0]),
                     to = kube_size(c, &args[1]), count = {0, 0}, kept = {0, 0};
        if (from.min == 0) {
            count.max = sz.max < MAX ? sz.max + 1 : sz.max;
            kept.max = sz.max;
        } else if (to.max <= from.min) {
            kept.max = sz.max;
        } else {
            count.max = (uint64_t)ceil((double)sz.max / (double)from.min);
        }
        if (from.max == 0) {
            count.min = sz.min < MAX ? sz.min + 1 : sz.min;
            kept.min = sz.min;
        } else if (from.max <= to.min) {
            kept.min = sz.min;
        } else {
            count.min = (uint64_t)ceil((double)sz.min / (double)from.max);
        }
        out->size = r_add(r_mul(count, to), kept);
        out->sized = 1;
        out->cost = r_factor(sz, 2 * STRING_TRAVERSAL);
    } else if (kind == SK_CEL_KFN_SPLIT) {
        if (!target)
            return 0;
        sk_cel_range sz = kube_size(c, target);
        uint64_t max = sz.max;
        if (nargs > 1 && args[1].e->kind == SK_CEL_CONST && args[1].e->u.lit.kind == SK_CEL_INT)
            max = (uint64_t)args[1].e->u.lit.i;
        out->cost = r_factor(sz, 2 * STRING_TRAVERSAL);
        out->size = (sk_cel_range){0, max};
        out->sized = 1;
    } else if (kind == SK_CEL_KFN_JOIN) {
        if (!target)
            return 0;
        sk_cel_range sz = {0, 0}, list = kube_size(c, target);
        node el;
        if (element_node(c, target, &el))
            sz = r_mul(list, kube_size(c, &el));
        if (nargs > 0) {
            sk_cel_range seps = {list.min > 0 ? list.min - 1 : 0, list.max > 0 ? list.max - 1 : 0};
            sz = r_add(sz, r_mul(kube_size(c, &args[0]), seps));
        }
        out->cost = r_factor(sz, STRING_TRAVERSAL);
        out->size = sz;
        out->sized = 1;
    } else if (kind == SK_CEL_KFN_FIND) {
        if (!target || nargs < 1)
            return 0;
        sk_cel_range sz = kube_size(c, target);
        sk_cel_range str = r_factor(r_add(sz, ONE), STRING_TRAVERSAL);
        sk_cel_range re = r_factor(kube_size(c, &args[0]), REGEX_LENGTH);
        out->cost = r_mul(str, re);
        out->size = (sk_cel_range){0, sz.max};
        out->sized = 1;
    } else if (kind == SK_CEL_KFN_PARSE) {
        out->cost = r_factor(kube_size(c, &args[0]), STRING_TRAVERSAL);
    } else if (kind == SK_CEL_KFN_IP) {
        if (nargs >= 1 && !is(o, "ip", "net.CIDR>net.IP"))
            out->cost = r_factor(kube_size(c, &args[0]), STRING_TRAVERSAL);
        else
            out->cost = ONE;
    } else if (kind == SK_CEL_KFN_IP_CANONICAL) {
        if (nargs < 1)
            return 0;
        out->cost = r_factor(kube_size(c, &args[0]), 2 * STRING_TRAVERSAL);
    } else if (kind == SK_CEL_KFN_CONTAINS_IP || kind == SK_CEL_KFN_CONTAINS_CIDR) {
        if (nargs < 1)
            return 0;
        sk_cel_range ip = {4, 16};
        out->cost = r_factor(r_add(ip, ip), STRING_TRAVERSAL);
        if (kind == SK_CEL_KFN_CONTAINS_CIDR)
            out->cost = r_add(r_add(out->cost, r_factor(ip, STRING_TRAVERSAL)), ONE);
        if (strcmp(o->sig, "net.CIDR,string>bool") == 0)
            out->cost = r_add(out->cost, r_factor(kube_size(c, &args[0]), STRING_TRAVERSAL));
    } else if (kind == SK_CEL_KFN_VALIDATE) {
        out->cost = r_factor(r_factor(kube_size(c, &args[0]), STRING_TRAVERSAL),
                             MAX_NAME_FORMAT_REGEX * REGEX_LENGTH);
    } else if (strcmp(f, "_==_") == 0 && nargs == 2 && args[0].type && args[1].type &&
               sk_cel_ty_name(args[0].type) &&
               strcmp(sk_cel_ty_name(args[0].type), sk_cel_ty_name(args[1].type)) == 0 &&
               args[0].type->kind == args[1].type->kind) {
        const sk_cel_ty *t = args[0].type;
        const char *n = sk_cel_ty_name(t);
        if (t->kind == SK_CEL_TY_OPAQUE && (strcmp(n, "net.IP") == 0 || strcmp(n, "net.CIDR") == 0))
            out->cost = ONE;
        else if (t->kind == SK_CEL_TY_OBJECT && (strcmp(n, "kubernetes.Quantity") == 0 ||
                                                 strncmp(n, "kubernetes.authorization.", 25) == 0))
            out->cost = ONE;
        else if (t->kind == SK_CEL_TY_OBJECT && strcmp(n, "kubernetes.NamedFormat") == 0)
            out->cost = r_factor((sk_cel_range){1, MAX_FORMAT}, STRING_TRAVERSAL);
        else if (t->kind == SK_CEL_TY_OBJECT && strcmp(n, "kubernetes.URL") == 0) {
            sk_cel_range s = ONE, rs;
            /* kube reads the right-hand side's computed size twice */
            if (computed_size(&args[1], &rs))
                s = r_union(rs, rs);
            out->cost = r_factor((sk_cel_range){1, s.max}, STRING_TRAVERSAL);
        } else
            return 0;
    } else {
        return 0;
    }
    return 1;
}

/* coster.functionCost: the call's estimate with its arguments' costs. */
static call_est function_cost(coster *c, const sk_cel_overload *o, const node *target,
                              const node *args, const sk_cel_range *arg_costs, size_t nargs)
{
    sk_cel_range sum = {0, 0};
    for (size_t i = 0; i < nargs; i++)
        sum = r_add(sum, arg_costs[i]);
    call_est est;
    if (kube_call(c, o, target, args, nargs, &est)) {
        est.cost = r_add(est.cost, sum);
        return est;
    }
    memset(&est, 0, sizeof est);
    const char *f = o->function;
    if (is(o, "format", NULL) && target) {
        est.cost = r_add(r_factor(size_of(c, target), STRING_TRAVERSAL), sum);
    } else if ((is(o, "bytes", "string>bytes") || is(o, "string", "bytes>string") ||
                is(o, "strings.quote", NULL)) &&
               nargs == 1) {
        sk_cel_range sz = size_of(c, &args[0]);
        est.cost = r_add(r_factor(sz, STRING_TRAVERSAL), sum);
        est.sized = 1;
        if (strcmp(f, "bytes") == 0)
            est.size = (sk_cel_range){sz.min, mul(sz.max, 4)};
        else if (strcmp(f, "string") == 0)
            est.size = (sk_cel_range){sz.min / 4, sz.max};
        else
            est.size = (sk_cel_range){add(sz.min, 2), add(mul(sz.max, 2), 2)};
    } else if ((is(o, "startsWith", NULL) || is(o, "endsWith", NULL)) && nargs == 1) {
        est.cost = r_add(r_factor(size_of(c, &args[0]), STRING_TRAVERSAL), sum);
    } else if (is(o, "@in", "A,list(A)>bool") && nargs == 2) {
        est.cost = r_add(r_factor(size_of(c, &args[1]), 1), sum);
    } else if (is(o, "matches", NULL) && o->member && target && nargs == 1) {
        sk_cel_range str = r_factor(r_add(size_of(c, target), ONE), STRING_TRAVERSAL);
        sk_cel_range re = r_factor(size_of(c, &args[0]), REGEX_LENGTH);
        est.cost = r_add(r_mul(str, re), sum);
    } else if (is(o, "contains", NULL) && target && nargs == 1) {
        sk_cel_range str = r_factor(size_of(c, target), STRING_TRAVERSAL);
        sk_cel_range sub = r_factor(size_of(c, &args[0]), STRING_TRAVERSAL);
        est.cost = r_add(r_mul(str, sub), sum);
    } else if (is(o, "_||_", NULL) || is(o, "_&&_", NULL)) {
        est.cost = (sk_cel_range){arg_costs[0].min, r_add(arg_costs[0], arg_costs[1]).max};
    } else if (is(o, "_?_:_", NULL)) {
        est.size = r_union(size_of(c, &args[1]), size_of(c, &args[2]));
        est.sized = 1;
        est.cost = r_add(arg_costs[0], r_union(arg_costs[1], arg_costs[2]));
    } else if ((is(o, "_+_", "string,string>string") || is(o, "_+_", "bytes,bytes>bytes") ||
                is(o, "_+_", "list(A),list(A)>list(A)")) &&
               nargs == 2) {
        est.size = r_add(size_of(c, &args[0]), size_of(c, &args[1]));
        est.sized = 1;
        est.cost = r_add(
            strncmp(o->sig, "list", 4) == 0 ? ONE : r_factor(est.size, STRING_TRAVERSAL), sum);
    } else if (((is(o, "_<_", NULL) || is(o, "_>_", NULL) || is(o, "_<=_", NULL) ||
                 is(o, "_>=_", NULL)) &&
                (strcmp(o->sig, "string,string>bool") == 0 ||
                 strcmp(o->sig, "bytes,bytes>bool") == 0)) ||
               is(o, "_==_", NULL) || is(o, "_!=_", NULL)) {
        sk_cel_range l = size_of(c, &args[0]), r = size_of(c, &args[1]);
        uint64_t smallest = r.max < l.max ? r.max : l.max;
        est.cost = r_add(r_factor((sk_cel_range){smallest > 0, smallest}, STRING_TRAVERSAL), sum);
    } else {
        est.cost = r_add(ONE, sum);
    }
    return est;
}

/* ---- the walk --------------------------------------------------------------------- */

static sk_cel_range cost(coster *c, const sk_cel_expr *e, const scope *sc);

static const sk_cel_ty *type_of(coster *c, const sk_cel_expr *e)
{
    return sk_cel_checked_node_type(c->c, e);
}

static sk_cel_range cost_call(coster *c, const sk_cel_expr *e, const scope *sc)
{
    size_t nargs = e->u.call.nargs, nov;
    sk_cel_range sum = {0, 0};
    sk_cel_range *costs = sk_arena_alloc(c->a, (nargs + 1) * sizeof *costs);
    node *args = sk_arena_alloc(c->a, (nargs + 1) * sizeof *args);
    for (size_t i = 0; i < nargs; i++) {
        costs[i] = cost(c, e->u.call.args[i], sc);
        args[i] = new_node(c, e->u.call.args[i]);
    }
    const sk_cel_overload *const *ovs = sk_cel_checked_overloads(c->c, e, &nov);
    if (!nov)
        return sum;
    /* a namespaced function (sets.contains) was resolved without target */
    int member = e->u.call.target && strcmp(ovs[0]->function, e->u.call.function) == 0;
    node target = {0};
    if (member) {
        sum = r_add(sum, cost(c, e->u.call.target, sc));
        target = new_node(c, e->u.call.target);
    }
    sk_cel_range fn = {MAX, 0};
    int sized = 0;
    sk_cel_range size = {0, 0};
    for (size_t i = 0; i < nov; i++) {
        call_est est = function_cost(c, ovs[i], member ? &target : NULL, args, costs, nargs);
        fn = r_union(fn, est.cost);
        if (est.sized) {
            size = sized ? r_union(size, est.size) : est.size;
            sized = 1;
        }
        if (nargs > 0 && is(ovs[i], "_[_]", "list(A),int>A"))
            set_path(c, e, at(c, e->u.call.args[0]), "@items");
        else if (nargs > 0 && is(ovs[i], "_[_]", "map(A,B),A>B"))
            set_path(c, e, at(c, e->u.call.args[0]), "@values");
    }
    if (sized) {
        info *i = at(c, e);
        i->sized = 1;
        i->size = size;
    }
    return r_add(sum, fn);
}

static sk_cel_range cost_comprehension(coster *c, const sk_cel_expr *e, const scope *sc)
{
    const sk_cel_expr *range = e->u.comp.iter_range;
    sk_cel_range sum = r_add(cost(c, range, sc), cost(c, e->u.comp.accu_init, sc));
    scope inner = {e->u.comp.iter_var, range, sc};
    sk_cel_range loop = cost(c, e->u.comp.loop_cond, &inner);
    sk_cel_range step = cost(c, e->u.comp.loop_step, &inner);
    sum = r_add(sum, cost(c, e->u.comp.result, sc));
    node rn = new_node(c, range);
    sk_cel_range count = size_of(c, &rn);
    info *i = at(c, e);
    i->sized = 1;
    i->size = count;
    return r_add(sum, r_mul(count, r_add(step, loop)));
}

static sk_cel_range cost(coster *c, const sk_cel_expr *e, const scope *sc)
{
    sk_cel_range sum = {0, 0};
    if (!e)
        return sum;
    switch (e->kind) {
    case SK_CEL_CONST:
        return sum;
    case SK_CEL_IDENT: {
        const scope *s = sc;
        while (s && strcmp(s->var, e->u.ident) != 0)
            s = s->up;
        if (!s) {
            set_path(c, e, NULL, e->u.ident);
        } else {
            const sk_cel_ty *t = type_of(c, s->range);
            if (t && t->kind == SK_CEL_TY_LIST)
                set_path(c, e, at(c, s->range), "@items");
            else if (t && t->kind == SK_CEL_TY_MAP)
                set_path(c, e, at(c, s->range), "@keys");
        }
        return ONE;
    }
    case SK_CEL_SELECT: {
        if (e->u.select.test_only) {
            sk_cel_range p = {c->opt->presence_test_cost, c->opt->presence_test_cost};
            return r_add(p, cost(c, e->u.select.operand, sc));
        }
        sum = cost(c, e->u.select.operand, sc);
        const sk_cel_ty *t = type_of(c, e->u.select.operand);
        if (t &&
            (t->kind == SK_CEL_TY_MAP || t->kind == SK_CEL_TY_OBJECT || t->kind == SK_CEL_TY_PARAM))
            sum = r_add(sum, ONE);
        set_path(c, e, at(c, e->u.select.operand), e->u.select.field);
        return sum;
    }
    case SK_CEL_CALL:
        return cost_call(c, e, sc);
    case SK_CEL_LIST:
        for (size_t i = 0; i < e->u.list.n; i++)
            sum = r_add(sum, cost(c, e->u.list.elems[i], sc));
        return r_add(sum, (sk_cel_range){LIST_CREATE, LIST_CREATE});
    case SK_CEL_MAP:
        for (size_t i = 0; i < e->u.obj.n; i++) {
            sum = r_add(sum, cost(c, e->u.obj.entries[i].key, sc));
            sum = r_add(sum, cost(c, e->u.obj.entries[i].value, sc));
        }
        return r_add(sum, (sk_cel_range){MAP_CREATE, MAP_CREATE});
    case SK_CEL_STRUCT:
        for (size_t i = 0; i < e->u.obj.n; i++)
            sum = r_add(sum, cost(c, e->u.obj.entries[i].value, sc));
        return r_add(sum, (sk_cel_range){STRUCT_CREATE, STRUCT_CREATE});
    case SK_CEL_COMPREHENSION:
        return cost_comprehension(c, e, sc);
    case SK_CEL_ERROR_NODE:
        break;
    }
    return sum;
}

sk_cel_range sk_cel_cost(sk_arena *a, const sk_cel_checked *c, const sk_cel_cost_options *opt)
{
    coster co = {.a = a, .c = c, .opt = opt};
    return cost(&co, sk_cel_checked_expr(c), NULL);
}
