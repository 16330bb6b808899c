/*
 * etcdkey.c - see etcdkey.h. The key's layout rules are kube-apiserver's
 * registry paths (k8s.io/apiserver's storage prefixes and the legacy
 * renames in kube's storage factory); the value's kinds follow what
 * kube-apiserver writes: its protobuf envelope for built-in kinds, JSON for
 * custom resources, a k8s:enc: prefix when it encrypted the value.
 */
#include "kube/etcdkey.h"
#include "core/check.h"
#include "core/utf8.h"
#include "kube/protobuf.h"

#include <jansson.h>

#include <stdlib.h>
#include <string.h>

#define PREFIX "/registry/"
#define ENCRYPTED_PREFIX "k8s:enc:"
#define MAX_SEGMENTS 4

static int span_is(sk_etcdkey_span s, const char *lit)
{
    return s.len == strlen(lit) && memcmp(s.p, lit, s.len) == 0;
}

/* kube's renamed prefixes back to their resources. */
static sk_etcdkey_span renamed(sk_etcdkey_span s)
{
    static const char *const map[][2] = {
        {"minions", "nodes"},
        {"controllers", "replicationcontrollers"},
        {"ingress", "ingresses"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (span_is(s, map[i][0]))
            return (sk_etcdkey_span){map[i][1], strlen(map[i][1])};
    return s;
}

void sk_etcdkey_parse(const char *key, size_t len, sk_etcdkey *out)
{
    sk_etcdkey k = {0};
    k.text = memchr(key, 0, len) == NULL && sk_utf8_valid(key, len);
    size_t plen = strlen(PREFIX);
    if (!k.text || len <= plen || memcmp(key, PREFIX, plen) != 0)
        goto out;
    sk_etcdkey_span seg[MAX_SEGMENTS + 1];
    size_t n = 0;
    for (const char *p = key + plen, *end = key + len; p <= end && n <= MAX_SEGMENTS;) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *stop = slash ? slash : end;
        if (stop == p)
            goto out; /* an empty segment */
        seg[n++] = (sk_etcdkey_span){p, (size_t)(stop - p)};
        if (!slash)
            break;
        p = slash + 1;
        if (p == end)
            goto out; /* a trailing slash */
    }
    /* segments before the namespace and name: <resource>, or <group>/<resource>,
     * or services/{specs,endpoints} */
    size_t lead = 1;
    if (memchr(seg[0].p, '.', seg[0].len))
        lead = 2;
    else if (span_is(seg[0], "services") && n > 2 &&
             (span_is(seg[1], "specs") || span_is(seg[1], "endpoints")))
        lead = 2;
    if (n > MAX_SEGMENTS || n < lead + 1 || n > lead + 2)
        goto out;
    if (lead == 2 && memchr(seg[0].p, '.', seg[0].len)) {
        k.group = seg[0];
        k.resource = seg[1];
    } else if (lead == 2) {
        k.resource = span_is(seg[1], "specs") ? seg[0] : seg[1];
    } else {
        k.resource = renamed(seg[0]);
    }
    if (n == lead + 2)
        k.namespace = seg[lead];
    k.name = seg[n - 1];
    k.is_object = 1;
out:
    *out = k;
}

static char *dup_string(const json_t *v)
{
    char *s = NULL;
    if (json_is_string(v) && json_string_length(v)) {
        s = strdup(json_string_value(v));
        SK_CHECK_ALLOC(s);
    }
    return s;
}

void sk_etcdval_parse(const char *value, size_t len, sk_etcdval *out)
{
    sk_etcdval v = {SK_ETCDVAL_BYTES, NULL, NULL, NULL};
    size_t elen = strlen(ENCRYPTED_PREFIX);
    if (len >= elen && memcmp(value, ENCRYPTED_PREFIX, elen) == 0) {
        v.encoding = SK_ETCDVAL_ENCRYPTED;
    } else if (sk_protobuf_type_meta(value, len, &v.api_version, &v.kind) == SK_OK) {
        v.encoding = SK_ETCDVAL_PROTOBUF;
        char *why = NULL;
        json_t *doc = NULL;
        if (sk_protobuf_to_json(value, len, &doc, &why) == SK_OK) {
            v.doc = json_dumps(doc, JSON_COMPACT);
            SK_CHECK_ALLOC(v.doc);
        }
        json_decref(doc);
        free(why);
    } else if (len && value[0] == '{' && !memchr(value, 0, len) && sk_utf8_valid(value, len)) {
        json_t *doc = json_loadb(value, len, 0, NULL);
        if (json_is_object(doc)) {
            v.encoding = SK_ETCDVAL_JSON;
            v.kind = dup_string(json_object_get(doc, "kind"));
            v.api_version = dup_string(json_object_get(doc, "apiVersion"));
            v.doc = strndup(value, len);
            SK_CHECK_ALLOC(v.doc);
        }
        json_decref(doc);
    }
    *out = v;
}

void sk_etcdval_clear(sk_etcdval *v)
{
    free(v->doc);
    free(v->kind);
    free(v->api_version);
    *v = (sk_etcdval){SK_ETCDVAL_BYTES, NULL, NULL, NULL};
}

const char *sk_etcdval_encoding_name(sk_etcdval_encoding e)
{
    switch (e) {
    case SK_ETCDVAL_PROTOBUF:
        return "protobuf";
    case SK_ETCDVAL_JSON:
        return "json";
    case SK_ETCDVAL_ENCRYPTED:
        return "encrypted";
    case SK_ETCDVAL_BYTES:
        break;
    }
    return "bytes";
}
