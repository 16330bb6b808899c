/*
 * rbac_policy.c - the RBAC authorizer's policy (kube/rbac.h), measured in
 * process: what B role bindings cost in memory and what a check costs.
 *
 * Builds a policy as the authorizer's index does (api/authz.c): kube's
 * bootstrap roles and bindings (kube/rbac_bootstrap.h) plus B RoleBindings
 * spread over NS namespaces, each binding one user to one of R Roles of its
 * namespace (get/list/watch on configmaps and pods). Reports the heap the
 * policy takes (allocator's view, before and after), the build time, and
 * the time of C checks: allowed ones (a bound user, resource in its role),
 * denied ones (a user with no binding: every binding of the namespace and
 * every cluster binding is visited), and system:masters ones.
 *
 * Prints one JSON object. usage: rbac_policy [--bindings B] [--namespaces NS]
 *                                           [--roles R] [--checks C]
 */
#include "bench_util.h"
#include "kube/rbac.h"
#include "kube/rbac_bootstrap.h"

#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t heap_in_use(void)
{
    malloc_trim(0);
    return mallinfo2().uordblks;
}

static void add_bootstrap(json_t *policy)
{
    static const char *const res[] = {"clusterroles", "clusterrolebindings", "roles",
                                      "rolebindings"};
    const json_t *data = sk_rbac_bootstrap_policy();
    for (size_t i = 0; i < 4; i++) {
        size_t k;
        json_t *obj;
        json_array_foreach(json_object_get(data, res[i]), k, obj)
        {
            json_t *copy = json_deep_copy(obj);
            sk_rbac_policy_add(policy, res[i], copy);
            json_decref(copy);
        }
    }
}

static json_t *build(int bindings, int namespaces, int roles)
{
    json_t *p = sk_rbac_policy_new();
    add_bootstrap(p);
    char ns[32], name[32], user[32];
    for (int n = 0; n < namespaces; n++) {
        snprintf(ns, sizeof ns, "ns-%d", n);
        for (int r = 0; r < roles; r++) {
            snprintf(name, sizeof name, "role-%d", r);
            json_t *role = json_pack(
                "{s:s, s:s, s:{s:s, s:s}, s:[{s:[s], s:[s, s], s:[s, s, s]}]}", "apiVersion",
                "rbac.authorization.k8s.io/v1", "kind", "Role", "metadata", "name", name,
                "namespace", ns, "rules", "apiGroups", "", "resources", "configmaps", "pods",
                "verbs", "get", "list", "watch");
            sk_rbac_policy_add(p, "roles", role);
            json_decref(role);
        }
    }
    for (int b = 0; b < bindings; b++) {
        snprintf(ns, sizeof ns, "ns-%d", b % namespaces);
        snprintf(name, sizeof name, "binding-%d", b);
        snprintf(user, sizeof user, "user-%d", b);
        char role[32];
        snprintf(role, sizeof role, "role-%d", b % roles);
        json_t *rb = json_pack(
            "{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s}, s:[{s:s, s:s, s:s}]}", "apiVersion",
            "rbac.authorization.k8s.io/v1", "kind", "RoleBinding", "metadata", "name", name,
            "namespace", ns, "roleRef", "apiGroup", "rbac.authorization.k8s.io", "kind", "Role",
            "name", role, "subjects", "kind", "User", "apiGroup", "rbac.authorization.k8s.io",
            "name", user);
        sk_rbac_policy_add(p, "rolebindings", rb);
        json_decref(rb);
    }
    return p;
}

/* Median-free: total time of n checks of one kind, in ns per check. */
static double time_checks(const json_t *p, int n, int bindings, int namespaces, int kind,
                          int *allowed_out)
{
    static const char *const groups[] = {"system:authenticated"};
    static const char *const masters[] = {"system:masters", "system:authenticated"};
    char ns[32], user[32];
    int allowed = 0;
    double t0 = bench_now_s();
    for (int i = 0; i < n; i++) {
        int b = (int)(bench_rand() % (uint64_t)bindings);
        snprintf(ns, sizeof ns, "ns-%d", b % namespaces);
        snprintf(user, sizeof user, kind == 1 ? "stranger-%d" : "user-%d", b);
        sk_user u = {.name = user,
                     .groups = kind == 2 ? masters : groups,
                     .n_groups = kind == 2 ? 2 : 1};
        sk_rbac_attrs a = {.user = &u, .verb = "list", .resource_request = 1, .group = "",
                           .resource = "pods", .ns = ns};
        sk_rbac_decision d;
        sk_rbac_authorize(p, &a, &d);
        allowed += d.allowed;
        sk_rbac_decision_clear(&d);
    }
    *allowed_out = allowed;
    return (bench_now_s() - t0) * 1e9 / n;
}

int main(int argc, char **argv)
{
    int bindings = 10000, namespaces = 100, roles = 5, checks = 200000;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (strcmp(argv[i], "--bindings") == 0)
            bindings = v;
        else if (strcmp(argv[i], "--namespaces") == 0)
            namespaces = v;
        else if (strcmp(argv[i], "--roles") == 0)
            roles = v;
        else if (strcmp(argv[i], "--checks") == 0)
            checks = v;
    }
    if (bindings < 1 || namespaces < 1 || roles < 1 || checks < 1) {
        fprintf(stderr, "usage: rbac_policy [--bindings B] [--namespaces NS] [--roles R] "
                        "[--checks C]\n");
        return 2;
    }
    sk_rbac_bootstrap_policy(); /* parsed once, outside the measurement */
    size_t before = heap_in_use();
    double t0 = bench_now_s();
    json_t *p = build(bindings, namespaces, roles);
    double build_s = bench_now_s() - t0;
    size_t after = heap_in_use();
    int a_ok, d_ok, m_ok;
    double allowed_ns = time_checks(p, checks, bindings, namespaces, 0, &a_ok);
    double denied_ns = time_checks(p, checks, bindings, namespaces, 1, &d_ok);
    double masters_ns = time_checks(p, checks, bindings, namespaces, 2, &m_ok);
    printf("{\"bindings\": %d, \"namespaces\": %d, \"roles_per_namespace\": %d, "
           "\"policy_bytes\": %zu, \"bytes_per_binding\": %.0f, \"build_ms\": %.1f, "
           "\"checks\": %d, \"allowed_ns_per_check\": %.0f, \"denied_ns_per_check\": %.0f, "
           "\"masters_ns_per_check\": %.0f, \"allowed\": [%d, %d, %d]}\n",
           bindings, namespaces, roles, after - before,
           (double)(after - before) / bindings, build_s * 1e3, checks, allowed_ns, denied_ns,
           masters_ns, a_ok, d_ok, m_ok);
    json_decref(p);
    return a_ok == checks && d_ok == 0 && m_ok == checks ? 0 : 1;
}
