/*
 * time.c - durations and timestamps (time.h): parsing and formatting as
 * Go's time package does them (cel-go calls it), arithmetic checked for
 * the ranges of time.h, and calendar fields in a time zone.
 *
 * Durations are computed in int64 nanoseconds, which is what cel-go's are;
 * timestamps in 128-bit nanoseconds, so that no sum of a timestamp and a
 * duration wraps before the range check sees it. Calendar arithmetic is
 * on days since the epoch (proleptic Gregorian, as Go's), so no libc time
 * function, locale or TZ variable is involved and the results do not
 * depend on the process's environment.
 *
 * A zone name is looked up as Go's time.LoadLocation and Location.lookup
 * do: the TZif file's transitions (its 64-bit part when it has one), the
 * first standard-time type before the first transition, and the POSIX TZ
 * rule in its footer past the last transition (tzdata's "slim" files rely
 * on it for every date after the rule took effect).
 */
#include "cel/time.h"
#include "core/civil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS 1000000000LL
/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds. */
#define MIN_UNIX (-62135596800LL)
#define MAX_UNIX 253402300799LL
#define DAY 86400
/* No TZif file comes near this (the largest in tzdata is some 4 KB). */
#define MAX_TZIF (256 * 1024)

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* ---- values ---- */

static const sk_cel_val *duration_ns(sk_arena *a, int64_t ns)
{
    return sk_cel_duration(a, floor_div(ns, NS), (int32_t)((ns % NS + NS) % NS));
}

static int64_t ns_of(const sk_cel_val *d)
{
    /* In 128 bits: the most negative duration's seconds times 1e9 are
     * below INT64_MIN before its nanoseconds are added. */
    return (int64_t)((__int128)d->u.time.sec * NS + d->u.time.nsec);
}

/* A timestamp of ns nanoseconds since the epoch shown at UTC offset off
 * (seconds east), or the range error. */
static const sk_cel_val *timestamp_ns(sk_arena *a, __int128 ns, int32_t off)
{
    __int128 sec = ns / NS - (ns % NS < 0);
    if (sec < MIN_UNIX || sec > MAX_UNIX)
        return sk_cel_error(a, "timestamp overflow");
    sk_cel_val *t = sk_cel_timestamp(a, (int64_t)sec, (int32_t)(ns - sec * NS));
    t->u.time.off = off;
    return t;
}

static __int128 ts_ns(const sk_cel_val *t)
{
    return (__int128)t->u.time.sec * NS + t->u.time.nsec;
}

/* ---- parsing ---- */

/* Go's time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+, or "0". */
static const sk_cel_val *parse_duration(sk_arena *a, const char *s, size_t len)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ns", 1},       {"us", 1000},         {"\xc2\xb5s", 1000},   {"\xce\xbcs", 1000},
        {"ms", 1000000}, {"s", 1000000000ULL}, {"m", 60000000000ULL}, {"h", 3600000000000ULL}};
    const uint64_t top = 1ULL << 63;
    const char *p = s, *end = s + len;
    int neg = 0;
    uint64_t d = 0;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    if (end - p == 1 && *p == '0')
        return sk_cel_duration(a, 0, 0);
    if (p == end)
        goto invalid;
    while (p < end) {
        uint64_t v = 0, f = 0;
        double scale = 1;
        if (!(*p == '.' || (*p >= '0' && *p <= '9')))
            goto invalid;
        const char *start = p;
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            if (v > top / 10)
                goto overflow;
            v = v * 10 + (uint64_t)(*p - '0');
            if (v > top)
                goto overflow;
        }
        int pre = p != start, post = 0;
        if (p < end && *p == '.') {
            int over = 0;
            start = ++p;
            for (; p < end && *p >= '0' && *p <= '9'; p++) {
                if (over)
                    continue;
                if (f > (top - 1) / 10) {
                    over = 1;
                    continue;
                }
                uint64_t y = f * 10 + (uint64_t)(*p - '0');
                if (y > top) {
                    over = 1;
                    continue;
                }
                f = y;
                scale *= 10;
            }
            post = p != start;
        }
        if (!pre && !post)
            goto invalid;
        start = p;
        while (p < end && *p != '.' && !(*p >= '0' && *p <= '9'))
            p++;
        size_t ul = (size_t)(p - start), u;
        for (u = 0; u < sizeof units / sizeof *units; u++)
            if (strlen(units[u].name) == ul && memcmp(units[u].name, start, ul) == 0)
                break;
        if (u == sizeof units / sizeof *units)
            goto invalid;
        uint64_t unit = units[u].ns;
        if (v > top / unit)
            goto overflow;
        v *= unit;
        if (f > 0) {
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > top)
                goto overflow;
        }
        d += v;
        if (d > top)
            goto overflow;
    }
    if (!neg && d > top - 1)
        goto overflow;
    return duration_ns(a, neg ? (int64_t)(0 - d) : (int64_t)d);
invalid:
    return sk_cel_error(a, "time: invalid duration \"%.*s\"", (int)len, s);
overflow:
    return sk_cel_error(a, "time: invalid duration \"%.*s\" (duration overflow)", (int)len, s);
}

/* n digits at s as a number in [lo, hi], or -1. */
static int digits(const char *s, int n, int lo, int hi)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + s[i] - '0';
    }
    return v < lo || v > hi ? -1 : v;
}

/* Go's time.Parse(time.RFC3339, s): YYYY-MM-DDTHH:MM:SS[.f...](Z|+hh:mm),
 * then cel-go's range check. */
static const sk_cel_val *parse_timestamp(sk_arena *a, const char *s, size_t len)
{
    int y, mo, d, h, mi, sec, off = 0;
    int64_t nsec = 0;
    size_t i = 19;
    if (len < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        goto bad;
    if ((y = digits(s, 4, 0, 9999)) < 0 || (mo = digits(s + 5, 2, 1, 12)) < 0 ||
        (d = digits(s + 8, 2, 1, 31)) < 0 || d > sk_civil_days_in_month(y, mo) ||
        (h = digits(s + 11, 2, 0, 23)) < 0 || (mi = digits(s + 14, 2, 0, 59)) < 0 ||
        (sec = digits(s + 17, 2, 0, 59)) < 0)
        goto bad;
    if (s[i] == '.' && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9') {
        /* Go keeps the first nine digits and ignores the rest. */
        int64_t scale = NS;
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            if (scale > 1)
                nsec += (s[i] - '0') * (scale /= 10);
    }
    if (len - i == 1 && s[i] == 'Z') {
        off = 0;
    } else if (len - i == 6 && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh = digits(s + i + 1, 2, 0, 23), om = digits(s + i + 4, 2, 0, 59);
        if (oh < 0 || om < 0)
            goto bad;
        off = (oh * 60 + om) * 60 * (s[i] == '-' ? -1 : 1);
    } else {
        goto bad;
    }
    int64_t when = sk_civil_days_from(y, mo, d) * DAY + h * 3600 + mi * 60 + sec - off;
    if (when < MIN_UNIX || when > MAX_UNIX)
        return sk_cel_error(a, "timestamp overflow");
    sk_cel_val *t = sk_cel_timestamp(a, when, (int32_t)nsec);
    t->u.time.off = off;
    return t;
bad:
    return sk_cel_error(a, "parsing time \"%.*s\" as \"2006-01-02T15:04:05Z07:00\"", (int)len, s);
}

/* ---- formatting ---- */

/* Go's time.Format(time.RFC3339Nano) at the timestamp's offset. */
static const sk_cel_val *format_timestamp(sk_arena *a, const sk_cel_val *t)
{
    int off = t->u.time.off;
    int64_t local = t->u.time.sec + off, days = floor_div(local, DAY), y, rem = local - days * DAY;
    int m, d;
    sk_civil_from_days(days, &y, &m, &d);
    char buf[48];
    int n = snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long)y, m, d,
                     (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
    if (t->u.time.nsec) {
        n += snprintf(buf + n, sizeof buf - (size_t)n, ".%09d", (int)t->u.time.nsec);
        while (buf[n - 1] == '0')
            n--;
    }
    if (off == 0)
        buf[n++] = 'Z';
    else
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%c%02d:%02d", off < 0 ? '-' : '+',
                      abs(off) / 3600, abs(off) / 60 % 60);
    return sk_cel_string(a, sk_arena_strndup(a, buf, (size_t)n), (size_t)n);
}

/* cel-go's string(duration): strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
 * + "s", the shortest decimal that reads back as the double, never in
 * exponent form. */
static const sk_cel_val *format_duration(sk_arena *a, const sk_cel_val *dur)
{
    int64_t ns = ns_of(dur);
    double secs = (double)(ns / NS) + (double)(ns % NS) / 1e9;
    char out[401];
    size_t o = sk_cel_double_text(secs, 'f', out);
    out[o++] = 's';
    return sk_cel_string(a, sk_arena_strndup(a, out, o), o);
}

/* ---- time zones ---- */

typedef struct tzrule {
    char kind; /* 'J' (1-365, no Feb 29), 'D' (0-365), 'M' (month.week.day) */
    int day, week, mon, time;
} tzrule;

/* Go's tzsetNum: digits forming a number in [lo, hi]. */
static int tz_num(const char **s, int lo, int hi, int *out)
{
    const char *p = *s;
    int v = 0;
    if (!(*p >= '0' && *p <= '9'))
        return 0;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((v = v * 10 + (*p - '0')) > hi)
            return 0;
    if (v < lo)
        return 0;
    *s = p;
    *out = v;
    return 1;
}

/* Go's tzsetOffset: [+-]hh[:mm[:ss]] as seconds, hours up to a week. */
static int tz_offset(const char **s, int *out)
{
    const char *p = *s;
    int neg = *p == '-', h, m = 0, sec = 0;
    if (*p == '+' || *p == '-')
        p++;
    if (!tz_num(&p, 0, 24 * 7, &h))
        return 0;
    if (*p == ':') {
        p++;
        if (!tz_num(&p, 0, 59, &m))
            return 0;
        if (*p == ':') {
            p++;
            if (!tz_num(&p, 0, 59, &sec))
                return 0;
        }
    }
    *s = p;
    *out = (h * 3600 + m * 60 + sec) * (neg ? -1 : 1);
    return 1;
}

/* Go's tzsetName: <...> or three or more characters up to a digit, ',',
 * '-' or '+'. */
static int tz_name(const char **s)
{
    const char *p = *s;
    if (*p == '<') {
        const char *q = strchr(p, '>');
        if (!q)
            return 0;
        *s = q + 1;
        return 1;
    }
    size_t n = strcspn(p, "0123456789,-+");
    if (n < 3)
        return 0;
    *s = p + n;
    return 1;
}

static int tz_rule(const char **s, tzrule *r)
{
    const char *p = *s;
    memset(r, 0, sizeof *r);
    if (*p == 'J') {
        p++;
        r->kind = 'J';
        if (!tz_num(&p, 1, 365, &r->day))
            return 0;
    } else if (*p == 'M') {
        p++;
        r->kind = 'M';
        if (!tz_num(&p, 1, 12, &r->mon) || *p++ != '.' || !tz_num(&p, 1, 5, &r->week) ||
            *p++ != '.' || !tz_num(&p, 0, 6, &r->day))
            return 0;
    } else {
        r->kind = 'D';
        if (!tz_num(&p, 0, 365, &r->day))
            return 0;
    }
    r->time = 2 * 3600;
    if (*p == '/') {
        p++;
        if (!tz_offset(&p, &r->time))
            return 0;
    }
    *s = p;
    return 1;
}

/* Seconds from the start of year y (UTC) to rule r's moment, given the
 * offset in force before it (Go's tzruleTime). */
static int64_t tz_rule_time(int64_t y, const tzrule *r, int off)
{
    int64_t d;
    if (r->kind == 'J') {
        d = r->day - 1 + (sk_civil_is_leap(y) && r->day >= 60);
    } else if (r->kind == 'D') {
        d = r->day;
    } else {
        int64_t first = sk_civil_days_from(y, r->mon, 1);
        int dow = (int)(((first + 4) % 7 + 7) % 7), md = ((r->day - dow) % 7 + 7) % 7;
        for (int i = 1; i < r->week && md + 7 < sk_civil_days_in_month(y, r->mon); i++)
            md += 7;
        d = first - sk_civil_days_from(y, 1, 1) + md;
    }
    return d * DAY + r->time - off;
}

/* The offset a TZ rule string gives at Unix time t (Go's tzset); 0 if the
 * string does not parse. */
static int tz_posix(const char *s, int64_t t, int *off)
{
    int std, dst;
    tzrule start, end;
    if (!tz_name(&s) || !tz_offset(&s, &std))
        return 0;
    std = -std;
    if (!*s || *s == ',') {
        *off = std;
        return 1;
    }
    if (!tz_name(&s))
        return 0;
    if (!*s || *s == ',') {
        dst = std + 3600;
    } else {
        if (!tz_offset(&s, &dst))
            return 0;
        dst = -dst;
    }
    if (!*s)
        s = ",M3.2.0,M11.1.0";
    if (*s != ',' && *s != ';')
        return 0;
    s++;
    if (!tz_rule(&s, &start) || *s++ != ',' || !tz_rule(&s, &end) || *s)
        return 0;
    int64_t y, days = floor_div(t, DAY);
    int m, d;
    sk_civil_from_days(days, &y, &m, &d);
    int64_t ysec = t - sk_civil_days_from(y, 1, 1) * DAY;
    int64_t a = tz_rule_time(y, &start, std), b = tz_rule_time(y, &end, dst);
    /* Southern zones have their summer across the new year: then the
     * year's outer parts are daylight time (Go swaps the pair). */
    int outer = ysec < (a <= b ? a : b) || ysec >= (a <= b ? b : a);
    *off = (outer == (a <= b)) ? std : dst;
    return 1;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The UTC offset of zone data buf (a TZif file) at Unix time t; 0 if the
 * data is malformed. */
static int tzif_offset(const unsigned char *buf, size_t len, int64_t t, int *off)
{
    const unsigned char *p = buf, *end = buf + len;
    int tsize = 4;
    for (int pass = 0;; pass++) {
        if (end - p < 44 || memcmp(p, "TZif", 4) != 0)
            return 0;
        int version = p[4];
        uint32_t isut = be32(p + 20), isstd = be32(p + 24), leap = be32(p + 28),
                 timecnt = be32(p + 32), typecnt = be32(p + 36), charcnt = be32(p + 40);
        uint64_t body = (uint64_t)timecnt * (uint64_t)(tsize + 1) + typecnt * 6ULL + charcnt +
                        leap * (uint64_t)(tsize + 4) + isstd + isut;
        if (typecnt == 0 || body > (uint64_t)(end - p - 44))
            return 0;
        if (pass == 0 && version >= '2') {
            /* Skip the 32-bit data to the 64-bit header. */
            p += 44 + body;
            tsize = 8;
            continue;
        }
        const unsigned char *times = p + 44, *idx = times + timecnt * (size_t)tsize,
                            *types = idx + timecnt, *footer = p + 44 + body;
        for (uint32_t i = 0; i < timecnt; i++)
            if (idx[i] >= typecnt)
                return 0;
#define TX(i)                                                                                      \
    (tsize == 8 ? (int64_t)((uint64_t)be32(times + 8 * (i)) << 32 | be32(times + 8 * (i) + 4))     \
                : (int64_t)(int32_t)be32(times + 4 * (i)))
#define UTOFF(k) ((int)(int32_t)be32(types + 6 * (k)))
#define ISDST(k) (types[6 * (k) + 4])
        if (timecnt == 0 || t < TX(0)) {
            /* Go's lookupFirstZone. */
            uint32_t z = 0, used = 0;
            for (uint32_t i = 0; i < timecnt && !used; i++)
                used = idx[i] == 0;
            if (used) {
                int found = 0;
                if (timecnt > 0 && ISDST(idx[0]))
                    for (int k = (int)idx[0] - 1; k >= 0 && !found; k--)
                        if (!ISDST(k))
                            z = (uint32_t)k, found = 1;
                for (uint32_t k = 0; k < typecnt && !found; k++)
                    if (!ISDST(k))
                        z = k, found = 1;
            }
            *off = UTOFF(z);
            if (timecnt > 0)
                return 1;
        } else {
            uint32_t lo = 0, hi = timecnt;
            while (hi - lo > 1) {
                uint32_t m = lo + (hi - lo) / 2;
                if (t < TX(m))
                    hi = m;
                else
                    lo = m;
            }
            *off = UTOFF(idx[lo]);
            if (lo + 1 < timecnt)
                return 1;
        }
#undef TX
#undef UTOFF
#undef ISDST
        /* Past the last transition (or with none): the footer's rule, in
         * a v2+ file, if it parses. */
        if (tsize == 8 && end - footer > 2 && footer[0] == '\n') {
            const unsigned char *nl = memchr(footer + 1, '\n', (size_t)(end - footer - 1));
            if (nl) {
                char rule[128];
                size_t n = (size_t)(nl - footer - 1);
                if (n > 0 && n < sizeof rule) {
                    memcpy(rule, footer + 1, n);
                    rule[n] = 0;
                    int o;
                    if (tz_posix(rule, t, &o))
                        *off = o;
                }
            }
        }
        return 1;
    }
}

/* The UTC offset of time zone tz at Unix time t, as cel-go's timeZone()
 * finds it: a name without ':' is a location (time.LoadLocation), else
 * "[+-]h:m" read with strconv.Atoi on either side. NULL on success, else
 * the error. */
static const sk_cel_val *zone_offset(sk_arena *a, const sk_cel_val *tz, int64_t t, int *off,
                                     sk_cel_work *w)
{
    const char *s = tz->u.str.s;
    size_t len = tz->u.str.len;
    const char *colon = memchr(s, ':', len);
    if (colon) {
        /* Go's Atoi: an optional sign and decimal digits, nothing else. */
        long long v[2];
        const char *part[2] = {s, colon + 1};
        size_t plen[2] = {(size_t)(colon - s), len - (size_t)(colon - s) - 1};
        for (int k = 0; k < 2; k++) {
            const char *p = part[k];
            size_t n = plen[k], i = p[0] == '+' || p[0] == '-';
            if (n == i || n - i > 6)
                return sk_cel_error(a, "strconv.Atoi: parsing \"%.*s\": invalid syntax", (int)n, p);
            v[k] = 0;
            for (; i < n; i++) {
                if (p[i] < '0' || p[i] > '9')
                    return sk_cel_error(a, "strconv.Atoi: parsing \"%.*s\": invalid syntax", (int)n,
                                        p);
                v[k] = v[k] * 10 + (p[i] - '0');
            }
            if (p[0] == '-')
                v[k] = -v[k];
        }
        long long minutes = s[0] == '-' ? v[0] * 60 - v[1] : v[0] * 60 + v[1];
        *off = (int)(minutes * 60);
        return NULL;
    }
    if (len == 0 || (len == 3 && memcmp(s, "UTC", 3) == 0) ||
        (len == 5 && memcmp(s, "Local", 5) == 0)) {
        /* Go's Local is the server's zone; kube-apiserver runs in UTC
         * (its images have no /etc/localtime), and a rule's meaning must
         * not follow the host's. */
        *off = 0;
        return NULL;
    }
    if (len > 255 || memchr(s, 0, len) || memmem(s, len, "..", 2) || s[0] == '/' || s[0] == '\\')
        return sk_cel_error(a, "unknown time zone %.*s", (int)(len > 255 ? 255 : len), s);
    char path[300];
    snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", s);
    /* The file's bytes live only for this call (on the heap, not in the
     * arena): a loop over a zoned accessor keeps no copy of them. */
    FILE *f = fopen(path, "rb");
    unsigned char *buf = f ? malloc(MAX_TZIF) : NULL;
    size_t n = buf ? fread(buf, 1, MAX_TZIF, f) : 0;
    if (f)
        fclose(f);
    w->done += n;
    int ok = n > 0 && n < MAX_TZIF && tzif_offset(buf, n, t, off);
    free(buf);
    if (!ok)
        return sk_cel_error(a, "unknown time zone %s", s);
    return NULL;
}

/* ---- accessors ---- */

static const char *const fields[] = {"getFullYear",  "getMonth",       "getDate",  "getDayOfMonth",
                                     "getDayOfWeek", "getDayOfYear",   "getHours", "getMinutes",
                                     "getSeconds",   "getMilliseconds"};

static int field_index(const char *f)
{
    for (int i = 0; i < (int)(sizeof fields / sizeof *fields); i++)
        if (strcmp(f, fields[i]) == 0)
            return i;
    return -1;
}

static const sk_cel_val *timestamp_field(sk_arena *a, int k, const sk_cel_val *t,
                                         const sk_cel_val *tz, sk_cel_work *w)
{
    int off = 0;
    if (tz) {
        if (tz->type != SK_CEL_V_STRING)
            return sk_cel_error(a, "no such overload");
        const sk_cel_val *err = zone_offset(a, tz, t->u.time.sec, &off, w);
        if (err)
            return err;
    }
    int64_t local = t->u.time.sec + off, days = floor_div(local, DAY), y;
    int64_t rem = local - days * DAY, r;
    int m, d;
    sk_civil_from_days(days, &y, &m, &d);
    switch (k) {
    case 0:
        r = y;
        break;
    case 1:
        r = m - 1;
        break;
    case 2:
        r = d;
        break;
    case 3:
        r = d - 1;
        break;
    case 4:
        r = ((days + 4) % 7 + 7) % 7;
        break;
    case 5:
        r = days - sk_civil_days_from(y, 1, 1);
        break;
    case 6:
        r = rem / 3600;
        break;
    case 7:
        r = rem / 60 % 60;
        break;
    case 8:
        r = rem % 60;
        break;
    default:
        r = t->u.time.nsec / 1000000;
        break;
    }
    return sk_cel_int(a, r);
}

/* cel-go's duration accessors: Int(d.Hours()) and so on, the float Go
 * computes truncated; getMilliseconds is d.Milliseconds(), the whole
 * duration in milliseconds (not the part below a second). */
static const sk_cel_val *duration_field(sk_arena *a, int k, const sk_cel_val *dur)
{
    int64_t ns = ns_of(dur), unit;
    switch (k) {
    case 6:
        unit = 3600 * NS;
        break;
    case 7:
        unit = 60 * NS;
        break;
    case 8:
        unit = NS;
        break;
    case 9:
        return sk_cel_int(a, ns / 1000000);
    default:
        return NULL;
    }
    double v = (double)(ns / unit) + (double)(ns % unit) / (double)unit;
    return sk_cel_int(a, (int64_t)v);
}

const sk_cel_val *sk_cel_time_string(sk_arena *a, const sk_cel_val *d)
{
    return d->type == SK_CEL_V_DURATION ? format_duration(a, d) : format_timestamp(a, d);
}

/* ---- dispatch ---- */

static int is_time(const sk_cel_val *v)
{
    return v->type == SK_CEL_V_DURATION || v->type == SK_CEL_V_TIMESTAMP;
}

static const sk_cel_val *arith(sk_arena *a, char op, const sk_cel_val *x, const sk_cel_val *y)
{
    sk_cel_vtype tx = x->type, ty = y->type;
    if (tx == SK_CEL_V_DURATION && ty == SK_CEL_V_DURATION) {
        int64_t r;
        if (op == '+' ? __builtin_add_overflow(ns_of(x), ns_of(y), &r)
                      : __builtin_sub_overflow(ns_of(x), ns_of(y), &r))
            return sk_cel_error(a, "duration overflow");
        return duration_ns(a, r);
    }
    if (tx == SK_CEL_V_TIMESTAMP && ty == SK_CEL_V_DURATION)
        return timestamp_ns(a, op == '+' ? ts_ns(x) + ns_of(y) : ts_ns(x) - ns_of(y),
                            x->u.time.off);
    if (op == '+' && tx == SK_CEL_V_DURATION && ty == SK_CEL_V_TIMESTAMP)
        return timestamp_ns(a, ts_ns(y) + ns_of(x), y->u.time.off);
    if (op == '-' && tx == SK_CEL_V_TIMESTAMP && ty == SK_CEL_V_TIMESTAMP) {
        __int128 r = ts_ns(x) - ts_ns(y);
        if (r > INT64_MAX || r < INT64_MIN)
            return sk_cel_error(a, "duration overflow");
        return duration_ns(a, (int64_t)r);
    }
    return sk_cel_error(a, "no such overload");
}

const sk_cel_val *sk_cel_time_call(sk_arena *a, const char *f, int method,
                                   const sk_cel_val *const *v, size_t n, sk_cel_work *w)
{
    if (!method && n == 1) {
        const sk_cel_val *x = v[0];
        int to_dur = strcmp(f, "duration") == 0, to_ts = strcmp(f, "timestamp") == 0;
        if ((to_dur && x->type == SK_CEL_V_DURATION) || (to_ts && x->type == SK_CEL_V_TIMESTAMP))
            return x;
        if (to_dur && x->type == SK_CEL_V_STRING)
            return parse_duration(a, x->u.str.s, x->u.str.len);
        if (to_ts && x->type == SK_CEL_V_STRING)
            return parse_timestamp(a, x->u.str.s, x->u.str.len);
        if (to_ts && x->type == SK_CEL_V_INT)
            return timestamp_ns(a, (__int128)x->u.i * NS, 0);
        if (to_dur || to_ts)
            return sk_cel_error(a, "no such overload");
        if (!is_time(x))
            return NULL;
        if (strcmp(f, "string") == 0)
            return sk_cel_time_string(a, x);
        if (strcmp(f, "int") == 0)
            return sk_cel_int(a, x->type == SK_CEL_V_DURATION ? ns_of(x) : x->u.time.sec);
        if (strcmp(f, "-_") == 0) {
            if (x->type != SK_CEL_V_DURATION || ns_of(x) == INT64_MIN)
                return sk_cel_error(a, x->type == SK_CEL_V_DURATION ? "duration overflow"
                                                                    : "no such overload");
            return duration_ns(a, -ns_of(x));
        }
        return NULL;
    }
    if (!method && n == 2 && (is_time(v[0]) || is_time(v[1])) &&
        (strcmp(f, "_+_") == 0 || strcmp(f, "_-_") == 0))
        return arith(a, f[1], v[0], v[1]);
    if (method && (n == 1 || n == 2) && is_time(v[0])) {
        int k = field_index(f);
        if (k < 0)
            return NULL;
        if (v[0]->type == SK_CEL_V_TIMESTAMP)
            return timestamp_field(a, k, v[0], n == 2 ? v[1] : NULL, w);
        const sk_cel_val *r = n == 1 ? duration_field(a, k, v[0]) : NULL;
        return r ? r : sk_cel_error(a, "no such overload");
    }
    return NULL;
}
