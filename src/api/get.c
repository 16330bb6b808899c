/*
 * get.c - GET of one object: read at a revision not older than
 * ?resourceVersion (unset: a consistent read, at least the store's
 * revision when the request came), through the one read path; as the
 * object or, for `kubectl get`, as a Table.
 */
#include "api/call.h"
#include "api/crconvert.h"
#include "api/served.h"
#include "api/verbs.h"
#include "core/util.h"
#include "kube/partial.h"
#include "kube/table.h"

typedef struct get_state {
    int64_t min_rev; /* -1: consistent */
    json_t *(*view)(sk_api_call *call, const json_t *obj); /* NULL: as stored */
} get_state;

/* obj's metadata (Accept: ...;as=PartialObjectMetadata). */
static void reply_partial(sk_api_call *call, const json_t *obj)
{
    sk_buf b = SK_BUF_INIT;
    sk_partial_append(&b, obj, call->out_as.meta_version);
    sk_call_reply_raw(call, 200, b.data, b.len);
    sk_buf_free(&b);
}

/* The object in the URL's version, as st->view shows it (a subresource's
 * kind, e.g. Scale) when there is one; its metadata alone when the Accept
 * header asked for that. */
static void reply_view(sk_api_call *call, get_state *st, sk_blob *blob)
{
    size_t len;
    const char *data = sk_blob_data(blob, &len);
    json_t *obj = sk_call_parse_stored(call->res, data, len, sk_blob_name(blob));
    json_t *failed = NULL;
    /* a view (a Scale) shows the object in the URL's version, whose paths it reads */
    json_t *served = obj ? sk_crconvert_from_stored(call->api, call->res, obj, blob, &failed) : NULL;
    json_t *v = served && st->view ? st->view(call, served) : json_incref(served);
    json_decref(served);
    if (v && call->out_as.as == SK_AS_PARTIAL)
        reply_partial(call, v);
    else if (v)
        sk_call_reply_json(call, 200, v);
    else if (failed)
        sk_call_reply_status_object(call, failed);
    else if (!obj)
        sk_call_reply_errorf(call, SK_ERR_INTERNAL, "the stored object %s \"%s\" cannot be decoded",
                             call->res->resource, sk_blob_name(blob));
    json_decref(v);
    json_decref(obj);
}

/* One object as a Table (Accept: ...;as=Table). */
static void reply_table(sk_api_call *call, sk_blob *blob)
{
    size_t len;
    const char *data = sk_blob_data(blob, &len);
    json_t *obj = sk_call_parse_stored(call->res, data, len, sk_blob_name(blob));
    if (!obj) {
        sk_call_reply_errorf(call, SK_ERR_INTERNAL, "the stored object %s \"%s\" cannot be decoded",
                             call->res->resource, sk_blob_name(blob));
        return;
    }
    if (sk_crconvert_webhook(call->res)) {
        /* the row of the version its webhook converts to (the table's own
         * conversion leaves that version as it is) */
        json_t *failed = NULL;
        json_t *served = sk_crconvert_from_stored(call->api, call->res, obj, blob, &failed);
        json_decref(obj);
        if (!served) {
            sk_call_reply_status_object(call, failed);
            return;
        }
        obj = served;
    }
    sk_include_object include;
    if (sk_parse_include_object(sk_call_query(call, "includeObject"), &include) < 0)
        include = SK_INCLUDE_METADATA; /* a GET has no ListOptions to refuse it by */
    sk_buf b = SK_BUF_INIT;
    sk_table_single(&b, call->res, obj, include, sk_blob_rev(blob), sk_wall_s());
    sk_call_reply_raw(call, 200, b.data, b.len);
    sk_buf_free(&b);
    json_decref(obj);
}

static int get_read(sk_api_call *call)
{
    get_state *st = call->verb_state;
    int64_t rev = 0;
    int rc = sk_call_plan_read(call, st->min_rev, get_read, &rev);
    if (rc != SK_PLAN_NOW)
        return rc;
    sk_blob *blob = NULL;
    sk_err err =
        sk_reader_get(call->api->reader, call->res->storage, call->ns, call->name, rev, &blob);
    if (err != SK_OK) {
        sk_call_reply_store_error(call, err, call->name);
        return SK_STEP_DONE;
    }
    if (st->view) {
        reply_view(call, st, blob);
    } else if (call->out_as.as == SK_AS_TABLE) {
        reply_table(call, blob);
    } else if (call->out_as.as == SK_AS_PARTIAL) {
        reply_view(call, st, blob);
    } else {
        size_t len;
        const char *data = sk_blob_data(blob, &len);
        /* Stored objects are JSON objects; anything else (a value no
         * configured key decrypts, which the store logged with its key) is
         * never handed out as one. */
        if (len == 0 || data[0] != '{')
            sk_call_reply_errorf(call, SK_ERR_INTERNAL,
                                 "the stored object %s \"%s\" cannot be decoded",
                                 call->res->resource, sk_blob_name(blob));
        else if (sk_crconvert_webhook(call->res))
            reply_view(call, st, blob); /* the kept form, if the blob has it */
        else
            sk_served_reply(call, 200, data, len);
    }
    sk_blob_unref(blob);
    return SK_STEP_DONE;
}

int sk_verb_get(sk_api_call *call)
{
    return sk_verb_get_view(call, NULL);
}

int sk_verb_get_view(sk_api_call *call, json_t *(*view)(sk_api_call *call, const json_t *obj))
{
    if (sk_call_refuse_partial(call, 0))
        return SK_STEP_DONE;
    get_state *st = sk_arena_alloc(call->arena, sizeof *st);
    call->verb_state = st;
    st->min_rev = -1;
    st->view = view;
    const char *rv = sk_call_query(call, "resourceVersion");
    if (rv && *rv && (st->min_rev = sk_parse_i64(rv)) < 0) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST, "invalid resource version");
        return SK_STEP_DONE;
    }
    return get_read(call);
}
