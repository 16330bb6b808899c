/*
 * hub.c - see hub.h.
 *
 * Parked watchers sit in a small array under `mu`; the counters are atomics. Wakes run under `mu`
 * too: sk_watch_hub_cancel takes `mu`, so once it returns no wake for that
 * ticket can be running or pending (a watcher is never woken after its
 * connection is freed). Lock order: hub mu, then whatever the wake takes;
 * nothing calls into the hub while holding a connection lock.
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
    pthread_mutex_t mu;
    int stopping;
    uint64_t seq; /* notifications so far */
    parked *list;
    size_t len, cap;
    uint64_t next_ticket;
    /* Counted per event per watcher: atomics, not mu, which the fan-out
     * holds while it resumes every parked connection. */
    atomic_llong registered, events_sent, terminated;
};

/* Wakes and forgets every parked watcher. Caller holds mu. */
static void wake_all_locked(sk_watch_hub *hub)
{
    for (size_t i = 0; i < hub->len; i++)
        hub->list[i].wake(hub->list[i].arg);
    hub->len = 0;
}

sk_watch_hub *sk_watch_hub_new(void)
{
    sk_watch_hub *hub = calloc(1, sizeof *hub);
    SK_CHECK_ALLOC(hub);
    hub->next_ticket = SK_HUB_MOVED + 1;
    pthread_mutex_init(&hub->mu, NULL);
    return hub;
}

void sk_watch_hub_notify(sk_watch_hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    hub->seq++;
    wake_all_locked(hub);
    pthread_mutex_unlock(&hub->mu);
}

void sk_watch_hub_stop(sk_watch_hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    hub->stopping = 1;
    wake_all_locked(hub);
    pthread_mutex_unlock(&hub->mu);
}

void sk_watch_hub_free(sk_watch_hub *hub)
{
    if (!hub)
        return;
    sk_watch_hub_stop(hub);
    pthread_mutex_destroy(&hub->mu);
    free(hub->list);
    free(hub);
}

uint64_t sk_watch_hub_seq(sk_watch_hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    uint64_t seq = hub->seq;
    pthread_mutex_unlock(&hub->mu);
    return seq;
}

uint64_t sk_watch_hub_park(sk_watch_hub *hub, uint64_t seen, sk_watch_wake_fn wake, void *arg)
{
    pthread_mutex_lock(&hub->mu);
    if (hub->stopping || hub->seq != seen) {
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
    pthread_mutex_lock(&hub->mu);
    for (size_t i = 0; i < hub->len; i++) {
        if (hub->list[i].ticket == ticket) {
            hub->list[i] = hub->list[--hub->len];
            break;
        }
    }
    pthread_mutex_unlock(&hub->mu);
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
