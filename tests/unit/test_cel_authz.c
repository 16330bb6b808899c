/*
 * test_cel_authz.c - the CEL authorization library (cel/authz.h) through
 * the evaluator: what each builder hands the authorizer, the Decision's
 * accessors, the type names, kube's errors for a blank path or resource,
 * builders that leave their receiver as it was, and a check with no
 * authorizer configured.
 */
#include "cel/authz.h"
#include "cel/eval.h"
#include "cel/parse.h"
#include "core/arena.h"
#include "core/buf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* What the last check asked, as "verb path|group/resource/sub ns name sa". */
static char asked[512];

static const char *decide(void *ctx, sk_arena *a, const sk_cel_authz *c, const char *verb,
                          int *allowed, const char **reason, const char **error)
{
    (void)ctx;
    (void)a;
    if (c->stage == SK_CEL_AUTHZ_PATH)
        snprintf(asked, sizeof asked, "%s %s", verb, c->path);
    else
        snprintf(asked, sizeof asked, "%s %s/%s/%s %s %s %s:%s", verb, c->group, c->resource,
                 c->subresource ? c->subresource : "", c->namespace ? c->namespace : "",
                 c->name ? c->name : "", c->sa_namespace ? c->sa_namespace : "",
                 c->sa_name ? c->sa_name : "");
    *allowed = strcmp(verb, "get") == 0;
    *reason = *allowed ? "granted" : "";
    *error = strcmp(verb, "explode") == 0 ? "authorizer failed" : NULL;
    return NULL;
}

static const sk_cel_val *variable(void *ctx, sk_arena *a, const char *name)
{
    (void)ctx;
    if (strcmp(name, "authorizer") == 0)
        return sk_cel_authorizer(a);
    if (strcmp(name, "authorizer.requestResource") == 0)
        return sk_cel_authorizer_request(a, "apps", "deployments", "scale", "ns1", "web");
    return NULL;
}

/* src's value as text: a string's bytes, a bool as true/false, an error
 * as "error: msg". with_authorizer: the callback is configured. */
static char *run(const char *src, int with_authorizer)
{
    sk_arena *a = sk_arena_new();
    sk_cel_parse_options popt = {0};
    const sk_cel_expr *e = sk_cel_ast_expr(sk_cel_parse(a, src, strlen(src), &popt));
    assert_non_null(e);
    sk_cel_eval_options opt = {.resolve = variable,
                               .authorize = with_authorizer ? decide : NULL};
    const sk_cel_val *v = sk_cel_eval(a, e, &opt, NULL);
    sk_buf b = SK_BUF_INIT;
    if (v->type == SK_CEL_V_ERROR)
        sk_buf_printf(&b, "error: %s", v->u.str.s);
    else if (v->type == SK_CEL_V_BOOL)
        sk_buf_puts(&b, v->u.b ? "true" : "false");
    else if (v->type == SK_CEL_V_STRING || v->type == SK_CEL_V_TYPE)
        sk_buf_append(&b, v->u.str.s, v->u.str.len);
    else
        sk_buf_puts(&b, "?");
    sk_arena_free(a);
    return sk_buf_steal(&b, NULL);
}

static void expect(const char *src, const char *want)
{
    char *got = run(src, 1);
    assert_string_equal(got, want);
    free(got);
}

static void test_checks(void **state)
{
    (void)state;
    expect("authorizer.group('').resource('pods').namespace('default').name('p')"
           ".check('get').allowed()",
           "true");
    assert_string_equal(asked, "get /pods/ default p :");
    expect("authorizer.group('apps').resource('deployments').subresource('scale')"
           ".check('update').reason()",
           "");
    assert_string_equal(asked, "update apps/deployments/scale   :");
    expect("authorizer.path('/healthz').check('get').reason()", "granted");
    assert_string_equal(asked, "get /healthz");
    expect("authorizer.serviceAccount('ns', 'sa').group('').resource('secrets')"
           ".check('list').allowed()",
           "false");
    assert_string_equal(asked, "list /secrets/   ns:sa");
    expect("authorizer.requestResource.check('get').allowed()", "true");
    assert_string_equal(asked, "get apps/deployments/scale ns1 web :");
    /* the authorizer's own error, in the Decision */
    expect("authorizer.path('/x').check('explode').errored()", "true");
    expect("authorizer.path('/x').check('explode').error()", "authorizer failed");
    expect("authorizer.path('/x').check('get').error()", "");
}

static void test_values(void **state)
{
    (void)state;
    expect("type(authorizer)", "kubernetes.authorization.Authorizer");
    expect("type(authorizer.path('/a'))", "kubernetes.authorization.PathCheck");
    expect("type(authorizer.group(''))", "kubernetes.authorization.GroupCheck");
    expect("type(authorizer.requestResource)", "kubernetes.authorization.ResourceCheck");
    expect("type(authorizer.path('/a').check('get'))", "kubernetes.authorization.Decision");
    /* a builder copies: the receiver keeps its own fields */
    expect("[authorizer.group('').resource('pods')].all(r, r.name('a').check('get').allowed() && "
           "r.check('get').allowed())",
           "true");
    assert_string_equal(asked, "get /pods/   :");
    /* kube's errors; a method of the wrong stage has no overload */
    expect("authorizer.path(' ')", "error: path must not be empty");
    expect("authorizer.group('').resource('')", "error: resource must not be empty");
    char *got = run("authorizer.check('get')", 1);
    assert_true(strncmp(got, "error: ", 7) == 0);
    free(got);
    got = run("authorizer.path('/x').check('get').allowed()", 0);
    assert_string_equal(got, "error: no authorizer is configured for this expression");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checks),
        cmocka_unit_test(test_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
