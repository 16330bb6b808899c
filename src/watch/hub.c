/*
 * hub.c - see hub.h.
 *
 * Parked watchers sit in a small array under `mu`; the counters and the
 * notification count are atomics. A notify takes the whole array out under
 * `mu` and runs the wakes after dropping it, holding only `wake_mu`: waking
 * 1,000 watchers resumes 1,000 connections, and the HTTP threads serving the
 * first ones must be able to read the count and park again meanwhile instead
 * of queueing on `mu` until the last one is resumed.
 *
 * A watcher is never woken after its connection is freed: sk_watch_hub_cancel
 * removes its entry under `mu` if it is still parked; if a notify took it
 * already, that wake may be running, so cancel waits for `wake_mu` (the
 * wake pass) to finish. Lock order: wake_mu, then mu or whatever a wake
 * takes; nothing calls into the hub while holding a connection lock.
 */
#include "watch/hub.h"
#include "core/check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct parked {
    uint64_t ticket;
    sk_watch_wake_fn wake;
    void *arg;
} parked;

struct sk_watch_hub {
    pthread_mutex_t mu;      /* stopping, list, next_ticket; seq's writes */
    pthread_mutex_t wake_mu; /* one wake pass at a time, and its `waking` */
    int stopping;
    _Atomic uint64_t seq; /* notifications so far */
    parked *list;
    size_t len, cap;
    parked *waking; /* the pass's entries: swapped with list, keeps both capacities */
    size_t waking_cap;
    uint64_t next_ticket;
    /* Counted per event per watcher: atomics, not mu. */
    atomic_llong registered, events_sent, terminated;
};

/* Takes every parked watcher out (after `stop`, refusing later parks; else
 * counting a notification) and wakes them outside mu. */
static void wake_all(sk_watch_hub *hub, int stop)
{
    pthread_mutex_lock(&hub->wake_mu);
    pthread_mutex_lock(&hub->mu);
    if (stop)
        hub->stopping = 1;
    else
        atomic_fetch_add_explicit(&hub->seq, 1, memory_order_release);
    parked *taken = hub->list;
    size_t n = hub->len, cap = hub->cap;
    hub->list = hub->waking;
    hub->cap = hub->waking_cap;
    hub->len = 0;
    pthread_mutex_unlock(&hub->mu);
    for (size_t i = 0; i < n; i++)
        taken[i].wake(taken[i].arg);
    hub->waking = taken;
    hub->waking_cap = cap;
    pthread_mutex_unlock(&hub->wake_mu);
}

sk_watch_hub *sk_watch_hub_new(void)
{
    sk_watch_hub *hub = calloc(1, sizeof *hub);
    SK_CHECK_ALLOC(hub);
    hub->next_ticket = SK_HUB_MOVED + 1;
    pthread_mutex_init(&hub->mu, NULL);
    pthread_mutex_init(&hub->wake_mu, NULL);
    return hub;
}

void sk_watch_hub_notify(sk_watch_hub *hub)
{
    wake_all(hub, 0);
}

void sk_watch_hub_stop(sk_watch_hub *hub)
{
    wake_all(hub, 1);
}

void sk_watch_hub_free(sk_watch_hub *hub)
{
    if (!hub)
        return;
    sk_watch_hub_stop(hub);
    pthread_mutex_destroy(&hub->mu);
    pthread_mutex_destroy(&hub->wake_mu);
    free(hub->list);
    free(hub->waking);
    free(hub);
}

uint64_t sk_watch_hub_seq(sk_watch_hub *hub)
{
    return atomic_load_explicit(&hub->seq, memory_order_acquire);
}

uint64_t sk_watch_hub_park(sk_watch_hub *hub, uint64_t seen, sk_watch_wake_fn wake, void *arg)
{
    pthread_mutex_lock(&hub->mu);
    if (hub->stopping || atomic_load_explicit(&hub->seq, memory_order_relaxed) != seen) {
        uint64_t r = hub->stopping ? SK_HUB_STOPPED : SK_HUB_MOVED;
        pthread_mutex_unlock(&hub->mu);
        return r;
    }
    if (hub->len == hub->cap) {
        hub->cap = hub->cap ? hub->cap * 2 : 64;
        hub->list = realloc(hub->list, hub->cap * sizeof *hub->list);
        SK_CHECK_ALLOC(hub->list);
    }
    uint64_t ticket = hub->next_ticket++; /* starts above the two reserved values */
    hub->list[hub->len++] = (parked){ticket, wake, arg};
    pthread_mutex_unlock(&hub->mu);
    return ticket;
}

void sk_watch_hub_cancel(sk_watch_hub *hub, uint64_t ticket)
{
    int found = 0;
    pthread_mutex_lock(&hub->mu);
    for (size_t i = 0; i < hub->len; i++) {
        if (hub->list[i].ticket == ticket) {
            hub->list[i] = hub->list[--hub->len];
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&hub->mu);
    if (!found) {
        /* A wake pass took it: let that pass end before the caller frees
         * what the wake touches. */
        pthread_mutex_lock(&hub->wake_mu);
        pthread_mutex_unlock(&hub->wake_mu);
    }
}

void sk_watch_hub_count(sk_watch_hub *hub, int64_t d_registered, int64_t d_events,
                        int64_t d_terminated)
{
    if (d_registered)
        atomic_fetch_add_explicit(&hub->registered, d_registered, memory_order_relaxed);
    if (d_events)
        atomic_fetch_add_explicit(&hub->events_sent, d_events, memory_order_relaxed);
    if (d_terminated)
        atomic_fetch_add_explicit(&hub->terminated, d_terminated, memory_order_relaxed);
}

void sk_watch_hub_stats(sk_watch_hub *hub, sk_watch_stats *out)
{
    out->registered = atomic_load(&hub->registered);
    out->events_sent = atomic_load(&hub->events_sent);
    out->terminated = atomic_load(&hub->terminated);
}
