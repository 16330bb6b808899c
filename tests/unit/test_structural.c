/*
 * test_structural.c - CRD schema compile checks, defaulting, pruning and
 * custom-resource validation with kube-apiserver 1.32's paths and messages
 * (the expected strings are kube's, from apiextensions-apiserver's and
 * kube-openapi's formats).
 */
#include "kube/structural.h"
#include "kube/validate.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define P "spec.versions[0].schema.openAPIV3Schema"

static json_t *load(const char *s)
{
    json_error_t err;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &err);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, err.text);
    return v;
}

/* Compiles schema: NULL if it compiles, else the aggregate message (new). */
static char *compile_msg(const char *schema)
{
    json_t *sch = load(schema);
    sk_field_errors *fe = sk_field_errors_new();
    sk_structural *s = NULL;
    char *msg = NULL;
    sk_err e = sk_structural_compile(sch, P, fe, &s);
    if (e == SK_OK) {
        assert_non_null(s);
        assert_int_equal(sk_field_errors_count(fe), 0);
    } else {
        assert_int_equal(e, SK_ERR_INVALID);
        assert_null(s);
        msg = sk_field_errors_message(fe);
    }
    sk_structural_free(s);
    sk_field_errors_free(fe);
    json_decref(sch);
    return msg;
}

static void compiles(const char *schema)
{
    char *msg = compile_msg(schema);
    if (msg)
        fail_msg("schema %s: %s", schema, msg);
}

static void rejects(const char *schema, const char *want)
{
    char *msg = compile_msg(schema);
    if (!msg)
        fail_msg("schema %s compiled", schema);
    assert_string_equal(msg, want);
    free(msg);
}

static sk_structural *compile_ok(const char *schema)
{
    json_t *sch = load(schema);
    sk_field_errors *fe = sk_field_errors_new();
    sk_structural *s = NULL;
    if (sk_structural_compile(sch, P, fe, &s) != SK_OK) {
        char *m = sk_field_errors_message(fe);
        fail_msg("schema %s: %s", schema, m);
    }
    sk_field_errors_free(fe);
    json_decref(sch);
    return s;
}

/* Validates obj as given (no defaulting or pruning): NULL or the message. */
static char *validate_msg(const char *schema, const char *obj)
{
    sk_structural *s = compile_ok(schema);
    json_t *o = load(obj);
    sk_field_errors *fe = sk_field_errors_new();
    sk_structural_validate(s, o, fe);
    char *msg = sk_field_errors_count(fe) ? sk_field_errors_message(fe) : NULL;
    sk_field_errors_free(fe);
    json_decref(o);
    sk_structural_free(s);
    return msg;
}

static void valid(const char *schema, const char *obj)
{
    char *msg = validate_msg(schema, obj);
    if (msg)
        fail_msg("%s against %s: %s", obj, schema, msg);
}

static void invalid(const char *schema, const char *obj, const char *want)
{
    char *msg = validate_msg(schema, obj);
    if (!msg)
        fail_msg("%s against %s: valid", obj, schema);
    assert_string_equal(msg, want);
    free(msg);
}

/* obj against schema yields exactly the errors want (NULL-ended), in any
 * order: kube's own tests compare them as sets. */
static void invalid_set(const char *schema, const char *obj, const char *const *want)
{
    sk_structural *s = compile_ok(schema);
    json_t *o = load(obj);
    sk_field_errors *fe = sk_field_errors_new();
    sk_structural_validate(s, o, fe);
    const json_t *causes = sk_field_errors_causes(fe);
    size_t n = 0, i;
    const json_t *c;
    while (want[n])
        n++;
    json_array_foreach(causes, i, c)
    {
        char got[1024];
        size_t j;
        snprintf(got, sizeof got, "%s: %s", json_string_value(json_object_get(c, "field")),
                 json_string_value(json_object_get(c, "message")));
        for (j = 0; j < n && strcmp(want[j], got); j++)
            ;
        if (j == n)
            fail_msg("unexpected error for %s: %s", obj, got);
    }
    assert_int_equal(json_array_size(causes), n);
    sk_field_errors_free(fe);
    json_decref(o);
    sk_structural_free(s);
}

/* A root schema with spec's properties given. */
#define SPEC(props)                                                                                \
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{" props    \
    "}}}}"

/* ---- compile ----------------------------------------------------------- */

static void test_structural_types(void **state)
{
    (void)state;
    rejects("{\"properties\":{\"spec\":{\"type\":\"object\"}}}",
            P ".type: Required value: must not be empty at the root");
    rejects(
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"properties\":{\"a\":{\"type\":\"string\"}"
        "}}}}",
        P ".properties[spec].type: Required value: must not be empty for specified object fields");
    rejects(SPEC("\"l\":{\"type\":\"array\",\"items\":{}}"),
            P ".properties[spec].properties[l].items.type: Required value: must not be empty for "
              "specified array items");
    rejects(SPEC("\"l\":{\"type\":\"array\"}"),
            P ".properties[spec].properties[l].items: Required value: must be specified");
    rejects("{\"type\":\"string\"}",
            P ".type: Invalid value: \"string\": must be object at the root");
    rejects(SPEC("\"a\":{\"type\":\"date\"}"), P
            ".properties[spec].properties[a].type: Unsupported value: \"date\": supported values: "
            "\"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"");
    /* Two errors: sorted structural ones come first. */
    rejects("{\"properties\":{\"a\":{}}}",
            "[" P
            ".properties[a].type: Required value: must not be empty for specified object fields, " P
            ".type: Required value: must not be empty at the root]");
    /* Unknown fields may be kept instead of typed. */
    compiles(SPEC("\"any\":{\"x-kubernetes-preserve-unknown-fields\":true}"));
    compiles(SPEC("\"port\":{\"x-kubernetes-int-or-string\":true}"));
}

static void test_forbidden_fields(void **state)
{
    (void)state;
    rejects(SPEC("\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"uniqueItems\":true}"),
            P
            ".properties[spec].properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to "
            "true since the runtime complexity becomes quadratic");
    rejects(SPEC("\"m\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},"
                 "\"additionalProperties\":{\"type\":\"string\"}}"),
            P
            ".properties[spec].properties[m].additionalProperties: Forbidden: additionalProperties "
            "and properties are mutual exclusive");
    rejects("{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}",
            P ".additionalProperties: Forbidden: must not be used at the root");
    rejects(SPEC("\"r\":{\"$ref\":\"#/x\",\"type\":\"string\"}"),
            P ".properties[spec].properties[r].$ref: Forbidden: $ref is not supported");
    rejects("{\"type\":\"object\",\"nullable\":true}",
            P ".nullable: Forbidden: nullable cannot be true at the root");
    rejects(SPEC("\"x\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":false}"), P
            ".properties[spec].properties[x].x-kubernetes-preserve-unknown-fields: Invalid value: "
            "false: must be true or undefined");
    rejects(
        SPEC("\"n\":{\"type\":\"string\",\"anyOf\":[{\"type\":\"string\"}]}"), P
        ".properties[spec].properties[n].anyOf[0].type: Forbidden: must be empty to be structural");
    rejects(SPEC("\"n\":{\"type\":\"object\",\"allOf\":[{\"properties\":{\"metadata\":{}}}]}"),
            P ".properties[spec].properties[n].allOf[0].properties[metadata]: Forbidden: must not "
              "be specified in a nested context");
    /* Completeness is checked for the root's allOf/anyOf/oneOf/not only, as kube does. */
    rejects("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"allOf\":[{"
            "\"properties\":"
            "{\"b\":{\"minLength\":1}}}]}",
            P ".properties[b]: Required value: because it is defined in " P
              ".allOf[0].properties[b]");
    /* The int-or-string idiom is structural. */
    compiles(SPEC("\"p\":{\"x-kubernetes-int-or-string\":true,\"anyOf\":[{\"type\":\"integer\"},"
                  "{\"type\":\"string\"}]}"));
    rejects(
        SPEC("\"p\":{\"type\":\"string\",\"pattern\":\"(\"}"),
        P ".properties[spec].properties[p].pattern: Invalid value: \"(\": must be a valid regular "
          "expression, but isn't: error parsing regexp: missing closing ): `(`");
    rejects("{\"type\":\"object\",\"properties\":{\"spec\":5}}",
            P ".properties[spec]: Invalid value: 5: must be a JSON schema object");
    /* Each keyword's JSON type is JSONSchemaProps' field type, nested
     * schemas included (through lists, maps and the hand-decoded unions). */
    rejects(SPEC("\"p\":{\"type\":\"string\",\"maxLength\":\"x\"}"),
            P ".properties[spec].properties[p].maxLength: Invalid value: \"x\": must be an integer");
    rejects(SPEC("\"p\":{\"type\":\"number\",\"maximum\":true}"),
            P ".properties[spec].properties[p].maximum: Invalid value: true: must be a number");
    rejects(SPEC("\"p\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"nullable\":1}}"),
            P ".properties[spec].properties[p].items.nullable: Invalid value: 1: must be a boolean");
    rejects(SPEC("\"p\":{\"type\":\"object\",\"additionalProperties\":{\"format\":2}}"),
            P ".properties[spec].properties[p].additionalProperties.format: Invalid value: 2: "
              "must be a string");
    rejects(SPEC("\"p\":{\"type\":\"array\",\"x-kubernetes-list-map-keys\":[1]}"),
            P ".properties[spec].properties[p].x-kubernetes-list-map-keys: Invalid value: []interface {}{1}: "
              "must be a list of strings");
    rejects(SPEC("\"p\":{\"type\":\"object\",\"dependencies\":{\"a\":[\"b\",1]}}"),
            P ".properties[spec].properties[p].dependencies[a]: Invalid value: []interface {}{\"b\", 1}: "
              "must be a schema or a list of strings");
    rejects(SPEC("\"p\":{\"type\":\"string\",\"externalDocs\":\"u\"}"),
            P ".properties[spec].properties[p].externalDocs: Invalid value: \"u\": must be an object");
}

static void test_metadata(void **state)
{
    (void)state;
    compiles(
        "{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":\"object\",\"properties\":"
        "{\"name\":{\"type\":\"string\",\"maxLength\":10}}}}}");
    rejects("{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":\"object\",\"properties\":"
            "{\"labels\":{\"type\":\"object\"}}}}}",
            P ".properties[metadata]: Forbidden: must not specify anything other than name and "
              "generateName, but metadata is implicitly specified");
    rejects("{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":\"string\"}}}",
            P ".properties[metadata].type: Invalid value: \"string\": must be object");
    rejects(
        "{\"type\":\"object\",\"properties\":{\"metadata\":{\"type\":\"object\",\"default\":{}}}}",
        P ".properties[metadata].default: Forbidden: must not be set in top-level metadata");
    rejects("{\"type\":\"object\",\"properties\":{\"kind\":{\"type\":\"integer\"}}}",
            P ".properties[kind].type: Invalid value: \"integer\": must be string");
    rejects(SPEC("\"t\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true}"), P
            ".properties[spec].properties[t].properties: Required value: must not be empty if "
            "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields");
    rejects(SPEC("\"t\":{\"x-kubernetes-embedded-resource\":true,\"x-kubernetes-preserve-unknown-"
                 "fields\":true}"),
            P ".properties[spec].properties[t].type: Required value: must be object if "
              "x-kubernetes-embedded-resource is true");
    compiles(SPEC("\"t\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
                  "\"x-kubernetes-preserve-unknown-fields\":true}"));
}

static void test_defaults(void **state)
{
    (void)state;
    rejects(
        SPEC("\"r\":{\"type\":\"integer\",\"default\":\"x\"}"),
        P ".properties[spec].properties[r].default: Invalid value: \"string\":  in body must be of "
          "type integer: \"string\"");
    rejects(SPEC("\"r\":{\"type\":\"integer\",\"maximum\":3,\"default\":5}"),
            P ".properties[spec].properties[r].default: Invalid value: 5:  in body should be less "
              "than or equal to 3");
    rejects(SPEC("\"o\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},"
                 "\"default\":{\"a\":\"x\",\"b\":1}}"),
            P ".properties[spec].properties[o].default: Invalid value: map[string]interface "
              "{}{\"a\":\"x\", \"b\":1}: must not have unknown fields");
    rejects(
        SPEC("\"o\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"enum\":["
             "\"x\"]}},"
             "\"default\":{\"a\":\"y\"}}"),
        P ".properties[spec].properties[o].default.a: Unsupported value: \"y\": supported values: "
          "\"x\"");
    compiles(SPEC("\"r\":{\"type\":\"integer\",\"default\":3},\"o\":{\"type\":\"object\","
                  "\"properties\":{\"a\":{\"type\":\"string\"}},\"default\":{\"a\":\"x\"}}"));
}

/* Defaults inside an embedded resource's TypeMeta and ObjectMeta must make
 * valid metadata (kube's CRD validation tests, versions v3 and v4). */
static void test_defaults_in_meta(void **state)
{
    (void)state;
    rejects(
        "{\"type\":\"object\",\"properties\":{\"e\":{\"type\":\"object\","
        "\"x-kubernetes-embedded-resource\":true,\"properties\":{\"kind\":{\"type\":\"string\","
        "\"default\":\"Pod\"},\"metadata\":{\"type\":\"object\",\"default\":{\"labels\":"
        "{\"bar\":\"x y\"}}}}}}}",
        P ".properties[e].properties[metadata].default: Invalid value: map[string]interface "
          "{}{\"labels\":map[string]interface {}{\"bar\":\"x y\"}}: must result in valid metadata: "
          "metadata.labels: Invalid value: \"x y\": a valid label must be an empty string or "
          "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
          "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
          "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
    rejects(
        "{\"type\":\"object\",\"properties\":{\"e\":{\"type\":\"object\","
        "\"x-kubernetes-embedded-resource\":true,\"properties\":{\"metadata\":{\"type\":"
        "\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"default\":42}}}}}}}",
        P ".properties[e].properties[metadata].properties[name].default: Invalid value: 42: must "
          "result in valid metadata: metadata: Invalid value: map[string]interface "
          "{}{\"name\":42}: json: cannot unmarshal number into Go struct field ObjectMeta.name of "
          "type string");
    compiles("{\"type\":\"object\",\"properties\":{\"e\":{\"type\":\"object\","
             "\"x-kubernetes-embedded-resource\":true,\"properties\":{\"apiVersion\":{\"type\":"
             "\"string\",\"default\":\"v1\"},\"metadata\":{\"type\":\"object\",\"properties\":"
             "{\"name\":{\"type\":\"string\",\"default\":\"foo\"}}}}}}}");
}

static void test_list_types(void **state)
{
    (void)state;
    rejects(SPEC("\"l\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"bag\",\"items\":{\"type\":"
                 "\"string\"}}"),
            P ".properties[spec].properties[l].x-kubernetes-list-type: Unsupported value: \"bag\": "
              "supported values: \"atomic\", \"set\", \"map\"");
    rejects(
        SPEC(
            "\"l\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\",\"items\":{\"type\":"
            "\"object\",\"required\":[\"name\"],\"properties\":{\"name\":{\"type\":\"string\"}}}}"),
        P ".properties[spec].properties[l].x-kubernetes-list-map-keys: Required value: must not be "
          "empty if x-kubernetes-list-type is map");
    rejects(SPEC("\"l\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-"
                 "map-keys\":"
                 "[\"id\"],\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
                 "\"string\"}}}}"),
            P ".properties[spec].properties[l].x-kubernetes-list-map-keys: Invalid value: "
              "[]string{\"id\"}: entries must all be names of item properties");
    rejects(SPEC("\"l\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-"
                 "map-keys\":"
                 "[\"name\"],\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
                 "\"string\"}}}}"),
            P
            ".properties[spec].properties[l].items.properties[name].default: Required value: this "
            "property is in x-kubernetes-list-map-keys, so it must have a default or be a required "
            "property");
    rejects(SPEC("\"l\":{\"type\":\"object\",\"x-kubernetes-list-type\":\"set\"}"),
            P ".properties[spec].properties[l].type: Invalid value: \"object\": must be array if "
              "x-kubernetes-list-type is specified");
    rejects(SPEC("\"m\":{\"type\":\"object\",\"x-kubernetes-map-type\":\"merge\"}"), P
            ".properties[spec].properties[m].x-kubernetes-map-type: Unsupported value: \"merge\": "
            "supported values: \"atomic\", \"granular\"");
}

static void test_status_root(void **state)
{
    (void)state;
    json_t *ok = load("{\"type\":\"object\",\"description\":\"d\",\"properties\":{}}");
    json_t *bad_type = load("{\"type\":\"array\",\"items\":{\"type\":\"string\"}}");
    json_t *bad_field = load("{\"type\":\"object\",\"anyOf\":[{\"required\":[\"a\"]}]}");
    sk_field_errors *fe = sk_field_errors_new();
    sk_structural_check_status_root(ok, P, fe);
    assert_int_equal(sk_field_errors_count(fe), 0);
    sk_structural_check_status_root(bad_type, P, fe);
    char *msg = sk_field_errors_message(fe);
    assert_string_equal(msg,
                        P ".type: Invalid value: \"array\": only \"object\" is allowed as the type "
                          "at the root of the schema if the status subresource is enabled");
    free(msg);
    sk_field_errors_free(fe);
    fe = sk_field_errors_new();
    sk_structural_check_status_root(bad_field, P, fe);
    msg = sk_field_errors_message(fe);
    assert_non_null(strstr(msg, "fields are allowed at the root of the schema if the status "
                                "subresource is enabled"));
    assert_int_equal(strncmp(msg, P ": Invalid value: ", strlen(P ": Invalid value: ")), 0);
    free(msg);
    sk_field_errors_free(fe);
    json_decref(ok);
    json_decref(bad_type);
    json_decref(bad_field);
}

/* ---- value validation -------------------------------------------------- */

static void test_value_types(void **state)
{
    (void)state;
    const char *sch = SPEC("\"replicas\":{\"type\":\"integer\"},\"ratio\":{\"type\":\"number\"},"
                           "\"on\":{\"type\":\"boolean\"},\"o\":{\"type\":\"object\"},"
                           "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}");
    valid(sch, "{\"spec\":{\"replicas\":3,\"ratio\":1,\"on\":true,\"o\":{},\"l\":[\"a\"]}}");
    valid(sch, "{\"spec\":{\"replicas\":3.0}}");
    invalid(
        sch, "{\"spec\":{\"replicas\":\"3\"}}",
        "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: "
        "\"string\"");
    invalid(
        sch, "{\"spec\":{\"replicas\":1.5}}",
        "spec.replicas: Invalid value: \"number\": spec.replicas in body must be of type integer: "
        "\"number\"");
    invalid(sch, "{\"spec\":{\"l\":[\"a\",1]}}",
            "spec.l[1]: Invalid value: \"integer\": spec.l[1] in body must be of type string: "
            "\"integer\"");
    invalid(sch, "{\"spec\":{\"o\":null}}",
            "spec.o: Invalid value: \"null\": spec.o in body must be of type object: \"null\"");
    invalid(
        sch, "{\"spec\":{\"on\":\"yes\",\"ratio\":\"x\"}}",
        "[spec.ratio: Invalid value: \"string\": spec.ratio in body must be of type number: "
        "\"string\", spec.on: Invalid value: \"string\": spec.on in body must be of type boolean: "
        "\"string\"]");
    valid(SPEC("\"o\":{\"type\":\"object\",\"nullable\":true}"), "{\"spec\":{\"o\":null}}");
    const char *ios = SPEC("\"p\":{\"x-kubernetes-int-or-string\":true}");
    valid(ios, "{\"spec\":{\"p\":80}}");
    valid(ios, "{\"spec\":{\"p\":\"50%\"}}");
    invalid(ios, "{\"spec\":{\"p\":true}}",
            "spec.p: Invalid value: \"boolean\": spec.p in body must be of type integer,string: "
            "\"boolean\"");
}

static void test_value_constraints(void **state)
{
    (void)state;
    const char *sch =
        SPEC("\"replicas\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10,\"multipleOf\":1},"
             "\"f\":{\"type\":\"number\",\"maximum\":1.5,\"exclusiveMinimum\":true,\"minimum\":0},"
             "\"n\":{\"type\":\"integer\",\"multipleOf\":5},"
             "\"name\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":3},"
             "\"color\":{\"type\":\"string\",\"enum\":[\"red\",\"blue\"]},"
             "\"num\":{\"type\":\"integer\",\"enum\":[1,2]},"
             "\"s\":{\"type\":\"string\",\"pattern\":\"^[a-z]+$\"},"
             "\"host\":{\"type\":\"string\",\"pattern\":\"^[a-z0-9\\\\-\\\\.]+\\\\d$\"}");
    valid(sch,
          "{\"spec\":{\"replicas\":10,\"f\":1.5,\"n\":15,\"name\":\"\xc3\xa9\xc3\xa9\xc3\xa9\","
          "\"color\":\"red\",\"num\":2,\"s\":\"abc\",\"host\":\"a-b.c1\"}}");
    valid(sch, "{\"spec\":{\"num\":2.0}}");
    invalid(sch, "{\"spec\":{\"replicas\":20}}",
            "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal "
            "to 10");
    invalid(sch, "{\"spec\":{\"replicas\":0}}",
            "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or "
            "equal to 1");
    invalid(sch, "{\"spec\":{\"f\":2.5}}",
            "spec.f: Invalid value: 2.5: spec.f in body should be less than or equal to 1.5");
    invalid(sch, "{\"spec\":{\"f\":0}}",
            "spec.f: Invalid value: 0: spec.f in body should be greater than 0");
    invalid(sch, "{\"spec\":{\"n\":7}}",
            "spec.n: Invalid value: 7: spec.n in body should be a multiple of 5");
    invalid(sch, "{\"spec\":{\"name\":\"abcd\"}}",
            "spec.name: Too long: may not be more than 3 bytes");
    invalid(sch, "{\"spec\":{\"name\":\"a\"}}",
            "spec.name: Invalid value: \"a\": spec.name in body should be at least 2 chars long");
    invalid(sch, "{\"spec\":{\"color\":\"pink\"}}",
            "spec.color: Unsupported value: \"pink\": supported values: \"red\", \"blue\"");
    invalid(sch, "{\"spec\":{\"num\":3}}",
            "spec.num: Unsupported value: 3: supported values: \"1\", \"2\"");
    invalid(sch, "{\"spec\":{\"s\":\"ABC\"}}",
            "spec.s: Invalid value: \"ABC\": spec.s in body should match '^[a-z]+$'");
    invalid(sch, "{\"spec\":{\"host\":\"a_b1\"}}",
            "spec.host: Invalid value: \"a_b1\": spec.host in body should match "
            "'^[a-z0-9\\-\\.]+\\d$'");
    /* Floats print as Go's %v does. */
    invalid(SPEC("\"f\":{\"type\":\"number\",\"maximum\":1000000}"), "{\"spec\":{\"f\":2000000.5}}",
            "spec.f: Invalid value: 2.0000005e+06: spec.f in body should be less than or equal to "
            "1e+06");
}

static void test_collections(void **state)
{
    (void)state;
    const char *sch = SPEC(
        "\"l\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":2,\"items\":{\"type\":"
        "\"integer\"}},\"m\":{\"type\":\"object\",\"minProperties\":1,\"maxProperties\":2,"
        "\"additionalProperties\":{\"type\":\"integer\"}},"
        "\"req\":{\"type\":\"object\",\"required\":[\"a\"],\"properties\":{\"a\":"
        "{\"type\":\"string\"}}},\"closed\":{\"type\":\"object\",\"additionalProperties\":false}");
    valid(sch, "{\"spec\":{\"l\":[1],\"m\":{\"a\":1},\"req\":{\"a\":\"x\"},\"closed\":{}}}");
    invalid(sch, "{\"spec\":{\"l\":[1,2,3]}}", "spec.l: Too many: 3: must have at most 2 items");
    invalid(sch, "{\"spec\":{\"l\":[]}}",
            "spec.l: Invalid value: 0: spec.l in body should have at least 1 items");
    invalid(sch, "{\"spec\":{\"m\":{\"a\":1,\"b\":2,\"c\":3}}}",
            "spec.m: Too many: 3: must have at most 2 items");
    invalid(sch, "{\"spec\":{\"m\":{}}}",
            "spec.m: Invalid value: 0: spec.m in body should have at least 1 properties");
    invalid(sch, "{\"spec\":{\"m\":{\"a\":\"x\"}}}",
            "spec.m.a: Invalid value: \"string\": spec.m.a in body must be of type integer: "
            "\"string\"");
    invalid(sch, "{\"spec\":{\"req\":{}}}", "spec.req.a: Required value");
}

static void test_required_root(void **state)
{
    (void)state;
    invalid("{\"type\":\"object\",\"required\":[\"spec\"],\"properties\":{\"spec\":{\"type\":"
            "\"object\"}}}",
            "{}", "spec: Required value");
    invalid(SPEC("\"closed\":{\"type\":\"object\",\"additionalProperties\":false}"),
            "{\"spec\":{\"closed\":{\"x\":1}}}",
            "spec.closed: Invalid value: \"x\": spec.closed.x in body is a forbidden property");
}

static void test_formats(void **state)
{
    (void)state;
    const char *sch = SPEC("\"id\":{\"type\":\"string\",\"format\":\"uuid\"},"
                           "\"at\":{\"type\":\"string\",\"format\":\"date-time\"},"
                           "\"day\":{\"type\":\"string\",\"format\":\"date\"},"
                           "\"ip\":{\"type\":\"string\",\"format\":\"ipv4\"},"
                           "\"ip6\":{\"type\":\"string\",\"format\":\"ipv6\"},"
                           "\"net\":{\"type\":\"string\",\"format\":\"cidr\"},"
                           "\"b\":{\"type\":\"string\",\"format\":\"byte\"},"
                           "\"i\":{\"type\":\"integer\",\"format\":\"int32\"},"
                           "\"x\":{\"type\":\"string\",\"format\":\"no-such-format\"}");
    valid(sch,
          "{\"spec\":{\"id\":\"0D1E9C2A-0b9f-4b9b-9c7e-1f0e5f6a7b8c\",\"at\":\"2024-02-29T23:59:59."
          "5Z\","
          "\"day\":\"2024-02-29\",\"ip\":\"10.0.0.1\",\"ip6\":\"fe80::1\",\"net\":\"10.0.0.0/8\","
          "\"b\":\"aGk=\",\"i\":1099511627776,\"x\":\"anything\"}}");
    invalid(sch, "{\"spec\":{\"id\":\"nope\"}}",
            "spec.id: Invalid value: \"nope\": spec.id in body must be of type uuid: \"nope\"");
    invalid(sch, "{\"spec\":{\"at\":\"2024-01-01 10:00:00\"}}",
            "spec.at: Invalid value: \"2024-01-01 10:00:00\": spec.at in body must be of type "
            "date-time: \"2024-01-01 10:00:00\"");
    invalid(sch, "{\"spec\":{\"day\":\"2023-02-29\"}}",
            "spec.day: Invalid value: \"2023-02-29\": spec.day in body must be of type date: "
            "\"2023-02-29\"");
    invalid(sch, "{\"spec\":{\"ip\":\"10.0.0\"}}",
            "spec.ip: Invalid value: \"10.0.0\": spec.ip in body must be of type ipv4: \"10.0.0\"");
    invalid(sch, "{\"spec\":{\"net\":\"10.0.0.0/33\"}}",
            "spec.net: Invalid value: \"10.0.0.0/33\": spec.net in body must be of type cidr: "
            "\"10.0.0.0/33\"");
    invalid(sch, "{\"spec\":{\"b\":\"a\"}}",
            "spec.b: Invalid value: \"a\": spec.b in body must be of type byte: \"a\"");
}

static void test_combinators(void **state)
{
    (void)state;
    const char *sch =
        SPEC("\"a\":{\"type\":\"integer\",\"anyOf\":[{\"minimum\":10},{\"maximum\":0}]},"
             "\"o\":{\"type\":\"integer\",\"oneOf\":[{\"minimum\":0},{\"maximum\":10}]},"
             "\"n\":{\"type\":\"string\",\"not\":{\"enum\":[\"x\"]}}");
    valid(sch, "{\"spec\":{\"a\":11,\"o\":-1,\"n\":\"y\"}}");
    invalid(sch, "{\"spec\":{\"a\":5}}",
            "[<nil>: Invalid value: \"\": \"spec.a\" must validate at least one schema (anyOf), "
            "spec.a: Invalid value: 5: spec.a in body should be greater than or equal to 10]");
    invalid(sch, "{\"spec\":{\"o\":5}}",
            "<nil>: Invalid value: \"\": \"spec.o\" must validate one and only one schema (oneOf). "
            "Found 2 valid alternatives");
    invalid(sch, "{\"spec\":{\"n\":\"x\"}}",
            "<nil>: Invalid value: \"\": \"spec.n\" must not validate the schema (not)");
}

/* Cases from apiextensions-apiserver's pkg/apiserver/validation tests. */
static void test_kube_cases(void **state)
{
    (void)state;
    const char *any = "{\"type\":\"object\",\"properties\":{\"field\":{\"nullable\":true,"
                      "\"x-kubernetes-int-or-string\":true,\"anyOf\":[{\"type\":\"integer\"},"
                      "{\"type\":\"string\"}]}}}";
    valid(any, "{\"field\":null}");
    valid(any, "{\"field\":42}");
    valid(any, "{\"field\":\"foo\"}");
    static const char *const any_bool[] = {
        "<nil>: Invalid value: \"\": \"field\" must validate at least one schema (anyOf)",
        "field: Invalid value: \"boolean\": field in body must be of type integer,string: "
        "\"boolean\"",
        "field: Invalid value: \"boolean\": field in body must be of type integer: \"boolean\"",
        NULL};
    invalid_set(any, "{\"field\":true}", any_bool);
    const char *all =
        "{\"type\":\"object\",\"properties\":{\"field\":{\"nullable\":true,"
        "\"x-kubernetes-int-or-string\":true,\"allOf\":[{\"anyOf\":[{\"type\":\"integer\"},"
        "{\"type\":\"string\"}]}]}}}";
    valid(all, "{\"field\":null}");
    static const char *const all_num[] = {
        "<nil>: Invalid value: \"\": \"field\" must validate all the schemas (allOf). None "
        "validated",
        "<nil>: Invalid value: \"\": \"field\" must validate at least one schema (anyOf)",
        "field: Invalid value: \"number\": field in body must be of type integer,string: "
        "\"number\"",
        "field: Invalid value: \"number\": field in body must be of type integer: \"number\"",
        NULL};
    invalid_set(all, "{\"field\":1.2}", all_num);
    const char *en =
        "{\"type\":\"object\",\"properties\":{\"field\":{\"type\":\"object\",\"required\":"
        "[\"nestedint\",\"nestedstring\"],\"properties\":{\"nestedint\":{\"type\":\"integer\","
        "\"enum\":[1,2]},\"nestedstring\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}}}}}";
    static const char *const en_req[] = {"field.nestedint: Required value",
                                         "field.nestedstring: Required value", NULL};
    invalid_set(en, "{\"field\":{}}", en_req);
    static const char *const en_types[] = {
        "field.nestedint: Invalid value: \"string\": field.nestedint in body must be of type "
        "integer: "
        "\"string\"",
        "field.nestedint: Unsupported value: \"x\": supported values: \"1\", \"2\"",
        "field.nestedstring: Invalid value: \"boolean\": field.nestedstring in body must be of "
        "type "
        "string: \"boolean\"",
        "field.nestedstring: Unsupported value: true: supported values: \"a\", \"b\"", NULL};
    invalid_set(en, "{\"field\":{\"nestedint\":\"x\",\"nestedstring\":true}}", en_types);
    /* The regex RE2 rejects where POSIX would not (kube's integration test). */
    rejects(
        "{\"type\":\"object\",\"properties\":{\"foo\":{\"type\":\"string\",\"pattern\":\"+\"}}}",
        P ".properties[foo].pattern: Invalid value: \"+\": must be a valid regular expression, but "
          "isn't: error parsing regexp: missing argument to repetition operator: `+`");
}

static void test_list_type_values(void **state)
{
    (void)state;
    const char *sch =
        SPEC("\"s\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":"
             "\"string\"}},\"l\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
             "\"x-kubernetes-list-map-keys\":[\"name\"],\"items\":{\"type\":\"object\","
             "\"required\":[\"name\"],\"properties\":{\"name\":{\"type\":\"string\"},"
             "\"v\":{\"type\":\"integer\"}}}}");
    valid(sch, "{\"spec\":{\"s\":[\"a\",\"b\"],\"l\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}");
    invalid(sch, "{\"spec\":{\"s\":[\"a\",\"b\",\"a\",\"a\"]}}",
            "spec.s[2]: Duplicate value: \"a\"");
    invalid(sch, "{\"spec\":{\"l\":[{\"name\":\"a\",\"v\":1},{\"name\":\"a\",\"v\":2}]}}",
            "spec.l[1]: Duplicate value: map[string]interface {}{\"name\":\"a\"}");
}

static void test_embedded_values(void **state)
{
    (void)state;
    const char *sch = SPEC("\"t\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
                           "\"x-kubernetes-preserve-unknown-fields\":true}");
    valid(sch, "{\"spec\":{\"t\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
               "\"p\"}}}}");
    valid(sch, "{\"spec\":{\"t\":{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\"}}}");
    invalid(
        sch, "{\"spec\":{\"t\":{}}}",
        "[spec.t.apiVersion: Required value: must not be empty, spec.t.kind: Required value: must "
        "not be empty]");
    invalid(sch,
            "{\"spec\":{\"t\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a/"
            "b\"}}}}",
            "spec.t.metadata.name: Invalid value: \"a/b\": may not contain '/'");
    invalid(sch,
            "{\"spec\":{\"t\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":5}}}}",
            "spec.t.metadata: Invalid value: map[string]interface {}{\"name\":5}: json: cannot "
            "unmarshal number into Go struct field ObjectMeta.name of type string");
}

/* ---- defaulting and pruning ------------------------------------------- */

static void expect_json(const json_t *got, const char *want)
{
    json_t *w = load(want);
    if (!json_equal((json_t *)got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("got %s, want %s", g, want);
    }
    json_decref(w);
}

static void test_default(void **state)
{
    (void)state;
    sk_structural *s = compile_ok(
        SPEC("\"replicas\":{\"type\":\"integer\",\"default\":1},"
             "\"o\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"default\":"
             "\"x\"}}},"
             "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"p\":"
             "{\"type\":\"integer\",\"default\":80}}}},"
             "\"z\":{\"type\":\"string\",\"default\":\"zz\"}"));
    json_t *o = load("{\"spec\":{\"o\":{},\"l\":[{},{\"p\":1}],\"z\":null}}");
    sk_structural_default(s, o);
    expect_json(o, "{\"spec\":{\"replicas\":1,\"o\":{\"a\":\"x\"},\"l\":[{\"p\":80},{\"p\":1}],"
                   "\"z\":\"zz\"}}");
    json_decref(o);
    o = load("{}");
    sk_structural_default(s, o);
    expect_json(o, "{}"); /* spec has no default: nothing below it appears */
    json_decref(o);
    sk_structural_free(s);
}

static void test_prune(void **state)
{
    (void)state;
    sk_structural *s = compile_ok(SPEC(
        "\"a\":{\"type\":\"integer\"},\"l\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
        "\"properties\":{\"x\":{\"type\":\"integer\"}}}},"
        "\"keep\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
        "\"m\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
        "\"n\":{\"type\":\"string\",\"nullable\":true},\"nn\":{\"type\":\"string\"},"
        "\"t\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,\"properties\":"
        "{\"spec\":{\"type\":\"object\"}}},\"t2\":{\"type\":\"object\","
        "\"x-kubernetes-embedded-resource\":true,\"x-kubernetes-preserve-unknown-fields\":true}"));
    json_t *o =
        load("{\"apiVersion\":\"g/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"},\"extra\":1,"
             "\"spec\":{\"a\":1,\"zzz\":2,\"l\":[{\"x\":1,\"y\":2}],\"keep\":{\"any\":{\"b\":1}},"
             "\"m\":{\"k\":\"v\"},\"n\":null,\"nn\":null,\"t\":{\"apiVersion\":\"v1\",\"kind\":"
             "\"Pod\",\"metadata\":{\"name\":\"p\",\"foo\":1,\"labels\":{}},\"spec\":{},\"bad\":1},"
             "\"t2\":{\"apiVersion\":1,\"kind\":\"Pod\",\"metadata\":{\"name\":7,\"namespace\":"
             "\"ns\"}}}}");
    json_t *unknown = json_array();
    sk_structural_prune(s, o, unknown);
    expect_json(
        o,
        "{\"apiVersion\":\"g/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"a\":1,"
        "\"l\":[{\"x\":1}],\"keep\":{\"any\":{\"b\":1}},\"m\":{\"k\":\"v\"},\"n\":null,"
        "\"t\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{}},"
        /* Malformed TypeMeta and ObjectMeta fields go, the rest stays. */
        "\"t2\":{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\"}}}}");
    expect_json(unknown,
                "[\"extra\",\"spec.l[0].y\",\"spec.t.bad\",\"spec.t.metadata.foo\",\"spec.zzz\"]");
    json_decref(unknown);
    json_decref(o);
    sk_structural_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structural_types),
        cmocka_unit_test(test_forbidden_fields),
        cmocka_unit_test(test_metadata),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_defaults_in_meta),
        cmocka_unit_test(test_list_types),
        cmocka_unit_test(test_status_root),
        cmocka_unit_test(test_value_types),
        cmocka_unit_test(test_value_constraints),
        cmocka_unit_test(test_collections),
        cmocka_unit_test(test_required_root),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_combinators),
        cmocka_unit_test(test_list_type_values),
        cmocka_unit_test(test_embedded_values),
        cmocka_unit_test(test_kube_cases),
        cmocka_unit_test(test_default),
        cmocka_unit_test(test_prune),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
