/*
 * admit.c - see admit.h.
 */
#include "api/admit.h"
#include "api/body.h"
#include "api/escalate.h"
#include "api/webhooks.h"
#include "core/buf.h"
#include "core/util.h"
#include "kube/crschema.h"
#include "kube/defaults.h"
#include "kube/expiry.h"
#include "kube/lifecycle.h"
#include "kube/objmeta.h"
#include "kube/typed.h"
#include "kube/validate.h"
#include "policy/crdrules.h"

#include <stdlib.h>
#include <string.h>

/* Replies with err and *msg (freed) unless err is SK_OK; -1 if it replied.
 * msg is passed by address: the call that sets it is an argument of this
 * one, and arguments are evaluated in no fixed order. */
static int refused(sk_api_call *call, sk_err err, char **msg)
{
    if (err == SK_OK)
        return 0;
    sk_call_reply_error(call, err, *msg ? *msg : "the object was refused");
    free(*msg);
    *msg = NULL;
    return -1;
}

/* Replaces obj's members by its typed round trip. */
static sk_err typed(const sk_resource *r, json_t *obj, char **msg)
{
    json_t *norm = NULL;
    sk_err err = sk_typed_normalize(r, obj, &norm, msg);
    if (err == SK_OK) {
        json_object_clear(obj);
        json_object_update(obj, norm);
        json_decref(norm);
    }
    return err;
}

/* A custom resource as kube's decoder leaves it: the fields its schema
 * does not know pruned (reported as fieldValidation says), then its
 * schema's defaults applied. -1 if it replied. */
static int decode_custom(sk_api_call *call, json_t *obj, sk_field_validation fv)
{
    const sk_structural *s = sk_crschema_of(call->res);
    if (!s)
        return 0;
    json_t *unknown = json_array();
    sk_structural_prune(s, obj, unknown);
    sk_structural_default(s, obj);
    json_t *findings = json_array();
    size_t i;
    json_t *path;
    json_array_foreach(unknown, i, path)
    {
        sk_buf f = SK_BUF_INIT;
        sk_buf_puts(&f, "unknown field ");
        sk_buf_go_quoted(&f, json_string_value(path));
        json_array_append_new(findings, json_string(f.data));
        sk_buf_free(&f);
    }
    json_decref(unknown);
    if (fv == SK_FV_IGNORE) {
        json_decref(findings);
        return 0;
    }
    return sk_body_act_on_findings(call, fv, findings, NULL);
}

/* kube's hasBlockingErr: the schema errors that keep a custom resource's
 * CEL rules from running (a rule could not rely on its field's type). */
static int blocking(const sk_field_errors *fe)
{
    static const char *const block[] = {"FieldValueNotSupported", "FieldValueRequired",
                                        "FieldValueTooLong", "FieldValueTooMany",
                                        "FieldValueTypeInvalid"};
    size_t i;
    const json_t *cause;
    json_array_foreach(sk_field_errors_causes(fe), i, cause)
    {
        const char *reason = json_string_value(json_object_get(cause, "reason"));
        for (size_t k = 0; reason && k < sizeof block / sizeof *block; k++)
            if (strcmp(reason, block[k]) == 0)
                return 1;
    }
    return 0;
}

/* A custom resource's x-kubernetes-validations rules after its schema's
 * validation (kube's customResourceStrategy Validate/ValidateUpdate and
 * the status strategy's, which does not ratchet). */
static void validate_rules(sk_api_call *call, const json_t *obj, const json_t *old,
                           sk_field_errors *fe)
{
    const sk_crdrules *rules = sk_crdrules_of(call->res);
    if (!rules)
        return;
    if (blocking(fe)) {
        sk_field_errors_invalid(fe, "<nil>", "null",
                                "some validation rules were not checked because the object was "
                                "invalid; correct the existing errors to complete validation");
        return;
    }
    json_t *warnings = json_array();
    int status = call->route.sub && strcmp(call->route.sub->name, "status") == 0;
    sk_crdrules_validate(rules, obj, old, !status, NULL, fe, warnings);
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w)
    {
        sk_call_add_warning(call, json_string_value(w));
    }
    json_decref(warnings);
}

/* Validation, as the registry's strategy runs it: the kind's rules (the
 * metadata's, for a custom resource), then what structural schemas add (a
 * custom resource against its version's schema and rules, a
 * CustomResourceDefinition's schemas and rules compiled), every violation
 * in one 422. -1 if it replied. */
static int validated(sk_api_call *call, const json_t *obj, const json_t *old)
{
    const sk_resource *r = call->res;
    sk_field_errors *fe = sk_field_errors_new();
    sk_validate_typed_errors(r, obj, old, fe);
    const sk_structural *s = sk_crschema_of(r);
    if (s) {
        sk_structural_validate(s, obj, fe);
        validate_rules(call, obj, old, fe);
    } else if (strcmp(r->storage, SK_REGISTRY_CRD_STORAGE) == 0 && sk_field_errors_count(fe) == 0) {
        sk_crschema_check_crd(obj, fe);
        /* kube compiles a schema's rules only when the schema is sound */
        if (sk_field_errors_count(fe) == 0)
            sk_crdrules_check_crd(obj, old, fe);
    }
    int rc = 0;
    if (sk_field_errors_count(fe) > 0) {
        const char *name =
            json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        char *agg = sk_field_errors_message(fe);
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m, "%s%s%s ", r->kind, *r->group ? "." : "", r->group);
        sk_buf_go_quoted(&m, name ? name : "");
        sk_buf_printf(&m, " is invalid: %s", agg);
        free(agg);
        sk_call_reply_status(call, SK_ERR_INVALID, m.data, r->group, r->kind, name ? name : "",
                             json_deep_copy(sk_field_errors_causes(fe)));
        sk_buf_free(&m);
        rc = -1;
    }
    sk_field_errors_free(fe);
    return rc;
}

/* kube's CertificateSigningRequest strategy: the requester named in a CSR's
 * spec (username, uid, groups, extra) is whoever created it, never what the
 * body claims (an approver trusts these fields), and stays so on updates. */
static void stamp_csr_requester(const sk_api_call *call, json_t *obj, const json_t *old)
{
    static const char *const who[] = {"username", "uid", "groups", "extra"};
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec))
        return;
    for (size_t i = 0; i < sizeof who / sizeof *who; i++)
        json_object_del(spec, who[i]);
    if (old) {
        const json_t *was = json_object_get(old, "spec");
        for (size_t i = 0; i < sizeof who / sizeof *who; i++)
            if (json_object_get(was, who[i]))
                json_object_set(spec, who[i], json_object_get(was, who[i]));
        return;
    }
    const sk_user *u = call->user;
    json_object_set_new(spec, "username", json_string(u->name));
    if (u->uid && *u->uid)
        json_object_set_new(spec, "uid", json_string(u->uid));
    json_t *groups = json_array();
    for (size_t i = 0; i < u->n_groups; i++)
        json_array_append_new(groups, json_string(u->groups[i]));
    json_object_set_new(spec, "groups", groups);
    if (u->n_extra > 0) {
        json_t *extra = json_object();
        for (size_t i = 0; i < u->n_extra; i++) {
            json_t *values = json_object_get(extra, u->extra_keys[i]);
            if (!values) {
                values = json_array();
                json_object_set_new(extra, u->extra_keys[i], values);
            }
            json_array_append_new(values, json_string(u->extra_values[i]));
        }
        json_object_set_new(spec, "extra", extra);
    }
}

/* Defaulting, then the typed round trip again so defaulted fields (and
 * the server-owned ones set before it) sit where Go writes them. -1 if it
 * replied. */
static int settle(sk_api_call *call, json_t *obj, const json_t *old)
{
    char *msg = NULL;
    if (refused(call,
                old ? sk_defaults_update(call->res, obj, old, &msg)
                    : sk_defaults_apply(call->res, obj, &msg),
                &msg) < 0)
        return -1;
    return refused(call, typed(call->res, obj, &msg), &msg);
}

/* A webhook's patched object decoded and defaulted as kube does before the
 * next webhook sees it. What fails here is left for decoded() to refuse
 * once the webhooks are done. */
static void settle_quietly(sk_api_call *call, json_t *obj, const json_t *old)
{
    char *msg = NULL;
    const sk_structural *s = call->res->custom ? sk_crschema_of(call->res) : NULL;
    if (typed(call->res, obj, &msg) == SK_OK && s) {
        json_t *unknown = json_array();
        sk_structural_prune(s, obj, unknown);
        sk_structural_default(s, obj);
        json_decref(unknown);
    }
    free(msg);
    msg = NULL;
    if ((old ? sk_defaults_update(call->res, obj, old, &msg)
             : sk_defaults_apply(call->res, obj, &msg)) == SK_OK)
        (void)typed(call->res, obj, &msg);
    free(msg);
}

/* The body as kube-apiserver's decoder leaves it (the typed round trip of
 * kube/typed.h, so what follows sees typed values; a custom resource
 * pruned and defaulted by its schema) in the request's namespace; and so
 * again after mutating webhooks, so a webhook can neither smuggle in what
 * a body cannot carry nor move the write to another key. -1 if it
 * replied. */
static int decoded(sk_api_call *call, json_t *obj, const sk_write_options *wo)
{
    char *msg = NULL;
    if (refused(call, typed(call->res, obj, &msg), &msg) < 0 ||
        (call->res->custom && decode_custom(call, obj, wo->validation) < 0))
        return -1;
    return refused(call, sk_objmeta_settle_namespace(call->res, obj, call->ns, &msg), &msg);
}

/* Mutating admission webhooks on obj (edited), which they see decoded and
 * defaulted; what they change is decoded again. -1 if it replied. */
static int mutated(sk_api_call *call, json_t *obj, const json_t *old, const sk_write_options *wo)
{
    if (settle(call, obj, old) < 0)
        return -1;
    json_t *m = json_incref(obj);
    int changed = sk_webhooks_mutate(call, &m, old, wo->dry_run, settle_quietly);
    if (changed > 0) {
        json_object_clear(obj);
        json_object_update(obj, m);
    }
    json_decref(m);
    return changed < 0 || (changed > 0 && decoded(call, obj, wo) < 0) ? -1 : 0;
}

/*
 * kube-apiserver 1.32's order (endpoints/handlers create.go, update.go,
 * patch.go; registry/generic/registry/store.go): decode (defaults
 * included) and the request's namespace; on a create the metadata only the
 * server sets wiped, on an update the name and uid checked; mutating
 * admission; then what the registry does to whatever admission left:
 * the RBAC escalation check (the rbac registries' policy-based storage),
 * the strategy's PrepareForCreate/Update (a CSR's requester) and the
 * server-owned metadata (BeforeCreate/BeforeUpdate: uid, creationTimestamp,
 * a generated name), validation, and validating admission last. So a
 * mutating webhook sees no uid or creationTimestamp on a create, nor a name
 * generateName will give, and nothing it returns skips a check.
 */
int sk_admit_object(sk_api_call *call, json_t *obj, const json_t *old, const sk_write_options *wo)
{
    char *msg = NULL;
    if (decoded(call, obj, wo) < 0)
        return -1;
    if (!old)
        sk_objmeta_wipe_system(obj);
    else if (refused(call, sk_objmeta_check_update(obj, old, call->name, &msg), &msg) < 0)
        return -1;
    /* no webhook's rules cover the request: nothing to see the object
     * before the registry's steps, whose defaulting below is the same */
    if (sk_webhooks_may_mutate(call, old) && mutated(call, obj, old, wo) < 0)
        return -1;
    if (sk_escalate_admit(call, obj, old) < 0)
        return -1;
    if (strcmp(call->res->storage, "certificatesigningrequests.certificates.k8s.io") == 0)
        stamp_csr_requester(call, obj, old);
    if (old) {
        if (refused(call, sk_objmeta_on_update(obj, old, call->name, &msg), &msg) < 0)
            return -1;
    } else {
        sk_objmeta_on_create(obj, sk_wall_s());
    }
    if (settle(call, obj, old) < 0)
        return -1;
    if (validated(call, obj, old) < 0)
        return -1;
    return sk_webhooks_validate(call, obj, old, wo->dry_run);
}

sk_write sk_admit_write(sk_api_call *call, json_t *obj, int64_t expected_rev)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    sk_write w = {
        .op = expected_rev > 0 ? SK_WRITE_UPDATE : SK_WRITE_CREATE,
        .resource = call->res->storage,
        .ns = call->ns,
        .name = name,
        .expected_rev = expected_rev,
        .object = json_incref(obj),
        .require_namespace = expected_rev == 0 && call->res->namespaced ? call->ns : NULL,
        .namespace_open = sk_lifecycle_namespace_open,
        .expires_at_ms = sk_expiry_for(call->res, obj, call->api->event_ttl_s, sk_wall_ms()),
        .max_bytes = call->api->max_object_bytes,
    };
    return w;
}
