/*
 * log.h - one-line structured-ish logging to stderr.
 *
 * Lines are written with a single write(2) so lines from several threads
 * never interleave mid-line.
 */
#ifndef SK_CORE_LOG_H
#define SK_CORE_LOG_H

typedef enum { SK_LOG_DEBUG, SK_LOG_INFO, SK_LOG_WARN, SK_LOG_ERROR } sk_log_level;

void sk_log_set_level(sk_log_level level);
void sk_log(sk_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define sk_log_debug(...) sk_log(SK_LOG_DEBUG, __VA_ARGS__)
#define sk_log_info(...) sk_log(SK_LOG_INFO, __VA_ARGS__)
#define sk_log_warn(...) sk_log(SK_LOG_WARN, __VA_ARGS__)
#define sk_log_error(...) sk_log(SK_LOG_ERROR, __VA_ARGS__)

#endif
