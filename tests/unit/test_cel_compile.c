/*
 * test_cel_compile.c - cel/compile.h where tests/cel/parse_test.py (cel-go's
 * checker over the parsing suite, nothing declared) does not reach:
 * declared variables, names bound by comprehensions and where they are
 * seen, kube's syntax (optional values), and the display of errors on a
 * later line and after characters wider than a byte.
 */
#include "cel/compile.h"
#include "core/arena.h"
#include "core/buf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const kube_vars[] = {"object", "oldObject", "request", NULL};

/* NULL if src compiles with kube_vars, else its errors (malloc'd). */
static char *compile(const char *src)
{
    sk_arena *a = sk_arena_new();
    sk_buf errors = SK_BUF_INIT;
    const sk_cel_expr *e = sk_cel_compile(a, src, strlen(src), kube_vars, NULL, &errors);
    sk_arena_free(a);
    if (e) {
        assert_int_equal(errors.len, 0);
        sk_buf_free(&errors);
        return NULL;
    }
    return sk_buf_steal(&errors, NULL);
}

static void refused(const char *src, const char *want)
{
    char *got = compile(src);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_declared_and_bound(void **state)
{
    (void)state;
    assert_null(compile("object.metadata.name == oldObject.metadata.name"));
    assert_null(compile("request.userInfo.groups.exists(g, g == 'admins')"));
    assert_null(compile("object.items.all(i, i.x > 0) && type(object) == map && int"));
    assert_null(compile("[1, 2].map(x, [3].map(y, x + y))"));
    /* kube's syntax has optional values */
    assert_null(compile("object.?spec.orValue({}) == {}"));
    /* a macro's variable is not seen in its range, nor after it */
    refused("[x].all(x, true)",
            "ERROR: <input>:1:2: undeclared reference to 'x' (in container '')\n"
            " | [x].all(x, true)\n"
            " | .^");
    refused("object.all(x, true) && x",
            "ERROR: <input>:1:24: undeclared reference to 'x' (in container '')\n"
            " | object.all(x, true) && x\n"
            " | .......................^");
    /* namespaced functions and library types are no variables */
    assert_null(compile("optional.of(1) != optional.none() && strings.quote('a') != '' && "
                        "sets.contains([1], [1.0]) && ip.isCanonical('::1') && "
                        "type(ip('::1')) == net.IP && type(duration('1s')) == "
                        "google.protobuf.Duration"));
    refused("has(net.IP) || nets.contains([], [])",
            "ERROR: <input>:1:5: undeclared reference to 'net' (in container '')\n"
            " | has(net.IP) || nets.contains([], [])\n"
            " | ....^\n"
            "ERROR: <input>:1:16: undeclared reference to 'nets' (in container '')\n"
            " | has(net.IP) || nets.contains([], [])\n"
            " | ...............^");
    /* a dotted name is judged by its root; no message type is declared */
    refused("params.spec.x == Foo{a: b}",
            "ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n"
            " | params.spec.x == Foo{a: b}\n"
            " | ^\n"
            "ERROR: <input>:1:21: undeclared reference to 'Foo' (in container '')\n"
            " | params.spec.x == Foo{a: b}\n"
            " | ....................^");
}

static void test_display(void **state)
{
    (void)state;
    /* the line of the error, tabs as spaces, a full-width dot for each
     * character wider than a byte before the caret */
    refused("object ==\n\t'é' == e",
            "ERROR: <input>:2:9: undeclared reference to 'e' (in container '')\n"
            " |  'é' == e\n"
            " | ..．.....^");
    /* a syntax error: the parser's message, the same display */
    char *got = compile("object.");
    assert_non_null(got);
    assert_true(strncmp(got, "ERROR: <input>:1:8: ", 20) == 0);
    assert_non_null(strstr(got, "\n | object.\n | .......^"));
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_declared_and_bound),
        cmocka_unit_test(test_display),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
