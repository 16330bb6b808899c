/*
 * delete.c - DELETE of one object (DeleteOptions: preconditions, grace
 * period, propagation policy), eviction's deletion, and deletecollection
 * (with label and field selectors).
 *
 * Every deletion is one `deletion` run: read the stored version, plan what
 * deleting it does (kube/lifecycle.h: remove it, mark it - deletionTimestamp,
 * grace period, the finalizers the propagation policy leaves, a namespace's
 * Terminating phase - or nothing, when it is already being deleted as
 * asked), and write that with the read revision as precondition; a
 * conflict the client did not ask for reads and plans again. So an object
 * with finalizers is marked, never removed, and the update that drops its
 * last finalizer removes it (update.c). A stored version that does not parse
 * is still removed: the write carries the kind's stub (sk_registry_stub) for
 * its tombstone.
 *
 * deletecollection reads the matching keys at one revision, then runs one
 * deletion per key; an object gone or changed meanwhile is skipped, as kube
 * skips it; a client that goes away stops it. The verb_state of every
 * delete verb is its deletion.
 */
#include "api/body.h"
#include "api/call.h"
#include "api/crconvert.h"
#include "api/served.h"
#include "api/verbs.h"
#include "api/webhooks.h"
#include "core/log.h"
#include "core/util.h"
#include "kube/lifecycle.h"
#include "kube/selector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DELETE_ATTEMPTS 8

typedef struct deletion deletion;
struct deletion {
    sk_delete_options d;
    int evict;
    const char *name; /* the object's */
    int attempts;
    sk_row current; /* the version read */
    /* Runs when the run ends: write_err is its outcome, result the object
     * as it is now (new: removed, marked, or untouched), NULL on error or
     * for a stored version that does not parse. */
    sk_call_fn done;
    json_t *result;
    int removed;
    char *msg;   /* the plan's refusal (precondition, immortal namespace), in the arena */
    void *owner; /* deletecollection's state */
};

static void release_deletion(void *self)
{
    deletion *del = self;
    sk_row_clear(&del->current);
    json_decref(del->result);
}

static deletion *deletion_new(sk_api_call *call, const sk_delete_options *d, const char *name,
                              sk_call_fn done)
{
    deletion *del = sk_arena_alloc(call->arena, sizeof *del);
    del->d = *d;
    del->name = name;
    del->done = done;
    sk_arena_defer(call->arena, release_deletion, del);
    call->verb_state = del;
    return del;
}

/* obj (borrowed, stored form) as the call's version: new reference, or
 * NULL with *failed (new) when its CRD's conversion webhook failed. */
static json_t *served_form(const sk_api_call *call, const json_t *obj, json_t **failed)
{
    return sk_crconvert_needed(call->res)
               ? sk_crconvert_from_stored(call->api, call->res, obj, NULL, failed)
               : json_incref((json_t *)obj);
}

/* The result of a run, obj (borrowed) as the call's version; a webhook that
 * fails to convert what is already written leaves it NULL (answered as a
 * Status Success), logged. */
static json_t *result_form(const sk_api_call *call, const json_t *obj)
{
    json_t *failed = NULL;
    json_t *out = served_form(call, obj, &failed);
    if (!out)
        sk_log_warn("delete of %s \"%s\": %s", call->res->resource,
                    call->name ? call->name : "",
                    json_string_value(json_object_get(failed, "message")));
    json_decref(failed);
    return out;
}

static int deletion_step(sk_api_call *call);

static int deletion_written(sk_api_call *call)
{
    deletion *del = call->verb_state;
    if (call->write_err == SK_ERR_CONFLICT && ++del->attempts < MAX_DELETE_ATTEMPTS) {
        call->next = deletion_step;
        return SK_STEP_AGAIN;
    }
    if (call->write_err == SK_OK) {
        json_t *obj = sk_call_parse_stored(call->res, call->write_row.value,
                                           call->write_row.value_len, del->name);
        del->result = obj ? result_form(call, obj) : NULL;
        json_decref(obj);
    }
    return del->done(call);
}

/* One read-plan-write round for del->name. */
static int deletion_step(sk_api_call *call)
{
    deletion *del = call->verb_state;
    sk_row_clear(&del->current);
    sk_err err =
        sk_store_get(call->api->store, call->res->storage, call->ns, del->name, 0, &del->current);
    if (err != SK_OK) {
        call->write_err = err;
        return del->done(call);
    }
    json_t *stored =
        sk_call_parse_stored(call->res, del->current.value, del->current.value_len, del->name);
    json_t *updated = NULL;
    char *msg = NULL;
    sk_delete_plan plan = SK_DELETE_NOW;
    /* kube runs a delete's admission on the object as read, before it
     * plans; an eviction's is the Eviction's own create (subresource.c) */
    if (stored && !del->evict) {
        json_t *failed = NULL;
        json_t *served = served_form(call, stored, &failed);
        if (!served)
            sk_call_reply_status_object(call, failed);
        int refused = served ? sk_webhooks_delete(call, served, &del->d) : -1;
        json_decref(served);
        if (refused < 0) {
            json_decref(stored);
            return SK_STEP_DONE;
        }
    }
    if (stored && (err = sk_lifecycle_plan_delete(call->res, stored, &del->d, sk_wall_s(), &plan,
                                                  &updated, &msg)) != SK_OK) {
        del->msg = sk_arena_strdup(call->arena, msg);
        free(msg);
        json_decref(stored);
        call->write_err = err;
        return del->done(call);
    }
    if (plan == SK_DELETE_PENDING || del->d.dry_run) {
        del->result = stored ? result_form(call, plan == SK_DELETE_MARK ? updated : stored) : NULL;
        del->removed = plan == SK_DELETE_NOW;
        json_decref(stored);
        json_decref(updated);
        call->write_err = SK_OK;
        return del->done(call);
    }
    json_decref(stored);
    del->removed = plan == SK_DELETE_NOW;
    sk_write w = {
        .op = plan == SK_DELETE_NOW ? SK_WRITE_DELETE : SK_WRITE_UPDATE,
        .resource = call->res->storage,
        .ns = call->ns,
        .name = del->name,
        .expected_rev = del->current.rev,
        .object = plan == SK_DELETE_NOW ? sk_registry_stub(call->res, NULL, NULL) : updated,
    };
    return sk_call_submit_write(call, &w, deletion_written);
}

/* ---- DELETE and eviction ------------------------------------------------- */

/* A removal of a kind whose store does not return the deleted object: a
 * Status Success naming it, its details' kind the resource (as kube's
 * finalizeDelete fills it), so a client can tell removed from marked. */
static void reply_deleted(sk_api_call *call, const deletion *del)
{
    json_t *meta = json_object_get(del->result, "metadata");
    json_t *details = json_pack("{s:s}", "name", del->name);
    if (call->res->group[0])
        json_object_set_new(details, "group", json_string(call->res->group));
    json_object_set_new(details, "kind", json_string(call->res->resource));
    json_t *uid = json_object_get(meta, "uid");
    if (json_is_string(uid))
        json_object_set(details, "uid", uid);
    json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:o}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Success", "details", details);
    sk_call_reply_json(call, 200, st);
    json_decref(st);
}

static int delete_done(sk_api_call *call)
{
    deletion *del = call->verb_state;
    if (call->write_err != SK_OK && del->msg) {
        sk_call_reply_status(call, call->write_err, del->msg, call->res->group, call->res->resource,
                             del->name, NULL);
    } else if (call->write_err != SK_OK) {
        sk_call_reply_store_error(call, call->write_err, del->name);
    } else if (del->evict) {
        /* An eviction answers a Status Success, 201, as kube's eviction REST does. */
        json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                               "metadata", "status", "Success", "code", 201);
        sk_call_reply_json(call, 201, st);
        json_decref(st);
    } else if (del->result && del->removed && !call->res->delete_returns_object) {
        reply_deleted(call, del);
    } else if (del->result) {
        /* 202 only when the client asked to cascade with orphanDependents=false
         * and the object stays, as kube's delete handler answers. */
        int code = !del->removed && del->d.orphan_dependents == 0 ? 202 : 200;
        sk_call_reply_json(call, code, del->result);
    } else {
        json_t *st = json_pack("{s:s, s:s, s:{}, s:s}", "kind", "Status", "apiVersion", "v1",
                               "metadata", "status", "Success");
        sk_call_reply_json(call, 200, st);
        json_decref(st);
    }
    return SK_STEP_DONE;
}

/* DeleteOptions as kube reads them: from the body, or from the query when
 * there is no body (a precondition uid points into the body, which the call
 * keeps); dryRun included, so kubectl's --dry-run=server, which sends it in
 * the body, never deletes. One departure, towards safety: a body without
 * dryRun beside ?dryRun=All is a dry run too (kube ignores the query then and
 * deletes for real). -1 after replying. */
static int read_delete_options(sk_api_call *call, sk_delete_options *d)
{
    json_t *status = NULL;
    if (call->body_len > 0) {
        json_t *body = sk_call_keep(call, sk_body_decode(call, "expected DeleteOptions"));
        if (!body)
            return -1;
        if (sk_delete_options_decode(body, d, &status) == SK_OK) {
            const char *query_dry_run = sk_call_query(call, "dryRun");
            d->dry_run |= query_dry_run && strcmp(query_dry_run, "All") == 0;
            return 0;
        }
    } else if (sk_delete_options_query(sk_call_query, call, d, &status) == SK_OK) {
        return 0;
    }
    sk_call_reply_status_object(call, status);
    return -1;
}

int sk_delete_object(sk_api_call *call, const sk_delete_options *d, int evict)
{
    deletion *del = deletion_new(call, d, call->name, delete_done);
    del->evict = evict;
    return deletion_step(call);
}

int sk_verb_delete(sk_api_call *call)
{
    int ready = sk_webhooks_wait(call, sk_verb_delete);
    if (ready != SK_PLAN_NOW)
        return ready;
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    if (read_delete_options(call, &d) < 0)
        return SK_STEP_DONE;
    return sk_delete_object(call, &d, 0);
}

/* ---- deletecollection ------------------------------------------------------ */

typedef struct collection_state {
    sk_label_selector *labels;
    sk_field_selector *fields;
    char **names; /* the keys to delete, in the arena */
    int count, next, cap;
    json_t *items; /* the deleted objects' states after their deletion */
} collection_state;

static void release_collection(void *self)
{
    collection_state *st = self;
    sk_label_selector_free(st->labels);
    sk_field_selector_free(st->fields);
    json_decref(st->items);
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
        (obj &&
         sk_label_selector_matches(st->labels,
                                   json_object_get(json_object_get(obj, "metadata"), "labels")) &&
         (!st->fields || sk_field_selector_matches(st->fields, obj)))) {
        if (st->count == st->cap) {
            int cap = st->cap ? st->cap * 2 : 64;
            char **names = sk_arena_alloc(call->arena, (size_t)cap * sizeof *names);
            if (st->count)
                memcpy(names, st->names, (size_t)st->count * sizeof *names);
            st->names = names;
            st->cap = cap;
        }
        st->names[st->count++] = sk_arena_strdup(call->arena, sk_blob_name(blob));
    }
    json_decref(obj);
}

static int collection_next(sk_api_call *call)
{
    deletion *del = call->verb_state;
    collection_state *st = del->owner;
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
    del->name = st->names[st->next++];
    del->attempts = 0;
    del->msg = NULL;
    return deletion_step(call);
}

/* One object's deletion ended: an object gone meanwhile is skipped. */
static int collection_one_done(sk_api_call *call)
{
    deletion *del = call->verb_state;
    collection_state *st = del->owner;
    if (call->write_err == SK_OK && del->result) {
        json_array_append_new(st->items, del->result);
        del->result = NULL;
    } else if (call->write_err != SK_OK && call->write_err != SK_ERR_NOT_FOUND) {
        if (del->msg)
            sk_call_reply_status(call, call->write_err, del->msg, call->res->group,
                                 call->res->resource, del->name, NULL);
        else
            sk_call_reply_store_error(call, call->write_err, del->name);
        return SK_STEP_DONE;
    }
    call->next = collection_next;
    return SK_STEP_AGAIN;
}

typedef struct collect_arg {
    sk_api_call *call;
    collection_state *st;
} collect_arg;

static int collect_item(void *arg, sk_blob *item)
{
    collect_arg *a = arg;
    collect(a->call, a->st, item);
    return 0;
}

/* Reads the matching keys at the store's current revision. */
static sk_err collect_all(sk_api_call *call, collection_state *st)
{
    int64_t rev;
    sk_err err = sk_store_revisions(call->api->store, &rev, NULL);
    collect_arg a = {call, st};
    if (err == SK_OK)
        err = sk_reader_scan(call->api->reader, call->res->storage, call->ns, rev > 0 ? rev : 1,
                             collect_item, &a);
    return err;
}

int sk_verb_delete_collection(sk_api_call *call)
{
    int ready = sk_webhooks_wait(call, sk_verb_delete_collection);
    if (ready != SK_PLAN_NOW)
        return ready;
    collection_state *st = sk_arena_alloc(call->arena, sizeof *st);
    sk_arena_defer(call->arena, release_collection, st);
    st->items = json_array();
    sk_list_options lo;
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    json_t *status = NULL;
    if (sk_list_options_parse(sk_call_query, call, 0, &lo, &status) != SK_OK) {
        sk_call_reply_status_object(call, status);
        return SK_STEP_DONE;
    }
    if (read_delete_options(call, &d) < 0)
        return SK_STEP_DONE;
    char *msg = NULL;
    sk_err err =
        sk_label_selector_parse(lo.label_selector ? lo.label_selector : "", &st->labels, &msg);
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
    deletion *del = deletion_new(call, &d, NULL, collection_one_done);
    del->owner = st;
    return collection_next(call);
}
