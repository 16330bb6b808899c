/*
 * openapi_pb.c - the swagger 2.0 document as gnostic's openapi_v2.Document
 * protobuf (see openapi_pb.h for why and who reads it).
 *
 * One generic encoder walks the JSON document with the generated table of
 * gnostic's messages (gen/gnostic_v2.h) and applies gnostic's compiler rules:
 *  - a field is filled from its JSON key ("$ref" -> _ref); map fields are
 *    "Named*" repeated {name, value} pairs, in document order, taking the
 *    keys that match the field's pattern ("x-" vendor extensions, "/" paths,
 *    response codes) or every key (definitions, properties, ...);
 *  - Any is {yaml: the value as YAML text}, as gnostic's compiler.Marshal
 *    writes it (block style, 4-space indent, strings quoted only when plain
 *    text would read back as another type or is not allowed);
 *  - TypeItem takes a string or a list; ItemsItem one schema object;
 *  - a oneof takes the LAST alternative whose shape matches (required keys,
 *    allowed keys/patterns, enum values of its fields), as gnostic tries them
 *    in order and each success overwrites the previous one.
 * Fields go out in field-number order and proto3 defaults (empty string,
 * false, 0) are left out, as Go's proto.Marshal does; present message fields
 * are always written, even when empty.
 *
 * Invariant: the cached bytes are built once and never change.
 */
#include "kube/openapi_pb.h"

#include "core/buf.h"
#include "core/check.h"
#include "kube/openapi.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct sk_gv2_field {
    int number;
    const char *name;
    const char *key; /* JSON key, or NULL */
    int map;         /* 0: not a map; else a pattern id (see the table) */
    char type;       /* s b i d m x */
    int msg;         /* message index for 'm' */
    int repeated;
    const char *enumv; /* allowed values joined by '|', or NULL */
} sk_gv2_field;

typedef struct sk_gv2_msg {
    const char *name;
    int first, n;
    int oneof;
    const char *required; /* '|'-joined, or NULL */
    const char *allowed;  /* '|'-joined, or NULL when keys are not checked */
    int patterns;         /* bit per pattern id */
} sk_gv2_msg;

#include "kube/gen/gnostic_v2.h"

enum { PAT_NONE, PAT_X, PAT_SLASH, PAT_CODE, PAT_ANY };

/* ---- protobuf wire ---- */

static void put_varint(sk_buf *b, uint64_t v)
{
    char tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    sk_buf_append(b, tmp, n);
}

static void put_bytes(sk_buf *b, int number, const void *data, size_t len)
{
    put_varint(b, ((uint64_t)number << 3) | 2);
    put_varint(b, len);
    sk_buf_append(b, data, len);
}

/* ---- matching the pattern lists ---- */

static int in_list(const char *list, const char *s)
{
    size_t n = strlen(s);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, '|');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

static int key_matches(int pattern, const char *k)
{
    switch (pattern) {
    case PAT_X:
        return strncmp(k, "x-", 2) == 0;
    case PAT_SLASH:
        return k[0] == '/';
    case PAT_CODE:
        if (strcmp(k, "default") == 0)
            return 1;
        return strlen(k) == 3 && k[0] >= '0' && k[0] <= '9' && k[1] >= '0' && k[1] <= '9' &&
               k[2] >= '0' && k[2] <= '9';
    case PAT_ANY:
        return 1;
    default:
        return 0;
    }
}

static const sk_gv2_msg *msg_at(int i)
{
    return &sk_gv2_msgs[i];
}

static int msg_is(const sk_gv2_msg *m, const char *name)
{
    return strcmp(m->name, name) == 0;
}

/* Whether v has the shape gnostic's New<Message> accepts (checked one level
 * deep, which is what tells a oneof's alternatives apart). */
static int matches(const sk_gv2_msg *m, const json_t *v)
{
    if (msg_is(m, "Any"))
        return 1;
    if (msg_is(m, "TypeItem") || msg_is(m, "StringArray"))
        return json_is_string(v) || json_is_array(v);
    if (!json_is_object(v))
        return 0;
    for (const char *p = m->required; p && *p;) {
        const char *end = strchr(p, '|');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char key[64];
        if (len >= sizeof key)
            return 0;
        memcpy(key, p, len);
        key[len] = '\0';
        if (!json_object_get(v, key))
            return 0;
        p = end ? end + 1 : NULL;
    }
    if (m->allowed) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            int ok = in_list(m->allowed, k);
            for (int p = 1; !ok && p <= PAT_ANY; p++)
                ok = (m->patterns & (1 << p)) && key_matches(p, k);
            if (!ok)
                return 0;
        }
    }
    for (int i = 0; i < m->n; i++) {
        const sk_gv2_field *f = &sk_gv2_fields[m->first + i];
        if (f->enumv && f->key) {
            const json_t *x = json_object_get(v, f->key);
            if (x && (!json_is_string(x) || !in_list(f->enumv, json_string_value(x))))
                return 0;
        }
    }
    if (m->oneof) {
        for (int i = 0; i < m->n; i++) {
            const sk_gv2_field *f = &sk_gv2_fields[m->first + i];
            if (f->type == 'm' && matches(msg_at(f->msg), v))
                return 1;
        }
        return 0;
    }
    return 1;
}

/* ---- YAML text of an Any ---- */

static int is_number_text(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (strcasecmp(p, ".inf") == 0 || strcasecmp(s, ".nan") == 0)
        return 1;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o' || p[1] == 'b') && p[2])
        return 1;
    int digits = 0;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (digits && (*p == 'e' || *p == 'E')) {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return digits && !*p;
}

static void yaml_string(sk_buf *b, const char *s)
{
    static const char *const other_types[] = {"~",    "null",  "Null",  "NULL",  "true", "True",
                                              "TRUE", "false", "False", "FALSE", "<<"};
    int dq = !*s || is_number_text(s) || strchr(s, '\n') != NULL;
    for (size_t i = 0; !dq && i < sizeof other_types / sizeof *other_types; i++)
        dq = strcmp(s, other_types[i]) == 0;
    for (const unsigned char *p = (const unsigned char *)s; !dq && *p; p++)
        dq = *p < 0x20 || *p == 0x7f;
    if (dq) {
        sk_buf_json_string(b, s); /* a JSON string is a YAML double-quoted scalar */
        return;
    }
    size_t n = strlen(s);
    int sq = strchr("-?:,[]{}#&*!|>'\"%@`", s[0]) != NULL || s[0] == ' ' || s[n - 1] == ' ' ||
             s[n - 1] == ':' || strstr(s, ": ") || strstr(s, " #");
    if (!sq) {
        sk_buf_puts(b, s);
        return;
    }
    sk_buf_putc(b, '\'');
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            sk_buf_putc(b, '\'');
        sk_buf_putc(b, *p);
    }
    sk_buf_putc(b, '\'');
}

static void yaml_scalar(sk_buf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        yaml_string(b, json_string_value(v));
        break;
    case JSON_INTEGER:
        sk_buf_printf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        sk_buf_printf(b, "%.17g", json_real_value(v));
        break;
    case JSON_TRUE:
        sk_buf_puts(b, "true");
        break;
    case JSON_FALSE:
        sk_buf_puts(b, "false");
        break;
    case JSON_OBJECT:
        sk_buf_puts(b, "{}");
        break;
    case JSON_ARRAY:
        sk_buf_puts(b, "[]");
        break;
    default:
        sk_buf_puts(b, "null");
    }
}

static int yaml_block(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v)) || (json_is_array(v) && json_array_size(v));
}

static void spaces(sk_buf *b, int n)
{
    for (int i = 0; i < n; i++)
        sk_buf_putc(b, ' ');
}

/* Writes block v whose entries start at column col; the first entry's
 * indentation is already written when inline_first (after "- "). */
static void yaml_node(sk_buf *b, const json_t *v, int col, int inline_first)
{
    int first = 1;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            if (!(first && inline_first))
                spaces(b, col);
            first = 0;
            yaml_string(b, k);
            sk_buf_putc(b, ':');
            if (yaml_block(x)) {
                sk_buf_putc(b, '\n');
                yaml_node(b, x, col + 4, 0);
            } else {
                sk_buf_putc(b, ' ');
                yaml_scalar(b, x);
                sk_buf_putc(b, '\n');
            }
        }
        return;
    }
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        if (!(first && inline_first))
            spaces(b, col);
        first = 0;
        sk_buf_puts(b, "- ");
        if (yaml_block(x)) {
            yaml_node(b, x, col + 2, 1);
        } else {
            yaml_scalar(b, x);
            sk_buf_putc(b, '\n');
        }
    }
}

static void yaml_text(sk_buf *b, const json_t *v)
{
    if (yaml_block(v)) {
        yaml_node(b, v, 0, 0);
    } else {
        yaml_scalar(b, v);
        sk_buf_putc(b, '\n');
    }
}

/* ---- the encoder ---- */

static void encode_msg(sk_buf *b, const sk_gv2_msg *m, const json_t *v);

/* One value of field f; singular proto3 defaults are left out. */
static void encode_value(sk_buf *b, const sk_gv2_field *f, const json_t *v)
{
    switch (f->type) {
    case 's':
        if (json_is_string(v) && (f->repeated || json_string_length(v)))
            put_bytes(b, f->number, json_string_value(v), json_string_length(v));
        break;
    case 'b':
        if (json_is_true(v) || (f->repeated && json_is_false(v))) {
            put_varint(b, (uint64_t)f->number << 3);
            put_varint(b, json_is_true(v));
        }
        break;
    case 'i':
        if (json_is_integer(v) && (f->repeated || json_integer_value(v))) {
            put_varint(b, (uint64_t)f->number << 3);
            put_varint(b, (uint64_t)json_integer_value(v));
        }
        break;
    case 'd':
        if (json_is_number(v) && (f->repeated || json_number_value(v) != 0)) {
            double d = json_number_value(v);
            uint64_t bits;
            unsigned char le[8];
            memcpy(&bits, &d, sizeof bits);
            for (int i = 0; i < 8; i++)
                le[i] = (unsigned char)(bits >> (8 * i));
            put_varint(b, ((uint64_t)f->number << 3) | 1);
            sk_buf_append(b, le, sizeof le);
        }
        break;
    case 'm': {
        sk_buf sub = SK_BUF_INIT;
        encode_msg(&sub, msg_at(f->msg), v);
        put_bytes(b, f->number, sub.data ? sub.data : "", sub.len);
        sk_buf_free(&sub);
        break;
    }
    default: /* google.protobuf.Any: gnostic's compiler never fills it */
        break;
    }
}

/* A map field: {name, value} pairs for the keys its pattern takes. */
static void encode_map(sk_buf *b, const sk_gv2_field *f, const json_t *obj)
{
    const sk_gv2_msg *named = msg_at(f->msg);
    const sk_gv2_field *value = &sk_gv2_fields[named->first + 1];
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)obj, k, x)
    {
        if (!key_matches(f->map, k))
            continue;
        sk_buf pair = SK_BUF_INIT;
        put_bytes(&pair, 1, k, strlen(k));
        encode_value(&pair, value, x);
        put_bytes(b, f->number, pair.data ? pair.data : "", pair.len);
        sk_buf_free(&pair);
    }
}

static void encode_msg(sk_buf *b, const sk_gv2_msg *m, const json_t *v)
{
    const sk_gv2_field *fields = &sk_gv2_fields[m->first];
    if (msg_is(m, "Any")) {
        sk_buf y = SK_BUF_INIT;
        yaml_text(&y, v);
        put_bytes(b, 2, y.data, y.len);
        sk_buf_free(&y);
    } else if (msg_is(m, "TypeItem") || msg_is(m, "StringArray")) {
        if (json_is_string(v)) {
            put_bytes(b, 1, json_string_value(v), json_string_length(v));
        } else {
            size_t i;
            json_t *x;
            json_array_foreach(v, i, x) encode_value(b, &fields[0], x);
        }
    } else if (msg_is(m, "ItemsItem")) {
        if (json_is_object(v))
            encode_value(b, &fields[0], v);
    } else if (m->oneof) {
        const sk_gv2_field *chosen = NULL;
        for (int i = 0; i < m->n; i++) {
            const sk_gv2_field *f = &fields[i];
            if ((f->type == 'm' && matches(msg_at(f->msg), v)) ||
                (f->type == 'b' && json_is_boolean(v)))
                chosen = f;
        }
        if (chosen && chosen->type == 'b') {
            put_varint(b, (uint64_t)chosen->number << 3); /* a set oneof bool is written */
            put_varint(b, json_is_true(v));
        } else if (chosen) {
            encode_value(b, chosen, v);
        }
    } else if (json_is_object(v)) {
        for (int i = 0; i < m->n; i++) {
            const sk_gv2_field *f = &fields[i];
            if (f->map) {
                encode_map(b, f, v);
                continue;
            }
            const json_t *x = f->key ? json_object_get(v, f->key) : NULL;
            if (!x)
                continue;
            if (f->repeated && json_is_array(x)) {
                size_t j;
                json_t *e;
                json_array_foreach(x, j, e) encode_value(b, f, e);
            } else if (!f->repeated) {
                encode_value(b, f, x);
            }
        }
    }
}

static const sk_gv2_msg *find_msg(const char *name)
{
    for (int i = 0; i < SK_GV2_N_MSGS; i++)
        if (msg_is(&sk_gv2_msgs[i], name))
            return &sk_gv2_msgs[i];
    return NULL;
}

unsigned char *sk_openapi_pb_encode(const json_t *doc, size_t *len)
{
    sk_buf b = SK_BUF_INIT;
    const sk_gv2_msg *m = find_msg("Document");
    SK_CHECK(m != NULL);
    sk_buf_reserve(&b, 1);
    encode_msg(&b, m, doc);
    return (unsigned char *)sk_buf_steal(&b, len);
}

/* ---- the cached document ---- */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned char *cached;
static size_t cached_len;

static void build(void)
{
    json_t *doc = sk_openapi_v2();
    cached = sk_openapi_pb_encode(doc, &cached_len);
    json_decref(doc);
}

const unsigned char *sk_openapi_v2_pb(size_t *len)
{
    pthread_once(&once, build);
    if (len)
        *len = cached_len;
    return cached;
}

/* ---- Accept ---- */

/* 0 none, 1 JSON, 2 protobuf: what a clause type/subtype selects. */
static int clause_kind(const char *type, size_t tl, const char *sub, size_t sl)
{
    int any_type = tl == 1 && type[0] == '*';
    if (!any_type && !(tl == 11 && strncasecmp(type, "application", 11) == 0))
        return 0;
    if (sl == 1 && sub[0] == '*')
        return 1;
    if (sl == 4 && strncasecmp(sub, "json", 4) == 0)
        return 1;
    static const char *const pb[] = {"com.github.proto-openapi.spec.v2@v1.0+protobuf",
                                     "com.github.proto-openapi.spec.v2.v1.0+protobuf"};
    for (size_t i = 0; i < 2; i++)
        if (sl == strlen(pb[i]) && strncasecmp(sub, pb[i], sl) == 0)
            return 2;
    return 0;
}

int sk_openapi_pb_wanted(const char *accept)
{
    int best = 0;
    double best_q = -1;
    int best_spec = -1;
    for (const char *p = accept; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *semi = memchr(p, ';', n);
        size_t mt = semi ? (size_t)(semi - p) : n;
        while (mt && (*p == ' ' || *p == '\t'))
            p++, mt--, n--;
        while (mt && (p[mt - 1] == ' ' || p[mt - 1] == '\t'))
            mt--;
        const char *slash = memchr(p, '/', mt);
        double q = 1.0;
        for (const char *s = semi; s && s < p + n;
             s = memchr(s + 1, ';', (size_t)(p + n - s - 1))) {
            const char *a = s + 1;
            while (a < p + n && *a == ' ')
                a++;
            if (a + 2 <= p + n && a[0] == 'q' && a[1] == '=')
                q = strtod(a + 2, NULL);
        }
        if (slash) {
            size_t tl = (size_t)(slash - p), sl = mt - tl - 1;
            int kind = clause_kind(p, tl, slash + 1, sl);
            int spec = (tl != 1 || p[0] != '*') + (sl != 1 || slash[1] != '*');
            /* goautoneg's order: higher q first, then the more specific */
            if (kind && (q > best_q || (q == best_q && spec > best_spec))) {
                best = kind;
                best_q = q;
                best_spec = spec;
            }
        }
        p = end ? end + 1 : NULL;
    }
    return best == 2;
}
