/*
 * vapstatus.c - see vapstatus.h.
 *
 * Stateless but for the revision up to which every policy has been seen
 * to: a restart, or another instance, recomputes from what is stored, and
 * a policy whose observedGeneration is its generation costs nothing. The
 * status is applied as kube's controller applies it (server-side apply
 * through /status, forced, manager validatingadmissionpolicy-status): its
 * observedGeneration and typeChecking, the warnings it applied before and
 * no longer does removed, the rest of the status kept.
 */
#include "ctl/vapstatus.h"
#include "core/check.h"
#include "core/log.h"
#include "ctl/batch.h"
#include "kube/registry.h"
#include "policy/vaptype.h"

#include <stdlib.h>

/* At the latest, a pass retrying failed writes; also how long a stop may
 * wait for a pass parked on the cache (the CRD controller's bound): at a
 * second, it added that much to every server stop. */
#define PASS_MS 250
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

/* What kube's controller applies to policy (borrowed): its name and the
 * status it computes (new). */
static json_t *status_config(const json_t *policy)
{
    json_t *warnings = sk_vaptype_check(policy);
    json_t *tc = json_array_size(warnings) ? json_pack("{s:O}", "expressionWarnings", warnings)
                                           : json_object();
    json_t *config = json_pack(
        "{s:s, s:s, s:{s:s}, s:{s:I, s:o}}", "apiVersion", "admissionregistration.k8s.io/v1",
        "kind", "ValidatingAdmissionPolicy", "metadata", "name",
        json_string_value(json_object_get(json_object_get(policy, "metadata"), "name")), "status",
        "observedGeneration", (json_int_t)integer(policy, "metadata", "generation"), "typeChecking",
        tc);
    SK_CHECK_ALLOC(config);
    json_decref(warnings);
    return config;
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
    for (size_t i = 0; i < p.n; i++) {
        json_t *config = status_config(p.objs[i]);
        sk_batch_apply(b, r, p.objs[i], config, p.revs[i], "status");
        json_decref(config);
    }
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
