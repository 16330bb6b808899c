/*
 * ticker.h - a background thread that runs one job repeatedly.
 *
 * The server's periodic work (the expiry collector, the identity lease
 * heartbeat, the consistency checker, the compactor) is each a job that
 * runs, then says how long to sleep before it runs again. The ticker owns
 * the thread, the sleep (on the monotonic clock) and a prompt stop: a stop
 * wakes the sleep at once and waits for a running job to return.
 */
#ifndef SK_CORE_TICKER_H
#define SK_CORE_TICKER_H

#include <stdint.h>

typedef struct sk_ticker sk_ticker;
/* One run of the job; returns the milliseconds to wait before the next. */
typedef int64_t (*sk_ticker_fn)(void *arg);

/* Starts a thread that waits first_delay_ms, then runs fn(arg) until
 * stopped. arg is borrowed and must outlive the ticker. */
sk_ticker *sk_ticker_start(int64_t first_delay_ms, sk_ticker_fn fn, void *arg);
/* Stops (waking a sleeping ticker at once), joins and frees. NULL-safe. */
void sk_ticker_stop(sk_ticker *t);

#endif
