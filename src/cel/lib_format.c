/*
 * lib_format.c - see lib_format.h. A format value is its entry of the
 * table: two are equal when they are the same format (format.go's Format
 * compares its Name).
 */
#include "cel/lib_format.h"

#include <string.h>

#define NAME(n, size) #n,
#define QUALIFIED(n, size) "format." #n,
#define REGEX_SIZE(n, size) size,
static const char *const names[] = {SK_CEL_FORMATS(NAME)};
static const char *const qualified[] = {SK_CEL_FORMATS(QUALIFIED)};
static const uint64_t regex_sizes[] = {SK_CEL_FORMATS(REGEX_SIZE)};
#define N_FORMATS (sizeof names / sizeof *names)

/* A format value's data is its entry of names[]. */
static int same_name(const void *x, const void *y)
{
    return x == y;
}

static size_t name_size(const void *x)
{
    return strlen(*(const char *const *)x);
}

static const sk_cel_opaque_type format_type = {"kubernetes.NamedFormat", same_name, name_size,
                                               NULL};

/* names[] index of name, or -1. */
static int find(const char *name)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

uint64_t sk_cel_format_regex_size(const sk_cel_val *v)
{
    if (v->type != SK_CEL_V_OPAQUE || v->u.opaque.type != &format_type)
        return 0;
    return regex_sizes[(const char *const *)v->u.opaque.data - names];
}

const char *sk_cel_format_qualified(const char *f)
{
    if (strcmp(f, "named") == 0)
        return "format.named";
    int i = find(f);
    return i >= 0 ? qualified[i] : NULL;
}

static const sk_cel_val *validate(sk_cel_env *env, const char *format, const sk_cel_val *s)
{
    sk_arena *a = sk_cel_env_arena(env);
    sk_cel_format_fn fn = sk_cel_env_format(env);
    if (!fn)
        return sk_cel_error(a, "no such overload");
    const char *msgs[SK_CEL_FORMAT_MAX_MSGS];
    size_t n = fn(format, s->u.str.s, a, msgs);
    if (n == 0)
        return sk_cel_optional(a, NULL);
    const sk_cel_val **items = sk_arena_alloc(a, n * sizeof *items);
    for (size_t i = 0; i < n; i++)
        items[i] = sk_cel_string(a, msgs[i], strlen(msgs[i]));
    return sk_cel_optional(a, sk_cel_list(a, items, n));
}

const sk_cel_val *sk_cel_lib_format(sk_cel_env *env, const char *f, int method,
                                    const sk_cel_val *const *v, size_t n)
{
    sk_arena *a = sk_cel_env_arena(env);
    if (method && strcmp(f, "validate") == 0 && n == 2 && v[0]->type == SK_CEL_V_OPAQUE &&
        v[0]->u.opaque.type == &format_type) {
        if (v[1]->type != SK_CEL_V_STRING)
            return sk_cel_error(a, "no such overload");
        return validate(env, *(const char *const *)v[0]->u.opaque.data, v[1]);
    }
    if (method || strncmp(f, "format.", 7) != 0)
        return NULL;
    if (strcmp(f, "format.named") == 0) {
        if (n != 1 || v[0]->type != SK_CEL_V_STRING)
            return sk_cel_error(a, "no such overload");
        int i = find(v[0]->u.str.s);
        return sk_cel_optional(a, i >= 0 ? sk_cel_opaque(a, &format_type, &names[i]) : NULL);
    }
    int i = find(f + 7);
    if (i < 0)
        return NULL;
    if (n != 0)
        return sk_cel_error(a, "no such overload");
    return sk_cel_opaque(a, &format_type, &names[i]);
}
