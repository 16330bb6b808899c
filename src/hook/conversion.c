/*
 * conversion.c - see conversion.h. The steps and texts follow kube 1.32's
 * apiextensions-apiserver pkg/apiserver/conversion: webhook_converter.go
 * (the review, the call, the answer's kind, uid and result: "conversion
 * webhook for GVK failed: ...") under converter.go's delegatingCRConverter
 * (what is sent, the count, each object's checks and the metadata restored:
 * "conversion for GVK ..."). kube hands the webhook converter a list whose
 * kind is unset when it converts one object, so its inner message names
 * "/, Kind=" there; the texts here are the same.
 *
 * The whole call is bounded by kube's webhook client timeout (30 s: a CRD
 * has no timeoutSeconds for its conversion webhook).
 */
#include "hook/conversion.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/util.h"
#include "kube/validate.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_S 30

/* The webhook's clientConfig compiled, and the review version it is sent:
 * the first of its conversionReviewVersions kube knows (NULL: none). */
typedef struct converter {
    sk_hook_endpoint *endpoint;
    const char *review_version;
} converter;

static void converter_init(converter *cv, sk_hook_client *c, const json_t *webhook)
{
    cv->endpoint = sk_hook_endpoint_new(c, json_object_get(webhook, "clientConfig"));
    cv->review_version = NULL;
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(webhook, "conversionReviewVersions"), i, v)
    {
        const char *s = json_string_value(v);
        if (!cv->review_version && s && (strcmp(s, "v1") == 0 || strcmp(s, "v1beta1") == 0))
            cv->review_version = s;
    }
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    sk_buf b = SK_BUF_INIT;
    sk_buf_vprintf(&b, f, ap);
    va_end(ap);
    return sk_buf_steal(&b, NULL);
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static const char *meta_str(const json_t *obj, const char *key)
{
    return str(json_object_get(obj, "metadata"), key);
}

/* An apiVersion as Go's GroupVersion prints it (the same text). */
static const char *gv_of(const json_t *obj)
{
    return str(obj, "apiVersion");
}

/* Go's GroupVersionKind text of obj's apiVersion and kind (a core-group
 * version prints with a leading slash, as does an empty one). New. */
static char *gvk_text(const json_t *obj)
{
    const char *av = gv_of(obj);
    return fmt("%s%s, Kind=%s", strchr(av, '/') ? "" : "/", av, str(obj, "kind"));
}

/* The webhook's answer (getConvertedObjectsFromResponse): NULL, or why it
 * is refused (new). *objs: its convertedObjects (borrowed from answer;
 * NULL when it has none). */
static char *refused(const json_t *answer, const char *uid, int v1, const json_t **objs)
{
    if (v1 && (strcmp(str(answer, "apiVersion"), "apiextensions.k8s.io/v1") != 0 ||
               strcmp(str(answer, "kind"), "ConversionReview") != 0)) {
        char *got = gvk_text(answer);
        char *m = fmt("expected webhook response of apiextensions.k8s.io/v1, "
                      "Kind=ConversionReview, got %s",
                      got);
        free(got);
        return m;
    }
    const json_t *resp = json_object_get(answer, "response");
    if (!json_is_object(resp))
        return strdup("no response provided");
    if (v1 && strcmp(str(resp, "uid"), uid) != 0) {
        sk_buf b = SK_BUF_INIT;
        sk_buf_puts(&b, "expected response.uid=");
        sk_buf_go_quoted(&b, uid);
        sk_buf_puts(&b, ", got ");
        sk_buf_go_quoted(&b, str(resp, "uid"));
        return sk_buf_steal(&b, NULL);
    }
    const json_t *result = json_object_get(resp, "result");
    if (strcmp(str(result, "status"), "Success") != 0) {
        const char *m = str(result, "message");
        return *m ? strdup(m)
                  : fmt("response.result.status was '%s', not 'Success'", str(result, "status"));
    }
    *objs = json_object_get(resp, "convertedObjects");
    return NULL;
}

/* validateConvertedObject: NULL, or why (new) converted is not original. */
static char *not_same(const json_t *in, const json_t *out)
{
    if (strcmp(str(in, "kind"), str(out, "kind")) != 0)
        return fmt("must have the same kind: %s != %s", str(in, "kind"), str(out, "kind"));
    static const char *const fields[][2] = {
        {"name", "name"}, {"namespace", "namespace"}, {"uid", "UID"}};
    for (size_t i = 0; i < 3; i++) {
        const char *a = meta_str(in, fields[i][0]), *b = meta_str(out, fields[i][0]);
        if (strcmp(a, b) != 0)
            return fmt("must have the same %s: %s != %s", fields[i][1], a, b);
    }
    return NULL;
}

/* Go's %T of a JSON value as encoding/json decodes it into interface{}. */
static const char *go_type(const json_t *v)
{
    return json_is_object(v)    ? "map[string]interface {}"
           : json_is_array(v)   ? "[]interface {}"
           : json_is_string(v)  ? "string"
           : json_is_number(v)  ? "float64"
           : json_is_boolean(v) ? "bool"
                                : "<nil>";
}

/* restoreObjectMeta: converted's metadata made original's again, but for
 * the labels and annotations the webhook answered. NULL, or why not (new). */
static char *restore_meta(const json_t *original, json_t *converted)
{
    const json_t *cm = json_object_get(converted, "metadata");
    const json_t *om = json_object_get(original, "metadata");
    if (!cm && !om)
        return NULL;
    if (!cm)
        return strdup("missing metadata in converted object");
    if (!json_is_object(cm))
        return fmt("invalid metadata of type %s in converted object", go_type(cm));
    json_t *result = om ? json_deep_copy(om) : json_object();
    SK_CHECK_ALLOC(result);
    char *why = NULL;
    /* kube's paths: the annotations' is "metadata.annotation" */
    static const char *const fields[][2] = {{"labels", "metadata.labels"},
                                            {"annotations", "metadata.annotation"}};
    for (size_t i = 0; i < 2 && !why; i++) {
        const char *name = fields[i][0];
        const json_t *field = json_object_get(cm, name);
        if (!field || json_is_null(field)) {
            json_object_del(result, name);
            continue;
        }
        if (!json_is_object(field)) {
            why = fmt("invalid metadata.%s of type %s in converted object", name, go_type(field));
            break;
        }
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)field, k, v)
        {
            if (!why && !json_is_string(v))
                why = fmt("metadata.%s[%s] must be a string, but is %s in converted object", name,
                          k, go_type(v));
        }
        /* what the webhook changed is validated, as kube validates it */
        if (!why && !json_equal(field, json_object_get(om, name))) {
            sk_field_errors *fe = sk_field_errors_new();
            if (i == 0)
                sk_validate_labels(fe, field, fields[i][1]);
            else
                sk_validate_annotations(fe, field, fields[i][1]);
            if (sk_field_errors_count(fe) > 0)
                why = sk_field_errors_message(fe);
            sk_field_errors_free(fe);
        }
        if (!why)
            json_object_set_new(result, name, json_deep_copy(field));
    }
    if (why)
        json_decref(result);
    else
        json_object_set_new(converted, "metadata", result);
    return why;
}

/* Checks the webhook's objects against what was sent (delegatingCRConverter
 * after the call) and restores their metadata; NULL or kube's text (new). */
static char *check_converted(const sk_hook_conversion *conv, const char *in_gvk,
                             const json_t *sent, json_t *got)
{
    if (json_array_size(got) != json_array_size(sent))
        return fmt("conversion for %s returned %zu objects, expected %zu", in_gvk,
                   json_array_size(got), json_array_size(sent));
    for (size_t i = 0; i < json_array_size(sent); i++) {
        const json_t *in = json_array_get(sent, i);
        json_t *out = json_array_get(got, i);
        /* kube counts the object before it names its index */
        size_t at = i + 1;
        if (!json_is_object(out))
            return fmt("conversion for %s returned invalid converted object at index %zu: "
                       "invalid kind (expected %s, received )",
                       in_gvk, at, str(in, "kind"));
        if (strcmp(gv_of(out), conv->desired) != 0)
            return fmt("conversion for %s returned invalid converted object at index %zu: "
                       "invalid groupVersion (expected %s, received %s)",
                       in_gvk, at, conv->desired, gv_of(out));
        if (strcmp(str(out, "kind"), str(in, "kind")) != 0)
            return fmt("conversion for %s returned invalid converted object at index %zu: "
                       "invalid kind (expected %s, received %s)",
                       in_gvk, at, str(in, "kind"), str(out, "kind"));
        char *why = not_same(in, out);
        if (why) {
            char *m = fmt("conversion for %s returned invalid converted object at index %zu: %s",
                          in_gvk, at, why);
            free(why);
            return m;
        }
        if ((why = restore_meta(in, out))) {
            char *m = fmt("conversion for %s returned invalid metadata in object at index %zu: %s",
                          in_gvk, at, why);
            free(why);
            return m;
        }
    }
    return NULL;
}

/* The call itself (webhookConverter.Convert): NULL with *got (new) the
 * answer's objects, or the error (new), unwrapped. */
static char *call(sk_hook_client *c, const converter *cv, const sk_hook_conversion *conv,
                  const json_t *sent, json_t **got)
{
    if (!cv->review_version)
        return strdup("no supported conversion review versions");
    /* kube names the list it was handed: one object goes in a list of no kind */
    const char *list_gvk = conv->list_gvk ? conv->list_gvk : "/, Kind=";
    char uid[37];
    sk_uuid4(uid);
    int v1 = strcmp(cv->review_version, "v1") == 0;
    json_t *review =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:O}}", "kind", "ConversionReview", "apiVersion",
                  v1 ? "apiextensions.k8s.io/v1" : "apiextensions.k8s.io/v1beta1", "request", "uid",
                  uid, "desiredAPIVersion", conv->desired, "objects", sent);
    SK_CHECK_ALLOC(review);
    char *body = json_dumps(review, JSON_COMPACT);
    SK_CHECK_ALLOC(body);
    json_decref(review);
    sk_buf out = SK_BUF_INIT;
    long status = 0;
    char *why = NULL, *err = NULL;
    json_t *answer = NULL;
    sk_err e = sk_hook_endpoint_post(c, cv->endpoint, conv->resolve, conv->resolve_arg, TIMEOUT_S,
                                     body, strlen(body), &status, &out, &why);
    if (e != SK_OK) {
        err = fmt("conversion webhook for %s failed: %s%s", list_gvk,
                  e == SK_ERR_INVALID ? "could not get REST client: " : "", why);
        goto out;
    }
    if (status < 200 || status > 299) {
        err = fmt("conversion webhook for %s failed: the server responded with the status code "
                  "%ld but did not return more information",
                  list_gvk, status);
        goto out;
    }
    json_error_t jerr;
    answer = json_loadb(out.data ? out.data : "", out.len, 0, &jerr);
    const json_t *objs = NULL;
    char *msg = answer ? refused(answer, uid, v1, &objs) : strdup(jerr.text);
    if (msg) {
        err = fmt("conversion webhook for %s failed: %s", list_gvk, msg);
        free(msg);
        goto out;
    }
    /* convertedObjects not an array: none, which the count refuses */
    *got = json_is_array(objs) ? json_deep_copy(objs) : json_array();
    SK_CHECK_ALLOC(*got);
out:
    json_decref(answer);
    free(why);
    free(body);
    sk_buf_free(&out);
    return err;
}

sk_err sk_hook_convert(sk_hook_client *c, const json_t *webhook, const sk_hook_conversion *conv,
                       json_t **out, char **msg)
{
    /* getObjectsToConvert: only what is not in the desired version yet */
    json_t *sent = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(conv->objects, i, o)
    {
        if (strcmp(gv_of(o), conv->desired) != 0)
            json_array_append(sent, o);
    }
    json_t *got = NULL;
    char *err = NULL;
    char *in_gvk = conv->list_gvk ? strdup(conv->list_gvk)
                                  : gvk_text(json_array_get(conv->objects, 0));
    SK_CHECK_ALLOC(in_gvk);
    if (json_array_size(sent) > 0) {
        /* compiled per call: a caBundle's decoding beside an HTTPS call */
        converter cv;
        converter_init(&cv, c, webhook);
        char *inner = call(c, &cv, conv, sent, &got);
        sk_hook_endpoint_free(cv.endpoint);
        if (inner) {
            err = fmt("conversion for %s failed: %s", in_gvk, inner);
            free(inner);
            goto out;
        }
        if ((err = check_converted(conv, in_gvk, sent, got)))
            goto out;
    }
    json_t *result = json_array();
    size_t next = 0;
    json_array_foreach(conv->objects, i, o)
    {
        json_array_append(result,
                          strcmp(gv_of(o), conv->desired) != 0 ? json_array_get(got, next++) : o);
    }
    *out = result;
out:
    free(in_gvk);
    json_decref(sent);
    json_decref(got);
    if (err)
        *msg = err;
    return err ? SK_ERR_INTERNAL : SK_OK;
}
