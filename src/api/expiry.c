/*
 * expiry.c - see expiry.h.
 */
#include "api/expiry.h"
#include "core/check.h"
#include "core/log.h"
#include "core/ticker.h"
#include "core/util.h"

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
    sk_ticker *ticker;
    atomic_int passes;
};

typedef struct expired_batch {
    sk_row rows[PASS_BATCH];
    int n;
} expired_batch;

static int collect_row(void *arg, const sk_row *row)
{
    expired_batch *b = arg;
    sk_row_copy(&b->rows[b->n++], row);
    return b->n == PASS_BATCH;
}

/* Deletes one expired object, if it is still the version that expired. */
static void collect_one(sk_collector *c, const sk_row *row)
{
    sk_write w = {.op = SK_WRITE_DELETE,
                  .resource = row->resource,
                  .ns = row->ns,
                  .name = row->name,
                  .expected_rev = row->rev};
    sk_err err = sk_store_write(c->store, &w, NULL);
    if (err == SK_OK) {
        sk_log_debug("expired %s %s/%s at revision %lld", row->resource, row->ns, row->name,
                     (long long)row->rev);
    } else if (err != SK_ERR_NOT_FOUND && err != SK_ERR_CONFLICT) {
        /* Not found or conflict: deleted or rewritten meanwhile (by a client
         * or another instance's collector), and that write rewrote or cleared
         * the expiry itself. Anything else is worth a line. */
        sk_log_warn("expiry: cannot delete %s %s/%s: %s", row->resource, row->ns, row->name,
                    sk_err_name(err));
    }
}

/* One pass; runs again at once while passes come back full. */
static int64_t collect_pass(void *arg)
{
    sk_collector *c = arg;
    expired_batch b = {.n = 0};
    sk_err err = sk_store_expired(c->store, wall_ms(), PASS_BATCH, collect_row, &b);
    if (err != SK_OK)
        sk_log_warn("expiry: cannot read expired objects: %s", sk_err_name(err));
    for (int i = 0; i < b.n; i++) {
        collect_one(c, &b.rows[i]);
        sk_row_clear(&b.rows[i]);
    }
    if (err == SK_OK)
        atomic_fetch_add(&c->passes, 1);
    return b.n == PASS_BATCH ? 0 : PASS_INTERVAL_MS;
}

sk_collector *sk_collector_start(sk_store *store)
{
    sk_collector *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    c->ticker = sk_ticker_start(0, collect_pass, c);
    return c;
}

void sk_collector_stop(sk_collector *c)
{
    if (!c)
        return;
    sk_ticker_stop(c->ticker);
    free(c);
}

int sk_collector_healthy(sk_collector *c)
{
    return c && atomic_load(&c->passes) > 0;
}
