/*
 * lifecycle.c - planning deletions and update-removals (lifecycle.h).
 *
 * Only pods delete gracefully (kube's pod strategy is the one
 * RESTGracefulDeleteStrategy among the built-in kinds): their grace period
 * is the option's, else spec.terminationGracePeriodSeconds, and 0 for a pod
 * no node runs or that has finished. Every other kind is removed at once
 * unless it keeps finalizers, and is then marked with deletionTimestamp now
 * and a grace period of 0 (markAsDeleting), which is also what lets a later
 * update that drops the last finalizer remove it.
 *
 * One deviation, on purpose: a pod deleted with a grace period of 0 and no
 * finalizers is removed in one write, where kube first writes the marked pod
 * and then removes it; watchers see DELETED without the MODIFIED before it.
 */
#include "kube/lifecycle.h"
#include "kube/condition.h"
#include "core/buf.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

static json_t *meta_of(const json_t *obj)
{
    return json_object_get(obj, "metadata");
}

static const char *meta_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(meta_of(obj), key));
    return s ? s : "";
}

int sk_lifecycle_deleting(const json_t *obj)
{
    return *meta_str(obj, "deletionTimestamp") != '\0';
}

int sk_lifecycle_namespace_open(const char *ns, size_t len)
{
    /* Stored JSON spells keys plainly: without the key's bytes the namespace
     * cannot be deleting, and the common case skips decoding it. */
    if (!memmem(ns, len, "\"deletionTimestamp\"", 19))
        return 1;
    json_t *obj = json_loadb(ns, len, 0, NULL);
    int open = !obj || !sk_lifecycle_deleting(obj);
    json_decref(obj);
    return open;
}

static int list_has(const json_t *list, const char *name)
{
    size_t i;
    const json_t *f;
    json_array_foreach(list, i, f)
    {
        if (json_is_string(f) && strcmp(json_string_value(f), name) == 0)
            return 1;
    }
    return 0;
}

int sk_lifecycle_has_finalizer(const json_t *obj, const char *name)
{
    return list_has(json_object_get(meta_of(obj), "finalizers"), name);
}

int sk_lifecycle_drop_finalizer(json_t *obj, const char *name)
{
    json_t *list = json_object_get(meta_of(obj), "finalizers");
    int dropped = 0;
    for (size_t i = json_array_size(list); i-- > 0;) {
        const char *f = json_string_value(json_array_get(list, i));
        if (f && strcmp(f, name) == 0) {
            json_array_remove(list, i);
            dropped = 1;
        }
    }
    if (list && json_array_size(list) == 0)
        json_object_del(meta_of(obj), "finalizers");
    return dropped;
}

static int is_core(const sk_resource *r, const char *resource)
{
    return !*r->group && strcmp(r->resource, resource) == 0;
}

/* ---- preconditions ------------------------------------------------------ */

static sk_err conflict(char **msg_out, const char *on, const char *name, const char *what,
                       const char *given, const char *has)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_printf(&m, "Operation cannot be fulfilled on %s ", on);
    sk_buf_go_quoted(&m, name);
    sk_buf_printf(&m, ": Precondition failed: %s in precondition: %s, %s in object meta: %s", what,
                  given, what, has);
    *msg_out = sk_buf_steal(&m, NULL);
    return SK_ERR_CONFLICT;
}

/* rest.BeforeDelete's checks name the kind (Group.Kind), the namespace
 * registry's the resource; both say which precondition failed. */
static sk_err check_preconditions(const json_t *stored, const sk_delete_options *d, const char *on,
                                  char **msg_out)
{
    const char *name = meta_str(stored, "name");
    const char *uid = meta_str(stored, "uid");
    const char *rv = meta_str(stored, "resourceVersion");
    if (d->precondition_uid && strcmp(d->precondition_uid, uid) != 0)
        return conflict(msg_out, on, name, "UID", d->precondition_uid, uid);
    if (d->precondition_rev && d->precondition_rev != sk_parse_i64(rv)) {
        char given[24];
        snprintf(given, sizeof given, "%lld", (long long)d->precondition_rev);
        return conflict(msg_out, on, name, "ResourceVersion", given, rv);
    }
    return SK_OK;
}

/* ---- finalizers the propagation policy leaves ---------------------------- */

/* shouldOrphanDependents / shouldDeleteDependents: the explicit option, else
 * the finalizer already there (the first of the two found), else the kind's
 * default, Background for every built-in kind served. */
static void wanted_gc_finalizers(const json_t *finalizers, const sk_delete_options *d, int *orphan,
                                 int *foreground)
{
    *orphan = *foreground = 0;
    if (d->orphan_dependents >= 0) {
        *orphan = d->orphan_dependents;
        return;
    }
    if (d->propagation != SK_PROPAGATION_UNSET) {
        *orphan = d->propagation == SK_PROPAGATION_ORPHAN;
        *foreground = d->propagation == SK_PROPAGATION_FOREGROUND;
        return;
    }
    size_t i;
    const json_t *f;
    json_array_foreach(finalizers, i, f)
    {
        const char *s = json_string_value(f) ? json_string_value(f) : "";
        if (strcmp(s, SK_FINALIZER_ORPHAN) == 0 || strcmp(s, SK_FINALIZER_FOREGROUND) == 0) {
            *orphan = strcmp(s, SK_FINALIZER_ORPHAN) == 0;
            *foreground = !*orphan;
            return;
        }
    }
}

/* Sets obj's (edited) orphan/foregroundDeletion finalizers to what is wanted;
 * the others keep their order. */
static void set_gc_finalizers(json_t *obj, int orphan, int foreground)
{
    json_t *meta = meta_of(obj);
    json_t *old = json_object_get(meta, "finalizers");
    if (list_has(old, SK_FINALIZER_ORPHAN) == orphan &&
        list_has(old, SK_FINALIZER_FOREGROUND) == foreground)
        return; /* the same set: kube keeps the list as it is */
    json_t *list = json_array();
    size_t i;
    const json_t *f;
    json_array_foreach(old, i, f)
    {
        const char *s = json_string_value(f) ? json_string_value(f) : "";
        if (strcmp(s, SK_FINALIZER_ORPHAN) != 0 && strcmp(s, SK_FINALIZER_FOREGROUND) != 0)
            json_array_append(list, (json_t *)f);
    }
    if (orphan)
        json_array_append_new(list, json_string(SK_FINALIZER_ORPHAN));
    if (foreground)
        json_array_append_new(list, json_string(SK_FINALIZER_FOREGROUND));
    if (json_array_size(list) > 0)
        json_object_set_new(meta, "finalizers", list);
    else {
        json_decref(list);
        json_object_del(meta, "finalizers");
    }
}

/* ---- marks --------------------------------------------------------------- */

static void bump_generation(json_t *meta)
{
    json_int_t gen = json_integer_value(json_object_get(meta, "generation"));
    if (gen > 0)
        json_object_set_new(meta, "generation", json_integer(gen + 1));
}

static void set_timestamp(json_t *meta, int64_t t)
{
    char ts[21];
    sk_format_rfc3339(t, ts);
    json_object_set_new(meta, "deletionTimestamp", json_string(ts));
}

/* markAsDeleting: deleting now, with no grace period to wait out. */
static void mark_as_deleting(json_t *obj, int64_t now_s)
{
    json_t *meta = meta_of(obj);
    const char *ts = json_string_value(json_object_get(meta, "deletionTimestamp"));
    if (!ts)
        bump_generation(meta);
    if (!ts || sk_parse_rfc3339(ts) > now_s)
        set_timestamp(meta, now_s);
    json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(0));
}

/* The pod strategy's CheckGracefulDelete: the grace period of deleting pod. */
static int64_t pod_grace(const json_t *pod, const sk_delete_options *d, int64_t given)
{
    const json_t *spec = json_object_get(pod, "spec");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    int64_t period =
        d->has_grace ? given
                     : json_integer_value(json_object_get(spec, "terminationGracePeriodSeconds"));
    if (!node || !*node || (phase && (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded"))))
        period = 0;
    return period < 0 ? 1 : period;
}

typedef enum { GRACE_NONE, GRACE_SET, GRACE_PENDING } grace_result;

/*
 * rest.BeforeDelete's graceful part for a pod (obj edited): GRACE_SET when
 * it marked obj with a (new or shorter) grace period, GRACE_PENDING when a
 * grace period already running is not shortened, GRACE_NONE when the pod
 * was marked without a grace period and goes on like any other object.
 */
static grace_result pod_before_delete(json_t *obj, const sk_delete_options *d, int64_t given,
                                      int64_t now_s)
{
    json_t *meta = meta_of(obj);
    if (sk_lifecycle_deleting(obj)) {
        json_int_t current =
            json_integer_value(json_object_get(meta, "deletionGracePeriodSeconds"));
        if (current < 0)
            current = 1;
        if (current == 0)
            return GRACE_NONE;
        if (!d->has_grace || given >= current)
            return GRACE_PENDING;
        int64_t ts = sk_parse_rfc3339(meta_str(obj, "deletionTimestamp"));
        set_timestamp(meta, ts - current + given);
        json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(given));
        return GRACE_SET;
    }
    int64_t period = pod_grace(obj, d, given);
    set_timestamp(meta, now_s + period);
    json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(period));
    bump_generation(meta);
    return GRACE_SET;
}

/* Store.Delete and updateForGracefulDeletionAndFinalizers for obj (edited). */
static sk_delete_plan plan_generic(const sk_resource *r, json_t *obj, const sk_delete_options *d,
                                   int64_t now_s)
{
    int64_t given = d->has_grace && d->grace_s < 0 ? 1 : d->grace_s;
    grace_result grace = GRACE_NONE;
    if (is_core(r, "pods"))
        grace = pod_before_delete(obj, d, given, now_s);
    if (grace == GRACE_PENDING)
        return SK_DELETE_PENDING;
    int orphan, foreground;
    wanted_gc_finalizers(json_object_get(meta_of(obj), "finalizers"), d, &orphan, &foreground);
    set_gc_finalizers(obj, orphan, foreground);
    int pending_finalizers = json_array_size(json_object_get(meta_of(obj), "finalizers")) > 0;
    if (grace == GRACE_SET) {
        json_int_t period =
            json_integer_value(json_object_get(meta_of(obj), "deletionGracePeriodSeconds"));
        return pending_finalizers || period > 0 ? SK_DELETE_MARK : SK_DELETE_NOW;
    }
    if (!pending_finalizers)
        return SK_DELETE_NOW;
    mark_as_deleting(obj, now_s);
    return SK_DELETE_MARK;
}

/* The namespace registry's Delete: the first delete starts termination
 * (the namespace controller empties it, then drops spec.finalizers); the
 * object goes only once spec.finalizers is empty. */
static sk_delete_plan plan_namespace(const sk_resource *r, json_t *obj, const sk_delete_options *d,
                                     int64_t now_s)
{
    json_t *meta = meta_of(obj);
    if (!sk_lifecycle_deleting(obj)) {
        set_timestamp(meta, now_s);
        json_t *status = json_object_get(obj, "status");
        if (!json_is_object(status)) {
            status = json_object();
            json_object_set_new(obj, "status", status);
        }
        json_object_set_new(status, "phase", json_string("Terminating"));
        /* shouldHaveOrphanFinalizer / shouldHaveDeleteDependentsFinalizer:
         * orphanDependents=false asks for foreground deletion here. */
        const json_t *fins = json_object_get(meta, "finalizers");
        int orphan = list_has(fins, SK_FINALIZER_ORPHAN);
        int foreground = list_has(fins, SK_FINALIZER_FOREGROUND);
        if (d->orphan_dependents >= 0) {
            orphan = d->orphan_dependents;
            foreground = !d->orphan_dependents;
        } else if (d->propagation != SK_PROPAGATION_UNSET) {
            orphan = d->propagation == SK_PROPAGATION_ORPHAN;
            foreground = d->propagation == SK_PROPAGATION_FOREGROUND;
        }
        set_gc_finalizers(obj, orphan, foreground);
        return SK_DELETE_MARK;
    }
    if (json_array_size(json_object_get(json_object_get(obj, "spec"), "finalizers")) > 0)
        return SK_DELETE_PENDING;
    return plan_generic(r, obj, d, now_s);
}

/* The CustomResourceDefinition REST's Delete: the first delete marks it
 * (deletionTimestamp, the cleanup finalizer, condition Terminating), later
 * ones are the generic registry's. */
static sk_delete_plan plan_crd(const sk_resource *r, json_t *obj, const sk_delete_options *d,
                               int64_t now_s)
{
    if (sk_lifecycle_deleting(obj))
        return plan_generic(r, obj, d, now_s);
    json_t *meta = meta_of(obj);
    set_timestamp(meta, now_s);
    json_t *fins = json_object_get(meta, "finalizers");
    if (!json_is_array(fins)) {
        fins = json_array();
        json_object_set_new(meta, "finalizers", fins);
    }
    if (!list_has(fins, SK_FINALIZER_CRD_CLEANUP))
        json_array_append_new(fins, json_string(SK_FINALIZER_CRD_CLEANUP));
    char ts[21];
    sk_format_rfc3339(now_s, ts);
    sk_condition_set(obj,
                     json_pack("{s:s, s:s, s:s, s:s}", "type", "Terminating", "status", "True",
                               "reason", "InstanceDeletionPending", "message",
                               "CustomResourceDefinition marked for deletion; CustomResource "
                               "deletion will begin soon"),
                     ts);
    return SK_DELETE_MARK;
}

/* The NamespaceLifecycle admission plugin's immortal namespaces. */
static int immortal_namespace(const char *name)
{
    static const char *const immortal[] = {"default", "kube-system", "kube-public",
                                           "kube-node-lease"};
    for (size_t i = 0; i < sizeof immortal / sizeof *immortal; i++) {
        if (strcmp(name, immortal[i]) == 0)
            return 1;
    }
    return 0;
}

sk_err sk_lifecycle_plan_delete(const sk_resource *r, const json_t *stored,
                                const sk_delete_options *d, int64_t now_s, sk_delete_plan *plan_out,
                                json_t **updated_out, char **msg_out)
{
    int ns = is_core(r, "namespaces");
    if (ns && immortal_namespace(meta_str(stored, "name"))) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_puts(&m, "namespaces ");
        sk_buf_go_quoted(&m, meta_str(stored, "name"));
        sk_buf_puts(&m, " is forbidden: this namespace may not be deleted");
        *msg_out = sk_buf_steal(&m, NULL);
        return SK_ERR_FORBIDDEN;
    }
    sk_buf on = SK_BUF_INIT;
    if (ns)
        sk_buf_puts(&on, "namespaces");
    else if (*r->group)
        sk_buf_printf(&on, "%s.%s", r->kind, r->group);
    else
        sk_buf_puts(&on, r->kind);
    sk_err err = check_preconditions(stored, d, on.data, msg_out);
    sk_buf_free(&on);
    if (err != SK_OK)
        return err;
    json_t *obj = json_deep_copy(stored);
    int crd = strcmp(r->storage, "customresourcedefinitions.apiextensions.k8s.io") == 0;
    sk_delete_plan plan = (ns ? plan_namespace : crd ? plan_crd : plan_generic)(r, obj, d, now_s);
    /* A mark that changes nothing is not written (no new revision), as
     * kube's GuaranteedUpdate skips an update whose bytes are unchanged. */
    if (plan == SK_DELETE_MARK && json_equal(obj, stored))
        plan = SK_DELETE_PENDING;
    if (plan == SK_DELETE_MARK)
        *updated_out = obj;
    else
        json_decref(obj);
    *plan_out = plan;
    return SK_OK;
}

int sk_lifecycle_update_deletes(const sk_resource *r, const json_t *old, const json_t *obj)
{
    if (json_array_size(json_object_get(meta_of(obj), "finalizers")) > 0 ||
        !sk_lifecycle_deleting(old))
        return 0;
    if (is_core(r, "namespaces")) {
        const char *phase =
            json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
        if (!phase || strcmp(phase, "Terminating") != 0 ||
            json_array_size(json_object_get(json_object_get(obj, "spec"), "finalizers")) > 0)
            return 0;
    }
    return json_integer_value(json_object_get(meta_of(old), "deletionGracePeriodSeconds")) == 0;
}
