/*
 * fuzz_request.c - libFuzzer target: a request line as the network sends
 * it. The input's first byte picks the method, the rest is a raw request
 * target; it is parsed (http/target), routed (api/route) and any error is
 * put into a Status (api/status), which must always encode as valid UTF-8.
 *
 * Invariants checked: a parsed target holds only NUL-free, valid UTF-8
 * segments and parameters; a refusal leaves the target untouched and comes
 * with a valid UTF-8 message; routing never reads outside the segments.
 */
#include "api/route.h"
#include "kube/status.h"
#include "core/utf8.h"
#include "http/target.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s)
{
    if (!sk_utf8_valid(s, strlen(s)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"};
    if (size < 1)
        return 0;
    const char *method = methods[data[0] % (sizeof methods / sizeof *methods)];
    sk_target t = {0};
    char *msg = NULL;
    sk_err err = sk_target_parse((const char *)data + 1, size - 1, &t, &msg);
    if (err == SK_OK) {
        for (size_t i = 0; i < t.n_segs; i++)
            check_text(t.segs[i]);
        for (size_t i = 0; i < t.n_params; i++) {
            check_text(t.params[i].key);
            check_text(t.params[i].value);
            if (!*t.params[i].key)
                abort();
        }
        sk_route route;
        sk_route_resolve(method, (const char *const *)t.segs, t.n_segs, data[0] & 0x80, &route);
        if (route.kind == SK_ROUTE_RESOURCE && !route.res)
            abort();
        sk_target_clear(&t);
    } else {
        if (!msg || t.segs || t.params)
            abort();
        check_text(msg);
    }
    /* Whatever the bytes, a Status quoting them encodes. */
    char *quoted = malloc(size + 1);
    if (!quoted)
        abort();
    memcpy(quoted, data, size);
    quoted[size] = '\0';
    json_t *st = sk_status_new(err == SK_OK ? SK_ERR_NOT_FOUND : err, quoted, quoted, quoted,
                               quoted, NULL);
    char *text = json_dumps(st, JSON_COMPACT);
    if (!text)
        abort();
    check_text(text);
    free(text);
    json_decref(st);
    free(quoted);
    free(msg);
    return 0;
}
