/*
 * test_openapi_pb.c - GET /openapi/v2 in protobuf decodes as gnostic's
 * openapi_v2.Document would be filled by gnostic's compiler: read back with
 * a minimal wire reader (field numbers from gnostic's OpenAPIv2.proto), on
 * the served document and on small documents that exercise the compiler's
 * quirks (maps as Named pairs, Any as YAML, oneofs, TypeItem, ItemsItem),
 * and the Accept negotiation kube-openapi's handler does.
 */
#include "kube/openapi.h"
#include "kube/openapi_pb.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- a minimal protobuf wire reader ---- */

typedef struct {
    const unsigned char *p;
    size_t len;
} span;

static int read_varint(span *s, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; s->len && shift < 64; shift += 7) {
        unsigned char c = *s->p++;
        s->len--;
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return 1;
    }
    return 0;
}

/* The idx-th occurrence of field number in msg: its bytes (length-delimited)
 * or its varint in *num. 0 when absent. */
static int field(span msg, int number, int idx, span *out, uint64_t *num)
{
    while (msg.len) {
        uint64_t key, v = 0;
        assert_true(read_varint(&msg, &key));
        span val = {NULL, 0};
        switch (key & 7) {
        case 0:
            assert_true(read_varint(&msg, &v));
            break;
        case 1:
            assert_true(msg.len >= 8);
            val.p = msg.p, val.len = 8;
            msg.p += 8, msg.len -= 8;
            break;
        case 2:
            assert_true(read_varint(&msg, &v));
            assert_true(v <= msg.len);
            val.p = msg.p, val.len = (size_t)v;
            msg.p += v, msg.len -= (size_t)v;
            break;
        default:
            fail_msg("unexpected wire type %d", (int)(key & 7));
        }
        if ((int)(key >> 3) == number && idx-- == 0) {
            if (out)
                *out = val;
            if (num)
                *num = v;
            return 1;
        }
    }
    return 0;
}

static span sub(span msg, int number)
{
    span out = {NULL, 0};
    if (!field(msg, number, 0, &out, NULL))
        fail_msg("field %d missing", number);
    return out;
}

static int count(span msg, int number)
{
    int n = 0;
    while (field(msg, number, n, NULL, NULL))
        n++;
    return n;
}

static int span_is(span s, const char *text)
{
    return s.len == strlen(text) && memcmp(s.p, text, s.len) == 0;
}

static char *str(span s)
{
    static char buf[4096];
    assert_true(s.len < sizeof buf);
    memcpy(buf, s.p, s.len);
    buf[s.len] = '\0';
    return buf;
}

/* The value of the Named* pair called name among msg's field number. */
static span named(span msg, int number, const char *name)
{
    span pair;
    for (int i = 0; field(msg, number, i, &pair, NULL); i++)
        if (span_is(sub(pair, 1), name))
            return sub(pair, 2);
    fail_msg("no %s", name);
    return pair;
}

/* gnostic's field numbers (openapiv2/OpenAPIv2.proto) */
enum {
    DOC_SWAGGER = 1,
    DOC_INFO = 2,
    DOC_PATHS = 8,
    DOC_DEFINITIONS = 9,
    DOC_SECURITY = 12,
    INFO_TITLE = 1,
    PATHS_PATH = 2,
    PATH_GET = 2,
    PATH_POST = 4,
    PATH_PARAMETERS = 9,
    OP_OPERATION_ID = 5,
    OP_PARAMETERS = 8,
    OP_RESPONSES = 9,
    OP_VENDOR = 13,
    DEFS_ADDITIONAL = 1,
    SCHEMA_REF = 1,
    SCHEMA_DEFAULT = 5,
    SCHEMA_MAXIMUM = 7,
    SCHEMA_ADDITIONAL_PROPERTIES = 21,
    SCHEMA_TYPE = 22,
    SCHEMA_ITEMS = 23,
    SCHEMA_PROPERTIES = 25,
    SCHEMA_VENDOR = 31,
    ANY_YAML = 2,
};

static span served(void)
{
    size_t len = 0;
    const unsigned char *pb = sk_openapi_v2_pb(&len);
    assert_non_null(pb);
    assert_true(len > 1000);
    assert_ptr_equal(sk_openapi_v2_pb(NULL), pb); /* cached */
    return (span){pb, len};
}

static void test_served_document(void **state)
{
    (void)state;
    span doc = served();
    assert_true(span_is(sub(doc, DOC_SWAGGER), "2.0"));
    assert_true(span_is(sub(sub(doc, DOC_INFO), INFO_TITLE), "Kubernetes"));

    span pods = named(sub(doc, DOC_PATHS), PATHS_PATH, "/api/v1/namespaces/{namespace}/pods");
    assert_true(span_is(sub(sub(pods, PATH_GET), OP_OPERATION_ID), "listCoreV1NamespacedPod"));
    span post = sub(pods, PATH_POST);
    assert_true(span_is(sub(post, OP_OPERATION_ID), "createCoreV1NamespacedPod"));
    /* ParametersItem.parameter -> Parameter.body_parameter: {name "body", schema.$ref} */
    span body = sub(sub(sub(post, OP_PARAMETERS), 1), 1);
    assert_true(span_is(sub(sub(body, 5), SCHEMA_REF), "#/definitions/io.k8s.api.core.v1.Pod"));
    /* ... and a query parameter: non_body_parameter -> query_parameter_sub_schema */
    int found = 0;
    span item;
    for (int i = 0; field(post, OP_PARAMETERS, i, &item, NULL); i++) {
        span p = sub(sub(item, 1), 1 + (i > 0));
        if (i > 0 && field(p, 3, 0, &p, NULL) && span_is(sub(p, 4), "fieldValidation")) {
            assert_true(span_is(sub(p, 2), "query"));
            found = 1;
        }
    }
    assert_true(found);
    /* a path-level parameter: path_parameter_sub_schema (4), required */
    span nb = sub(sub(sub(pods, PATH_PARAMETERS), 1), 2);
    uint64_t required = 0;
    span path_param = sub(nb, 4);
    assert_true(span_is(sub(path_param, 4), "namespace"));
    assert_true(field(path_param, 1, 0, NULL, &required));
    assert_int_equal(required, 1);
    /* Responses {response_code: "200" -> ResponseValue.response -> schema} */
    span ok = named(sub(post, OP_RESPONSES), 1, "200");
    span schema = sub(sub(sub(ok, 1), 2), 1);
    assert_true(span_is(sub(schema, SCHEMA_REF), "#/definitions/io.k8s.api.core.v1.Pod"));

    /* a definition: a property's TypeItem, and the GVK vendor extension as YAML */
    span defs = sub(doc, DOC_DEFINITIONS);
    span cm = named(defs, DEFS_ADDITIONAL, "io.k8s.api.core.v1.ConfigMap");
    span immutable = named(sub(cm, SCHEMA_PROPERTIES), 1, "immutable");
    assert_true(span_is(sub(sub(immutable, SCHEMA_TYPE), 1), "boolean"));
    span data = named(sub(cm, SCHEMA_PROPERTIES), 1, "data");
    span ap = sub(sub(data, SCHEMA_ADDITIONAL_PROPERTIES), 1); /* oneof schema */
    assert_true(span_is(sub(sub(ap, SCHEMA_TYPE), 1), "string"));
    span gvk = named(cm, SCHEMA_VENDOR, "x-kubernetes-group-version-kind");
    assert_string_equal(str(sub(gvk, ANY_YAML)),
                        "- group: \"\"\n  kind: ConfigMap\n  version: v1\n");
    span dep = named(defs, DEFS_ADDITIONAL, "io.k8s.api.apps.v1.Deployment");
    gvk = named(dep, SCHEMA_VENDOR, "x-kubernetes-group-version-kind");
    assert_string_equal(str(sub(gvk, ANY_YAML)),
                        "- group: apps\n  kind: Deployment\n  version: v1\n");
    span act = named(post, OP_VENDOR, "x-kubernetes-action");
    assert_string_equal(str(sub(act, ANY_YAML)), "post\n");
    /* security: [{BearerToken: []}] -> SecurityRequirement{NamedStringArray} */
    span sec = sub(sub(doc, DOC_SECURITY), 1);
    assert_true(span_is(sub(sec, 1), "BearerToken"));
    assert_int_equal(sub(sec, 2).len, 0);
}

static span encode(const char *json, unsigned char **owned)
{
    json_error_t e;
    json_t *doc = json_loads(json, 0, &e);
    assert_non_null(doc);
    size_t len = 0;
    *owned = sk_openapi_pb_encode(doc, &len);
    json_decref(doc);
    return (span){*owned, len};
}

static void test_compiler_quirks(void **state)
{
    (void)state;
    unsigned char *owned;
    span doc = encode("{\"swagger\":\"2.0\",\"info\":{\"title\":\"\",\"version\":\"v\"},"
                      "\"paths\":{\"x-p\":1,\"/a\":{\"get\":{\"responses\":{\"default\":"
                      "{\"$ref\":\"#/responses/r\"}}}}},"
                      "\"definitions\":{\"T\":{\"type\":[\"string\",\"null\"],"
                      "\"additionalProperties\":false,\"maximum\":2.5,"
                      "\"default\":{\"a\":[\"true\",\"1\",\"x: y\",\"-\"],\"b\":{\"c\":null}},"
                      "\"items\":{\"type\":\"integer\"}}}}",
                      &owned);
    span info = sub(doc, DOC_INFO);
    assert_false(field(info, INFO_TITLE, 0, NULL, NULL)); /* proto3: "" left out */
    span paths = sub(doc, DOC_PATHS);
    assert_int_equal(count(paths, PATHS_PATH), 1);
    assert_int_equal(count(paths, 1), 1); /* x-p: a vendor extension of Paths */
    assert_string_equal(str(sub(sub(sub(paths, 1), 2), ANY_YAML)), "1\n");
    /* a $ref response: ResponseValue.json_reference (2) */
    span rv = named(sub(sub(named(paths, PATHS_PATH, "/a"), PATH_GET), OP_RESPONSES), 1, "default");
    assert_true(span_is(sub(sub(rv, 2), 1), "#/responses/r"));

    span t = named(sub(doc, DOC_DEFINITIONS), DEFS_ADDITIONAL, "T");
    span type = sub(t, SCHEMA_TYPE);
    assert_int_equal(count(type, 1), 2);
    span ap = sub(t, SCHEMA_ADDITIONAL_PROPERTIES);
    uint64_t b = 1;
    assert_true(field(ap, 2, 0, NULL, &b)); /* the oneof's boolean, written though false */
    assert_int_equal(b, 0);
    span max = sub(t, SCHEMA_MAXIMUM);
    double d;
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++)
        bits |= (uint64_t)max.p[i] << (8 * i);
    memcpy(&d, &bits, sizeof d);
    assert_true(d == 2.5);
    span items = sub(t, SCHEMA_ITEMS);
    assert_int_equal(count(items, 1), 1);
    assert_true(span_is(sub(sub(sub(items, 1), SCHEMA_TYPE), 1), "integer"));
    assert_string_equal(
        str(sub(sub(t, SCHEMA_DEFAULT), ANY_YAML)),
        "a:\n    - \"true\"\n    - \"1\"\n    - 'x: y'\n    - '-'\nb:\n    c: null\n");
    free(owned);
}

static void test_accept(void **state)
{
    (void)state;
    assert_true(sk_openapi_pb_wanted(SK_OPENAPI_PB_ACCEPT));
    assert_true(sk_openapi_pb_wanted("application/com.github.proto-openapi.spec.v2.v1.0+protobuf"));
    assert_true(sk_openapi_pb_wanted(
        "application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf"));
    assert_false(sk_openapi_pb_wanted(NULL));
    assert_false(sk_openapi_pb_wanted(""));
    assert_false(sk_openapi_pb_wanted("*/*"));
    assert_false(sk_openapi_pb_wanted("application/json"));
    assert_false(sk_openapi_pb_wanted(
        "application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf"));
    assert_false(sk_openapi_pb_wanted("application/vnd.kubernetes.protobuf"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_served_document),
        cmocka_unit_test(test_compiler_quirks),
        cmocka_unit_test(test_accept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
