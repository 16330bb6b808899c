/*
 * rbacpolicy.c - see rbacpolicy.h.
 *
 * Each pass reads at the cache's revision (no SQL unless the cache cannot
 * answer) and queues its writes in one batch, preconditioned on what it
 * read. Rules are compared as JSON values: a rule kube would find covered
 * by another but not equal to one is added again, which grants nothing
 * new (kube compares coverage; equality is the conservative subset).
 */
#include "ctl/rbacpolicy.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "ctl/batch.h"
#include "kube/objmeta.h"
#include "kube/rbac.h"
#include "kube/rbac_bootstrap.h"
#include "kube/registry.h"

#include <stdlib.h>
#include <string.h>

#define IDLE_INTERVAL_MS 1000
#define BUSY_INTERVAL_MS 100

typedef struct controller {
    sk_store *store;
    sk_reader *reader;
    int bootstrapped;
} controller;

/* Appends to *dst (an array member key of obj, created if absent) every
 * element of src not already in it; returns how many. */
static int add_missing(json_t *obj, const char *key, const json_t *src)
{
    json_t *dst = json_object_get(obj, key);
    if (!json_is_array(dst)) {
        dst = json_array();
        json_object_set_new(obj, key, dst);
    }
    int added = 0;
    size_t i, j;
    const json_t *v, *w;
    json_array_foreach(src, i, v)
    {
        int found = 0;
        json_array_foreach(dst, j, w) found |= json_equal((json_t *)v, (json_t *)w);
        if (!found) {
            json_array_append(dst, (json_t *)v);
            added++;
        }
    }
    if (json_array_size(dst) == 0)
        json_object_del(obj, key);
    return added;
}

/* Adds the keys of want (a map) that m (a map member key of meta) lacks. */
static int add_missing_keys(json_t *meta, const char *key, const json_t *want)
{
    if (json_object_size(want) == 0)
        return 0;
    json_t *m = json_object_get(meta, key);
    if (!json_is_object(m)) {
        m = json_object();
        json_object_set_new(meta, key, m);
    }
    int added = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)want, k, v)
    {
        if (!json_object_get(m, k)) {
            json_object_set(m, k, v);
            added++;
        }
    }
    return added;
}

/* The reconciled form of existing (stored) against want (bootstrap). New
 * reference. */
static json_t *reconcile(const json_t *existing, const json_t *want)
{
    json_t *out = json_deep_copy(existing);
    json_t *meta = json_object_get(out, "metadata");
    const json_t *wmeta = json_object_get(want, "metadata");
    add_missing_keys(meta, "labels", json_object_get(wmeta, "labels"));
    add_missing_keys(meta, "annotations", json_object_get(wmeta, "annotations"));
    if (json_object_get(want, "rules"))
        add_missing(out, "rules", json_object_get(want, "rules"));
    if (json_object_get(want, "subjects"))
        add_missing(out, "subjects", json_object_get(want, "subjects"));
    const json_t *agg = json_object_get(want, "aggregationRule");
    if (agg) {
        json_t *have = json_object_get(out, "aggregationRule");
        if (!json_is_object(have)) {
            have = json_object();
            json_object_set_new(out, "aggregationRule", have);
        }
        add_missing(have, "clusterRoleSelectors", json_object_get(agg, "clusterRoleSelectors"));
    }
    return out;
}

/* Queues what the bootstrap policy needs; returns how many writes. */
static int bootstrap(controller *c, sk_batch *b, int64_t rev, int *failed)
{
    static const char *const resources[] = {"clusterroles", "clusterrolebindings", "roles",
                                            "rolebindings"};
    const json_t *policy = sk_rbac_bootstrap_policy();
    int writes = 0;
    for (size_t i = 0; i < sizeof resources / sizeof *resources; i++) {
        const sk_resource *r = sk_registry_find("rbac.authorization.k8s.io", "v1", resources[i]);
        SK_CHECK(r != NULL);
        size_t k;
        const json_t *want;
        json_array_foreach(json_object_get(policy, resources[i]), k, want)
        {
            const json_t *meta = json_object_get(want, "metadata");
            const char *name = json_string_value(json_object_get(meta, "name"));
            const char *ns = json_string_value(json_object_get(meta, "namespace"));
            sk_blob *item = NULL;
            sk_err err = sk_reader_get(c->reader, r->storage, ns ? ns : "", name, rev, &item);
            if (err == SK_ERR_NOT_FOUND) {
                json_t *obj = json_deep_copy(want);
                sk_objmeta_on_create(obj, sk_wall_s());
                sk_batch_create(b, r, ns ? ns : "", obj);
                writes++;
                continue;
            }
            if (err != SK_OK) {
                (*failed)++;
                continue;
            }
            json_t *existing = sk_reader_object(item);
            if (existing && sk_rbac_bootstrap_autoupdate(existing)) {
                json_t *edited = reconcile(existing, want);
                if (!json_equal(edited, existing)) {
                    writes++;
                    sk_batch_update(b, r, existing, edited, sk_blob_rev(item), NULL);
                } else {
                    json_decref(edited);
                }
            }
            json_decref(existing);
            sk_blob_unref(item);
        }
    }
    return writes;
}

static int collect(void *arg, sk_blob *item)
{
    json_t *obj = sk_reader_object(item);
    if (obj) {
        /* The revision it was read at, for the write's precondition. */
        json_array_append_new(arg, json_pack("[o, I]", obj, (json_int_t)sk_blob_rev(item)));
    }
    return 0;
}

/* Queues the aggregated roles whose rules changed; returns how many. */
static int aggregate(controller *c, sk_batch *b, int64_t rev, int *failed)
{
    const sk_resource *r = sk_registry_find("rbac.authorization.k8s.io", "v1", "clusterroles");
    json_t *read = json_array(), *roles = json_array();
    int writes = 0;
    if (sk_reader_scan(c->reader, r->storage, NULL, rev, collect, read) != SK_OK) {
        (*failed)++;
        goto out;
    }
    size_t i;
    json_t *e;
    json_array_foreach(read, i, e) json_array_append(roles, json_array_get(e, 0));
    json_array_foreach(read, i, e)
    {
        json_t *role = json_array_get(e, 0);
        if (!json_object_get(role, "aggregationRule"))
            continue;
        json_t *rules = sk_rbac_aggregate(role, roles);
        const json_t *have = json_object_get(role, "rules");
        if (json_equal(rules, (json_t *)have) || (json_array_size(rules) == 0 && !have)) {
            json_decref(rules);
            continue;
        }
        json_t *edited = json_deep_copy(role);
        json_object_set_new(edited, "rules", rules);
        sk_batch_update(b, r, role, edited, json_integer_value(json_array_get(e, 1)), NULL);
        writes++;
    }
out:
    json_decref(read);
    json_decref(roles);
    return writes;
}

static int64_t rbacpolicy_pass(void *self, int *done)
{
    controller *c = self;
    int64_t rev = sk_reader_cache_rev(c->reader);
    if (rev <= 0)
        return BUSY_INTERVAL_MS;
    int failed = 0, writes = 0;
    /* Who kube records as their writers: its storage_rbac post-start hook
     * and kube-controller-manager's clusterrole-aggregation controller. */
    sk_batch *boot = sk_batch_new(c->store, "kube-apiserver");
    if (!c->bootstrapped)
        writes += bootstrap(c, boot, rev, &failed);
    failed += sk_batch_finish(boot);
    sk_batch *agg = sk_batch_new(c->store, "kube-controller-manager");
    writes += aggregate(c, agg, rev, &failed);
    failed += sk_batch_finish(agg);
    if (!c->bootstrapped && writes == 0 && failed == 0) {
        c->bootstrapped = 1;
        sk_log_info("rbac: bootstrap policy in place");
    }
    *done = c->bootstrapped;
    return writes ? BUSY_INTERVAL_MS : IDLE_INTERVAL_MS;
}

static const sk_ctl_def rbacpolicy_def = {
    .name = "rbac-policy",
    .pass = rbacpolicy_pass,
    .free = free,
};

sk_ctl *sk_rbacpolicy_start(sk_store *store, sk_reader *reader)
{
    controller *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    c->reader = reader;
    return sk_ctl_start(&rbacpolicy_def, c, 0);
}
