/*
 * protobuf.c - decodes Kubernetes protobuf request bodies
 * (application/vnd.kubernetes.protobuf) into the JSON object the JSON API
 * would have received for the same request.
 *
 * Why: kubectl's typed clients (create namespace, configmap, secret,
 * serviceaccount, ...) send protobuf, while sqlkube validates, patches and
 * stores JSON. Translating once at the edge means everything after
 * parse_body_object in objects.c sees one representation.
 *
 * What it owns:
 *  - the envelope: the magic "k8s\0", then a runtime.Unknown message
 *    {1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding,
 *    4 contentType}; typeMeta picks the schema of raw, and becomes the
 *    output's "apiVersion"/"kind";
 *  - a bounds-checked wire reader (varint, 64-bit, length-delimited,
 *    32-bit; groups and the reserved wire types are refused);
 *  - one static schema table per message of the kinds sqlkube accepts,
 *    mapping field numbers to JSON names and types. The numbers come from
 *    the upstream generated.proto files: k8s.io/api core/v1 and
 *    coordination/v1, k8s.io/apimachinery pkg/apis/meta/v1 and pkg/runtime.
 *
 * Zero values: Go's protobuf marshaller writes every non-pointer field, zero
 * or not, where encoding/json drops zeros through omitempty. So a zero
 * string, number or bool, a zero Time and an empty message are dropped,
 * except for fields that are pointers in Go (F_PRESENCE: on the wire only
 * when set, so emitted even when zero) and strings whose json tag has no
 * omitempty (F_KEEP). Map values are always kept.
 *
 * Repeated occurrences follow protobuf: the last scalar wins, embedded
 * messages merge, repeated fields and maps accumulate.
 *
 * Malformed input - a truncated or over-long varint, a length past the end
 * of its message, a group or reserved wire type, field number 0, a wire type
 * that does not fit a known field, a string with invalid UTF-8 or a NUL
 * byte (the JSON path refuses those too), a time outside the years
 * 0000-9999 (Go's JSON encoder refuses those), or an unknown kind - is
 * SK_ERR_BAD_REQUEST with a message naming the message and field.
 */
#include "kube/protobuf.h"
#include "core/check.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PB_MAX_DEPTH 16
#define PB_MAX_FIELD 536870911u /* 2^29 - 1 */
#define PB_MAX_VARINT_BYTES 10

/* Go's zero time.Time (0001-01-01T00:00:00Z) as Unix seconds. */
#define GO_ZERO_TIME_SECONDS (-62135596800LL)
/* The range Go's Time.MarshalJSON accepts: years 0000 to 9999. */
#define MIN_TIME_SECONDS (-62167219200LL) /* 0000-01-01T00:00:00Z */
#define MAX_TIME_SECONDS 253402300799LL   /* 9999-12-31T23:59:59Z */
#define NANOS_PER_SECOND 1000000000LL

static const char magic[4] = {'k', '8', 's', '\0'};
static const char protobuf_media[] = "application/vnd.kubernetes.protobuf";

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

typedef enum pb_type {
    T_STRING,     /* string */
    T_INT32,      /* int32 varint */
    T_INT64,      /* int64 varint */
    T_BOOL,       /* bool varint */
    T_MESSAGE,    /* embedded message (msg) */
    T_MESSAGES,   /* repeated embedded message (msg) */
    T_STRINGS,    /* repeated string */
    T_STRING_MAP, /* map<string, string> */
    T_BYTES_MAP,  /* map<string, bytes>: values as standard padded base64 */
    T_TIME,       /* meta/v1 Time: "2006-01-02T15:04:05Z" */
    T_MICROTIME,  /* meta/v1 MicroTime: "2006-01-02T15:04:05.000000Z" */
    T_FIELDS_V1,  /* meta/v1 FieldsV1: its field 1 (Raw) is JSON, embedded as is */
} pb_type;

/* Field flags. */
#define F_PRESENCE 1u /* a pointer in Go: present on the wire only when set; zero is emitted */
#define F_KEEP 2u     /* json tag without omitempty: the zero value is emitted */

typedef struct pb_schema pb_schema;

typedef struct pb_field {
    uint32_t num;
    const char *json;
    pb_type type;
    unsigned flags;
    const pb_schema *msg; /* T_MESSAGE, T_MESSAGES */
} pb_field;

struct pb_schema {
    const char *name;
    const pb_field *fields;
    size_t nfields;
};

#define SCHEMA(var, fields)                                                                        \
    static const pb_schema var = {#var, fields, sizeof fields / sizeof fields[0]}

/* ---- schemas ---------------------------------------------------------------- */

/* One field per line: clang-format would pack the short ones into columns. */
/* clang-format off */

/* k8s.io/apimachinery/pkg/runtime TypeMeta (inside runtime.Unknown). */
static const pb_field type_meta_fields[] = {
    {1, "apiVersion", T_STRING, 0, NULL},
    {2, "kind", T_STRING, 0, NULL},
};
SCHEMA(TypeMeta, type_meta_fields);

/* k8s.io/apimachinery/pkg/apis/meta/v1 */
static const pb_field owner_reference_fields[] = {
    {5, "apiVersion", T_STRING, F_KEEP, NULL},
    {1, "kind", T_STRING, F_KEEP, NULL},
    {3, "name", T_STRING, F_KEEP, NULL},
    {4, "uid", T_STRING, F_KEEP, NULL},
    {6, "controller", T_BOOL, F_PRESENCE, NULL},
    {7, "blockOwnerDeletion", T_BOOL, F_PRESENCE, NULL},
};
SCHEMA(OwnerReference, owner_reference_fields);

static const pb_field managed_fields_entry_fields[] = {
    {1, "manager", T_STRING, 0, NULL},
    {2, "operation", T_STRING, 0, NULL},
    {3, "apiVersion", T_STRING, 0, NULL},
    {4, "time", T_TIME, 0, NULL},
    {6, "fieldsType", T_STRING, 0, NULL},
    {7, "fieldsV1", T_FIELDS_V1, 0, NULL},
    {8, "subresource", T_STRING, 0, NULL},
};
SCHEMA(ManagedFieldsEntry, managed_fields_entry_fields);

static const pb_field object_meta_fields[] = {
    {1, "name", T_STRING, 0, NULL},
    {2, "generateName", T_STRING, 0, NULL},
    {3, "namespace", T_STRING, 0, NULL},
    {4, "selfLink", T_STRING, 0, NULL},
    {5, "uid", T_STRING, 0, NULL},
    {6, "resourceVersion", T_STRING, 0, NULL},
    {7, "generation", T_INT64, 0, NULL},
    {8, "creationTimestamp", T_TIME, 0, NULL},
    {9, "deletionTimestamp", T_TIME, 0, NULL},
    {10, "deletionGracePeriodSeconds", T_INT64, F_PRESENCE, NULL},
    {11, "labels", T_STRING_MAP, 0, NULL},
    {12, "annotations", T_STRING_MAP, 0, NULL},
    {13, "ownerReferences", T_MESSAGES, 0, &OwnerReference},
    {14, "finalizers", T_STRINGS, 0, NULL},
    {17, "managedFields", T_MESSAGES, 0, &ManagedFieldsEntry},
};
SCHEMA(ObjectMeta, object_meta_fields);

static const pb_field preconditions_fields[] = {
    {1, "uid", T_STRING, F_PRESENCE, NULL},
    {2, "resourceVersion", T_STRING, F_PRESENCE, NULL},
};
SCHEMA(Preconditions, preconditions_fields);

static const pb_field delete_options_fields[] = {
    {1, "gracePeriodSeconds", T_INT64, F_PRESENCE, NULL},
    {2, "preconditions", T_MESSAGE, F_PRESENCE, &Preconditions},
    {3, "orphanDependents", T_BOOL, F_PRESENCE, NULL},
    {4, "propagationPolicy", T_STRING, F_PRESENCE, NULL},
    {5, "dryRun", T_STRINGS, 0, NULL},
};
SCHEMA(DeleteOptions, delete_options_fields);

/* k8s.io/api/core/v1 */
static const pb_field object_reference_fields[] = {
    {1, "kind", T_STRING, 0, NULL},
    {2, "namespace", T_STRING, 0, NULL},
    {3, "name", T_STRING, 0, NULL},
    {4, "uid", T_STRING, 0, NULL},
    {5, "apiVersion", T_STRING, 0, NULL},
    {6, "resourceVersion", T_STRING, 0, NULL},
    {7, "fieldPath", T_STRING, 0, NULL},
};
SCHEMA(ObjectReference, object_reference_fields);

static const pb_field local_object_reference_fields[] = {
    {1, "name", T_STRING, 0, NULL},
};
SCHEMA(LocalObjectReference, local_object_reference_fields);

static const pb_field namespace_spec_fields[] = {
    {1, "finalizers", T_STRINGS, 0, NULL},
};
SCHEMA(NamespaceSpec, namespace_spec_fields);

static const pb_field namespace_condition_fields[] = {
    {1, "type", T_STRING, F_KEEP, NULL},
    {2, "status", T_STRING, F_KEEP, NULL},
    {4, "lastTransitionTime", T_TIME, 0, NULL},
    {5, "reason", T_STRING, 0, NULL},
    {6, "message", T_STRING, 0, NULL},
};
SCHEMA(NamespaceCondition, namespace_condition_fields);

static const pb_field namespace_status_fields[] = {
    {1, "phase", T_STRING, 0, NULL},
    {2, "conditions", T_MESSAGES, 0, &NamespaceCondition},
};
SCHEMA(NamespaceStatus, namespace_status_fields);

static const pb_field namespace_fields[] = {
    {1, "metadata", T_MESSAGE, 0, &ObjectMeta},
    {2, "spec", T_MESSAGE, 0, &NamespaceSpec},
    {3, "status", T_MESSAGE, 0, &NamespaceStatus},
};
SCHEMA(Namespace, namespace_fields);

static const pb_field config_map_fields[] = {
    {1, "metadata", T_MESSAGE, 0, &ObjectMeta},
    {2, "data", T_STRING_MAP, 0, NULL},
    {3, "binaryData", T_BYTES_MAP, 0, NULL},
    {4, "immutable", T_BOOL, F_PRESENCE, NULL},
};
SCHEMA(ConfigMap, config_map_fields);

static const pb_field secret_fields[] = {
    {1, "metadata", T_MESSAGE, 0, &ObjectMeta},
    {2, "data", T_BYTES_MAP, 0, NULL},
    {3, "type", T_STRING, 0, NULL},
    {4, "stringData", T_STRING_MAP, 0, NULL},
    {5, "immutable", T_BOOL, F_PRESENCE, NULL},
};
SCHEMA(Secret, secret_fields);

static const pb_field service_account_fields[] = {
    {1, "metadata", T_MESSAGE, 0, &ObjectMeta},
    {2, "secrets", T_MESSAGES, 0, &ObjectReference},
    {3, "imagePullSecrets", T_MESSAGES, 0, &LocalObjectReference},
    {4, "automountServiceAccountToken", T_BOOL, F_PRESENCE, NULL},
};
SCHEMA(ServiceAccount, service_account_fields);

static const pb_field event_source_fields[] = {
    {1, "component", T_STRING, 0, NULL},
    {2, "host", T_STRING, 0, NULL},
};
SCHEMA(EventSource, event_source_fields);

static const pb_field event_series_fields[] = {
    {1, "count", T_INT32, 0, NULL},
    {2, "lastObservedTime", T_MICROTIME, 0, NULL},
};
SCHEMA(EventSeries, event_series_fields);

static const pb_field event_fields[] = {
    {1, "metadata", T_MESSAGE, 0, &ObjectMeta},
    {2, "involvedObject", T_MESSAGE, F_KEEP, &ObjectReference},
    {3, "reason", T_STRING, 0, NULL},
    {4, "message", T_STRING, 0, NULL},
    {5, "source", T_MESSAGE, 0, &EventSource},
    {6, "firstTimestamp", T_TIME, 0, NULL},
    {7, "lastTimestamp", T_TIME, 0, NULL},
    {8, "count", T_INT32, 0, NULL},
    {9, "type", T_STRING, 0, NULL},
    {10, "eventTime", T_MICROTIME, 0, NULL},
    {11, "series", T_MESSAGE, F_PRESENCE, &EventSeries},
    {12, "action", T_STRING, 0, NULL},
    {13, "related", T_MESSAGE, F_PRESENCE, &ObjectReference},
    {14, "reportingComponent", T_STRING, F_KEEP, NULL},
    {15, "reportingInstance", T_STRING, F_KEEP, NULL},
};
SCHEMA(Event, event_fields);

/* k8s.io/api/coordination/v1: every LeaseSpec field is a pointer in Go. */
static const pb_field lease_spec_fields[] = {
    {1, "holderIdentity", T_STRING, F_PRESENCE, NULL},
    {2, "leaseDurationSeconds", T_INT32, F_PRESENCE, NULL},
    {3, "acquireTime", T_MICROTIME, 0, NULL},
    {4, "renewTime", T_MICROTIME, 0, NULL},
    {5, "leaseTransitions", T_INT32, F_PRESENCE, NULL},
    {6, "strategy", T_STRING, F_PRESENCE, NULL},
    {7, "preferredHolder", T_STRING, F_PRESENCE, NULL},
};
SCHEMA(LeaseSpec, lease_spec_fields);

static const pb_field lease_fields[] = {
    {1, "metadata", T_MESSAGE, 0, &ObjectMeta},
    {2, "spec", T_MESSAGE, 0, &LeaseSpec},
};
SCHEMA(Lease, lease_fields);

/* The kinds a body may carry, by typeMeta. */
static const struct {
    const char *api_version;
    const char *kind;
    const pb_schema *schema;
} kinds[] = {
    {"v1", "Namespace", &Namespace},
    {"v1", "ConfigMap", &ConfigMap},
    {"v1", "Secret", &Secret},
    {"v1", "ServiceAccount", &ServiceAccount},
    {"v1", "Event", &Event},
    {"v1", "DeleteOptions", &DeleteOptions},
    {"meta.k8s.io/v1", "DeleteOptions", &DeleteOptions},
    {"coordination.k8s.io/v1", "Lease", &Lease},
};

/* clang-format on */

/* ---- wire reader -------------------------------------------------------------- */

typedef struct pb_ctx {
    char *why; /* first failure, malloc'd */
    int depth;
} pb_ctx;

/* The unread rest of one message. */
typedef struct pb_in {
    const unsigned char *p;
    const unsigned char *end;
} pb_in;

/* One field as read: its number, wire type and value. Fixed-size values are
 * skipped (no schema field uses them). */
typedef struct pb_item {
    uint32_t num;
    unsigned wt;
    uint64_t varint;           /* WT_VARINT */
    const unsigned char *data; /* WT_LEN */
    size_t len;                /* WT_LEN */
} pb_item;

/* Records the first failure; always returns -1. */
__attribute__((format(printf, 2, 3))) static int fail(pb_ctx *c, const char *fmt, ...)
{
    if (!c->why) {
        va_list ap;
        va_start(ap, fmt);
        SK_CHECK(vasprintf(&c->why, fmt, ap) >= 0);
        va_end(ap);
    }
    return -1;
}

static int read_varint(pb_ctx *c, pb_in *in, const char *where, uint64_t *out)
{
    uint64_t v = 0;
    int i = 0, done = 0;
    while (!done && i < PB_MAX_VARINT_BYTES && in->p < in->end) {
        unsigned char b = *in->p++;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        done = !(b & 0x80);
        i++;
    }
    if (done)
        *out = v;
    else if (i == PB_MAX_VARINT_BYTES)
        fail(c, "%s: varint longer than %d bytes", where, PB_MAX_VARINT_BYTES);
    else
        fail(c, "%s: truncated varint", where);
    return done ? 0 : -1;
}

/* Skips n bytes of a fixed-size value. */
static int skip_fixed(pb_ctx *c, pb_in *in, const char *where, uint32_t num, size_t n)
{
    int rc = 0;
    if ((size_t)(in->end - in->p) < n)
        rc = fail(c, "%s: field %u: truncated %zu-byte value", where, num, n);
    else
        in->p += n;
    return rc;
}

/* Reads the next field of in into it. */
static int next_item(pb_ctx *c, pb_in *in, const char *where, pb_item *it)
{
    uint64_t tag, len;
    int rc = -1;
    if (read_varint(c, in, where, &tag) < 0)
        goto out;
    if (tag >> 3 == 0 || tag >> 3 > PB_MAX_FIELD) {
        fail(c, "%s: invalid field number %llu", where, (unsigned long long)(tag >> 3));
        goto out;
    }
    it->num = (uint32_t)(tag >> 3);
    it->wt = (unsigned)(tag & 7);
    switch (it->wt) {
    case WT_VARINT:
        rc = read_varint(c, in, where, &it->varint);
        break;
    case WT_I64:
        rc = skip_fixed(c, in, where, it->num, 8);
        break;
    case WT_I32:
        rc = skip_fixed(c, in, where, it->num, 4);
        break;
    case WT_LEN:
        if (read_varint(c, in, where, &len) < 0)
            break;
        if (len > (uint64_t)(in->end - in->p)) {
            fail(c, "%s: field %u: length %llu exceeds the %zu bytes left", where, it->num,
                 (unsigned long long)len, (size_t)(in->end - in->p));
            break;
        }
        it->data = in->p;
        it->len = (size_t)len;
        in->p += len;
        rc = 0;
        break;
    case WT_SGROUP:
    case WT_EGROUP:
        fail(c, "%s: field %u: groups are not supported", where, it->num);
        break;
    default:
        fail(c, "%s: field %u: invalid wire type %u", where, it->num, it->wt);
        break;
    }
out:
    return rc;
}

/* ---- values ------------------------------------------------------------------- */

/* A JSON string of n bytes; NULL (failure recorded) on NUL or invalid UTF-8. */
static json_t *string_value(pb_ctx *c, const char *where, const char *field, const unsigned char *p,
                            size_t n)
{
    json_t *s = NULL;
    if (memchr(p, '\0', n))
        fail(c, "%s.%s: string contains a NUL byte", where, field);
    else if (!(s = json_stringn((const char *)p, n)))
        fail(c, "%s.%s: string is not valid UTF-8", where, field);
    return s;
}

/* Standard padded base64 of n bytes, as encoding/json renders []byte. */
static json_t *base64_value(const unsigned char *p, size_t n)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t out_len = (n + 2) / 3 * 4, o = 0;
    char *out = malloc(out_len + 1);
    SK_CHECK_ALLOC(out);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
    }
    json_t *s = json_stringn(out, out_len);
    SK_CHECK_ALLOC(s);
    free(out);
    return s;
}

/* into[name] as an object or array (created, and any other value replaced,
 * when it is not one). Borrowed. */
static json_t *member(json_t *into, const char *name, int array)
{
    json_t *v = json_object_get(into, name);
    if (array ? !json_is_array(v) : !json_is_object(v)) {
        v = array ? json_array() : json_object();
        SK_CHECK_ALLOC(v);
        SK_CHECK(json_object_set_new(into, name, v) == 0);
    }
    return v;
}

/* Sets into[f->json] = v (stolen), or drops the field when the value is zero
 * and the field is omitted when zero. */
static void put(json_t *into, const pb_field *f, json_t *v, int zero)
{
    SK_CHECK_ALLOC(v);
    if (zero && !(f->flags & (F_PRESENCE | F_KEEP))) {
        json_decref(v);
        json_object_del(into, f->json);
    } else {
        SK_CHECK(json_object_set_new(into, f->json, v) == 0);
    }
}

/* Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
 * civil_from_days). */
static void civil_from_days(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* A meta/v1 Time or MicroTime message: {1 seconds int64, 2 nanos int32}.
 * Go's Time keeps whole seconds only; MicroTime keeps microseconds. An empty
 * message or Go's zero time is the zero Time, which JSON renders as null:
 * dropped. */
static int decode_time(pb_ctx *c, const pb_schema *s, const pb_field *f, const pb_item *it,
                       json_t *into)
{
    int64_t seconds = 0, nanos = 0;
    pb_in in = {it->data, it->data + it->len};
    char where[96];
    int rc = -1;
    snprintf(where, sizeof where, "%s.%s", s->name, f->json);
    while (in.p < in.end) {
        pb_item t;
        if (next_item(c, &in, where, &t) < 0)
            goto out;
        if (t.num > 2)
            continue;
        if (t.wt != WT_VARINT) {
            fail(c, "%s: field %u: wire type %u, want %u", where, t.num, t.wt, WT_VARINT);
            goto out;
        }
        if (t.num == 1)
            seconds = (int64_t)t.varint;
        else
            nanos = (int32_t)(uint32_t)t.varint;
    }
    int micro = f->type == T_MICROTIME;
    if (!micro)
        nanos = 0;
    if (it->len == 0 || (seconds == GO_ZERO_TIME_SECONDS && nanos == 0)) {
        json_object_del(into, f->json);
        rc = 0;
        goto out;
    }
    if (nanos < 0 || nanos >= NANOS_PER_SECOND) {
        fail(c, "%s: nanos %lld out of range", where, (long long)nanos);
        goto out;
    }
    if (seconds < MIN_TIME_SECONDS || seconds > MAX_TIME_SECONDS) {
        fail(c, "%s: seconds %lld outside the years 0000-9999", where, (long long)seconds);
        goto out;
    }
    int64_t days = (seconds - MIN_TIME_SECONDS) / 86400 + MIN_TIME_SECONDS / 86400, year;
    int sod = (int)(seconds - days * 86400), month, day;
    civil_from_days(days, &year, &month, &day);
    char text[64], frac[16] = "";
    if (micro)
        snprintf(frac, sizeof frac, ".%06d", (int)(nanos / 1000));
    snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d%sZ", (int)year, month, day,
             sod / 3600, sod / 60 % 60, sod % 60, frac);
    put(into, f, json_string(text), 0);
    rc = 0;
out:
    return rc;
}

/* A map entry message {1 key, 2 value}; a missing key or value is "". */
static int decode_map_entry(pb_ctx *c, const pb_schema *s, const pb_field *f, const pb_item *it,
                            json_t *into)
{
    static const unsigned char empty[1] = {0};
    const unsigned char *key = empty, *val = empty;
    size_t key_len = 0, val_len = 0;
    pb_in in = {it->data, it->data + it->len};
    char where[96];
    int rc = -1;
    snprintf(where, sizeof where, "%s.%s", s->name, f->json);
    while (in.p < in.end) {
        pb_item e;
        if (next_item(c, &in, where, &e) < 0)
            goto out;
        if (e.num > 2)
            continue;
        if (e.wt != WT_LEN) {
            fail(c, "%s: map entry field %u: wire type %u, want %u", where, e.num, e.wt, WT_LEN);
            goto out;
        }
        if (e.num == 1) {
            key = e.data;
            key_len = e.len;
        } else {
            val = e.data;
            val_len = e.len;
        }
    }
    if (memchr(key, '\0', key_len)) {
        fail(c, "%s: map key contains a NUL byte", where);
        goto out;
    }
    json_t *v = f->type == T_BYTES_MAP ? base64_value(val, val_len)
                                       : string_value(c, where, "value", val, val_len);
    if (!v)
        goto out;
    if (json_object_setn_new(member(into, f->json, 0), (const char *)key, key_len, v) < 0) {
        fail(c, "%s: map key is not valid UTF-8", where);
        goto out;
    }
    rc = 0;
out:
    return rc;
}

/* FieldsV1 {1 Raw bytes}: Raw holds JSON, which the JSON form embeds. */
static int decode_fields_v1(pb_ctx *c, const pb_schema *s, const pb_field *f, const pb_item *it,
                            json_t *into)
{
    const unsigned char *raw = NULL;
    size_t raw_len = 0;
    pb_in in = {it->data, it->data + it->len};
    char where[96];
    int rc = -1;
    snprintf(where, sizeof where, "%s.%s", s->name, f->json);
    while (in.p < in.end) {
        pb_item r;
        if (next_item(c, &in, where, &r) < 0)
            goto out;
        if (r.num != 1)
            continue;
        if (r.wt != WT_LEN) {
            fail(c, "%s: field 1: wire type %u, want %u", where, r.wt, WT_LEN);
            goto out;
        }
        raw = r.data;
        raw_len = r.len;
    }
    if (raw_len == 0) {
        json_object_del(into, f->json);
    } else {
        json_error_t jerr;
        json_t *v = json_loadb((const char *)raw, raw_len, JSON_DECODE_ANY, &jerr);
        if (!v) {
            fail(c, "%s: Raw is not valid JSON: %s", where, jerr.text);
            goto out;
        }
        put(into, f, v, 0);
    }
    rc = 0;
out:
    return rc;
}

static int decode_message(pb_ctx *c, const pb_schema *s, const unsigned char *p, size_t n,
                          json_t *into);

/* Decodes one occurrence of the known field f into into. */
static int decode_field(pb_ctx *c, const pb_schema *s, const pb_field *f, const pb_item *it,
                        json_t *into)
{
    int rc = 0;
    json_t *v;
    switch (f->type) {
    case T_STRING:
        v = string_value(c, s->name, f->json, it->data, it->len);
        if (v)
            put(into, f, v, it->len == 0);
        else
            rc = -1;
        break;
    case T_INT32:
        put(into, f, json_integer((int32_t)(uint32_t)it->varint), (uint32_t)it->varint == 0);
        break;
    case T_INT64:
        put(into, f, json_integer((json_int_t)it->varint), it->varint == 0);
        break;
    case T_BOOL:
        put(into, f, json_boolean(it->varint != 0), it->varint == 0);
        break;
    case T_MESSAGE:
        v = member(into, f->json, 0);
        rc = decode_message(c, f->msg, it->data, it->len, v);
        if (rc == 0 && json_object_size(v) == 0 && !(f->flags & (F_PRESENCE | F_KEEP)))
            json_object_del(into, f->json);
        break;
    case T_MESSAGES:
        v = json_object();
        SK_CHECK_ALLOC(v);
        rc = decode_message(c, f->msg, it->data, it->len, v);
        if (rc == 0)
            SK_CHECK(json_array_append(member(into, f->json, 1), v) == 0);
        json_decref(v);
        break;
    case T_STRINGS:
        v = string_value(c, s->name, f->json, it->data, it->len);
        if (v)
            SK_CHECK(json_array_append_new(member(into, f->json, 1), v) == 0);
        else
            rc = -1;
        break;
    case T_STRING_MAP:
    case T_BYTES_MAP:
        rc = decode_map_entry(c, s, f, it, into);
        break;
    case T_TIME:
    case T_MICROTIME:
        rc = decode_time(c, s, f, it, into);
        break;
    case T_FIELDS_V1:
        rc = decode_fields_v1(c, s, f, it, into);
        break;
    }
    return rc;
}

static const pb_field *find_field(const pb_schema *s, uint32_t num)
{
    const pb_field *f = NULL;
    for (size_t i = 0; i < s->nfields && !f; i++)
        if (s->fields[i].num == num)
            f = &s->fields[i];
    return f;
}

static unsigned wire_type_of(pb_type t)
{
    return t == T_INT32 || t == T_INT64 || t == T_BOOL ? WT_VARINT : WT_LEN;
}

/* Decodes the message p[0..n) of schema s into the object into, merging with
 * what into already holds. Unknown fields are skipped. */
static int decode_message(pb_ctx *c, const pb_schema *s, const unsigned char *p, size_t n,
                          json_t *into)
{
    pb_in in = {p, p + n};
    int rc = -1;
    if (++c->depth > PB_MAX_DEPTH) {
        fail(c, "%s: nested deeper than %d messages", s->name, PB_MAX_DEPTH);
        goto out;
    }
    while (in.p < in.end) {
        pb_item it;
        if (next_item(c, &in, s->name, &it) < 0)
            goto out;
        const pb_field *f = find_field(s, it.num);
        if (!f)
            continue;
        if (it.wt != wire_type_of(f->type)) {
            fail(c, "%s.%s: wire type %u, want %u", s->name, f->json, it.wt, wire_type_of(f->type));
            goto out;
        }
        if (decode_field(c, s, f, &it, into) < 0)
            goto out;
    }
    rc = 0;
out:
    c->depth--;
    return rc;
}

/* ---- envelope ------------------------------------------------------------------- */

int sk_protobuf_is_media(const char *ct)
{
    int yes = 0;
    if (ct) {
        ct += strspn(ct, " \t");
        size_t n = strcspn(ct, ";");
        while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
            n--;
        yes = n == sizeof protobuf_media - 1 && strncasecmp(ct, protobuf_media, n) == 0;
    }
    return yes;
}

static const pb_schema *schema_for(const char *api_version, const char *kind)
{
    const pb_schema *s = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && !s; i++)
        if (strcmp(kinds[i].api_version, api_version) == 0 && strcmp(kinds[i].kind, kind) == 0)
            s = kinds[i].schema;
    return s;
}

sk_err sk_protobuf_to_json(const char *body, size_t len, json_t **out, char **why)
{
    pb_ctx c = {NULL, 0};
    json_t *type_meta = json_object(), *obj = NULL;
    const unsigned char *raw = NULL;
    size_t raw_len = 0;
    sk_err err = SK_ERR_BAD_REQUEST;
    SK_CHECK_ALLOC(type_meta);
    if (len < sizeof magic || memcmp(body, magic, sizeof magic) != 0) {
        fail(&c, "protobuf body does not start with the Kubernetes magic bytes \"k8s\\0\"");
        goto out;
    }
    pb_in in = {(const unsigned char *)body + sizeof magic, (const unsigned char *)body + len};
    while (in.p < in.end) {
        pb_item it;
        if (next_item(&c, &in, "Unknown", &it) < 0)
            goto out;
        if (it.num > 4)
            continue;
        if (it.wt != WT_LEN) {
            fail(&c, "Unknown: field %u: wire type %u, want %u", it.num, it.wt, WT_LEN);
            goto out;
        }
        if (it.num == 1) {
            if (decode_message(&c, &TypeMeta, it.data, it.len, type_meta) < 0)
                goto out;
        } else if (it.num == 2) {
            raw = it.data;
            raw_len = it.len;
        } else if (it.len > 0 && (it.num == 3 || it.len != sizeof protobuf_media - 1 ||
                                  memcmp(it.data, protobuf_media, it.len) != 0)) {
            fail(&c, "Unknown: unsupported %s \"%.*s\"",
                 it.num == 3 ? "contentEncoding" : "contentType", (int)(it.len > 64 ? 64 : it.len),
                 (const char *)it.data);
            goto out;
        }
    }
    const char *av = json_string_value(json_object_get(type_meta, "apiVersion"));
    const char *kind = json_string_value(json_object_get(type_meta, "kind"));
    if (!av || !kind) {
        fail(&c, "protobuf body has no %s", !av ? "apiVersion" : "kind");
        goto out;
    }
    const pb_schema *s = schema_for(av, kind);
    if (!s) {
        fail(&c, "protobuf bodies of kind %s in %s are not supported", kind, av);
        goto out;
    }
    obj = json_pack("{s:s, s:s}", "apiVersion", av, "kind", kind);
    SK_CHECK_ALLOC(obj);
    if (raw && decode_message(&c, s, raw, raw_len, obj) < 0)
        goto out;
    *out = obj;
    obj = NULL;
    err = SK_OK;
out:
    json_decref(obj);
    json_decref(type_meta);
    if (err != SK_OK)
        *why = c.why;
    return err;
}
