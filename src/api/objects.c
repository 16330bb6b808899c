/*
 * objects.c - single-object verbs: get, create, update (PUT), patch, delete,
 * and deletecollection.
 *
 * Server-managed metadata is owned here: uid and creationTimestamp are set
 * on create and carried over on every update, whatever the client sent (and
 * generation, which none of these kinds keeps, is never taken from a
 * client); resourceVersion is assigned by the store's writer.
 *
 * Read-modify-write (PUT without a resourceVersion, PATCH) follows
 * kube-apiserver's GuaranteedUpdate: read the current version, compute the
 * new object, write with the read revision as precondition, and on a
 * conflict that the client did not ask for, read again and retry. A client
 * resourceVersion is a hard precondition: a stale one is 409 Conflict.
 *
 * An update that changes nothing is not written (no new revision), as in
 * Kubernetes; kubectl apply relies on that to print "unchanged".
 */
#include "api/internal.h"
#include "api/fieldcheck.h"
#include "api/limits.h"
#include "api/patch.h"
#include "api/protobuf.h"
#include "api/status.h"
#include "api/validate.h"
#include "core/check.h"
#include "core/log.h"
#include "core/utf8.h"
#include "core/util.h"

#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_UPDATE_ATTEMPTS 8
#define GENERATE_SUFFIX_LEN 5
#define MAX_GENERATED_PREFIX (63 - GENERATE_SUFFIX_LEN)

/* ---- request body -------------------------------------------------------- */

/* Bodies sqlkube reads: JSON, and Kubernetes protobuf (kubectl's typed
 * clients send it), decoded to the same JSON. */
static int media_is_supported(const char *ct)
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
 * JSON object. On failure replies 400 and returns NULL; `expected` names
 * what a non-object should have been. New reference. */
static json_t *decode_body(sk_api_call *call, const char *expected)
{
    json_error_t jerr;
    json_t *obj = NULL;
    if (call->content_type && sk_protobuf_is_media(call->content_type)) {
        char *why = NULL;
        sk_err err = sk_protobuf_to_json(call->body, call->body_len, &obj, &why);
        if (err != SK_OK) {
            call_reply_error(call, err, why ? why : "the protobuf body could not be decoded");
            free(why);
            return NULL;
        }
    } else {
        obj = json_loadb(call->body, call->body_len, 0, &jerr);
    }
    if (!obj || !json_is_object(obj)) {
        call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                          "the body of the request was in an unknown format: %s",
                          obj ? expected : jerr.text);
        json_decref(obj);
        return NULL;
    }
    if (sk_json_deeper_than(obj, SK_OBJECT_MAX_DEPTH)) {
        call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                          "the body of the request is nested more than %d levels deep",
                          SK_OBJECT_MAX_DEPTH);
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* Parses the body as a JSON object of this call's kind. On failure replies
 * and returns NULL. New reference. */
static json_t *parse_body_object(sk_api_call *call)
{
    json_t *obj = decode_body(call, "expected a JSON object");
    if (!obj)
        return NULL;
    const char *want_av = sk_registry_api_version(call->res);
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
        call_reply_errorf(
            call, SK_ERR_BAD_REQUEST,
            "the API version in the data (%s) does not match the expected API version (%s)", av,
            want_av);
        goto fail;
    }
    if (strcmp(kind, call->res->kind) != 0) {
        call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                          "the kind in the data (%s) does not match the expected kind (%s)", kind,
                          call->res->kind);
        goto fail;
    }
    json_t *meta = json_object_get(obj, "metadata");
    if (meta && !json_is_object(meta)) {
        call_reply_error(call, SK_ERR_BAD_REQUEST, "metadata must be an object");
        goto fail;
    }
    if (!meta)
        json_object_set_new(obj, "metadata", json_object());
    return obj;
fail:
    json_decref(obj);
    return NULL;
}

static json_t *meta_of(json_t *obj)
{
    return json_object_get(obj, "metadata");
}

static const char *meta_str(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(meta_of(obj), key));
}

/* Checks metadata.namespace against the URL; sets it (or removes it for
 * cluster-scoped kinds). Replies and returns -1 on mismatch. */
static int settle_namespace(sk_api_call *call, json_t *obj)
{
    json_t *meta = meta_of(obj);
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (!call->res->namespaced) {
        json_object_del(meta, "namespace");
        return 0;
    }
    if (ns && *ns && strcmp(ns, call->ns) != 0) {
        call_reply_error(call, SK_ERR_BAD_REQUEST,
                         "the namespace of the provided object does not match the namespace sent "
                         "on the request");
        return -1;
    }
    json_object_set_new(meta, "namespace", json_string(call->ns));
    return 0;
}

/* Kind-specific defaulting, as the Kubernetes registry strategies do. */
static int apply_defaults(sk_api_call *call, json_t *obj)
{
    const char *kind = call->res->kind;
    if (strcmp(kind, "Namespace") == 0) {
        json_t *spec = json_object_get(obj, "spec");
        if (!json_is_object(spec)) {
            spec = json_object();
            json_object_set_new(obj, "spec", spec);
        }
        if (!json_object_get(spec, "finalizers"))
            json_object_set_new(spec, "finalizers", json_pack("[s]", "kubernetes"));
        json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Active"));
    } else if (strcmp(kind, "Secret") == 0) {
        if (!json_object_get(obj, "type"))
            json_object_set_new(obj, "type", json_string("Opaque"));
        json_t *sd = json_object_get(obj, "stringData");
        if (json_is_object(sd)) {
            json_t *data = json_object_get(obj, "data");
            if (!json_is_object(data)) {
                data = json_object();
                json_object_set_new(obj, "data", data);
            }
            const char *k;
            json_t *v;
            json_object_foreach(sd, k, v)
            {
                if (!json_is_string(v)) {
                    call_reply_error(call, SK_ERR_BAD_REQUEST, "stringData values must be strings");
                    return -1;
                }
                gnutls_datum_t in = {(unsigned char *)json_string_value(v),
                                     (unsigned)json_string_length(v)};
                gnutls_datum_t enc = {NULL, 0};
                SK_CHECK(gnutls_base64_encode2(&in, &enc) == 0);
                json_object_set_new(data, k, json_stringn((const char *)enc.data, enc.size));
                gnutls_free(enc.data);
            }
            json_object_del(obj, "stringData");
        }
    }
    return 0;
}

/* Validation through validate.c; replies 422 on failure. */
static int validate(sk_api_call *call, json_t *obj, json_t *old)
{
    json_t *causes = NULL;
    char *msg = NULL;
    sk_err err = sk_validate_object(call->res, obj, old, &causes, &msg);
    if (err == SK_OK)
        return 0;
    call_reply_status(call, err, msg ? msg : "invalid object", call->res->group, call->res->kind,
                      meta_str(obj, "name"), causes);
    free(msg);
    return -1;
}

static int dry_run(const sk_api_call *call)
{
    return call->q.dry_run && strcmp(call->q.dry_run, "All") == 0;
}

/* Checks ?dryRun; only "All" is defined. Replies on a bad value. */
static int check_dry_run(sk_api_call *call)
{
    if (call->q.dry_run && *call->q.dry_run && !dry_run(call)) {
        call_reply_error(call, SK_ERR_BAD_REQUEST,
                         "Invalid dryRun value: only \"All\" is supported");
        return -1;
    }
    return 0;
}

/* ---- field validation (?fieldValidation=) ---------------------------------- */

typedef enum { FV_IGNORE, FV_WARN, FV_STRICT } field_validation;

/* The directive; absent means Warn, as kube-apiserver. Replies on a bad value. */
static int field_validation_mode(sk_api_call *call, field_validation *out)
{
    const char *v = call->q.field_validation;
    if (!v || !*v || strcmp(v, "Warn") == 0)
        *out = FV_WARN;
    else if (strcmp(v, "Strict") == 0)
        *out = FV_STRICT;
    else if (strcmp(v, "Ignore") == 0)
        *out = FV_IGNORE;
    else {
        call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                          "fieldValidation: Unsupported value: \"%s\": supported values: "
                          "\"Ignore\", \"Strict\", \"Warn\"",
                          v);
        return -1;
    }
    return 0;
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
    call_reply_status(call, SK_ERR_INVALID, full.data, call->res->group, call->res->kind,
                      call->name, causes);
    sk_buf_free(&full);
}

/* Acts on strict-decoding findings (stolen): warnings, or for Strict a 400
 * (POST/PUT) or a 422 on the patch (patched != NULL). Returns -1 if it replied. */
static int act_on_findings(sk_api_call *call, field_validation mode, json_t *findings,
                           const json_t *patched)
{
    int rc = 0;
    size_t i;
    json_t *f;
    if (json_array_size(findings) == 0)
        goto out;
    if (mode == FV_WARN) {
        json_array_foreach(findings, i, f) call_add_warning(call, json_string_value(f));
        goto out;
    }
    char *msg = NULL;
    if (sk_fieldcheck_message(patched ? NULL : call->res, findings, &msg) != SK_OK)
        msg = NULL;
    if (!patched) {
        call_reply_error(call, SK_ERR_BAD_REQUEST, msg ? msg : "strict decoding error");
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

/* POST/PUT: strict decoding of the JSON body bytes. */
static int check_body_fields(sk_api_call *call)
{
    field_validation mode;
    if (field_validation_mode(call, &mode) < 0)
        return -1;
    if (mode == FV_IGNORE || (call->content_type && sk_protobuf_is_media(call->content_type)))
        return 0; /* protobuf has no unknown or duplicate fields to report */
    json_t *findings = NULL;
    if (sk_fieldcheck_body(call->res, call->body, call->body_len, &findings) != SK_OK)
        return 0; /* malformed JSON is reported by the parser */
    return act_on_findings(call, mode, findings, NULL);
}

/* ---- get ------------------------------------------------------------------- */

int handle_get(sk_api_call *call)
{
    int64_t min_rev = -1; /* unset: a consistent read */
    if (call->q.rv && *call->q.rv && (min_rev = sk_parse_i64(call->q.rv)) < 0) {
        call_reply_error(call, SK_ERR_BAD_REQUEST, "invalid resource version");
        return STEP_DONE;
    }
    int64_t rev = 0;
    int rc = plan_read(call, min_rev, handle_get, &rev);
    if (rc != PLAN_NOW)
        return rc;
    sk_row row = {0};
    sk_blob *blob = NULL;
    int res = sk_cache_resource(call->api->cache, call->res->resource);
    sk_err err = sk_cache_get(call->api->cache, res, call->ns, call->name, rev, &blob);
    if (err == SK_OK) {
        row.value = (char *)sk_blob_data(blob, &row.value_len);
        row.rev = sk_blob_rev(blob);
    } else if (err != SK_ERR_NOT_FOUND) {
        /* The cache lags behind the planned revision: read the store. */
        err = sk_store_get(call->api->store, call->res->resource, call->ns, call->name, 0, &row);
    }
    if (err != SK_OK) {
        call_reply_store_error(call, err, call->name);
        goto out;
    }
    if (call->want_table)
        table_reply_single(call, &row);
    else
        call_reply_raw(call, 200, row.value, row.value_len);
out:
    if (blob)
        sk_blob_unref(blob);
    else
        sk_row_clear(&row);
    return STEP_DONE;
}

/* ---- create ---------------------------------------------------------------- */

static int create_done(sk_api_call *call)
{
    if (call->write_err != SK_OK) {
        if (call->write_err == SK_ERR_NOT_FOUND) {
            sk_buf msg = SK_BUF_INIT;
            sk_buf_printf(&msg, "namespaces \"%s\" not found", call->ns);
            call_reply_status(call, SK_ERR_NOT_FOUND, msg.data, "", "namespaces", call->ns, NULL);
            sk_buf_free(&msg);
        } else {
            call_reply_store_error(call, call->write_err, meta_str(call->work, "name"));
        }
        return STEP_DONE;
    }
    call_reply_raw(call, 201, call->write_row.value, call->write_row.value_len);
    return STEP_DONE;
}

/* kube's SimpleNameGenerator: the prefix cut to 58 bytes (a 63-byte name
 * with the suffix), on a character boundary so the name stays UTF-8 for
 * validation to judge, plus 5 random characters. */
static void generate_name(json_t *meta, const char *prefix)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char rnd[GENERATE_SUFFIX_LEN];
    sk_random_bytes(rnd, sizeof rnd);
    char name[MAX_GENERATED_PREFIX + GENERATE_SUFFIX_LEN + 1];
    size_t n = sk_utf8_prefix(prefix, strlen(prefix), MAX_GENERATED_PREFIX);
    memcpy(name, prefix, n);
    for (int i = 0; i < GENERATE_SUFFIX_LEN; i++)
        name[n + i] = alphabet[rnd[i] % (sizeof alphabet - 1)];
    name[n + GENERATE_SUFFIX_LEN] = '\0';
    json_object_set_new(meta, "name", json_string(name));
}

int handle_create(sk_api_call *call)
{
    if (!media_is_supported(call->content_type)) {
        call_reply_error(call, SK_ERR_UNSUPPORTED_MEDIA,
                         "the body of the request was in an unsupported content type");
        return STEP_DONE;
    }
    if (check_dry_run(call) < 0)
        return STEP_DONE;
    json_t *obj = parse_body_object(call);
    if (!obj)
        return STEP_DONE;
    if (check_body_fields(call) < 0)
        goto fail;
    json_t *meta = meta_of(obj);
    const char *name = meta_str(obj, "name");
    const char *gen = meta_str(obj, "generateName");
    if ((!name || !*name) && gen && *gen)
        generate_name(meta, gen);
    if (settle_namespace(call, obj) < 0 || apply_defaults(call, obj) < 0)
        goto fail;
    char uid[37], ts[21];
    sk_uuid4(uid);
    sk_format_rfc3339(sk_wall_s(), ts);
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string(ts));
    /* None of the kinds served keeps a generation (only workload strategies
     * set one in kube-apiserver): it is not the client's to set either. */
    json_object_del(meta, "generation");
    json_object_del(meta, "resourceVersion");
    json_object_del(meta, "selfLink");
    json_object_del(meta, "deletionTimestamp");
    json_object_del(meta, "deletionGracePeriodSeconds");
    if (validate(call, obj, NULL) < 0)
        goto fail;
    sk_fieldcheck_prune(call->res, obj);
    if (dry_run(call)) {
        call_reply_json(call, 201, obj);
        json_decref(obj);
        return STEP_DONE;
    }
    call->work = obj;
    sk_write w = {
        .op = SK_WRITE_CREATE,
        .resource = call->res->resource,
        .ns = call->ns,
        .name = meta_str(obj, "name"),
        .object = json_incref(obj),
        .require_namespace = call->res->namespaced ? call->ns : NULL,
        .expires_at_ms = sk_expiry_for(call->res, obj, call->api->event_ttl_s),
        .max_bytes = call->api->max_object_bytes,
    };
    return call_submit_write(call, &w, create_done);
fail:
    json_decref(obj);
    return STEP_DONE;
}

/* ---- update and patch (read-modify-write) ---------------------------------- */

/* Computes the object to write from old (the live version, parsed): for PUT
 * the client's body, for PATCH the patch applied to old. Replies and
 * returns -1 on a client error. */
typedef int (*compute_fn)(sk_api_call *call, const json_t *old, json_t **out);

static int rmw_read_and_write(sk_api_call *call);

static int compute_put(sk_api_call *call, const json_t *old, json_t **out)
{
    json_t *obj = parse_body_object(call);
    if (!obj)
        return -1;
    if (call->attempts == 0 && check_body_fields(call) < 0) {
        json_decref(obj);
        return -1;
    }
    *out = obj;
    return 0;
}

static int compute_patch(sk_api_call *call, const json_t *old, json_t **out)
{
    sk_patch_type type;
    sk_err err = sk_patch_type_parse(call->content_type, &type);
    if (err != SK_OK) {
        call_reply_error(call, SK_ERR_UNSUPPORTED_MEDIA,
                         "the body of the request was in an unknown format - accepted media types "
                         "include: application/json-patch+json, application/merge-patch+json, "
                         "application/strategic-merge-patch+json");
        return -1;
    }
    json_t *res = NULL;
    char *msg = NULL;
    err = sk_patch_apply(type, old, call->body, call->body_len, &res, &msg);
    if (err != SK_OK) {
        call_reply_error(call, err, msg ? msg : "the patch could not be applied");
        free(msg);
        return -1;
    }
    if (!json_is_object(res) || !json_is_object(json_object_get(res, "metadata"))) {
        json_decref(res);
        call_reply_error(call, SK_ERR_BAD_REQUEST, "the patched object is not a valid object");
        return -1;
    }
    if (sk_json_deeper_than(res, SK_OBJECT_MAX_DEPTH)) {
        json_decref(res);
        call_reply_errorf(call, SK_ERR_INVALID, "the patched object is nested more than %d levels deep",
                          SK_OBJECT_MAX_DEPTH);
        return -1;
    }
    field_validation mode;
    if (field_validation_mode(call, &mode) < 0) {
        json_decref(res);
        return -1;
    }
    if (mode != FV_IGNORE && call->attempts == 0) {
        json_t *findings = NULL;
        sk_err ferr = type == SK_PATCH_JSON ? sk_fieldcheck_unknown(call->res, res, &findings)
                                            : sk_fieldcheck_patch(call->res, call->body,
                                                                  call->body_len, res, &findings);
        if (ferr == SK_OK && act_on_findings(call, mode, findings, res) < 0) {
            json_decref(res);
            return -1;
        }
    }
    *out = res;
    return 0;
}

static int is_put(const sk_api_call *call)
{
    return strcmp(call->method, "PUT") == 0;
}

/* Carries server-managed metadata over from old to obj; enforces identity. */
static int carry_metadata(sk_api_call *call, json_t *obj, json_t *old)
{
    json_t *meta = meta_of(obj), *old_meta = meta_of(old);
    const char *name = meta_str(obj, "name");
    if (!name || strcmp(name, call->name) != 0) {
        call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                          "the name of the object (%s) does not match the name on the URL (%s)",
                          name ? name : "", call->name);
        return -1;
    }
    const char *uid = meta_str(obj, "uid");
    const char *old_uid = meta_str(old, "uid");
    if (uid && *uid && strcmp(uid, old_uid ? old_uid : "") != 0) {
        call_reply_errorf(call, SK_ERR_CONFLICT,
                          "Precondition failed: UID in precondition: %s, UID in object meta: %s",
                          uid, old_uid ? old_uid : "");
        return -1;
    }
    static const char *const carried[] = {"uid", "creationTimestamp", "deletionTimestamp",
                                          "deletionGracePeriodSeconds", "generation"};
    for (size_t i = 0; i < sizeof carried / sizeof *carried; i++) {
        json_t *v = json_object_get(old_meta, carried[i]);
        if (v)
            json_object_set(meta, carried[i], v);
        else
            json_object_del(meta, carried[i]);
    }
    json_object_del(meta, "selfLink");
    return 0;
}

static int rmw_done(sk_api_call *call)
{
    if (call->write_err == SK_ERR_CONFLICT && call->client_rev == 0 &&
        ++call->attempts < MAX_UPDATE_ATTEMPTS) {
        json_decref(call->work);
        call->work = NULL;
        call->next = rmw_read_and_write;
        return STEP_AGAIN;
    }
    if (call->write_err != SK_OK) {
        call_reply_store_error(call, call->write_err, call->name);
        return STEP_DONE;
    }
    call_reply_raw(call, 200, call->write_row.value, call->write_row.value_len);
    return STEP_DONE;
}

static int rmw_read_and_write(sk_api_call *call)
{
    sk_row_clear(&call->current);
    sk_err err = sk_store_get(call->api->store, call->res->resource, call->ns, call->name, 0,
                              &call->current);
    if (err != SK_OK) {
        call_reply_store_error(call, err, call->name);
        return STEP_DONE;
    }
    json_t *obj = NULL;
    json_t *old = parse_stored(call->res, call->current.value, call->current.value_len, call->name);
    if (!old) {
        call_reply_errorf(call, SK_ERR_INTERNAL,
                          "the stored object %s \"%s\" cannot be decoded: it can only be deleted",
                          call->res->resource, call->name);
        return STEP_DONE;
    }
    int rc = STEP_DONE;
    if ((is_put(call) ? compute_put : compute_patch)(call, old, &obj) < 0)
        goto out;
    /* The object's resourceVersion, if any, is the client's precondition. */
    const char *rv = meta_str(obj, "resourceVersion");
    call->client_rev = 0;
    if (rv && *rv) {
        call->client_rev = sk_parse_i64(rv);
        if (call->client_rev <= 0) {
            call_reply_error(call, SK_ERR_BAD_REQUEST, "invalid resourceVersion in the object");
            goto out;
        }
        if (call->client_rev != call->current.rev) {
            call_reply_store_error(call, SK_ERR_CONFLICT, call->name);
            goto out;
        }
    }
    if (settle_namespace(call, obj) < 0 || carry_metadata(call, obj, old) < 0 ||
        apply_defaults(call, obj) < 0 || validate(call, obj, old) < 0)
        goto out;
    sk_fieldcheck_prune(call->res, obj);
    /* Compare with the resourceVersion normalised: an unchanged object is not written. */
    json_object_set(meta_of(obj), "resourceVersion",
                    json_object_get(meta_of(old), "resourceVersion"));
    if (json_equal(obj, old) || dry_run(call)) {
        call_reply_json(call, 200, dry_run(call) ? obj : old);
        goto out;
    }
    call->work = json_incref(obj);
    sk_write w = {
        .op = SK_WRITE_UPDATE,
        .resource = call->res->resource,
        .ns = call->ns,
        .name = call->name,
        .expected_rev = call->current.rev,
        .object = json_incref(obj),
        .expires_at_ms = sk_expiry_for(call->res, obj, call->api->event_ttl_s),
        .max_bytes = call->api->max_object_bytes,
    };
    rc = call_submit_write(call, &w, rmw_done);
out:
    json_decref(obj);
    json_decref(old);
    return rc;
}

int handle_update(sk_api_call *call)
{
    if (!media_is_supported(call->content_type)) {
        call_reply_error(call, SK_ERR_UNSUPPORTED_MEDIA,
                         "the body of the request was in an unsupported content type");
        return STEP_DONE;
    }
    field_validation mode;
    if (check_dry_run(call) < 0 || field_validation_mode(call, &mode) < 0)
        return STEP_DONE;
    return rmw_read_and_write(call);
}

int handle_patch(sk_api_call *call)
{
    field_validation mode; /* options are checked before the object is read, as kube does */
    if (check_dry_run(call) < 0 || field_validation_mode(call, &mode) < 0)
        return STEP_DONE;
    return rmw_read_and_write(call);
}

/* ---- delete ---------------------------------------------------------------- */

static int delete_done(sk_api_call *call)
{
    if (call->write_err != SK_OK) {
        call_reply_store_error(call, call->write_err, call->name);
        return STEP_DONE;
    }
    call_reply_raw(call, 200, call->write_row.value, call->write_row.value_len);
    return STEP_DONE;
}

/* The DeleteOptions fields sqlkube reads or that kube decodes, with the
 * types a typed decode requires: a wrongly typed one is 400, never ignored
 * (a precondition that is ignored deletes unconditionally). */
static const struct {
    const char *path, *go_struct, *go_type;
    json_type want; /* JSON_TRUE stands for either boolean */
    int list_of_strings;
} delete_option_types[] = {
    {"kind", "DeleteOptions", "string", JSON_STRING, 0},
    {"apiVersion", "DeleteOptions", "string", JSON_STRING, 0},
    {"gracePeriodSeconds", "DeleteOptions", "int64", JSON_INTEGER, 0},
    {"preconditions", "DeleteOptions", "v1.Preconditions", JSON_OBJECT, 0},
    {"preconditions.uid", "Preconditions", "types.UID", JSON_STRING, 0},
    {"preconditions.resourceVersion", "Preconditions", "string", JSON_STRING, 0},
    {"orphanDependents", "DeleteOptions", "bool", JSON_TRUE, 0},
    {"propagationPolicy", "DeleteOptions", "v1.DeletionPropagation", JSON_STRING, 0},
    {"dryRun", "DeleteOptions", "[]string", JSON_ARRAY, 1},
    {"ignoreStoreReadErrorWithClusterBreakingPotential", "DeleteOptions", "bool", JSON_TRUE, 0},
};

static int has_type(const json_t *v, json_type want)
{
    return want == JSON_TRUE ? json_is_boolean(v) : json_typeof(v) == want;
}

/* Checks opts against delete_option_types; replies 400 as a typed decode
 * would on the first mismatch. */
static int check_delete_options(sk_api_call *call, const json_t *opts)
{
    for (size_t i = 0; i < sizeof delete_option_types / sizeof *delete_option_types; i++) {
        const char *path = delete_option_types[i].path;
        const char *dot = strchr(path, '.');
        const json_t *v = dot ? json_object_get(json_object_get(opts, "preconditions"), dot + 1)
                              : json_object_get(opts, path);
        const char *go_type = delete_option_types[i].go_type;
        const json_t *bad = NULL;
        if (v && !json_is_null(v) && !has_type(v, delete_option_types[i].want)) {
            bad = v;
        } else if (delete_option_types[i].list_of_strings && json_is_array(v)) {
            size_t k;
            const json_t *x;
            json_array_foreach(v, k, x)
            {
                if (!json_is_string(x)) {
                    bad = x;
                    go_type = "string";
                    break;
                }
            }
        }
        if (bad) {
            call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                              "json: cannot unmarshal %s into Go struct field %s.%s of type %s",
                              sk_validate_go_kind(bad), delete_option_types[i].go_struct, path, go_type);
            return -1;
        }
    }
    return 0;
}

/* Reads DeleteOptions preconditions from the body, if any. */
static int delete_preconditions(sk_api_call *call, int64_t *rev, char **uid)
{
    *rev = 0;
    *uid = NULL;
    if (call->body_len == 0)
        return 0;
    json_t *opts = decode_body(call, "expected DeleteOptions");
    if (!opts)
        return -1;
    int rc = check_delete_options(call, opts);
    json_t *pre = json_object_get(opts, "preconditions");
    const char *rv = json_string_value(json_object_get(pre, "resourceVersion"));
    const char *u = json_string_value(json_object_get(pre, "uid"));
    if (rc == 0 && rv && *rv) {
        *rev = sk_parse_i64(rv);
        if (*rev <= 0) {
            call_reply_error(call, SK_ERR_BAD_REQUEST, "invalid resourceVersion precondition");
            rc = -1;
        }
    }
    if (rc == 0 && u && *u) {
        *uid = strdup(u);
        SK_CHECK_ALLOC(*uid);
    }
    json_decref(opts);
    return rc;
}

/* What the tombstone of a stored version that does not parse carries. */
static json_t *delete_skeleton(const sk_api_call *call)
{
    return json_pack("{s:s, s:s}", "kind", call->res->kind, "apiVersion",
                     sk_registry_api_version(call->res));
}

int handle_delete(sk_api_call *call)
{
    if (check_dry_run(call) < 0)
        return STEP_DONE;
    int64_t rev;
    char *uid;
    if (delete_preconditions(call, &rev, &uid) < 0)
        return STEP_DONE;
    int rc;
    if (dry_run(call)) {
        rc = handle_get(call);
    } else {
        /* The uid string must outlive the write: keep it in the call's work object. */
        call->work = json_pack("{s:s?}", "uid", uid);
        sk_write w = {
            .op = SK_WRITE_DELETE,
            .resource = call->res->resource,
            .ns = call->ns,
            .name = call->name,
            .expected_rev = rev,
            .expected_uid = json_string_value(json_object_get(call->work, "uid")),
            .cascade_namespace = strcmp(call->res->resource, "namespaces") == 0,
            .object = delete_skeleton(call),
        };
        rc = call_submit_write(call, &w, delete_done);
    }
    free(uid);
    return rc;
}

/* ---- deletecollection ------------------------------------------------------ */

typedef struct collect_ctx {
    sk_api_call *call;
    sk_label_selector *labels;
    sk_field_selector *fields;
    char last_ns[256], last_name[256];
    int seen;
} collect_ctx;

static int collect_row(void *arg, const sk_row *row)
{
    collect_ctx *cc = arg;
    sk_api_call *call = cc->call;
    cc->seen++;
    snprintf(cc->last_ns, sizeof cc->last_ns, "%s", row->ns);
    snprintf(cc->last_name, sizeof cc->last_name, "%s", row->name);
    int selects_all = sk_label_selector_is_empty(cc->labels) && !cc->fields;
    json_t *obj = selects_all ? NULL : call_parse_stored(call, row->value, row->value_len, row->name);
    if (selects_all ||
        (obj && sk_label_selector_matches(cc->labels, json_object_get(meta_of(obj), "labels")) &&
         (!cc->fields || sk_field_selector_matches(cc->fields, obj)))) {
        call->del_names = realloc(call->del_names, sizeof(char *) * (size_t)(call->del_count + 1));
        call->del_revs = realloc(call->del_revs, sizeof(int64_t) * (size_t)(call->del_count + 1));
        SK_CHECK_ALLOC(call->del_names);
        SK_CHECK_ALLOC(call->del_revs);
        call->del_names[call->del_count] = strdup(row->name);
        SK_CHECK_ALLOC(call->del_names[call->del_count]);
        call->del_revs[call->del_count] = row->rev;
        call->del_count++;
    }
    json_decref(obj);
    return 0;
}

static int delete_next(sk_api_call *call);

static int delete_one_done(sk_api_call *call)
{
    if (call->write_err == SK_OK) {
        json_t *obj = call_parse_stored(call, call->write_row.value, call->write_row.value_len,
                                        call->write_row.name);
        if (obj)
            json_array_append_new(call->del_items, obj);
    } else if (call->write_err != SK_ERR_NOT_FOUND && call->write_err != SK_ERR_CONFLICT) {
        call_reply_store_error(call, call->write_err, call->del_names[call->del_next - 1]);
        return STEP_DONE;
    }
    call->next = delete_next;
    return STEP_AGAIN;
}

static int delete_next(sk_api_call *call)
{
    /* A client that went away stops the deletions it asked for. */
    if (call->del_next < call->del_count && call->client_gone &&
        call->client_gone(call->client_ctx))
        call->del_count = call->del_next;
    if (call->del_next == call->del_count) {
        json_t *list =
            json_pack("{s:s, s:s, s:{}, s:O}", "kind", call->res->list_kind, "apiVersion",
                      sk_registry_api_version(call->res), "metadata", "items", call->del_items);
        call_reply_json(call, 200, list);
        json_decref(list);
        return STEP_DONE;
    }
    int i = call->del_next++;
    sk_write w = {
        .op = SK_WRITE_DELETE,
        .resource = call->res->resource,
        .ns = call->ns,
        .name = call->del_names[i],
        .expected_rev = call->del_revs[i],
        .object = delete_skeleton(call),
    };
    return call_submit_write(call, &w, delete_one_done);
}

int handle_delete_collection(sk_api_call *call)
{
    if (check_dry_run(call) < 0)
        return STEP_DONE;
    collect_ctx cc = {.call = call};
    char *msg = NULL;
    int rc = STEP_DONE;
    sk_err err = sk_label_selector_parse(call->q.label_selector ? call->q.label_selector : "",
                                         &cc.labels, &msg);
    if (err == SK_OK && call->q.field_selector)
        err = sk_field_selector_parse(call->q.field_selector, call->res, &cc.fields, &msg);
    if (err != SK_OK) {
        call_reply_error(call, err, msg ? msg : "invalid selector");
        goto out;
    }
    int64_t rev;
    if ((err = sk_store_revisions(call->api->store, &rev, NULL)) != SK_OK) {
        call_reply_store_error(call, err, "");
        goto out;
    }
    if (rev == 0)
        rev = 1;
    sk_list_query q = {.resource = call->res->resource, .ns = call->ns, .rev = rev, .limit = 500};
    do {
        cc.seen = 0;
        err = sk_store_list(call->api->store, &q, collect_row, &cc);
        q.after_ns = cc.last_ns;
        q.after_name = cc.last_name;
    } while (err == SK_OK && cc.seen == q.limit);
    if (err != SK_OK) {
        call_reply_store_error(call, err, "");
        goto out;
    }
    call->del_items = json_array();
    if (dry_run(call)) {
        call->del_next = call->del_count;
        rc = delete_next(call);
        goto out;
    }
    call->next = delete_next;
    rc = STEP_AGAIN;
out:
    free(msg);
    sk_label_selector_free(cc.labels);
    sk_field_selector_free(cc.fields);
    return rc;
}
