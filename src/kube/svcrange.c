/*
 * svcrange.c - see svcrange.h. The static band follows kube's
 * calculateRangeOffset: min(max(16, size / step), cap), 0 for ranges of 16
 * or fewer, with step 16 and cap 256 for cluster IPs (the size counted over
 * the whole CIDR), step 32 and cap 128 for node ports.
 */
#include "kube/svcrange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t band(uint64_t size, uint64_t step, uint64_t cap)
{
    if (size <= 16)
        return 0;
    uint64_t b = size / step;
    if (b < 16)
        b = 16;
    if (b > cap)
        b = cap;
    return (uint32_t)b;
}

/* A decimal number of 1..max_digits digits, no sign, no leading '+'. */
static const char *parse_dec(const char *p, int max_digits, uint32_t *out)
{
    uint32_t v = 0;
    int n = 0;
    while (*p >= '0' && *p <= '9' && n < max_digits) {
        v = v * 10 + (uint32_t)(*p - '0');
        p++;
        n++;
    }
    if (n == 0 || (*p >= '0' && *p <= '9'))
        return NULL;
    *out = v;
    return p;
}

/* A dotted IPv4 address; returns the end, NULL if malformed. */
static const char *parse_ipv4(const char *p, uint32_t *out)
{
    uint32_t ip = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t octet;
        if (i > 0 && *p++ != '.')
            return NULL;
        if (!(p = parse_dec(p, 3, &octet)) || octet > 255)
            return NULL;
        ip = ip << 8 | octet;
    }
    *out = ip;
    return p;
}

static void format_ipv4(uint32_t ip, char *out, size_t n)
{
    snprintf(out, n, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

sk_err sk_svcrange_parse_cidr(const char *text, sk_svcrange *out)
{
    uint32_t ip, bits;
    const char *p = parse_ipv4(text, &ip);
    if (!p || *p++ != '/' || !(p = parse_dec(p, 2, &bits)) || *p || bits < 12 || bits > 30)
        return SK_ERR_INVALID;
    uint64_t whole = (uint64_t)1 << (32 - bits);
    uint32_t network = ip & (uint32_t) ~(whole - 1);
    sk_svcrange r = {.is_ip = 1,
                     .base = network + 1,
                     .size = (uint32_t)(whole - 2),
                     .static_band = band(whole, 16, 256)};
    char addr[16];
    format_ipv4(network, addr, sizeof addr);
    snprintf(r.spec, sizeof r.spec, "%s/%u", addr, bits);
    *out = r;
    return SK_OK;
}

sk_err sk_svcrange_parse_ports(const char *text, sk_svcrange *out)
{
    uint32_t lo, hi;
    const char *p = parse_dec(text, 5, &lo);
    if (!p)
        return SK_ERR_INVALID;
    hi = lo;
    if (*p == '-' && !(p = parse_dec(p + 1, 5, &hi)))
        return SK_ERR_INVALID;
    if (*p || lo < 1 || hi > 65535 || hi < lo)
        return SK_ERR_INVALID;
    uint32_t size = hi - lo + 1;
    sk_svcrange r = {.is_ip = 0, .base = lo, .size = size, .static_band = band(size, 32, 128)};
    snprintf(r.spec, sizeof r.spec, "%u-%u", lo, hi);
    *out = r;
    return SK_OK;
}

int sk_svcrange_value(const sk_svcrange *r, const char *text, uint32_t *value_out)
{
    uint32_t v;
    const char *p = r->is_ip ? parse_ipv4(text, &v) : parse_dec(text, 5, &v);
    if (!p || *p)
        return -1;
    *value_out = v;
    return 0;
}

int sk_svcrange_contains(const sk_svcrange *r, uint32_t value, uint32_t *offset_out)
{
    if (value < r->base || value - r->base >= r->size)
        return 0;
    *offset_out = value - r->base;
    return 1;
}

void sk_svcrange_format(const sk_svcrange *r, uint32_t value, char out[SK_SVCRANGE_TEXT_MAX])
{
    if (r->is_ip)
        format_ipv4(value, out, SK_SVCRANGE_TEXT_MAX);
    else
        snprintf(out, SK_SVCRANGE_TEXT_MAX, "%u", value);
}

uint32_t sk_svcrange_pick(const sk_svcrange *r, uint64_t random)
{
    uint32_t from = r->static_band >= r->size ? 0 : r->static_band;
    return r->base + from + (uint32_t)(random % (r->size - from));
}

static int is_used(const unsigned char *used, uint32_t i)
{
    return used[i / 8] >> (i % 8) & 1;
}

/* The first free offset in [lo, hi) from a random start, wrapping. */
static int scan_band(const unsigned char *used, uint32_t lo, uint32_t hi, uint64_t random,
                     uint32_t *offset_out)
{
    if (hi <= lo)
        return -1;
    uint32_t n = hi - lo, start = (uint32_t)(random % n);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = lo + (start + k) % n;
        if (!is_used(used, i)) {
            *offset_out = i;
            return 0;
        }
    }
    return -1;
}

int sk_svcrange_scan(const sk_svcrange *r, const unsigned char *used, uint64_t random,
                     uint32_t *value_out)
{
    uint32_t band_end = r->static_band < r->size ? r->static_band : 0, offset;
    if (scan_band(used, band_end, r->size, random, &offset) < 0 &&
        scan_band(used, 0, band_end, random >> 32, &offset) < 0)
        return -1;
    *value_out = r->base + offset;
    return 0;
}
