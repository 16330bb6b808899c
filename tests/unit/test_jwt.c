/*
 * test_jwt.c - ServiceAccount token encoding and checking (kube/jwt,
 * kube/satoken): base64url both ways (no padding, one encoding per byte
 * string); keys from PEM (PKCS#1 and PKCS#8 private keys, public keys,
 * certificates, several blocks in one file, non-RSA and garbage refused);
 * sign then verify; every tampering refused (payload, signature, header
 * alg none or HS256, another key, extra dots); kube's claims and their
 * checks: issuer, expiry and not-before with the 60 s leeway, audiences as
 * a string or a list and their intersection, the private claim's shape.
 */
#include "kube/jwt.h"
#include "kube/satoken.h"

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ISS "https://kubernetes.default.svc.cluster.local"
#define NOW 1700000000

/* A new RSA (or ECDSA) key as PEM: pkcs8 or PKCS#1. */
static char *gen_key(gnutls_pk_algorithm_t pk, int pkcs8, gnutls_x509_privkey_t *keep)
{
    gnutls_x509_privkey_t k;
    assert_int_equal(gnutls_x509_privkey_init(&k), 0);
    assert_int_equal(gnutls_x509_privkey_generate(k, pk, pk == GNUTLS_PK_RSA ? 2048 : 256, 0), 0);
    gnutls_datum_t d = {0};
    if (pkcs8)
        assert_int_equal(gnutls_x509_privkey_export2_pkcs8(k, GNUTLS_X509_FMT_PEM, NULL,
                                                           GNUTLS_PKCS_PLAIN, &d),
                         0);
    else
        assert_int_equal(gnutls_x509_privkey_export2(k, GNUTLS_X509_FMT_PEM, &d), 0);
    char *s = strndup((char *)d.data, d.size);
    gnutls_free(d.data);
    if (keep)
        *keep = k;
    else
        gnutls_x509_privkey_deinit(k);
    return s;
}

static char *public_pem(gnutls_x509_privkey_t k)
{
    gnutls_pubkey_t pub;
    gnutls_privkey_t priv;
    assert_int_equal(gnutls_privkey_init(&priv), 0);
    assert_int_equal(gnutls_privkey_import_x509(priv, k, 0), 0);
    assert_int_equal(gnutls_pubkey_init(&pub), 0);
    assert_int_equal(gnutls_pubkey_import_privkey(pub, priv, 0, 0), 0);
    gnutls_datum_t d = {0};
    assert_int_equal(gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_PEM, &d), 0);
    char *s = strndup((char *)d.data, d.size);
    gnutls_free(d.data);
    gnutls_pubkey_deinit(pub);
    gnutls_privkey_deinit(priv);
    return s;
}

static char *self_signed_cert(gnutls_x509_privkey_t k)
{
    gnutls_x509_crt_t c;
    assert_int_equal(gnutls_x509_crt_init(&c), 0);
    gnutls_x509_crt_set_version(c, 3);
    unsigned char serial[] = {1};
    gnutls_x509_crt_set_serial(c, serial, 1);
    gnutls_x509_crt_set_activation_time(c, NOW);
    gnutls_x509_crt_set_expiration_time(c, NOW + 3600);
    gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, "t", 1);
    assert_int_equal(gnutls_x509_crt_set_key(c, k), 0);
    assert_int_equal(gnutls_x509_crt_sign2(c, c, k, GNUTLS_DIG_SHA256, 0), 0);
    gnutls_datum_t d = {0};
    assert_int_equal(gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_PEM, &d), 0);
    char *s = strndup((char *)d.data, d.size);
    gnutls_free(d.data);
    gnutls_x509_crt_deinit(c);
    return s;
}

static void test_b64url(void **state)
{
    (void)state;
    static const struct {
        const char *raw, *enc;
    } cases[] = {{"", ""}, {"f", "Zg"}, {"fo", "Zm8"}, {"foo", "Zm9v"}, {"foob", "Zm9vYg"},
                 {"\xfb\xff", "-_8"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *e = sk_jwt_b64url_encode(cases[i].raw, strlen(cases[i].raw));
        assert_string_equal(e, cases[i].enc);
        size_t n = 0;
        unsigned char *d = sk_jwt_b64url_decode(e, strlen(e), &n);
        assert_non_null(d);
        assert_int_equal(n, strlen(cases[i].raw));
        assert_memory_equal(d, cases[i].raw, n);
        free(d);
        free(e);
    }
    size_t n;
    static const char *const bad[] = {"Zg==", "Z", "Zm9v+", "Zm9v/", "Zh", "a b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_null(sk_jwt_b64url_decode(bad[i], strlen(bad[i]), &n));
}

static json_t *sample_claims(void)
{
    static const char *const auds[] = {ISS, "vault"};
    sk_satoken t = {.ns = "ns1", .name = "sa1", .uid = "uid-sa", .jti = "jti-1",
                    .iat = NOW, .exp = NOW + 3600};
    return sk_satoken_claims(&t, ISS, auds, 2);
}

/* A token with one part replaced by the base64url of text. */
static char *replace_part(const char *token, int part, const char *text)
{
    char *copy = strdup(token);
    char *p[3];
    p[0] = copy;
    p[1] = strchr(p[0], '.') + 1;
    p[2] = strchr(p[1], '.') + 1;
    p[1][-1] = p[2][-1] = '\0';
    char *enc = sk_jwt_b64url_encode(text, strlen(text));
    p[part] = enc;
    char *out = NULL;
    assert_true(asprintf(&out, "%s.%s.%s", p[0], p[1], p[2]) > 0);
    free(enc);
    free(copy);
    return out;
}

static void verify_fails(const sk_jwt_keys *k, const char *token)
{
    json_t *c = NULL;
    const char *why = NULL;
    assert_int_equal(sk_jwt_verify(k, token, &c, &why), SK_ERR_UNAUTHORIZED);
    assert_null(c);
    assert_non_null(why);
}

static void test_sign_verify(void **state)
{
    (void)state;
    gnutls_x509_privkey_t raw;
    char *pem = gen_key(GNUTLS_PK_RSA, 1, &raw);
    sk_jwt_keys *k = NULL;
    char *err = NULL;
    assert_int_equal(sk_jwt_keys_new(pem, NULL, 0, &k, &err), SK_OK);
    assert_true(sk_jwt_keys_can_sign(k));
    json_t *claims = sample_claims();
    char *token = sk_jwt_sign(k, claims);
    assert_non_null(token);
    json_t *header = NULL;
    {
        size_t n;
        unsigned char *h = sk_jwt_b64url_decode(token, strchr(token, '.') - token, &n);
        header = json_loads((char *)h, 0, NULL);
        free(h);
    }
    assert_string_equal(json_string_value(json_object_get(header, "alg")), "RS256");
    assert_int_equal(strlen(json_string_value(json_object_get(header, "kid"))), 43);
    json_decref(header);
    json_t *got = NULL;
    const char *why = NULL;
    assert_int_equal(sk_jwt_verify(k, token, &got, &why), SK_OK);
    assert_true(json_equal(got, claims));
    json_decref(got);
    json_t *peek = sk_jwt_peek(token);
    assert_string_equal(sk_satoken_issuer(peek), ISS);
    json_decref(peek);

    /* tampering */
    char *t = replace_part(token, 1, "{\"iss\":\"" ISS "\",\"sub\":\"x\"}");
    verify_fails(k, t);
    free(t);
    t = replace_part(token, 0, "{\"alg\":\"none\"}");
    verify_fails(k, t);
    free(t);
    t = replace_part(token, 0, "{\"alg\":\"HS256\"}");
    verify_fails(k, t);
    free(t);
    t = strdup(token);
    t[strlen(t) - 2] = t[strlen(t) - 2] == 'A' ? 'B' : 'A';
    verify_fails(k, t);
    free(t);
    assert_true(asprintf(&t, "%s.", token) > 0);
    verify_fails(k, t);
    free(t);
    t = strdup(token);
    *strrchr(t, '.') = '\0';
    verify_fails(k, t);
    assert_null(sk_jwt_peek(t));
    free(t);
    verify_fails(k, "");
    verify_fails(k, "..");
    assert_null(sk_jwt_peek("a.b.c"));

    /* another key does not verify; the old one listed next to it does */
    char *other_pem = gen_key(GNUTLS_PK_RSA, 0, NULL);
    sk_jwt_keys *other = NULL;
    assert_int_equal(sk_jwt_keys_new(other_pem, NULL, 0, &other, &err), SK_OK);
    verify_fails(other, token);
    char *pub = public_pem(raw);
    char *cert = self_signed_cert(raw);
    char *both = NULL;
    assert_true(asprintf(&both, "%s\n%s", other_pem, pub) > 0);
    const char *const files[] = {both};
    sk_jwt_keys *v = NULL;
    assert_int_equal(sk_jwt_keys_new(NULL, files, 1, &v, &err), SK_OK);
    assert_false(sk_jwt_keys_can_sign(v));
    assert_null(sk_jwt_sign(v, claims));
    assert_int_equal(sk_jwt_verify(v, token, &got, &why), SK_OK);
    json_decref(got);
    sk_jwt_keys_free(v);
    const char *const certs[] = {cert};
    assert_int_equal(sk_jwt_keys_new(other_pem, certs, 1, &v, &err), SK_OK);
    assert_int_equal(sk_jwt_verify(v, token, &got, &why), SK_OK);
    json_decref(got);
    /* the signing key's own part is not added when files are given */
    char *own = sk_jwt_sign(v, claims);
    verify_fails(v, own);
    free(own);
    sk_jwt_keys_free(v);

    free(both);
    free(cert);
    free(pub);
    free(other_pem);
    sk_jwt_keys_free(other);
    free(token);
    json_decref(claims);
    sk_jwt_keys_free(k);
    gnutls_x509_privkey_deinit(raw);
    free(pem);
}

static void test_bad_keys(void **state)
{
    (void)state;
    sk_jwt_keys *k = NULL;
    char *err = NULL;
    assert_int_equal(sk_jwt_keys_new("garbage", NULL, 0, &k, &err), SK_ERR_INVALID);
    assert_null(k);
    assert_string_equal(err, "the signing key is not a PEM RSA private key");
    free(err);
    char *ec = gen_key(GNUTLS_PK_ECDSA, 1, NULL);
    assert_int_equal(sk_jwt_keys_new(ec, NULL, 0, &k, &err), SK_ERR_INVALID);
    free(err);
    const char *const files[] = {ec};
    assert_int_equal(sk_jwt_keys_new(NULL, files, 1, &k, &err), SK_ERR_INVALID);
    assert_string_equal(err, "key file 1: block 1 is not an RSA key (only RS256 is supported)");
    free(err);
    const char *const junk[] = {"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"};
    assert_int_equal(sk_jwt_keys_new(NULL, junk, 1, &k, &err), SK_ERR_INVALID);
    assert_string_equal(err, "key file 1 holds no public key, RSA private key or certificate");
    free(err);
    assert_int_equal(sk_jwt_keys_new(NULL, NULL, 0, &k, &err), SK_ERR_INVALID);
    assert_string_equal(err, "no key to verify tokens with");
    free(err);
    free(ec);
}

static sk_err check(json_t *claims, int64_t now, const char *const *auds, size_t n,
                    sk_satoken *t, size_t *m, char **why)
{
    const char *out[4];
    return sk_satoken_check(claims, ISS, now, auds, n, t, out, m, why);
}

static void expect_why(json_t *claims, int64_t now, const char *want)
{
    static const char *const auds[] = {ISS};
    sk_satoken t;
    size_t m;
    char *why = NULL;
    assert_int_equal(check(claims, now, auds, 1, &t, &m, &why), SK_ERR_UNAUTHORIZED);
    assert_string_equal(why, want);
    free(why);
}

static void test_claims(void **state)
{
    (void)state;
    json_t *c = sample_claims();
    char *text = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(text, "{\"aud\":[\"" ISS "\",\"vault\"],\"exp\":1700003600,\"iat\":"
                              "1700000000,\"iss\":\"" ISS "\",\"jti\":\"jti-1\",\"kubernetes.io\":"
                              "{\"namespace\":\"ns1\",\"serviceaccount\":{\"name\":\"sa1\","
                              "\"uid\":\"uid-sa\"}},\"nbf\":1700000000,\"sub\":"
                              "\"system:serviceaccount:ns1:sa1\"}");
    free(text);
    static const char *const auds[] = {"other", "vault", ISS};
    const char *out[3];
    size_t m = 0;
    sk_satoken t;
    char *why = NULL;
    assert_int_equal(sk_satoken_check(c, ISS, NOW + 10, auds, 3, &t, out, &m, &why), SK_OK);
    assert_int_equal(m, 2);
    assert_string_equal(out[0], "vault");
    assert_string_equal(out[1], ISS);
    assert_string_equal(t.ns, "ns1");
    assert_string_equal(t.name, "sa1");
    assert_string_equal(t.uid, "uid-sa");
    assert_string_equal(t.jti, "jti-1");
    assert_null(t.bound_kind);
    /* times, with kube's 60 s leeway */
    assert_int_equal(check(c, NOW + 3600 + 60, auds, 3, &t, &m, &why), SK_OK);
    expect_why(c, NOW + 3600 + 61, "service account token has expired");
    assert_int_equal(check(c, NOW - 60, auds, 3, &t, &m, &why), SK_OK);
    expect_why(c, NOW - 61, "service account token is not valid yet");
    /* audiences */
    static const char *const none[] = {"x", "y"};
    assert_int_equal(check(c, NOW, none, 2, &t, &m, &why), SK_ERR_UNAUTHORIZED);
    assert_string_equal(why, "token audiences [\"" ISS "\" \"vault\"] is invalid for the target "
                             "audiences [\"x\" \"y\"]");
    free(why);
    json_object_set_new(c, "aud", json_string("vault"));
    static const char *const v[] = {"vault"};
    assert_int_equal(check(c, NOW, v, 1, &t, &m, &why), SK_OK);
    json_object_set_new(c, "aud", json_string(ISS));
    /* issuer */
    json_object_set_new(c, "iss", json_string("https://elsewhere"));
    expect_why(c, NOW, "token issuer is not accepted");
    json_object_set_new(c, "iss", json_string(ISS));
    /* bound objects and a broken private claim */
    json_t *k8s = json_object_get(c, "kubernetes.io");
    json_object_set_new(k8s, "pod", json_pack("{s:s, s:s}", "name", "p", "uid", "uid-p"));
    assert_int_equal(check(c, NOW, v + 0, 0, &t, &m, &why), SK_ERR_UNAUTHORIZED);
    free(why);
    static const char *const iss[] = {ISS};
    assert_int_equal(check(c, NOW, iss, 1, &t, &m, &why), SK_OK);
    assert_string_equal(t.bound_kind, "Pod");
    assert_string_equal(t.bound_name, "p");
    assert_string_equal(t.bound_uid, "uid-p");
    assert_null(t.node_name);
    /* a pod-bound token's node: a name, a uid only when known */
    json_object_set_new(k8s, "node", json_pack("{s:s}", "name", "n1"));
    assert_int_equal(check(c, NOW, iss, 1, &t, &m, &why), SK_OK);
    assert_string_equal(t.bound_kind, "Pod");
    assert_string_equal(t.node_name, "n1");
    assert_null(t.node_uid);
    json_object_set_new(k8s, "node", json_pack("{s:s, s:i}", "name", "n1", "uid", 5));
    expect_why(c, NOW, "service account token claims could not be validated due to unexpected "
                       "private claim");
    json_object_del(k8s, "node");
    {
        sk_satoken pt = {.ns = "ns1", .name = "sa1", .uid = "u", .jti = "j", .bound_kind = "Pod",
                         .bound_name = "p", .bound_uid = "pu", .node_name = "n1",
                         .node_uid = "nu", .iat = NOW, .exp = NOW + 600};
        json_t *pc = sk_satoken_claims(&pt, ISS, iss, 1);
        char *pt_text = json_dumps(json_object_get(pc, "kubernetes.io"), JSON_SORT_KEYS |
                                                                              JSON_COMPACT);
        assert_string_equal(pt_text, "{\"namespace\":\"ns1\",\"node\":{\"name\":\"n1\",\"uid\":"
                                     "\"nu\"},\"pod\":{\"name\":\"p\",\"uid\":\"pu\"},"
                                     "\"serviceaccount\":{\"name\":\"sa1\",\"uid\":\"u\"}}");
        free(pt_text);
        sk_satoken back;
        assert_int_equal(check(pc, NOW, iss, 1, &back, &m, &why), SK_OK);
        assert_string_equal(back.node_uid, "nu");
        /* a node claim alone binds the token to the node */
        json_object_del(json_object_get(pc, "kubernetes.io"), "pod");
        assert_int_equal(check(pc, NOW, iss, 1, &back, &m, &why), SK_OK);
        assert_string_equal(back.bound_kind, "Node");
        assert_null(back.node_name);
        json_decref(pc);
    }
    json_object_set_new(k8s, "secret", json_pack("{s:s, s:s}", "name", "s", "uid", "uid-s"));
    expect_why(c, NOW, "service account token claims could not be validated due to unexpected "
                       "private claim");
    json_object_del(k8s, "secret");
    json_object_set_new(k8s, "serviceaccount", json_pack("{s:s}", "name", "sa1"));
    expect_why(c, NOW, "service account token claims could not be validated due to unexpected "
                       "private claim");
    json_object_del(c, "exp");
    expect_why(c, NOW, "service account token claims could not be validated due to unexpected "
                       "validation error");
    /* Dates no int64 holds, or of the wrong type, are refused, never cast
     * (the fuzzer found the cast); an integer exp near INT64_MAX is only a
     * late expiry, with no overflow in the leeway arithmetic. */
    json_object_set_new(c, "exp", json_real(1e300));
    expect_why(c, NOW, "service account token claims could not be validated due to unexpected "
                       "validation error");
    json_object_set_new(c, "exp", json_integer(NOW + 3600));
    json_object_set_new(c, "nbf", json_string("soon"));
    expect_why(c, NOW, "service account token claims could not be validated due to unexpected "
                       "validation error");
    json_object_set_new(c, "nbf", json_real(-1e300));
    expect_why(c, NOW, "service account token claims could not be validated due to unexpected "
                       "validation error");
    json_decref(c);
    c = sample_claims();
    json_object_set_new(c, "exp", json_integer(INT64_MAX));
    {
        static const char *const one[] = {ISS};
        sk_satoken late;
        size_t n_late = 0;
        char *why = NULL;
        assert_int_equal(check(c, NOW, one, 1, &late, &n_late, &why), SK_OK);
        free(why);
    }
    json_decref(c);
    char *u = sk_satoken_username("a", "b");
    assert_string_equal(u, "system:serviceaccount:a:b");
    free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_b64url),
        cmocka_unit_test(test_sign_verify),
        cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_claims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
