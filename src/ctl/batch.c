/*
 * batch.c - see batch.h. Each queued write owns copies of its key (the
 * writer reads them until its callback), kept in a list freed by
 * sk_batch_finish once the last callback has run.
 */
#include "ctl/batch.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "kube/lifecycle.h"
#include "kube/managed.h"
#include "kube/status_rules.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct queued {
    struct queued *next;
    char *resource, *ns, *name;
    sk_batch *batch;
} queued;

struct sk_batch {
    sk_store *store;
    const char *manager;
    queued *writes;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pending;
    int failed;
};

sk_batch *sk_batch_new(sk_store *store, const char *manager)
{
    sk_batch *b = calloc(1, sizeof *b);
    SK_CHECK_ALLOC(b);
    b->store = store;
    b->manager = manager;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    return b;
}

static char *copy(const char *s)
{
    char *c = strdup(s);
    SK_CHECK_ALLOC(c);
    return c;
}

static void written(void *arg, sk_err err, const sk_row *row)
{
    (void)row;
    queued *q = arg;
    sk_batch *b = q->batch;
    /* Another writer got there first, or (FORBIDDEN) the namespace of a
     * create began its deletion: the next pass plans from what is stored. */
    int failed = err != SK_OK && err != SK_ERR_CONFLICT && err != SK_ERR_NOT_FOUND &&
                 err != SK_ERR_ALREADY_EXISTS && err != SK_ERR_FORBIDDEN;
    if (failed)
        sk_log_warn("controller write of %s %s/%s failed: %s", q->resource, q->ns, q->name,
                    sk_err_name(err));
    pthread_mutex_lock(&b->mu);
    if (failed)
        b->failed++;
    if (--b->pending == 0)
        pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static void submit(sk_batch *b, sk_write_op op, const sk_resource *r, const char *ns,
                   const char *name, int64_t rev, json_t *obj)
{
    queued *q = calloc(1, sizeof *q);
    SK_CHECK_ALLOC(q);
    q->resource = copy(r->storage);
    q->ns = copy(ns);
    q->name = copy(name);
    q->batch = b;
    q->next = b->writes;
    b->writes = q;
    sk_write w = {
        .op = op,
        .resource = q->resource,
        .ns = q->ns,
        .name = q->name,
        .expected_rev = rev,
        .object = obj,
        .require_namespace = op == SK_WRITE_CREATE && r->namespaced ? q->ns : NULL,
        .namespace_open = sk_lifecycle_namespace_open,
    };
    pthread_mutex_lock(&b->mu);
    b->pending++;
    pthread_mutex_unlock(&b->mu);
    sk_store_write_async(b->store, &w, written, q);
}

/* What kube's field manager is told of a write of the batch's manager
 * through subresource (now: room for its time). */
static sk_managed_write manager_write(const sk_batch *b, const sk_resource *r,
                                      const char *subresource, char now[21])
{
    sk_format_rfc3339(sk_wall_s(), now);
    return (sk_managed_write){.manager = b->manager,
                              .api_version = r->api_version,
                              .subresource = subresource,
                              .now = now,
                              .status_subresource = sk_status_rules_has_status(r)};
}

static sk_fieldset_type field_type(const sk_resource *r)
{
    return (sk_fieldset_type){.schema = r->schema, .openapi = r->custom ? r->custom->schema : NULL};
}

/* obj's managedFields after the batch's manager wrote it over old (NULL:
 * created), as kube's field manager records a controller's Update. */
static void record_manager(const sk_batch *b, const sk_resource *r, const json_t *old, json_t *obj,
                           const char *subresource)
{
    char now[21];
    sk_managed_write w = manager_write(b, r, subresource, now);
    sk_managed_update(field_type(r), old, obj, &w);
}

static const char *meta_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
    return s ? s : "";
}

void sk_batch_delete(sk_batch *b, const sk_resource *r, const json_t *obj, int64_t rev,
                     const sk_delete_options *d)
{
    sk_delete_plan plan;
    json_t *updated = NULL;
    char *msg = NULL;
    if (sk_lifecycle_plan_delete(r, obj, d, sk_wall_s(), &plan, &updated, &msg) != SK_OK) {
        free(msg); /* a precondition of d: the object changed, the next round decides */
        return;
    }
    if (plan == SK_DELETE_PENDING)
        return;
    submit(b, plan == SK_DELETE_NOW ? SK_WRITE_DELETE : SK_WRITE_UPDATE, r,
           meta_str(obj, "namespace"), meta_str(obj, "name"), rev,
           plan == SK_DELETE_NOW ? sk_registry_stub(r, NULL, NULL) : updated);
}

void sk_batch_update(sk_batch *b, const sk_resource *r, const json_t *old, json_t *edited,
                     int64_t rev, const char *subresource)
{
    if (json_equal(old, edited)) {
        json_decref(edited);
        return;
    }
    int removes = sk_lifecycle_update_deletes(r, old, edited);
    if (removes) {
        json_decref(edited);
        edited = sk_registry_stub(r, NULL, NULL);
    } else {
        record_manager(b, r, old, edited, subresource);
    }
    submit(b, removes ? SK_WRITE_DELETE : SK_WRITE_UPDATE, r, meta_str(old, "namespace"),
           meta_str(old, "name"), rev, edited);
}

void sk_batch_apply(sk_batch *b, const sk_resource *r, const json_t *live, const json_t *config,
                    int64_t rev, const char *subresource)
{
    char now[21];
    sk_managed_write w = manager_write(b, r, subresource, now);
    json_t *out = NULL, *status = NULL;
    if (sk_managed_apply(field_type(r), live, config, &w, 1, &out, &status) != SK_OK) {
        sk_log_warn("%s: cannot apply to %s %s: %s", b->manager, r->resource,
                    meta_str(live, "name"), json_string_value(json_object_get(status, "message")));
    } else if (json_equal(live, out)) {
        json_decref(out);
    } else {
        submit(b, SK_WRITE_UPDATE, r, meta_str(live, "namespace"), meta_str(live, "name"), rev,
               out);
    }
    json_decref(status);
}

void sk_batch_create(sk_batch *b, const sk_resource *r, const char *ns, json_t *obj)
{
    char *name = copy(meta_str(obj, "name"));
    record_manager(b, r, NULL, obj, NULL);
    submit(b, SK_WRITE_CREATE, r, ns, name, 0, obj);
    free(name);
}

int sk_batch_finish(sk_batch *b)
{
    pthread_mutex_lock(&b->mu);
    while (b->pending > 0)
        pthread_cond_wait(&b->cv, &b->mu);
    int failed = b->failed;
    pthread_mutex_unlock(&b->mu);
    while (b->writes) {
        queued *q = b->writes;
        b->writes = q->next;
        free(q->resource);
        free(q->ns);
        free(q->name);
        free(q);
    }
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b);
    return failed;
}
