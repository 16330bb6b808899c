/*
 * crd.c - see crd.h.
 *
 * Polling, not watching: a pass lists the CRDs from the cache's newest
 * snapshot (memory, a few hundred microseconds for hundreds of CRDs) every
 * PASS_MS, which keeps the controller stateless across restarts and
 * instances (what it serves is recomputed from what is stored) at the cost
 * of up to PASS_MS before a new CRD is served.
 */
#include "ctl/crd.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "kube/registry.h"

#include <stdlib.h>
#include <string.h>

#define PASS_MS 250
#define CRD_STORAGE "customresourcedefinitions.apiextensions.k8s.io"

typedef struct crdctl {
    sk_store *store;
    sk_cache *cache;
    sk_reader *reader;
    char **served; /* names of the CRDs installed in the registry */
    size_t n_served;
} crdctl;

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* Non-zero if the names lists a and b (shortNames) share a string. */
static int share(const json_t *a, const json_t *b)
{
    size_t i, k;
    const json_t *x, *y;
    json_array_foreach(a, i, x) json_array_foreach(b, k, y) if (json_equal(x, y)) return 1;
    return 0;
}

/* The first conflict of crd's spec.names with the accepted names of another
 * CRD of its group (kube's naming controller): reason and message (new), or
 * NULL reason when there is none. */
static const char *conflict(json_t *const *all, size_t n, const json_t *crd, char **msg)
{
    const json_t *spec = json_object_get(crd, "spec");
    const json_t *names = json_object_get(spec, "names");
    const char *me = str(json_object_get(crd, "metadata"), "name");
    static const struct {
        const char *key, *reason;
    } checks[] = {{"plural", "PluralConflict"},
                  {"singular", "SingularConflict"},
                  {"kind", "KindConflict"},
                  {"listKind", "ListKindConflict"}};
    for (size_t i = 0; i < n; i++) {
        const json_t *o = all[i];
        if (strcmp(str(json_object_get(o, "metadata"), "name"), me) == 0 ||
            strcmp(str(json_object_get(o, "spec"), "group"), str(spec, "group")) != 0)
            continue;
        const json_t *taken = json_object_get(json_object_get(o, "status"), "acceptedNames");
        for (size_t k = 0; k < sizeof checks / sizeof checks[0]; k++) {
            const char *v = str(names, checks[k].key);
            if (*v && (strcmp(v, str(taken, "plural")) == 0 ||
                       strcmp(v, str(taken, "singular")) == 0 ||
                       (k >= 2 && (strcmp(v, str(taken, "kind")) == 0 ||
                                   strcmp(v, str(taken, "listKind")) == 0)))) {
                size_t len = strlen(v) + 32;
                *msg = malloc(len);
                SK_CHECK_ALLOC(*msg);
                snprintf(*msg, len, "\"%s\" is already in use", v);
                return checks[k].reason;
            }
        }
        if (share(json_object_get(names, "shortNames"), json_object_get(taken, "shortNames"))) {
            *msg = strdup("one or more short names are already in use");
            SK_CHECK_ALLOC(*msg);
            return "ShortNamesConflict";
        }
    }
    return NULL;
}

/* Sets condition type in status's conditions to (cstatus, reason, message),
 * keeping lastTransitionTime unless the status changes. */
static void set_condition(json_t *status, const char *type, const char *cstatus,
                          const char *reason, const char *message, const char *now)
{
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    size_t i;
    json_t *c, *found = NULL;
    json_array_foreach(conds, i, c) if (strcmp(str(c, "type"), type) == 0) found = c;
    if (!found) {
        found = json_object();
        json_array_append_new(conds, found);
    }
    const char *ltt = strcmp(str(found, "status"), cstatus) == 0 && *str(found, "lastTransitionTime")
                          ? str(found, "lastTransitionTime")
                          : now;
    json_t *fresh = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status", cstatus,
                              "lastTransitionTime", ltt, "reason", reason, "message", message);
    SK_CHECK_ALLOC(fresh);
    json_object_clear(found);
    json_object_update(found, fresh);
    json_decref(fresh);
}

/* Writes crd (edited: its new status) over the version at rev. */
static void write_status(crdctl *c, json_t *crd, int64_t rev)
{
    json_t *meta = json_object_get(crd, "metadata");
    json_object_del(meta, "resourceVersion");
    sk_write w = {.op = SK_WRITE_UPDATE,
                  .resource = CRD_STORAGE,
                  .ns = "",
                  .name = str(meta, "name"),
                  .expected_rev = rev,
                  .object = json_incref(crd)};
    sk_err err = sk_store_write(c->store, &w, NULL);
    if (err != SK_OK && err != SK_ERR_CONFLICT && err != SK_ERR_NOT_FOUND)
        sk_log_warn("crd: cannot write the status of %s: %s", w.name, sk_err_name(err));
}

/* Settles one CRD (borrowed) read at rev; returns non-zero if it is served
 * after this. */
static int settle(crdctl *c, json_t *const *all, size_t n, const json_t *crd, int64_t rev)
{
    const json_t *spec = json_object_get(crd, "spec");
    json_t *next = json_deep_copy(crd);
    SK_CHECK_ALLOC(next);
    json_t *status = json_object_get(next, "status");
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(next, "status", status);
    }
    char now[21];
    sk_format_rfc3339(sk_wall_s(), now);
    char *msg = NULL;
    const char *reason = conflict(all, n, crd, &msg);
    int ok = reason == NULL;
    if (ok)
        json_object_set(status, "acceptedNames", json_object_get(spec, "names"));
    set_condition(status, "NamesAccepted", ok ? "True" : "False", ok ? "NoConflicts" : reason,
                  ok ? "no conflicts found" : msg, now);
    free(msg);
    /* The cache holds the storage key before the registry serves it, and
     * both before the status says Established: a client that waited for
     * that condition finds the resource. */
    if (ok) {
        char *storage = NULL;
        const char *plural = str(json_object_get(spec, "names"), "plural");
        size_t len = strlen(plural) + strlen(str(spec, "group")) + 2;
        storage = malloc(len);
        SK_CHECK_ALLOC(storage);
        snprintf(storage, len, "%s.%s", plural, str(spec, "group"));
        sk_err err = sk_cache_add_resource(c->cache, storage);
        if (err != SK_OK) {
            sk_log_warn("crd: the watch cache cannot hold %s: %s", storage, sk_err_name(err));
            ok = 0;
        }
        free(storage);
    }
    if (ok) {
        sk_registry_install(next);
        set_condition(status, "Established", "True", "InitialNamesAccepted",
                      "the initial names have been accepted", now);
    } else {
        /* An Established CRD stays so when a later names change conflicts. */
        size_t i;
        const json_t *cond;
        int was = 0;
        json_array_foreach(json_object_get(status, "conditions"), i, cond) was |=
            strcmp(str(cond, "type"), "Established") == 0;
        if (!was)
            set_condition(status, "Established", "False", "NotAccepted",
                          "not all names are accepted", now);
    }
    if (!json_equal(next, crd))
        write_status(c, next, rev);
    json_decref(next);
    return ok;
}

/* Parses the blobs of a page into all[*n..]. */
static void parse_page(sk_blob **items, int k, json_t ***all, size_t *n, int64_t **revs)
{
    *all = realloc(*all, (*n + (size_t)k) * sizeof **all);
    *revs = realloc(*revs, (*n + (size_t)k) * sizeof **revs);
    SK_CHECK(*all && *revs);
    for (int i = 0; i < k; i++) {
        size_t len;
        const char *data = sk_blob_data(items[i], &len);
        json_t *o = json_loadb(data, len, 0, NULL);
        if (json_is_object(o)) {
            (*revs)[*n] = sk_blob_rev(items[i]);
            (*all)[(*n)++] = o;
        } else {
            json_decref(o);
        }
        sk_blob_unref(items[i]);
    }
}

static int64_t pass(void *self, int *done)
{
    crdctl *c = self;
    sk_cache_state st;
    sk_cache_get_state(c->cache, &st);
    json_t **all = NULL;
    int64_t *revs = NULL;
    size_t n = 0;
    sk_blob *items[SK_READ_MAX_ITEMS];
    sk_read_query q = {.resource = CRD_STORAGE, .rev = st.rev > 0 ? st.rev : 1,
                       .limit = SK_READ_MAX_ITEMS};
    sk_err err;
    for (;;) {
        int k = 0;
        sk_read_source src;
        if ((err = sk_reader_list(c->reader, &q, items, &k, &src)) != SK_OK)
            break;
        parse_page(items, k, &all, &n, &revs);
        if (k < SK_READ_MAX_ITEMS)
            break;
        q.after_ns = "";
        q.after_name = str(json_object_get(all[n - 1], "metadata"), "name");
    }
    if (err != SK_OK) {
        sk_log_warn("crd: cannot list CustomResourceDefinitions: %s", sk_err_name(err));
        goto out;
    }
    char **served = calloc(n + 1, sizeof *served);
    size_t n_served = 0;
    SK_CHECK_ALLOC(served);
    for (size_t i = 0; i < n; i++) {
        const char *name = str(json_object_get(all[i], "metadata"), "name");
        if (settle(c, all, n, all[i], revs[i])) {
            /* later CRDs of this pass see the names taken */
            json_t *status = json_object_get(all[i], "status");
            if (json_is_object(status))
                json_object_set(status, "acceptedNames",
                                json_object_get(json_object_get(all[i], "spec"), "names"));
            served[n_served] = strdup(name);
            SK_CHECK_ALLOC(served[n_served++]);
        }
    }
    for (size_t i = 0; i < c->n_served; i++) {
        size_t k = 0;
        while (k < n_served && strcmp(served[k], c->served[i]) != 0)
            k++;
        if (k == n_served)
            sk_registry_remove(c->served[i]);
        free(c->served[i]);
    }
    free(c->served);
    c->served = served;
    c->n_served = n_served;
    *done = 1;
out:
    for (size_t i = 0; i < n; i++)
        json_decref(all[i]);
    free(all);
    free(revs);
    return PASS_MS;
}

static void crdctl_free(void *self)
{
    crdctl *c = self;
    for (size_t i = 0; i < c->n_served; i++)
        free(c->served[i]);
    free(c->served);
    free(c);
}

static const sk_ctl_def def = {"crd", pass, crdctl_free};

sk_ctl *sk_crd_start(sk_store *store, sk_cache *cache, sk_reader *reader)
{
    crdctl *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    c->cache = cache;
    c->reader = reader;
    return sk_ctl_start(&def, c, 0);
}
