/*
 * vapstatus.c - see vapstatus.h.
 *
 * Stateless but for the revision up to which every policy has been seen
 * to: a restart, or another instance, recomputes from what is stored, and
 * a policy whose observedGeneration is its generation costs nothing. The
 * status is written as kube's controller applies it: observedGeneration
 * and typeChecking replaced, the rest of the status kept; recorded in
 * managedFields under its manager's name (kube's is an Apply entry, this
 * server's controllers record Updates: ctl/batch.h).
 */
#include "ctl/vapstatus.h"
#include "core/check.h"
#include "core/log.h"
#include "ctl/batch.h"
#include "kube/registry.h"
#include "policy/vaptype.h"

#include <stdlib.h>

#define PASS_MS 1000 /* at the latest, a pass retrying failed writes */
#define MANAGER "validatingadmissionpolicy-status" /* kube's ControllerName */

typedef struct vapctl {
    sk_store *store;
    sk_cache *cache;
    sk_reader *reader;
    int64_t seen_rev; /* every policy stored up to it has its status */
} vapctl;

typedef struct pending {
    json_t **objs;
    int64_t *revs;
    size_t n, cap;
    int64_t after; /* only policies stored after this revision */
} pending;

static int64_t integer(const json_t *o, const char *a, const char *b)
{
    return json_integer_value(json_object_get(json_object_get(o, a), b));
}

/* Collects the policies whose generation is not yet observed (those
 * stored after p->after only: the others were seen). */
static int collect(void *arg, sk_blob *item)
{
    pending *p = arg;
    json_t *obj = sk_blob_rev(item) > p->after ? sk_reader_object(item) : NULL;
    if (!obj ||
        integer(obj, "metadata", "generation") <= integer(obj, "status", "observedGeneration"))
        goto out;
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 8;
        p->objs = realloc(p->objs, p->cap * sizeof *p->objs);
        p->revs = realloc(p->revs, p->cap * sizeof *p->revs);
        SK_CHECK(p->objs && p->revs);
    }
    p->objs[p->n] = obj;
    p->revs[p->n++] = sk_blob_rev(item);
    obj = NULL;
out:
    json_decref(obj);
    return 0;
}

/* policy (borrowed) with its status as kube's controller applies it: new. */
static json_t *with_status(const json_t *policy)
{
    json_t *next = json_deep_copy(policy);
    SK_CHECK_ALLOC(next);
    json_t *status = json_object_get(next, "status");
    if (!json_is_object(status)) {
        status = json_object();
        SK_CHECK(status && json_object_set_new(next, "status", status) == 0);
    }
    json_t *warnings = sk_vaptype_check(policy);
    json_t *tc = json_object();
    SK_CHECK_ALLOC(tc);
    if (json_array_size(warnings))
        SK_CHECK(json_object_set(tc, "expressionWarnings", warnings) == 0);
    json_decref(warnings);
    SK_CHECK(json_object_set_new(status, "observedGeneration",
                                 json_integer(integer(policy, "metadata", "generation"))) == 0);
    SK_CHECK(json_object_set_new(status, "typeChecking", tc) == 0);
    return next;
}

static int64_t pass(void *self, int *done)
{
    vapctl *c = self;
    pending p = {.after = c->seen_rev};
    if (c->seen_rev > 0) {
        sk_cache_state st;
        sk_cache_wait(c->cache, c->seen_rev + 1, PASS_MS, &st);
    }
    const sk_resource *r =
        sk_registry_find("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies");
    int64_t rev = sk_reader_cache_rev(c->reader);
    if (rev < 1)
        rev = 1;
    sk_err err = sk_reader_scan(c->reader, r->storage, NULL, rev, collect, &p);
    if (err != SK_OK) {
        sk_log_warn("vapstatus: cannot list ValidatingAdmissionPolicies: %s", sk_err_name(err));
        goto out;
    }
    sk_batch *b = sk_batch_new(c->store, MANAGER);
    for (size_t i = 0; i < p.n; i++)
        sk_batch_update(b, r, p.objs[i], with_status(p.objs[i]), p.revs[i], "status");
    /* a write that failed is retried from the same revision; a conflict
     * is a newer version, which the next pass sees anyway */
    if (sk_batch_finish(b) == 0) {
        c->seen_rev = rev;
        *done = 1;
    } else {
        err = SK_ERR_INTERNAL;
    }
out:
    for (size_t i = 0; i < p.n; i++)
        json_decref(p.objs[i]);
    free(p.objs);
    free(p.revs);
    return err != SK_OK ? PASS_MS : 0;
}

static const sk_ctl_def def = {"validatingadmissionpolicy-status", pass, free};

sk_ctl *sk_vapstatus_start(sk_store *store, sk_cache *cache, sk_reader *reader)
{
    vapctl *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    *c = (vapctl){store, cache, reader, 0};
    return sk_ctl_start(&def, c, 0);
}
