/*
 * expiry.c - see expiry.h.
 */
#include "api/expiry.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PASS_INTERVAL_MS 1000
#define PASS_BATCH 100

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds since the epoch of an RFC 3339 time with optional fraction
 * ("2006-01-02T15:04:05.000000Z"), -1 if malformed. */
static int64_t parse_time_ms(const char *s)
{
    int64_t secs = sk_parse_rfc3339(s);
    if (secs < 0)
        return -1;
    int64_t ms = secs * 1000;
    const char *dot = strchr(s, '.');
    if (dot) {
        int64_t scale = 100;
        for (const char *p = dot + 1; *p >= '0' && *p <= '9' && scale > 0; p++, scale /= 10)
            ms += (*p - '0') * scale;
    }
    return ms;
}

static int is_identity_lease(const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *component = json_string_value(
        json_object_get(json_object_get(meta, "labels"), SK_IDENTITY_LEASE_LABEL));
    return ns && component && strcmp(ns, SK_IDENTITY_LEASE_NAMESPACE) == 0 &&
           strcmp(component, SK_IDENTITY_LEASE_COMPONENT) == 0;
}

int64_t sk_expiry_for(const sk_resource *r, const json_t *obj, int64_t event_ttl_s)
{
    if (strcmp(r->resource, "events") == 0 && !*r->group)
        return wall_ms() + event_ttl_s * 1000;
    if (strcmp(r->resource, "leases") != 0)
        return 0;
    if (!is_identity_lease(obj))
        return -1;
    const json_t *spec = json_object_get(obj, "spec");
    const char *renew = json_string_value(json_object_get(spec, "renewTime"));
    const json_t *duration = json_object_get(spec, "leaseDurationSeconds");
    int64_t renewed = renew ? parse_time_ms(renew) : -1;
    if (renewed < 0 || !json_is_integer(duration))
        return -1; /* never renewed, or no duration: nothing says it is over */
    return renewed + (int64_t)json_integer_value(duration) * 1000;
}

/* ---- the collector -------------------------------------------------------- */

struct sk_collector {
    sk_store *store;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stopping;
    atomic_int passes;
};

typedef struct expired_key {
    char *resource, *ns, *name;
    int64_t rev;
} expired_key;

typedef struct expired_batch {
    expired_key keys[PASS_BATCH];
    int n;
} expired_batch;

static int collect_key(void *arg, const sk_row *row)
{
    expired_batch *b = arg;
    expired_key *k = &b->keys[b->n++];
    k->resource = strdup(row->resource);
    k->ns = strdup(row->ns);
    k->name = strdup(row->name);
    SK_CHECK(k->resource && k->ns && k->name);
    k->rev = row->rev;
    return b->n == PASS_BATCH;
}

/* Deletes one expired object, if it is still the version that expired. */
static void collect_one(sk_collector *c, const expired_key *k)
{
    sk_write w = {.op = SK_WRITE_DELETE,
                  .resource = k->resource,
                  .ns = k->ns,
                  .name = k->name,
                  .expected_rev = k->rev};
    sk_err err = sk_store_write(c->store, &w, NULL);
    if (err == SK_OK) {
        sk_log_debug("expired %s %s/%s at revision %lld", k->resource, k->ns, k->name,
                     (long long)k->rev);
    } else if (err == SK_ERR_NOT_FOUND || err == SK_ERR_CONFLICT) {
        /* Deleted or rewritten meanwhile (by a client or another instance's
         * collector): a rewrite recorded its own expiry; drop a stale one. */
        sk_store_forget_expiry(c->store, k->resource, k->ns, k->name, k->rev);
    } else {
        sk_log_warn("expiry: cannot delete %s %s/%s: %s", k->resource, k->ns, k->name,
                    sk_err_name(err));
    }
}

static void *collector_main(void *arg)
{
    sk_collector *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->stopping) {
        pthread_mutex_unlock(&c->mu);
        expired_batch b = {.n = 0};
        sk_err err = sk_store_expired(c->store, wall_ms(), PASS_BATCH, collect_key, &b);
        if (err != SK_OK)
            sk_log_warn("expiry: cannot read expired objects: %s", sk_err_name(err));
        for (int i = 0; i < b.n; i++) {
            collect_one(c, &b.keys[i]);
            free(b.keys[i].resource);
            free(b.keys[i].ns);
            free(b.keys[i].name);
        }
        if (err == SK_OK)
            atomic_fetch_add(&c->passes, 1);
        pthread_mutex_lock(&c->mu);
        if (b.n == PASS_BATCH || c->stopping)
            continue; /* more may be due at once */
        struct timespec until;
        sk_deadline_after_ms(&until, PASS_INTERVAL_MS);
        pthread_cond_timedwait(&c->cv, &c->mu, &until);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

sk_collector *sk_collector_start(sk_store *store)
{
    sk_collector *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    pthread_mutex_init(&c->mu, NULL);
    sk_cond_init_monotonic(&c->cv);
    SK_CHECK(pthread_create(&c->thread, NULL, collector_main, c) == 0);
    return c;
}

void sk_collector_stop(sk_collector *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stopping = 1;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

int sk_collector_healthy(sk_collector *c)
{
    return c && atomic_load(&c->passes) > 0;
}
