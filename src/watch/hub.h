/*
 * hub.h - the watch fan-out: wakes parked watchers when the cache moves.
 *
 * A watcher with nothing to send parks itself here (its HTTP connection is
 * suspended: no thread waits for it). The watch cache's feed calls
 * sk_watch_hub_notify after every applied batch and on every tick (about
 * once a second); the hub's thread then wakes every parked watcher that has
 * not seen that notification, at most one such pass per few milliseconds
 * (notifies in between make one pass: each woken watcher sends all that is
 * new for it in one write); each then reads what is new for it from the
 * cache, ends on timeoutSeconds, sends a bookmark or notices that its
 * client went away.
 *
 * Watchers are cursors over the cache's shared, already-serialized events:
 * nothing is queued per watcher, so a slow watcher never holds up the feed,
 * writers or other watchers.
 */
#ifndef SK_WATCH_HUB_H
#define SK_WATCH_HUB_H

#include <stdint.h>

typedef struct sk_watch_hub sk_watch_hub;
typedef void (*sk_watch_wake_fn)(void *arg);

sk_watch_hub *sk_watch_hub_new(void);
/* Counts a notification and has the hub's thread wake the parked watchers
 * soon (within a few milliseconds; the feed calls this: it does not wait). */
void sk_watch_hub_notify(sk_watch_hub *hub);
/* Refuses later parks, stops the hub's thread and wakes every parked
 * watcher before it returns. */
void sk_watch_hub_stop(sk_watch_hub *hub);
/* NULL-safe. No watcher may be parked any more. */
void sk_watch_hub_free(sk_watch_hub *hub);
/* The number of notifications so far. Read it BEFORE looking for work: a
 * park with that value then cannot miss a notify that came in between. */
uint64_t sk_watch_hub_seq(sk_watch_hub *hub);

#define SK_HUB_STOPPED 0 /* the hub is stopping: end instead of waiting */
#define SK_HUB_MOVED 1   /* a notify came after `seen`: look again now */
/* Parks a waiter: wake(arg) runs once, on the hub's thread, after the
 * next notify (or in sk_watch_hub_stop). Returns a ticket for sk_watch_hub_cancel, or SK_HUB_STOPPED, or
 * SK_HUB_MOVED if a notify came since sk_watch_hub_seq returned seen. */
uint64_t sk_watch_hub_park(sk_watch_hub *hub, uint64_t seen, sk_watch_wake_fn wake, void *arg);
/* Forgets a parked watcher; after it returns, its wake will not run. */
void sk_watch_hub_cancel(sk_watch_hub *hub, uint64_t ticket);

/* Watch-related counters for /metrics. */
typedef struct sk_watch_stats {
    int64_t registered; /* open watch streams */
    int64_t events_sent;
    int64_t terminated; /* closed by the server (expired, too slow, cache rebuilt) */
} sk_watch_stats;
void sk_watch_hub_count(sk_watch_hub *hub, int64_t d_registered, int64_t d_events,
                        int64_t d_terminated);
void sk_watch_hub_stats(sk_watch_hub *hub, sk_watch_stats *out);

#endif
