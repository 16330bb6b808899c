/*
 * time.h - CEL's duration and timestamp functions, as cel-go (v0.22,
 * which kube 1.32 runs) has them: duration(string) and timestamp(string)
 * (Go's time.ParseDuration and RFC 3339), timestamp(int), int() and
 * string() of either, +, - and unary - over them, and the accessors
 * getFullYear ... getMilliseconds, on a timestamp with an optional time
 * zone ("UTC", an IANA name, "+hh:mm"; without one UTC, as Kubernetes'
 * environment sets cel.DefaultUTCTimeZone) and on a duration. A timestamp
 * keeps the offset it was written with for its text, as Go's time.Time
 * keeps its location: string(timestamp('2009-02-13T23:31:30+01:00')) is
 * that string, and so is the timestamp plus a duration.
 *
 * Ranges are cel-go's: a timestamp is within 0001-01-01T00:00:00Z ..
 * 9999-12-31T23:59:59.999999999Z (protobuf's); a duration is a Go
 * time.Duration, int64 nanoseconds (about +-292 years), narrower than
 * protobuf's +-10000 years, since kube evaluates rules with cel-go and a
 * rule must not mean more here than there. Leaving either range is an
 * error value.
 *
 * Time zones are read from the system's zoneinfo (tzdata, TZif files under
 * /usr/share/zoneinfo) at each call that names one: the one file access of
 * the cel layer, done so that no zone table is ever stale or hand-kept.
 * Names are checked as Go's time.LoadLocation checks them (no "..", not
 * absolute) and a file is read only up to a size bound.
 */
#ifndef SK_CEL_TIME_H
#define SK_CEL_TIME_H

#include "cel/value.h"
#include "core/arena.h"

#include <stddef.h>

/* f applied to the n values v (non-errors; v[0] the receiver when method),
 * when it is one of this library's functions for these argument types: a
 * new value in a (possibly an error value). NULL when it is not, so the
 * caller tries its other functions. Work beyond what is linear in the
 * strings handed in (a zoneinfo file read: a unit a byte) is added to w. */
const sk_cel_val *sk_cel_time_call(sk_arena *a, const char *f, int method,
                                   const sk_cel_val *const *v, size_t n, sk_cel_work *w);

/* string(d) of a duration or timestamp d ("3723.5s",
 * "2009-02-13T23:31:30Z"), new in a. */
const sk_cel_val *sk_cel_time_string(sk_arena *a, const sk_cel_val *d);

#endif
