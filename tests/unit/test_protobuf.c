/*
 * test_protobuf.c - the Kubernetes protobuf body decoder (api/protobuf.c).
 *
 * Bodies are built here with a tiny independent encoder (varints, tags,
 * length-delimited fields) from the field numbers in upstream's
 * generated.proto files, so the tests check the decoder's tables against
 * the wire format rather than against themselves. The kubectl_* vectors are
 * real request bodies captured from kubectl 1.32 (`kubectl create namespace,
 * configmap --from-literal --from-file, secret generic, serviceaccount,
 * secret docker-registry` through a logging proxy) and pin what kubectl
 * actually sends: every non-pointer field, zero or not.
 *
 * Also covered: omitempty vs pointer semantics, Time and MicroTime
 * formatting and range, base64 of bytes, maps, merging of repeated
 * occurrences, skipping of unknown fields of every wire type, and rejection
 * (400, *out untouched, a message) of truncated and malformed input; every
 * prefix and many byte mutations of a valid body are decoded without a
 * crash (run under ASan/UBSan in build-asan).
 */
#include "kube/protobuf.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- real kubectl 1.32 request bodies ---------------------------------------- */

/* kubectl create namespace foo */
static const unsigned char kubectl_namespace[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, 0x4e, 0x61,
    0x6d, 0x65, 0x73, 0x70, 0x61, 0x63, 0x65, 0x12, 0x1b, 0x0a, 0x13, 0x0a, 0x03, 0x66,
    0x6f, 0x6f, 0x12, 0x00, 0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00,
    0x42, 0x00, 0x12, 0x00, 0x1a, 0x02, 0x0a, 0x00, 0x1a, 0x00, 0x22, 0x00,
};
/* kubectl create configmap c -n foo --from-literal=a=b --from-file=bin.dat
 * --from-file=text.txt, bin.dat holding "bin\xff\x00\x01" */
static const unsigned char kubectl_configmap[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, 0x43, 0x6f, 0x6e, 0x66,
    0x69, 0x67, 0x4d, 0x61, 0x70, 0x12, 0x45, 0x0a, 0x14, 0x0a, 0x01, 0x63, 0x12, 0x00, 0x1a, 0x03,
    0x66, 0x6f, 0x6f, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x06, 0x0a,
    0x01, 0x61, 0x12, 0x01, 0x62, 0x12, 0x12, 0x0a, 0x08, 0x74, 0x65, 0x78, 0x74, 0x2e, 0x74, 0x78,
    0x74, 0x12, 0x06, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x0a, 0x1a, 0x11, 0x0a, 0x07, 0x62, 0x69, 0x6e,
    0x2e, 0x64, 0x61, 0x74, 0x12, 0x06, 0x62, 0x69, 0x6e, 0xff, 0x00, 0x01, 0x1a, 0x00, 0x22, 0x00,
};
/* kubectl create secret generic s -n foo --from-literal=x=y */
static const unsigned char kubectl_secret[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0c, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x06, 0x53, 0x65,
    0x63, 0x72, 0x65, 0x74, 0x12, 0x20, 0x0a, 0x14, 0x0a, 0x01, 0x73, 0x12, 0x00, 0x1a,
    0x03, 0x66, 0x6f, 0x6f, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00,
    0x12, 0x06, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79, 0x1a, 0x00, 0x1a, 0x00, 0x22, 0x00,
};
/* kubectl create serviceaccount sa -n foo */
static const unsigned char kubectl_serviceaccount[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x14, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x0e, 0x53, 0x65,
    0x72, 0x76, 0x69, 0x63, 0x65, 0x41, 0x63, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x12, 0x17,
    0x0a, 0x15, 0x0a, 0x02, 0x73, 0x61, 0x12, 0x00, 0x1a, 0x03, 0x66, 0x6f, 0x6f, 0x22,
    0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x1a, 0x00, 0x22, 0x00,
};
/* kubectl create secret docker-registry reg -n foo --docker-server=r.example
 * --docker-username=u --docker-password=p */
static const unsigned char kubectl_docker_secret[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0c, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x06, 0x53, 0x65, 0x63, 0x72,
    0x65, 0x74, 0x12, 0x94, 0x01, 0x0a, 0x16, 0x0a, 0x03, 0x72, 0x65, 0x67, 0x12, 0x00, 0x1a, 0x03,
    0x66, 0x6f, 0x6f, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x5a, 0x0a,
    0x11, 0x2e, 0x64, 0x6f, 0x63, 0x6b, 0x65, 0x72, 0x63, 0x6f, 0x6e, 0x66, 0x69, 0x67, 0x6a, 0x73,
    0x6f, 0x6e, 0x12, 0x45, 0x7b, 0x22, 0x61, 0x75, 0x74, 0x68, 0x73, 0x22, 0x3a, 0x7b, 0x22, 0x72,
    0x2e, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x22, 0x3a, 0x7b, 0x22, 0x75, 0x73, 0x65, 0x72,
    0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0x75, 0x22, 0x2c, 0x22, 0x70, 0x61, 0x73, 0x73, 0x77,
    0x6f, 0x72, 0x64, 0x22, 0x3a, 0x22, 0x70, 0x22, 0x2c, 0x22, 0x61, 0x75, 0x74, 0x68, 0x22, 0x3a,
    0x22, 0x64, 0x54, 0x70, 0x77, 0x22, 0x7d, 0x7d, 0x7d, 0x1a, 0x1e, 0x6b, 0x75, 0x62, 0x65, 0x72,
    0x6e, 0x65, 0x74, 0x65, 0x73, 0x2e, 0x69, 0x6f, 0x2f, 0x64, 0x6f, 0x63, 0x6b, 0x65, 0x72, 0x63,
    0x6f, 0x6e, 0x66, 0x69, 0x67, 0x6a, 0x73, 0x6f, 0x6e, 0x1a, 0x00, 0x22, 0x00,
};

/* ---- encoder ------------------------------------------------------------------- */

typedef struct pbw {
    unsigned char b[8192];
    size_t n;
} pbw;

static void w_raw(pbw *w, const void *p, size_t n)
{
    assert_true(w->n + n <= sizeof w->b);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void w_varint(pbw *w, uint64_t v)
{
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        if (v)
            c |= 0x80;
        w_raw(w, &c, 1);
    } while (v);
}

static void w_tag(pbw *w, uint32_t num, unsigned wire_type)
{
    w_varint(w, (uint64_t)num << 3 | wire_type);
}

/* A varint field; negative values take ten bytes, as Go writes them. */
static void w_int(pbw *w, uint32_t num, int64_t v)
{
    w_tag(w, num, 0);
    w_varint(w, (uint64_t)v);
}

static void w_bytes(pbw *w, uint32_t num, const void *p, size_t n)
{
    w_tag(w, num, 2);
    w_varint(w, n);
    w_raw(w, p, n);
}

static void w_str(pbw *w, uint32_t num, const char *s)
{
    w_bytes(w, num, s, strlen(s));
}

static void w_msg(pbw *w, uint32_t num, const pbw *m)
{
    w_bytes(w, num, m->b, m->n);
}

/* A map entry {1 key, 2 value}. */
static void w_entry(pbw *w, uint32_t num, const char *key, const void *val, size_t val_len)
{
    pbw e = {.n = 0};
    w_str(&e, 1, key);
    w_bytes(&e, 2, val, val_len);
    w_msg(w, num, &e);
}

static void w_sentry(pbw *w, uint32_t num, const char *key, const char *val)
{
    w_entry(w, num, key, val, strlen(val));
}

/* A Time/MicroTime message {1 seconds, 2 nanos}. */
static void w_time(pbw *w, uint32_t num, int64_t seconds, int32_t nanos)
{
    pbw t = {.n = 0};
    w_int(&t, 1, seconds);
    if (nanos)
        w_int(&t, 2, nanos);
    w_msg(w, num, &t);
}

/* One unknown field of each wire type, numbered from base. */
static void w_unknowns(pbw *w, uint32_t base)
{
    static const unsigned char fixed[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    w_int(w, base, 300);
    w_tag(w, base + 1, 1);
    w_raw(w, fixed, 8);
    w_str(w, base + 2, "ignored \xff bytes");
    w_tag(w, base + 3, 5);
    w_raw(w, fixed, 4);
}

/* "k8s\0" + runtime.Unknown as kubectl writes it. */
static void envelope(pbw *out, const char *api_version, const char *kind, const pbw *raw)
{
    pbw tm = {.n = 0};
    out->n = 0;
    w_raw(out, "k8s", 4);
    w_str(&tm, 1, api_version);
    w_str(&tm, 2, kind);
    w_msg(out, 1, &tm);
    w_msg(out, 2, raw);
    w_str(out, 3, "");
    w_str(out, 4, "");
}

/* ---- checks -------------------------------------------------------------------- */

static json_t *load(const char *s)
{
    json_error_t err;
    json_t *v = json_loads(s, 0, &err);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, err.text);
    return v;
}

static void expect_json(const void *body, size_t n, const char *want)
{
    json_t *out = NULL, *w = load(want);
    char *why = NULL;
    sk_err e = sk_protobuf_to_json(body, n, &out, &why);
    if (e != SK_OK)
        fail_msg("decode failed (%s): %s", sk_err_name(e), why ? why : "(no message)");
    if (!json_equal(out, w)) {
        char *got = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("got  %s\nwant %s", got, want);
    }
    assert_null(why);
    json_decref(out);
    json_decref(w);
}

static void expect_kind(const char *api_version, const char *kind, const pbw *raw, const char *want)
{
    pbw env;
    envelope(&env, api_version, kind, raw);
    expect_json(env.b, env.n, want);
}

/* Decodes; returns the error and the message (caller frees), checking that a
 * failure leaves *out alone and always comes with a message. */
static sk_err try_decode(const void *body, size_t n, char **why_out)
{
    json_t *sentinel = json_object(), *out = sentinel;
    char *why = NULL;
    sk_err e = sk_protobuf_to_json(body, n, &out, &why);
    if (e == SK_OK) {
        assert_ptr_not_equal(out, sentinel);
        assert_true(json_is_object(out));
        assert_null(why);
        json_decref(out);
    } else {
        assert_int_equal(e, SK_ERR_BAD_REQUEST);
        assert_ptr_equal(out, sentinel);
        assert_non_null(why);
    }
    json_decref(sentinel);
    *why_out = why;
    return e;
}

static void expect_fail(const void *body, size_t n, const char *want_in_why)
{
    char *why = NULL;
    if (try_decode(body, n, &why) == SK_OK)
        fail_msg("decode succeeded, want an error containing \"%s\"", want_in_why);
    if (!strstr(why, want_in_why))
        fail_msg("error \"%s\" does not contain \"%s\"", why, want_in_why);
    free(why);
}

static void expect_kind_fail(const char *api_version, const char *kind, const pbw *raw,
                             const char *want_in_why)
{
    pbw env;
    envelope(&env, api_version, kind, raw);
    expect_fail(env.b, env.n, want_in_why);
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_media_type(void **state)
{
    (void)state;
    assert_true(sk_protobuf_is_media("application/vnd.kubernetes.protobuf"));
    assert_true(sk_protobuf_is_media("Application/VND.Kubernetes.Protobuf"));
    assert_true(sk_protobuf_is_media("application/vnd.kubernetes.protobuf; charset=utf-8"));
    assert_true(sk_protobuf_is_media(" application/vnd.kubernetes.protobuf ;x=y"));
    assert_false(sk_protobuf_is_media(NULL));
    assert_false(sk_protobuf_is_media(""));
    assert_false(sk_protobuf_is_media("application/json"));
    assert_false(sk_protobuf_is_media("application/vnd.kubernetes.protobufx"));
    assert_false(sk_protobuf_is_media("application/vnd.kubernetes.proto"));
}

static void test_kubectl_vectors(void **state)
{
    (void)state;
    expect_json(kubectl_namespace, sizeof kubectl_namespace,
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"foo\"}}");
    expect_json(kubectl_configmap, sizeof kubectl_configmap,
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                "\"metadata\":{\"name\":\"c\",\"namespace\":\"foo\"},"
                "\"data\":{\"a\":\"b\",\"text.txt\":\"hello\\n\"},"
                "\"binaryData\":{\"bin.dat\":\"Ymlu/wAB\"}}");
    expect_json(kubectl_secret, sizeof kubectl_secret,
                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
                "\"metadata\":{\"name\":\"s\",\"namespace\":\"foo\"},\"data\":{\"x\":\"eQ==\"}}");
    expect_json(kubectl_serviceaccount, sizeof kubectl_serviceaccount,
                "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\","
                "\"metadata\":{\"name\":\"sa\",\"namespace\":\"foo\"}}");
    expect_json(kubectl_docker_secret, sizeof kubectl_docker_secret,
                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
                "\"metadata\":{\"name\":\"reg\",\"namespace\":\"foo\"},"
                "\"type\":\"kubernetes.io/dockerconfigjson\",\"data\":{\".dockerconfigjson\":"
                "\"eyJhdXRocyI6eyJyLmV4YW1wbGUiOnsidXNlcm5hbWUiOiJ1IiwicGFzc3dvcmQiOiJwIiwiYXV0aC"
                "I6ImRUcHcifX19\"}}");
}

static void test_object_meta(void **state)
{
    (void)state;
    pbw meta = {.n = 0}, owner = {.n = 0}, owner2 = {.n = 0}, mf = {.n = 0}, fields = {.n = 0},
        cm = {.n = 0};
    w_str(&meta, 1, "n");
    w_str(&meta, 2, "gen-");
    w_str(&meta, 3, "ns");
    w_str(&meta, 4, "/api/v1/x");
    w_str(&meta, 5, "uid-1");
    w_str(&meta, 6, "42");
    w_int(&meta, 7, 3);
    w_time(&meta, 8, 1136214245, 999999999); /* Time keeps whole seconds */
    w_time(&meta, 9, 1714557600, 0);
    w_int(&meta, 10, 30);
    w_sentry(&meta, 11, "app", "web");
    w_sentry(&meta, 11, "tier", "");
    w_sentry(&meta, 12, "note", "a \"quoted\" value");
    w_str(&owner, 5, "apps/v1");
    w_str(&owner, 1, "Deployment");
    w_str(&owner, 3, "d");
    w_str(&owner, 4, "uid-d");
    w_int(&owner, 6, 1);
    w_int(&owner, 7, 0);
    w_msg(&meta, 13, &owner);
    w_str(&owner2, 5, ""); /* Go writes the zero strings: without omitempty they stay */
    w_str(&owner2, 1, "");
    w_str(&owner2, 3, "");
    w_str(&owner2, 4, "");
    w_msg(&meta, 13, &owner2);
    w_str(&meta, 14, "f1");
    w_str(&meta, 14, "f2");
    w_str(&meta, 15, "clusterName was removed upstream: skipped");
    w_str(&mf, 1, "kubectl-create");
    w_str(&mf, 2, "Update");
    w_str(&mf, 3, "v1");
    w_time(&mf, 4, 0, 0);
    w_str(&mf, 6, "FieldsV1");
    w_str(&fields, 1, "{\"f:data\":{\"f:a\":{}}}");
    w_msg(&mf, 7, &fields);
    w_str(&mf, 8, "status");
    w_msg(&meta, 17, &mf);
    w_msg(&cm, 1, &meta);
    expect_kind(
        "v1", "ConfigMap", &cm,
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
        "\"name\":\"n\",\"generateName\":\"gen-\",\"namespace\":\"ns\","
        "\"selfLink\":\"/api/v1/x\",\"uid\":\"uid-1\",\"resourceVersion\":\"42\","
        "\"generation\":3,\"creationTimestamp\":\"2006-01-02T15:04:05Z\","
        "\"deletionTimestamp\":\"2024-05-01T10:00:00Z\",\"deletionGracePeriodSeconds\":30,"
        "\"labels\":{\"app\":\"web\",\"tier\":\"\"},"
        "\"annotations\":{\"note\":\"a \\\"quoted\\\" value\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
        "\"name\":\"d\",\"uid\":\"uid-d\",\"controller\":true,\"blockOwnerDeletion\":false},"
        "{\"apiVersion\":\"\",\"kind\":\"\",\"name\":\"\",\"uid\":\"\"}],"
        "\"finalizers\":[\"f1\",\"f2\"],"
        "\"managedFields\":[{\"manager\":\"kubectl-create\",\"operation\":\"Update\","
        "\"apiVersion\":\"v1\",\"time\":\"1970-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\","
        "\"fieldsV1\":{\"f:data\":{\"f:a\":{}}},\"subresource\":\"status\"}]}}");
}

/* Non-pointer fields arrive even when zero; JSON omits them. Pointer fields
 * arrive only when set and are kept even when zero. */
static void test_zero_values(void **state)
{
    (void)state;
    pbw meta = {.n = 0}, empty = {.n = 0}, go_zero = {.n = 0}, mf = {.n = 0}, cm = {.n = 0};
    w_str(&meta, 1, "");
    w_int(&meta, 7, 0);
    w_msg(&meta, 8, &empty);             /* zero Time: empty message */
    w_time(&meta, 9, -62135596800LL, 0); /* Go's zero time.Time */
    w_int(&meta, 10, 0);                 /* *int64: kept */
    w_msg(&mf, 7, &empty);               /* FieldsV1 without Raw */
    w_msg(&meta, 17, &mf);
    w_int(&go_zero, 1, -62135596800LL);
    w_msg(&cm, 1, &meta);
    w_int(&cm, 4, 0); /* *bool immutable: kept */
    expect_kind("v1", "ConfigMap", &cm,
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                "\"deletionGracePeriodSeconds\":0,\"managedFields\":[{}]},\"immutable\":false}");

    /* A message that ends up empty is dropped, unless it is a pointer. */
    pbw ns = {.n = 0}, status = {.n = 0}, spec = {.n = 0};
    w_str(&status, 1, "");
    w_msg(&ns, 1, &empty);
    w_msg(&ns, 2, &spec);
    w_msg(&ns, 3, &status);
    expect_kind("v1", "Namespace", &ns, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\"}");

    pbw opts = {.n = 0};
    w_msg(&opts, 2, &empty);
    w_str(&opts, 4, "");
    expect_kind("v1", "DeleteOptions", &opts,
                "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"preconditions\":{},"
                "\"propagationPolicy\":\"\"}");

    /* No raw at all: just the type. */
    pbw env = {.n = 0}, tm = {.n = 0};
    w_raw(&env, "k8s", 4);
    w_str(&tm, 1, "v1");
    w_str(&tm, 2, "Secret");
    w_msg(&env, 1, &tm);
    expect_json(env.b, env.n, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\"}");
}

static void test_namespace(void **state)
{
    (void)state;
    pbw meta = {.n = 0}, spec = {.n = 0}, status = {.n = 0}, cond = {.n = 0}, cond2 = {.n = 0},
        ns = {.n = 0};
    w_str(&meta, 1, "team-a");
    w_sentry(&meta, 11, "kubernetes.io/metadata.name", "team-a");
    w_str(&spec, 1, "kubernetes");
    w_str(&spec, 1, "example.com/x");
    w_str(&status, 1, "Terminating");
    w_str(&cond, 1, "NamespaceDeletionContentFailure");
    w_str(&cond, 2, "False");
    w_time(&cond, 4, 1709251199, 0);
    w_str(&cond, 5, "ContentDeleted");
    w_str(&cond, 6, "All content successfully deleted");
    w_msg(&status, 2, &cond);
    w_str(&cond2, 1, "");
    w_str(&cond2, 2, "");
    w_str(&cond2, 5, "");
    w_msg(&status, 2, &cond2);
    w_msg(&ns, 1, &meta);
    w_msg(&ns, 2, &spec);
    w_msg(&ns, 3, &status);
    expect_kind("v1", "Namespace", &ns,
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\","
                "\"labels\":{\"kubernetes.io/metadata.name\":\"team-a\"}},"
                "\"spec\":{\"finalizers\":[\"kubernetes\",\"example.com/x\"]},"
                "\"status\":{\"phase\":\"Terminating\",\"conditions\":[{"
                "\"type\":\"NamespaceDeletionContentFailure\",\"status\":\"False\","
                "\"lastTransitionTime\":\"2024-02-29T23:59:59Z\",\"reason\":\"ContentDeleted\","
                "\"message\":\"All content successfully deleted\"},"
                "{\"type\":\"\",\"status\":\"\"}]}}");
}

static void test_configmap(void **state)
{
    (void)state;
    static const unsigned char blob[] = {0x00, 0xff, 0xfe, 'a', 0x80};
    pbw meta = {.n = 0}, cm = {.n = 0};
    w_str(&meta, 1, "cfg");
    w_msg(&cm, 1, &meta);
    w_sentry(&cm, 2, "k", "v");
    w_sentry(&cm, 2, "empty", "");
    w_sentry(&cm, 2, "utf8", "h\xc3\xa9llo \xe2\x9c\x93");
    w_entry(&cm, 3, "blob", blob, sizeof blob);
    w_entry(&cm, 3, "none", "", 0);
    w_int(&cm, 4, 1);
    expect_kind("v1", "ConfigMap", &cm,
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cfg\"},"
                "\"data\":{\"k\":\"v\",\"empty\":\"\",\"utf8\":\"h\\u00e9llo \\u2713\"},"
                "\"binaryData\":{\"blob\":\"AP/+YYA=\",\"none\":\"\"},\"immutable\":true}");
}

static void test_secret(void **state)
{
    (void)state;
    pbw meta = {.n = 0}, s = {.n = 0};
    w_str(&meta, 1, "tls");
    w_str(&meta, 3, "default");
    w_msg(&s, 1, &meta);
    w_sentry(&s, 2, "tls.crt", "CERT");
    w_sentry(&s, 2, "tls.key", "KEY!!");
    w_str(&s, 3, "kubernetes.io/tls");
    w_sentry(&s, 4, "extra", "plain text");
    w_int(&s, 5, 0);
    expect_kind("v1", "Secret", &s,
                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
                "\"metadata\":{\"name\":\"tls\",\"namespace\":\"default\"},"
                "\"data\":{\"tls.crt\":\"Q0VSVA==\",\"tls.key\":\"S0VZISE=\"},"
                "\"type\":\"kubernetes.io/tls\",\"stringData\":{\"extra\":\"plain text\"},"
                "\"immutable\":false}");
}

static void test_serviceaccount(void **state)
{
    (void)state;
    pbw meta = {.n = 0}, ref = {.n = 0}, ref2 = {.n = 0}, local = {.n = 0}, sa = {.n = 0};
    w_str(&meta, 1, "robot");
    w_str(&ref, 1, "Secret");
    w_str(&ref, 2, "ns");
    w_str(&ref, 3, "robot-token");
    w_str(&ref, 4, "uid-s");
    w_str(&ref, 5, "v1");
    w_str(&ref, 6, "7");
    w_str(&ref, 7, "data.token");
    w_str(&ref2, 3, "other");
    w_str(&ref2, 7, "");
    w_str(&local, 1, "regcred");
    w_msg(&sa, 1, &meta);
    w_msg(&sa, 2, &ref);
    w_msg(&sa, 2, &ref2);
    w_msg(&sa, 3, &local);
    w_int(&sa, 4, 0);
    expect_kind(
        "v1", "ServiceAccount", &sa,
        "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"robot\"},"
        "\"secrets\":[{\"kind\":\"Secret\",\"namespace\":\"ns\",\"name\":\"robot-token\","
        "\"uid\":\"uid-s\",\"apiVersion\":\"v1\",\"resourceVersion\":\"7\","
        "\"fieldPath\":\"data.token\"},{\"name\":\"other\"}],"
        "\"imagePullSecrets\":[{\"name\":\"regcred\"}],"
        "\"automountServiceAccountToken\":false}");
}

static void test_event(void **state)
{
    (void)state;
    pbw meta = {.n = 0}, inv = {.n = 0}, src = {.n = 0}, series = {.n = 0}, rel = {.n = 0},
        ev = {.n = 0};
    w_str(&meta, 1, "x.17c");
    w_str(&meta, 3, "default");
    w_str(&inv, 1, "Pod");
    w_str(&inv, 2, "default");
    w_str(&inv, 3, "x");
    w_str(&inv, 5, "v1");
    w_str(&src, 1, "kubelet");
    w_str(&src, 2, "node-1");
    w_int(&series, 1, 4);
    w_time(&series, 2, 1714557600, 1000);
    w_str(&rel, 1, "Node");
    w_str(&rel, 3, "node-1");
    w_msg(&ev, 1, &meta);
    w_msg(&ev, 2, &inv);
    w_str(&ev, 3, "Pulled");
    w_str(&ev, 4, "Successfully pulled image");
    w_msg(&ev, 5, &src);
    w_time(&ev, 6, 1714557600, 0);
    w_time(&ev, 7, 1714557601, 0);
    w_int(&ev, 8, 5);
    w_str(&ev, 9, "Normal");
    w_time(&ev, 10, 1714557600, 123456789);
    w_msg(&ev, 11, &series);
    w_str(&ev, 12, "Pull");
    w_msg(&ev, 13, &rel);
    w_str(&ev, 14, "kubelet");
    w_str(&ev, 15, "node-1");
    expect_kind("v1", "Event", &ev,
                "{\"apiVersion\":\"v1\",\"kind\":\"Event\","
                "\"metadata\":{\"name\":\"x.17c\",\"namespace\":\"default\"},"
                "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"default\",\"name\":\"x\","
                "\"apiVersion\":\"v1\"},\"reason\":\"Pulled\","
                "\"message\":\"Successfully pulled image\","
                "\"source\":{\"component\":\"kubelet\",\"host\":\"node-1\"},"
                "\"firstTimestamp\":\"2024-05-01T10:00:00Z\","
                "\"lastTimestamp\":\"2024-05-01T10:00:01Z\",\"count\":5,\"type\":\"Normal\","
                "\"eventTime\":\"2024-05-01T10:00:00.123456Z\","
                "\"series\":{\"count\":4,\"lastObservedTime\":\"2024-05-01T10:00:00.000001Z\"},"
                "\"action\":\"Pull\",\"related\":{\"kind\":\"Node\",\"name\":\"node-1\"},"
                "\"reportingComponent\":\"kubelet\",\"reportingInstance\":\"node-1\"}");

    /* What a Go client sends for a bare legacy event: the zero values go,
     * except the strings and the struct JSON always carries. */
    pbw bare = {.n = 0}, empty = {.n = 0};
    w_msg(&bare, 1, &meta);
    w_msg(&bare, 2, &empty);
    w_str(&bare, 3, "");
    w_msg(&bare, 5, &empty);
    w_msg(&bare, 6, &empty);
    w_msg(&bare, 7, &empty);
    w_int(&bare, 8, 0);
    w_msg(&bare, 10, &empty);
    w_str(&bare, 14, "");
    w_str(&bare, 15, "");
    expect_kind("v1", "Event", &bare,
                "{\"apiVersion\":\"v1\",\"kind\":\"Event\","
                "\"metadata\":{\"name\":\"x.17c\",\"namespace\":\"default\"},"
                "\"involvedObject\":{},\"reportingComponent\":\"\",\"reportingInstance\":\"\"}");
}

static void test_lease(void **state)
{
    (void)state;
    pbw meta = {.n = 0}, spec = {.n = 0}, lease = {.n = 0};
    w_str(&meta, 1, "kube-scheduler");
    w_str(&meta, 3, "kube-system");
    w_str(&spec, 1, "node-1_abc");
    w_int(&spec, 2, 15);
    w_time(&spec, 3, 1714557600, 5000);
    w_time(&spec, 4, 1714557610, 999999999);
    w_int(&spec, 5, 0);
    w_str(&spec, 6, "OldestEmulationVersion");
    w_str(&spec, 7, "node-2_def");
    w_msg(&lease, 1, &meta);
    w_msg(&lease, 2, &spec);
    expect_kind("coordination.k8s.io/v1", "Lease", &lease,
                "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
                "\"metadata\":{\"name\":\"kube-scheduler\",\"namespace\":\"kube-system\"},"
                "\"spec\":{\"holderIdentity\":\"node-1_abc\",\"leaseDurationSeconds\":15,"
                "\"acquireTime\":\"2024-05-01T10:00:00.000005Z\","
                "\"renewTime\":\"2024-05-01T10:00:10.999999Z\",\"leaseTransitions\":0,"
                "\"strategy\":\"OldestEmulationVersion\",\"preferredHolder\":\"node-2_def\"}}");

    /* Every LeaseSpec field is a pointer: present zeros stay; int32 is
     * sign-extended to ten bytes on the wire. */
    pbw spec2 = {.n = 0}, lease2 = {.n = 0};
    w_str(&spec2, 1, "");
    w_int(&spec2, 2, 0);
    w_int(&spec2, 5, -1);
    w_msg(&lease2, 2, &spec2);
    expect_kind("coordination.k8s.io/v1", "Lease", &lease2,
                "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
                "\"spec\":{\"holderIdentity\":\"\",\"leaseDurationSeconds\":0,"
                "\"leaseTransitions\":-1}}");
    expect_kind_fail("v1", "Lease", &lease2, "kind Lease in v1 are not supported");
}

static void test_delete_options(void **state)
{
    (void)state;
    pbw pre = {.n = 0}, opts = {.n = 0};
    w_str(&pre, 1, "uid-1");
    w_str(&pre, 2, "12");
    w_int(&opts, 1, 0);
    w_msg(&opts, 2, &pre);
    w_int(&opts, 3, 0);
    w_str(&opts, 4, "Foreground");
    w_str(&opts, 5, "All");
    const char *want = "{\"apiVersion\":\"%s\",\"kind\":\"DeleteOptions\","
                       "\"gracePeriodSeconds\":0,"
                       "\"preconditions\":{\"uid\":\"uid-1\",\"resourceVersion\":\"12\"},"
                       "\"orphanDependents\":false,\"propagationPolicy\":\"Foreground\","
                       "\"dryRun\":[\"All\"]}";
    char buf[512];
    snprintf(buf, sizeof buf, want, "v1");
    expect_kind("v1", "DeleteOptions", &opts, buf);
    snprintf(buf, sizeof buf, want, "meta.k8s.io/v1");
    expect_kind("meta.k8s.io/v1", "DeleteOptions", &opts, buf);

    pbw neg = {.n = 0};
    w_int(&neg, 1, -5);
    expect_kind("v1", "DeleteOptions", &neg,
                "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"gracePeriodSeconds\":-5}");
}

static void expect_time(int micro, int64_t seconds, int32_t nanos, const char *want)
{
    pbw spec = {.n = 0}, lease = {.n = 0}, ev = {.n = 0};
    char buf[256];
    if (micro) {
        w_time(&spec, 3, seconds, nanos);
        w_msg(&lease, 2, &spec);
        snprintf(buf, sizeof buf,
                 "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
                 "\"spec\":{\"acquireTime\":\"%s\"}}",
                 want);
        expect_kind("coordination.k8s.io/v1", "Lease", &lease, buf);
    } else {
        w_time(&ev, 6, seconds, nanos);
        snprintf(buf, sizeof buf,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"firstTimestamp\":\"%s\"}", want);
        expect_kind("v1", "Event", &ev, buf);
    }
}

static void expect_time_fail(int micro, int64_t seconds, int32_t nanos, const char *want)
{
    pbw spec = {.n = 0}, lease = {.n = 0}, ev = {.n = 0};
    if (micro) {
        w_time(&spec, 3, seconds, nanos);
        w_msg(&lease, 2, &spec);
        expect_kind_fail("coordination.k8s.io/v1", "Lease", &lease, want);
    } else {
        w_time(&ev, 6, seconds, nanos);
        expect_kind_fail("v1", "Event", &ev, want);
    }
}

static void test_times(void **state)
{
    (void)state;
    expect_time(0, 0, 0, "1970-01-01T00:00:00Z");
    expect_time(0, 1136214245, 0, "2006-01-02T15:04:05Z");
    expect_time(0, 1136214245, 999999999, "2006-01-02T15:04:05Z");
    expect_time(0, -1, 0, "1969-12-31T23:59:59Z");
    expect_time(0, -2203845904LL, 0, "1900-03-01T12:34:56Z");
    expect_time(0, 951782400, 0, "2000-02-29T00:00:00Z");
    expect_time(0, 1709251199, 0, "2024-02-29T23:59:59Z");
    expect_time(0, -62167219200LL, 0, "0000-01-01T00:00:00Z");
    expect_time(0, -62135596799LL, 0, "0001-01-01T00:00:01Z");
    expect_time(0, 253402300799LL, 0, "9999-12-31T23:59:59Z");
    expect_time_fail(0, -62167219201LL, 0, "Event.firstTimestamp: seconds -62167219201 outside");
    expect_time_fail(0, 253402300800LL, 0, "outside the years 0000-9999");
    expect_time_fail(0, INT64_MIN, 0, "outside the years");

    expect_time(1, 1714557600, 123456789, "2024-05-01T10:00:00.123456Z");
    expect_time(1, 1714557600, 0, "2024-05-01T10:00:00.000000Z");
    expect_time(1, 1714557600, 999, "2024-05-01T10:00:00.000000Z");
    expect_time(1, 0, 1, "1970-01-01T00:00:00.000000Z");
    expect_time(1, -62135596800LL, 500, "0001-01-01T00:00:00.000000Z"); /* not Go's zero */
    expect_time(1, 253402300799LL, 999999999, "9999-12-31T23:59:59.999999Z");
    expect_time_fail(1, 1714557600, 1000000000,
                     "LeaseSpec.acquireTime: nanos 1000000000 out of range");
    expect_time_fail(1, 1714557600, -1, "nanos -1 out of range");

    /* Unknown fields inside a Time are skipped; a wrong wire type is not. */
    pbw t = {.n = 0}, ev = {.n = 0};
    w_unknowns(&t, 3);
    w_int(&t, 1, 1136214245);
    w_msg(&ev, 6, &t);
    expect_kind("v1", "Event", &ev,
                "{\"apiVersion\":\"v1\",\"kind\":\"Event\","
                "\"firstTimestamp\":\"2006-01-02T15:04:05Z\"}");
    pbw bad = {.n = 0}, ev2 = {.n = 0};
    w_str(&bad, 1, "1136214245");
    w_msg(&ev2, 6, &bad);
    expect_kind_fail("v1", "Event", &ev2, "Event.firstTimestamp: field 1: wire type 2, want 0");
}

static void test_base64(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t len;
        const char *out;
    } cases[] = {
        {"", 0, ""},
        {"f", 1, "Zg=="},
        {"fo", 2, "Zm8="},
        {"foo", 3, "Zm9v"},
        {"foob", 4, "Zm9vYg=="},
        {"fooba", 5, "Zm9vYmE="},
        {"foobar", 6, "Zm9vYmFy"},
        {"\xfb\xff\xbf", 3, "+/+/"},
        {"\0\0\0\0", 4, "AAAAAA=="},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pbw s = {.n = 0};
        char want[256];
        w_entry(&s, 2, "k", cases[i].in, cases[i].len);
        snprintf(want, sizeof want,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"data\":{\"k\":\"%s\"}}",
                 cases[i].out);
        expect_kind("v1", "Secret", &s, want);
    }
    /* Every byte value. */
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    pbw s = {.n = 0}, env;
    w_entry(&s, 3, "all", all, sizeof all);
    envelope(&env, "v1", "ConfigMap", &s);
    json_t *out = NULL;
    char *why = NULL;
    assert_int_equal(sk_protobuf_to_json((const char *)env.b, env.n, &out, &why), SK_OK);
    const char *b64 = json_string_value(json_object_get(json_object_get(out, "binaryData"), "all"));
    assert_non_null(b64);
    assert_int_equal(strlen(b64), 344);
    assert_memory_equal(b64, "AAECAwQFBgcICQoLDA0O", 20);
    assert_string_equal(b64 + 320, "8PHy8/T19vf4+fr7/P3+/w==");
    json_decref(out);
}

static void test_maps(void **state)
{
    (void)state;
    pbw cm = {.n = 0}, e1 = {.n = 0}, e2 = {.n = 0}, e3 = {.n = 0};
    w_sentry(&cm, 2, "k", "first");
    w_sentry(&cm, 2, "k", "last"); /* a later key replaces */
    w_str(&e1, 2, "no key");       /* missing key: "" */
    w_msg(&cm, 2, &e1);
    w_str(&e2, 1, "no-value"); /* missing value: "" */
    w_msg(&cm, 2, &e2);
    w_unknowns(&e3, 3); /* unknown fields in an entry, and key/value in reverse order */
    w_str(&e3, 2, "v");
    w_str(&e3, 1, "rev");
    w_msg(&cm, 2, &e3);
    expect_kind("v1", "ConfigMap", &cm,
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"k\":\"last\","
                "\"\":\"no key\",\"no-value\":\"\",\"rev\":\"v\"}}");

    pbw bad = {.n = 0}, be = {.n = 0};
    w_bytes(&be, 1, "a\0b", 3);
    w_str(&be, 2, "v");
    w_msg(&bad, 2, &be);
    expect_kind_fail("v1", "ConfigMap", &bad, "ConfigMap.data: map key contains a NUL byte");
    pbw bad2 = {.n = 0};
    w_sentry(&bad2, 2, "k\xff", "v");
    expect_kind_fail("v1", "ConfigMap", &bad2, "ConfigMap.data: map key is not valid UTF-8");
    pbw bad3 = {.n = 0};
    w_sentry(&bad3, 2, "k", "\xc3\x28");
    expect_kind_fail("v1", "ConfigMap", &bad3, "ConfigMap.data.value: string is not valid UTF-8");
    pbw bad4 = {.n = 0}, be4 = {.n = 0};
    w_int(&be4, 1, 7);
    w_msg(&bad4, 2, &be4);
    expect_kind_fail("v1", "ConfigMap", &bad4, "ConfigMap.data: map entry field 1: wire type 0");
    /* bytes maps take any bytes */
    pbw ok = {.n = 0};
    w_entry(&ok, 2, "k", "\xc3\x28\0", 3);
    expect_kind("v1", "Secret", &ok,
                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"data\":{\"k\":\"wygA\"}}");
}

/* Protobuf semantics for repeated occurrences: last scalar wins, messages
 * merge, repeated fields accumulate. */
static void test_merging(void **state)
{
    (void)state;
    pbw m1 = {.n = 0}, m2 = {.n = 0}, cm = {.n = 0};
    w_str(&m1, 1, "first");
    w_str(&m1, 2, "gen-");
    w_sentry(&m1, 11, "a", "1");
    w_str(&m1, 14, "f1");
    w_str(&m2, 2, ""); /* a later zero clears */
    w_str(&m2, 3, "ns");
    w_sentry(&m2, 11, "b", "2");
    w_str(&m2, 14, "f2");
    w_int(&m2, 7, 9);
    w_msg(&cm, 1, &m1);
    w_msg(&cm, 1, &m2);
    w_int(&cm, 4, 1);
    w_int(&cm, 4, 0);
    expect_kind("v1", "ConfigMap", &cm,
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"first\","
                "\"namespace\":\"ns\",\"generation\":9,\"labels\":{\"a\":\"1\",\"b\":\"2\"},"
                "\"finalizers\":[\"f1\",\"f2\"]},\"immutable\":false}");
}

static void test_unknown_fields_skipped(void **state)
{
    (void)state;
    pbw meta = {.n = 0}, cm = {.n = 0}, tm = {.n = 0}, env = {.n = 0};
    w_unknowns(&meta, 100);
    w_str(&meta, 1, "x");
    w_unknowns(&meta, 536870908); /* up to the largest field number */
    w_unknowns(&cm, 5);
    w_msg(&cm, 1, &meta);
    w_sentry(&cm, 2, "k", "v");
    w_unknowns(&cm, 20);
    w_raw(&env, "k8s", 4);
    w_unknowns(&tm, 3);
    w_str(&tm, 1, "v1");
    w_str(&tm, 2, "ConfigMap");
    w_unknowns(&env, 5);
    w_msg(&env, 1, &tm);
    w_msg(&env, 2, &cm);
    w_str(&env, 4, "application/vnd.kubernetes.protobuf");
    w_unknowns(&env, 1000);
    expect_json(env.b, env.n,
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"},"
                "\"data\":{\"k\":\"v\"}}");
}

static void test_envelope_errors(void **state)
{
    (void)state;
    pbw raw = {.n = 0}, env = {.n = 0}, tm = {.n = 0};
    expect_fail("", 0, "magic");
    expect_fail("k8s", 3, "magic");
    expect_fail("k9s\0", 4, "magic");
    expect_fail("{\"kind\":\"ConfigMap\"}", 20, "magic");
    expect_fail("k8s\0", 4, "protobuf body has no apiVersion");

    w_raw(&env, "k8s", 4);
    w_str(&tm, 1, "v1");
    w_msg(&env, 1, &tm);
    expect_fail(env.b, env.n, "protobuf body has no kind");

    expect_kind_fail("v1", "Pod", &raw, "protobuf bodies of kind Pod in v1 are not supported");
    expect_kind_fail("apps/v1", "ConfigMap", &raw, "kind ConfigMap in apps/v1");
    expect_kind_fail("coordination.k8s.io/v1beta1", "Lease", &raw, "not supported");

    envelope(&env, "v1", "ConfigMap", &raw);
    w_str(&env, 3, "gzip");
    expect_fail(env.b, env.n, "Unknown: unsupported contentEncoding \"gzip\"");
    envelope(&env, "v1", "ConfigMap", &raw);
    w_str(&env, 4, "application/json");
    expect_fail(env.b, env.n, "Unknown: unsupported contentType \"application/json\"");
    envelope(&env, "v1", "ConfigMap", &raw);
    w_int(&env, 2, 1);
    expect_fail(env.b, env.n, "Unknown: field 2: wire type 0, want 2");
    envelope(&env, "v1", "ConfigMap", &raw);
    w_int(&env, 1, 1);
    expect_fail(env.b, env.n, "Unknown: field 1: wire type 0, want 2");
}

static void test_malformed(void **state)
{
    (void)state;
    pbw p = {.n = 0};
    /* A truncated varint: a tag whose continuation bit runs off the end. */
    w_raw(&p, "\x80", 1);
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap: truncated varint");
    /* A truncated varint value. */
    p.n = 0;
    w_raw(&p, "\x20\xff\xff", 3);
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap: truncated varint");
    /* Over-long varint (11 bytes). */
    p.n = 0;
    w_raw(&p, "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap: varint longer than 10 bytes");
    /* A length beyond the message. */
    p.n = 0;
    w_raw(&p, "\x0a\x05\x0a\x01", 4);
    expect_kind_fail("v1", "ConfigMap", &p,
                     "ConfigMap: field 1: length 5 exceeds the 2 bytes left");
    /* A huge length. */
    p.n = 0;
    w_raw(&p, "\x12\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10);
    expect_kind_fail("v1", "ConfigMap", &p, "exceeds the 0 bytes left");
    /* ... and inside a nested message, bounded by the nested length. */
    p.n = 0;
    w_raw(&p, "\x0a\x02\x0a\x05hello", 9);
    expect_kind_fail("v1", "ConfigMap", &p,
                     "ObjectMeta: field 1: length 5 exceeds the 0 bytes left");
    /* Truncated fixed-size values of unknown fields. */
    p.n = 0;
    w_raw(&p, "\x49\x01\x02\x03", 4);
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap: field 9: truncated 8-byte value");
    p.n = 0;
    w_raw(&p, "\x4d\x01\x02\x03", 4);
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap: field 9: truncated 4-byte value");
    /* Groups and the reserved wire types. */
    p.n = 0;
    w_tag(&p, 9, 3);
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap: field 9: groups are not supported");
    p.n = 0;
    w_tag(&p, 9, 4);
    expect_kind_fail("v1", "ConfigMap", &p, "groups are not supported");
    p.n = 0;
    w_tag(&p, 9, 6);
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap: field 9: invalid wire type 6");
    p.n = 0;
    w_tag(&p, 9, 7);
    expect_kind_fail("v1", "ConfigMap", &p, "invalid wire type 7");
    /* Field numbers 0 and above 2^29-1. */
    p.n = 0;
    w_tag(&p, 0, 0);
    w_varint(&p, 1);
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap: invalid field number 0");
    p.n = 0;
    w_varint(&p, (uint64_t)536870912 << 3);
    w_varint(&p, 1);
    expect_kind_fail("v1", "ConfigMap", &p, "invalid field number 536870912");
    /* Wrong wire type for a known field. */
    p.n = 0;
    w_int(&p, 1, 5);
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap.metadata: wire type 0, want 2");
    p.n = 0;
    w_str(&p, 4, "true");
    expect_kind_fail("v1", "ConfigMap", &p, "ConfigMap.immutable: wire type 2, want 0");
    /* Strings: invalid UTF-8, NUL. */
    pbw meta = {.n = 0};
    w_str(&meta, 1, "caf\xe9");
    p.n = 0;
    w_msg(&p, 1, &meta);
    expect_kind_fail("v1", "ConfigMap", &p, "ObjectMeta.name: string is not valid UTF-8");
    meta.n = 0;
    w_bytes(&meta, 14, "a\0b", 3);
    p.n = 0;
    w_msg(&p, 1, &meta);
    expect_kind_fail("v1", "ConfigMap", &p, "ObjectMeta.finalizers: string contains a NUL byte");
    /* FieldsV1 Raw that is not JSON. */
    pbw raw = {.n = 0}, mf = {.n = 0};
    w_str(&raw, 1, "{not json");
    w_msg(&mf, 7, &raw);
    meta.n = 0;
    w_msg(&meta, 17, &mf);
    p.n = 0;
    w_msg(&p, 1, &meta);
    expect_kind_fail("v1", "ConfigMap", &p, "ManagedFieldsEntry.fieldsV1: Raw is not valid JSON");
    raw.n = 0;
    w_int(&raw, 1, 1);
    mf.n = 0;
    w_msg(&mf, 7, &raw);
    meta.n = 0;
    w_msg(&meta, 17, &mf);
    p.n = 0;
    w_msg(&p, 1, &meta);
    expect_kind_fail("v1", "ConfigMap", &p, "ManagedFieldsEntry.fieldsV1: field 1: wire type 0");
    /* A malformed field deep inside a list element. */
    pbw owner = {.n = 0};
    w_raw(&owner, "\x2a\x09short", 7);
    meta.n = 0;
    w_msg(&meta, 13, &owner);
    p.n = 0;
    w_msg(&p, 1, &meta);
    expect_kind_fail("v1", "ConfigMap", &p, "OwnerReference: field 5: length 9 exceeds");
}

/* No prefix or byte mutation of a valid body crashes, reads out of bounds
 * (ASan) or breaks the out/why contract. */
static void test_truncations_and_mutations(void **state)
{
    (void)state;
    pbw meta = {.n = 0}, mf = {.n = 0}, fields = {.n = 0}, owner = {.n = 0}, ev = {.n = 0},
        series = {.n = 0}, env;
    w_str(&meta, 1, "n");
    w_str(&meta, 3, "ns");
    w_time(&meta, 8, 1714557600, 0);
    w_sentry(&meta, 11, "a", "b");
    w_str(&owner, 1, "Pod");
    w_int(&owner, 6, 1);
    w_msg(&meta, 13, &owner);
    w_str(&fields, 1, "{\"f:a\":{}}");
    w_msg(&mf, 7, &fields);
    w_time(&mf, 4, 1714557600, 0);
    w_msg(&meta, 17, &mf);
    w_msg(&ev, 1, &meta);
    w_int(&series, 1, 2);
    w_time(&series, 2, 1714557600, 77000);
    w_msg(&ev, 11, &series);
    w_int(&ev, 8, -3);
    w_str(&ev, 14, "c");
    envelope(&env, "v1", "Event", &ev);

    char *why = NULL;
    assert_int_equal(try_decode(env.b, env.n, &why), SK_OK);
    size_t failures = 0;
    for (size_t n = 0; n < env.n; n++) {
        unsigned char *copy = malloc(n ? n : 1); /* exact size: ASan sees any overread */
        assert_non_null(copy);
        memcpy(copy, env.b, n);
        if (try_decode(copy, n, &why) != SK_OK)
            failures++;
        free(why);
        why = NULL;
        free(copy);
    }
    assert_true(failures > env.n / 2);

    uint32_t seed = 12345;
    for (int round = 0; round < 20000; round++) {
        unsigned char *copy = malloc(env.n);
        assert_non_null(copy);
        memcpy(copy, env.b, env.n);
        for (int k = 0; k < 1 + round % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = 4 + (seed >> 8) % (env.n - 4);
            seed = seed * 1103515245u + 12345u;
            copy[at] = (unsigned char)(seed >> 16);
        }
        try_decode(copy, env.n, &why);
        free(why);
        why = NULL;
        free(copy);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_media_type),
        cmocka_unit_test(test_kubectl_vectors),
        cmocka_unit_test(test_object_meta),
        cmocka_unit_test(test_zero_values),
        cmocka_unit_test(test_namespace),
        cmocka_unit_test(test_configmap),
        cmocka_unit_test(test_secret),
        cmocka_unit_test(test_serviceaccount),
        cmocka_unit_test(test_event),
        cmocka_unit_test(test_lease),
        cmocka_unit_test(test_delete_options),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_maps),
        cmocka_unit_test(test_merging),
        cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_envelope_errors),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_truncations_and_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
