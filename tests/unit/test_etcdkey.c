/*
 * test_etcdkey.c - kube/etcdkey.h: kube-apiserver's key layout read back
 * (namespaced, cluster-scoped, grouped, the renamed prefixes, keys that are
 * not an object's) and values classified (the protobuf envelope decoded to
 * JSON, its kind kept when the object cannot be read, JSON, encrypted,
 * anything else).
 */
#include "kube/etcdkey.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char *span(sk_etcdkey_span s)
{
    static char bufs[4][128];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, 128, "%.*s", (int)s.len, s.len ? s.p : "");
    return b;
}

static void expect_key(const char *key, const char *group, const char *resource, const char *ns,
                       const char *name)
{
    sk_etcdkey k;
    sk_etcdkey_parse(key, strlen(key), &k);
    assert_true(k.text);
    assert_true(k.is_object);
    assert_string_equal(span(k.group), group);
    assert_string_equal(span(k.resource), resource);
    assert_string_equal(span(k.namespace), ns);
    assert_string_equal(span(k.name), name);
}

static void expect_not_object(const char *key, size_t len, int text)
{
    sk_etcdkey k;
    sk_etcdkey_parse(key, len, &k);
    assert_int_equal(k.text, text);
    assert_false(k.is_object);
}

static void test_keys(void **state)
{
    (void)state;
    expect_key("/registry/pods/default/web", "", "pods", "default", "web");
    expect_key("/registry/namespaces/team-a", "", "namespaces", "", "team-a");
    expect_key("/registry/apiregistration.k8s.io/apiservices/v1.apps", "apiregistration.k8s.io",
               "apiservices", "", "v1.apps");
    expect_key("/registry/example.com/widgets/default/w1", "example.com", "widgets", "default",
               "w1");
    expect_key("/registry/services/specs/default/kubernetes", "", "services", "default",
               "kubernetes");
    expect_key("/registry/services/endpoints/default/kubernetes", "", "endpoints", "default",
               "kubernetes");
    expect_key("/registry/minions/node-1", "", "nodes", "", "node-1");
    expect_key("/registry/controllers/default/rc", "", "replicationcontrollers", "default", "rc");
    expect_key("/registry/ingress/default/in", "", "ingresses", "default", "in");
    expect_key("/registry/masterleases/10.0.0.1", "", "masterleases", "", "10.0.0.1");
    expect_key("/registry/clusterroles/syst\xc3\xa8me", "", "clusterroles", "", "syst\xc3\xa8me");
    /* services with one segment after it: a cluster-scoped key named specs */
    expect_key("/registry/services/specs", "", "services", "", "specs");
    expect_not_object("/registry/pods//x", 17, 1);
    expect_not_object("/registry/a/b/c/d", 17, 1);
    expect_not_object("/registry/pods/", 15, 1);
    expect_not_object("/registry/", 10, 1);
    expect_not_object("compact_rev_key", 15, 1);
    expect_not_object("/registry/pods/default/\xff\xfe", 25, 0);
    expect_not_object("/registry/pods/a\0b", 18, 0);
    expect_not_object("/registry/g.io/r/ns/n/extra", 27, 1);
}

static void check_value(const char *v, size_t len, sk_etcdval_encoding enc, const char *kind,
                         const char *api_version, const char *doc_part)
{
    sk_etcdval val;
    sk_etcdval_parse(v, len, &val);
    assert_int_equal(val.encoding, enc);
    if (kind)
        assert_string_equal(val.kind, kind);
    else
        assert_null(val.kind);
    if (api_version)
        assert_string_equal(val.api_version, api_version);
    else
        assert_null(val.api_version);
    if (doc_part) {
        assert_non_null(val.doc);
        if (!strstr(val.doc, doc_part))
            fail_msg("%s does not hold %s", val.doc, doc_part);
    } else {
        assert_null(val.doc);
    }
    sk_etcdval_clear(&val);
}

static void test_values(void **state)
{
    (void)state;
    /* a ConfigMap in kube's envelope: TypeMeta v1/ConfigMap, metadata.name
     * "pb", data {color: blue} */
    static const char cm[] = "k8s\0"
                             "\x0a\x0f\x0a\x02v1\x12\x09"
                             "ConfigMap"
                             "\x12\x15\x0a\x04\x0a\x02pb\x12\x0d\x0a\x05"
                             "color\x12\x04"
                             "blue";
    check_value(cm, sizeof cm - 1, SK_ETCDVAL_PROTOBUF, "ConfigMap", "v1",
                 "\"data\":{\"color\":\"blue\"}");
    /* an envelope of a kind no codec knows: kind kept, no doc */
    static const char thing[] = "k8s\0\x0a\x0b\x0a\x02v1\x12\x05Thing";
    check_value(thing, sizeof thing - 1, SK_ETCDVAL_PROTOBUF, "Thing", "v1", NULL);
    static const char cr[] = "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"n\":1}";
    check_value(cr, strlen(cr), SK_ETCDVAL_JSON, "Widget", "example.com/v1", cr);
    check_value("{\"v\":1}", 7, SK_ETCDVAL_JSON, NULL, NULL, "{\"v\":1}");
    check_value("k8s:enc:aescbc:v1:key1:\x01\x02", 25, SK_ETCDVAL_ENCRYPTED, NULL, NULL, NULL);
    check_value("{\xff}", 3, SK_ETCDVAL_BYTES, NULL, NULL, NULL);
    check_value("{not json", 9, SK_ETCDVAL_BYTES, NULL, NULL, NULL);
    check_value("[1,2]", 5, SK_ETCDVAL_BYTES, NULL, NULL, NULL);
    check_value("5", 1, SK_ETCDVAL_BYTES, NULL, NULL, NULL);
    check_value("", 0, SK_ETCDVAL_BYTES, NULL, NULL, NULL);
    check_value("k8s\0", 4, SK_ETCDVAL_BYTES, NULL, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
