/*
 * test_token.c - continue tokens: round trips, the documented wire layout,
 * and rejection of every tampered, truncated, extended or garbled token.
 *
 * Tokens are built independently here (GnuTLS base64 translated to the
 * URL alphabet, GnuTLS HMAC) from the layout in token.h, so the tests check
 * the format itself and can sign malformed payloads to reach the checks
 * behind the MAC.
 */
#include "kube/token.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const unsigned char secret[32] = "0123456789abcdef0123456789abcdef";

/* Raw token bytes as the tests assemble them. */
typedef struct raw {
    unsigned char b[70000 * 4];
    size_t n;
} raw;

static void raw_put(raw *r, const void *p, size_t n)
{
    assert_true(r->n + n <= sizeof r->b);
    memcpy(r->b + r->n, p, n);
    r->n += n;
}

static void raw_str(raw *r, const char *s, size_t len)
{
    unsigned char hdr[2] = {(unsigned char)(len >> 8), (unsigned char)len};
    raw_put(r, hdr, 2);
    raw_put(r, s, len);
}

/* version | rev | four fields, unsigned. */
static void raw_payload(raw *r, unsigned version, int64_t rev, const char *res, const char *ns,
                        const char *last_ns, const char *last_name)
{
    r->n = 0;
    unsigned char v = (unsigned char)version;
    raw_put(r, &v, 1);
    for (int i = 0; i < 8; i++) {
        unsigned char c = (unsigned char)((uint64_t)rev >> (56 - 8 * i));
        raw_put(r, &c, 1);
    }
    raw_str(r, res, strlen(res));
    raw_str(r, ns, strlen(ns));
    raw_str(r, last_ns, strlen(last_ns));
    raw_str(r, last_name, strlen(last_name));
}

static void raw_sign(raw *r, const unsigned char *key)
{
    unsigned char mac[32];
    assert_int_equal(gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, 32, r->b, r->n, mac), 0);
    raw_put(r, mac, 16);
}

/* base64url without padding of r (new string). */
static char *raw_encode(const raw *r)
{
    gnutls_datum_t in = {(unsigned char *)r->b, (unsigned)r->n}, out = {NULL, 0};
    assert_int_equal(gnutls_base64_encode2(&in, &out), 0);
    char *s = malloc(out.size + 1);
    assert_non_null(s);
    size_t o = 0;
    for (unsigned i = 0; i < out.size; i++) {
        char c = (char)out.data[i];
        if (c == '=' || c == '\n' || c == '\r')
            continue;
        s[o++] = c == '+' ? '-' : c == '/' ? '_' : c;
    }
    s[o] = '\0';
    gnutls_free(out.data);
    return s;
}

static void expect_rejected_str(const char *s, const unsigned char *key, const char *why)
{
    sk_token t = {.rev = 42}; /* sentinel: must be untouched on failure */
    char *msg = NULL;
    assert_int_equal(sk_token_decode(s, key, &t, &msg), SK_ERR_BAD_REQUEST);
    assert_non_null(msg);
    assert_true(strncmp(msg, "continue key is not valid: ", 27) == 0);
    if (why && !strstr(msg, why))
        fail_msg("token %.40s: message \"%s\" lacks \"%s\"", s, msg, why);
    assert_int_equal(t.rev, 42);
    assert_null(t.resource);
    free(msg);
}

static void expect_rejected(const raw *r, const char *why)
{
    char *s = raw_encode(r);
    expect_rejected_str(s, secret, why);
    free(s);
}

static void round_trip(int64_t rev, const char *res, const char *ns, const char *last_ns,
                       const char *last_name)
{
    sk_token in = {rev, (char *)res, (char *)ns, (char *)last_ns, (char *)last_name};
    char *s = sk_token_encode(&in, secret);
    assert_non_null(s);
    assert_null(strpbrk(s, "+/=")); /* safe in a query string unescaped */
    sk_token out = {0};
    char *msg = NULL;
    assert_int_equal(sk_token_decode(s, secret, &out, &msg), SK_OK);
    assert_null(msg);
    assert_true(out.rev == rev);
    assert_string_equal(out.resource, res);
    assert_string_equal(out.ns, ns);
    assert_string_equal(out.last_ns, last_ns);
    assert_string_equal(out.last_name, last_name);
    sk_token_clear(&out);
    assert_null(out.resource);
    free(s);
}

static void test_round_trip(void **state)
{
    round_trip(1, "configmaps", "default", "default", "a");
    round_trip(INT64_MAX, "leases.coordination.k8s.io", "", "kube-system", "node-1");
    round_trip(12345, "namespaces", "", "", "kube-public");
    round_trip(7, "", "", "", "");
    round_trip(0x0102030405060708, "secrets", "ns", "ns", "caf\xc3\xa9");
}

static void test_long_names(void **state)
{
    char *big = malloc(65536);
    assert_non_null(big);
    memset(big, 'x', 65535);
    big[65535] = '\0';
    round_trip(9, "configmaps", big, big, big);
    big[253] = '\0';
    round_trip(9, big, big, big, big);
    free(big);
}

/* The encoder writes exactly the layout token.h documents. */
static void test_wire_layout(void **state)
{
    static raw r;
    raw_payload(&r, 1, 77, "leases.coordination.k8s.io", "", "kube-node-lease", "n1");
    raw_sign(&r, secret);
    char *want = raw_encode(&r);
    sk_token t = {77, "leases.coordination.k8s.io", "", "kube-node-lease", "n1"};
    char *got = sk_token_encode(&t, secret);
    assert_string_equal(got, want);
    free(got);
    free(want);
}

static void test_every_byte_flip_rejected(void **state)
{
    static raw good, bad;
    raw_payload(&good, 1, 1000, "configmaps", "default", "default", "cm-17");
    raw_sign(&good, secret);
    for (size_t i = 0; i < good.n; i++) {
        for (unsigned x = 1; x < 256; x++) {
            bad = good;
            bad.b[i] ^= (unsigned char)x;
            expect_rejected(&bad, "signature");
        }
    }
}

static void test_truncated_and_extended(void **state)
{
    static raw good, r;
    raw_payload(&good, 1, 5, "configmaps", "default", "default", "cm");
    raw_sign(&good, secret);
    for (size_t len = 0; len < good.n; len++) {
        r = good;
        r.n = len;
        expect_rejected(&r, NULL);
    }
    /* Every prefix of the text form too (some are impossible base64 lengths). */
    char *s = raw_encode(&good);
    size_t slen = strlen(s);
    for (size_t len = 0; len < slen; len++) {
        char *p = strndup(s, len);
        expect_rejected_str(p, secret, NULL);
        free(p);
    }
    free(s);
    /* Bytes appended after the MAC. */
    r = good;
    raw_put(&r, "\0", 1);
    expect_rejected(&r, "signature");
}

static void test_wrong_secret(void **state)
{
    unsigned char other[32];
    memcpy(other, secret, 32);
    other[31] ^= 1;
    sk_token t = {3, "configmaps", "default", "default", "x"};
    char *s = sk_token_encode(&t, secret);
    expect_rejected_str(s, other, "signature");
    free(s);
}

/* Payloads signed with the right secret but malformed: only a peer with a
 * different format could produce them, and they must still be refused. */
static void test_signed_but_malformed(void **state)
{
    static raw r;

    raw_payload(&r, 2, 5, "configmaps", "", "a", "b");
    raw_sign(&r, secret);
    expect_rejected(&r, "different versions");

    raw_payload(&r, 1, 0, "configmaps", "", "a", "b");
    raw_sign(&r, secret);
    expect_rejected(&r, "resourceVersion");

    raw_payload(&r, 1, -5, "configmaps", "", "a", "b");
    raw_sign(&r, secret);
    expect_rejected(&r, "resourceVersion");

    raw_payload(&r, 1, 5, "configmaps", "", "a", "b");
    raw_put(&r, "x", 1);
    raw_sign(&r, secret);
    expect_rejected(&r, "trailing");

    /* A NUL inside a field. */
    raw_payload(&r, 1, 5, "configmaps", "", "a", "");
    r.n -= 2;
    raw_str(&r, "b\0c", 3);
    raw_sign(&r, secret);
    expect_rejected(&r, "malformed");

    /* The last length overruns the payload. */
    raw_payload(&r, 1, 5, "configmaps", "", "a", "b");
    r.b[r.n - 3] = 0x01; /* high byte of the last length: 257 */
    raw_sign(&r, secret);
    expect_rejected(&r, "malformed");

    /* Only three fields. */
    r.n = 0;
    raw_put(&r, "\x01\0\0\0\0\0\0\0\x05", 9);
    raw_str(&r, "configmaps", 10);
    raw_str(&r, "", 0);
    raw_str(&r, "a", 1);
    raw_sign(&r, secret);
    expect_rejected(&r, "malformed");
}

static void test_garbage(void **state)
{
    static const char *cases[] = {
        "",                   /* empty */
        "A",                  /* impossible length */
        "AAAA",               /* too short */
        "!!!!!!!!",           /* outside the alphabet */
        "continue-me-please", /* plausible text, nonsense bytes */
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzLCJzdGFydCI6ImEifQ", /* a k8s token */
        "AQAAAAAAAAAF AAA",                                           /* space */
        "AQAAAAAAAAAF%3D",                                            /* still URL-escaped */
        "AQAAAAAAAAAFAA==",                                           /* padding */
        "AQAAAAAAAAAF+/AA",                                           /* standard alphabet */
        "AQAAAAAAAAAF\xc3\xa9",                                       /* non-ASCII */
        "AB",                                                         /* non-zero unused bits */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_rejected_str(cases[i], secret, NULL);
}

/* One token, one spelling: a non-canonical final character is refused. */
static void test_canonical_encoding(void **state)
{
    sk_token t = {3, "configmaps", "default", "default", "x"};
    char *s = sk_token_encode(&t, secret);
    size_t len = strlen(s);
    assert_true(len % 4 != 0); /* the layout leaves unused bits to test */
    char last = s[len - 1];
    for (const char *c = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"; *c;
         c++) {
        if (*c == last)
            continue;
        s[len - 1] = *c;
        expect_rejected_str(s, secret, NULL);
    }
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_long_names),
        cmocka_unit_test(test_wire_layout),
        cmocka_unit_test(test_every_byte_flip_rejected),
        cmocka_unit_test(test_truncated_and_extended),
        cmocka_unit_test(test_wrong_secret),
        cmocka_unit_test(test_signed_but_malformed),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_canonical_encoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
