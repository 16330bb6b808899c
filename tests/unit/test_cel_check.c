/*
 * test_cel_check.c - cel/check.h where tests/cel/check_test.py (cel-go's
 * checking and conformance tests) does not reach: object types given
 * through the field callback (as the CRD rules' schemas are), Kubernetes'
 * libraries and its environment options, method-call messages, and the
 * variables an expression uses.
 */
#include "cel/check.h"
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

/* An object type "Obj" with fields name (string), replicas (int), tags
 * (list(string)), labels (map(string, string)) and child (Obj). */
static const sk_cel_ty *field(void *ctx, sk_arena *a, const sk_cel_ty *object, const char *name)
{
    (void)ctx;
    if (strcmp(name, "name") == 0)
        return sk_cel_ty_of(SK_CEL_TY_STRING);
    if (strcmp(name, "replicas") == 0)
        return sk_cel_ty_of(SK_CEL_TY_INT);
    if (strcmp(name, "tags") == 0)
        return sk_cel_ty_list(a, sk_cel_ty_of(SK_CEL_TY_STRING));
    if (strcmp(name, "labels") == 0)
        return sk_cel_ty_map(a, sk_cel_ty_of(SK_CEL_TY_STRING), sk_cel_ty_of(SK_CEL_TY_STRING));
    if (strcmp(name, "child") == 0)
        return sk_cel_ty_object(a, "Obj.child", object->data);
    return NULL;
}

/* The type of src (cross: cross-type numeric comparisons on), or its
 * errors; malloc'd. */
static char *check_cross(const char *src, int cross)
{
    sk_arena *a = sk_arena_new();
    static const int tag = 1;
    sk_cel_check_var vars[] = {
        {"self", sk_cel_ty_object(a, "Obj", &tag)},
        {"oldSelf", sk_cel_ty_optional(a, sk_cel_ty_object(a, "Obj", &tag))},
        {"d", sk_cel_ty_of(SK_CEL_TY_DYN)},
    };
    sk_cel_check_env env = {vars, 3, field, NULL, cross, cross, cross};
    sk_cel_parse_options opt = {
        .enable_optional_syntax = 1, .enable_optional_macros = 1, .enable_two_var_macros = 1};
    sk_cel_ast *ast = sk_cel_parse(a, src, strlen(src), &opt);
    const sk_cel_expr *e = sk_cel_ast_expr(ast);
    assert_non_null(e);
    sk_buf out = SK_BUF_INIT;
    sk_cel_checked *c = sk_cel_check(a, e, src, strlen(src), &env, &out);
    if (c) {
        assert_int_equal(out.len, 0);
        sk_cel_ty_format(&out, sk_cel_checked_type(c));
        if (sk_cel_checked_uses(c, "oldSelf"))
            sk_buf_puts(&out, " +oldSelf");
    }
    sk_arena_free(a);
    return sk_buf_steal(&out, NULL);
}

static void typed(const char *src, const char *want)
{
    char *got = check_cross(src, 1);
    assert_string_equal(got, want);
    free(got);
}

static void test_objects(void **state)
{
    (void)state;
    typed("self.name", "string");
    typed("self.child.child.tags", "list(string)");
    typed("self.labels.app", "string");
    typed("self.tags.all(t, t.size() < 10)", "bool");
    typed("self.tags.map(t, t.size())", "list(int)");
    typed("self.tags.exists(i, t, i > 0 && t == '')", "bool");
    typed("self.labels.transformMap(k, v, v + k)", "map(string, string)");
    typed("has(self.name)", "bool");
    typed("self", "Obj");
    typed("d.anything.goes", "dyn");
    typed("oldSelf.hasValue() && oldSelf.value().replicas <= self.replicas", "bool +oldSelf");
    typed("self.?name.orValue('x')", "string");
    typed("oldSelf.?child.name", "optional_type(string) +oldSelf");
    typed("[]", "list(dyn)");
    typed("{}", "map(dyn, dyn)");
    typed("[[1], []]", "list(list(int))");
    typed("self.replicas < 1.5", "bool");
    typed("size(self.tags) + self.replicas", "int");
    typed("type(self.replicas) == int", "bool");
    typed("self.name.matches('^a') ? 1u : 2u", "uint");
}

static void test_kube_libraries(void **state)
{
    (void)state;
    typed("quantity(self.name).isLessThan(quantity('1Gi'))", "bool");
    typed("quantity('1').add(2).asInteger()", "int");
    typed("ip(self.name).family() == 4 && cidr('10.0.0.0/8').containsIP(self.name)", "bool");
    typed("ip.isCanonical(self.name)", "bool");
    typed("url(self.name).getQuery()", "map(string, list(string))");
    typed("self.tags.isSorted() && self.tags.max() == self.tags.min()", "bool");
    typed("sets.contains(self.tags, ['a'])", "bool");
    typed("self.name.find('[0-9]+')", "string");
    typed("self.name.split('/').join('.')", "string");
    typed("format.dns1123Label().validate(self.name)", "optional_type(list(string))");
    typed("optional.of(self.replicas)", "optional_type(int)");
    typed("duration('1s') + timestamp('2020-01-01T00:00:00Z')", "timestamp");
}

static void test_errors(void **state)
{
    (void)state;
    char *got;
    typed("self.nope", "ERROR: <input>:1:5: undefined field 'nope'\n | self.nope\n | ....^");
    typed("self.replicas + self.name",
          "ERROR: <input>:1:15: found no matching overload for '_+_' applied to '(int, string)'\n"
          " | self.replicas + self.name\n"
          " | ..............^");
    typed("self.name.startsWith(1)",
          "ERROR: <input>:1:21: found no matching overload for 'startsWith' applied to "
          "'string.(int)'\n"
          " | self.name.startsWith(1)\n"
          " | ....................^");
    typed("self.name.x", "ERROR: <input>:1:10: type 'string' does not support field selection\n"
                         " | self.name.x\n"
                         " | .........^");
    typed("self.replicas && true", "ERROR: <input>:1:5: expected type 'bool' but found 'int'\n"
                                   " | self.replicas && true\n"
                                   " | ....^");
    typed("nope(self)", "ERROR: <input>:1:5: undeclared reference to 'nope' (in container '')\n"
                        " | nope(self)\n"
                        " | ....^");
    /* at the range */
    typed("self.replicas.all(x, x)",
          "ERROR: <input>:1:5: expression of type 'int' cannot be range of a comprehension "
          "(must be list, map, or dynamic)\n"
          " | self.replicas.all(x, x)\n"
          " | ....^");
    typed("[1, 'a', 2.0]", "ERROR: <input>:1:5: expected type 'int' but found 'string'\n"
                           " | [1, 'a', 2.0]\n"
                           " | ....^");
    typed("{'a': 1, 2: 'b'}", "ERROR: <input>:1:10: expected type 'string' but found 'int'\n"
                              " | {'a': 1, 2: 'b'}\n"
                              " | .........^\n"
                              "ERROR: <input>:1:13: expected type 'int' but found 'string'\n"
                              " | {'a': 1, 2: 'b'}\n"
                              " | ............^");
    /* kube's literal validators */
    typed("duration('1x') > duration('1s')",
          "ERROR: <input>:1:10: invalid duration argument\n | duration('1x') > duration('1s')\n"
          " | .........^");
    typed("timestamp('2020-13-01T00:00:00Z') > timestamp(0)",
          "ERROR: <input>:1:11: invalid timestamp argument\n"
          " | timestamp('2020-13-01T00:00:00Z') > timestamp(0)\n"
          " | ..........^");
    typed("self.name.matches('(') || matches('a', '^a$')",
          "ERROR: <input>:1:19: invalid matches argument\n"
          " | self.name.matches('(') || matches('a', '^a$')\n"
          " | ..................^");
    /* without the options, int < double has no overload and [1, 'a'] is a
     * list(dyn) */
    got = check_cross("[1, 'a']", 0);
    assert_string_equal(got, "list(dyn)");
    free(got);
    got = check_cross("self.replicas < 1.5", 0);
    assert_string_equal(got, "ERROR: <input>:1:15: found no matching overload for '_<_' applied "
                             "to '(int, double)'\n"
                             " | self.replicas < 1.5\n"
                             " | ..............^");
    free(got);
}

/* Free names: a comprehension's variable is seen only in its body; a
 * namespaced function's or library type's name is no variable; a dotted
 * name is judged by its root; no message type is declared. */
static void test_references(void **state)
{
    (void)state;
    typed("d.items.all(i, i.x > 0) && type(d) == map", "bool");
    typed("[1, 2].map(x, [3].map(y, x + y))", "list(list(int))");
    typed("d.?spec.orValue({}) == {}", "bool");
    typed("[x].all(x, true)", "ERROR: <input>:1:2: undeclared reference to 'x' (in container '')\n"
                              " | [x].all(x, true)\n"
                              " | .^");
    typed("d.all(x, true) && x",
          "ERROR: <input>:1:19: undeclared reference to 'x' (in container '')\n"
          " | d.all(x, true) && x\n"
          " | ..................^");
    typed("optional.of(1) != optional.none() && strings.quote('a') != '' && "
          "sets.contains([1], [2]) && ip.isCanonical('::1') && "
          "type(ip('::1')) == net.IP && type(duration('1s')) == google.protobuf.Duration",
          "bool");
    typed("has(net.IP) || nets.contains('a')",
          "ERROR: <input>:1:5: undeclared reference to 'net' (in container '')\n"
          " | has(net.IP) || nets.contains('a')\n"
          " | ....^\n"
          "ERROR: <input>:1:16: undeclared reference to 'nets' (in container '')\n"
          " | has(net.IP) || nets.contains('a')\n"
          " | ...............^");
    typed("params.spec.x == Foo{a: b}",
          "ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n"
          " | params.spec.x == Foo{a: b}\n"
          " | ^\n"
          "ERROR: <input>:1:21: undeclared reference to 'Foo' (in container '')\n"
          " | params.spec.x == Foo{a: b}\n"
          " | ....................^");
    /* the error's own line, tabs as spaces, a full-width dot for each
     * character wider than a byte before the caret */
    typed("d ==\n\t'\xc3\xa9' == e",
          "ERROR: <input>:2:9: undeclared reference to 'e' (in container '')\n"
          " |  '\xc3\xa9' == e\n"
          " | ..\xef\xbc\x8e.....^");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_references),
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_kube_libraries),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
