/*
 * test_cel_admission.c - cel/admission.h where the e2e tests (test_webhooks,
 * test_admission_policy) cannot reach or would be slow to: the stored
 * environment against the new one (an expression stored before can only
 * be met on an update), what each declaration set declares, the result
 * types a variable keeps for the expressions after it, and the texts of
 * the result-type refusals.
 */
#include "cel/admission.h"
#include "core/arena.h"
#include "core/buf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* NULL if src compiles in c, else kube's detail (malloc'd). */
static char *compile(sk_cel_adm *c, const char *src, unsigned decl, int stored,
                     sk_cel_adm_result result, const char *variable)
{
    sk_buf detail = SK_BUF_INIT;
    const sk_cel_expr *tree = sk_cel_adm_compile(c, src, decl, stored, result, variable, &detail);
    if (tree) {
        assert_int_equal(detail.len, 0);
        sk_buf_free(&detail);
        return NULL;
    }
    return sk_buf_steal(&detail, NULL);
}

static void expect(sk_cel_adm *c, const char *src, unsigned decl, sk_cel_adm_result result,
                   const char *want)
{
    char *got = compile(c, src, decl, 0, result, NULL);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_environments(void **state)
{
    (void)state;
    sk_arena *a = sk_arena_new();
    sk_cel_adm *c = sk_cel_adm_new(a);
    const char *two = "object.data.all(k, v, k != v)";
    /* stored: kube 1.32's environment, two-variable comprehensions in it */
    assert_null(compile(c, two, 0, 1, SK_CEL_ADM_BOOL, NULL));
    /* new: the compatibility version's (1.31), without them */
    char *got = compile(c, two, 0, 0, SK_CEL_ADM_BOOL, NULL);
    assert_non_null(got);
    assert_ptr_equal(strstr(got, "compilation failed: ERROR: <input>:1:16: undeclared "
                                 "reference to 'all' (in container '')"),
                     got);
    free(got);
    sk_arena_free(a);
}

static void test_declarations(void **state)
{
    (void)state;
    sk_arena *a = sk_arena_new();
    sk_cel_adm *c = sk_cel_adm_new(a);
    const unsigned all = SK_CEL_ADM_PARAMS | SK_CEL_ADM_AUTHORIZER;
    /* params and the authorizer only when declared */
    expect(c, "params.x == 1", all, SK_CEL_ADM_BOOL, NULL);
    expect(c, "params.x == 1", 0, SK_CEL_ADM_BOOL,
           "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in "
           "container '')\n | params.x == 1\n | ^");
    expect(c, "authorizer.requestResource.subresource('scale').check('update').allowed()", all,
           SK_CEL_ADM_BOOL, NULL);
    expect(c, "authorizer.requestResource.check('get').reason()", SK_CEL_ADM_PARAMS,
           SK_CEL_ADM_STRING,
           "compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in "
           "container '')\n | authorizer.requestResource.check('get').reason()\n | ^");
    /* request and namespaceObject have kube's fields and field types */
    expect(c,
           "request.kind.group == '' && request.requestResource.resource == 'pods' && "
           "request.dryRun && request.userInfo.extra['x'][0] == 'y' && "
           "request.options.anything == 1",
           0, SK_CEL_ADM_BOOL, NULL);
    expect(c,
           "namespaceObject.status.conditions[0].lastTransitionTime < "
           "namespaceObject.metadata.creationTimestamp + duration('1s') && "
           "namespaceObject.metadata.generation > 1 && "
           "namespaceObject.spec.finalizers.exists(f, f.startsWith('k'))",
           0, SK_CEL_ADM_BOOL, NULL);
    expect(c, "request.dryRun == 'true'", 0, SK_CEL_ADM_BOOL,
           "compilation failed: ERROR: <input>:1:16: found no matching overload for '_==_' "
           "applied to '(bool, string)'\n | request.dryRun == 'true'\n | ...............^");
    expect(c, "namespaceObject.metadata.uid", 0, SK_CEL_ADM_STRING,
           "compilation failed: ERROR: <input>:1:25: undefined field 'uid'\n"
           " | namespaceObject.metadata.uid\n | ........................^");
    /* variables are not declared unless the compiler composes them */
    expect(c, "variables.x", 0, SK_CEL_ADM_ANY,
           "compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in "
           "container '')\n | variables.x\n | ^");
    sk_arena_free(a);
}

static void test_result_types(void **state)
{
    (void)state;
    sk_arena *a = sk_arena_new();
    sk_cel_adm *c = sk_cel_adm_new(a);
    expect(c, "object.x", 0, SK_CEL_ADM_BOOL, "must evaluate to bool but got dyn");
    expect(c, "duration('1s')", 0, SK_CEL_ADM_STRING,
           "must evaluate to string but got google.protobuf.Duration");
    expect(c, "{'a': [request.name]}", 0, SK_CEL_ADM_STRING_OR_NULL,
           "must evaluate to one of [string null_type] but got map(string, list(string))");
    expect(c, "optional.of(1)", 0, SK_CEL_ADM_BOOL,
           "must evaluate to bool but got optional_type(int)");
    expect(c, "null", 0, SK_CEL_ADM_STRING_OR_NULL, NULL);
    expect(c, "request.name", 0, SK_CEL_ADM_STRING_OR_NULL, NULL);
    expect(c, "namespaceObject", 0, SK_CEL_ADM_ANY, NULL);
    sk_arena_free(a);
}

static void test_composed_variables(void **state)
{
    (void)state;
    sk_arena *a = sk_arena_new();
    sk_cel_adm *c = sk_cel_adm_new(a);
    const unsigned v = SK_CEL_ADM_VARIABLES;
    assert_null(compile(c, "[1, 2]", v, 0, SK_CEL_ADM_ANY, "ints"));
    assert_null(compile(c, "{'a': request.userInfo.groups}", v, 0, SK_CEL_ADM_ANY, "groups"));
    assert_null(compile(c, "quantity('1')", v, 0, SK_CEL_ADM_ANY, "q"));
    /* one that fails is dyn to those after it */
    char *got = compile(c, "1 + 'a'", v, 0, SK_CEL_ADM_ANY, "broken");
    assert_non_null(got);
    free(got);
    /* lists and maps keep their types (elements converted), others are dyn */
    expect(c, "variables.ints[0] + 1 == 2 && variables.groups['a'][0].startsWith('x')", v,
           SK_CEL_ADM_BOOL, NULL);
    expect(c, "variables.ints[0] == 'x'", v, SK_CEL_ADM_BOOL,
           "compilation failed: ERROR: <input>:1:19: found no matching overload for '_==_' "
           "applied to '(int, string)'\n | variables.ints[0] == 'x'\n"
           " | ..................^");
    expect(c, "variables.q", v, SK_CEL_ADM_BOOL, "must evaluate to bool but got dyn");
    expect(c, "variables.broken", v, SK_CEL_ADM_BOOL, "must evaluate to bool but got dyn");
    /* the last of a name wins */
    assert_null(compile(c, "'s'", v, 0, SK_CEL_ADM_ANY, "ints"));
    expect(c, "variables.ints", v, SK_CEL_ADM_STRING, NULL);
    expect(c, "variables.none", v, SK_CEL_ADM_ANY,
           "compilation failed: ERROR: <input>:1:10: undefined field 'none'\n"
           " | variables.none\n | .........^");
    sk_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_environments),
        cmocka_unit_test(test_declarations),
        cmocka_unit_test(test_result_types),
        cmocka_unit_test(test_composed_variables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
