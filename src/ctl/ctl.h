/*
 * ctl.h - a background controller: one named job that the server runs
 * again and again, each on a ticker thread of its own (core/ticker.h), so a
 * slow compaction never delays a lease renewal.
 *
 * Every controller has the same small shape: a state it owns, a pass over
 * it that does one round of work and says how long to wait before the next,
 * and a free. sk_ctl keeps the thread and counts passes that did their job,
 * which is what /readyz reports as the controller's health (a
 * poststarthook in kube-apiserver's terms).
 *
 * The controllers: compactor.h (periodic compaction, one instance per
 * interval across a shared database), identity.h (this server's identity
 * Lease), collector.h (expired objects), consistency.h (watch cache vs
 * store). New ones (garbage collection, namespace termination) go here.
 */
#ifndef SK_CTL_CTL_H
#define SK_CTL_CTL_H

#include <stdint.h>

/* A pass wants no next pass until woken by a stop (a controller that runs
 * only on request). */
#define SK_CTL_NEVER (INT64_C(1) << 50) /* ms: thirty-five thousand years */

typedef struct sk_ctl_def {
    const char *name; /* for logs: "identity-lease" */
    /* One pass over self: returns the milliseconds until the next; sets
     * *done when it did its job (a pass that failed, or skipped, does not
     * count towards health). */
    int64_t (*pass)(void *self, int *done);
    void (*free)(void *self); /* after the thread has stopped */
} sk_ctl_def;

typedef struct sk_ctl sk_ctl;

/* Starts def (static, borrowed) over self (stolen: def->free frees it);
 * the first pass runs after first_delay_ms. */
sk_ctl *sk_ctl_start(const sk_ctl_def *def, void *self, int64_t first_delay_ms);
/* Stops the thread (waking it at once, waiting for a running pass), frees
 * self and the controller. NULL-safe. */
void sk_ctl_stop(sk_ctl *c);
/* Non-zero once a pass has done its job. NULL-safe (0). */
int sk_ctl_healthy(const sk_ctl *c);
/* The controller's state, for its own module's functions. */
void *sk_ctl_self(sk_ctl *c);

#endif
