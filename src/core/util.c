/*
 * util.c - clocks, randomness and formats shared across layers.
 */
#include "core/util.h"
#include "core/check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

int64_t sk_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sk_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void sk_deadline_after_ms(struct timespec *out, int64_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, out);
    out->tv_sec += ms / 1000;
    out->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (out->tv_nsec >= 1000000000L) {
        out->tv_sec++;
        out->tv_nsec -= 1000000000L;
    }
}

void sk_cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
}

int64_t sk_wall_s(void)
{
    return (int64_t)time(NULL);
}

int64_t sk_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Writes v as n decimal digits, zero-padded. */
static char *put_digits(char *o, int v, int n)
{
    for (int i = n - 1; i >= 0; i--, v /= 10)
        o[i] = (char)('0' + v % 10);
    return o + n;
}

void sk_format_rfc3339(int64_t t, char out[21])
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    int year = tm.tm_year + 1900;
    if (year < 1000 || year > 9999) { /* strftime decides how those look */
        strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
        return;
    }
    /* By hand otherwise: strftime's locale machinery is most of the cost,
     * and every create and update stamps at least one time. */
    char *o = put_digits(out, year, 4);
    *o++ = '-';
    o = put_digits(o, tm.tm_mon + 1, 2);
    *o++ = '-';
    o = put_digits(o, tm.tm_mday, 2);
    *o++ = 'T';
    o = put_digits(o, tm.tm_hour, 2);
    *o++ = ':';
    o = put_digits(o, tm.tm_min, 2);
    *o++ = ':';
    o = put_digits(o, tm.tm_sec, 2);
    *o++ = 'Z';
    *o = '\0';
}

int64_t sk_parse_rfc3339(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest)
        return -1;
    if (*rest == '.') {
        rest++;
        while (*rest >= '0' && *rest <= '9')
            rest++;
    }
    if (strcmp(rest, "Z") != 0)
        return -1;
    return (int64_t)timegm(&tm);
}

/* Each thread draws from its own pool, refilled by one getrandom per
 * RANDOM_POOL bytes: a create took two draws (its uid, its audit ID), each a
 * syscall, which costs microseconds in a VM. Bytes handed out are wiped from
 * the pool, so memory never holds a value already given (the process never
 * forks, so no two processes share a pool). */
#define RANDOM_POOL 256
static _Thread_local unsigned char random_pool[RANDOM_POOL];
static _Thread_local size_t random_left;

static void random_fill(unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        SK_CHECK(got > 0);
        p += got;
        n -= (size_t)got;
    }
}

void sk_random_bytes(void *out, size_t n)
{
    unsigned char *p = out;
    while (n > 0) {
        if (random_left == 0) {
            random_fill(random_pool, RANDOM_POOL);
            random_left = RANDOM_POOL;
        }
        size_t take = n < random_left ? n : random_left;
        unsigned char *from = random_pool + RANDOM_POOL - random_left;
        memcpy(p, from, take);
        memset(from, 0, take);
        random_left -= take;
        p += take;
        n -= take;
    }
}

void sk_uuid4(char out[37])
{
    unsigned char b[16];
    sk_random_bytes(b, sizeof b);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    /* By hand: snprintf's sixteen %02x cost more than the rest of it. */
    static const char hex[] = "0123456789abcdef";
    char *o = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *o++ = '-';
        *o++ = hex[b[i] >> 4];
        *o++ = hex[b[i] & 0x0f];
    }
    *o = '\0';
}

int64_t sk_parse_i64(const char *s)
{
    if (!s || !*s)
        return -1;
    int64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        if (v > (INT64_MAX - (*p - '0')) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

int sk_hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int sk_cmp_strp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *sk_read_file(const char *path, size_t max, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = malloc(max + 1);
    SK_CHECK_ALLOC(text);
    size_t n = fread(text, 1, max + 1, f);
    int err = ferror(f) ? EIO : n > max ? EFBIG : 0;
    fclose(f);
    if (err) {
        free(text);
        errno = err;
        return NULL;
    }
    text[n] = '\0';
    *len_out = n;
    return text;
}
