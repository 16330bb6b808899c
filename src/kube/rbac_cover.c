/*
 * rbac_cover.c - see rbac_cover.h.
 *
 * Atoms are built as small JSON rules so the refusal prints them with the
 * same code as any rule, and a test can compare them as JSON. A request
 * grants a few rules of a few verbs: the atom count is their product,
 * dozens, so lists are scanned rather than indexed.
 */
#include "kube/rbac_cover.h"
#include "core/check.h"
#include "kube/rbac.h"

#include <stdlib.h>
#include <string.h>

/* Every string of want is in set (vacuously for an empty want). */
static int has_all(const json_t *set, const json_t *want)
{
    size_t i;
    const json_t *v;
    json_array_foreach(want, i, v)
    {
        const char *s = json_string_value(v);
        if (!s || !sk_rbac_list_has(set, s))
            return 0;
    }
    return 1;
}

static int resources_cover(const json_t *set, const json_t *want)
{
    if (sk_rbac_list_has(set, "*") || has_all(set, want))
        return 1;
    size_t i;
    const json_t *v;
    json_array_foreach(want, i, v)
    {
        const char *r = json_string_value(v);
        if (!r)
            return 0;
        if (sk_rbac_list_has(set, r))
            continue;
        const char *slash = strchr(r, '/');
        if (!slash)
            return 0;
        sk_buf any = SK_BUF_INIT;
        sk_buf_printf(&any, "*%s", slash);
        int ok = sk_rbac_list_has(set, any.data);
        sk_buf_free(&any);
        if (!ok)
            return 0;
    }
    return 1;
}

static int url_covers(const char *held, const char *url)
{
    if (strcmp(held, url) == 0)
        return 1;
    size_t n = strlen(held);
    if (n == 0 || held[n - 1] != '*')
        return 0;
    while (n > 0 && held[n - 1] == '*')
        n--;
    return strncmp(held, url, n) == 0;
}

static int urls_cover(const json_t *set, const json_t *want)
{
    size_t i, j;
    const json_t *w, *h;
    json_array_foreach(want, i, w)
    {
        int covered = 0;
        json_array_foreach(set, j, h)
        {
            if (json_string_value(h) && json_string_value(w) &&
                url_covers(json_string_value(h), json_string_value(w))) {
                covered = 1;
                break;
            }
        }
        if (!covered)
            return 0;
    }
    return 1;
}

static const json_t *list(const json_t *rule, const char *key)
{
    return json_object_get(rule, key);
}

/* Whether held rule h covers atom a. */
static int rule_covers(const json_t *h, const json_t *a)
{
    const json_t *hn = list(h, "resourceNames"), *an = list(a, "resourceNames");
    int names = json_array_size(an) == 0 ? json_array_size(hn) == 0
                                          : json_array_size(hn) == 0 || has_all(hn, an);
    return names && (sk_rbac_list_has(list(h, "verbs"), "*") || has_all(list(h, "verbs"), list(a, "verbs"))) &&
           (sk_rbac_list_has(list(h, "apiGroups"), "*") ||
            has_all(list(h, "apiGroups"), list(a, "apiGroups"))) &&
           resources_cover(list(h, "resources"), list(a, "resources")) &&
           urls_cover(list(h, "nonResourceURLs"), list(a, "nonResourceURLs"));
}

static json_t *one(const json_t *v)
{
    json_t *a = json_array();
    json_array_append(a, (json_t *)v);
    return a;
}

/* Appends rule's atoms to out. */
static void breakdown(const json_t *rule, json_t *out)
{
    size_t g, r, v, n;
    const json_t *group, *res, *verb, *name;
    const json_t *names = list(rule, "resourceNames");
    json_array_foreach(list(rule, "apiGroups"), g, group)
    {
        json_array_foreach(list(rule, "resources"), r, res)
        {
            json_array_foreach(list(rule, "verbs"), v, verb)
            {
                for (n = 0; n < json_array_size(names) || (n == 0 && !json_array_size(names));
                     n++) {
                    json_t *atom = json_pack("{s:o, s:o, s:o}", "apiGroups", one(group),
                                             "resources", one(res), "verbs", one(verb));
                    SK_CHECK_ALLOC(atom);
                    if ((name = json_array_get(names, n)))
                        json_object_set_new(atom, "resourceNames", one(name));
                    json_array_append_new(out, atom);
                }
            }
        }
    }
    json_array_foreach(list(rule, "nonResourceURLs"), r, res)
    {
        json_array_foreach(list(rule, "verbs"), v, verb)
        {
            json_t *atom = json_pack("{s:o, s:o}", "nonResourceURLs", one(res), "verbs", one(verb));
            SK_CHECK_ALLOC(atom);
            json_array_append_new(out, atom);
        }
    }
}

int sk_rbac_cover(const json_t *held, const json_t *wanted, json_t **missing)
{
    json_t *atoms = json_array(), *out = json_array();
    SK_CHECK_ALLOC(atoms);
    SK_CHECK_ALLOC(out);
    size_t i, j;
    const json_t *rule, *atom, *h;
    json_array_foreach(wanted, i, rule)
        breakdown(rule, atoms);
    json_array_foreach(atoms, i, atom)
    {
        int covered = 0;
        json_array_foreach(held, j, h)
        {
            if ((covered = rule_covers(h, atom)))
                break;
        }
        if (!covered)
            json_array_append((json_t *)out, (json_t *)atom);
    }
    json_decref(atoms);
    *missing = out;
    return json_array_size(out) == 0;
}

/* Go's %q of a []string: ["a" "b"]. */
static void go_quoted_list(sk_buf *b, const json_t *l)
{
    size_t i;
    const json_t *v;
    sk_buf_putc(b, '[');
    json_array_foreach(l, i, v)
    {
        if (i)
            sk_buf_putc(b, ' ');
        sk_buf_go_quoted(b, json_string_value(v) ? json_string_value(v) : "");
    }
    sk_buf_putc(b, ']');
}

/* kube's compact form of a rule: {APIGroups:[..], Resources:[..],
 * NonResourceURLs:[..], ResourceNames:[..], Verbs:[..]}, empty lists left out. */
static char *compact_string(const json_t *rule)
{
    static const char *const keys[][2] = {{"apiGroups", "APIGroups"},
                                          {"resources", "Resources"},
                                          {"nonResourceURLs", "NonResourceURLs"},
                                          {"resourceNames", "ResourceNames"},
                                          {"verbs", "Verbs"}};
    sk_buf b = SK_BUF_INIT;
    int first = 1;
    sk_buf_putc(&b, '{');
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const json_t *l = list(rule, keys[k][0]);
        if (json_array_size(l) == 0)
            continue;
        sk_buf_printf(&b, "%s%s:", first ? "" : ", ", keys[k][1]);
        go_quoted_list(&b, l);
        first = 0;
    }
    sk_buf_putc(&b, '}');
    return sk_buf_steal(&b, NULL);
}

/* An atom with only a group, a resource and a verb (what compaction merges). */
static int simple(const json_t *a)
{
    return json_array_size(list(a, "resourceNames")) == 0 &&
           json_array_size(list(a, "nonResourceURLs")) == 0 &&
           json_array_size(list(a, "apiGroups")) == 1 && json_array_size(list(a, "resources")) == 1;
}

/* The atoms with the simple ones of one group and resource merged into one
 * rule with their verbs, in first-seen order. New array. */
static json_t *compact(const json_t *missing)
{
    json_t *out = json_array();
    SK_CHECK_ALLOC(out);
    size_t i, j;
    const json_t *a;
    json_t *o;
    json_array_foreach(missing, i, a)
    {
        json_t *into = NULL;
        if (simple(a)) {
            json_array_foreach(out, j, o)
            {
                if (simple(o) && json_equal(list(o, "apiGroups"), list(a, "apiGroups")) &&
                    json_equal(list(o, "resources"), list(a, "resources"))) {
                    into = o;
                    break;
                }
            }
        }
        if (into)
            json_array_extend(json_object_get(into, "verbs"), (json_t *)list(a, "verbs"));
        else
            json_array_append_new(out, json_deep_copy(a));
    }
    return out;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

void sk_rbac_cover_refusal(const sk_user *u, const json_t *missing, const char *errors,
                           sk_buf *out)
{
    sk_buf_puts(out, "user ");
    sk_buf_go_quoted(out, u->name ? u->name : "");
    sk_buf_puts(out, " (groups=[");
    for (size_t i = 0; i < u->n_groups; i++) {
        if (i)
            sk_buf_putc(out, ' ');
        sk_buf_go_quoted(out, u->groups[i] ? u->groups[i] : "");
    }
    sk_buf_puts(out, "]) is attempting to grant RBAC permissions not currently held:\n");
    json_t *rules = compact(missing);
    size_t n = json_array_size(rules);
    char **lines = calloc(n ? n : 1, sizeof *lines);
    SK_CHECK_ALLOC(lines);
    for (size_t i = 0; i < n; i++)
        lines[i] = compact_string(json_array_get(rules, i));
    qsort(lines, n, sizeof *lines, cmp_str);
    for (size_t i = 0, shown = 0; i < n; i++) {
        if (i > 0 && strcmp(lines[i], lines[i - 1]) == 0)
            continue;
        sk_buf_printf(out, "%s%s", shown++ ? "\n" : "", lines[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    json_decref(rules);
    if (errors && *errors)
        sk_buf_printf(out, "; resolution errors: [%s]", errors);
}
