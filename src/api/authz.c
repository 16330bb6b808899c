/*
 * authz.c - see authz.h.
 *
 * One mutex guards the current policy's pointer and revision: a check
 * holds it for a pointer copy and a reference (and, when the cache moved,
 * for applying the RBAC changes since: one cheap edit each), never while
 * evaluating. The policy is built from scratch only at start or when the
 * cache cannot give the changes; that happens under the mutex too, so
 * requests arriving meanwhile wait for the new policy rather than decide
 * on one the cache has already outdated.
 *
 * Request attributes follow kube's RequestInfo: the verb of the route
 * (get, list, watch, create, update, patch, delete, deletecollection),
 * the resource's group, resource and subresource, the namespace (a
 * namespace's own name for the namespaces resource) and the name (for a
 * list or watch, the name a fieldSelector metadata.name=<name> pins, as
 * kube takes it); the fixed endpoints are non-resource requests with the path and the method
 * in lower case. Unknown paths are not checked (404 tells nothing a
 * denial would hide: discovery lists what exists).
 */
#include "api/authz.h"
#include "kube/status.h"
#include "api/call.h"
#include "core/check.h"
#include "core/log.h"
#include "kube/selector.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char *const rbac_resources[] = {"clusterroles", "roles", "clusterrolebindings",
                                             "rolebindings"};
#define N_RBAC (sizeof rbac_resources / sizeof *rbac_resources)

struct sk_authz {
    sk_reader *reader;
    sk_cache *cache;
    const sk_resource *res[N_RBAC];
    pthread_mutex_t mu;
    json_t *policy; /* NULL until first built */
    int64_t rev;
    uint64_t gen;
};

sk_authz *sk_authz_new(sk_reader *reader, sk_cache *cache)
{
    sk_authz *z = calloc(1, sizeof *z);
    SK_CHECK_ALLOC(z);
    z->reader = reader;
    z->cache = cache;
    for (size_t i = 0; i < N_RBAC; i++) {
        z->res[i] = sk_registry_find("rbac.authorization.k8s.io", "v1", rbac_resources[i]);
        SK_CHECK(z->res[i] != NULL);
    }
    pthread_mutex_init(&z->mu, NULL);
    return z;
}

void sk_authz_free(sk_authz *z)
{
    if (!z)
        return;
    json_decref(z->policy);
    pthread_mutex_destroy(&z->mu);
    free(z);
}

/* Changes of the RBAC resources after z->rev up to rev applied to the
 * policy one by one (sk_rbac_policy_with); *out a new policy, or the
 * current one when nothing changed. 0 when the cache cannot tell (no
 * policy yet, a rebuilt cache or resource, a cursor out of the window) or
 * the changes are so many that a build from scratch is cheaper: the
 * caller builds. A change costs the maps along its path, so a cluster with
 * 10,000 bindings does not pay a full build (most of a second) for each
 * binding a controller writes. */
#define MAX_EDITS 4096

static int apply_changes(sk_authz *z, const sk_cache_state *st, json_t **out)
{
    if (!z->policy || st->generation != z->gen)
        return 0;
    json_t *policy = json_incref(z->policy);
    int edits = 0, ok = 1;
    for (size_t i = 0; ok && i < N_RBAC; i++) {
        int res = sk_cache_resource(z->cache, z->res[i]->storage);
        int64_t cursor = z->rev;
        for (;;) {
            sk_cache_event ev = {0};
            int64_t scanned = 0;
            sk_err err = sk_cache_next_event(z->cache, z->gen, res, cursor, &ev, &scanned);
            if (res < 0 || (err != SK_OK && err != SK_ERR_NOT_FOUND) || ++edits > MAX_EDITS) {
                sk_cache_event_clear(&ev);
                ok = 0;
                break;
            }
            if (err == SK_ERR_NOT_FOUND || ev.rev > st->rev) {
                sk_cache_event_clear(&ev);
                break;
            }
            json_t *now = ev.type == SK_EVENT_DELETED ? NULL : sk_reader_object(ev.obj);
            json_t *before = ev.type == SK_EVENT_DELETED ? sk_reader_object(ev.obj)
                             : ev.prev                   ? sk_reader_object(ev.prev)
                                                         : NULL;
            if (ev.type != SK_EVENT_ADDED && !before) {
                /* Without the old version its index entries cannot be
                 * found: a subject a binding dropped could stay bound. */
                json_decref(now);
                sk_cache_event_clear(&ev);
                ok = 0;
                break;
            }
            json_t *next = sk_rbac_policy_with(policy, rbac_resources[i], before, now);
            json_decref(policy);
            policy = next;
            json_decref(now);
            json_decref(before);
            cursor = ev.rev;
            sk_cache_event_clear(&ev);
        }
    }
    if (!ok) {
        json_decref(policy);
        return 0;
    }
    *out = policy;
    return 1;
}

typedef struct build {
    json_t *policy;
    const char *resource;
} build;

static int add_item(void *arg, sk_blob *item)
{
    build *b = arg;
    json_t *obj = sk_reader_object(item);
    if (obj)
        sk_rbac_policy_add(b->policy, b->resource, obj);
    json_decref(obj);
    return 0;
}

json_t *sk_authz_policy(sk_authz *z)
{
    sk_cache_state st;
    json_t *out = NULL;
    pthread_mutex_lock(&z->mu);
    sk_cache_get_state(z->cache, &st);
    if (z->policy && st.rev == z->rev && st.generation == z->gen)
        goto out;
    json_t *edited = NULL;
    if (apply_changes(z, &st, &edited)) {
        json_decref(z->policy);
        z->policy = edited;
        z->rev = st.rev;
        goto out;
    }
    build b = {.policy = sk_rbac_policy_new()};
    /* Revision 0 is an empty store: nothing to read, the policy is empty. */
    for (size_t i = 0; st.rev > 0 && i < N_RBAC; i++) {
        b.resource = rbac_resources[i];
        sk_err err = sk_reader_scan(z->reader, z->res[i]->storage, NULL, st.rev, add_item, &b);
        if (err != SK_OK) {
            sk_log_warn("authorization: cannot read %s: %s", rbac_resources[i],
                        sk_err_name(err));
            json_decref(b.policy);
            goto out;
        }
    }
    json_decref(z->policy);
    z->policy = b.policy;
    z->rev = st.rev;
    z->gen = st.generation;
out:
    out = json_incref(z->policy);
    pthread_mutex_unlock(&z->mu);
    return out;
}

void sk_authz_decide(sk_authz *z, const sk_rbac_attrs *a, sk_rbac_decision *out)
{
    json_t *policy = sk_authz_policy(z);
    if (!policy) {
        out->allowed = 0;
        out->reason = strdup("RBAC: the authorization policy cannot be read");
        SK_CHECK_ALLOC(out->reason);
        return;
    }
    sk_rbac_authorize(policy, a, out);
    json_decref(policy);
}

/* kube's verb for a resource route. */
static const char *route_verb(sk_req_verb v)
{
    static const unsigned bits[SK_REQ_COUNT] = {
        [SK_REQ_GET] = SK_VERB_GET,       [SK_REQ_LIST] = SK_VERB_LIST,
        [SK_REQ_WATCH] = SK_VERB_WATCH,   [SK_REQ_CREATE] = SK_VERB_CREATE,
        [SK_REQ_UPDATE] = SK_VERB_UPDATE, [SK_REQ_PATCH] = SK_VERB_PATCH,
        [SK_REQ_DELETE] = SK_VERB_DELETE, [SK_REQ_DELETECOLLECTION] = SK_VERB_DELETECOLLECTION,
    };
    return sk_registry_verb_name(bits[v]);
}

/* The name a list's or watch's field selector requires, in the arena, or
 * "" (a selector that does not parse is the verb's to refuse). */
static const char *selected_name(sk_api_call *call)
{
    const char *fs = sk_call_query(call, "fieldSelector");
    sk_field_selector *sel = NULL;
    char *err = NULL;
    const char *name = "";
    if (fs && *fs && sk_field_selector_parse(fs, call->res, &sel, &err) == SK_OK) {
        const char *v = sk_field_selector_required(sel, "metadata.name");
        /* kube takes only a valid path segment name */
        if (v && *v && !strchr(v, '/') && !strchr(v, '%') && strcmp(v, ".") != 0 &&
            strcmp(v, "..") != 0)
            name = sk_arena_strdup(call->arena, v);
        sk_field_selector_free(sel);
    }
    free(err);
    return name;
}

int sk_authz_call_attrs(sk_api_call *call, sk_rbac_attrs *a)
{
    const sk_route *rt = &call->route;
    memset(a, 0, sizeof *a);
    a->user = call->user;
    switch (rt->kind) {
    case SK_ROUTE_NOT_FOUND:
    case SK_ROUTE_NOT_ALLOWED:
        return 0;
    case SK_ROUTE_RESOURCE:
        a->resource_request = 1;
        a->verb = route_verb(rt->verb);
        a->group = rt->res->group;
        a->resource = rt->res->resource;
        a->subresource = rt->sub ? rt->sub->name : "";
        if (rt->name)
            a->name = rt->name;
        else if (rt->verb == SK_REQ_LIST || rt->verb == SK_REQ_WATCH)
            a->name = selected_name(call);
        else
            a->name = "";
        a->ns = strcmp(rt->res->resource, "namespaces") == 0 && rt->name ? rt->name : rt->ns;
        return 1;
    case SK_ROUTE_REVIEW:
        a->resource_request = 1;
        a->verb = "create";
        a->group = "authorization.k8s.io";
        a->resource = rt->doc;
        a->ns = rt->ns ? rt->ns : "";
        a->subresource = a->name = ""; /* the 403 text reads them */
        return 1;
    case SK_ROUTE_SELF_SUBJECT_REVIEW:
    case SK_ROUTE_TOKEN_REVIEW:
        a->resource_request = 1;
        a->verb = "create";
        a->group = "authentication.k8s.io";
        a->resource = rt->doc;
        a->subresource = a->ns = a->name = "";
        return 1;
    default: {
        char *verb = sk_arena_strdup(call->arena, call->method);
        for (char *p = verb; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        a->verb = verb;
        a->path = call->path;
        return 1;
    }
    }
}

void sk_authz_reply_forbidden(sk_api_call *call, const char *group, const char *resource,
                              const char *name, const char *text)
{
    sk_call_reply_status_object(call, sk_status_forbidden(group, resource, name, text));
}

/* Decides a (AlwaysAllow aside): *d filled, the caller clears it; when it
 * denies and reply is set, the call has replied 403. */
static int decide(sk_api_call *call, const sk_rbac_attrs *a, int reply, sk_rbac_decision *d)
{
    sk_authz_decide(call->api->authz, a, d);
    if (!d->allowed && reply) {
        sk_buf text = SK_BUF_INIT;
        sk_rbac_forbidden_text(a, &text);
        if (*d->reason)
            sk_buf_printf(&text, ": %s", d->reason);
        sk_authz_reply_forbidden(call, a->resource_request ? a->group : NULL,
                                 a->resource_request ? a->resource : NULL, a->name, text.data);
        sk_buf_free(&text);
    }
    return d->allowed;
}

int sk_authz_check(sk_api_call *call, const sk_rbac_attrs *a, int reply)
{
    if (call->api->always_allow)
        return 1;
    sk_rbac_decision d;
    int allowed = decide(call, a, reply, &d);
    sk_rbac_decision_clear(&d);
    return allowed;
}

int sk_authz_admit(sk_api_call *call)
{
    sk_rbac_attrs a;
    SK_CHECK(call->user); /* authentication refused the call before any step otherwise */
    if (!sk_authz_call_attrs(call, &a))
        return 1;
    if (call->api->always_allow) {
        call->authz_decision = "allow";
        call->authz_reason = "";
        return 1;
    }
    sk_rbac_decision d;
    int allowed = decide(call, &a, 1, &d);
    call->authz_decision = allowed ? "allow" : "forbid";
    call->authz_reason = sk_arena_strdup(call->arena, d.reason);
    sk_rbac_decision_clear(&d);
    return allowed;
}
