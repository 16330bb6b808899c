/*
 * fuzz_patch.c - libFuzzer target: the three patch engines on arbitrary
 * input. Byte 0 picks the patch type and the type strategic merge follows
 * (a few kinds with deep merge-keyed lists, maps of structs, no type); the
 * rest is a target document and a patch separated by the first NUL byte
 * (no NUL: a fixed Deployment is the target and everything is the patch).
 *
 * Invariants checked: the target is never modified; success yields an
 * object; a failure comes with a message and is a client error (400, 413,
 * 415, 422), never an internal one.
 */
#include "kube/patch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char default_target[] =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"x\","
    "\"finalizers\":[\"a\",\"b\"],\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"o\"}]},"
    "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":"
    "[{\"containerPort\":80}],\"env\":[{\"name\":\"A\"}]}],\"volumes\":[{\"name\":\"v\"}]}}}}";

/* Definition names (kube/schema.h); NULL stands for a custom resource. */
static const char *const types_followed[] = {
    "io.k8s.api.apps.v1.Deployment",
    "io.k8s.api.core.v1.ConfigMap",
    "io.k8s.api.core.v1.Node",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
    NULL,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const sk_patch_type types[] = {SK_PATCH_JSON, SK_PATCH_MERGE, SK_PATCH_STRATEGIC};
    if (size < 1)
        return 0;
    sk_patch_type type = types[data[0] % 3];
    const char *def =
        types_followed[data[0] / 3 % (sizeof types_followed / sizeof *types_followed)];
    const sk_schema *schema = def ? sk_schema_named(def) : NULL;
    if (def && !schema)
        abort();
    const char *rest = (const char *)data + 1;
    size_t rest_len = size - 1;
    const char *nul = memchr(rest, '\0', rest_len);
    json_t *target =
        nul ? json_loadb(rest, (size_t)(nul - rest), 0, NULL) : json_loads(default_target, 0, NULL);
    const char *patch = nul ? nul + 1 : rest;
    size_t patch_len = nul ? rest_len - (size_t)(nul + 1 - rest) : rest_len;
    if (!json_is_object(target)) {
        json_decref(target);
        return 0;
    }
    char *before = json_dumps(target, JSON_COMPACT | JSON_SORT_KEYS);
    json_t *out = NULL;
    char *msg = NULL;
    sk_err err = sk_patch_apply(type, schema, target, patch, patch_len, &out, &msg);
    char *after = json_dumps(target, JSON_COMPACT | JSON_SORT_KEYS);
    if (!before || !after || strcmp(before, after) != 0)
        abort(); /* the target must be left as it was */
    if (err == SK_OK) {
        if (!json_is_object(out) || msg)
            abort();
    } else {
        if (out || !msg)
            abort();
        if (err != SK_ERR_BAD_REQUEST && err != SK_ERR_INVALID && err != SK_ERR_TOO_LARGE &&
            err != SK_ERR_UNSUPPORTED_MEDIA)
            abort();
    }
    free(before);
    free(after);
    free(msg);
    json_decref(out);
    json_decref(target);
    return 0;
}
