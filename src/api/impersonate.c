/*
 * impersonate.c - see impersonate.h.
 *
 * The headers are read once, at the call's start, into a list of what is
 * asked for in kube's order (user, groups, extras as sent, uid); the list
 * is checked and applied in the call's first step, where the authorizer
 * is at hand. The 400's text lists what was asked as Go prints kube's
 * ObjectReference list (%v: each field in order, space-separated).
 */
#include "api/impersonate.h"
#include "api/authz.h"
#include "api/call.h"
#include "core/buf.h"
#include "kube/validate.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define AUTHN_GROUP "authentication.k8s.io"
#define AUTHN_VERSION "authentication.k8s.io/v1"
#define EXTRA_PREFIX "Impersonate-Extra-"
#define SA_PREFIX "system:serviceaccount:"

typedef enum { IMP_USER, IMP_SA, IMP_GROUP, IMP_EXTRA, IMP_UID } imp_kind;

typedef struct imp_item {
    imp_kind kind;
    const char *ns, *name, *key; /* key: the extra's */
} imp_item;

struct sk_impersonation {
    imp_item *items;
    size_t n, cap;
    int has_user, has_groups;
};

static void push(sk_arena *a, sk_impersonation *im, imp_kind kind, const char *ns,
                 const char *name, const char *key)
{
    if (im->n == im->cap) {
        size_t cap = im->cap ? 2 * im->cap : 8;
        imp_item *items = sk_arena_alloc(a, cap * sizeof *items);
        if (im->n)
            memcpy(items, im->items, im->n * sizeof *items);
        im->items = items;
        im->cap = cap;
    }
    im->items[im->n++] = (imp_item){kind, sk_arena_strdup(a, ns ? ns : ""),
                                    sk_arena_strdup(a, name ? name : ""),
                                    sk_arena_strdup(a, key ? key : "")};
}

/* kube's SplitUsername: "system:serviceaccount:<ns>:<name>" with a valid
 * namespace and name; the two parts in a, or 0. */
static int split_sa(sk_arena *a, const char *user, const char **ns, const char **name)
{
    if (strncmp(user, SA_PREFIX, sizeof SA_PREFIX - 1) != 0)
        return 0;
    const char *rest = user + sizeof SA_PREFIX - 1;
    const char *colon = strchr(rest, ':');
    if (!colon || strchr(colon + 1, ':'))
        return 0;
    char *n = sk_arena_strdup(a, rest);
    n[colon - rest] = '\0';
    if (sk_validate_dns1123_label(n) || sk_validate_dns1123_subdomain(colon + 1))
        return 0;
    *ns = n;
    *name = colon + 1;
    return 1;
}

static int hex(int c)
{
    return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* The extra key of a header name's tail: lower case, %-unescaped as Go's
 * PathUnescape (kept as sent when an escape is malformed). In a. */
static const char *extra_key(sk_arena *a, const char *tail)
{
    char *lower = sk_arena_strdup(a, tail);
    for (char *p = lower; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    char *out = sk_arena_strdup(a, lower), *w = out;
    for (const char *p = lower; *p; p++) {
        if (*p != '%') {
            *w++ = *p;
            continue;
        }
        if (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2]))
            return lower;
        *w++ = (char)(hex((unsigned char)p[1]) * 16 + hex((unsigned char)p[2]));
        p += 2;
    }
    *w = '\0';
    return out;
}

typedef struct reading {
    sk_arena *a;
    sk_impersonation *im;
    int pass; /* 0: groups, 1: extras */
} reading;

static void on_header(void *arg, const char *key, const char *value)
{
    reading *r = arg;
    if (r->pass == 0 && strcasecmp(key, "Impersonate-Group") == 0) {
        push(r->a, r->im, IMP_GROUP, NULL, value, NULL);
        r->im->has_groups = 1;
    } else if (r->pass == 1 && strncasecmp(key, EXTRA_PREFIX, sizeof EXTRA_PREFIX - 1) == 0) {
        push(r->a, r->im, IMP_EXTRA, NULL, value,
             extra_key(r->a, key + sizeof EXTRA_PREFIX - 1));
    }
}

const sk_impersonation *sk_impersonate_read(sk_arena *a, const sk_http_req *req)
{
    sk_impersonation *im = sk_arena_alloc(a, sizeof *im);
    const char *user = req->header(req->ctx, "Impersonate-User");
    if (user && *user) {
        const char *ns, *name;
        im->has_user = 1;
        if (split_sa(a, user, &ns, &name))
            push(a, im, IMP_SA, ns, name, NULL);
        else
            push(a, im, IMP_USER, NULL, user, NULL);
    }
    reading r = {a, im, 0};
    for (r.pass = 0; req->each_header && r.pass < 2; r.pass++)
        req->each_header(req->ctx, on_header, &r);
    const char *uid = req->header(req->ctx, "Impersonate-Uid");
    if (uid && *uid)
        push(a, im, IMP_UID, NULL, uid, NULL);
    return im->n ? im : NULL;
}

/* kube's %v of the ObjectReference list it builds. */
static void describe(sk_buf *b, const sk_impersonation *im)
{
    static const char *const kinds[] = {"User", "ServiceAccount", "Group", "UserExtra", "UID"};
    sk_buf_putc(b, '[');
    for (size_t i = 0; i < im->n; i++) {
        const imp_item *it = &im->items[i];
        int authn = it->kind == IMP_EXTRA || it->kind == IMP_UID;
        sk_buf_printf(b, "%s{%s %s %s  %s  %s}", i ? " " : "", kinds[it->kind], it->ns, it->name,
                      authn ? AUTHN_VERSION : "", it->key);
    }
    sk_buf_putc(b, ']');
}

static int has_group(const char *const *groups, size_t n, const char *g)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(groups[i], g) == 0)
            return 1;
    return 0;
}

/* The user im asks for, in a. */
static const sk_user *impersonated(sk_arena *a, const sk_impersonation *im)
{
    sk_user *u = sk_arena_alloc(a, sizeof *u);
    /* at most every item a group or extra, two service account groups, one implied */
    const char **groups = sk_arena_alloc(a, (im->n + 3) * sizeof *groups);
    const char **keys = sk_arena_alloc(a, im->n * sizeof *keys);
    const char **values = sk_arena_alloc(a, im->n * sizeof *values);
    size_t ng = 0, ne = 0;
    u->uid = "";
    for (size_t i = 0; i < im->n; i++) {
        const imp_item *it = &im->items[i];
        switch (it->kind) {
        case IMP_SA:
            u->name = sk_arena_printf(a, SA_PREFIX "%s:%s", it->ns, it->name);
            if (!im->has_groups) {
                groups[ng++] = "system:serviceaccounts";
                groups[ng++] = sk_arena_printf(a, "system:serviceaccounts:%s", it->ns);
            }
            break;
        case IMP_USER:
            u->name = it->name;
            break;
        case IMP_GROUP:
            groups[ng++] = it->name;
            break;
        case IMP_EXTRA:
            keys[ne] = it->key;
            values[ne++] = it->name;
            break;
        case IMP_UID:
            u->uid = it->name;
            break;
        }
    }
    if (strcmp(u->name, "system:anonymous") != 0) {
        if (!has_group(groups, ng, "system:authenticated") &&
            !has_group(groups, ng, "system:unauthenticated"))
            groups[ng++] = "system:authenticated";
    } else if (!has_group(groups, ng, "system:unauthenticated")) {
        groups[ng++] = "system:unauthenticated";
    }
    u->groups = groups;
    u->n_groups = ng;
    u->extra_keys = keys;
    u->extra_values = values;
    u->n_extra = ne;
    return u;
}

int sk_impersonate_admit(sk_api_call *call)
{
    const sk_impersonation *im = call->impersonation;
    if (!im)
        return 1;
    if (!im->has_user) {
        sk_buf msg = SK_BUF_INIT;
        sk_buf_puts(&msg, "requested ");
        describe(&msg, im);
        sk_buf_puts(&msg, " without impersonating a user");
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST, msg.data);
        sk_buf_free(&msg);
        return 0;
    }
    for (size_t i = 0; i < im->n; i++) {
        static const char *const resources[] = {"users", "serviceaccounts", "groups",
                                                "userextras", "uids"};
        const imp_item *it = &im->items[i];
        int authn = it->kind == IMP_EXTRA || it->kind == IMP_UID;
        sk_rbac_attrs a = {.user = call->user, .verb = "impersonate", .resource_request = 1,
                           .group = authn ? AUTHN_GROUP : "", .resource = resources[it->kind],
                           .subresource = it->key, .ns = it->ns, .name = it->name};
        if (!sk_authz_check(call, &a, 1))
            return 0;
    }
    call->user = impersonated(call->arena, im);
    return 1;
}
