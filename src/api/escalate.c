/*
 * escalate.c - see escalate.h.
 *
 * The checks run before defaulting and validation, where kube's guarded
 * storage runs them (before its own create, or in the update's transform
 * of the new object): an escalating object is refused as such even when
 * it is also invalid.
 */
#include "api/escalate.h"
#include "api/authz.h"
#include "core/buf.h"
#include "kube/rbac.h"
#include "kube/rbac_cover.h"

#include <stdlib.h>
#include <string.h>

#define RBAC_GROUP "rbac.authorization.k8s.io"

static int is_master(const sk_user *u)
{
    for (size_t i = 0; i < u->n_groups; i++)
        if (u->groups[i] && strcmp(u->groups[i], "system:masters") == 0)
            return 1;
    return 0;
}

/* The request's resource, one of the four, or NULL. */
static const char *rbac_resource(const sk_api_call *call)
{
    static const char *const names[] = {"roles", "clusterroles", "rolebindings",
                                        "clusterrolebindings"};
    if (!call->res || strcmp(call->res->group, RBAC_GROUP) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(call->res->resource, names[i]) == 0)
            return names[i];
    return NULL;
}

/* Whether the authorizer allows call's user verb on resource/name in ns. */
static int allowed(sk_api_call *call, const char *verb, const char *group, const char *resource,
                   const char *name, const char *ns)
{
    sk_rbac_attrs a = {.user = call->user, .verb = verb, .resource_request = 1, .group = group,
                       .resource = resource, .subresource = "", .ns = ns, .name = name};
    return sk_authz_check(call, &a, 0);
}

/* The object with what the garbage collector may change taken from old
 * equals old (kube's IsOnlyMutatingGCFields). */
static int only_gc_fields(const json_t *obj, const json_t *old)
{
    static const char *const gc[] = {"ownerReferences", "finalizers", "selfLink",
                                     "managedFields"};
    json_t *copy = json_deep_copy(obj);
    json_t *meta = json_object_get(copy, "metadata");
    const json_t *old_meta = json_object_get(old, "metadata");
    for (size_t i = 0; json_is_object(meta) && i < sizeof gc / sizeof *gc; i++) {
        json_t *v = json_object_get(old_meta, gc[i]);
        if (v)
            json_object_set(meta, gc[i], v);
        else
            json_object_del(meta, gc[i]);
    }
    int same = json_equal(copy, (json_t *)old);
    json_decref(copy);
    return same;
}

static int has_aggregation_rule(const json_t *role)
{
    return role && json_array_size(json_object_get(json_object_get(role, "aggregationRule"),
                                                   "clusterRoleSelectors")) > 0;
}

/* Whether the user holds every rule of wanted in ns; when not and text is
 * given, kube's refusal is appended to it. */
static int holds(sk_api_call *call, const json_t *policy, const json_t *wanted, const char *ns,
                 sk_buf *text)
{
    char *errors = NULL;
    json_t *held = sk_rbac_rules_for(policy, call->user, ns, &errors);
    json_t *missing = NULL;
    int ok = sk_rbac_cover(held, wanted, &missing);
    if (!ok && text)
        sk_rbac_cover_refusal(call->user, missing, errors, text);
    json_decref(missing);
    json_decref(held);
    free(errors);
    return ok;
}

/* A Role's or ClusterRole's own rules; a ClusterRole's aggregation rule. */
static int check_role(sk_api_call *call, const json_t *policy, const char *resource,
                      const char *name, const json_t *obj, const json_t *old)
{
    sk_buf text = SK_BUF_INIT;
    int rc = 0;
    const json_t *rules = json_object_get(obj, "rules");
    if (!holds(call, policy, rules, call->ns, &text)) {
        rc = -1;
    } else if (strcmp(resource, "clusterroles") == 0 &&
               (has_aggregation_rule(obj) || has_aggregation_rule(old))) {
        json_t *all = json_pack("[{s:[s], s:[s], s:[s]}, {s:[s], s:[s]}]", "verbs", "*",
                                "apiGroups", "*", "resources", "*", "verbs", "*",
                                "nonResourceURLs", "*");
        if (!holds(call, policy, all, "", NULL)) {
            sk_buf_puts(&text, "must have cluster-admin privileges to use the aggregationRule");
            rc = -1;
        }
        json_decref(all);
    }
    if (rc < 0)
        sk_authz_reply_forbidden(call, RBAC_GROUP, resource, name, text.data);
    sk_buf_free(&text);
    return rc;
}

/* A binding: the bind verb on its role, else the role's rules. */
static int check_binding(sk_api_call *call, const json_t *policy, const char *resource,
                         const char *name, const json_t *obj)
{
    const json_t *ref = json_object_get(obj, "roleRef");
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *group = json_string_value(json_object_get(ref, "apiGroup"));
    const char *role = json_string_value(json_object_get(ref, "name"));
    kind = kind ? kind : "";
    role = role ? role : "";
    int cluster = strcmp(kind, "ClusterRole") == 0;
    if ((cluster || strcmp(kind, "Role") == 0) &&
        allowed(call, "bind", group ? group : "", cluster ? "clusterroles" : "roles", role,
                call->ns))
        return 0;
    if (!cluster && strcmp(kind, "Role") != 0) {
        sk_call_reply_errorf(call, SK_ERR_INTERNAL, "unsupported role reference kind: \"%s\"",
                             kind);
        return -1;
    }
    const json_t *rules = sk_rbac_role_rules(policy, kind, call->ns, role);
    if (!rules) {
        sk_buf msg = SK_BUF_INIT;
        sk_buf_printf(&msg, "%s." RBAC_GROUP " ", cluster ? "clusterroles" : "roles");
        sk_buf_go_quoted(&msg, role);
        sk_buf_puts(&msg, " not found");
        sk_call_reply_status(call, SK_ERR_NOT_FOUND, msg.data, RBAC_GROUP,
                             cluster ? "clusterroles" : "roles", role, NULL);
        sk_buf_free(&msg);
        return -1;
    }
    sk_buf text = SK_BUF_INIT;
    int rc = 0;
    if (!holds(call, policy, rules, call->ns, &text)) {
        sk_authz_reply_forbidden(call, RBAC_GROUP, resource, name, text.data);
        rc = -1;
    }
    sk_buf_free(&text);
    return rc;
}

int sk_escalate_guarded(const sk_api_call *call)
{
    const sk_route *rt = &call->route;
    return rt->kind == SK_ROUTE_RESOURCE && !rt->sub &&
           (rt->verb == SK_REQ_CREATE || rt->verb == SK_REQ_UPDATE ||
            rt->verb == SK_REQ_PATCH) &&
           rbac_resource(call) && !call->api->always_allow && !is_master(call->user);
}

int sk_escalate_admit(sk_api_call *call, const json_t *obj, const json_t *old)
{
    const char *resource = rbac_resource(call);
    if (!resource || is_master(call->user))
        return 0;
    int role = strstr(resource, "bindings") == NULL;
    /* kube asks about the request's own name: "" for a create */
    if (role && allowed(call, "escalate", RBAC_GROUP, resource, call->name ? call->name : "",
                        call->ns))
        return 0;
    if (old && only_gc_fields(obj, old))
        return 0;
    json_t *policy = sk_authz_policy(call->api->authz);
    if (!policy) {
        sk_call_reply_error(call, SK_ERR_INTERNAL, "the authorization policy cannot be read");
        return -1;
    }
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                         "name"));
    name = name ? name : "";
    int rc = role ? check_role(call, policy, resource, name, obj, old)
                  : check_binding(call, policy, resource, name, obj);
    json_decref(policy);
    return rc;
}
