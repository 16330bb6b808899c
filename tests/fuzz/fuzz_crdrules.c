/*
 * fuzz_crdrules.c - libFuzzer target: CRD x-kubernetes-validations rules
 * (policy/crdrules.h) on arbitrary input: the CRD-side checks, compiling,
 * and running the rules on an object and an update of it. The input is a
 * schema, an object and an old object separated by NUL bytes (no NUL: a
 * fixed schema with rules at every level, the input the object and the
 * old object alike, so transition rules and ratcheting run too).
 *
 * Invariants checked: every error and warning renders to a non-empty
 * message; evaluation stays within small bounds (the limits below), so
 * hostile rules end quickly.
 */
#include "policy/crdrules.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char default_schema[] =
    "{\"type\":\"object\",\"x-kubernetes-validations\":[{\"rule\":\"self.metadata.name != ''\"}],"
    "\"properties\":{\"spec\":{\"type\":\"object\",\"x-kubernetes-validations\":["
    "{\"rule\":\"!has(self.a) || self.a < 10\",\"messageExpression\":\"'a is ' + "
    "string(self.a)\",\"fieldPath\":\".a\",\"reason\":\"FieldValueForbidden\"},"
    "{\"rule\":\"self == oldSelf || !has(self.frozen)\"}],\"properties\":{"
    "\"a\":{\"type\":\"integer\"},\"f\":{\"type\":\"number\",\"x-kubernetes-validations\":"
    "[{\"rule\":\"self > 0.5\"}]},\"frozen\":{\"type\":\"string\"},"
    "\"p\":{\"x-kubernetes-int-or-string\":true,\"x-kubernetes-validations\":[{\"rule\":"
    "\"type(self) == string\"}]},\"m\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
    "\"string\",\"x-kubernetes-validations\":[{\"rule\":\"self.size() < 4\"}]}},"
    "\"l\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":"
    "[\"k\"],\"x-kubernetes-validations\":[{\"rule\":\"self.all(x, self.exists_one(y, x.k == "
    "y.k))\"}],\"items\":{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"string\"},"
    "\"v\":{\"type\":\"integer\",\"x-kubernetes-validations\":[{\"rule\":\"self == oldSelf\"}]}}}},"
    "\"t\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
    "\"x-kubernetes-preserve-unknown-fields\":true,\"x-kubernetes-validations\":[{\"rule\":"
    "\"self.kind != 'Secret'\"}]}}}}}";

static void check_messages(const sk_field_errors *fe, const json_t *warnings)
{
    if (sk_field_errors_count(fe) > 0) {
        char *msg = sk_field_errors_message(fe);
        if (!msg || !*msg)
            abort();
        free(msg);
    }
    size_t i;
    const json_t *w;
    json_array_foreach(warnings, i, w)
    {
        if (!json_string_length(w))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data, *end = in + size;
    const char *nul = memchr(in, '\0', size);
    json_t *schema = nul ? json_loadb(in, (size_t)(nul - in), JSON_DECODE_ANY, NULL)
                         : json_loads(default_schema, 0, NULL);
    const char *obj_text = nul ? nul + 1 : in;
    const char *nul2 = nul ? memchr(obj_text, '\0', (size_t)(end - obj_text)) : NULL;
    size_t obj_len = (size_t)((nul2 ? nul2 : end) - obj_text);
    json_t *obj = json_loadb(obj_text, obj_len, JSON_DECODE_ANY, NULL);
    json_t *old = nul2 ? json_loadb(nul2 + 1, (size_t)(end - nul2 - 1), JSON_DECODE_ANY, NULL)
                       : json_incref(obj);
    json_t *crd =
        json_pack("{s:{s:[{s:{s:O?}}]}}", "spec", "versions", "schema", "openAPIV3Schema", schema);
    sk_field_errors *fe = sk_field_errors_new();
    json_t *warnings = json_array();
    sk_crdrules *c = NULL;
    if (crd) {
        (void)sk_crdrules_check_crd(crd, NULL, fe);
        check_messages(fe, warnings);
    }
    c = schema ? sk_crdrules_compile(schema) : NULL;
    if (c && obj) {
        const sk_crdrules_limits lim = {.per_call = 20000, .per_object = 100000};
        sk_field_errors *vfe = sk_field_errors_new();
        sk_crdrules_validate(c, obj, NULL, 0, &lim, vfe, warnings);
        sk_crdrules_validate(c, obj, old, 1, &lim, vfe, warnings);
        check_messages(vfe, warnings);
        sk_field_errors_free(vfe);
    }
    sk_crdrules_free(c);
    sk_field_errors_free(fe);
    json_decref(warnings);
    json_decref(crd);
    json_decref(schema);
    json_decref(obj);
    json_decref(old);
    return 0;
}
