/*
 * hub.c - see hub.h.
 *
 * Parked watchers sit in a small array under `mu`, each with the
 * notification count it saw before it last looked for work; the counters
 * and the count are atomics. A notify only counts and signals the hub's
 * thread; the thread runs wake passes: it takes the parked watchers out
 * under `mu` and wakes them after dropping it, holding only `wake_mu`:
 * waking 1,000 watchers resumes 1,000 connections, and the HTTP threads
 * serving the first ones must be able to read the count and park again
 * meanwhile instead of queueing on `mu` until the last one is resumed.
 *
 * Coalescing: a pass starts at most once per PASS_GAP_MS. Each wake costs a
 * connection resume (an eventfd write and an event-loop wake-up in
 * libmicrohttpd), a send and, on the client, a receive; at 1,000 watchers
 * and hundreds of commits a second, one pass per commit saturated the
 * machine, and the passes then ran back to back anyway, each one as late
 * as the one before took. Notifies during a pass or the gap after it make
 * one pass, whose wakes each carry every event since the watcher's last
 * send: an event waits at most PASS_GAP_MS for its pass. A pass that
 * follows an idle gap starts at once. A watcher that parked having seen
 * the latest notification stays parked through the pass (nothing new can
 * be for it), so a burst of notifies does not wake it twice for one event.
 *
 * A watcher is never woken after its connection is freed: sk_watch_hub_cancel
 * removes its entry under `mu` if it is still parked; if a pass took it
 * already, that wake may be running, so cancel waits for `wake_mu` (the
 * wake pass) to finish. Lock order: wake_mu, then mu or whatever a wake
 * takes; nothing calls into the hub while holding a connection lock.
 */
#include "watch/hub.h"
#include "core/check.h"
#include "core/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define PASS_GAP_MS 5

typedef struct parked {
    uint64_t ticket;
    uint64_t seen; /* the count when it last looked for work */
    sk_watch_wake_fn wake;
    void *arg;
} parked;

struct sk_watch_hub {
    pthread_mutex_t mu;      /* stopping, pending, list, next_ticket; seq's writes */
    pthread_cond_t cv;       /* pending or stopping, for the thread */
    pthread_mutex_t wake_mu; /* one wake pass at a time, and its `waking` */
    int stopping;
    int pending; /* a notify since the last pass took the list */
    _Atomic uint64_t seq; /* notifications so far */
    parked *list;
    size_t len, cap;
    parked *waking; /* the pass's entries: swapped with list, keeps both capacities */
    size_t waking_cap;
    uint64_t next_ticket;
    pthread_t thread;
    /* Counted per event per watcher: atomics, not mu. */
    atomic_llong registered, events_sent, terminated;
};

static void list_push(sk_watch_hub *hub, parked p)
{
    if (hub->len == hub->cap) {
        hub->cap = hub->cap ? hub->cap * 2 : 64;
        hub->list = realloc(hub->list, hub->cap * sizeof *hub->list);
        SK_CHECK_ALLOC(hub->list);
    }
    hub->list[hub->len++] = p;
}

/* One wake pass, under wake_mu: takes the parked watchers out (all of them
 * once stopping, else those that have not seen the latest notification)
 * and wakes them outside mu. */
static void wake_pass(sk_watch_hub *hub)
{
    pthread_mutex_lock(&hub->wake_mu);
    pthread_mutex_lock(&hub->mu);
    hub->pending = 0;
    uint64_t seq = atomic_load_explicit(&hub->seq, memory_order_relaxed);
    int all = hub->stopping;
    parked *taken = hub->list;
    size_t n = hub->len, cap = hub->cap;
    hub->list = hub->waking;
    hub->cap = hub->waking_cap;
    hub->len = 0;
    size_t wake_n = 0;
    for (size_t i = 0; i < n; i++) {
        if (!all && taken[i].seen == seq)
            list_push(hub, taken[i]);
        else
            taken[wake_n++] = taken[i];
    }
    pthread_mutex_unlock(&hub->mu);
    for (size_t i = 0; i < wake_n; i++)
        taken[i].wake(taken[i].arg);
    hub->waking = taken;
    hub->waking_cap = cap;
    pthread_mutex_unlock(&hub->wake_mu);
}

/* The hub's thread: a pass per notification, at most one per PASS_GAP_MS. */
static void *hub_main(void *arg)
{
    sk_watch_hub *hub = arg;
    pthread_mutex_lock(&hub->mu);
    while (!hub->stopping) {
        if (!hub->pending) {
            pthread_cond_wait(&hub->cv, &hub->mu);
            continue;
        }
        pthread_mutex_unlock(&hub->mu);
        struct timespec next; /* the gap runs from the pass's start */
        sk_deadline_after_ms(&next, PASS_GAP_MS);
        wake_pass(hub);
        pthread_mutex_lock(&hub->mu);
        /* The gap: later notifies wait for its end and make one pass. */
        while (!hub->stopping && pthread_cond_timedwait(&hub->cv, &hub->mu, &next) == 0)
            ;
    }
    pthread_mutex_unlock(&hub->mu);
    return NULL;
}

sk_watch_hub *sk_watch_hub_new(void)
{
    sk_watch_hub *hub = calloc(1, sizeof *hub);
    SK_CHECK_ALLOC(hub);
    hub->next_ticket = SK_HUB_MOVED + 1;
    pthread_mutex_init(&hub->mu, NULL);
    pthread_mutex_init(&hub->wake_mu, NULL);
    sk_cond_init_monotonic(&hub->cv);
    SK_CHECK(pthread_create(&hub->thread, NULL, hub_main, hub) == 0);
    pthread_setname_np(hub->thread, "sk-watch-hub");
    return hub;
}

void sk_watch_hub_notify(sk_watch_hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    atomic_fetch_add_explicit(&hub->seq, 1, memory_order_release);
    hub->pending = 1;
    pthread_cond_signal(&hub->cv);
    pthread_mutex_unlock(&hub->mu);
}

void sk_watch_hub_stop(sk_watch_hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    int first = !hub->stopping;
    hub->stopping = 1;
    pthread_cond_signal(&hub->cv);
    pthread_mutex_unlock(&hub->mu);
    if (first)
        pthread_join(hub->thread, NULL);
    wake_pass(hub);
}

void sk_watch_hub_free(sk_watch_hub *hub)
{
    if (!hub)
        return;
    sk_watch_hub_stop(hub);
    pthread_mutex_destroy(&hub->mu);
    pthread_mutex_destroy(&hub->wake_mu);
    pthread_cond_destroy(&hub->cv);
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
    uint64_t ticket = hub->next_ticket++; /* starts above the two reserved values */
    list_push(hub, (parked){ticket, seen, wake, arg});
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
