/*
 * test_alloc.c - the Service ranges (kube/svcrange.h): parsing the two
 * flags, membership with the network and broadcast addresses excluded,
 * canonical text, the static band's size (kube's formula at several range
 * sizes) and that random picks stay inside the range and above the band.
 */
#include "kube/svcrange.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static uint32_t ip(const sk_svcrange *r, const char *text)
{
    uint32_t v = 0;
    assert_int_equal(sk_svcrange_value(r, text, &v), 0);
    return v;
}

static void test_default_cidr(void **state)
{
    (void)state;
    sk_svcrange r;
    assert_int_equal(sk_svcrange_parse_cidr("10.96.0.0/12", &r), SK_OK);
    assert_string_equal(r.spec, "10.96.0.0/12");
    assert_int_equal(r.size, (1u << 20) - 2);
    assert_int_equal(r.static_band, 256);
    char text[SK_SVCRANGE_TEXT_MAX];
    sk_svcrange_format(&r, r.base, text);
    assert_string_equal(text, "10.96.0.1"); /* the kubernetes Service's */
    uint32_t off = 99;
    assert_true(sk_svcrange_contains(&r, ip(&r, "10.96.0.1"), &off));
    assert_int_equal(off, 0);
    assert_true(sk_svcrange_contains(&r, ip(&r, "10.111.255.254"), &off));
    assert_int_equal(off, r.size - 1);
    assert_false(sk_svcrange_contains(&r, ip(&r, "10.96.0.0"), &off));      /* network */
    assert_false(sk_svcrange_contains(&r, ip(&r, "10.111.255.255"), &off)); /* broadcast */
    assert_false(sk_svcrange_contains(&r, ip(&r, "10.112.0.1"), &off));
    assert_false(sk_svcrange_contains(&r, ip(&r, "1.1.1.1"), &off));
}

static void test_cidr_host_bits_and_sizes(void **state)
{
    (void)state;
    sk_svcrange r;
    assert_int_equal(sk_svcrange_parse_cidr("192.168.7.77/24", &r), SK_OK);
    assert_string_equal(r.spec, "192.168.7.0/24");
    assert_int_equal(r.size, 254);
    assert_int_equal(r.static_band, 16); /* 256/16 = 16 */
    assert_int_equal(sk_svcrange_parse_cidr("10.0.0.0/20", &r), SK_OK);
    assert_int_equal(r.static_band, 256); /* 4096/16 */
    assert_int_equal(sk_svcrange_parse_cidr("10.0.0.0/22", &r), SK_OK);
    assert_int_equal(r.static_band, 64);
    assert_int_equal(sk_svcrange_parse_cidr("10.0.0.0/28", &r), SK_OK);
    assert_int_equal(r.static_band, 0); /* 16 addresses: no band */
    assert_int_equal(r.size, 14);
}

static void test_cidr_malformed(void **state)
{
    (void)state;
    sk_svcrange r;
    const char *bad[] = {"",
                         "10.96.0.0",
                         "10.96.0.0/",
                         "10.96.0.0/11",
                         "10.96.0.0/31",
                         "10.96.0/12",
                         "10.256.0.0/12",
                         "10.96.0.0/12x",
                         "fd00::/108",
                         "10.96.0.0/-12",
                         "10.96.0.0000/12",
                         " 10.96.0.0/12"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(sk_svcrange_parse_cidr(bad[i], &r), SK_ERR_INVALID);
    assert_int_equal(sk_svcrange_parse_cidr("10.96.0.0/12", &r), SK_OK);
    uint32_t v;
    assert_int_equal(sk_svcrange_value(&r, "10.96.0", &v), -1);
    assert_int_equal(sk_svcrange_value(&r, "10.96.0.1 ", &v), -1);
    assert_int_equal(sk_svcrange_value(&r, "None", &v), -1);
}

static void test_ports(void **state)
{
    (void)state;
    sk_svcrange r;
    assert_int_equal(sk_svcrange_parse_ports("30000-32767", &r), SK_OK);
    assert_string_equal(r.spec, "30000-32767");
    assert_int_equal(r.base, 30000);
    assert_int_equal(r.size, 2768);
    assert_int_equal(r.static_band, 86); /* 2768/32 */
    uint32_t off;
    assert_true(sk_svcrange_contains(&r, 32767, &off));
    assert_false(sk_svcrange_contains(&r, 32768, &off));
    assert_false(sk_svcrange_contains(&r, 29999, &off));
    assert_int_equal(sk_svcrange_parse_ports("20000-29999", &r), SK_OK);
    assert_int_equal(r.static_band, 128); /* capped */
    assert_int_equal(sk_svcrange_parse_ports("8080", &r), SK_OK);
    assert_int_equal(r.size, 1);
    assert_int_equal(r.static_band, 0);
    char text[SK_SVCRANGE_TEXT_MAX];
    sk_svcrange_format(&r, 8080, text);
    assert_string_equal(text, "8080");
    const char *bad[] = {"", "0-10", "10-5", "1-65536", "30000-", "-5", "a-b", "300000"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(sk_svcrange_parse_ports(bad[i], &r), SK_ERR_INVALID);
}

/* A small generator, so the test is deterministic. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_pick_bands(void **state)
{
    (void)state;
    sk_svcrange r;
    assert_int_equal(sk_svcrange_parse_ports("30000-30099", &r), SK_OK);
    assert_int_equal(r.static_band, 16);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int seen[100] = {0};
    for (int i = 0; i < 20000; i++) {
        uint32_t v = sk_svcrange_pick(&r, next_random(&seed));
        assert_true(v >= 30016 && v <= 30099); /* above the band */
        seen[v - 30000] = 1;
    }
    for (int i = 16; i < 100; i++) /* every value above it is reachable */
        assert_true(seen[i]);
    assert_int_equal(sk_svcrange_parse_cidr("10.96.0.0/12", &r), SK_OK);
    for (int i = 0; i < 1000; i++) {
        uint32_t off, v = sk_svcrange_pick(&r, next_random(&seed));
        assert_true(sk_svcrange_contains(&r, v, &off));
        assert_true(off >= 256);
    }
    /* Extremes of the random number stay inside. */
    uint32_t off;
    assert_true(sk_svcrange_contains(&r, sk_svcrange_pick(&r, UINT64_MAX), &off));
    assert_true(sk_svcrange_contains(&r, sk_svcrange_pick(&r, 0), &off));
    assert_int_equal(off, 256);
}

static void set_used(unsigned char *used, uint32_t i)
{
    used[i / 8] |= (unsigned char)(1u << (i % 8));
}

/* The scan fills the band above the static one first, then the static one,
 * and finds the last free value wherever it is. */
static void test_scan(void **state)
{
    (void)state;
    sk_svcrange r;
    assert_int_equal(sk_svcrange_parse_ports("40000-40031", &r), SK_OK);
    assert_int_equal(r.static_band, 16);
    unsigned char used[4] = {0};
    uint64_t seed = 12345;
    for (int i = 0; i < 32; i++) {
        uint32_t v;
        assert_int_equal(sk_svcrange_scan(&r, used, next_random(&seed), &v), 0);
        uint32_t off = v - 40000;
        assert_false(used[off / 8] >> (off % 8) & 1);
        if (i < 16)
            assert_true(off >= 16);
        else
            assert_true(off < 16);
        set_used(used, off);
    }
    uint32_t v = 7;
    assert_int_equal(sk_svcrange_scan(&r, used, next_random(&seed), &v), -1);
    assert_int_equal(v, 7);
    used[1] &= (unsigned char)~(1u << 3); /* offset 11 free again */
    for (int i = 0; i < 20; i++) {
        assert_int_equal(sk_svcrange_scan(&r, used, next_random(&seed), &v), 0);
        assert_int_equal(v, 40011);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_cidr),   cmocka_unit_test(test_cidr_host_bits_and_sizes),
        cmocka_unit_test(test_cidr_malformed), cmocka_unit_test(test_ports),
        cmocka_unit_test(test_pick_bands),     cmocka_unit_test(test_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
