/*
 * protobuf.c - the Kubernetes protobuf wire form of every kind the schema
 * (kube/schema.h) describes, decoded to and encoded from JSON.
 *
 * Why: kubectl's typed commands and Go components send protobuf bodies and
 * prefer protobuf replies, while sqlkube validates, patches and stores JSON.
 * Transcoding once at the edge keeps one representation inside; driving it
 * from the generated schema means a new kind needs no code here.
 *
 * Wire facts (k8s.io/apimachinery pkg/runtime/serializer/protobuf and the
 * generated.pb.go files; numbers from the schema):
 *  - envelope: "k8s\0" + runtime.Unknown {1 typeMeta {1 apiVersion,
 *    2 kind}, 2 raw, 3 contentEncoding, 4 contentType};
 *  - a struct embedded inline (json:",inline") is, on the wire, a nested
 *    message (SK_FIELD_EMBEDDED) whose fields live in the same JSON object;
 *  - Time/MicroTime {1 int64 seconds, 2 int32 nanos}, an empty message being
 *    the zero time (JSON null); Quantity {1 string}; IntOrString {1 type,
 *    2 intVal, 3 strVal}; RawExtension and FieldsV1 {1 bytes} holding JSON
 *    (a RawExtension may also hold a protobuf envelope, as watch events do);
 *  - maps are repeated entries {1 key, 2 value}, written sorted by key; a
 *    map whose values are lists wraps each value in a message {1 repeated};
 *  - repeated scalars are written unpacked (gogo proto2) and read packed or
 *    not;
 *  - Go writes every non-pointer field, zero or not, pointers when set, in
 *    ascending number order; []byte, RawExtension.Raw only when non-nil.
 *
 * Decoding produces what encoding/json prints for the decoded Go struct: a
 * field absent from the wire is Go's zero value, which omitempty drops for
 * scalars, slices and maps (never for structs); a nil slice, map or pointer
 * without omitempty is null; a zero Time is null. Repeated occurrences follow
 * protobuf: the last scalar wins, messages merge, repeated fields and maps
 * accumulate.
 *
 * Malformed input (a truncated or over-long varint, a length past its
 * message, a group or reserved wire type, field number 0, a wire type that
 * does not fit the field, a string with invalid UTF-8 or a NUL byte, a time
 * outside the years 0000-9999, messages nested deeper than PB_MAX_DEPTH, an
 * unknown kind) is SK_ERR_BAD_REQUEST with a message naming the message and
 * field. Unknown field numbers are skipped, as Go does.
 */
#include "kube/protobuf.h"
#include "core/check.h"
#include "core/jsontext.h"
#include "core/utf8.h"
#include "kube/registry.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PB_MAX_DEPTH 64
#define PB_MAX_FIELD 536870911u /* 2^29 - 1 */
#define PB_MAX_VARINT_BYTES 10

/* Go's zero time.Time (0001-01-01T00:00:00Z) as Unix seconds. */
#define GO_ZERO_TIME_SECONDS (-62135596800LL)
/* The range Go's Time.MarshalJSON accepts: years 0000 to 9999. */
#define MIN_TIME_SECONDS (-62167219200LL) /* 0000-01-01T00:00:00Z */
#define MAX_TIME_SECONDS 253402300799LL   /* 9999-12-31T23:59:59Z */
#define NANOS_PER_SECOND 1000000000LL

static const char magic[4] = {'k', '8', 's', '\0'};
static const char protobuf_media[] = SK_PROTOBUF_MEDIA;
static const char meta_prefix[] = "io.k8s.apimachinery.pkg.apis.meta.v1.";

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

typedef struct pb_ctx {
    char *why; /* first failure, malloc'd */
    int depth;
} pb_ctx;

/* The unread rest of one message. */
typedef struct pb_in {
    const unsigned char *p;
    const unsigned char *end;
} pb_in;

/* One field as read. Fixed-size values are skipped (no Kubernetes type
 * uses them). */
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

/* How a message names itself in errors: "v1.PodSpec". */
static const char *msg_name(const sk_schema *s)
{
    const char *n = sk_schema_go_type(s);
    return n ? n : "message";
}

static const char *field_label(const sk_schema_field *f)
{
    const char *n = sk_schema_field_name(f);
    return n ? n : "(inline)";
}

/* ---- wire reader ---------------------------------------------------------- */

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
    it->data = NULL;
    it->len = 0;
    it->varint = 0;
    switch (it->wt) {
    case WT_VARINT:
        rc = read_varint(c, in, where, &it->varint);
        break;
    case WT_I64:
        it->data = in->p;
        it->len = 8;
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

/* ---- JSON values ---------------------------------------------------------- */

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

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard padded base64 of n bytes, as encoding/json renders []byte. */
static json_t *base64_value(const unsigned char *p, size_t n)
{
    size_t out_len = (n + 2) / 3 * 4, o = 0;
    char *out = malloc(out_len + 1);
    SK_CHECK_ALLOC(out);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[o++] = b64_alphabet[(v >> 18) & 63];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < n ? b64_alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? b64_alphabet[v & 63] : '=';
    }
    json_t *s = json_stringn(out, out_len);
    SK_CHECK_ALLOC(s);
    free(out);
    return s;
}

/* Decodes standard base64 (padding optional, as Go's decoder for []byte
 * accepts padded input; unpadded is tolerated) into out. -1 if invalid. */
static int base64_decode(const char *s, size_t n, sk_buf *out)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t i = 0;
    for (; i < n && s[i] != '='; i++) {
        const char *at = memchr(b64_alphabet, s[i], 64);
        if (!at || !s[i])
            return -1;
        acc = (acc << 6) | (uint32_t)(at - b64_alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            sk_buf_putc(out, (char)((acc >> bits) & 0xff));
        }
    }
    for (; i < n; i++)
        if (s[i] != '=')
            return -1;
    return 0;
}

/* Days since 1970-01-01 to a proleptic Gregorian date and back (H. Hinnant's
 * civil_from_days / days_from_civil). */
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

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Parses RFC 3339 ("2006-01-02T15:04:05[.frac](Z|+hh:mm)") to UTC. */
static int parse_rfc3339(const char *s, int64_t *sec_out, int32_t *nanos_out)
{
    int y, mo, d, h, mi, se, oh = 0, om = 0;
    size_t n = strlen(s);
    if (n < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
        s[16] != ':' || digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
        digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &se))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    const char *p = s + 19;
    int64_t nanos = 0;
    if (*p == '.') {
        int k = 0;
        p++;
        while (*p >= '0' && *p <= '9') {
            if (k < 9) {
                nanos = nanos * 10 + (*p - '0');
                k++;
            }
            p++;
        }
        if (k == 0)
            return -1;
        for (; k < 9; k++)
            nanos *= 10;
    }
    int sign = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' &&
               !digits(p + 1, 2, &oh) && !digits(p + 4, 2, &om)) {
        sign = *p == '+' ? 1 : -1;
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    *sec_out =
        days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - sign * (oh * 3600 + om * 60);
    *nanos_out = (int32_t)nanos;
    return 0;
}

/* ---- decoding -------------------------------------------------------------- */

static int dec_struct(pb_ctx *c, const sk_schema *s, const unsigned char *p, size_t n, json_t *into,
                      int embedded);
static json_t *dec_value(pb_ctx *c, const sk_schema *t, const pb_item *it, const char *where,
                         const char *field);
static sk_err envelope_to_json(pb_ctx *c, const unsigned char *body, size_t len, json_t **out);

static int is_varint_kind(sk_schema_kind k)
{
    return k == SK_SCHEMA_BOOL || k == SK_SCHEMA_INT32 || k == SK_SCHEMA_INT64;
}

static json_t *varint_value(sk_schema_kind k, uint64_t v)
{
    json_t *j = k == SK_SCHEMA_BOOL    ? json_boolean(v != 0)
                : k == SK_SCHEMA_INT32 ? json_integer((int32_t)(uint32_t)v)
                                       : json_integer((json_int_t)(int64_t)v);
    SK_CHECK_ALLOC(j);
    return j;
}

/* The zero value of type t as a value in a map (a missing entry value). */
static json_t *zero_value(pb_ctx *c, const sk_schema *t)
{
    json_t *v = NULL;
    switch (sk_schema_kind_of(t)) {
    case SK_SCHEMA_STRING:
    case SK_SCHEMA_BYTES:
        v = json_string("");
        break;
    case SK_SCHEMA_BOOL:
        v = json_false();
        break;
    case SK_SCHEMA_INT32:
    case SK_SCHEMA_INT64:
    case SK_SCHEMA_DOUBLE:
    case SK_SCHEMA_INT_OR_STRING:
        v = json_integer(0);
        break;
    case SK_SCHEMA_QUANTITY:
        v = json_string("0");
        break;
    case SK_SCHEMA_STRUCT:
        v = json_object();
        SK_CHECK_ALLOC(v);
        if (dec_struct(c, t, NULL, 0, v, 0) < 0) {
            json_decref(v);
            return NULL;
        }
        return v;
    default: /* slices, maps, times, raw JSON: null */
        v = json_null();
        break;
    }
    SK_CHECK_ALLOC(v);
    return v;
}

/* Time / MicroTime {1 seconds, 2 nanos}: RFC 3339 UTC, or null for the
 * zero time. Time keeps seconds only (as Go's Unmarshal does). */
static json_t *dec_time(pb_ctx *c, int micro, const pb_item *it, const char *where,
                        const char *field)
{
    int64_t seconds = 0, nanos = 0;
    pb_in in = {it->data, it->data + it->len};
    json_t *v = NULL;
    while (in.p < in.end) {
        pb_item t;
        if (next_item(c, &in, where, &t) < 0)
            goto out;
        if (t.num > 2)
            continue;
        if (t.wt != WT_VARINT) {
            fail(c, "%s.%s: field %u: wire type %u, want %u", where, field, t.num, t.wt, WT_VARINT);
            goto out;
        }
        if (t.num == 1)
            seconds = (int64_t)t.varint;
        else
            nanos = (int32_t)(uint32_t)t.varint;
    }
    if (!micro)
        nanos = 0;
    if (it->len == 0 || (seconds == GO_ZERO_TIME_SECONDS && nanos == 0)) {
        v = json_null();
        goto out;
    }
    if (nanos < 0 || nanos >= NANOS_PER_SECOND) {
        fail(c, "%s.%s: nanos %lld out of range", where, field, (long long)nanos);
        goto out;
    }
    if (seconds < MIN_TIME_SECONDS || seconds > MAX_TIME_SECONDS) {
        fail(c, "%s.%s: seconds %lld outside the years 0000-9999", where, field,
             (long long)seconds);
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
    v = json_string(text);
out:
    return v;
}

/* Quantity {1 string}. */
static json_t *dec_quantity(pb_ctx *c, const pb_item *it, const char *where, const char *field)
{
    pb_in in = {it->data, it->data + it->len};
    json_t *v = NULL;
    while (in.p < in.end) {
        pb_item t;
        if (next_item(c, &in, where, &t) < 0)
            goto fail;
        if (t.num != 1)
            continue;
        if (t.wt != WT_LEN) {
            fail(c, "%s.%s: field 1: wire type %u, want %u", where, field, t.wt, WT_LEN);
            goto fail;
        }
        json_decref(v);
        if (!(v = string_value(c, where, field, t.data, t.len)))
            goto fail;
    }
    if (!v || json_string_length(v) == 0) {
        json_decref(v);
        v = json_string("0");
    }
    return v;
fail:
    json_decref(v);
    return NULL;
}

/* IntOrString {1 type, 2 intVal, 3 strVal}. */
static json_t *dec_int_or_string(pb_ctx *c, const pb_item *it, const char *where, const char *field)
{
    pb_in in = {it->data, it->data + it->len};
    uint64_t type = 0;
    int32_t ival = 0;
    json_t *sval = NULL, *v = NULL;
    while (in.p < in.end) {
        pb_item t;
        if (next_item(c, &in, where, &t) < 0)
            goto out;
        if (t.num > 3)
            continue;
        if (t.wt != (t.num == 3 ? WT_LEN : WT_VARINT)) {
            fail(c, "%s.%s: field %u: wire type %u, want %u", where, field, t.num, t.wt,
                 t.num == 3 ? WT_LEN : WT_VARINT);
            goto out;
        }
        if (t.num == 1) {
            type = t.varint;
        } else if (t.num == 2) {
            ival = (int32_t)(uint32_t)t.varint;
        } else {
            json_decref(sval);
            if (!(sval = string_value(c, where, field, t.data, t.len)))
                goto out;
        }
    }
    if (type == 1) {
        v = sval ? json_incref(sval) : json_string("");
    } else if (type == 0) {
        v = json_integer(ival);
    } else {
        fail(c, "%s.%s: IntOrString type %llu, want 0 or 1", where, field,
             (unsigned long long)type);
    }
out:
    json_decref(sval);
    return v;
}

/* RawExtension / FieldsV1 {1 bytes}: JSON (or, for a RawExtension, a
 * protobuf envelope); empty is null. */
static json_t *dec_raw(pb_ctx *c, const pb_item *it, const char *where, const char *field)
{
    pb_in in = {it->data, it->data + it->len};
    const unsigned char *raw = NULL;
    size_t raw_len = 0;
    json_t *v = NULL;
    while (in.p < in.end) {
        pb_item t;
        if (next_item(c, &in, where, &t) < 0)
            goto out;
        if (t.num != 1)
            continue;
        if (t.wt != WT_LEN) {
            fail(c, "%s.%s: field 1: wire type %u, want %u", where, field, t.wt, WT_LEN);
            goto out;
        }
        raw = t.data;
        raw_len = t.len;
    }
    if (raw_len == 0) {
        v = json_null();
    } else if (raw_len >= sizeof magic && memcmp(raw, magic, sizeof magic) == 0) {
        envelope_to_json(c, raw, raw_len, &v);
    } else {
        json_error_t jerr;
        v = json_loadb((const char *)raw, raw_len, JSON_DECODE_ANY, &jerr);
        if (!v)
            fail(c, "%s.%s: raw is not valid JSON: %s", where, field, jerr.text);
    }
out:
    return v;
}

/* Appends one occurrence of a repeated field (unpacked, or packed scalars)
 * to arr. */
static int dec_repeated(pb_ctx *c, const sk_schema *elem, const pb_item *it, json_t *arr,
                        const char *where, const char *field)
{
    sk_schema_kind ek = sk_schema_kind_of(elem);
    if (is_varint_kind(ek) && it->wt == WT_LEN) {
        pb_in in = {it->data, it->data + it->len};
        while (in.p < in.end) {
            uint64_t v;
            if (read_varint(c, &in, where, &v) < 0)
                return -1;
            SK_CHECK(json_array_append_new(arr, varint_value(ek, v)) == 0);
        }
        return 0;
    }
    json_t *v = dec_value(c, elem, it, where, field);
    if (!v)
        return -1;
    SK_CHECK(json_array_append_new(arr, v) == 0);
    return 0;
}

/* A map entry {1 key, 2 value} into the object m. */
static int dec_map_entry(pb_ctx *c, const sk_schema *elem, const pb_item *it, json_t *m,
                         const char *where, const char *field)
{
    static const unsigned char empty[1] = {0};
    const unsigned char *key = empty;
    size_t key_len = 0;
    pb_item val = {0};
    int have_val = 0, rc = -1;
    json_t *v = NULL;
    pb_in in = {it->data, it->data + it->len};
    while (in.p < in.end) {
        pb_item e;
        if (next_item(c, &in, where, &e) < 0)
            goto out;
        if (e.num > 2)
            continue;
        if (e.num == 1) {
            if (e.wt != WT_LEN) {
                fail(c, "%s.%s: map key: wire type %u, want %u", where, field, e.wt, WT_LEN);
                goto out;
            }
            key = e.data;
            key_len = e.len;
        } else {
            val = e;
            have_val = 1;
        }
    }
    if (memchr(key, '\0', key_len)) {
        fail(c, "%s.%s: map key contains a NUL byte", where, field);
        goto out;
    }
    if (!have_val)
        v = zero_value(c, elem);
    else if (sk_schema_kind_of(elem) == SK_SCHEMA_ARRAY) {
        /* map[string][]T: the value is a message {1 repeated T}. */
        if (val.wt != WT_LEN) {
            fail(c, "%s.%s: map value: wire type %u, want %u", where, field, val.wt, WT_LEN);
            goto out;
        }
        pb_in vin = {val.data, val.data + val.len};
        v = json_array();
        SK_CHECK_ALLOC(v);
        while (vin.p < vin.end) {
            pb_item e;
            if (next_item(c, &vin, where, &e) < 0)
                goto out;
            if (e.num == 1 && dec_repeated(c, sk_schema_elem(elem), &e, v, where, field) < 0)
                goto out;
        }
        if (json_array_size(v) == 0) {
            json_decref(v);
            v = json_null();
        }
    } else {
        v = dec_value(c, elem, &val, where, field);
    }
    if (!v)
        goto out;
    if (json_object_setn_new(m, (const char *)key, key_len, v) < 0) {
        v = NULL;
        fail(c, "%s.%s: map key is not valid UTF-8", where, field);
        goto out;
    }
    v = NULL;
    rc = 0;
out:
    json_decref(v);
    return rc;
}

/* One value of type t from one wire item. New reference, NULL on failure. */
static json_t *dec_value(pb_ctx *c, const sk_schema *t, const pb_item *it, const char *where,
                         const char *field)
{
    sk_schema_kind k = sk_schema_kind_of(t);
    unsigned want = is_varint_kind(k) ? WT_VARINT : k == SK_SCHEMA_DOUBLE ? WT_I64 : WT_LEN;
    json_t *v = NULL;
    if (it->wt != want) {
        fail(c, "%s.%s: wire type %u, want %u", where, field, it->wt, want);
        return NULL;
    }
    switch (k) {
    case SK_SCHEMA_STRING:
        v = string_value(c, where, field, it->data, it->len);
        break;
    case SK_SCHEMA_BYTES:
        v = base64_value(it->data, it->len);
        break;
    case SK_SCHEMA_BOOL:
    case SK_SCHEMA_INT32:
    case SK_SCHEMA_INT64:
        v = varint_value(k, it->varint);
        break;
    case SK_SCHEMA_DOUBLE: {
        uint64_t bits = 0;
        double d;
        for (int i = 7; i >= 0; i--)
            bits = bits << 8 | it->data[i];
        memcpy(&d, &bits, sizeof d);
        v = d == (double)(json_int_t)d ? json_integer((json_int_t)d) : json_real(d);
        SK_CHECK_ALLOC(v);
        break;
    }
    case SK_SCHEMA_STRUCT:
        v = json_object();
        SK_CHECK_ALLOC(v);
        if (dec_struct(c, t, it->data, it->len, v, 0) < 0) {
            json_decref(v);
            v = NULL;
        }
        break;
    case SK_SCHEMA_TIME:
    case SK_SCHEMA_MICROTIME:
        v = dec_time(c, k == SK_SCHEMA_MICROTIME, it, where, field);
        break;
    case SK_SCHEMA_QUANTITY:
        v = dec_quantity(c, it, where, field);
        break;
    case SK_SCHEMA_INT_OR_STRING:
        v = dec_int_or_string(c, it, where, field);
        break;
    case SK_SCHEMA_RAW:
    case SK_SCHEMA_FIELDS_V1:
        v = dec_raw(c, it, where, field);
        break;
    case SK_SCHEMA_ARRAY:
    case SK_SCHEMA_MAP:
        fail(c, "%s.%s: nested collections are not supported", where, field);
        break;
    }
    return v;
}

/* Is v the zero value encoding/json's omitempty drops? */
static int is_empty_json(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string_length(v) == 0;
    case JSON_INTEGER:
        return json_integer_value(v) == 0;
    case JSON_FALSE:
    case JSON_NULL:
        return 1;
    case JSON_ARRAY:
        return json_array_size(v) == 0;
    case JSON_OBJECT:
        return json_object_size(v) == 0;
    default:
        return 0;
    }
}

/* After the wire pass: Go's zero value for the fields the wire did not
 * carry, and omitempty applied, so that into is what encoding/json prints.
 * Keys already there (an earlier occurrence of a merged message) stay. */
static int settle_fields(pb_ctx *c, const sk_schema *s, const unsigned char *seen, json_t *into)
{
    size_t n = sk_schema_pb_count(s);
    for (size_t i = 0; i < n; i++) {
        const sk_schema_field *f = sk_schema_pb_at(s, i);
        const sk_schema *t = sk_schema_field_type(f);
        unsigned flags = sk_schema_field_flags(f);
        const char *name = sk_schema_field_name(f);
        sk_schema_kind k = sk_schema_kind_of(t);
        if (flags & SK_FIELD_EMBEDDED) {
            if (!seen[i] && dec_struct(c, t, NULL, 0, into, 1) < 0)
                return -1;
            continue;
        }
        json_t *v = json_object_get(into, name);
        int omit = (flags & SK_FIELD_OMITEMPTY) != 0;
        if (seen[i] && v) {
            /* Present on the wire: a non-pointer scalar, slice or map that is
             * empty still goes when omitempty (pointers are kept even when
             * zero; structs are never omitted). */
            int collection = k == SK_SCHEMA_ARRAY || k == SK_SCHEMA_MAP;
            int scalar = k == SK_SCHEMA_STRING || k == SK_SCHEMA_BYTES || is_varint_kind(k);
            if (collection && is_empty_json(v))
                SK_CHECK(json_object_set_new(into, name, json_null()) == 0);
            if (omit && (collection || (scalar && !(flags & SK_FIELD_POINTER))) &&
                is_empty_json(json_object_get(into, name)))
                json_object_del(into, name);
            /* A pointer to a zero Time (or an empty RawExtension) prints as
             * null in Go; null and absent decode alike, and absent is what
             * the wire form of null gives back, so say absent. */
            else if (omit && (flags & SK_FIELD_POINTER) && json_is_null(v))
                json_object_del(into, name);
            continue;
        }
        if (v)
            continue;
        json_t *z = NULL;
        if (flags & SK_FIELD_POINTER) {
            z = omit ? NULL : json_null();
        } else {
            switch (k) {
            case SK_SCHEMA_STRING:
            case SK_SCHEMA_BOOL:
            case SK_SCHEMA_INT32:
            case SK_SCHEMA_INT64:
            case SK_SCHEMA_DOUBLE:
                z = omit ? NULL : zero_value(c, t);
                break;
            case SK_SCHEMA_BYTES:
            case SK_SCHEMA_ARRAY:
            case SK_SCHEMA_MAP:
                z = omit ? NULL : json_null();
                break;
            default: /* structs and self-marshalling types: never omitted */
                if (!(z = zero_value(c, t)))
                    return -1;
                break;
            }
        }
        if (z)
            SK_CHECK(json_object_set_new(into, name, z) == 0);
    }
    return 0;
}

/* Reorders into's keys as encoding/json writes them: declaration order. */
static void order_fields(const sk_schema *s, json_t *into)
{
    json_t *copy = json_copy(into);
    SK_CHECK_ALLOC(copy);
    json_object_clear(into);
    size_t n = sk_schema_field_count(s);
    for (size_t i = 0; i < n; i++) {
        const char *name = sk_schema_field_name(sk_schema_field_at(s, i));
        json_t *v = name ? json_object_get(copy, name) : NULL;
        if (v) {
            SK_CHECK(json_object_set(into, name, v) == 0);
            json_object_del(copy, name);
        }
    }
    const char *key;
    json_t *v;
    json_object_foreach(copy, key, v) SK_CHECK(json_object_set(into, key, v) == 0);
    json_decref(copy);
}

/* Decodes the message p[0..n) of struct s into the object into (merging
 * with what it holds). embedded: s is an inline embedding, into belongs to
 * the embedding struct (no reordering here). */
static int dec_struct(pb_ctx *c, const sk_schema *s, const unsigned char *p, size_t n, json_t *into,
                      int embedded)
{
    static const unsigned char empty[1]; /* NULL + 0 is undefined behaviour */
    if (!p)
        p = empty;
    pb_in in = {p, p + n};
    const char *where = msg_name(s);
    size_t nf = sk_schema_pb_count(s);
    unsigned char seen_small[64];
    unsigned char *seen = nf <= sizeof seen_small ? seen_small : calloc(nf, 1);
    int rc = -1;
    SK_CHECK_ALLOC(seen);
    memset(seen, 0, nf <= sizeof seen_small ? sizeof seen_small : nf);
    if (++c->depth > PB_MAX_DEPTH) {
        fail(c, "%s: nested deeper than %d messages", where, PB_MAX_DEPTH);
        goto out;
    }
    while (in.p < in.end) {
        pb_item it;
        if (next_item(c, &in, where, &it) < 0)
            goto out;
        const sk_schema_field *f = sk_schema_field_by_number(s, it.num);
        if (!f)
            continue;
        size_t lo = 0, hi = nf; /* f's place in the ascending protobuf view */
        while (sk_schema_pb_at(s, lo + (hi - lo) / 2) != f) {
            if (sk_schema_field_number(sk_schema_pb_at(s, lo + (hi - lo) / 2)) < it.num)
                lo = lo + (hi - lo) / 2 + 1;
            else
                hi = lo + (hi - lo) / 2;
        }
        size_t idx = lo + (hi - lo) / 2;
        seen[idx] = 1;
        const sk_schema *t = sk_schema_field_type(f);
        const char *name = sk_schema_field_name(f);
        sk_schema_kind k = sk_schema_kind_of(t);
        if (sk_schema_field_flags(f) & SK_FIELD_EMBEDDED) {
            if (it.wt != WT_LEN) {
                fail(c, "%s.%s: wire type %u, want %u", where, field_label(f), it.wt, WT_LEN);
                goto out;
            }
            if (dec_struct(c, t, it.data, it.len, into, 1) < 0)
                goto out;
            continue;
        }
        if (k == SK_SCHEMA_ARRAY || k == SK_SCHEMA_MAP) {
            json_t *m = json_object_get(into, name);
            if (k == SK_SCHEMA_ARRAY ? !json_is_array(m) : !json_is_object(m)) {
                m = k == SK_SCHEMA_ARRAY ? json_array() : json_object();
                SK_CHECK(json_object_set_new(into, name, m) == 0);
            }
            if (k == SK_SCHEMA_MAP && it.wt != WT_LEN) {
                fail(c, "%s.%s: wire type %u, want %u", where, name, it.wt, WT_LEN);
                goto out;
            }
            int r = k == SK_SCHEMA_ARRAY ? dec_repeated(c, sk_schema_elem(t), &it, m, where, name)
                                         : dec_map_entry(c, sk_schema_elem(t), &it, m, where, name);
            if (r < 0)
                goto out;
            continue;
        }
        json_t *prev = json_object_get(into, name);
        if (k == SK_SCHEMA_STRUCT && json_is_object(prev)) {
            /* A repeated occurrence of a message merges into the first. */
            if (it.wt != WT_LEN) {
                fail(c, "%s.%s: wire type %u, want %u", where, name, it.wt, WT_LEN);
                goto out;
            }
            if (dec_struct(c, t, it.data, it.len, prev, 0) < 0)
                goto out;
            continue;
        }
        json_t *v = dec_value(c, t, &it, where, name);
        if (!v)
            goto out;
        SK_CHECK(json_object_set_new(into, name, v) == 0);
    }
    if (settle_fields(c, s, seen, into) < 0)
        goto out;
    if (!embedded)
        order_fields(s, into);
    rc = 0;
out:
    c->depth--;
    if (seen != seen_small)
        free(seen);
    return rc;
}

/* ---- encoding -------------------------------------------------------------- */

static void put_varint(sk_buf *b, uint64_t v)
{
    unsigned char tmp[PB_MAX_VARINT_BYTES];
    size_t n = 0;
    do {
        tmp[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    sk_buf_append(b, tmp, n);
}

static void put_tag(sk_buf *b, uint32_t num, unsigned wt)
{
    put_varint(b, ((uint64_t)num << 3) | wt);
}

static void put_bytes(sk_buf *b, uint32_t num, const void *p, size_t n)
{
    put_tag(b, num, WT_LEN);
    put_varint(b, n);
    sk_buf_append(b, p, n);
}

/* A length-delimited field whose length is known once its body is
 * written: the tag and a one-byte length now, the length fixed up after
 * (moving the body when it needs more bytes). */
static size_t begin_len(sk_buf *b, uint32_t num)
{
    put_tag(b, num, WT_LEN);
    sk_buf_putc(b, 0);
    return b->len - 1;
}

static void end_len(sk_buf *b, size_t at)
{
    size_t body = b->len - at - 1, k = 0;
    unsigned char len[PB_MAX_VARINT_BYTES];
    uint64_t v = body;
    do {
        len[k] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            len[k] |= 0x80;
        k++;
    } while (v);
    if (k > 1) {
        sk_buf_reserve(b, k - 1);
        memmove(b->data + at + k, b->data + at + 1, body);
        b->len += k - 1;
        b->data[b->len] = '\0';
    }
    memcpy(b->data + at, len, k);
}

static int enc_struct(pb_ctx *c, sk_buf *b, const sk_schema *s, const json_t *obj);

/* An integer field's value: a JSON integer, or a real with an integral
 * value (what a JSON number may arrive as). */
static int json_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return 0;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(int64_t)d) {
            *out = (int64_t)d;
            return 0;
        }
    }
    return -1;
}

static int type_error(pb_ctx *c, const char *where, const char *field, const char *want)
{
    return fail(c, "%s.%s: want %s", where, field, want);
}

/* Writes one occurrence of field num of type t with the JSON value v (NULL:
 * the zero value). */
static int enc_value(pb_ctx *c, sk_buf *b, uint32_t num, const sk_schema *t, const json_t *v,
                     const char *where, const char *field)
{
    sk_schema_kind k = sk_schema_kind_of(t);
    size_t at;
    int rc = 0;
    if (json_is_null(v))
        v = NULL;
    switch (k) {
    case SK_SCHEMA_STRING:
        if (v && !json_is_string(v))
            return type_error(c, where, field, "a string");
        put_bytes(b, num, v ? json_string_value(v) : "", v ? json_string_length(v) : 0);
        break;
    case SK_SCHEMA_BYTES: {
        if (!v)
            break; /* a nil []byte is not written */
        if (!json_is_string(v))
            return type_error(c, where, field, "a base64 string");
        sk_buf raw = SK_BUF_INIT;
        if (base64_decode(json_string_value(v), json_string_length(v), &raw) < 0) {
            sk_buf_free(&raw);
            return type_error(c, where, field, "standard base64");
        }
        put_bytes(b, num, raw.data ? raw.data : "", raw.len);
        sk_buf_free(&raw);
        break;
    }
    case SK_SCHEMA_BOOL:
        if (v && !json_is_boolean(v))
            return type_error(c, where, field, "a boolean");
        put_tag(b, num, WT_VARINT);
        put_varint(b, v && json_is_true(v));
        break;
    case SK_SCHEMA_INT32:
    case SK_SCHEMA_INT64: {
        int64_t i = 0;
        if (v && json_int(v, &i) < 0)
            return type_error(c, where, field, "an integer");
        if (k == SK_SCHEMA_INT32)
            i = (int32_t)i;
        put_tag(b, num, WT_VARINT);
        put_varint(b, (uint64_t)i);
        break;
    }
    case SK_SCHEMA_DOUBLE: {
        if (v && !json_is_number(v))
            return type_error(c, where, field, "a number");
        double d = v ? json_number_value(v) : 0;
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        put_tag(b, num, WT_I64);
        for (int i = 0; i < 8; i++)
            sk_buf_putc(b, (char)(bits >> (8 * i) & 0xff));
        break;
    }
    case SK_SCHEMA_STRUCT:
        if (v && !json_is_object(v))
            return type_error(c, where, field, "an object");
        at = begin_len(b, num);
        rc = enc_struct(c, b, t, v);
        end_len(b, at);
        break;
    case SK_SCHEMA_TIME:
    case SK_SCHEMA_MICROTIME: {
        int64_t sec = 0;
        int32_t nanos = 0;
        if (v && (!json_is_string(v) || parse_rfc3339(json_string_value(v), &sec, &nanos) < 0))
            return type_error(c, where, field, "an RFC 3339 time");
        at = begin_len(b, num);
        if (v) { /* the zero time is an empty message */
            put_tag(b, 1, WT_VARINT);
            put_varint(b, (uint64_t)sec);
            put_tag(b, 2, WT_VARINT);
            put_varint(b, (uint64_t)(int64_t)nanos);
        }
        end_len(b, at);
        break;
    }
    case SK_SCHEMA_QUANTITY: {
        char text[64];
        const char *q = "0";
        int64_t i;
        if (json_is_string(v))
            q = json_string_value(v);
        else if (v && json_int(v, &i) == 0)
            snprintf(text, sizeof text, "%lld", (long long)i), q = text;
        else if (json_is_real(v))
            snprintf(text, sizeof text, "%.17g", json_real_value(v)), q = text;
        else if (v)
            return type_error(c, where, field, "a quantity");
        at = begin_len(b, num);
        put_bytes(b, 1, q, strlen(q));
        end_len(b, at);
        break;
    }
    case SK_SCHEMA_INT_OR_STRING: {
        int64_t i = 0;
        int is_str = json_is_string(v);
        if (v && !is_str && json_int(v, &i) < 0)
            return type_error(c, where, field, "an integer or a string");
        at = begin_len(b, num);
        put_tag(b, 1, WT_VARINT);
        put_varint(b, is_str);
        put_tag(b, 2, WT_VARINT);
        put_varint(b, (uint64_t)(int64_t)(int32_t)(is_str ? 0 : i));
        put_bytes(b, 3, is_str ? json_string_value(v) : "", is_str ? json_string_length(v) : 0);
        end_len(b, at);
        break;
    }
    case SK_SCHEMA_RAW:
    case SK_SCHEMA_FIELDS_V1:
        at = begin_len(b, num);
        if (v) {
            /* managedFields' field sets are most of a small object's
             * protobuf: core/jsontext writes them, jansson what is no
             * object or array (which it writes only with JSON_ENCODE_ANY) */
            size_t len = 0;
            int container = json_is_object(v) || json_is_array(v);
            char *text = container ? sk_jsontext_dump(v, &len)
                                   : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            if (!text)
                return fail(c, "%s.%s: cannot be encoded as JSON", where, field);
            put_bytes(b, 1, text, container ? len : strlen(text));
            free(text);
        }
        end_len(b, at);
        break;
    case SK_SCHEMA_ARRAY: {
        /* Only as a map value: the wrapper message {1 repeated T}. */
        if (v && !json_is_array(v))
            return type_error(c, where, field, "an array");
        at = begin_len(b, num);
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e)
        {
            if ((rc = enc_value(c, b, 1, sk_schema_elem(t), e, where, field)) < 0)
                break;
        }
        end_len(b, at);
        break;
    }
    case SK_SCHEMA_MAP:
        rc = fail(c, "%s.%s: nested maps are not supported", where, field);
        break;
    }
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A map: one entry message per key, sorted by key as gogo writes them. */
static int enc_map(pb_ctx *c, sk_buf *b, uint32_t num, const sk_schema *t, const json_t *m,
                   const char *where, const char *field)
{
    size_t n = json_object_size(m), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    const char *key;
    const json_t *v;
    int rc = 0;
    SK_CHECK_ALLOC(keys);
    json_object_foreach((json_t *)m, key, v) keys[i++] = key;
    qsort(keys, n, sizeof *keys, cmp_str);
    for (i = 0; i < n && rc == 0; i++) {
        size_t at = begin_len(b, num);
        put_bytes(b, 1, keys[i], strlen(keys[i]));
        rc = enc_value(c, b, 2, sk_schema_elem(t), json_object_get(m, keys[i]), where, field);
        end_len(b, at);
    }
    free(keys);
    return rc;
}

/* Writes the fields of struct s from obj (NULL: the zero struct). */
static int enc_struct(pb_ctx *c, sk_buf *b, const sk_schema *s, const json_t *obj)
{
    const char *where = msg_name(s);
    size_t n = sk_schema_pb_count(s);
    int rc = -1;
    if (++c->depth > PB_MAX_DEPTH) {
        fail(c, "%s: nested deeper than %d messages", where, PB_MAX_DEPTH);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const sk_schema_field *f = sk_schema_pb_at(s, i);
        const sk_schema *t = sk_schema_field_type(f);
        unsigned flags = sk_schema_field_flags(f);
        uint32_t num = sk_schema_field_number(f);
        if (flags & SK_FIELD_EMBEDDED) {
            size_t at = begin_len(b, num);
            int r = enc_struct(c, b, t, obj);
            end_len(b, at);
            if (r < 0)
                goto out;
            continue;
        }
        const char *name = sk_schema_field_name(f);
        const json_t *v = obj ? json_object_get(obj, name) : NULL;
        if (json_is_null(v))
            v = NULL;
        sk_schema_kind k = sk_schema_kind_of(t);
        if (k == SK_SCHEMA_ARRAY) {
            if (v && !json_is_array(v)) {
                type_error(c, where, name, "an array");
                goto out;
            }
            size_t j;
            const json_t *e;
            json_array_foreach(v, j, e)
            {
                if (enc_value(c, b, num, sk_schema_elem(t), e, where, name) < 0)
                    goto out;
            }
        } else if (k == SK_SCHEMA_MAP) {
            if (v && !json_is_object(v)) {
                type_error(c, where, name, "an object");
                goto out;
            }
            if (v && enc_map(c, b, num, t, v, where, name) < 0)
                goto out;
        } else if (v || !(flags & SK_FIELD_POINTER)) {
            if (enc_value(c, b, num, t, v, where, name) < 0)
                goto out;
        }
    }
    rc = 0;
out:
    c->depth--;
    return rc;
}

/* ---- kinds and envelope ------------------------------------------------------ */

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

static const sk_schema *meta_schema(const char *kind)
{
    static const char *const kinds[] = {"Status", "DeleteOptions", "WatchEvent"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(kind, kinds[i]) == 0) {
            char name[96];
            snprintf(name, sizeof name, "%s%s", meta_prefix, kind);
            return sk_schema_named(name);
        }
    }
    return NULL;
}

/* A kind of the meta.k8s.io group itself (PartialObjectMetadata and its
 * lists): no resource serves it, so the generated schema's definitions of
 * meta/v1 and meta/v1beta1 are searched for its group/version/kind. */
static const sk_schema *meta_group_schema(const char *version, const char *kind)
{
    static const char *const packages[] = {meta_prefix, "io.k8s.apimachinery.pkg.apis.meta.v1beta1."};
    for (size_t i = 0; i < sizeof packages / sizeof packages[0]; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s%s", packages[i], kind);
        const sk_schema *s = sk_schema_named(name);
        size_t j;
        const json_t *gvk;
        json_array_foreach(s ? sk_schema_gvks(s) : NULL, j, gvk)
        {
            if (strcmp(json_string_value(json_object_get(gvk, "group")), "meta.k8s.io") == 0 &&
                strcmp(json_string_value(json_object_get(gvk, "version")), version) == 0 &&
                strcmp(json_string_value(json_object_get(gvk, "kind")), kind) == 0)
                return s;
        }
    }
    return NULL;
}

const sk_schema *sk_protobuf_schema_for(const char *api_version, const char *kind)
{
    char group[256];
    const char *version = api_version;
    const char *slash = strchr(api_version, '/');
    group[0] = '\0';
    if (slash) {
        size_t n = (size_t)(slash - api_version);
        if (n >= sizeof group)
            return NULL;
        memcpy(group, api_version, n);
        group[n] = '\0';
        version = slash + 1;
    }
    const sk_schema *meta = strcmp(group, "meta.k8s.io") == 0 ? meta_group_schema(version, kind) : NULL;
    if (meta)
        return meta;
    const sk_resource *r = sk_registry_find_kind(group, version, kind);
    if (r)
        return r->schema;
    size_t kn = strlen(kind);
    if (kn > 4 && strcmp(kind + kn - 4, "List") == 0 && kn - 4 < 256) {
        char base[256];
        memcpy(base, kind, kn - 4);
        base[kn - 4] = '\0';
        r = sk_registry_find_kind(group, version, base);
        if (r && r->list_schema && r->list_kind && strcmp(r->list_kind, kind) == 0)
            return r->list_schema;
    }
    const sk_schema *s = meta_schema(kind);
    if (s)
        return s;
    /* A subresource's own kind (Scale, Eviction): rare, so a scan. */
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < all[i]->n_subresources; j++) {
            const sk_subresource *sr = &all[i]->subresources[j];
            if (sr->schema && sr->kind && strcmp(sr->kind, kind) == 0 &&
                strcmp(sr->group ? sr->group : "", group) == 0 &&
                strcmp(sr->version ? sr->version : "", version) == 0)
                return sr->schema;
        }
    }
    return NULL;
}

/* The envelope body[0..len) to JSON. */
static sk_err envelope_to_json(pb_ctx *c, const unsigned char *body, size_t len, json_t **out)
{
    json_t *obj = NULL, *av = NULL, *kind = NULL;
    const unsigned char *raw = NULL;
    size_t raw_len = 0;
    sk_err err = SK_ERR_BAD_REQUEST;
    if (++c->depth > PB_MAX_DEPTH) {
        fail(c, "Unknown: nested deeper than %d messages", PB_MAX_DEPTH);
        goto out;
    }
    if (len < sizeof magic || memcmp(body, magic, sizeof magic) != 0) {
        fail(c, "protobuf body does not start with the Kubernetes magic bytes \"k8s\\0\"");
        goto out;
    }
    pb_in in = {body + sizeof magic, body + len};
    while (in.p < in.end) {
        pb_item it;
        if (next_item(c, &in, "Unknown", &it) < 0)
            goto out;
        if (it.num > 4)
            continue;
        if (it.wt != WT_LEN) {
            fail(c, "Unknown: field %u: wire type %u, want %u", it.num, it.wt, WT_LEN);
            goto out;
        }
        if (it.num == 1) {
            pb_in tin = {it.data, it.data + it.len};
            while (tin.p < tin.end) {
                pb_item t;
                if (next_item(c, &tin, "TypeMeta", &t) < 0)
                    goto out;
                if (t.num > 2)
                    continue;
                if (t.wt != WT_LEN) {
                    fail(c, "TypeMeta: field %u: wire type %u, want %u", t.num, t.wt, WT_LEN);
                    goto out;
                }
                json_t *s =
                    string_value(c, "TypeMeta", t.num == 1 ? "apiVersion" : "kind", t.data, t.len);
                if (!s)
                    goto out;
                json_t **slot = t.num == 1 ? &av : &kind;
                json_decref(*slot);
                *slot = s;
            }
        } else if (it.num == 2) {
            raw = it.data;
            raw_len = it.len;
        } else if (it.len > 0 && (it.num == 3 || it.len != sizeof protobuf_media - 1 ||
                                  memcmp(it.data, protobuf_media, it.len) != 0)) {
            fail(c, "Unknown: unsupported %s \"%.*s\"",
                 it.num == 3 ? "contentEncoding" : "contentType", (int)(it.len > 64 ? 64 : it.len),
                 (const char *)it.data);
            goto out;
        }
    }
    if (!av || !kind || !json_string_length(av) || !json_string_length(kind)) {
        fail(c, "protobuf body has no %s", !av || !json_string_length(av) ? "apiVersion" : "kind");
        goto out;
    }
    const sk_schema *s = sk_protobuf_schema_for(json_string_value(av), json_string_value(kind));
    if (!s || sk_schema_kind_of(s) != SK_SCHEMA_STRUCT) {
        fail(c, "protobuf bodies of kind %s in %s are not supported", json_string_value(kind),
             json_string_value(av));
        goto out;
    }
    obj = json_object();
    SK_CHECK_ALLOC(obj);
    if (dec_struct(c, s, raw, raw_len, obj, 0) < 0)
        goto out;
    /* apiVersion and kind lead, as TypeMeta does in every kind. */
    SK_CHECK(json_object_set(obj, "apiVersion", av) == 0);
    SK_CHECK(json_object_set(obj, "kind", kind) == 0);
    order_fields(s, obj);
    *out = obj;
    obj = NULL;
    err = SK_OK;
out:
    c->depth--;
    json_decref(obj);
    json_decref(av);
    json_decref(kind);
    return err;
}

sk_err sk_protobuf_type_meta(const char *body, size_t len, char **api_version, char **kind)
{
    pb_ctx c = {NULL, 0};
    char *av = NULL, *k = NULL;
    sk_err err = SK_ERR_BAD_REQUEST;
    if (len < sizeof magic || memcmp(body, magic, sizeof magic) != 0)
        goto out;
    pb_in in = {(const unsigned char *)body + sizeof magic, (const unsigned char *)body + len};
    while (in.p < in.end) {
        pb_item it;
        if (next_item(&c, &in, "Unknown", &it) < 0)
            goto out;
        if (it.num != 1 || it.wt != WT_LEN)
            continue;
        pb_in tin = {it.data, it.data + it.len};
        while (tin.p < tin.end) {
            pb_item t;
            if (next_item(&c, &tin, "TypeMeta", &t) < 0)
                goto out;
            if ((t.num != 1 && t.num != 2) || t.wt != WT_LEN || !sk_utf8_valid((const char *)t.data, t.len))
                continue;
            char **slot = t.num == 1 ? &av : &k;
            free(*slot);
            *slot = strndup((const char *)t.data, t.len);
            SK_CHECK_ALLOC(*slot);
        }
    }
    if (av && k && *av && *k) {
        *api_version = av;
        *kind = k;
        av = k = NULL;
        err = SK_OK;
    }
out:
    free(av);
    free(k);
    free(c.why);
    return err;
}

sk_err sk_protobuf_to_json(const char *body, size_t len, json_t **out, char **why)
{
    pb_ctx c = {NULL, 0};
    json_t *obj = NULL;
    sk_err err = envelope_to_json(&c, (const unsigned char *)body, len, &obj);
    if (err == SK_OK) {
        *out = obj;
    } else {
        *why = c.why;
        c.why = NULL;
    }
    free(c.why);
    return err;
}

sk_err sk_protobuf_decode_message(const sk_schema *s, const char *data, size_t len, json_t **out,
                                  char **why)
{
    pb_ctx c = {NULL, 0};
    json_t *obj = json_object();
    sk_err err = SK_ERR_BAD_REQUEST;
    SK_CHECK_ALLOC(obj);
    if (sk_schema_kind_of(s) != SK_SCHEMA_STRUCT) {
        fail(&c, "%s is not a message", msg_name(s));
    } else if (dec_struct(&c, s, (const unsigned char *)data, len, obj, 0) == 0) {
        *out = obj;
        obj = NULL;
        err = SK_OK;
    }
    json_decref(obj);
    if (err != SK_OK)
        *why = c.why;
    else
        free(c.why);
    return err;
}

/* The message of obj as a value of the struct kind apiVersion/kind. */
static sk_err message_of(pb_ctx *c, const char *av, const char *kind, const json_t *obj,
                         sk_buf *out)
{
    const sk_schema *s = av && kind ? sk_protobuf_schema_for(av, kind) : NULL;
    if (!json_is_object(obj) || !s || sk_schema_kind_of(s) != SK_SCHEMA_STRUCT) {
        fail(c, "no protobuf encoding for kind %s in %s", kind ? kind : "(none)",
             av ? av : "(none)");
        return SK_ERR_BAD_REQUEST;
    }
    return enc_struct(c, out, s, obj) == 0 ? SK_OK : SK_ERR_BAD_REQUEST;
}

/* Hands c's failure to *why on error, frees it otherwise. */
static sk_err settle(pb_ctx *c, sk_err err, char **why)
{
    if (err != SK_OK)
        *why = c->why;
    else
        free(c->why);
    return err;
}

void sk_protobuf_envelope_open(const char *api_version, const char *kind, size_t msg_len,
                               sk_buf *out)
{
    sk_buf_append(out, magic, sizeof magic);
    size_t at = begin_len(out, 1); /* TypeMeta */
    put_bytes(out, 1, api_version, strlen(api_version));
    put_bytes(out, 2, kind, strlen(kind));
    end_len(out, at);
    put_tag(out, 2, WT_LEN); /* raw: the message, which the caller appends */
    put_varint(out, msg_len);
}

/* The envelope's end: the empty contentEncoding (3) and contentType (4)
 * Go writes after raw. */
_Static_assert(sizeof SK_PROTOBUF_ENVELOPE_END - 1 == SK_PROTOBUF_ENVELOPE_END_LEN,
               "the envelope's end is its length");

/* Appends the envelope of obj, its apiVersion and kind picking the schema. */
static sk_err envelope_of(pb_ctx *c, const json_t *obj, sk_buf *out)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    sk_buf msg = SK_BUF_INIT;
    sk_err err = message_of(c, av, kind, obj, &msg);
    if (err == SK_OK) {
        sk_protobuf_envelope_open(av, kind, msg.len, out);
        sk_buf_append(out, msg.data, msg.len);
        sk_buf_append(out, SK_PROTOBUF_ENVELOPE_END, SK_PROTOBUF_ENVELOPE_END_LEN);
    }
    sk_buf_free(&msg);
    return err;
}

sk_err sk_protobuf_from_json(const json_t *obj, sk_buf *out, char **why)
{
    pb_ctx c = {NULL, 0};
    return settle(&c, envelope_of(&c, obj, out), why);
}

sk_err sk_protobuf_message(const char *api_version, const char *kind, const json_t *obj,
                           sk_buf *out, char **why)
{
    pb_ctx c = {NULL, 0};
    return settle(&c, message_of(&c, api_version, kind, obj, out), why);
}

sk_err sk_protobuf_list_open(const json_t *head, size_t items_len, sk_buf *out, char **why)
{
    pb_ctx c = {NULL, 0};
    const char *av = json_string_value(json_object_get(head, "apiVersion"));
    const char *kind = json_string_value(json_object_get(head, "kind"));
    sk_buf msg = SK_BUF_INIT;
    sk_err err = SK_ERR_BAD_REQUEST;
    if (json_object_get(head, "items"))
        fail(&c, "the head of a list encoded by items has items");
    else
        err = message_of(&c, av, kind, head, &msg); /* the list's own fields: its metadata */
    if (err == SK_OK) {
        sk_protobuf_envelope_open(av, kind, msg.len + items_len, out);
        sk_buf_append(out, msg.data, msg.len);
    }
    sk_buf_free(&msg);
    return settle(&c, err, why);
}

uint32_t sk_protobuf_list_items_field(const char *api_version, const char *kind)
{
    const sk_schema *s = sk_protobuf_schema_for(api_version, kind);
    const sk_schema_field *f = s ? sk_schema_field_find(s, "items", 5) : NULL;
    return f ? sk_schema_field_number(f) : 0;
}

void sk_protobuf_list_item_open(uint32_t items_field, size_t msg_len, sk_buf *out)
{
    SK_CHECK(items_field > 0);
    put_tag(out, items_field, WT_LEN);
    put_varint(out, msg_len);
}

void sk_protobuf_watch_frame_open(const char *type, size_t envelope_len, sk_buf *out)
{
    /* The frame's length is known up front: the bare WatchEvent is the
     * type (1), then the RawExtension (2) whose raw (1) is the envelope. */
    size_t type_len = strlen(type);
    sk_buf tmp = SK_BUF_INIT;
    put_tag(&tmp, 1, WT_LEN);
    put_varint(&tmp, type_len);
    size_t type_field = tmp.len + type_len;
    sk_buf_reset(&tmp);
    put_tag(&tmp, 1, WT_LEN);
    put_varint(&tmp, envelope_len);
    size_t raw_field = tmp.len + envelope_len;
    sk_buf_reset(&tmp);
    put_tag(&tmp, 2, WT_LEN);
    put_varint(&tmp, raw_field);
    size_t n = type_field + tmp.len + raw_field;
    SK_CHECK(n <= UINT32_MAX); /* objects are far smaller (blob.h) */
    unsigned char h[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                          (unsigned char)(n >> 8), (unsigned char)n};
    sk_buf_append(out, h, sizeof h);
    put_bytes(out, 1, type, type_len);
    sk_buf_append(out, tmp.data, tmp.len);
    put_tag(out, 1, WT_LEN);
    put_varint(out, envelope_len);
    sk_buf_free(&tmp);
}

sk_err sk_protobuf_watch_frame(const json_t *event, sk_buf *out, char **why)
{
    pb_ctx c = {NULL, 0};
    const char *type = json_string_value(json_object_get(event, "type"));
    const json_t *obj = json_object_get(event, "object");
    sk_buf env = SK_BUF_INIT;
    sk_err err = SK_ERR_BAD_REQUEST;
    if (!type || !json_is_object(obj))
        fail(&c, "a watch event needs a type and an object");
    else if ((err = envelope_of(&c, obj, &env)) == SK_OK) {
        sk_protobuf_watch_frame_open(type, env.len, out);
        sk_buf_append(out, env.data, env.len);
    }
    sk_buf_free(&env);
    return settle(&c, err, why);
}
