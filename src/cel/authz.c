/*
 * authz.c - see authz.h. Mirrors authz.go's functions one by one: the
 * builders copy their receiver and set one field (path and resource must
 * not be blank, as there), check() hands the finished attributes to the
 * caller, and the Decision's four accessors read what it answered. A
 * receiver of the wrong stage is "no such overload", as cel-go's dispatch
 * finds no overload for it.
 *
 * serviceAccount(namespace, name) only records the account: its name and
 * namespace are judged (kube's "Invalid service account name" and
 * "... namespace") by whoever decides the check, which knows Kubernetes'
 * name rules (the library is below them), so an invalid one is an error
 * at check() rather than at serviceAccount(): the expression's value is
 * the same error either way.
 */
#include "cel/authz.h"

#include <string.h>

/* Each stage's value is equal only to itself (cel-go compares the
 * library's values by identity too). */
static int same(const void *x, const void *y)
{
    return x == y;
}

static size_t fixed_size(const void *x)
{
    (void)x;
    return sizeof(sk_cel_authz);
}

static const sk_cel_opaque_type stage_types[] = {
    [SK_CEL_AUTHZ_AUTHORIZER] = {"kubernetes.authorization.Authorizer", same, fixed_size, NULL},
    [SK_CEL_AUTHZ_PATH] = {"kubernetes.authorization.PathCheck", same, fixed_size, NULL},
    [SK_CEL_AUTHZ_GROUP] = {"kubernetes.authorization.GroupCheck", same, fixed_size, NULL},
    [SK_CEL_AUTHZ_RESOURCE] = {"kubernetes.authorization.ResourceCheck", same, fixed_size, NULL},
    [SK_CEL_AUTHZ_DECISION] = {"kubernetes.authorization.Decision", same, fixed_size, NULL},
};

/* A copy of from (NULL: a fresh one) at stage. */
static sk_cel_authz *derive(sk_arena *a, const sk_cel_authz *from, sk_cel_authz_stage stage)
{
    sk_cel_authz *z = sk_arena_alloc(a, sizeof *z);
    if (from)
        *z = *from;
    else
        memset(z, 0, sizeof *z);
    z->stage = stage;
    return z;
}

static const sk_cel_val *wrap(sk_arena *a, const sk_cel_authz *z)
{
    return sk_cel_opaque(a, &stage_types[z->stage], z);
}

const sk_cel_val *sk_cel_authorizer(sk_arena *a)
{
    return wrap(a, derive(a, NULL, SK_CEL_AUTHZ_AUTHORIZER));
}

static const char *or_empty(sk_arena *a, const char *s)
{
    return sk_arena_strdup(a, s ? s : "");
}

const sk_cel_val *sk_cel_authorizer_request(sk_arena *a, const char *group, const char *resource,
                                            const char *subresource, const char *namespace,
                                            const char *name)
{
    sk_cel_authz *z = derive(a, NULL, SK_CEL_AUTHZ_RESOURCE);
    z->group = or_empty(a, group);
    z->resource = or_empty(a, resource);
    z->subresource = or_empty(a, subresource);
    z->namespace = or_empty(a, namespace);
    z->name = or_empty(a, name);
    return wrap(a, z);
}

static int blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\v' && *s != '\f')
            return 0;
    return 1;
}

/* The stage of v, or -1 when v is no authz value. */
static int stage_of(const sk_cel_val *v)
{
    if (v->type != SK_CEL_V_OPAQUE)
        return -1;
    for (size_t i = 0; i < sizeof stage_types / sizeof *stage_types; i++)
        if (v->u.opaque.type == &stage_types[i])
            return (int)i;
    return -1;
}

/* A resource check with one field set by a builder method f. */
static const sk_cel_val *resource_builder(sk_arena *a, const char *f, const sk_cel_authz *from,
                                          const char *value)
{
    sk_cel_authz *z = derive(a, from, SK_CEL_AUTHZ_RESOURCE);
    const char *v = sk_arena_strdup(a, value);
    if (strcmp(f, "subresource") == 0)
        z->subresource = v;
    else if (strcmp(f, "namespace") == 0)
        z->namespace = v;
    else if (strcmp(f, "name") == 0)
        z->name = v;
    else if (strcmp(f, "fieldSelector") == 0)
        z->field_selector = v;
    else
        z->label_selector = v;
    return wrap(a, z);
}

static const sk_cel_val *check(sk_arena *a, const sk_cel_authz *what, const char *verb,
                               sk_cel_authorize_fn authorize, void *ctx)
{
    if (!authorize)
        return sk_cel_error(a, "no authorizer is configured for this expression");
    sk_cel_authz *d = derive(a, what, SK_CEL_AUTHZ_DECISION);
    d->allowed = 0;
    d->reason = "";
    d->error = NULL;
    const char *fatal = authorize(ctx, a, what, verb, &d->allowed, &d->reason, &d->error);
    if (fatal)
        return sk_cel_error(a, "%s", fatal);
    if (!d->reason)
        d->reason = "";
    return wrap(a, d);
}

const sk_cel_val *sk_cel_authz_call(sk_arena *a, const char *f, int method,
                                    const sk_cel_val *const *v, size_t n,
                                    sk_cel_authorize_fn authorize, void *authorize_ctx)
{
    if (!method || n == 0)
        return NULL;
    int stage = stage_of(v[0]);
    if (stage < 0)
        return NULL;
    const sk_cel_authz *z = v[0]->u.opaque.data;
    const char *s1 = n >= 2 && v[1]->type == SK_CEL_V_STRING ? v[1]->u.str.s : NULL;
    if (n == 1 && stage == SK_CEL_AUTHZ_DECISION) {
        if (strcmp(f, "allowed") == 0)
            return sk_cel_bool(z->allowed);
        if (strcmp(f, "errored") == 0)
            return sk_cel_bool(z->error != NULL);
        if (strcmp(f, "error") == 0)
            return sk_cel_string(a, z->error ? z->error : "", z->error ? strlen(z->error) : 0);
        if (strcmp(f, "reason") == 0)
            return sk_cel_string(a, z->reason, strlen(z->reason));
        return NULL;
    }
    if (n == 3 && stage == SK_CEL_AUTHZ_AUTHORIZER && strcmp(f, "serviceAccount") == 0 &&
        v[1]->type == SK_CEL_V_STRING && v[2]->type == SK_CEL_V_STRING) {
        sk_cel_authz *sa = derive(a, z, SK_CEL_AUTHZ_AUTHORIZER);
        sa->sa_namespace = sk_arena_strdup(a, v[1]->u.str.s);
        sa->sa_name = sk_arena_strdup(a, v[2]->u.str.s);
        return wrap(a, sa);
    }
    if (n != 2 || !s1)
        return NULL;
    switch (stage) {
    case SK_CEL_AUTHZ_AUTHORIZER:
        if (strcmp(f, "path") == 0) {
            if (blank(s1))
                return sk_cel_error(a, "path must not be empty");
            sk_cel_authz *p = derive(a, z, SK_CEL_AUTHZ_PATH);
            p->path = sk_arena_strdup(a, s1);
            return wrap(a, p);
        }
        if (strcmp(f, "group") == 0) {
            sk_cel_authz *g = derive(a, z, SK_CEL_AUTHZ_GROUP);
            g->group = sk_arena_strdup(a, s1);
            return wrap(a, g);
        }
        return NULL;
    case SK_CEL_AUTHZ_GROUP: {
        if (strcmp(f, "resource") != 0)
            return NULL;
        if (blank(s1))
            return sk_cel_error(a, "resource must not be empty");
        sk_cel_authz *r = derive(a, z, SK_CEL_AUTHZ_RESOURCE);
        r->resource = sk_arena_strdup(a, s1);
        return wrap(a, r);
    }
    case SK_CEL_AUTHZ_RESOURCE:
        if (strcmp(f, "check") == 0)
            return check(a, z, s1, authorize, authorize_ctx);
        if (strcmp(f, "subresource") == 0 || strcmp(f, "namespace") == 0 ||
            strcmp(f, "name") == 0 || strcmp(f, "fieldSelector") == 0 ||
            strcmp(f, "labelSelector") == 0)
            return resource_builder(a, f, z, s1);
        return NULL;
    case SK_CEL_AUTHZ_PATH:
        return strcmp(f, "check") == 0 ? check(a, z, s1, authorize, authorize_ctx) : NULL;
    default:
        return NULL;
    }
}
