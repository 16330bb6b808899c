/*
 * test_rbac.c - kube/rbac.c: rule matching (wildcards, subresources,
 * resourceNames, non-resource URLs), subjects (users, groups, service
 * accounts), cluster vs namespace bindings, system:masters, missing roles,
 * kube's reason and denial texts, rules review and aggregation; and that
 * a policy edited change by change equals one built from scratch.
 */
#include "kube/rbac.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *parse(const char *s)
{
    json_error_t e;
    json_t *v = json_loads(s, 0, &e);
    if (!v)
        fail_msg("bad fixture: %s", e.text);
    return v;
}

static void add(json_t *p, const char *resource, const char *json)
{
    json_t *o = parse(json);
    sk_rbac_policy_add(p, resource, o);
    json_decref(o);
}

/* A policy: bob may get configmaps in ns1 (Role); group devs may view pods
 * cluster-wide; the sa "ci" of ns1 may update deployments/scale named
 * "web" in ns1; readers may GET /healthz and /apis/ prefix. */
static json_t *fixture(void)
{
    json_t *p = sk_rbac_policy_new();
    add(p, "roles", "{\"metadata\":{\"name\":\"cm-get\",\"namespace\":\"ns1\"},"
                    "\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
                    "\"verbs\":[\"get\"]}]}");
    add(p, "rolebindings", "{\"metadata\":{\"name\":\"bob-cm\",\"namespace\":\"ns1\"},"
                           "\"roleRef\":{\"kind\":\"Role\",\"name\":\"cm-get\"},"
                           "\"subjects\":[{\"kind\":\"User\",\"name\":\"bob\"}]}");
    add(p, "clusterroles", "{\"metadata\":{\"name\":\"pod-view\"},"
                           "\"rules\":[{\"apiGroups\":[\"*\"],\"resources\":[\"pods\",\"*/status\"],"
                           "\"verbs\":[\"get\",\"list\",\"watch\"]}]}");
    add(p, "clusterrolebindings", "{\"metadata\":{\"name\":\"devs\"},"
                                  "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"pod-view\"},"
                                  "\"subjects\":[{\"kind\":\"Group\",\"name\":\"devs\"}]}");
    add(p, "clusterroles", "{\"metadata\":{\"name\":\"scaler\"},"
                           "\"rules\":[{\"apiGroups\":[\"apps\"],\"resources\":[\"deployments/scale\"],"
                           "\"resourceNames\":[\"web\"],\"verbs\":[\"update\"]}]}");
    add(p, "rolebindings", "{\"metadata\":{\"name\":\"ci\",\"namespace\":\"ns1\"},"
                           "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"scaler\"},"
                           "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"ci\"}]}");
    add(p, "clusterroles", "{\"metadata\":{\"name\":\"urls\"},"
                           "\"rules\":[{\"nonResourceURLs\":[\"/healthz\",\"/apis/*\"],"
                           "\"verbs\":[\"get\"]}]}");
    add(p, "clusterrolebindings", "{\"metadata\":{\"name\":\"urls\"},"
                                  "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"urls\"},"
                                  "\"subjects\":[{\"kind\":\"Group\",\"name\":\"readers\"}]}");
    return p;
}

static int check(const json_t *p, const sk_user *u, const char *verb, const char *group,
                 const char *resource, const char *sub, const char *ns, const char *name)
{
    sk_rbac_attrs a = {.user = u, .verb = verb, .resource_request = 1, .group = group,
                       .resource = resource, .subresource = sub, .ns = ns, .name = name};
    sk_rbac_decision d;
    sk_rbac_authorize(p, &a, &d);
    int allowed = d.allowed;
    sk_rbac_decision_clear(&d);
    return allowed;
}

static int check_path(const json_t *p, const sk_user *u, const char *verb, const char *path)
{
    sk_rbac_attrs a = {.user = u, .verb = verb, .path = path};
    sk_rbac_decision d;
    sk_rbac_authorize(p, &a, &d);
    int allowed = d.allowed;
    sk_rbac_decision_clear(&d);
    return allowed;
}

static void test_role_binding_scope(void **state)
{
    json_t *p = fixture();
    sk_user bob = {.name = "bob"};
    assert_true(check(p, &bob, "get", "", "configmaps", "", "ns1", "x"));
    assert_false(check(p, &bob, "list", "", "configmaps", "", "ns1", ""));
    assert_false(check(p, &bob, "get", "", "configmaps", "", "ns2", "x"));
    assert_false(check(p, &bob, "get", "", "secrets", "", "ns1", "x"));
    assert_false(check(p, &bob, "get", "apps", "configmaps", "", "ns1", "x"));
    assert_false(check(p, &bob, "get", "", "configmaps", "", "", "x"));
    sk_user alice = {.name = "alice"};
    assert_false(check(p, &alice, "get", "", "configmaps", "", "ns1", "x"));
    json_decref(p);
}

static void test_groups_wildcards_subresources(void **state)
{
    json_t *p = fixture();
    const char *groups[] = {"devs"};
    sk_user dev = {.name = "carol", .groups = groups, .n_groups = 1};
    assert_true(check(p, &dev, "list", "", "pods", "", "", ""));
    assert_true(check(p, &dev, "watch", "", "pods", "", "any", ""));
    assert_true(check(p, &dev, "get", "apps", "deployments", "status", "a", "d"));
    assert_false(check(p, &dev, "get", "", "pods", "log", "a", "p"));
    assert_false(check(p, &dev, "delete", "", "pods", "", "a", "p"));
    json_decref(p);
}

static void test_service_accounts_and_names(void **state)
{
    json_t *p = fixture();
    sk_user sa = {.name = "system:serviceaccount:ns1:ci"};
    assert_true(check(p, &sa, "update", "apps", "deployments", "scale", "ns1", "web"));
    assert_false(check(p, &sa, "update", "apps", "deployments", "scale", "ns1", "api"));
    assert_false(check(p, &sa, "update", "apps", "deployments", "", "ns1", "web"));
    sk_user other = {.name = "system:serviceaccount:ns2:ci"};
    assert_false(check(p, &other, "update", "apps", "deployments", "scale", "ns1", "web"));
    sk_user prefix = {.name = "system:serviceaccount:ns1:cix"};
    assert_false(check(p, &prefix, "update", "apps", "deployments", "scale", "ns1", "web"));
    json_decref(p);
}

static void test_non_resource_and_masters(void **state)
{
    json_t *p = fixture();
    const char *groups[] = {"readers"};
    sk_user r = {.name = "r", .groups = groups, .n_groups = 1};
    assert_true(check_path(p, &r, "get", "/healthz"));
    assert_false(check_path(p, &r, "get", "/healthz/etcd"));
    assert_true(check_path(p, &r, "get", "/apis/apps"));
    assert_false(check_path(p, &r, "get", "/api"));
    assert_false(check_path(p, &r, "post", "/healthz"));
    const char *masters[] = {"system:masters"};
    sk_user root = {.name = "root", .groups = masters, .n_groups = 1};
    assert_true(check(p, &root, "delete", "", "namespaces", "", "", "kube-system"));
    assert_true(check_path(p, &root, "get", "/anything"));
    json_decref(p);
}

static void test_reasons_and_texts(void **state)
{
    json_t *p = fixture();
    sk_user bob = {.name = "bob"};
    sk_rbac_attrs a = {.user = &bob, .verb = "get", .resource_request = 1, .resource = "configmaps",
                       .ns = "ns1", .name = "x"};
    sk_rbac_decision d;
    sk_rbac_authorize(p, &a, &d);
    assert_true(d.allowed);
    assert_string_equal(d.reason, "RBAC: allowed by RoleBinding \"bob-cm/ns1\" of Role \"cm-get\" "
                                  "to User \"bob\"");
    sk_rbac_decision_clear(&d);
    a.verb = "list";
    sk_rbac_authorize(p, &a, &d);
    assert_false(d.allowed);
    assert_string_equal(d.reason, "");
    sk_rbac_decision_clear(&d);

    sk_buf b = SK_BUF_INIT;
    sk_rbac_forbidden_text(&a, &b);
    assert_string_equal(b.data, "User \"bob\" cannot list resource \"configmaps\" in API group "
                                "\"\" in the namespace \"ns1\"");
    sk_buf_reset(&b);
    sk_rbac_attrs c = {.user = &bob, .verb = "get", .resource_request = 1, .group = "apps",
                       .resource = "deployments", .subresource = "scale"};
    sk_rbac_forbidden_text(&c, &b);
    assert_string_equal(b.data, "User \"bob\" cannot get resource \"deployments/scale\" in API "
                                "group \"apps\" at the cluster scope");
    sk_buf_reset(&b);
    sk_rbac_attrs u = {.user = &bob, .verb = "get", .path = "/metrics"};
    sk_rbac_forbidden_text(&u, &b);
    assert_string_equal(b.data, "User \"bob\" cannot get path \"/metrics\"");
    sk_buf_free(&b);

    /* A binding to a missing role is an evaluation error, not a denial's cause alone. */
    add(p, "rolebindings", "{\"metadata\":{\"name\":\"gone\",\"namespace\":\"ns1\"},"
                           "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"nope\"},"
                           "\"subjects\":[{\"kind\":\"User\",\"name\":\"bob\"}]}");
    sk_rbac_authorize(p, &a, &d);
    assert_false(d.allowed);
    assert_string_equal(d.reason,
                        "RBAC: clusterrole.rbac.authorization.k8s.io \"nope\" not found");
    sk_rbac_decision_clear(&d);
    json_decref(p);
}

static void test_rules_review(void **state)
{
    json_t *p = fixture();
    sk_user bob = {.name = "bob"};
    json_t *st = sk_rbac_rules_review(p, &bob, "ns1");
    json_t *want = parse("{\"resourceRules\":[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],"
                         "\"resources\":[\"configmaps\"]}],\"nonResourceRules\":[],"
                         "\"incomplete\":false}");
    assert_true(json_equal(st, want));
    json_decref(st);
    json_decref(want);
    st = sk_rbac_rules_review(p, &bob, "ns2");
    assert_int_equal(json_array_size(json_object_get(st, "resourceRules")), 0);
    json_decref(st);
    json_decref(p);
}

static void test_aggregate(void **state)
{
    json_t *roles = parse(
        "[{\"metadata\":{\"name\":\"a\",\"labels\":{\"agg\":\"true\"}},"
        "  \"rules\":[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]},"
        " {\"metadata\":{\"name\":\"b\",\"labels\":{\"agg\":\"false\"}},"
        "  \"rules\":[{\"verbs\":[\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]},"
        " {\"metadata\":{\"name\":\"c\",\"labels\":{\"agg\":\"true\"}},"
        "  \"rules\":[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]},"
        "             {\"verbs\":[\"watch\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]},"
        " {\"metadata\":{\"name\":\"top\",\"labels\":{\"agg\":\"true\"}},"
        "  \"aggregationRule\":{\"clusterRoleSelectors\":[{\"matchLabels\":{\"agg\":\"true\"}}]},"
        "  \"rules\":[{\"verbs\":[\"*\"],\"apiGroups\":[\"*\"],\"resources\":[\"*\"]}]}]");
    json_t *rules = sk_rbac_aggregate(json_array_get(roles, 3), roles);
    json_t *want = parse("[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]},"
                         " {\"verbs\":[\"watch\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]");
    assert_true(json_equal(rules, want));
    json_decref(rules);
    json_decref(want);
    json_decref(roles);
}

/* ---- sk_rbac_policy_with against a build from scratch ---- */

static const char *const kinds[] = {"roles", "clusterroles", "rolebindings",
                                    "clusterrolebindings"};

/* A random object of kinds[k] named name in ns (clusterwide kinds: ns ""). */
static json_t *random_object(unsigned *seed, int k, const char *ns, const char *name)
{
    static const char *const subjects[] = {"User:ann", "User:bob", "Group:devs", "Group:ops",
                                           "ServiceAccount:ci", "Bogus:x"};
    json_t *meta = json_pack("{s:s}", "name", name);
    if (*ns)
        json_object_set_new(meta, "namespace", json_string(ns));
    json_t *obj = json_pack("{s:o}", "metadata", meta);
    if (k < 2) {
        json_object_set_new(obj, "rules",
                            json_pack("[{s:[s], s:[s], s:[s]}]", "apiGroups", "",
                                      "resources", rand_r(seed) % 2 ? "pods" : "configmaps",
                                      "verbs", "get"));
    } else {
        json_t *subs = json_array();
        int n = rand_r(seed) % 4; /* none, one, or some, perhaps the same twice */
        for (int i = 0; i < n; i++) {
            char kind[32];
            const char *sub = subjects[rand_r(seed) % 6];
            const char *colon = strchr(sub, ':');
            snprintf(kind, sizeof kind, "%.*s", (int)(colon - sub), sub);
            json_array_append_new(subs, json_pack("{s:s, s:s}", "kind", kind, "name", colon + 1));
        }
        json_object_set_new(obj, "subjects", subs);
        json_object_set_new(obj, "roleRef", json_pack("{s:s, s:s}", "kind", "ClusterRole",
                                                      "name", "view"));
    }
    return obj;
}

static void test_policy_with_equals_rebuild(void **state)
{
    (void)state;
    enum { SLOTS = 6, STEPS = 3000 };
    static const char *const nss[] = {"a", "b", "c"};
    static const char *const names[] = {"n0", "n1", "n2", "n3", "n4", "n5"};
    /* model[k][ns][name]: the live object or NULL */
    json_t *model[4][3][SLOTS] = {{{0}}};
    unsigned seed = 42;
    json_t *policy = sk_rbac_policy_new();
    for (int step = 0; step < STEPS; step++) {
        int k = rand_r(&seed) % 4, cluster = k == 1 || k == 3;
        int n = cluster ? 0 : rand_r(&seed) % 3, i = rand_r(&seed) % SLOTS;
        json_t *old = model[k][n][i];
        json_t *now = rand_r(&seed) % 3 == 0
                          ? NULL
                          : random_object(&seed, k, cluster ? "" : nss[n], names[i]);
        if (!old && !now)
            continue;
        char *before = json_dumps(policy, JSON_SORT_KEYS);
        json_t *next = sk_rbac_policy_with(policy, kinds[k], old, now);
        char *after = json_dumps(policy, JSON_SORT_KEYS);
        assert_string_equal(before, after); /* readers' policy untouched */
        free(before);
        free(after);
        json_decref(policy);
        policy = next;
        json_decref(old);
        model[k][n][i] = now;
        /* What a key-ordered scan builds. */
        json_t *built = sk_rbac_policy_new();
        for (int kk = 0; kk < 4; kk++)
            for (int nn = 0; nn < 3; nn++)
                for (int ii = 0; ii < SLOTS; ii++)
                    if (model[kk][nn][ii])
                        sk_rbac_policy_add(built, kinds[kk], model[kk][nn][ii]);
        if (!json_equal(built, policy)) {
            char *want = json_dumps(built, JSON_SORT_KEYS), *got = json_dumps(policy, JSON_SORT_KEYS);
            fail_msg("step %d: edited policy differs from a build:\n%s\n%s", step, got, want);
        }
        json_decref(built);
    }
    for (int kk = 0; kk < 4; kk++)
        for (int nn = 0; nn < 3; nn++)
            for (int ii = 0; ii < SLOTS; ii++)
                json_decref(model[kk][nn][ii]);
    json_decref(policy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_role_binding_scope),
        cmocka_unit_test(test_groups_wildcards_subresources),
        cmocka_unit_test(test_service_accounts_and_names),
        cmocka_unit_test(test_non_resource_and_masters),
        cmocka_unit_test(test_reasons_and_texts),
        cmocka_unit_test(test_rules_review),
        cmocka_unit_test(test_aggregate),
        cmocka_unit_test(test_policy_with_equals_rebuild),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
