/*
 * served.c - see served.h.
 */
#include "api/served.h"
#include "api/crconvert.h"
#include "core/check.h"

#include <stdlib.h>
#include <string.h>

void sk_served_reply(sk_api_call *call, int status, const char *data, size_t len)
{
    if (!sk_crconvert_needed(call->res)) {
        sk_call_reply_raw(call, status, data, len);
        return;
    }
    json_t *stored = sk_call_parse_stored(call->res, data, len, call->name ? call->name : "");
    if (!stored) {
        sk_call_reply_error(call, SK_ERR_INTERNAL, "the stored object cannot be decoded");
        return;
    }
    json_t *failed = NULL;
    json_t *obj = sk_crconvert_from_stored(call->api, call->res, stored, NULL, &failed);
    if (obj)
        sk_call_reply_json(call, status, obj);
    else
        sk_call_reply_status_object(call, failed);
    json_decref(obj);
    json_decref(stored);
}

void sk_served_append(sk_buf *b, const json_t *obj)
{
    char *text = json_dumps(obj, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    sk_buf_puts(b, text);
    free(text);
}
