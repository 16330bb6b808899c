/*
 * test_rbac_cover.c - kube/rbac_cover.c: coverage of rules to grant by
 * held rules (wildcards, subresources, resourceNames, non-resource URLs),
 * the atoms left uncovered, and kube's refusal text (compaction, order,
 * resolution errors); and kube/rbac.c's rules_for and role_rules.
 */
#include "kube/rbac.h"
#include "kube/rbac_cover.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *parse(const char *s)
{
    json_error_t e;
    json_t *v = json_loads(s, 0, &e);
    if (!v)
        fail_msg("bad fixture: %s (%s)", e.text, s);
    return v;
}

/* Whether held covers wanted; the uncovered atoms' JSON into *missing_out
 * (caller frees) when given. */
static int covers(const char *held, const char *wanted, char **missing_out)
{
    json_t *h = parse(held), *w = parse(wanted), *missing = NULL;
    int ok = sk_rbac_cover(h, w, &missing);
    assert_non_null(missing);
    assert_int_equal(ok, json_array_size(missing) == 0);
    if (missing_out)
        *missing_out = json_dumps(missing, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(h);
    json_decref(w);
    json_decref(missing);
    return ok;
}

static void test_exact_and_wildcards(void **state)
{
    (void)state;
    const char *pods = "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\",\"list\"]}]";
    assert_true(covers(pods, "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]", NULL));
    assert_true(covers(pods, "[]", NULL));
    assert_false(covers(pods, "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"delete\"]}]", NULL));
    assert_false(covers(pods, "[{\"apiGroups\":[\"apps\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]", NULL));
    assert_false(covers("[]", "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]", NULL));
    const char *all = "[{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]}]";
    assert_true(covers(all, "[{\"apiGroups\":[\"x\"],\"resources\":[\"y/z\"],\"verbs\":[\"escalate\"],\"resourceNames\":[\"n\"]}]", NULL));
    /* a wanted "*" is a literal: only a held "*" covers it */
    assert_false(covers(pods, "[{\"apiGroups\":[\"\"],\"resources\":[\"*\"],\"verbs\":[\"get\"]}]", NULL));
    /* resource rules do not cover URLs, nor the reverse */
    assert_false(covers(all, "[{\"nonResourceURLs\":[\"/healthz\"],\"verbs\":[\"get\"]}]", NULL));
}

static void test_subresources(void **state)
{
    (void)state;
    const char *st = "[{\"apiGroups\":[\"\"],\"resources\":[\"*/status\",\"pods\"],\"verbs\":[\"get\"]}]";
    assert_true(covers(st, "[{\"apiGroups\":[\"\"],\"resources\":[\"services/status\"],\"verbs\":[\"get\"]}]", NULL));
    assert_false(covers(st, "[{\"apiGroups\":[\"\"],\"resources\":[\"pods/log\"],\"verbs\":[\"get\"]}]", NULL));
    assert_true(covers(st, "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\",\"pods/status\"],\"verbs\":[\"get\"]}]", NULL));
}

static void test_resource_names(void **state)
{
    (void)state;
    const char *named = "[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"verbs\":[\"get\"],\"resourceNames\":[\"a\",\"b\"]}]";
    assert_true(covers(named, "[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"verbs\":[\"get\"],\"resourceNames\":[\"a\"]}]", NULL));
    assert_false(covers(named, "[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"verbs\":[\"get\"],\"resourceNames\":[\"c\"]}]", NULL));
    /* names held never cover every name */
    assert_false(covers(named, "[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"verbs\":[\"get\"]}]", NULL));
    /* no names held covers any name */
    assert_true(covers("[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"verbs\":[\"get\"]}]",
                       "[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"verbs\":[\"get\"],\"resourceNames\":[\"z\"]}]", NULL));
}

static void test_urls(void **state)
{
    (void)state;
    const char *urls = "[{\"nonResourceURLs\":[\"/healthz\",\"/apis/*\"],\"verbs\":[\"get\"]}]";
    assert_true(covers(urls, "[{\"nonResourceURLs\":[\"/healthz\",\"/apis/x/y\"],\"verbs\":[\"get\"]}]", NULL));
    assert_true(covers(urls, "[{\"nonResourceURLs\":[\"/apis/*\"],\"verbs\":[\"get\"]}]", NULL));
    assert_false(covers(urls, "[{\"nonResourceURLs\":[\"/api\"],\"verbs\":[\"get\"]}]", NULL));
    assert_false(covers(urls, "[{\"nonResourceURLs\":[\"/healthz\"],\"verbs\":[\"post\"]}]", NULL));
    assert_true(covers("[{\"nonResourceURLs\":[\"*\"],\"verbs\":[\"*\"]}]",
                       "[{\"nonResourceURLs\":[\"/x\"],\"verbs\":[\"put\"]}]", NULL));
}

static void test_missing_atoms(void **state)
{
    (void)state;
    char *m = NULL;
    assert_false(covers("[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]",
                        "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\",\"delete\"],\"resourceNames\":[\"a\"]}]",
                        &m));
    /* get on pods named a is covered; delete is not */
    assert_string_equal(m, "[{\"apiGroups\":[\"\"],\"resourceNames\":[\"a\"],\"resources\":[\"pods\"],\"verbs\":[\"delete\"]}]");
    free(m);
}

static char *refusal(const char *held, const char *wanted, const char *errors)
{
    const char *groups[] = {"devs", "system:authenticated"};
    sk_user u = {.name = "bob", .uid = "", .groups = groups, .n_groups = 2};
    json_t *h = parse(held), *w = parse(wanted), *missing = NULL;
    sk_rbac_cover(h, w, &missing);
    sk_buf b = SK_BUF_INIT;
    sk_rbac_cover_refusal(&u, missing, errors, &b);
    json_decref(h);
    json_decref(w);
    json_decref(missing);
    return sk_buf_steal(&b, NULL);
}

static void test_refusal_text(void **state)
{
    (void)state;
    char *t = refusal("[]",
                      "[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\",\"pods\"],\"verbs\":[\"list\",\"get\"]},"
                      "{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"],\"resourceNames\":[\"x\"]},"
                      "{\"nonResourceURLs\":[\"/metrics\"],\"verbs\":[\"get\"]}]",
                      NULL);
    assert_string_equal(t, "user \"bob\" (groups=[\"devs\" \"system:authenticated\"]) is attempting to "
                           "grant RBAC permissions not currently held:\n"
                           "{APIGroups:[\"\"], Resources:[\"pods\"], ResourceNames:[\"x\"], Verbs:[\"get\"]}\n"
                           "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"list\" \"get\"]}\n"
                           "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"list\" \"get\"]}\n"
                           "{NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}");
    free(t);
    t = refusal("[]", "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]",
                "clusterrole.rbac.authorization.k8s.io \"gone\" not found");
    assert_string_equal(t, "user \"bob\" (groups=[\"devs\" \"system:authenticated\"]) is attempting to "
                           "grant RBAC permissions not currently held:\n"
                           "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}; resolution errors: "
                           "[clusterrole.rbac.authorization.k8s.io \"gone\" not found]");
    free(t);
}

static void add(json_t *p, const char *resource, const char *json)
{
    json_t *o = parse(json);
    sk_rbac_policy_add(p, resource, o);
    json_decref(o);
}

static void test_rules_for(void **state)
{
    (void)state;
    json_t *p = sk_rbac_policy_new();
    add(p, "clusterroles", "{\"metadata\":{\"name\":\"view\"},\"rules\":[{\"apiGroups\":[\"\"],"
                           "\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]}");
    add(p, "roles", "{\"metadata\":{\"name\":\"edit\",\"namespace\":\"ns1\"},\"rules\":[{\"apiGroups\":[\"\"],"
                    "\"resources\":[\"pods\"],\"verbs\":[\"delete\"]}]}");
    add(p, "clusterrolebindings", "{\"metadata\":{\"name\":\"b1\"},\"roleRef\":{\"kind\":\"ClusterRole\","
                                  "\"name\":\"view\"},\"subjects\":[{\"kind\":\"Group\",\"name\":\"devs\"}]}");
    add(p, "rolebindings", "{\"metadata\":{\"name\":\"b2\",\"namespace\":\"ns1\"},\"roleRef\":{\"kind\":\"Role\","
                           "\"name\":\"edit\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"bob\"}]}");
    add(p, "rolebindings", "{\"metadata\":{\"name\":\"b3\",\"namespace\":\"ns1\"},\"roleRef\":{\"kind\":\"Role\","
                           "\"name\":\"gone\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"bob\"}]}");
    const char *groups[] = {"devs"};
    sk_user u = {.name = "bob", .uid = "", .groups = groups, .n_groups = 1};
    char *errors = NULL;
    json_t *r = sk_rbac_rules_for(p, &u, "", &errors);
    assert_int_equal(json_array_size(r), 1);
    assert_null(errors);
    json_decref(r);
    r = sk_rbac_rules_for(p, &u, "ns1", &errors);
    assert_int_equal(json_array_size(r), 2);
    assert_string_equal(errors, "role.rbac.authorization.k8s.io \"gone\" not found");
    free(errors);
    json_decref(r);
    assert_non_null(sk_rbac_role_rules(p, "Role", "ns1", "edit"));
    assert_null(sk_rbac_role_rules(p, "Role", "", "edit"));
    assert_null(sk_rbac_role_rules(p, "Role", "ns2", "edit"));
    assert_non_null(sk_rbac_role_rules(p, "ClusterRole", "ns2", "view"));
    assert_null(sk_rbac_role_rules(p, "Group", "", "view"));
    json_decref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_and_wildcards), cmocka_unit_test(test_subresources),
        cmocka_unit_test(test_resource_names),      cmocka_unit_test(test_urls),
        cmocka_unit_test(test_missing_atoms),       cmocka_unit_test(test_refusal_text),
        cmocka_unit_test(test_rules_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
