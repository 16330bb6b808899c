/*
 * fuzz_fieldcheck.c - libFuzzer target: a request body as the network sends
 * it, walked by the strict field check (kube/fieldcheck) before anything
 * parses it. The input's first byte picks the kind (or an untyped patch),
 * the rest is the body.
 *
 * Invariants checked: the walker never reads outside the body (ASan); text
 * jansson accepts as a JSON value is never refused; findings are at most
 * SK_FIELDCHECK_MAX strings of valid UTF-8, none repeated.
 */
#include "kube/fieldcheck.h"
#include "core/utf8.h"
#include "kube/registry.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_findings(const json_t *found)
{
    if (!json_is_array(found) || json_array_size(found) > SK_FIELDCHECK_MAX)
        abort();
    for (size_t i = 0; i < json_array_size(found); i++) {
        const json_t *f = json_array_get(found, i);
        const char *s = json_string_value(f);
        if (!s || !sk_utf8_valid(s, strlen(s)))
            abort();
        for (size_t j = 0; j < i; j++)
            if (json_equal((json_t *)f, json_array_get(found, j)))
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const kinds[][2] = {
        {"", "ConfigMap"}, {"", "Pod"}, {"apps", "Deployment"}, {"coordination.k8s.io", "Lease"}};
    if (size < 1)
        return 0;
    size_t pick = data[0] % (sizeof kinds / sizeof kinds[0] + 1);
    const sk_resource *r =
        pick < sizeof kinds / sizeof kinds[0] ? sk_registry_find_kind(kinds[pick][0], "v1", kinds[pick][1])
                                              : NULL;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    json_t *found = NULL;
    sk_err err = sk_fieldcheck_body(r, body, len, &found); /* r NULL: untyped, as a patch */
    json_t *parsed = json_loadb(body, len, JSON_DECODE_ANY, NULL);
    if (err == SK_OK)
        check_findings(found);
    else if (parsed)
        abort(); /* refused text jansson reads as JSON */
    json_decref(parsed);
    json_decref(found);
    return 0;
}
