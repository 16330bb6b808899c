/*
 * update.c - PUT and PATCH: read-modify-write, as kube-apiserver's
 * GuaranteedUpdate: read the current version from the store, compute the
 * new object (PUT: the body; PATCH: the patch applied to the current one),
 * admit it, and write it with the read revision as precondition; on a
 * conflict the client did not ask for, read again and retry. A client
 * resourceVersion is a hard precondition: a stale one is 409 Conflict.
 *
 * An update that changes nothing is not written (no new revision), as in
 * Kubernetes; kubectl apply relies on that to print "unchanged". An update
 * that takes the last finalizer off an object being deleted removes it
 * (kube/lifecycle.h).
 *
 * Subresources (subresource.c) use the same loop through a view
 * (sk_update_view, verbs.h): what the client edits of the stored object
 * (a Scale; the object itself for /status), and how what it sent becomes
 * the object written. Without a view, an update of a kind with a status
 * subresource keeps the stored status (kube/status_rules.h), and the
 * generation follows spec changes either way.
 *
 * A patch applies to the stored version as read, resourceVersion included
 * (kube's patcher does: kubectl's managed-fields upgrade replaces
 * /metadata/resourceVersion, and a JSON patch may test it). What the patch
 * leaves there is its precondition, so one that does not touch it always
 * passes; a conflicting write of any patch is retried on a fresh read, and
 * a patch that set a resourceVersion then finds it stale and answers 409,
 * as kube's GuaranteedUpdate does.
 */
#include "api/admit.h"
#include "api/alloc.h"
#include "api/body.h"
#include "api/crconvert.h"
#include "api/manage.h"
#include "api/served.h"
#include "api/verbs.h"
#include "api/webhooks.h"
#include "core/buf.h"
#include "core/jsontext.h"
#include "core/util.h"
#include "kube/fieldcheck.h"
#include "kube/lifecycle.h"
#include "kube/limits.h"
#include "kube/patch.h"
#include "kube/status_rules.h"
#include "kube/typed.h"
#include "kube/validate.h"
#include "kube/yaml.h"

#include <stdlib.h>
#include <string.h>

#define MAX_UPDATE_ATTEMPTS 8

typedef struct update_state {
    int is_patch;
    int apply; /* server-side apply: application/apply-patch+yaml */
    sk_manage m;
    sk_patch_type patch_type;
    const sk_update_view *view; /* NULL: the object itself */
    sk_write_options wo;
    int attempts;
    int64_t client_rev;   /* the client's resourceVersion precondition, 0 if none */
    sk_row current;       /* the version read */
    sk_alloc_plan *alloc; /* a Service's cluster IP and node ports, else NULL */
} update_state;

/* The object to write, from old (the live version, parsed): for PUT the
 * client's body, for PATCH the patch applied to old. New reference, or
 * NULL after replying. */
static json_t *compute_put(sk_api_call *call, update_state *st, const json_t *old)
{
    json_t *obj = st->view ? st->view->decode(call) : sk_body_object(call);
    if (obj && st->attempts == 0 && (!st->view || st->view->check_fields) &&
        sk_body_check_fields(call, st->wo.validation) < 0) {
        json_decref(obj);
        obj = NULL;
    }
    return obj;
}

/* A strategic merge patch's result reaches kube's typed object through
 * the unstructured converter, not the JSON decoder; kube answers its error
 * as NewInvalid does with no kind or name, on the field "patch" valued with
 * the patch as Go's %+v prints it. -1 after replying. */
static int check_restore(sk_api_call *call, const json_t *patched)
{
    char *why = NULL;
    if (sk_typed_restore_error(call->res, patched, &why) == SK_OK)
        return 0;
    json_t *patch = sk_jsontext_load(call->body, call->body_len, NULL);
    sk_buf v = SK_BUF_INIT, m = SK_BUF_INIT;
    sk_typed_go_print(&v, patch);
    sk_field_errors *fe = sk_field_errors_new();
    sk_field_errors_invalid(fe, "patch", v.data, why);
    char *agg = sk_field_errors_message(fe);
    sk_buf_printf(&m, " \"\" is invalid: %s", agg);
    sk_call_reply_status(call, SK_ERR_INVALID, m.data, "", "", "",
                         json_deep_copy(sk_field_errors_causes(fe)));
    free(agg);
    sk_field_errors_free(fe);
    sk_buf_free(&m);
    sk_buf_free(&v);
    json_decref(patch);
    free(why);
    return -1;
}

static json_t *compute_patch(sk_api_call *call, update_state *st, const json_t *old)
{
    sk_patch_type type = st->patch_type;
    json_t *res = NULL;
    char *msg = NULL;
    /* A view (scale) is patched as its own kind; custom resources have no
     * type, and never get here with a strategic merge patch. */
    const sk_schema *schema = call->res->custom ? NULL
                              : call->route.sub ? call->route.sub->schema
                                                : call->res->schema;
    sk_err err = sk_patch_apply(type, schema, old, call->body, call->body_len, &res, &msg);
    if (err != SK_OK) {
        sk_call_reply_error(call, err, msg ? msg : "the patch could not be applied");
        free(msg);
        return NULL;
    }
    if (!json_is_object(res) || !json_is_object(json_object_get(res, "metadata"))) {
        json_decref(res);
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST, "the patched object is not a valid object");
        return NULL;
    }
    if (sk_json_deeper_than(res, SK_OBJECT_MAX_DEPTH)) {
        json_decref(res);
        sk_call_reply_errorf(call, SK_ERR_INVALID,
                             "the patched object is nested more than %d levels deep",
                             SK_OBJECT_MAX_DEPTH);
        return NULL;
    }
    if (type == SK_PATCH_STRATEGIC && (!st->view || !st->view->view) &&
        check_restore(call, res) < 0) {
        json_decref(res);
        return NULL;
    }
    if (st->wo.validation != SK_FV_IGNORE && st->attempts == 0 &&
        (!st->view || st->view->check_fields)) {
        json_t *findings = NULL;
        err = type == SK_PATCH_JSON
                  ? sk_fieldcheck_unknown(call->res, res, &findings)
                  : sk_fieldcheck_patch(call->res, call->body, call->body_len, res, &findings);
        if (err == SK_OK && sk_body_act_on_findings(call, st->wo.validation, findings, res) < 0) {
            json_decref(res);
            return NULL;
        }
    }
    return res;
}

/* The apply body as an object for the URL: YAML or JSON, of the URL's
 * apiVersion, kind and name (kube's messages); through a view, the
 * parent's config it stands for. New reference, or NULL after replying. */
static json_t *apply_config(sk_api_call *call, const sk_update_view *view, json_t *dups)
{
    const char *want_av = view ? view->apply_api_version : call->res->api_version;
    const char *want_kind = view ? view->apply_kind : call->res->kind;
    json_t *cfg = NULL;
    char *msg = NULL;
    sk_err err = sk_yaml_to_json(call->body, call->body_len, SK_OBJECT_MAX_DEPTH, &cfg, &msg, dups);
    if (err != SK_OK) {
        sk_call_reply_errorf(call, err, "error decoding YAML: %s", msg ? msg : "");
        free(msg);
        return NULL;
    }
    if (!json_is_object(cfg)) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                             "error decoding YAML: error unmarshaling JSON: while decoding JSON: "
                             "json: cannot unmarshal %s into Go value of type "
                             "map[string]interface {}",
                             json_is_array(cfg)    ? "array"
                             : json_is_string(cfg) ? "string"
                             : json_is_number(cfg) ? "number"
                                                   : "bool");
        json_decref(cfg);
        return NULL;
    }
    const char *av = json_string_value(json_object_get(cfg, "apiVersion"));
    const char *kind = json_string_value(json_object_get(cfg, "kind"));
    json_t *meta = json_object_get(cfg, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (!av || strcmp(av, want_av) != 0) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                             "Incorrect version specified in apply patch. Specified patch "
                             "version: %s, expected: %s",
                             av ? av : "", want_av);
    } else if (!kind || strcmp(kind, want_kind) != 0) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                             "the kind in the data (%s) does not match the expected kind (%s)",
                             kind ? kind : "", want_kind);
    } else if (meta && !json_is_object(meta)) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST, "metadata must be an object");
    } else if (!name || strcmp(name, call->name) != 0) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                             "the name of the object (%s) does not match the name on the URL (%s)",
                             name ? name : "", call->name);
    } else if (view) {
        json_t *parent = view->apply_config(call, cfg);
        json_decref(cfg);
        return parent;
    } else {
        return cfg;
    }
    json_decref(cfg);
    return NULL;
}

/* s with every from replaced by to. New string (free()). */
static char *replaced(const char *s, const char *from, const char *to)
{
    sk_buf b = SK_BUF_INIT;
    size_t n = strlen(from);
    const char *hit;
    sk_buf_puts(&b, "");
    while ((hit = strstr(s, from))) {
        sk_buf_append(&b, s, (size_t)(hit - s));
        sk_buf_puts(&b, to);
        s = hit + n;
    }
    sk_buf_puts(&b, s);
    return sk_buf_steal(&b, NULL);
}

/* A conflict of an apply through a view (status, edited) names the view's
 * field rather than the parent's: the config set only that one field, so
 * every path in the message and causes is it. */
static void name_view_field(json_t *status, const char *parent, const char *view)
{
    json_t *causes = json_object_get(json_object_get(status, "details"), "causes");
    const char *msg = json_string_value(json_object_get(status, "message"));
    size_t i;
    json_t *c;
    if (!strcmp(parent, view))
        return;
    if (msg) {
        char *named = replaced(msg, parent, view);
        json_object_set_new(status, "message", json_string(named));
        free(named);
    }
    json_array_foreach(causes, i, c) if (json_is_string(json_object_get(c, "field")))
        json_object_set_new(c, "field", json_string(view));
}

/* fieldValidation of an apply body, checked after the apply as kube does
 * (a conflict is answered first): its keys repeated in a mapping (dups,
 * borrowed), the only thing strict YAML decoding adds; unknown fields
 * fail the apply's typing whatever the mode. Returns -1 after replying. */
static int strict_yaml(sk_api_call *call, sk_field_validation mode, const json_t *dups)
{
    size_t i;
    json_t *d;
    if (mode == SK_FV_WARN) {
        json_array_foreach(dups, i, d) sk_call_add_warning(call, json_string_value(d));
        return 0;
    }
    sk_buf msg = SK_BUF_INIT;
    sk_buf_puts(&msg, "error strict decoding YAML: error converting YAML to JSON: yaml: "
                      "unmarshal errors:");
    json_array_foreach(dups, i, d) sk_buf_printf(&msg, "\n  %s", json_string_value(d));
    sk_call_reply_error(call, SK_ERR_BAD_REQUEST, msg.data);
    sk_buf_free(&msg);
    return -1;
}

/* The apply of the body onto old (NULL: a create). New reference with
 * managedFields set, or NULL after replying (409 on conflicts). */
static json_t *compute_apply(sk_api_call *call, update_state *st, const json_t *old)
{
    json_t *dups = json_array();
    json_t *cfg = apply_config(call, st->view && st->view->apply_config ? st->view : NULL, dups);
    json_t *out = NULL, *status = NULL;
    sk_err err = SK_OK;
    if (!cfg)
        goto out;
    err = sk_managed_apply(st->m.type, old, cfg, &st->m.w, st->wo.force, &out, &status);
    json_decref(cfg);
    if (err != SK_OK) {
        if (err == SK_ERR_CONFLICT && st->view && st->view->apply_parent_field)
            name_view_field(status, st->view->apply_parent_field(call), st->view->apply_view_field);
        sk_call_reply_status_object(call, status);
        goto out;
    }
    if (st->attempts == 0 && st->wo.validation != SK_FV_IGNORE && json_array_size(dups) &&
        strict_yaml(call, st->wo.validation, dups) < 0) {
        json_decref(out);
        out = NULL;
    }
out:
    json_decref(dups);
    return out;
}

static int read_and_write(sk_api_call *call);

/* Replies with obj (borrowed), as the view shows it. */
static void reply_object(sk_api_call *call, update_state *st, const json_t *obj)
{
    if (st->view && st->view->reply)
        st->view->reply(call, obj);
    else
        sk_call_reply_json(call, 200, obj);
}

static int update_done(sk_api_call *call)
{
    update_state *st = call->verb_state;
    /* A value taken by another object: 422 if the client asked for it, else
     * read again and pick again (a client resourceVersion still holds). */
    int alloc =
        call->write_err == SK_ERR_CONFLICT ? sk_alloc_after_conflict(call, st->alloc, NULL) : 0;
    if (alloc < 0)
        return SK_STEP_DONE;
    if (call->write_err == SK_ERR_CONFLICT && (st->client_rev == 0 || st->is_patch || alloc > 0) &&
        ++st->attempts < MAX_UPDATE_ATTEMPTS) {
        call->next = read_and_write;
        return SK_STEP_AGAIN;
    }
    if (call->write_err != SK_OK) {
        sk_call_reply_store_error(call, call->write_err, call->name);
    } else if (st->view && st->view->reply) {
        json_t *obj = sk_call_parse_stored(call->res, call->write_row.value,
                                           call->write_row.value_len, call->name);
        json_t *failed = NULL;
        if (obj && sk_crconvert_needed(call->res)) {
            json_t *served = sk_crconvert_from_stored(call->api, call->res, obj, NULL, &failed);
            json_decref(obj);
            obj = served;
        }
        if (obj)
            st->view->reply(call, obj);
        else if (failed)
            sk_call_reply_status_object(call, failed);
        else
            sk_call_reply_error(call, SK_ERR_INTERNAL, "the written object cannot be decoded");
        json_decref(obj);
    } else {
        sk_served_reply(call, 200, call->write_row.value, call->write_row.value_len);
    }
    return SK_STEP_DONE;
}

/* The client's resourceVersion in obj, if any, is a precondition: -1 after
 * replying (malformed, or not the current one). */
static int check_client_rev(sk_api_call *call, update_state *st, const json_t *obj)
{
    const char *rv =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    st->client_rev = 0;
    if (!rv || !*rv)
        return 0;
    if ((st->client_rev = sk_parse_i64(rv)) <= 0) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST, "invalid resourceVersion in the object");
        return -1;
    }
    if (st->client_rev != st->current.rev) {
        sk_call_reply_store_error(call, SK_ERR_CONFLICT, call->name);
        return -1;
    }
    return 0;
}

static int read_and_write(sk_api_call *call)
{
    update_state *st = call->verb_state;
    sk_row_clear(&st->current);
    sk_err err =
        sk_store_get(call->api->store, call->res->storage, call->ns, call->name, 0, &st->current);
    if (err == SK_ERR_NOT_FOUND && st->apply && !st->view) {
        /* apply to a missing object creates it (201) */
        json_t *obj = sk_call_keep(call, compute_apply(call, st, NULL));
        return obj ? sk_create_object(call, obj, &st->wo, &st->m, 1) : SK_STEP_DONE;
    }
    if (err != SK_OK) {
        sk_call_reply_store_error(call, err, call->name);
        return SK_STEP_DONE;
    }
    json_t *old =
        sk_call_parse_stored(call->res, st->current.value, st->current.value_len, call->name);
    if (!old) {
        sk_call_reply_errorf(call, SK_ERR_INTERNAL,
                             "the stored object %s \"%s\" cannot be decoded: it can only be "
                             "deleted",
                             call->res->resource, call->name);
        return SK_STEP_DONE;
    }
    json_t *failed = NULL;
    if (sk_crconvert_needed(call->res)) {
        /* PUT bodies and patches are in the URL's version: so is the old object */
        json_t *served = sk_crconvert_from_stored(call->api, call->res, old, NULL, &failed);
        json_decref(old);
        if (!served) {
            sk_call_reply_status_object(call, failed);
            return SK_STEP_DONE;
        }
        old = served;
    }
    int rc = SK_STEP_DONE;
    json_t *obj = NULL;
    /* What the client edits: the object or the view's (see the top). */
    json_t *base =
        st->view && st->view->view && !st->apply ? st->view->view(call, old) : json_incref(old);
    json_t *sent = st->apply      ? compute_apply(call, st, base)
                   : st->is_patch ? compute_patch(call, st, base)
                                  : compute_put(call, st, base);
    if (!sent || check_client_rev(call, st, sent) < 0)
        goto out;
    if (st->view && !(st->apply && st->view->apply_config)) {
        obj = st->view->merge(call, sent, old);
        /* the view takes what the client may change; an apply's record of
         * who applied it comes along */
        if (obj && st->apply)
            json_object_set(json_object_get(obj, "metadata"), "managedFields",
                            json_object_get(json_object_get(sent, "metadata"), "managedFields"));
    } else {
        obj = json_incref(sent);
        sk_status_rules_keep_status(call->res, obj, old);
    }
    if (obj)
        sk_alloc_carry_over(call->res, obj, old);
    if (!obj ||
        (!(st->view && st->view->unadmitted) &&
         sk_admit_object(call, obj, old, &st->wo) < 0) ||
        sk_alloc_plan_new(call, obj, old, st->alloc, &st->alloc) < 0)
        goto out;
    sk_status_rules_bump_generation(call->res, obj, old);
    if (!st->apply)
        sk_managed_update(st->m.type, old, obj, &st->m.w);
    /* The update that leaves an object being deleted without finalizers
     * removes it instead (kube's ShouldDeleteDuringUpdate); the reply is its
     * last stored state. */
    if (sk_lifecycle_update_deletes(call->res, old, obj)) {
        if (st->wo.dry_run) {
            reply_object(call, st, old);
            goto out;
        }
        sk_write w = {
            .op = SK_WRITE_DELETE,
            .resource = call->res->storage,
            .ns = call->ns,
            .name = call->name,
            .expected_rev = st->current.rev,
        };
        rc = sk_call_submit_write(call, &w, update_done);
        goto out;
    }
    /* Compare with the resourceVersion normalised: an unchanged object is not written,
     * unless it is stored under an old key (kube's rotation: rewriting every object
     * moves it to the first key). */
    json_object_set(json_object_get(obj, "metadata"), "resourceVersion",
                    json_object_get(json_object_get(old, "metadata"), "resourceVersion"));
    sk_managed_keep_times(old, obj);
    if ((json_equal(obj, old) && !st->current.stale) || st->wo.dry_run) {
        reply_object(call, st, st->wo.dry_run ? obj : old);
        goto out;
    }
    if (sk_crconvert_needed(call->res)) {
        json_t *stored = sk_crconvert_to_stored(call->api, call->res, obj, &failed);
        json_decref(obj);
        obj = stored;
        if (!obj) {
            sk_call_reply_status_object(call, failed);
            goto out;
        }
    }
    sk_write w = sk_admit_write(call, obj, st->current.rev);
    sk_alloc_attach(st->alloc, &w);
    rc = sk_call_submit_write(call, &w, update_done);
out:
    json_decref(base);
    json_decref(sent);
    json_decref(obj);
    json_decref(old);
    return rc;
}

static void release_row(void *row)
{
    sk_row_clear(row);
}

/* The options, and a patch's media type, are checked before the object is
 * read, as kube-apiserver does: a 415 comes before a 404. */
int sk_update_start(sk_api_call *call, int is_patch, const sk_update_view *view)
{
    update_state *st = sk_arena_alloc(call->arena, sizeof *st);
    call->verb_state = st;
    sk_arena_defer(call->arena, release_row, &st->current);
    st->is_patch = is_patch;
    st->view = view;
    st->apply = is_patch && sk_patch_is_apply(call->content_type) &&
                (!view || !view->view || view->apply_config);
    /* Custom resources have no Go types to take patch strategies from:
     * kube-apiserver offers them no strategic merge, and says so. */
    if (is_patch && !st->apply &&
        (sk_patch_type_parse(call->content_type, &st->patch_type) != SK_OK ||
         (st->patch_type == SK_PATCH_STRATEGIC && call->res->custom))) {
        sk_call_reply_errorf(call, SK_ERR_UNSUPPORTED_MEDIA,
                             "the body of the request was in an unknown format - accepted media "
                             "types include: application/json-patch+json, "
                             "application/merge-patch+json, %sapplication/apply-patch+yaml",
                             call->res->custom ? "" : "application/strategic-merge-patch+json, ");
        return SK_STEP_DONE;
    }
    if (!is_patch && !sk_body_media_supported(call->content_type)) {
        sk_call_reply_error(call, SK_ERR_UNSUPPORTED_MEDIA,
                            "the body of the request was in an unsupported content type");
        return SK_STEP_DONE;
    }
    json_t *status = NULL;
    const char *options_kind = is_patch ? "PatchOptions" : "UpdateOptions";
    if (sk_write_options_parse(sk_call_query, call, options_kind, &st->wo, &status) != SK_OK) {
        sk_call_reply_status_object(call, status);
        return SK_STEP_DONE;
    }
    if (sk_manage_begin(call, &st->wo, options_kind, st->apply, &st->m) < 0)
        return SK_STEP_DONE;
    return read_and_write(call);
}

int sk_verb_update(sk_api_call *call)
{
    int ready = sk_webhooks_wait(call, sk_verb_update);
    if (ready != SK_PLAN_NOW)
        return ready;
    return sk_update_start(call, 0, NULL);
}

int sk_verb_patch(sk_api_call *call)
{
    int ready = sk_webhooks_wait(call, sk_verb_patch);
    if (ready != SK_PLAN_NOW)
        return ready;
    return sk_update_start(call, 1, NULL);
}
