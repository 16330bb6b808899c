/*
 * test_crdrules.c - CRD x-kubernetes-validations rules (policy/crdrules.h)
 * where the e2e module (tests/e2e/test_crd_rules.py) does not look
 * closely: cel-go's error display, the CRD-side checks of rule fields,
 * property names as kube escapes them, values CEL sees (unknown fields
 * hidden, null fields absent), runtime errors, message expressions that
 * fall back to the message, ratcheting, and both cost bounds.
 */
#include "cel/issues.h"
#include "cel/parse.h"
#include "core/arena.h"
#include "core/buf.h"
#include "kube/validate.h"
#include "policy/crdrules.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *parse(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    if (!j)
        fail_msg("bad JSON in test: %s: %s", err.text, text);
    return j;
}

/* The aggregate message of fe ("" when empty), freed by the caller. */
static char *message(const sk_field_errors *fe)
{
    return sk_field_errors_count(fe) ? sk_field_errors_message(fe) : strdup("");
}

/* Runs the rules of schema on obj (old: an update) and checks the
 * aggregate error message. */
static void expect(const char *schema, const char *obj, const char *old, const char *want)
{
    json_t *s = parse(schema), *o = parse(obj), *was = old ? parse(old) : NULL;
    sk_crdrules *c = sk_crdrules_compile(s);
    assert_non_null(c);
    sk_field_errors *fe = sk_field_errors_new();
    json_t *warnings = json_array();
    sk_crdrules_validate(c, o, was, 1, NULL, fe, warnings);
    char *m = message(fe);
    assert_string_equal(m, want);
    free(m);
    json_decref(warnings);
    sk_field_errors_free(fe);
    sk_crdrules_free(c);
    json_decref(s);
    json_decref(o);
    json_decref(was);
}

static void test_issue_display(void **state)
{
    (void)state;
    sk_arena *a = sk_arena_new();
    const char *src = "'\xc3\xa9t\xc3\xa9' +\t";
    sk_cel_ast *ast = sk_cel_parse(a, src, strlen(src), NULL);
    sk_buf b = SK_BUF_INIT;
    sk_cel_issues_format(&b, src, strlen(src), ast);
    /* the column counts code points; the tab shows as a space; before the
     * caret a '.' for each code point, U+FF0E for a multi-byte one */
    assert_string_equal(
        b.data, "ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' "
                "expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', "
                "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, "
                "IDENTIFIER}\n | '\xc3\xa9t\xc3\xa9' + \n | .\xef\xbc\x8e.\xef\xbc\x8e....^");
    sk_buf_free(&b);
    /* a wide code point under the caret */
    sk_buf_reset(&b);
    sk_cel_issue_format(&b, "x \xc3\xa9", 4, 1, 3, "m");
    assert_string_equal(b.data, "ERROR: <input>:1:3: m\n | x \xc3\xa9\n | ..\xef\xbc\xbe");
    sk_buf_free(&b);
    /* no line: no snippet */
    sk_buf_reset(&b);
    sk_cel_issue_format(&b, "x", 1, -1, 0, "limit");
    assert_string_equal(b.data, "ERROR: <input>:-1:0: limit");
    sk_buf_free(&b);
    sk_arena_free(a);
}

/* sk_crdrules_check_crd on a CRD with schema, its aggregate message. */
static char *check(const char *schema)
{
    json_t *s = parse(schema);
    json_t *crd = json_pack("{s:{s:[{s:s, s:{s:O}}]}}", "spec", "versions", "name", "v1", "schema",
                            "openAPIV3Schema", s);
    sk_field_errors *fe = sk_field_errors_new();
    sk_crdrules_check_crd(crd, NULL, fe);
    char *m = message(fe);
    sk_field_errors_free(fe);
    json_decref(crd);
    json_decref(s);
    return m;
}

#define RULES(...)                                                                                 \
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"          \
    "\"a\":{\"type\":\"integer\"},\"m\":{\"type\":\"object\",\"additionalProperties\":"            \
    "{\"type\":\"string\"}}},\"x-kubernetes-validations\":[" __VA_ARGS__ "]}}}"
#define AT "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations"

static void test_crd_checks(void **state)
{
    (void)state;
    char *m = check(RULES("{\"rule\":\"self.a > 0\\n&& true\"}"));
    assert_string_equal(m, AT "[0].message: Required value: message must be specified if rule "
                              "contains line breaks");
    free(m);
    m = check(RULES("{\"rule\":\"self.a > 0\",\"message\":\"two\\nlines\"}"));
    assert_string_equal(m, AT "[0].message: Invalid value: \"two\\nlines\": message must not "
                              "contain line breaks");
    free(m);
    m = check(RULES("{\"rule\":\"  \"}"));
    assert_string_equal(m, AT "[0].rule: Required value: rule is not specified");
    free(m);
    m = check(RULES("{\"rule\":\"self.a > 0\",\"optionalOldSelf\":true}"));
    assert_string_equal(m, AT "[0].optionalOldSelf: Invalid value: true: may not be set if "
                              "oldSelf is not used in rule");
    free(m);
    /* a comprehension's variables are declared, others not; fieldPaths
     * through map keys are valid */
    m = check(RULES("{\"rule\":\"self.m.all(k, k != '' && y)\",\"fieldPath\":\".m['x.y']\"}"));
    assert_string_equal(m, AT "[0].rule: Invalid value: apiextensions.ValidationRule{"
                              "Rule:\"self.m.all(k, k != '' && y)\", Message:\"\", "
                              "MessageExpression:\"\", Reason:(*apiextensions."
                              "FieldValueErrorReason)(nil), FieldPath:\".m['x.y']\", "
                              "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: "
                              "<input>:1:26: undeclared reference to 'y' (in container '')\n"
                              " | self.m.all(k, k != '' && y)\n | .........................^");
    free(m);
    /* a schema error anywhere below keeps the node's rules from compiling */
    m = check("{\"type\":\"object\",\"x-kubernetes-validations\":[{\"rule\":\"(\"}],"
              "\"properties\":{\"b\":{\"type\":\"string\",\"x-kubernetes-validations\":"
              "[{\"rule\":\"self != ''\",\"reason\":\"Nope\"}]}}}");
    assert_string_equal(m, "spec.versions[0].schema.openAPIV3Schema.properties[b]."
                           "x-kubernetes-validations[0].reason: Unsupported value: \"Nope\": "
                           "supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", "
                           "\"FieldValueInvalid\", \"FieldValueRequired\"");
    free(m);
    /* fields the schema's types do not have: cel-go's checker error at the
     * select; map keys and type-less values are not checked */
    m = check(RULES("{\"rule\":\"self.m.any == '' && self.nope > 0\"}"));
    assert_string_equal(m, AT "[0].rule: Invalid value: apiextensions.ValidationRule{"
                              "Rule:\"self.m.any == '' && self.nope > 0\", Message:\"\", "
                              "MessageExpression:\"\", Reason:(*apiextensions."
                              "FieldValueErrorReason)(nil), FieldPath:\"\", "
                              "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: "
                              "<input>:1:25: undefined field 'nope'\n"
                              " | self.m.any == '' && self.nope > 0\n"
                              " | ........................^");
    free(m);
    /* at the root, metadata has name and generateName only; list items are
     * typed through comprehensions and indexes */
    m = check("{\"type\":\"object\",\"x-kubernetes-validations\":[{\"rule\":"
              "\"self.metadata.name != '' && self.l.all(i, i.x > 0) && self.l[0].y > 0 && "
              "has(self.metadata.labels)\",\"message\":\"m\"}],\"properties\":{\"l\":{"
              "\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"x\":"
              "{\"type\":\"integer\"}}}}}}");
    assert_non_null(strstr(m, "compilation failed: ERROR: <input>:1:64: undefined field 'y'\n"));
    assert_non_null(strstr(m, "\nERROR: <input>:1:77: undefined field 'labels'\n"));
    free(m);
    /* a scalar has no fields */
    m = check(RULES("{\"rule\":\"has(self.a.b)\",\"message\":\"m\"}"));
    assert_non_null(strstr(m, "compilation failed: ERROR: <input>:1:4: type 'int' does not "
                              "support field selection\n | has(self.a.b)\n | ...^"));
    free(m);
    /* an optional oldSelf has no fields of its own: value() has them */
    m = check(RULES("{\"rule\":\"!oldSelf.hasValue() || oldSelf.value().a <= self.a\","
                    "\"optionalOldSelf\":true}"));
    assert_string_equal(m, "");
    free(m);
}

#define OBJ(spec)                                                                                  \
    "{\"apiVersion\":\"g/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"n\","                        \
    "\"labels\":{\"a\":\"b\"}},\"spec\":" spec "}"

static void test_values_as_kube_sees_them(void **state)
{
    (void)state;
    /* escaped names; null fields absent */
    const char *schema =
        "{\"type\":\"object\",\"x-kubernetes-validations\":[{\"rule\":"
        "\"has(self.metadata.name) && self.spec.__namespace__ == 'x' && "
        "self.spec.a__dash__b == 1 && !has(self.spec.c)\"}],"
        "\"properties\":{\"spec\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":"
        "true,\"properties\":{\"namespace\":{\"type\":\"string\"},\"a-b\":{\"type\":\"integer\"},"
        "\"c\":{\"type\":\"string\",\"nullable\":true}}}}}";
    expect(schema, OBJ("{\"namespace\":\"x\",\"a-b\":1,\"c\":null,\"other\":1}"), NULL, "");
    expect(schema, OBJ("{\"namespace\":\"y\",\"a-b\":1}"), NULL,
           "<nil>: Invalid value: \"object\": failed rule: has(self.metadata.name) && "
           "self.spec.__namespace__ == 'x' && self.spec.a__dash__b == 1 && !has(self.spec.c)");
    /* a field without a CEL type (no type, unknown fields kept): kube
     * leaves it and the rules below it out of CEL validation */
    expect("{\"type\":\"object\",\"properties\":{\"spec\":{\"x-kubernetes-preserve-unknown-"
           "fields\":true,\"properties\":{\"a\":{\"type\":\"integer\","
           "\"x-kubernetes-validations\":[{\"rule\":\"self > 5\"}]}}}}}",
           OBJ("{\"a\":1}"), NULL, "");
    /* runtime errors in kube's words */
    const char *rt = "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
                     "\"properties\":{\"a\":{\"type\":\"integer\"}},\"x-kubernetes-validations\":"
                     "[{\"rule\":\"self.a > 0\",\"message\":\"positive\"}]}}}";
    expect(rt, OBJ("{}"), NULL,
           "spec: Invalid value: \"object\": no such key: a evaluating rule: positive");
}

/* optionalOldSelf: the rule runs on a create too, oldSelf an optional
 * (none without an old value), as kube 1.32 runs it. */
static void test_optional_old_self(void **state)
{
    (void)state;
    const char *schema =
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":"
        "{\"a\":{\"type\":\"integer\"}},\"x-kubernetes-validations\":["
        "{\"rule\":\"oldSelf.hasValue() ? oldSelf.value().a <= self.a : self.a == 1\","
        "\"message\":\"starts at 1, never decreases\",\"optionalOldSelf\":true},"
        "{\"rule\":\"self.a < oldSelf.a + 10\",\"message\":\"small steps\"}]}}}";
    expect(schema, OBJ("{\"a\":1}"), NULL, "");
    expect(schema, OBJ("{\"a\":2}"), NULL,
           "spec: Invalid value: \"object\": starts at 1, never decreases");
    expect(schema, OBJ("{\"a\":5}"), OBJ("{\"a\":3}"), "");
    expect(schema, OBJ("{\"a\":2}"), OBJ("{\"a\":3}"),
           "spec: Invalid value: \"object\": starts at 1, never decreases");
    expect(schema, OBJ("{\"a\":30}"), OBJ("{\"a\":3}"),
           "spec: Invalid value: \"object\": small steps");
}

static void test_stored_rule_that_does_not_compile(void **state)
{
    (void)state;
    /* a rule kube's CRD validation would refuse now, stored before */
    expect("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
           "\"x-kubernetes-validations\":[{\"rule\":\"1\"}]}}}",
           OBJ("{}"), NULL,
           "spec: Invalid value: \"object\": rule compile error: cel expression must evaluate "
           "to a bool");
}

static void test_format_library_enforced(void **state)
{
    (void)state;
    /* the format library runs (policy/formats.h): its failed rule refuses
     * the object, as a core rule's runtime error does */
    json_t *s = parse("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
                      "\"properties\":{\"a\":{\"type\":\"string\"}},"
                      "\"x-kubernetes-validations\":[{\"rule\":"
                      "\"!format.dns1123Label().validate(self.a).hasValue()\"},"
                      "{\"rule\":\"int(self.a) == 1\"}]}}}");
    sk_crdrules *c = sk_crdrules_compile(s);
    json_t *obj = parse(OBJ("{\"a\":\"X_\"}"));
    sk_field_errors *fe = sk_field_errors_new();
    json_t *w = json_array();
    sk_crdrules_validate(c, obj, NULL, 0, NULL, fe, w);
    assert_int_equal(json_array_size(w), 0);
    char *m = message(fe);
    assert_string_equal(m, "[spec: Invalid value: \"object\": failed rule: "
                           "!format.dns1123Label().validate(self.a).hasValue(), spec: Invalid "
                           "value: \"object\": type conversion error from 'string' to 'int' "
                           "evaluating rule: int(self.a) == 1]");
    free(m);
    sk_field_errors_free(fe);
    json_decref(w);
    json_decref(obj);
    sk_crdrules_free(c);
    json_decref(s);
}

static void test_message_expression_falls_back(void **state)
{
    (void)state;
    const char *schema =
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":"
        "{\"a\":{\"type\":\"integer\"}},\"x-kubernetes-validations\":["
        "{\"rule\":\"self.a > 0\",\"messageExpression\":\"'  '\"},"
        "{\"rule\":\"self.a > 1\",\"message\":\"m\",\"messageExpression\":\"'a\\\\nb'\"},"
        "{\"rule\":\"self.a > 2\",\"messageExpression\":\"'  a is ' + string(self.a) + ' '\"}"
        "]}}}";
    expect(schema, OBJ("{\"a\":0}"), NULL,
           "[spec: Invalid value: \"object\": failed rule: self.a > 0, spec: Invalid value: "
           "\"object\": m, spec: Invalid value: \"object\": a is 0]");
}

static void test_ratcheting(void **state)
{
    (void)state;
    const char *schema =
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
        "\"a\":{\"type\":\"integer\",\"x-kubernetes-validations\":[{\"rule\":\"self > 5\"}]},"
        "\"b\":{\"type\":\"integer\"}}}}}";
    json_t *s = parse(schema);
    sk_crdrules *c = sk_crdrules_compile(s);
    json_t *old = parse(OBJ("{\"a\":1,\"b\":1}")), *now = parse(OBJ("{\"a\":1,\"b\":2}"));
    sk_field_errors *fe = sk_field_errors_new();
    json_t *w = json_array();
    sk_crdrules_validate(c, now, old, 1, NULL, fe, w);
    assert_int_equal(sk_field_errors_count(fe), 0);
    assert_int_equal(json_array_size(w), 1);
    assert_string_equal(json_string_value(json_array_get(w, 0)),
                        "spec.a: Invalid value: \"integer\": failed rule: self > 5");
    /* no ratcheting (a status write): the error stands */
    sk_crdrules_validate(c, now, old, 0, NULL, fe, w);
    assert_int_equal(sk_field_errors_count(fe), 1);
    sk_field_errors_free(fe);
    json_decref(w);
    json_decref(old);
    json_decref(now);
    sk_crdrules_free(c);
    json_decref(s);
}

static void test_cost_bounds(void **state)
{
    (void)state;
    const char *schema =
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
        "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"x-kubernetes-validations\":"
        "[{\"rule\":\"self >= 0\"}]}}},\"x-kubernetes-validations\":["
        "{\"rule\":\"self.l.all(x, self.l.all(y, x + y >= 0))\"}]}}}";
    json_t *s = parse(schema);
    sk_crdrules *c = sk_crdrules_compile(s);
    json_t *obj = json_pack("{s:{s:[]}}", "spec", "l");
    json_t *l = json_object_get(json_object_get(obj, "spec"), "l");
    for (int i = 0; i < 100; i++)
        json_array_append_new(l, json_integer(i));
    /* the per-call limit stops the quadratic rule, and every rule after */
    sk_crdrules_limits lim = {.per_call = 1000};
    sk_field_errors *fe = sk_field_errors_new();
    json_t *w = json_array();
    sk_crdrules_validate(c, obj, NULL, 0, &lim, fe, w);
    char *m = message(fe);
    assert_string_equal(m, "spec: Invalid value: \"object\": 'operation cancelled: actual cost "
                           "limit exceeded': no further validation rules will be run due to "
                           "call cost exceeds limit for rule: self.l.all(x, self.l.all(y, x + "
                           "y >= 0))");
    free(m);
    sk_field_errors_free(fe);
    /* kube compares the cost (1,001 when the limit stopped it) with what
     * is left of the budget before it looks at the error: with a budget
     * of 1,000 that is the budget's message */
    lim = (sk_crdrules_limits){.per_call = 1000, .per_object = 1000};
    fe = sk_field_errors_new();
    sk_crdrules_validate(c, obj, NULL, 0, &lim, fe, w);
    m = message(fe);
    assert_string_equal(m, "spec: Invalid value: \"object\": validation failed due to running "
                           "out of cost budget, no further validation rules will be run");
    free(m);
    sk_field_errors_free(fe);
    /* the object's budget runs out among the items' rules */
    lim = (sk_crdrules_limits){.per_call = 100000, .per_object = 50000};
    fe = sk_field_errors_new();
    sk_crdrules_validate(c, obj, NULL, 0, &lim, fe, w);
    m = message(fe);
    assert_non_null(strstr(m, ": validation failed due to running "
                              "out of cost budget, no further validation rules will be run"));
    assert_int_equal(sk_field_errors_count(fe), 1);
    free(m);
    sk_field_errors_free(fe);
    json_decref(w);
    json_decref(obj);
    sk_crdrules_free(c);
    json_decref(s);
}

/* sk_crdrules_check_crd of a one-version CRD with schema s over the
 * stored CRD of schema old_s (NULL: a create). */
static char *check_update(json_t *s, json_t *old_s)
{
    json_t *crd = json_pack("{s:{s:[{s:s, s:{s:O}}]}}", "spec", "versions", "name", "v1", "schema",
                            "openAPIV3Schema", s);
    json_t *old = old_s ? json_pack("{s:{s:[{s:s, s:{s:O}}]}}", "spec", "versions", "name", "v1",
                                    "schema", "openAPIV3Schema", old_s)
                        : NULL;
    sk_field_errors *fe = sk_field_errors_new();
    sk_crdrules_check_crd(crd, old, fe);
    char *m = message(fe);
    sk_field_errors_free(fe);
    json_decref(crd);
    json_decref(old);
    return m;
}

static void test_static_cost_spared_when_unchanged(void **state)
{
    (void)state;
    /* kube's O(n^2) case: 3N^2+5N+2 = 25,001,420 for N = 2886 */
    const char *text = "{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
                       "\"maxItems\":2886,\"items\":{\"type\":\"integer\"},"
                       "\"x-kubernetes-validations\":[{\"rule\":"
                       "\"self.all(x, self.all(y, true))\"}]}}}";
    const char *refused =
        "spec.versions[0].schema.openAPIV3Schema.properties[l].x-kubernetes-validations[0].rule: "
        "Forbidden: estimated rule cost exceeds budget by factor of 2.5x (try simplifying the "
        "rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings "
        "are declared)";
    json_t *s = parse(text), *changed = parse(text);
    json_object_set_new(changed, "description", json_string("changed"));
    char *m = check_update(s, NULL);
    assert_string_equal(m, refused);
    free(m);
    /* stored before with this schema: an update leaving it be is spared */
    m = check_update(s, s);
    assert_string_equal(m, "");
    free(m);
    m = check_update(changed, s);
    assert_string_equal(m, refused);
    free(m);
    json_decref(s);
    json_decref(changed);
}

static void test_new_and_stored_expressions(void **state)
{
    (void)state;
    /* a two-variable comprehension (1.32) is refused in a new expression
     * (kube 1.32 checks those in 1.31's environment) and accepted in one
     * the stored CRD already has, where both names are declared */
    json_t *s = parse("{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"object\","
                      "\"maxProperties\":10,\"additionalProperties\":{\"type\":\"string\","
                      "\"maxLength\":10}}},\"x-kubernetes-validations\":[{\"rule\":"
                      "\"!has(self.m) || self.m.all(k, v, k != v)\"}]}");
    char *m = check_update(s, NULL);
    assert_non_null(strstr(m, "compilation failed: ERROR: <input>:1:27: undeclared reference to "
                              "'all' (in container '')"));
    free(m);
    m = check_update(s, s);
    assert_string_equal(m, "");
    free(m);
    json_decref(s);
    /* and a stored one runs */
    const char *schema =
        "{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"object\","
        "\"additionalProperties\":{\"type\":\"string\"}}},\"x-kubernetes-validations\":[{"
        "\"rule\":\"!has(self.m) || self.m.all(k, v, k != v)\"}]}";
    expect(schema, "{\"m\":{\"a\":\"b\"}}", NULL, "");
    expect(schema, "{\"m\":{\"a\":\"a\"}}", NULL,
           "<nil>: Invalid value: \"object\": failed rule: !has(self.m) || "
           "self.m.all(k, v, k != v)");
}

static void test_type_names(void **state)
{
    (void)state;
    /* kube's MaybeAssignTypeName: selfType<n> (a fixed n here), fields
     * after their parent, a list's items ".@idx", a map's values ".@elem" */
    char *m = check("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
                    "\"maxItems\":4,\"items\":{\"type\":\"object\",\"properties\":{\"m\":{"
                    "\"type\":\"object\",\"maxProperties\":4,\"additionalProperties\":{\"type\":"
                    "\"object\"}}}}}},\"x-kubernetes-validations\":[{\"rule\":"
                    "\"self.l[0].m['k'] == self.l[0]\"}]}");
    assert_non_null(strstr(m, "found no matching overload for '_==_' applied to "
                              "'(selfType0.l.@idx.m.@elem, selfType0.l.@idx)'"));
    free(m);
}

static void test_string_formats_as_kube_sees_them(void **state)
{
    (void)state;
    /* values.go: a date-time or date is a timestamp, a duration a
     * duration, a byte string its bytes; a form this server does not parse
     * stays a string (and a rule needing the typed value is a gap) */
    const char *schema =
        "{\"type\":\"object\",\"properties\":{\"t\":{\"type\":\"string\",\"format\":"
        "\"date-time\"},\"d\":{\"type\":\"string\",\"format\":\"duration\"},\"day\":{"
        "\"type\":\"string\",\"format\":\"date\"},\"b\":{\"type\":\"string\",\"format\":"
        "\"byte\"}},\"x-kubernetes-validations\":[{\"rule\":\"!has(self.t) || self.t > "
        "timestamp('2020-01-01T00:00:00Z')\",\"message\":\"t\"},{\"rule\":\"!has(self.d) || "
        "self.d > duration('1h')\",\"message\":\"d\"},{\"rule\":\"!has(self.day) || "
        "self.day.getFullYear() == 2024\",\"message\":\"day\"},{\"rule\":\"!has(self.b) || "
        "size(self.b) == 3\",\"message\":\"b\"}]}";
    expect(schema,
           "{\"t\":\"2021-06-01T10:00:00.5+02:00\",\"d\":\"90m\",\"day\":\"2024-02-29\","
           "\"b\":\"YWJj\"}",
           NULL, "");
    expect(schema,
           "{\"t\":\"2019-06-01T10:00:00Z\",\"d\":\"59m\",\"day\":\"2023-02-28\","
           "\"b\":\"YWJjZA==\"}",
           NULL,
           "[<nil>: Invalid value: \"object\": t, <nil>: Invalid value: \"object\": d, <nil>: "
           "Invalid value: \"object\": day, <nil>: Invalid value: \"object\": b]");
    /* strfmt's "1d" is no Go duration: not refused here (a warning) */
    expect(schema, "{\"d\":\"1d\"}", NULL, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_display),
        cmocka_unit_test(test_crd_checks),
        cmocka_unit_test(test_values_as_kube_sees_them),
        cmocka_unit_test(test_optional_old_self),
        cmocka_unit_test(test_stored_rule_that_does_not_compile),
        cmocka_unit_test(test_format_library_enforced),
        cmocka_unit_test(test_message_expression_falls_back),
        cmocka_unit_test(test_ratcheting),
        cmocka_unit_test(test_cost_bounds),
        cmocka_unit_test(test_static_cost_spared_when_unchanged),
        cmocka_unit_test(test_new_and_stored_expressions),
        cmocka_unit_test(test_type_names),
        cmocka_unit_test(test_string_formats_as_kube_sees_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
