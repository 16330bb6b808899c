/*
 * civil.h - the proleptic Gregorian calendar as days since 1970-01-01 (H.
 * Hinnant's days_from_civil and civil_from_days): what Go's time package
 * computes for RFC 3339 times, shared by kube's typed JSON (metav1.Time)
 * and CEL's timestamps. Pure arithmetic, valid far beyond any year either
 * accepts.
 */
#ifndef SK_CORE_CIVIL_H
#define SK_CORE_CIVIL_H

#include <stdint.h>

/* Non-zero if y is a leap year. */
int sk_civil_is_leap(int64_t y);
/* The days of month m (1-12) of year y. */
int sk_civil_days_in_month(int64_t y, int m);
/* Days since 1970-01-01 of y-m-d (m 1-12, d 1-31). */
int64_t sk_civil_days_from(int64_t y, int m, int d);
/* The date of the day z days after 1970-01-01 (negative: before). */
void sk_civil_from_days(int64_t z, int64_t *y, int *m, int *d);

#endif
