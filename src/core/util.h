/*
 * util.h - small helpers with no better home: clocks, randomness, RFC 3339
 * timestamps and UUIDs as Kubernetes formats them, reading a small file.
 */
#ifndef SK_CORE_UTIL_H
#define SK_CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>

/* Monotonic milliseconds (for timeouts). */
int64_t sk_now_ms(void);
/* Monotonic microseconds (for latencies). */
int64_t sk_now_us(void);
/* The CLOCK_MONOTONIC time ms milliseconds from now, for
 * pthread_cond_timedwait on a condition made by sk_cond_init_monotonic. */
void sk_deadline_after_ms(struct timespec *out, int64_t ms);
/* Initializes cv to time out on CLOCK_MONOTONIC (immune to clock steps). */
void sk_cond_init_monotonic(pthread_cond_t *cv);
/* Wall-clock seconds since the epoch. */
int64_t sk_wall_s(void);
/* Wall-clock milliseconds since the epoch. */
int64_t sk_wall_ms(void);
/* Writes "2006-01-02T15:04:05Z" for t into out (at least 21 bytes). */
void sk_format_rfc3339(int64_t t, char out[21]);
/* Parses "2006-01-02T15:04:05Z" (fractional seconds allowed); -1 if malformed. */
int64_t sk_parse_rfc3339(const char *s);
/* Fills out with cryptographically random bytes (getrandom, drawn through a
 * per-thread pool); aborts on failure. */
void sk_random_bytes(void *out, size_t n);
/* Writes a random (v4) UUID "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx" into out (37 bytes). */
void sk_uuid4(char out[37]);
/* Parses a non-negative decimal int64 with no sign, spaces or leading '+'; -1 on error. */
int64_t sk_parse_i64(const char *s);
/* The value of hex digit c (0-9, a-f, A-F), or -1 when it is none. */
int sk_hex_value(int c);
/* qsort comparator for an array of const char * (strcmp order). */
int sk_cmp_strp(const void *a, const void *b);
/* The whole file at path as a new NUL-terminated buffer (*len_out bytes,
 * which may include NULs), or NULL with errno set (EFBIG: over max bytes). */
char *sk_read_file(const char *path, size_t max, size_t *len_out);

#endif
