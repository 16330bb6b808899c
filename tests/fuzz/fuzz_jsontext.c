/*
 * fuzz_jsontext.c - libFuzzer target: core/jsontext against jansson, the
 * parser and encoder it must be indistinguishable from.
 *
 * Invariants checked, for any bytes: sk_jsontext_load and json_loadb(.., 0)
 * both fail or both succeed; failing, with the same error text, line,
 * column and position; succeeding, with equal values whose objects list
 * their keys in the same order (their compact dumps are the same bytes).
 * And sk_jsontext_dump of the value is json_dumps(JSON_COMPACT)'s bytes,
 * with its length. A divergence aborts: the fast path would have changed
 * what a client or the store sees.
 */
#include "core/jsontext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t ea, eb;
    memset(&ea, 0, sizeof ea);
    memset(&eb, 0, sizeof eb);
    json_t *fast = sk_jsontext_load((const char *)data, size, &ea);
    json_t *ref = json_loadb((const char *)data, size, 0, &eb);
    if (!fast != !ref)
        abort();
    if (!fast) {
        if (strcmp(ea.text, eb.text) != 0 || ea.line != eb.line || ea.column != eb.column ||
            ea.position != eb.position)
            abort();
        return 0;
    }
    if (!json_equal(fast, ref))
        abort();
    char *fast_order = json_dumps(fast, JSON_COMPACT);
    char *ref_order = json_dumps(ref, JSON_COMPACT);
    if (!same_text(fast_order, ref_order))
        abort();
    size_t len = 0;
    char *dumped = sk_jsontext_dump(ref, &len);
    if (!same_text(dumped, ref_order) || (dumped && len != strlen(dumped)))
        abort();
    free(dumped);
    free(fast_order);
    free(ref_order);
    json_decref(fast);
    json_decref(ref);
    return 0;
}
