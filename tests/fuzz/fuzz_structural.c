/*
 * fuzz_structural.c - libFuzzer target: CRD schema compilation and the
 * custom-resource pipeline (default, prune, validate) on arbitrary input.
 * The input is a schema and an object separated by the first NUL byte (no
 * NUL: a fixed schema that uses every feature, and the input is the
 * object).
 *
 * Invariants checked: compile succeeds with no error added or fails with at
 * least one; pruning is idempotent and a second pass finds no unknown
 * field; every error renders to a non-empty message.
 */
#include "kube/structural.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char default_schema[] =
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"required\":[\"a\"],"
    "\"properties\":{\"a\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":9,\"multipleOf\":2,"
    "\"default\":2},\"s\":{\"type\":\"string\",\"pattern\":\"^[a-z0-9\\\\-]+$\",\"maxLength\":8,"
    "\"format\":\"hostname\"},\"f\":{\"type\":\"number\",\"exclusiveMaximum\":true,\"maximum\":1.5}"
    ","
    "\"e\":{\"type\":\"string\",\"enum\":[\"x\",\"y\"]},\"p\":{\"x-kubernetes-int-or-string\":true}"
    ","
    "\"n\":{\"type\":\"object\",\"nullable\":true,\"minProperties\":1},"
    "\"m\":{\"type\":\"object\",\"maxProperties\":3,\"additionalProperties\":{\"type\":\"string\","
    "\"format\":\"date-time\"}},\"set\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\","
    "\"maxItems\":4,\"items\":{\"type\":\"string\"}},\"map\":{\"type\":\"array\",\"x-kubernetes-"
    "list-type\":"
    "\"map\",\"x-kubernetes-list-map-keys\":[\"k\"],\"items\":{\"type\":\"object\",\"required\":["
    "\"k\"],"
    "\"properties\":{\"k\":{\"type\":\"string\"},\"v\":{\"type\":\"integer\",\"default\":0}}}},"
    "\"any\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
    "\"t\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
    "\"x-kubernetes-preserve-unknown-fields\":true},\"o\":{\"type\":\"integer\",\"anyOf\":"
    "[{\"minimum\":5},{\"maximum\":0}],\"not\":{\"enum\":[7]}}}}}}";

static void check_messages(sk_field_errors *fe)
{
    if (sk_field_errors_count(fe) == 0)
        return;
    char *msg = sk_field_errors_message(fe);
    if (!msg || !*msg)
        abort();
    free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    const char *nul = memchr(in, '\0', size);
    json_t *schema = nul ? json_loadb(in, (size_t)(nul - in), JSON_DECODE_ANY, NULL)
                         : json_loads(default_schema, 0, NULL);
    const char *obj_text = nul ? nul + 1 : in;
    size_t obj_len = nul ? size - (size_t)(nul + 1 - in) : size;
    json_t *obj = json_loadb(obj_text, obj_len, JSON_DECODE_ANY, NULL);
    sk_field_errors *fe = sk_field_errors_new();
    sk_structural *s = NULL;
    if (!schema)
        goto out;
    sk_err e = sk_structural_compile(schema, "spec.versions[0].schema.openAPIV3Schema", fe, &s);
    if ((e == SK_OK) != (sk_field_errors_count(fe) == 0) || (e == SK_OK) != (s != NULL))
        abort();
    check_messages(fe);
    if (!s || !obj)
        goto out;
    json_t *unknown = json_array();
    sk_structural_default(s, obj);
    sk_structural_prune(s, obj, unknown);
    json_t *again = json_deep_copy(obj), *unknown2 = json_array();
    sk_structural_prune(s, again, unknown2);
    if (!json_equal(again, obj) || json_array_size(unknown2) != 0)
        abort();
    json_decref(again);
    json_decref(unknown2);
    json_decref(unknown);
    sk_field_errors *vfe = sk_field_errors_new();
    sk_structural_validate(s, obj, vfe);
    check_messages(vfe);
    sk_field_errors_free(vfe);
out:
    sk_structural_free(s);
    sk_field_errors_free(fe);
    json_decref(schema);
    json_decref(obj);
    return 0;
}
