/*
 * body.c - see body.h.
 */
#include "api/body.h"
#include "kube/fieldcheck.h"
#include "core/jsontext.h"
#include "kube/limits.h"
#include "kube/protobuf.h"
#include "kube/status.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Bodies sqlkube reads: JSON, and Kubernetes protobuf (kubectl's typed
 * clients send it), decoded to the same JSON. */
int sk_body_media_supported(const char *ct)
{
    if (!ct)
        return 1; /* kube-apiserver treats a missing type as JSON for bodies it can parse */
    if (sk_protobuf_is_media(ct))
        return 1;
    size_t n = strcspn(ct, ";");
    while (n > 0 && ct[n - 1] == ' ')
        n--;
    return (n == 16 && strncasecmp(ct, "application/json", 16) == 0) ||
           (n == 3 && strncmp(ct, "*/*", 3) == 0);
}

/* Decodes the body (JSON, or Kubernetes protobuf to the same JSON) into a
 * JSON object. */
json_t *sk_body_decode(sk_api_call *call, const char *expected)
{
    json_error_t jerr;
    json_t *obj = NULL;
    if (call->content_type && sk_protobuf_is_media(call->content_type)) {
        char *why = NULL;
        sk_err err = sk_protobuf_to_json(call->body, call->body_len, &obj, &why);
        if (err != SK_OK) {
            sk_call_reply_error(call, err, why ? why : "the protobuf body could not be decoded");
            free(why);
            return NULL;
        }
    } else {
        obj = sk_jsontext_load(call->body, call->body_len, &jerr);
    }
    if (!obj || !json_is_object(obj)) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                          "the body of the request was in an unknown format: %s",
                          obj ? expected : jerr.text);
        json_decref(obj);
        return NULL;
    }
    if (sk_json_deeper_than(obj, SK_OBJECT_MAX_DEPTH)) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                          "the body of the request is nested more than %d levels deep",
                          SK_OBJECT_MAX_DEPTH);
        json_decref(obj);
        return NULL;
    }
    return obj;
}

json_t *sk_body_object(sk_api_call *call)
{
    json_t *obj = sk_body_decode(call, "expected a JSON object");
    if (!obj)
        return NULL;
    const char *want_av = call->res->api_version;
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    /* Like kube-apiserver's decoder, a body without kind/apiVersion takes
     * them from the URL; only a contradiction is an error. */
    if (!kind || !*kind) {
        kind = call->res->kind;
        json_object_set_new(obj, "kind", json_string(kind));
    }
    if (!av || !*av) {
        av = want_av;
        json_object_set_new(obj, "apiVersion", json_string(av));
    }
    if (strcmp(av, want_av) != 0) {
        sk_call_reply_errorf(
            call, SK_ERR_BAD_REQUEST,
            "the API version in the data (%s) does not match the expected API version (%s)", av,
            want_av);
        goto fail;
    }
    if (strcmp(kind, call->res->kind) != 0) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                          "the kind in the data (%s) does not match the expected kind (%s)", kind,
                          call->res->kind);
        goto fail;
    }
    json_t *meta = json_object_get(obj, "metadata");
    if (meta && !json_is_object(meta)) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST, "metadata must be an object");
        goto fail;
    }
    if (!meta)
        json_object_set_new(obj, "metadata", json_object());
    return obj;
fail:
    json_decref(obj);
    return NULL;
}

/* 422 Invalid on the field "patch", as kube-apiserver answers a patch whose
 * result fails strict decoding: kubectl prints the cause. */
static void reply_invalid_patch(sk_api_call *call, const char *value, const char *why)
{
    sk_buf full = SK_BUF_INIT;
    sk_buf_printf(&full, "%s \"%s\" is invalid: patch: Invalid value: ", call->res->kind,
                  call->name);
    sk_buf_json_string(&full, value);
    sk_buf_printf(&full, ": %s", why);
    json_t *causes = json_array();
    sk_buf detail = SK_BUF_INIT;
    sk_buf_printf(&detail, "Invalid value: %s", why);
    sk_status_add_cause(causes, "FieldValueInvalid", detail.data, "patch");
    sk_buf_free(&detail);
    sk_call_reply_status(call, SK_ERR_INVALID, full.data, call->res->group, call->res->kind,
                      call->name, causes);
    sk_buf_free(&full);
}

int sk_body_act_on_findings(sk_api_call *call, sk_field_validation mode, json_t *findings,
                            const json_t *patched)
{
    int rc = 0;
    size_t i;
    json_t *f;
    if (json_array_size(findings) == 0)
        goto out;
    if (mode == SK_FV_WARN) {
        json_array_foreach(findings, i, f) sk_call_add_warning(call, json_string_value(f));
        goto out;
    }
    char *msg = NULL;
    if (sk_fieldcheck_message(patched ? NULL : call->res, findings, &msg) != SK_OK)
        msg = NULL;
    if (!patched) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST, msg ? msg : "strict decoding error");
    } else {
        char *value = json_dumps(patched, JSON_COMPACT);
        reply_invalid_patch(call, value ? value : "", msg ? msg : "strict decoding error");
        free(value);
    }
    free(msg);
    rc = -1;
out:
    json_decref(findings);
    return rc;
}

int sk_body_check_fields(sk_api_call *call, sk_field_validation mode)
{
    if (mode == SK_FV_IGNORE || (call->content_type && sk_protobuf_is_media(call->content_type)))
        return 0; /* protobuf has no unknown or duplicate fields to report */
    json_t *findings = NULL;
    if (sk_fieldcheck_body(call->res, call->body, call->body_len, &findings) != SK_OK)
        return 0; /* malformed JSON is reported by the parser */
    return sk_body_act_on_findings(call, mode, findings, NULL);
}
