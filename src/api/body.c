/*
 * body.c - see body.h.
 */
#include "api/body.h"
#include "core/check.h"
#include "kube/fieldcheck.h"
#include "core/jsontext.h"
#include "kube/limits.h"
#include "kube/protobuf.h"
#include "kube/registry.h"
#include "kube/status.h"
#include "kube/typed.h"

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

/* kube's transformDecodeError for a body whose kind could not be read:
 * why is what its JSON serializer's kind probe (SimpleMetaFactory.
 * Interpret: json.Unmarshal into an apiVersion/kind struct) says, then
 * come the body's first 30 bytes, as text when it starts with '{', else in
 * hex. */
static void reply_unrecognized(sk_api_call *call, const char *why)
{
    sk_buf m = SK_BUF_INIT;
    size_t n = call->body_len < 30 ? call->body_len : 30;
    sk_buf_printf(&m,
                  "the object provided is unrecognized (must be of type %s): couldn't get "
                  "version/kind; json parse error: %s (",
                  call->res->kind, why);
    if (n == 0)
        sk_buf_puts(&m, "<empty>");
    else if (call->body[0] == '{')
        sk_buf_append(&m, call->body, n);
    else
        for (size_t i = 0; i < n; i++)
            sk_buf_printf(&m, "%02x", (unsigned char)call->body[i]);
    sk_buf_puts(&m, n < call->body_len ? " ...)" : ")");
    sk_call_reply_error(call, SK_ERR_BAD_REQUEST, m.data);
    sk_buf_free(&m);
}

/* What kube's kind probe says of a JSON body that jansson read as obj
 * (NULL: did not read), or NULL where the probe reads apiVersion and kind.
 * New string. */
static char *probe_error(const sk_api_call *call, const json_t *obj)
{
    sk_buf b = SK_BUF_INIT;
    const char *key;
    const json_t *v;
    if (!obj)
        return sk_typed_go_syntax_error(call->body, call->body_len);
    if (json_is_null(obj))
        return NULL;
    if (!json_is_object(obj)) {
        sk_buf_printf(&b,
                      "json: cannot unmarshal %s into Go value of type struct { APIVersion "
                      "string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                      "\"json:\\\"kind,omitempty\\\"\" }",
                      sk_typed_go_kind(obj));
        return sk_buf_steal(&b, NULL);
    }
    json_object_foreach((json_t *)obj, key, v)
    {
        if ((!strcmp(key, "apiVersion") || !strcmp(key, "kind")) && !json_is_string(v) &&
            !json_is_null(v)) {
            sk_buf_printf(&b, "json: cannot unmarshal %s into Go struct field .%s of type string",
                          sk_typed_go_kind(v), key);
            return sk_buf_steal(&b, NULL);
        }
    }
    return NULL;
}

/* Decodes the body (JSON, or Kubernetes protobuf to the same JSON) into a
 * JSON object; with of_kind, a JSON body whose kind cannot be read is
 * refused as kube refuses it for an object of that kind. */
static json_t *decode(sk_api_call *call, const char *expected, int of_kind)
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
        char *why = of_kind ? probe_error(call, obj) : NULL;
        if (why) {
            reply_unrecognized(call, why);
            free(why);
            json_decref(obj);
            return NULL;
        }
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

json_t *sk_body_decode(sk_api_call *call, const char *expected)
{
    return decode(call, expected, 0);
}

/* A body of another built-in kind (av, kind) than the URL's: kube decodes
 * it as that kind and fails to convert it to the URL's internal type
 * (package "core" for the core group, else the group's first label; the
 * versioned one is named by the version). Returns -1 after replying, 0
 * when either kind is not built in (the caller words the refusal). */
static int reply_unconvertible(sk_api_call *call, const char *av, const char *kind)
{
    const sk_resource *r = call->res;
    const char *slash = strchr(av, '/');
    const char *version = slash ? slash + 1 : av;
    char *group = slash ? strndup(av, (size_t)(slash - av)) : strdup("");
    SK_CHECK_ALLOC(group);
    const sk_resource *from = sk_registry_find_kind(group, version, kind);
    free(group);
    if (!from || from->custom || r->custom)
        return 0;
    const char *to_group = r->stored_as ? r->stored_as->group : r->group;
    size_t pkg_len = *to_group ? strcspn(to_group, ".") : 4;
    sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                         "%s in version \"%s\" cannot be handled as a %s: converting (%s.%s) to "
                         "(%.*s.%s): unknown conversion",
                         kind, version, r->kind, version, kind, (int)pkg_len,
                         *to_group ? to_group : "core", r->kind);
    return -1;
}

json_t *sk_body_object(sk_api_call *call)
{
    json_t *obj = decode(call, "expected a JSON object", 1);
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
    if (strcmp(kind, call->res->kind) != 0 && reply_unconvertible(call, av, kind) < 0)
        goto fail;
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
