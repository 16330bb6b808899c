/*
 * lib_regex.c - matches (cel-go: a function and a method, Go's
 * regexp.MatchString) and Kubernetes' find / findAll
 * (k8s.io/apiserver/pkg/cel/library/regex.go: Go's FindString and
 * FindAllString, "Illegal regex: ..." for a bad pattern).
 *
 * Compiled patterns are kept for the rest of the evaluation, keyed by their
 * text, so `self.items.all(i, i.name.matches('^[a-z]+$'))` compiles once
 * as cel-go's regex optimization does for a constant pattern; the cache
 * holds the CACHE most recent patterns so looking one up stays cheap, and
 * its comparisons are charged like any string's.
 */
#include "cel/lib_regex.h"

#include "cel/regex.h"
#include "core/utf8.h"

#include <string.h>

#define CACHE 16

typedef struct cached {
    const char *pattern;
    size_t len;
    sk_cel_re *re;   /* NULL: err */
    const char *err; /* Go's message */
} cached;

typedef struct cache {
    cached e[CACHE];
    size_t n, next;
} cache;

/* The compiled pattern p (a string), or NULL with *err Go's message; NULL
 * with *err NULL once the budget is spent. */
static sk_cel_re *compiled(sk_cel_env *env, const sk_cel_val *p, const char **err)
{
    sk_arena *a = sk_cel_env_arena(env);
    cache **slot = (cache **)sk_cel_env_lib_state(env);
    if (!*slot) {
        *slot = sk_arena_alloc(a, sizeof **slot);
        memset(*slot, 0, sizeof **slot);
    }
    cache *c = *slot;
    *err = NULL;
    for (size_t i = 0; i < c->n; i++) {
        cached *e = &c->e[i];
        if (!sk_cel_env_charge(env, 1 + e->len / 64))
            return NULL;
        if (e->len == p->u.str.len && memcmp(e->pattern, p->u.str.s, e->len) == 0) {
            *err = e->err;
            return e->re;
        }
    }
    const char *why = NULL;
    size_t bytes;
    sk_cel_re *re = sk_cel_re_compile(a, p->u.str.s, p->u.str.len, &why, &bytes);
    /* compiling is linear in the pattern and in the memory it takes, which
     * is charged as the evaluator charges memory: 64 bytes a step */
    if (!sk_cel_env_charge(env, (p->u.str.len + bytes) / 64))
        return NULL;
    cached *e = &c->e[c->next];
    c->next = (c->next + 1) % CACHE;
    if (c->n < CACHE)
        c->n++;
    *e = (cached){p->u.str.s, p->u.str.len, re, why};
    *err = why;
    return re;
}

/* One search of s from from, charged: 1 match, 0 none, -1 the budget is
 * spent. */
static int search(sk_cel_env *env, sk_cel_re *re, const sk_cel_val *s, size_t from, size_t *start,
                  size_t *end)
{
    uint64_t work = 0;
    int r = sk_cel_re_search(re, s->u.str.s, s->u.str.len, from, start, end, &work,
                             sk_cel_env_work_left(env));
    if (!sk_cel_env_charge(env, work / 64))
        return -1;
    return r;
}

static const sk_cel_val *find_all(sk_cel_env *env, sk_cel_re *re, const sk_cel_val *s,
                                  int64_t limit)
{
    /* Go's FindAllString: an empty match right after the previous match
     * is skipped, and the search moves on a character past an empty one. */
    sk_arena *a = sk_cel_env_arena(env);
    const sk_cel_val **items = NULL;
    size_t n = 0, cap = 0, len = s->u.str.len;
    if (limit < 0)
        limit = INT64_MAX;
    long prev_end = -1;
    for (size_t pos = 0; (int64_t)n < limit && pos <= len;) {
        size_t start, end;
        int r = search(env, re, s, pos, &start, &end);
        if (r < 0)
            return sk_cel_env_exhausted(env);
        if (r == 0)
            break;
        int accept = 1;
        if (end == pos) {
            accept = (long)start != prev_end;
            if (pos < len) {
                uint32_t cp;
                pos += sk_utf8_decode(s->u.str.s + pos, len - pos, &cp);
            } else {
                pos = len + 1;
            }
        } else {
            pos = end;
        }
        prev_end = (long)end;
        if (accept) {
            items = sk_arena_grow(a, items, n, &cap, sizeof *items);
            items[n++] =
                sk_cel_string(a, sk_arena_strndup(a, s->u.str.s + start, end - start), end - start);
        }
    }
    return sk_cel_list(a, items, n);
}

const sk_cel_val *sk_cel_lib_regex(sk_cel_env *env, const char *f, int method,
                                   const sk_cel_val *const *v, size_t n)
{
    int is_matches = strcmp(f, "matches") == 0;
    int is_find = method && strcmp(f, "find") == 0;
    int is_find_all = method && strcmp(f, "findAll") == 0;
    sk_arena *a = sk_cel_env_arena(env);
    if (!((is_matches || is_find) && n == 2) && !(is_find_all && (n == 2 || n == 3)))
        return NULL;
    if (v[0]->type != SK_CEL_V_STRING || v[1]->type != SK_CEL_V_STRING ||
        (n == 3 && v[2]->type != SK_CEL_V_INT))
        return sk_cel_error(a, "no such overload");
    const char *err;
    sk_cel_re *re = compiled(env, v[1], &err);
    if (!re && !err)
        return sk_cel_env_exhausted(env);
    if (!re)
        return is_matches ? sk_cel_error(a, "%s", err) : sk_cel_error(a, "Illegal regex: %s", err);
    if (is_find_all)
        return find_all(env, re, v[0], n == 3 ? v[2]->u.i : -1);
    size_t start, end;
    int r = search(env, re, v[0], 0, is_matches ? NULL : &start, is_matches ? NULL : &end);
    if (r < 0)
        return sk_cel_env_exhausted(env);
    if (is_matches)
        return sk_cel_bool(r);
    if (!r)
        return sk_cel_string(a, "", 0);
    return sk_cel_string(a, sk_arena_strndup(a, v[0]->u.str.s + start, end - start), end - start);
}
