/*
 * lib_sets.c - cel-go's ext/sets.go: lists taken as sets, membership by
 * CEL's heterogeneous equality (so [1] contains 1.0).
 *
 *   sets.contains(a, b)    every element of b is in a ([] is in anything)
 *   sets.equivalent(a, b)  each contains the other (duplicates ignored)
 *   sets.intersects(a, b)  some element of b is in a
 *
 * Work: each equality is charged as value.h's work, so two long lists
 * (quadratic in their lengths) stop at the step bound.
 */
#include "cel/lib_sets.h"

#include <string.h>

/* Whether every element of sub is in set (all 1), or some is (all 0):
 * 1 or 0, or -1 once w passed its limit. */
static int members(const sk_cel_val *set, const sk_cel_val *sub, int all, sk_cel_work *w)
{
    for (size_t i = 0; i < sub->u.list.n; i++) {
        int in = 0;
        for (size_t j = 0; j < set->u.list.n && !in; j++) {
            in = sk_cel_equal(set->u.list.items[j], sub->u.list.items[i], w);
            if (in < 0)
                return -1;
        }
        if (in != all)
            return in;
    }
    return all;
}

const sk_cel_val *sk_cel_lib_sets(sk_cel_env *env, const char *f, int method,
                                  const sk_cel_val *const *v, size_t n)
{
    int contains = strcmp(f, "sets.contains") == 0, equivalent = strcmp(f, "sets.equivalent") == 0;
    if (method || n != 2 || !(contains || equivalent || strcmp(f, "sets.intersects") == 0))
        return NULL;
    if (v[0]->type != SK_CEL_V_LIST || v[1]->type != SK_CEL_V_LIST)
        return sk_cel_error(sk_cel_env_arena(env), "no such overload");
    sk_cel_work w = {0, sk_cel_env_work_left(env)};
    int r = members(v[0], v[1], contains || equivalent, &w);
    if (r == 1 && equivalent)
        r = members(v[1], v[0], 1, &w);
    if (r < 0)
        w.done = w.limit + 64; /* past the bound: the charge below fails */
    if (!sk_cel_env_charge(env, w.done / 64))
        return sk_cel_env_exhausted(env);
    return sk_cel_bool(r);
}
