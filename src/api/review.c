/*
 * review.c - the authorization.k8s.io/v1 reviews: SubjectAccessReview,
 * LocalSubjectAccessReview, SelfSubjectAccessReview (kubectl auth can-i)
 * and SelfSubjectRulesReview (kubectl auth can-i --list). Each is a POST
 * that stores nothing: the body comes back with its status filled in, 201.
 *
 * The decision is the request authorizer's (authz.h), so a review answers
 * exactly what a request would get: system:masters first, then RBAC;
 * status.allowed when allowed, with kube's reason; RBAC never denies
 * outright (it has no opinion), so `denied` is never set; a binding to a
 * missing role shows in the reason. Under --authorization-mode=AlwaysAllow
 * every review is allowed, and the rules review lists "*" as kube's
 * AlwaysAllow authorizer does.
 *
 * The self reviews are about the caller (call->user). Without
 * authentication (no identity: requests are not checked at all), they
 * answer what is true for the caller then: everything is allowed, and
 * the rules are "*"; the reason says why.
 */
#include "api/authz.h"
#include "api/body.h"
#include "api/call.h"
#include "api/verbs.h"
#include "core/check.h"

#include <string.h>

#define GROUP "authorization.k8s.io"

typedef struct review_kind {
    const char *resource, *kind;
    int self, local, rules;
} review_kind;

static const review_kind kinds[] = {
    {"subjectaccessreviews", "SubjectAccessReview", 0, 0, 0},
    {"localsubjectaccessreviews", "LocalSubjectAccessReview", 0, 1, 0},
    {"selfsubjectaccessreviews", "SelfSubjectAccessReview", 1, 0, 0},
    {"selfsubjectrulesreviews", "SelfSubjectRulesReview", 1, 0, 1},
};

/* kube's 422 for one field.Invalid of a review; value already rendered. */
static int reply_invalid(sk_api_call *call, const review_kind *k, const char *field,
                         const char *value, const char *detail)
{
    sk_call_reply_invalid(call, GROUP, k->kind, "", field, value, detail);
    return SK_STEP_DONE;
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

/* The user a review's spec names: strings borrowed from spec, arrays in
 * the call's arena. */
static void spec_user(sk_api_call *call, const json_t *spec, sk_user *u)
{
    size_t n;
    const char **g = sk_call_strings(call, json_object_get(spec, "groups"), &n);
    memset(u, 0, sizeof *u);
    u->name = str(spec, "user");
    u->uid = str(spec, "uid");
    u->groups = g;
    u->n_groups = n;
}

/* Fills a from an access review's spec; replies and returns 0 on a spec
 * kube refuses. */
static int spec_attrs(sk_api_call *call, const review_kind *k, const json_t *spec,
                      sk_rbac_attrs *a)
{
    const json_t *ra = json_object_get(spec, "resourceAttributes");
    const json_t *nra = json_object_get(spec, "nonResourceAttributes");
    if (json_is_object(ra) && json_is_object(nra)) {
        reply_invalid(call, k, "spec.nonResourceAttributes", "\"null\"",
                      "cannot be specified in combination with resourceAttributes");
        return 0;
    }
    if (!json_is_object(ra) && !json_is_object(nra)) {
        reply_invalid(call, k, "spec.resourceAttributes", "\"null\"",
                      "exactly one of nonResourceAttributes or resourceAttributes must be "
                      "specified");
        return 0;
    }
    if (k->local && json_is_object(nra)) {
        reply_invalid(call, k, "spec.nonResourceAttributes", "\"null\"",
                      "disallowed on this kind of request");
        return 0;
    }
    if (!k->self && !*str(spec, "user") && json_array_size(json_object_get(spec, "groups")) == 0) {
        reply_invalid(call, k, "spec.user", "\"\"", "at least one of user or group must be specified");
        return 0;
    }
    if (k->local && strcmp(str(ra, "namespace"), call->route.ns) != 0) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                             "spec.resourceAttributes.namespace must match namespace: %s",
                             call->route.ns);
        return 0;
    }
    memset(a, 0, sizeof *a);
    if (json_is_object(ra)) {
        a->resource_request = 1;
        a->verb = str(ra, "verb");
        a->group = str(ra, "group");
        a->resource = str(ra, "resource");
        a->subresource = str(ra, "subresource");
        a->ns = str(ra, "namespace");
        a->name = str(ra, "name");
    } else {
        a->verb = str(nra, "verb");
        a->path = str(nra, "path");
    }
    return 1;
}

/* The AlwaysAllow authorizer's rules. New reference. */
static json_t *all_rules(void)
{
    return json_pack("{s:[{s:[s], s:[s], s:[s]}], s:[{s:[s], s:[s]}], s:b}", "resourceRules",
                     "verbs", "*", "apiGroups", "*", "resources", "*", "nonResourceRules",
                     "verbs", "*", "nonResourceURLs", "*", "incomplete", 0);
}

static json_t *access_status(sk_api_call *call, const sk_rbac_attrs *a)
{
    if (call->api->always_allow)
        return json_pack("{s:b, s:s}", "allowed", 1, "reason", "");
    sk_rbac_decision d;
    sk_authz_decide(call->api->authz, a, &d);
    json_t *st = json_pack("{s:b}", "allowed", d.allowed);
    if (*d.reason)
        json_object_set_new(st, "reason", json_string(d.reason));
    sk_rbac_decision_clear(&d);
    return st;
}

static json_t *rules_status(sk_api_call *call, const json_t *spec)
{
    if (call->api->always_allow)
        return all_rules();
    json_t *policy = sk_authz_policy(call->api->authz);
    if (!policy)
        return json_pack("{s:[], s:[], s:b, s:s}", "resourceRules", "nonResourceRules",
                         "incomplete", 1, "evaluationError",
                         "the authorization policy cannot be read");
    json_t *st = sk_rbac_rules_review(policy, call->user, str(spec, "namespace"));
    json_decref(policy);
    return st;
}

int sk_verb_review(sk_api_call *call)
{
    const review_kind *k = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (strcmp(kinds[i].resource, call->route.doc) == 0)
            k = &kinds[i];
    SK_CHECK(k != NULL); /* the router routes only these */
    json_t *obj = sk_call_keep(call, sk_body_decode(call, k->kind));
    if (!obj)
        return SK_STEP_DONE;
    const char *kind = str(obj, "kind"), *av = str(obj, "apiVersion");
    if ((*kind && strcmp(kind, k->kind) != 0) || (*av && strcmp(av, GROUP "/v1") != 0)) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST, "the body is a %s, not a %s." GROUP "/v1",
                             *kind ? kind : "object", k->kind);
        return SK_STEP_DONE;
    }
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(obj, "spec", spec);
    }
    json_t *status;
    if (k->rules) {
        status = rules_status(call, spec);
    } else {
        sk_rbac_attrs a;
        if (!spec_attrs(call, k, spec, &a))
            return SK_STEP_DONE;
        sk_user u;
        if (k->self) {
            a.user = call->user;
        } else {
            spec_user(call, spec, &u);
            a.user = &u;
        }
        status = access_status(call, &a);
    }
    sk_call_reply_review(call, obj, k->kind, GROUP "/v1", status);
    return SK_STEP_DONE;
}
