/*
 * expiry.c - see expiry.h. Pure: the caller passes the clock.
 */
#include "kube/expiry.h"
#include "core/util.h"

#include <string.h>

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

int64_t sk_expiry_for(const sk_resource *r, const json_t *obj, int64_t event_ttl_s,
                      int64_t now_ms)
{
    if (strcmp(r->stored_as->storage, "events") == 0)
        return now_ms + event_ttl_s * 1000;
    if (strcmp(r->storage, "leases.coordination.k8s.io") != 0)
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
