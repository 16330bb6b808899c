/*
 * lib_lists.c - k8s.io/apiserver/pkg/cel/library/lists.go at release-1.32
 * (1.32 has no `includes`): methods of a list.
 *
 * Without a type checker the overload is chosen by the values, as cel-go's
 * unchecked evaluation does: an element that cannot be ordered (a list, a
 * map, null) is "no such overload", and two elements of kinds that do not
 * order against each other compare as cel-go's Compare does there, giving
 * an error that is not "greater", so isSorted, min and max pass over the
 * pair as lists.go does. sum adds with CEL's `+` from the first element on
 * (the same as adding to the zero of the element type), and is int 0 for
 * an empty list, as cel-go's first overload (int) gives it.
 *
 * Work: every comparison or equality is charged as value.h's work (one
 * unit a value and a 64 bytes), every addition a step.
 */
#include "cel/lib_lists.h"

#include <string.h>

/* lists.go's comparableTypes. */
static int orderable(const sk_cel_val *v)
{
    return v->type == SK_CEL_V_INT || v->type == SK_CEL_V_UINT || v->type == SK_CEL_V_DOUBLE ||
           v->type == SK_CEL_V_STRING || v->type == SK_CEL_V_BYTES || v->type == SK_CEL_V_BOOL ||
           v->type == SK_CEL_V_DURATION || v->type == SK_CEL_V_TIMESTAMP;
}

/* 1 when x > y (the only answer lists.go acts on); charges the work. */
static int greater(sk_cel_work *w, const sk_cel_val *x, const sk_cel_val *y)
{
    int cmp = 0;
    w->done += 1;
    if (x->type == SK_CEL_V_STRING || x->type == SK_CEL_V_BYTES)
        w->done += x->u.str.len / 64;
    return sk_cel_compare(x, y, &cmp) == 1 && cmp > 0;
}

static const sk_cel_val *ordered(sk_cel_env *env, const char *f, const sk_cel_val *list)
{
    sk_arena *a = sk_cel_env_arena(env);
    int sorted = strcmp(f, "isSorted") == 0, want_min = strcmp(f, "min") == 0;
    sk_cel_work w = {0, sk_cel_env_work_left(env)};
    const sk_cel_val *best = NULL, *r = NULL;
    for (size_t i = 0; i < list->u.list.n && !r && w.done <= w.limit; i++) {
        const sk_cel_val *x = list->u.list.items[i];
        if (!orderable(x))
            r = sk_cel_error(a, "no such overload");
        else if (!best)
            best = x;
        else if (sorted && greater(&w, best, x))
            r = sk_cel_bool(0);
        else if (sorted || (want_min ? greater(&w, best, x) : greater(&w, x, best)))
            best = x;
    }
    if (w.done > w.limit)
        w.done = w.limit + 64; /* stopped early: the charge below fails */
    if (!sk_cel_env_charge(env, w.done / 64))
        return sk_cel_env_exhausted(env);
    if (r)
        return r;
    if (sorted)
        return sk_cel_bool(1);
    if (!best)
        return sk_cel_error(a, "%s called on empty list", f);
    return best;
}

static const sk_cel_val *sum(sk_cel_env *env, const sk_cel_val *list)
{
    sk_arena *a = sk_cel_env_arena(env);
    if (list->u.list.n == 0)
        return sk_cel_int(a, 0);
    const sk_cel_val *acc = list->u.list.items[0];
    if (acc->type != SK_CEL_V_INT && acc->type != SK_CEL_V_UINT && acc->type != SK_CEL_V_DOUBLE &&
        acc->type != SK_CEL_V_DURATION) /* lists.go's summableTypes */
        return sk_cel_error(a, "no such overload");
    for (size_t i = 1; i < list->u.list.n && acc->type != SK_CEL_V_ERROR; i++) {
        if (!sk_cel_env_charge(env, 1))
            return sk_cel_env_exhausted(env);
        acc = sk_cel_env_add(env, acc, list->u.list.items[i]);
    }
    return acc;
}

static const sk_cel_val *index_of(sk_cel_env *env, const sk_cel_val *list, const sk_cel_val *x,
                                  int last)
{
    sk_cel_work w = {0, sk_cel_env_work_left(env)};
    size_t n = list->u.list.n;
    int64_t at = -1;
    for (size_t k = 0; k < n && at < 0; k++) {
        size_t i = last ? n - 1 - k : k;
        int eq = sk_cel_equal(list->u.list.items[i], x, &w);
        if (eq < 0) {
            w.done = w.limit + 64; /* past the bound: the charge below fails */
            break;
        }
        if (eq)
            at = (int64_t)i;
    }
    if (!sk_cel_env_charge(env, w.done / 64))
        return sk_cel_env_exhausted(env);
    return sk_cel_int(sk_cel_env_arena(env), at);
}

const sk_cel_val *sk_cel_lib_lists(sk_cel_env *env, const char *f, int method,
                                   const sk_cel_val *const *v, size_t n)
{
    if (!method)
        return NULL;
    int unary = strcmp(f, "isSorted") == 0 || strcmp(f, "sum") == 0 || strcmp(f, "min") == 0 ||
                strcmp(f, "max") == 0;
    int binary = strcmp(f, "indexOf") == 0 || strcmp(f, "lastIndexOf") == 0;
    if (!(unary && n == 1) && !(binary && n == 2))
        return NULL;
    if (v[0]->type != SK_CEL_V_LIST)
        return sk_cel_error(sk_cel_env_arena(env), "no such overload");
    if (binary)
        return index_of(env, v[0], v[1], f[0] == 'l');
    if (strcmp(f, "sum") == 0)
        return sum(env, v[0]);
    return ordered(env, f, v[0]);
}
