/*
 * test_accept.c - Accept negotiation (kube/accept.h): the media type and
 * the conversion kube-apiserver's negotiation picks, clause order by q and
 * specificity, and the headers client-go's typed, metadata and table
 * clients send.
 */
#include "kube/accept.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static sk_accept pick(const char *header, int protobuf_ok)
{
    sk_accept a;
    assert_int_equal(sk_accept_negotiate(header, protobuf_ok, &a), SK_OK);
    return a;
}

static void test_media(void **state)
{
    (void)state;
    assert_true(pick("application/vnd.kubernetes.protobuf,application/json", 1).protobuf);
    assert_true(pick("application/vnd.kubernetes.protobuf, */*", 1).protobuf);
    assert_true(pick("application/vnd.kubernetes.protobuf", 1).protobuf);
    assert_true(pick("application/json;q=0.5, application/vnd.kubernetes.protobuf;q=0.9", 1).protobuf);
    assert_true(pick("application/vnd.kubernetes.protobuf;stream=watch", 1).protobuf);
    /* goautoneg puts the specific type before * / * of the same q */
    assert_true(pick("*/*, application/vnd.kubernetes.protobuf", 1).protobuf);
    assert_false(pick(NULL, 1).protobuf);
    assert_false(pick("", 1).protobuf);
    assert_false(pick("application/json", 1).protobuf);
    assert_false(pick("*/*", 1).protobuf);
    assert_false(pick("application/*", 1).protobuf);
    assert_false(pick("application/json, application/vnd.kubernetes.protobuf", 1).protobuf);
    assert_false(pick("application/vnd.kubernetes.protobuf;q=0.5, application/json;q=0.9", 1).protobuf);
    assert_false(pick("application/vnd.kubernetes.protobuf;q=0", 1).protobuf);
    /* a kind without a protobuf form: the next clause, or JSON */
    assert_false(pick("application/vnd.kubernetes.protobuf, application/json", 0).protobuf);
    assert_false(pick("application/vnd.kubernetes.protobuf", 0).protobuf);
    /* YAML is not written here: the next clause */
    assert_true(pick("application/yaml, application/vnd.kubernetes.protobuf", 1).protobuf);
    /* an unknown stream schema passes the clause over */
    assert_false(pick("application/vnd.kubernetes.protobuf;stream=other, application/json", 1).protobuf);
}

static void test_conversions(void **state)
{
    (void)state;
    /* kubectl get */
    sk_accept a = pick("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;"
                       "v=v1beta1;g=meta.k8s.io,application/json", 1);
    assert_int_equal(a.as, SK_AS_TABLE);
    assert_string_equal(a.meta_version, "v1");
    assert_false(a.protobuf);
    /* client-go's metadata client: its first clause, protobuf, wins, for a
     * kind without a protobuf form too (a custom resource) */
    const char *metadata_client =
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    for (int protobuf_ok = 0; protobuf_ok <= 1; protobuf_ok++) {
        a = pick(metadata_client, protobuf_ok);
        assert_int_equal(a.as, SK_AS_PARTIAL_LIST);
        assert_string_equal(a.meta_version, "v1");
        assert_true(a.protobuf);
    }
    a = pick("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
             "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", 1);
    assert_int_equal(a.as, SK_AS_PARTIAL_LIST);
    assert_false(a.protobuf);
    a = pick("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", 1);
    assert_int_equal(a.as, SK_AS_PARTIAL);
    assert_string_equal(a.meta_version, "v1beta1");
    /* an unknown conversion passes over to a plain clause */
    a = pick("application/json;as=Widget;g=meta.k8s.io;v=v1, application/json", 1);
    assert_int_equal(a.as, SK_AS_OBJECT);
    a = pick("application/json;as=Table;g=example.com;v=v1, application/json", 1);
    assert_int_equal(a.as, SK_AS_OBJECT);
    /* Table is never protobuf */
    a = pick("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1, application/json", 1);
    assert_int_equal(a.as, SK_AS_OBJECT);
    assert_false(a.protobuf);
}

static void test_not_acceptable(void **state)
{
    (void)state;
    sk_accept a = {0, SK_AS_OBJECT, NULL};
    assert_int_equal(sk_accept_negotiate("application/json;as=Widget;g=meta.k8s.io;v=v1", 1, &a),
                     SK_ERR_NOT_ACCEPTABLE);
    assert_int_equal(sk_accept_negotiate("application/json;as=Table;g=meta.k8s.io;v=v2", 1, &a),
                     SK_ERR_NOT_ACCEPTABLE);
    assert_int_equal(
        sk_accept_negotiate("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1", 1, &a),
        SK_ERR_NOT_ACCEPTABLE);
    /* media types only, none written here: JSON, as sqlkube answers them */
    assert_int_equal(sk_accept_negotiate("text/html", 1, &a), SK_OK);
    assert_false(a.protobuf);
    assert_int_equal(a.as, SK_AS_OBJECT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_media),
        cmocka_unit_test(test_conversions),
        cmocka_unit_test(test_not_acceptable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
