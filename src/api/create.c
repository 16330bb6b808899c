/*
 * create.c - POST of a new object: the body as an object of the URL's kind,
 * admitted (admit.h), written with "must not exist" as its precondition
 * and, for a namespaced kind, "its namespace must exist" checked in the
 * same transaction.
 *
 * Kinds with a status subresource start with the status their strategy
 * gives (kube/status_rules.h), and a generation if they keep one. A name
 * from generateName that is taken is generated again, up to 8 attempts as
 * kube-apiserver 1.32 does (KEP-4420), instead of answering 409.
 *
 * Every new object records its creator in metadata.managedFields (an
 * Update entry: kube/managed.h); a server-side apply of a missing object
 * (update.c) creates through here with its Apply entry already made.
 */
#include "api/admit.h"
#include "api/alloc.h"
#include "api/body.h"
#include "api/crconvert.h"
#include "api/manage.h"
#include "api/served.h"
#include "api/verbs.h"
#include "api/webhooks.h"
#include "core/util.h"
#include "kube/lifecycle.h"
#include "kube/objmeta.h"
#include "kube/status.h"
#include "kube/status_rules.h"

#include <string.h>

#define MAX_GENERATE_NAME_ATTEMPTS 8

typedef struct create_state {
    json_t *obj; /* what is written; kept for its name */
    int generated; /* the name came from generateName */
    int attempts;
    sk_alloc_plan *alloc; /* a Service's cluster IP and node ports, else NULL */
} create_state;

static int create_write(sk_api_call *call);

static int create_done(sk_api_call *call)
{
    create_state *st = call->verb_state;
    if (call->write_err == SK_ERR_CONFLICT) {
        /* A random value another object took meanwhile: pick again, on a
         * copy (the writer may still hold the object it was handed). */
        json_t *copy = sk_call_keep(call, json_deep_copy(st->obj));
        int again = sk_alloc_after_conflict(call, st->alloc, copy);
        if (again < 0)
            return SK_STEP_DONE;
        if (again > 0) {
            st->obj = copy;
            call->next = create_write;
            return SK_STEP_AGAIN;
        }
    }
    if (call->write_err == SK_ERR_ALREADY_EXISTS && st->generated &&
        ++st->attempts < MAX_GENERATE_NAME_ATTEMPTS) {
        /* Another name from the same generateName; the rest of the
         * object was admitted already. */
        json_t *meta = json_object_get(st->obj, "metadata");
        json_t *gen = json_incref(json_object_get(meta, "generation"));
        json_object_del(meta, "name");
        sk_objmeta_on_create(st->obj, sk_wall_s());
        if (gen)
            json_object_set(meta, "generation", gen);
        json_decref(gen);
        sk_row_clear(&call->write_row);
        sk_write w = sk_admit_write(call, st->obj, 0);
        sk_alloc_attach(st->alloc, &w);
        return sk_call_submit_write(call, &w, create_done);
    }
    if (call->write_err == SK_ERR_NOT_FOUND) {
        sk_buf msg = SK_BUF_INIT;
        sk_buf_printf(&msg, "namespaces \"%s\" not found", call->ns);
        sk_call_reply_status(call, SK_ERR_NOT_FOUND, msg.data, "", "namespaces", call->ns, NULL);
        sk_buf_free(&msg);
    } else if (call->write_err != SK_OK) {
        const char *name =
            json_string_value(json_object_get(json_object_get(st->obj, "metadata"), "name"));
        sk_call_reply_store_error(call, call->write_err, name ? name : "");
    } else {
        sk_served_reply(call, 201, call->write_row.value, call->write_row.value_len);
    }
    return SK_STEP_DONE;
}

/* NamespaceLifecycle admission: nothing new goes into a namespace being
 * deleted (403, with kube's cause). Non-zero after replying. */
static int refuse_terminating(sk_api_call *call, const char *name)
{
    if (!call->res->namespaced || !*call->ns)
        return 0;
    sk_blob *ns = NULL;
    if (sk_reader_get(call->api->reader, "namespaces", "", call->ns, 0, &ns) != SK_OK)
        return 0; /* a missing namespace is the write's 404 */
    size_t len;
    const char *data = sk_blob_data(ns, &len);
    int open = sk_lifecycle_namespace_open(data, len);
    sk_blob_unref(ns);
    if (open)
        return 0;
    sk_call_reply_store_error(call, SK_ERR_FORBIDDEN, name ? name : "");
    return 1;
}

int sk_verb_create(sk_api_call *call)
{
    int ready = sk_webhooks_wait(call, sk_verb_create);
    if (ready != SK_PLAN_NOW)
        return ready;
    if (!sk_body_media_supported(call->content_type)) {
        sk_call_reply_error(call, SK_ERR_UNSUPPORTED_MEDIA,
                            "the body of the request was in an unsupported content type");
        return SK_STEP_DONE;
    }
    sk_write_options wo;
    json_t *status = NULL;
    if (sk_write_options_parse(sk_call_query, call, "CreateOptions", &wo, &status) != SK_OK) {
        sk_call_reply_status_object(call, status);
        return SK_STEP_DONE;
    }
    sk_manage *m = sk_arena_alloc(call->arena, sizeof *m);
    if (sk_manage_begin(call, &wo, "CreateOptions", 0, m) < 0)
        return SK_STEP_DONE;
    json_t *obj = sk_call_keep(call, sk_body_object(call));
    if (!obj || sk_body_check_fields(call, wo.validation) < 0)
        return SK_STEP_DONE;
    return sk_create_object(call, obj, &wo, m, 0);
}

int sk_create_object(sk_api_call *call, json_t *obj, const sk_write_options *wo,
                     const sk_manage *m, int applied)
{
    create_state *st = sk_arena_alloc(call->arena, sizeof *st);
    call->verb_state = st;
    st->obj = obj;
    json_t *meta = json_object_get(st->obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *gen = json_string_value(json_object_get(meta, "generateName"));
    st->generated = (!name || !*name) && gen && *gen;
    if (refuse_terminating(call, name))
        return SK_STEP_DONE;
    if (call->res->custom && call->res->custom->terminating) {
        /* apiextensions' handler: no new objects of a CRD being deleted */
        sk_call_reply_status(call, SK_ERR_METHOD_NOT_ALLOWED,
                             "create not allowed while custom resource definition is terminating",
                             call->res->group, call->res->resource, "", NULL);
        return SK_STEP_DONE;
    }
    if (sk_admit_object(call, st->obj, NULL, wo) < 0 ||
        sk_alloc_plan_new(call, st->obj, NULL, NULL, &st->alloc) < 0)
        return SK_STEP_DONE;
    /* kube's create handler records the creator as it decoded the object,
     * defaults included; an apply recorded what the applier sent */
    if (!applied)
        sk_managed_update(m->type, NULL, st->obj, &m->w);
    sk_status_rules_on_create(call->res, st->obj);
    /* admitted in the URL's version, written in the stored one (once: retries reuse it) */
    int convert = sk_crconvert_needed(call->res);
    json_t *failed = NULL;
    if (convert) {
        json_t *stored = sk_crconvert_to_stored(call->api, call->res, st->obj, &failed);
        if (!stored) {
            sk_call_reply_status_object(call, failed);
            return SK_STEP_DONE;
        }
        st->obj = sk_call_keep(call, stored);
    }
    if (wo->dry_run) {
        /* answered as a write is: the stored form in the URL's version (so
         * autoscaling/v1 shows the CPU target its conversion implies) */
        json_t *reply = convert ? sk_crconvert_from_stored(call->api, call->res, st->obj, NULL,
                                                           &failed)
                                : json_incref(st->obj);
        if (reply)
            sk_call_reply_json(call, 201, reply);
        else
            sk_call_reply_status_object(call, failed);
        json_decref(reply);
        return SK_STEP_DONE;
    }
    return create_write(call);
}

static int create_write(sk_api_call *call)
{
    create_state *st = call->verb_state;
    sk_write w = sk_admit_write(call, st->obj, 0);
    sk_alloc_attach(st->alloc, &w);
    return sk_call_submit_write(call, &w, create_done);
}
