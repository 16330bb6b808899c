/*
 * fuzz_apply.c - libFuzzer target: server-side apply's parsers and set
 * algebra on arbitrary input. The input is a YAML (or JSON) apply body;
 * byte 0 picks the kind's schema (Pod, Service, ConfigMap, or none: a
 * custom resource without a schema).
 *
 * Invariants checked: a body that parses either applies onto a fixed live
 * Pod/ConfigMap or is refused as a client error (400, 409, 422), never an
 * internal one; the field set of what was applied round-trips through the
 * FieldsV1 wire form; a set minus itself is empty.
 */
#include "kube/fieldset.h"
#include "kube/managed.h"
#include "kube/yaml.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const kinds[] = {"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.Service",
                                    "io.k8s.api.core.v1.ConfigMap", NULL};

static const char live_text[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\",\"labels\":{\"a\":"
    "\"b\"},\"managedFields\":[{\"manager\":\"m\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\"f:a\":{}}},"
    "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:image\":{}}}}}}]},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *def = kinds[data[0] % 4];
    sk_fieldset_type t = {def ? sk_schema_named(def) : NULL, NULL};
    json_t *cfg = NULL;
    char *msg = NULL;
    sk_err err = sk_yaml_to_json((const char *)data + 1, size - 1, 64, &cfg, &msg, NULL);
    if (err != SK_OK) {
        if (err != SK_ERR_BAD_REQUEST || !msg)
            abort();
        free(msg);
        return 0;
    }
    if (!json_is_object(cfg)) {
        json_decref(cfg);
        return 0;
    }
    json_t *set = NULL;
    if (sk_fieldset_from_object(t, cfg, &set, &msg) == SK_OK) {
        json_t *wire = sk_fieldset_encode(set);
        json_t *back = sk_fieldset_decode(wire);
        if (!back || !json_equal(back, set))
            abort();
        json_t *none = sk_fieldset_difference(set, set);
        if (!sk_fieldset_empty(none))
            abort();
        json_decref(none);
        json_decref(back);
        json_decref(wire);
        json_decref(set);
    } else {
        free(msg);
    }
    json_t *live = json_loads(live_text, 0, NULL), *out = NULL, *status = NULL;
    const sk_managed_write w = {"fuzz", "v1", NULL, "2026-01-01T00:00:00Z", 0};
    err = sk_managed_apply(t, live, cfg, &w, data[0] & 4, &out, &status);
    if (err != SK_OK && err != SK_ERR_CONFLICT && err != SK_ERR_INVALID &&
        err != SK_ERR_BAD_REQUEST)
        abort();
    if ((err == SK_OK) != (out != NULL) || (err != SK_OK) != (status != NULL))
        abort();
    json_decref(out);
    json_decref(status);
    json_decref(live);
    json_decref(cfg);
    return 0;
}
