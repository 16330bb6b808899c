/*
 * strfmt.c - the string formats kube-apiserver 1.32 checks in custom
 * resources: kube-openapi's strfmt.Default registry, less what
 * apiextensions' StripUnsupportedFormatsPostProcess removes (int32, int64,
 * float, double... are dropped from CRD schemas and never checked).
 *
 * Each checker mirrors the Go function the registry calls (govalidator,
 * net.ParseIP, time.Parse...). Exact: uuid/uuid3/4/5, date, date-time,
 * ipv4, ipv6, cidr, mac, byte, bsonobjectid, isbn10/13, ssn, hexcolor,
 * rgbcolor, password. Close approximations (the Go parsers are large and
 * their corner cases rare in CRDs): hostname (non-ASCII bytes count as
 * letters), email (no RFC 5322 display names or quoting), uri (scheme or
 * absolute path, no further URL parsing), duration, creditcard (Luhn over
 * 13-16 digits, no issuer prefixes).
 */
#include "kube/strfmt.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int all_of(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i]))
            return 0;
    return 1;
}

static const char hexd[] = "0123456789abcdefABCDEF";
static const char digits[] = "0123456789";

/* (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?V[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$ */
static int is_uuid(const char *s, char version)
{
    static const int groups[] = {8, 4, 4, 4, 12};
    for (int g = 0; g < 5; g++) {
        if (g && *s == '-')
            s++;
        if (!all_of(s, (size_t)groups[g], hexd))
            return 0;
        if (version && g == 2 && s[0] != version)
            return 0;
        if (version && version != '3' && g == 3 && !strchr("89abAB", s[0]))
            return 0;
        s += groups[g];
    }
    return *s == '\0';
}

static int days_in(int y, int m)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0) ? 29 : d[m - 1];
}

/* time.Parse("2006-01-02", s) */
static int is_date(const char *s, size_t n)
{
    if (n != 10 || !all_of(s, 4, digits) || s[4] != '-' || !all_of(s + 5, 2, digits) ||
        s[7] != '-' || !all_of(s + 8, 2, digits))
        return 0;
    int y = atoi(s), m = (s[5] - '0') * 10 + s[6] - '0', d = (s[8] - '0') * 10 + s[9] - '0';
    return m >= 1 && m <= 12 && d >= 1 && d <= days_in(y, m);
}

/* strfmt.IsDateTime: a date, a 't' (any case), then
 * hh:mm:ss(.frac)?(z|+hh:mm) with hh <= 23, mm, ss <= 59. */
static int is_date_time(const char *s)
{
    size_t n = strlen(s);
    const char *t = NULL;
    for (size_t i = 0; i < n && !t; i++)
        if (s[i] == 't' || s[i] == 'T')
            t = s + i;
    if (n < 4 || !t || !is_date(s, (size_t)(t - s)))
        return 0;
    const char *c = t + 1, *end;
    /* Only the part up to the next 't' counts, as strings.Split does. */
    for (end = c; *end && *end != 't' && *end != 'T'; end++)
        ;
    size_t len = (size_t)(end - c);
    if (len < 9 || !all_of(c, 2, digits) || c[2] != ':' || !all_of(c + 3, 2, digits) ||
        c[5] != ':' || !all_of(c + 6, 2, digits))
        return 0;
    if (strncmp(c, "23", 2) > 0 || strncmp(c + 3, "59", 2) > 0 || strncmp(c + 6, "59", 2) > 0)
        return 0;
    size_t i = 8;
    if (i < len && c[i] != 'z' && c[i] != 'Z' && c[i] != '+' && c[i] != '-') {
        i++; /* any one character, then digits */
        size_t start = i;
        while (i < len && isdigit((unsigned char)c[i]))
            i++;
        if (i == start)
            return 0;
    }
    if (i < len && (c[i] == 'z' || c[i] == 'Z'))
        return i + 1 == len;
    return i + 6 == len && (c[i] == '+' || c[i] == '-') && all_of(c + i + 1, 2, digits) &&
           c[i + 3] == ':' && all_of(c + i + 4, 2, digits);
}

/* netutils.ParseIPSloppy for IPv4: four decimal octets, leading zeros allowed. */
static int is_ipv4_sloppy(const char *s, size_t n)
{
    int parts = 0;
    size_t i = 0;
    while (i <= n) {
        size_t start = i;
        int v = 0;
        while (i < n && isdigit((unsigned char)s[i]) && i - start < 3)
            v = v * 10 + (s[i++] - '0');
        if (i == start || v > 255)
            return 0;
        parts++;
        if (i == n)
            break;
        if (s[i] != '.')
            return 0;
        i++;
    }
    return parts == 4;
}

static int is_ipv6(const char *s, size_t n)
{
    char buf[64];
    unsigned char out[16];
    if (n >= sizeof buf || !memchr(s, ':', n))
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    /* Go accepts an embedded IPv4 with leading zeros; inet_pton does not. */
    const char *dot = strchr(buf, '.');
    if (dot) {
        char *last = strrchr(buf, ':');
        if (!last || last > dot || !is_ipv4_sloppy(last + 1, strlen(last + 1)))
            return 0;
        strcpy(last + 1, "0.0.0.0");
    }
    return inet_pton(AF_INET6, buf, out) == 1;
}

static int is_cidr(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash || !slash[1] || strlen(slash + 1) > 3 ||
        !all_of(slash + 1, strlen(slash + 1), digits))
        return 0;
    int bits = atoi(slash + 1);
    size_t n = (size_t)(slash - s);
    if (is_ipv4_sloppy(s, n))
        return bits <= 32;
    return is_ipv6(s, n) && bits <= 128;
}

/* net.ParseMAC: 6, 8 or 20 octets as xx:xx.., xx-xx.. or xxxx.xxxx.. */
static int is_mac(const char *s)
{
    size_t n = strlen(s);
    if (n < 14)
        return 0;
    if (s[2] == ':' || s[2] == '-') {
        if ((n + 1) % 3 || ((n + 1) / 3 != 6 && (n + 1) / 3 != 8 && (n + 1) / 3 != 20))
            return 0;
        for (size_t i = 0; i < n; i += 3)
            if (!all_of(s + i, 2, hexd) || (i + 2 < n && s[i + 2] != s[2]))
                return 0;
        return 1;
    }
    if (s[4] == '.') {
        if ((n + 1) % 5 || ((n + 1) * 2 / 5 != 6 && (n + 1) * 2 / 5 != 8 && (n + 1) * 2 / 5 != 20))
            return 0;
        for (size_t i = 0; i < n; i += 5)
            if (!all_of(s + i, 4, hexd) || (i + 4 < n && s[i + 4] != '.'))
                return 0;
        return 1;
    }
    return 0;
}

static int is_isbn10(const char *s)
{
    int sum = 0, n = 0;
    for (; *s; s++) {
        if (*s == ' ' || *s == '-')
            continue;
        if (isdigit((unsigned char)*s) && n < 10)
            sum += (10 - n++) * (*s - '0');
        else if (*s == 'X' && n == 9)
            sum += 10, n++;
        else
            return 0;
    }
    return n == 10 && sum % 11 == 0;
}

static int is_isbn13(const char *s)
{
    int sum = 0, n = 0;
    for (; *s; s++) {
        if (*s == ' ' || *s == '-')
            continue;
        if (!isdigit((unsigned char)*s) || n >= 13)
            return 0;
        sum += (n++ % 2 ? 3 : 1) * (*s - '0');
    }
    return n == 13 && sum % 10 == 0;
}

/* Luhn over the digits, non-digits ignored as govalidator strips them. */
static int is_credit_card(const char *s)
{
    char d[32];
    size_t n = 0;
    for (; *s; s++)
        if (isdigit((unsigned char)*s)) {
            if (n == sizeof d)
                return 0;
            d[n++] = *s;
        }
    if (n < 13 || n > 16)
        return 0;
    int sum = 0;
    for (size_t i = 0; i < n; i++) {
        int v = d[n - 1 - i] - '0';
        if (i % 2) {
            v *= 2;
            if (v > 9)
                v -= 9;
        }
        sum += v;
    }
    return sum % 10 == 0;
}

/* ^\d{3}[- ]?\d{2}[- ]?\d{4}$ */
static int is_ssn(const char *s)
{
    if (!all_of(s, 3, digits))
        return 0;
    s += 3;
    if (*s == '-' || *s == ' ')
        s++;
    if (!all_of(s, 2, digits))
        return 0;
    s += 2;
    if (*s == '-' || *s == ' ')
        s++;
    return all_of(s, 4, digits) && s[4] == '\0';
}

static int is_hexcolor(const char *s)
{
    if (*s == '#')
        s++;
    size_t n = strlen(s);
    return (n == 3 || n == 6) && all_of(s, n, hexd);
}

/* rgb(r,g,b), each 0..255 without leading zeros, spaces around. */
static int is_rgbcolor(const char *s)
{
    if (strncmp(s, "rgb(", 4))
        return 0;
    s += 4;
    for (int i = 0; i < 3; i++) {
        while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
            s++;
        const char *start = s;
        int v = 0;
        while (isdigit((unsigned char)*s) && s - start < 3)
            v = v * 10 + (*s++ - '0');
        if (s == start || v > 255 || (*start == '0' && s - start > 1))
            return 0;
        while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
            s++;
        if (*s++ != (i < 2 ? ',' : ')'))
            return 0;
    }
    return *s == '\0';
}

/* ^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$ */
static int is_base64(const char *s)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s);
    if (n == 0 || n % 4)
        return 0;
    size_t pad = s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0;
    return all_of(s, n - pad, b64);
}

/* RFC 1034 host names (strfmt's HostnamePattern, with non-ASCII letters
 * taken as letters); the length limits are strfmt's own. */
static int is_hostname(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 255)
        return 0;
    const char *label = s;
    int labels = 0;
    for (const char *c = s;; c++) {
        if (*c == '.' || *c == '\0') {
            size_t len = (size_t)(c - label);
            if (len == 0 || len > 63 || label[0] == '-' || label[len - 1] == '-')
                return 0;
            labels++;
            if (*c == '\0')
                break;
            label = c + 1;
            continue;
        }
        if (!isalnum((unsigned char)*c) && *c != '-' && !((unsigned char)*c & 0x80))
            return 0;
    }
    if (labels == 1)
        return 1;
    /* The top-level label is letters only, at least two. */
    size_t tld = strlen(label);
    if (tld < 2)
        return 0;
    for (size_t i = 0; i < tld; i++)
        if (!isalpha((unsigned char)label[i]) && !((unsigned char)label[i] & 0x80))
            return 0;
    return 1;
}

/* net/mail.ParseAddress, roughly: local@domain, no spaces or angle brackets. */
static int is_email(const char *s)
{
    const char *at = strrchr(s, '@');
    return at && at != s && at[1] && !strpbrk(s, " \t<>()[]\\,;:\"");
}

/* url.ParseRequestURI: an absolute URI (scheme:) or an absolute path. */
static int is_request_uri(const char *s)
{
    if (*s == '/')
        return !strpbrk(s, " \t\n");
    if (!isalpha((unsigned char)*s))
        return 0;
    const char *c = s;
    while (isalnum((unsigned char)*c) || *c == '+' || *c == '-' || *c == '.')
        c++;
    return *c == ':' && !strpbrk(s, " \t\n");
}

/* time.ParseDuration, or strfmt's "<n> <unit>" form. */
static int is_duration(const char *s)
{
    static const char *const units[] = {"ns", "us", "µs", "μs", "ms", "s",
                                        "m",  "h",  "d",  "w",  NULL};
    if (*s == '-' || *s == '+')
        s++;
    if (!strcmp(s, "0"))
        return 1;
    if (!*s)
        return 0;
    while (*s) {
        const char *start = s;
        while (isdigit((unsigned char)*s) || *s == '.')
            s++;
        if (s == start)
            return 0;
        while (*s == ' ')
            s++;
        size_t best = 0;
        for (size_t i = 0; units[i]; i++) {
            size_t l = strlen(units[i]);
            if (!strncmp(s, units[i], l) && l > best)
                best = l;
        }
        if (!best)
            return 0;
        s += best;
    }
    return 1;
}

static int f_password(const char *s)
{
    (void)s;
    return 1;
}
static int f_uuid(const char *s)
{
    return is_uuid(s, 0);
}
static int f_uuid3(const char *s)
{
    return is_uuid(s, '3');
}
static int f_uuid4(const char *s)
{
    return is_uuid(s, '4');
}
static int f_uuid5(const char *s)
{
    return is_uuid(s, '5');
}
static int f_date(const char *s)
{
    return is_date(s, strlen(s));
}
static int f_ipv4(const char *s)
{
    /* ParseIPSloppy and a dot: an IPv4, or an IPv6 with an embedded IPv4. */
    return is_ipv4_sloppy(s, strlen(s)) || (strchr(s, '.') && is_ipv6(s, strlen(s)));
}
static int f_ipv6(const char *s)
{
    return is_ipv6(s, strlen(s));
}
static int f_isbn(const char *s)
{
    return is_isbn10(s) || is_isbn13(s);
}
static int f_bson(const char *s)
{
    return strlen(s) == 24 && all_of(s, 24, hexd);
}

/* The formats StripUnsupportedFormatsPostProcess keeps, by normalized name
 * ("-" removed); any other format is ignored. */
static const struct {
    const char *name;
    sk_strfmt_check ok;
} formats[] = {
    {"bsonobjectid", f_bson},  {"uri", is_request_uri},
    {"email", is_email},       {"hostname", is_hostname},
    {"ipv4", f_ipv4},          {"ipv6", f_ipv6},
    {"cidr", is_cidr},         {"mac", is_mac},
    {"uuid", f_uuid},          {"uuid3", f_uuid3},
    {"uuid4", f_uuid4},        {"uuid5", f_uuid5},
    {"isbn", f_isbn},          {"isbn10", is_isbn10},
    {"isbn13", is_isbn13},     {"creditcard", is_credit_card},
    {"ssn", is_ssn},           {"hexcolor", is_hexcolor},
    {"rgbcolor", is_rgbcolor}, {"byte", is_base64},
    {"password", f_password},  {"date", f_date},
    {"duration", is_duration}, {"datetime", is_date_time},
};

sk_strfmt_check sk_strfmt_lookup(const char *format)
{
    char norm[32];
    size_t n = 0;
    for (; *format && n + 1 < sizeof norm; format++)
        if (*format != '-')
            norm[n++] = *format;
    if (*format)
        return NULL;
    norm[n] = '\0';
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (!strcmp(formats[i].name, norm))
            return formats[i].ok;
    return NULL;
}
