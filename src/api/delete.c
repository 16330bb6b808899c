/*
 * delete.c - DELETE of one object (with DeleteOptions preconditions) and of
 * a collection (deletecollection, with label and field selectors).
 *
 * A deletion is a store write that appends a tombstone; deleting a
 * namespace deletes every object in it in the same transaction. A stored
 * version that does not parse is still deleted: the write carries the
 * kind's skeleton for its tombstone.
 *
 * deletecollection reads the matching keys at one revision, then deletes
 * them one write at a time, each with the revision it was read at as its
 * precondition (an object changed meanwhile is skipped, as kube skips it);
 * a client that goes away stops it.
 *
 * Pods are deleted gracefully as kube's pod strategy does: a pod bound to a
 * node (spec.nodeName) with a grace period (DeleteOptions
 * gracePeriodSeconds, else its terminationGracePeriodSeconds, else 30) is
 * not removed but marked: deletionTimestamp (now + grace) and
 * deletionGracePeriodSeconds, written through update.c's loop; its kubelet
 * would remove it. An unscheduled pod, or a grace period of 0, is removed
 * at once. A second delete may shorten the grace period, never lengthen it.
 */
#include "api/body.h"
#include "api/call.h"
#include "api/served.h"
#include "api/verbs.h"
#include "core/util.h"
#include "kube/convert.h"
#include "kube/selector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the tombstone of a stored version that does not parse carries. */
static json_t *skeleton(const sk_api_call *call)
{
    return json_pack("{s:s, s:s}", "kind", call->res->kind, "apiVersion",
                     call->res->api_version);
}

static int delete_done(sk_api_call *call)
{
    if (call->write_err != SK_OK)
        sk_call_reply_store_error(call, call->write_err, call->name);
    else
        sk_served_reply(call, 200, call->write_row.value, call->write_row.value_len);
    return SK_STEP_DONE;
}

/* An eviction answers a Status Success, 201, as kube's eviction REST does. */
static int evict_done(sk_api_call *call)
{
    if (call->write_err != SK_OK) {
        sk_call_reply_store_error(call, call->write_err, call->name);
    } else {
        json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                               "metadata", "status", "Success", "code", 201);
        sk_call_reply_json(call, 201, st);
        json_decref(st);
    }
    return SK_STEP_DONE;
}

/* ---- graceful deletion of pods ---- */

typedef struct grace_state {
    const sk_delete_options *d;
    int64_t grace_s;
    int evict;
} grace_state;

static json_t *grace_decode(sk_api_call *call)
{
    return json_object(); /* nothing of the body goes into the object */
}

static json_t *grace_merge(sk_api_call *call, const json_t *sent, const json_t *stored)
{
    grace_state *gs = call->view_state;
    const json_t *meta = json_object_get(stored, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    if ((gs->d->precondition_uid && strcmp(gs->d->precondition_uid, uid ? uid : "") != 0) ||
        (gs->d->precondition_rev && gs->d->precondition_rev != sk_parse_i64(rv ? rv : ""))) {
        sk_call_reply_errorf(call, SK_ERR_CONFLICT,
                             "Operation cannot be fulfilled on pods \"%s\": the precondition "
                             "of the deletion does not hold",
                             call->name);
        return NULL;
    }
    json_t *obj = json_deep_copy(stored);
    json_t *m = json_object_get(obj, "metadata");
    json_int_t current = json_integer_value(json_object_get(m, "deletionGracePeriodSeconds"));
    if (json_object_get(m, "deletionTimestamp") && current <= gs->grace_s)
        return obj; /* already deleting, as soon or sooner */
    char ts[21];
    sk_format_rfc3339(sk_wall_s() + gs->grace_s, ts);
    json_object_set_new(m, "deletionTimestamp", json_string(ts));
    json_object_set_new(m, "deletionGracePeriodSeconds", json_integer(gs->grace_s));
    return obj;
}

static void grace_reply(sk_api_call *call, const json_t *obj)
{
    grace_state *gs = call->view_state;
    if (!gs->evict) {
        sk_call_reply_json(call, 200, obj);
        return;
    }
    call->write_err = SK_OK;
    evict_done(call);
}

static const sk_update_view grace_view = {
    .decode = grace_decode,
    .merge = grace_merge,
    .reply = grace_reply,
    .unadmitted = 1,
};

/* The grace period of deleting pod (grace_s < 0: none given); 0 for a pod
 * no node runs. */
static int64_t pod_grace(const json_t *pod, int64_t grace_s)
{
    const json_t *spec = json_object_get(pod, "spec");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase =
        json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    if (!node || !*node || (phase && (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded"))))
        return 0;
    if (grace_s < 0) {
        json_t *t = json_object_get(spec, "terminationGracePeriodSeconds");
        grace_s = json_is_integer(t) ? json_integer_value(t) : 30;
    }
    return grace_s < 0 ? 1 : grace_s;
}

int sk_delete_object(sk_api_call *call, const sk_delete_options *d, int64_t grace_s, int evict)
{
    if (!*call->res->group && strcmp(call->res->resource, "pods") == 0) {
        sk_row row = {0};
        json_t *pod = NULL;
        if (sk_store_get(call->api->store, call->res->storage, call->ns, call->name, 0, &row) ==
            SK_OK)
            pod = sk_call_parse_stored(call->res, row.value, row.value_len, call->name);
        sk_row_clear(&row);
        int64_t grace = pod ? pod_grace(pod, grace_s) : 0;
        json_decref(pod);
        if (grace > 0) {
            grace_state *gs = sk_arena_alloc(call->arena, sizeof *gs);
            gs->d = d;
            gs->grace_s = grace;
            gs->evict = evict;
            call->view_state = gs;
            return sk_update_start(call, 0, &grace_view);
        }
    }
    sk_write w = {
        .op = SK_WRITE_DELETE,
        .resource = call->res->storage,
        .ns = call->ns,
        .name = call->name,
        .expected_rev = d->precondition_rev,
        .expected_uid = d->precondition_uid,
        .cascade_namespace = strcmp(call->res->resource, "namespaces") == 0 && !*call->res->group,
        .object = skeleton(call),
    };
    return sk_call_submit_write(call, &w, evict ? evict_done : delete_done);
}

/* gracePeriodSeconds of the body (decoded) or the query; -1 if neither
 * gives one. */
static int64_t grace_param(sk_api_call *call, const json_t *body)
{
    json_t *g = json_object_get(body, "gracePeriodSeconds");
    if (json_is_integer(g))
        return json_integer_value(g);
    const char *q = sk_call_query(call, "gracePeriodSeconds");
    int64_t v = q && *q ? sk_parse_i64(q) : -1;
    return v;
}

int sk_verb_delete(sk_api_call *call)
{
    sk_write_options wo;
    json_t *status = NULL;
    sk_delete_options *d = sk_arena_alloc(call->arena, sizeof *d);
    json_t *body = NULL;
    if (sk_write_options_parse(sk_call_query, call, 0, &wo, &status) != SK_OK) {
        sk_call_reply_status_object(call, status);
        return SK_STEP_DONE;
    }
    if (call->body_len > 0) {
        body = sk_call_keep(call, sk_body_decode(call, "expected DeleteOptions"));
        if (!body)
            return SK_STEP_DONE;
        if (sk_delete_options_decode(body, d, &status) != SK_OK) {
            sk_call_reply_status_object(call, status);
            return SK_STEP_DONE;
        }
    }
    if (wo.dry_run)
        return sk_verb_get(call);
    return sk_delete_object(call, d, grace_param(call, body), 0);
}

/* ---- deletecollection ------------------------------------------------------ */

typedef struct collection_state {
    sk_label_selector *labels;
    sk_field_selector *fields;
    char **names; /* the keys to delete, in the arena */
    int64_t *revs;
    int count, next, cap;
    json_t *items; /* the deleted objects' last states */
} collection_state;

static void release_selectors(void *self)
{
    collection_state *st = self;
    sk_label_selector_free(st->labels);
    sk_field_selector_free(st->fields);
}

/* Adds the item to the deletions if the selectors pick it. */
static void collect(sk_api_call *call, collection_state *st, sk_blob *blob)
{
    int selects_all = sk_label_selector_is_empty(st->labels) && !st->fields;
    json_t *obj = NULL;
    if (!selects_all) {
        size_t len;
        const char *data = sk_blob_data(blob, &len);
        obj = sk_call_parse_stored_warn(call, data, len, sk_blob_name(blob));
    }
    if (selects_all ||
        (obj && sk_label_selector_matches(st->labels,
                                          json_object_get(json_object_get(obj, "metadata"),
                                                          "labels")) &&
         (!st->fields || sk_field_selector_matches(st->fields, obj)))) {
        if (st->count == st->cap) {
            int cap = st->cap ? st->cap * 2 : 64;
            char **names = sk_arena_alloc(call->arena, (size_t)cap * sizeof *names);
            int64_t *revs = sk_arena_alloc(call->arena, (size_t)cap * sizeof *revs);
            if (st->count) {
                memcpy(names, st->names, (size_t)st->count * sizeof *names);
                memcpy(revs, st->revs, (size_t)st->count * sizeof *revs);
            }
            st->names = names;
            st->revs = revs;
            st->cap = cap;
        }
        st->names[st->count] = sk_arena_strdup(call->arena, sk_blob_name(blob));
        st->revs[st->count] = sk_blob_rev(blob);
        st->count++;
    }
    json_decref(obj);
}

static int delete_next(sk_api_call *call);

static int delete_one_done(sk_api_call *call)
{
    collection_state *st = call->verb_state;
    if (call->write_err == SK_OK) {
        json_t *obj = sk_call_parse_stored_warn(call, call->write_row.value,
                                                call->write_row.value_len, call->write_row.name);
        if (obj && sk_convert_needed(call->res)) {
            json_t *served = sk_convert_from_stored(call->res, obj);
            json_decref(obj);
            obj = served;
        }
        if (obj)
            json_array_append_new(st->items, obj);
    } else if (call->write_err != SK_ERR_NOT_FOUND && call->write_err != SK_ERR_CONFLICT) {
        sk_call_reply_store_error(call, call->write_err, st->names[st->next - 1]);
        return SK_STEP_DONE;
    }
    call->next = delete_next;
    return SK_STEP_AGAIN;
}

static int delete_next(sk_api_call *call)
{
    collection_state *st = call->verb_state;
    /* A client that went away stops the deletions it asked for. */
    if (st->next < st->count && call->client_gone && call->client_gone(call->client_ctx))
        st->count = st->next;
    if (st->next == st->count) {
        json_t *list =
            json_pack("{s:s, s:s, s:{}, s:O}", "kind", call->res->list_kind, "apiVersion",
                      call->res->api_version, "metadata", "items", st->items);
        sk_call_reply_json(call, 200, list);
        json_decref(list);
        return SK_STEP_DONE;
    }
    int i = st->next++;
    sk_write w = {
        .op = SK_WRITE_DELETE,
        .resource = call->res->storage,
        .ns = call->ns,
        .name = st->names[i],
        .expected_rev = st->revs[i],
        .object = skeleton(call),
    };
    return sk_call_submit_write(call, &w, delete_one_done);
}

/* Reads the matching keys at the store's current revision. */
static sk_err collect_all(sk_api_call *call, collection_state *st)
{
    int64_t rev;
    sk_err err = sk_store_revisions(call->api->store, &rev, NULL);
    sk_read_query q = {.resource = call->res->storage, .ns = call->ns, .rev = rev > 0 ? rev : 1};
    char *after_ns = NULL, *after_name = NULL;
    int n = SK_READ_MAX_ITEMS;
    while (err == SK_OK && n == SK_READ_MAX_ITEMS) {
        sk_blob *items[SK_READ_MAX_ITEMS];
        sk_read_source source;
        q.limit = SK_READ_MAX_ITEMS;
        q.after_ns = after_ns;
        q.after_name = after_name;
        if ((err = sk_reader_list(call->api->reader, &q, items, &n, &source)) != SK_OK)
            break;
        for (int i = 0; i < n; i++) {
            collect(call, st, items[i]);
            if (i == n - 1) {
                after_ns = sk_arena_strdup(call->arena, sk_blob_ns(items[i]));
                after_name = sk_arena_strdup(call->arena, sk_blob_name(items[i]));
            }
            sk_blob_unref(items[i]);
        }
    }
    return err;
}

int sk_verb_delete_collection(sk_api_call *call)
{
    collection_state *st = sk_arena_alloc(call->arena, sizeof *st);
    call->verb_state = st;
    sk_arena_defer(call->arena, release_selectors, st);
    sk_write_options wo;
    sk_list_options lo;
    json_t *status = NULL;
    if (sk_write_options_parse(sk_call_query, call, 0, &wo, &status) != SK_OK ||
        sk_list_options_parse(sk_call_query, call, 0, &lo, &status) != SK_OK) {
        sk_call_reply_status_object(call, status);
        return SK_STEP_DONE;
    }
    char *msg = NULL;
    sk_err err = sk_label_selector_parse(lo.label_selector ? lo.label_selector : "", &st->labels,
                                         &msg);
    if (err == SK_OK && lo.field_selector)
        err = sk_field_selector_parse(lo.field_selector, call->res, &st->fields, &msg);
    if (err != SK_OK) {
        sk_call_reply_error(call, err, msg ? msg : "invalid selector");
        free(msg);
        return SK_STEP_DONE;
    }
    if ((err = collect_all(call, st)) != SK_OK) {
        sk_call_reply_store_error(call, err, "");
        return SK_STEP_DONE;
    }
    st->items = sk_call_keep(call, json_array());
    if (wo.dry_run)
        st->next = st->count;
    return delete_next(call);
}
