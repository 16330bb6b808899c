/*
 * lib_net.c - k8s.io/apiserver/pkg/cel/library/ip.go and cidr.go at
 * release-1.32: net.IP and net.CIDR values over a port of Go's
 * net/netip parsing (ParseAddr, ParsePrefix as of Go 1.22+, which rejects
 * a sign or leading zero in the prefix length), with kube's own refusals
 * (zones, IPv4-mapped IPv6 addresses) and error messages.
 *
 * An address is 16 bytes and a flag for IPv4 (its 4 bytes in the last 4);
 * a CIDR is an address and a prefix length, the address bits past the
 * prefix kept as written (cidr('192.168.0.1/24').ip() is 192.168.0.1) so
 * masked() differs. Two IPs are equal when their family and bytes are;
 * two CIDRs when their address and length are (kube compares netip
 * values). Every function's work is bounded by the 45-odd characters an
 * address may have, beyond the string's length the evaluator charged.
 */
#include "cel/lib_net.h"

#include "cel/quote.h"
#include "core/util.h"

#include <stdio.h>
#include <string.h>

typedef struct addr {
    uint8_t b[16];
    int is4;
} addr;

typedef struct prefix {
    addr ip;
    int bits;
} prefix;

static int ip_equal(const void *x, const void *y)
{
    const addr *a = x, *b = y;
    return a->is4 == b->is4 && memcmp(a->b, b->b, 16) == 0;
}

static int cidr_equal(const void *x, const void *y)
{
    const prefix *a = x, *b = y;
    return a->bits == b->bits && ip_equal(&a->ip, &b->ip);
}

static size_t fixed_size(const void *x)
{
    (void)x;
    return sizeof(prefix);
}

/* kube's IP.Size and CIDR.Size: the address's bytes, the prefix's */
static uint64_t ip_cost_size(const void *x)
{
    return ((const addr *)x)->is4 ? 4 : 16;
}

static uint64_t cidr_cost_size(const void *x)
{
    return (uint64_t)(((const prefix *)x)->bits + 7) / 8;
}

static const sk_cel_opaque_type ip_type = {"net.IP", ip_equal, fixed_size, ip_cost_size};
static const sk_cel_opaque_type cidr_type = {"net.CIDR", cidr_equal, fixed_size, cidr_cost_size};

static int is(const sk_cel_val *v, const sk_cel_opaque_type *t)
{
    return v->type == SK_CEL_V_OPAQUE && v->u.opaque.type == t;
}

/* ---- netip ---- */

/* A parse error: netip's message and the unparsed rest it names (or
 * NULL). */
typedef struct why {
    const char *msg;
    const char *at;
    size_t at_len;
} why;

static int fail(why *w, const char *msg, const char *at, size_t at_len)
{
    w->msg = msg;
    w->at = at;
    w->at_len = at_len;
    return 0;
}

/* netip's parseIPv4 over s[0..n): 1 with out[0..4), or 0 with *w. */
static int parse4(const char *s, size_t n, uint8_t out[4], why *w)
{
    int val = 0, pos = 0, digits = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            if (digits == 1 && val == 0)
                return fail(w, "IPv4 field has octet with leading zero", NULL, 0);
            val = val * 10 + s[i] - '0';
            digits++;
            if (val > 255)
                return fail(w, "IPv4 field has value >255", NULL, 0);
        } else if (s[i] == '.') {
            if (i == 0 || i == n - 1 || s[i - 1] == '.')
                return fail(w, "IPv4 field must have at least one digit", s + i, n - i);
            if (pos == 3)
                return fail(w, "IPv4 address too long", NULL, 0);
            out[pos++] = (uint8_t)val;
            val = 0;
            digits = 0;
        } else {
            return fail(w, "unexpected character", s + i, n - i);
        }
    }
    if (pos < 3)
        return fail(w, "IPv4 address too short", NULL, 0);
    out[3] = (uint8_t)val;
    return 1;
}

/* netip's parseIPv6 over s[0..n) (in: the whole input, for messages);
 * *zoned is set when a zone followed. */
static int parse6(const char *s, size_t n, uint8_t ip[16], int *zoned, why *w, sk_arena *a)
{
    const char *pct = memchr(s, '%', n);
    *zoned = 0;
    if (pct) {
        if ((size_t)(pct - s) == n - 1)
            return fail(w, "zone must be a non-empty string", NULL, 0);
        n = (size_t)(pct - s);
        *zoned = 1;
    }
    memset(ip, 0, 16);
    int ellipsis = -1, i = 0;
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        ellipsis = 0;
        s += 2, n -= 2;
        if (n == 0)
            return 1;
    }
    while (i < 16) {
        size_t off = 0;
        uint32_t acc = 0;
        for (; off < n && sk_hex_value(s[off]) >= 0; off++) {
            acc = (acc << 4) + (uint32_t)sk_hex_value(s[off]);
            if (acc > 0xFFFF)
                return fail(w, "IPv6 field has value >=2^16", s, n);
        }
        if (off == 0)
            return fail(w, "each colon-separated field must have at least one digit", s, n);
        if (off < n && s[off] == '.') {
            if (ellipsis < 0 && i != 12)
                return fail(w,
                            "embedded IPv4 address must replace the final 2 fields of the "
                            "address",
                            s, n);
            if (i + 4 > 16)
                return fail(w,
                            "too many hex fields to fit an embedded IPv4 at the end of the "
                            "address",
                            s, n);
            why w4;
            if (!parse4(s, n, ip + i, &w4)) {
                /* netip nests the IPv4 error's own message */
                const char *q = sk_cel_go_quote(a, s, n);
                const char *inner = w4.at
                                        ? sk_arena_printf(a, "ParseAddr(%s): %s (at %s)", q, w4.msg,
                                                          sk_cel_go_quote(a, w4.at, w4.at_len))
                                        : sk_arena_printf(a, "ParseAddr(%s): %s", q, w4.msg);
                return fail(w, inner, s, n);
            }
            i += 4;
            n = 0;
            break;
        }
        ip[i] = (uint8_t)(acc >> 8);
        ip[i + 1] = (uint8_t)acc;
        i += 2;
        s += off, n -= off;
        if (n == 0)
            break;
        if (s[0] != ':')
            return fail(w, "unexpected character, want colon", s, n);
        if (n == 1)
            return fail(w, "colon must be followed by more characters", s, n);
        s++, n--;
        if (s[0] == ':') {
            if (ellipsis >= 0)
                return fail(w, "multiple :: in address", s, n);
            ellipsis = i;
            s++, n--;
            if (n == 0)
                break;
        }
    }
    if (n != 0)
        return fail(w, "trailing garbage after address", s, n);
    if (i < 16) {
        if (ellipsis < 0)
            return fail(w, "address string too short", NULL, 0);
        int gap = 16 - i;
        for (int j = i - 1; j >= ellipsis; j--)
            ip[j + gap] = ip[j];
        for (int j = ellipsis + gap - 1; j >= ellipsis; j--)
            ip[j] = 0;
    } else if (ellipsis >= 0) {
        return fail(w, "the :: must expand to at least one field of zeros", NULL, 0);
    }
    return 1;
}

/* netip.ParseAddr: 1 with *out, or 0 with *err netip's message. */
static int parse_addr(sk_arena *a, const char *s, size_t n, addr *out, int *zoned, const char **err)
{
    why w = {0};
    int ok = 0, kind = 0;
    *zoned = 0;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n && !kind; i++)
        kind = s[i] == '.' ? 4 : s[i] == ':' ? 6 : s[i] == '%' ? '%' : 0;
    if (kind == 4) {
        ok = parse4(s, n, out->b + 12, &w);
        out->is4 = 1;
    } else if (kind == 6) {
        ok = parse6(s, n, out->b, zoned, &w, a);
    } else {
        fail(&w, kind == '%' ? "missing IPv6 address" : "unable to parse IP", NULL, 0);
    }
    if (!ok) {
        const char *q = sk_cel_go_quote(a, s, n);
        *err = w.at ? sk_arena_printf(a, "ParseAddr(%s): %s (at %s)", q, w.msg,
                                      sk_cel_go_quote(a, w.at, w.at_len))
                    : sk_arena_printf(a, "ParseAddr(%s): %s", q, w.msg);
    }
    return ok;
}

static int is4in6(const addr *ip)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !ip->is4 && memcmp(ip->b, prefix, 12) == 0;
}

/* Addr.String(): dotted IPv4, or RFC 5952 IPv6 (the first longest run of
 * two or more zero fields as ::). */
static const char *addr_string(sk_arena *a, const addr *ip)
{
    char buf[64];
    size_t o = 0;
    if (ip->is4) {
        snprintf(buf, sizeof buf, "%u.%u.%u.%u", ip->b[12], ip->b[13], ip->b[14], ip->b[15]);
        return sk_arena_strdup(a, buf);
    }
    unsigned f[8];
    for (int i = 0; i < 8; i++)
        f[i] = (unsigned)ip->b[2 * i] << 8 | ip->b[2 * i + 1];
    int zs = -1, ze = -1;
    for (int i = 0; i < 8; i++) {
        int j = i;
        while (j < 8 && f[j] == 0)
            j++;
        if (j - i >= 2 && j - i > ze - zs)
            zs = i, ze = j;
    }
    for (int i = 0; i < 8; i++) {
        if (i == zs) {
            o += (size_t)snprintf(buf + o, sizeof buf - o, "::");
            i = ze - 1;
            continue;
        }
        if (i > 0 && i != ze)
            buf[o++] = ':';
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%x", f[i]);
    }
    buf[o] = 0;
    return sk_arena_strdup(a, buf);
}

/* ---- the libraries ---- */

/* kube's parseIPAddr: NULL with *err kube's message. */
static addr *parse_ip(sk_arena *a, const sk_cel_val *s, const char **err)
{
    addr *ip = sk_arena_alloc(a, sizeof *ip);
    int zoned;
    const char *why = NULL;
    const char *q = sk_cel_go_quote(a, s->u.str.s, s->u.str.len);
    if (!parse_addr(a, s->u.str.s, s->u.str.len, ip, &zoned, &why))
        *err = sk_arena_printf(a, "IP Address %s parse error during conversion from string: %s", q,
                               why);
    else if (zoned)
        *err = sk_arena_printf(a, "IP address %s with zone value is not allowed", q);
    else if (is4in6(ip))
        *err = sk_arena_printf(a, "IPv4-mapped IPv6 address %s is not allowed", q);
    else
        return ip;
    return NULL;
}

/* kube's parseCIDR over netip.ParsePrefix: NULL with *err kube's
 * message (stringToCIDR's prefix and parseCIDR's). */
static prefix *parse_cidr(sk_arena *a, const sk_cel_val *v, const char **err)
{
    const char *s = v->u.str.s;
    size_t n = v->u.str.len;
    const char *q = sk_cel_go_quote(a, s, n);
    const char *why = NULL;
    prefix *p = sk_arena_alloc(a, sizeof *p);
    const char *slash = NULL;
    for (size_t i = n; i > 0 && !slash; i--)
        if (s[i - 1] == '/')
            slash = s + i - 1;
    int zoned = 0;
    if (!slash) {
        why = "no '/'";
    } else if (!parse_addr(a, s, (size_t)(slash - s), &p->ip, &zoned, &why)) {
        /* why is set */
    } else if (zoned) {
        why = "IPv6 zones cannot be present in a prefix";
    } else {
        const char *b = slash + 1;
        size_t bl = n - (size_t)(b - s);
        long bits = 0;
        int ok = bl > 0 && bl <= 4 && !(bl > 1 && (b[0] < '1' || b[0] > '9'));
        for (size_t i = 0; ok && i < bl; i++) {
            ok = b[i] >= '0' && b[i] <= '9';
            bits = bits * 10 + (b[i] - '0');
        }
        if (!ok)
            why = sk_arena_printf(a, "bad bits after slash: %s", sk_cel_go_quote(a, b, bl));
        else if (bits > (p->ip.is4 ? 32 : 128))
            why = "prefix length out of range";
        else
            p->bits = (int)bits;
    }
    if (why) {
        *err = sk_arena_printf(a,
                               "network address parse error during conversion from string: "
                               "network address parse error during conversion from string: "
                               "netip.ParsePrefix(%s): %s",
                               q, why);
        return NULL;
    }
    if (is4in6(&p->ip)) {
        *err = sk_arena_printf(a,
                               "network address parse error during conversion from string: "
                               "IPv4-mapped IPv6 address %s is not allowed",
                               q);
        return NULL;
    }
    return p;
}

/* ip's bytes with all but the first bits bits cleared (IPv4: of its 4). */
static addr mask(const addr *ip, int bits)
{
    addr m = *ip;
    int first = ip->is4 ? 12 : 0;
    for (int i = first; i < 16; i++) {
        int have = bits - (i - first) * 8;
        m.b[i] &= have >= 8 ? 0xff : have <= 0 ? 0 : (uint8_t)(0xff << (8 - have));
    }
    return m;
}

static const sk_cel_val *ip_method(sk_cel_env *env, const char *f, const addr *ip)
{
    sk_arena *a = sk_cel_env_arena(env);
    const uint8_t *b = ip->b;
    static const uint8_t zero[16];
    int all_zero = memcmp(b + (ip->is4 ? 12 : 0), zero, ip->is4 ? 4 : 16) == 0;
    int loopback = ip->is4 ? b[12] == 127 : memcmp(b, zero, 15) == 0 && b[15] == 1;
    int multicast = ip->is4 ? (b[12] & 0xf0) == 0xe0 : b[0] == 0xff;
    int ll_unicast = ip->is4 ? b[12] == 169 && b[13] == 254 : b[0] == 0xfe && (b[1] & 0xc0) == 0x80;
    if (strcmp(f, "family") == 0)
        return sk_cel_int(a, ip->is4 ? 4 : 6);
    if (strcmp(f, "isUnspecified") == 0)
        return sk_cel_bool(all_zero);
    if (strcmp(f, "isLoopback") == 0)
        return sk_cel_bool(loopback);
    if (strcmp(f, "isLinkLocalMulticast") == 0)
        return sk_cel_bool(ip->is4 ? b[12] == 224 && b[13] == 0 && b[14] == 0
                                   : b[0] == 0xff && (b[1] & 0x0f) == 0x02);
    if (strcmp(f, "isLinkLocalUnicast") == 0)
        return sk_cel_bool(ll_unicast);
    if (strcmp(f, "isGlobalUnicast") == 0) {
        int broadcast = ip->is4 && b[12] == 255 && b[13] == 255 && b[14] == 255 && b[15] == 255;
        return sk_cel_bool(!all_zero && !broadcast && !loopback && !multicast && !ll_unicast);
    }
    return NULL;
}

static const sk_cel_val *cidr_method(sk_cel_env *env, const char *f, const prefix *p,
                                     const sk_cel_val *arg)
{
    sk_arena *a = sk_cel_env_arena(env);
    const char *err = NULL;
    if (!arg && strcmp(f, "ip") == 0)
        return sk_cel_opaque(a, &ip_type, &p->ip);
    if (!arg && strcmp(f, "prefixLength") == 0)
        return sk_cel_int(a, p->bits);
    if (!arg && strcmp(f, "masked") == 0) {
        prefix *m = sk_arena_alloc(a, sizeof *m);
        m->ip = mask(&p->ip, p->bits);
        m->bits = p->bits;
        return sk_cel_opaque(a, &cidr_type, m);
    }
    if (arg && strcmp(f, "containsIP") == 0) {
        const addr *ip = NULL;
        if (is(arg, &ip_type))
            ip = arg->u.opaque.data;
        else if (arg->type == SK_CEL_V_STRING)
            ip = parse_ip(a, arg, &err);
        /* kube passes a failed parse on as no such overload */
        if (!ip)
            return sk_cel_error(a, "no such overload");
        if (ip->is4 != p->ip.is4)
            return sk_cel_bool(0);
        addr x = mask(ip, p->bits), y = mask(&p->ip, p->bits);
        return sk_cel_bool(memcmp(x.b, y.b, 16) == 0);
    }
    if (arg && strcmp(f, "containsCIDR") == 0) {
        const prefix *o = NULL;
        if (is(arg, &cidr_type))
            o = arg->u.opaque.data;
        else if (arg->type == SK_CEL_V_STRING)
            o = parse_cidr(a, arg, &err);
        if (!o)
            return err ? sk_cel_error(a, "%s", err) : sk_cel_error(a, "no such overload");
        /* kube's p.Masked() == netip.PrefixFrom(o.Addr(), p.Bits()):
         * PrefixFrom does not mask, so o's address as written must be p's
         * masked one (cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') is
         * false in kube 1.32, and so here) */
        addr pm = mask(&p->ip, p->bits);
        int equal = o->ip.is4 == p->ip.is4 && memcmp(pm.b, o->ip.b, 16) == 0;
        return sk_cel_bool(equal && p->bits <= o->bits);
    }
    return NULL;
}

const sk_cel_val *sk_cel_lib_net(sk_cel_env *env, const char *f, int method,
                                 const sk_cel_val *const *v, size_t n)
{
    sk_arena *a = sk_cel_env_arena(env);
    const char *err = NULL;
    if (method) {
        if (is(v[0], &ip_type) && n == 1)
            return ip_method(env, f, v[0]->u.opaque.data);
        if (is(v[0], &cidr_type) && n <= 2)
            return cidr_method(env, f, v[0]->u.opaque.data, n == 2 ? v[1] : NULL);
        return NULL;
    }
    if (n != 1)
        return NULL;
    int to_ip = strcmp(f, "ip") == 0, to_cidr = strcmp(f, "cidr") == 0;
    int is_ip = strcmp(f, "isIP") == 0, is_cidr = strcmp(f, "isCIDR") == 0;
    int canonical = strcmp(f, "ip.isCanonical") == 0;
    if (strcmp(f, "string") == 0) {
        const char *s = NULL;
        if (is(v[0], &ip_type)) {
            s = addr_string(a, v[0]->u.opaque.data);
        } else if (is(v[0], &cidr_type)) {
            const prefix *p = v[0]->u.opaque.data;
            s = sk_arena_printf(a, "%s/%d", addr_string(a, &p->ip), p->bits);
        }
        return s ? sk_cel_string(a, s, strlen(s)) : NULL;
    }
    if (!(to_ip || to_cidr || is_ip || is_cidr || canonical))
        return NULL;
    if (v[0]->type != SK_CEL_V_STRING)
        return sk_cel_error(a, "no such overload");
    if (to_cidr || is_cidr) {
        prefix *p = parse_cidr(a, v[0], &err);
        if (is_cidr)
            return sk_cel_bool(p != NULL);
        return p ? sk_cel_opaque(a, &cidr_type, p) : sk_cel_error(a, "%s", err);
    }
    addr *ip = parse_ip(a, v[0], &err);
    if (is_ip)
        return sk_cel_bool(ip != NULL);
    if (!ip)
        return sk_cel_error(a, "%s", err);
    if (canonical) {
        const char *s = addr_string(a, ip);
        return sk_cel_bool(strlen(s) == v[0]->u.str.len &&
                           memcmp(s, v[0]->u.str.s, strlen(s)) == 0);
    }
    return sk_cel_opaque(a, &ip_type, ip);
}
