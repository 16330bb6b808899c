/*
 * lib.c - routes a call the evaluator does not know to the library that
 * has the function (lib.h). Each library answers NULL for a name it does
 * not have, so the order only matters for speed.
 */
#include "cel/lib.h"

#include "cel/lib_format.h"
#include "cel/lib_lists.h"
#include "cel/lib_net.h"
#include "cel/lib_quantity.h"
#include "cel/lib_regex.h"
#include "cel/lib_sets.h"
#include "cel/lib_url.h"

#include <string.h>

const sk_cel_val *sk_cel_lib_call(sk_cel_env *env, const char *f, int method,
                                  const sk_cel_val *const *v, size_t n)
{
    const sk_cel_val *r = sk_cel_lib_regex(env, f, method, v, n);
    if (!r)
        r = sk_cel_lib_lists(env, f, method, v, n);
    if (!r)
        r = sk_cel_lib_net(env, f, method, v, n);
    if (!r)
        r = sk_cel_lib_url(env, f, method, v, n);
    if (!r)
        r = sk_cel_lib_quantity(env, f, method, v, n);
    if (!r)
        r = sk_cel_lib_sets(env, f, method, v, n);
    if (!r)
        r = sk_cel_lib_format(env, f, method, v, n);
    return r;
}

const char *sk_cel_lib_qualified(const char *ns, const char *f)
{
    static const char *const names[] = {
        "ip.isCanonical",  "optional.none",   "optional.of",     "optional.ofNonZeroValue",
        "optional.unwrap", "sets.contains",   "sets.equivalent", "sets.intersects",
        "strings.quote"};
    if (strcmp(ns, "format") == 0)
        return sk_cel_format_qualified(f);
    size_t len = strlen(ns);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strncmp(names[i], ns, len) == 0 && names[i][len] == '.' &&
            strcmp(names[i] + len + 1, f) == 0)
            return names[i];
    return NULL;
}
