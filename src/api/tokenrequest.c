/*
 * tokenrequest.c - POST .../serviceaccounts/{name}/token: kube's
 * TokenRequest (authentication.k8s.io/v1), the one way ServiceAccount
 * tokens are issued (`kubectl create token`). Nothing is stored: the
 * ServiceAccount and any bound object are read, claims built
 * (kube/satoken.h) and signed (kube/jwt.h), and the request comes back
 * 201 with status.token and status.expirationTimestamp.
 *
 * kube's order of refusals is kept, as a client sees it: metadata that
 * names another ServiceAccount (422), a missing ServiceAccount (404), an
 * expiry under 10 minutes or over 2^32 s (422), a bound object of a kind
 * that cannot be bound (400), missing (404), running as another
 * ServiceAccount (400) or with another uid than the reference names (409).
 *
 * The objects are read from the store, not the cache: a token is issued
 * rarely, and one for a ServiceAccount created a moment ago must not fail
 * because the cache has not caught up.
 */
#include "api/body.h"
#include "api/call.h"
#include "api/verbs.h"
#include "core/util.h"
#include "kube/jwt.h"
#include "kube/satoken.h"

#include <stdlib.h>
#include <string.h>

#define GROUP "authentication.k8s.io"
#define KIND "TokenRequest"
#define DEFAULT_EXPIRATION_S 3600
#define MIN_EXPIRATION_S 600
#define MAX_EXPIRATION_S (1LL << 32)

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static int reply_invalid(sk_api_call *call, const char *field, const char *value,
                         const char *detail)
{
    sk_call_reply_invalid(call, GROUP, KIND, call->name, field, value, detail);
    return SK_STEP_DONE;
}

/* The stored core/v1 object (new reference), or NULL having replied. */
static json_t *read_object(sk_api_call *call, const char *resource, const char *ns,
                           const char *name)
{
    const sk_resource *r = sk_registry_find("", "v1", resource);
    sk_row row = {0};
    json_t *obj = NULL;
    sk_err err = sk_store_get(call->api->store, r->storage, ns, name, 0, &row);
    if (err == SK_OK)
        obj = sk_call_parse_stored(r, row.value, row.value_len, name);
    sk_row_clear(&row);
    if (err == SK_ERR_NOT_FOUND) {
        sk_buf msg = SK_BUF_INIT;
        sk_buf_printf(&msg, "%s \"%s\" not found", resource, name);
        sk_call_reply_status(call, err, msg.data, "", resource, name, NULL);
        sk_buf_free(&msg);
    } else if (!obj) {
        sk_call_reply_store_error(call, err == SK_OK ? SK_ERR_INTERNAL : err, name);
    }
    return obj;
}

static const char *uid_of(const json_t *obj)
{
    return str(json_object_get(obj, "metadata"), "uid");
}

/* A pod-bound token names the pod's node as kube 1.32 does: its name,
 * and its uid when the node exists (a missing node is not an error). */
static void pod_node(sk_api_call *call, const json_t *pod, sk_satoken *t)
{
    const char *node = str(json_object_get(pod, "spec"), "nodeName");
    if (!*node)
        return;
    t->node_name = node;
    const sk_resource *r = sk_registry_find("", "v1", "nodes");
    sk_row row = {0};
    if (sk_store_get(call->api->store, r->storage, "", node, 0, &row) == SK_OK && row.uid)
        t->node_uid = sk_arena_strdup(call->arena, row.uid);
    sk_row_clear(&row);
}

/* Fills t's bound object from spec.boundObjectRef (ref non-NULL); 0 when
 * it replied a refusal. *held keeps the object read alive. */
static int bind(sk_api_call *call, const json_t *ref, sk_satoken *t, json_t **held)
{
    const char *av = str(ref, "apiVersion"), *kind = str(ref, "kind"), *name = str(ref, "name");
    const char *slash = strchr(av, '/');
    int core = !slash;
    static const struct {
        const char *kind, *resource;
        int cluster;
    } kinds[] = {{"Pod", "pods", 0}, {"Secret", "secrets", 0}, {"Node", "nodes", 1}};
    size_t k = 0;
    while (k < sizeof kinds / sizeof *kinds && (!core || strcmp(kinds[k].kind, kind) != 0))
        k++;
    if (k == sizeof kinds / sizeof *kinds) {
        /* Go's GroupVersionKind.String(): "group/version, Kind=kind" */
        if (core)
            sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                                 "cannot bind token to object of type /%s, Kind=%s", av, kind);
        else
            sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                                 "cannot bind token to object of type %s, Kind=%s", av, kind);
        return 0;
    }
    json_t *obj = read_object(call, kinds[k].resource, kinds[k].cluster ? "" : call->ns, name);
    if (!obj)
        return 0;
    *held = obj;
    if (k == 0) {
        /* kube's ServiceAccount admission gives every pod "default" when
         * it names none; sqlkube runs no such admission, so read it so. */
        const char *sa = str(json_object_get(obj, "spec"), "serviceAccountName");
        if (!*sa)
            sa = "default";
        if (strcmp(sa, call->name) != 0) {
            sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                                 "cannot bind token for serviceaccount \"%s\" to pod running "
                                 "with serviceaccount \"%s\"",
                                 call->name, sa);
            return 0;
        }
        pod_node(call, obj, t);
    }
    const char *want = str(ref, "uid");
    if (*want && strcmp(want, uid_of(obj)) != 0) {
        sk_buf msg = SK_BUF_INIT;
        sk_buf_printf(&msg,
                      "Operation cannot be fulfilled on %s \"%s\": the UID in the bound object "
                      "reference (%s) does not match the UID in record. The object might have "
                      "been deleted and then recreated",
                      kind, name, want);
        sk_call_reply_status(call, SK_ERR_CONFLICT, msg.data, "", kind, name, NULL);
        sk_buf_free(&msg);
        return 0;
    }
    t->bound_kind = kinds[k].kind;
    t->bound_name = name;
    t->bound_uid = uid_of(obj);
    return 1;
}

/* The audiences of spec (kube: the API audiences when none are asked
 * for) into *out (in the arena); their count. */
static size_t audiences(sk_api_call *call, json_t *spec, const char *const **out)
{
    const sk_authn_config *cfg = &call->api->authn;
    json_t *list = json_object_get(spec, "audiences");
    size_t n = json_array_size(list);
    if (n == 0) {
        list = json_array();
        for (size_t i = 0; i < cfg->n_audiences; i++)
            json_array_append_new(list, json_string(cfg->audiences[i]));
        json_object_set_new(spec, "audiences", list);
        *out = cfg->audiences;
        return cfg->n_audiences;
    }
    *out = sk_call_strings(call, list, &n);
    return n;
}

int sk_verb_token_request(sk_api_call *call)
{
    const sk_authn_config *cfg = &call->api->authn;
    if (!sk_body_media_supported(call->content_type)) {
        sk_call_reply_error(call, SK_ERR_UNSUPPORTED_MEDIA,
                            "the body of the request was in an unsupported content type");
        return SK_STEP_DONE;
    }
    json_t *obj = sk_call_keep(call, sk_body_decode(call, "expected a " KIND));
    if (!obj)
        return SK_STEP_DONE;
    const char *kind = str(obj, "kind"), *av = str(obj, "apiVersion");
    if ((*kind && strcmp(kind, KIND) != 0) || (*av && strcmp(av, GROUP "/v1") != 0)) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST, "the body is a %s, not a " KIND "." GROUP
                             "/v1", *kind ? kind : "object");
        return SK_STEP_DONE;
    }
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    const char *mname = str(meta, "name"), *mns = str(meta, "namespace");
    if (*mname && strcmp(mname, call->name) != 0) {
        char *q = json_dumps(json_object_get(meta, "name"), JSON_ENCODE_ANY);
        reply_invalid(call, "metadata.name", q, "must match the service account name if "
                                                "specified");
        free(q);
        return SK_STEP_DONE;
    }
    if (*mns && strcmp(mns, call->ns) != 0) {
        char *q = json_dumps(json_object_get(meta, "namespace"), JSON_ENCODE_ANY);
        reply_invalid(call, "metadata.namespace", q,
                      "must match the service account namespace if specified");
        free(q);
        return SK_STEP_DONE;
    }
    json_t *sa = sk_call_keep(call, read_object(call, "serviceaccounts", call->ns, call->name));
    if (!sa)
        return SK_STEP_DONE;
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(obj, "spec", spec);
    }
    json_t *es = json_object_get(spec, "expirationSeconds");
    if (es && !json_is_null(es) && !json_is_integer(es)) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST,
                            "spec.expirationSeconds: expected an integer");
        return SK_STEP_DONE;
    }
    json_int_t expiration = json_is_integer(es) ? json_integer_value(es) : DEFAULT_EXPIRATION_S;
    if (expiration < MIN_EXPIRATION_S || expiration > MAX_EXPIRATION_S) {
        char value[32];
        snprintf(value, sizeof value, "%lld", (long long)expiration);
        reply_invalid(call, "spec.expirationSeconds", value,
                      expiration < MIN_EXPIRATION_S
                          ? "may not specify a duration less than 10 minutes"
                          : "may not specify a duration larger than 2^32 seconds");
        return SK_STEP_DONE;
    }
    json_object_set_new(spec, "expirationSeconds", json_integer(expiration));
    char jti[37];
    sk_uuid4(jti);
    sk_satoken t = {.ns = call->ns, .name = call->name, .uid = uid_of(sa), .jti = jti};
    json_t *ref = json_object_get(spec, "boundObjectRef");
    json_t *bound = NULL;
    if (json_is_object(ref)) {
        int ok = bind(call, ref, &t, &bound);
        sk_call_keep(call, bound);
        if (!ok)
            return SK_STEP_DONE;
    } else {
        json_object_set_new(spec, "boundObjectRef", json_null());
    }
    const char *const *auds;
    size_t n = audiences(call, spec, &auds);
    t.iat = sk_wall_s();
    t.exp = t.iat + expiration;
    json_t *claims = sk_satoken_claims(&t, cfg->sa_issuer, auds, n);
    char *token = sk_jwt_sign(cfg->sa_keys, claims);
    json_decref(claims);
    if (!token) {
        sk_call_reply_error(call, SK_ERR_INTERNAL, "failed to generate token");
        return SK_STEP_DONE;
    }
    char created[21], expires[21];
    sk_format_rfc3339(t.iat, created);
    sk_format_rfc3339(t.exp, expires);
    json_object_set_new(obj, "kind", json_string(KIND));
    json_object_set_new(obj, "apiVersion", json_string(GROUP "/v1"));
    json_object_set_new(meta, "name", json_string(call->name));
    json_object_set_new(meta, "namespace", json_string(call->ns));
    json_object_set_new(meta, "creationTimestamp", json_string(created));
    json_object_set_new(obj, "status", json_pack("{s:s, s:s}", "token", token,
                                                 "expirationTimestamp", expires));
    explicit_bzero(token, strlen(token));
    free(token);
    sk_call_reply_json(call, 201, obj);
    return SK_STEP_DONE;
}
