/*
 * test_hub.c - the watch fan-out (watch/hub.h): a parked watcher is woken
 * exactly once per notify; a park with a stale count or after stop is
 * refused; a cancelled watcher is never woken; while a notify's wakes run,
 * other threads can still read the count and park (the wakes run outside the
 * hub's list lock); a cancel of a watcher whose wake is running returns
 * only after that wake has finished (its connection may be freed next); and
 * a stream of notifies is coalesced into few passes without losing the
 * last one (the wakes run on the hub's thread, at most a pass per gap).
 */
#include "watch/hub.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static void count_wake(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits (up to 5 s: the wakes run on the hub's thread) for *a to reach want. */
static int wait_for(atomic_int *a, int want)
{
    for (int i = 0; i < 5000 && atomic_load(a) < want; i++)
        sleep_ms(1);
    return atomic_load(a);
}

static void test_notify_wakes_once(void **state)
{
    (void)state;
    sk_watch_hub *hub = sk_watch_hub_new();
    atomic_int a = 0, b = 0;
    uint64_t seen = sk_watch_hub_seq(hub);
    uint64_t ta = sk_watch_hub_park(hub, seen, count_wake, &a);
    uint64_t tb = sk_watch_hub_park(hub, seen, count_wake, &b);
    assert_true(ta > SK_HUB_MOVED && tb > SK_HUB_MOVED && ta != tb);
    sk_watch_hub_notify(hub);
    assert_int_equal(sk_watch_hub_seq(hub), seen + 1);
    assert_int_equal(wait_for(&a, 1), 1);
    assert_int_equal(wait_for(&b, 1), 1);
    /* Woken means forgotten: the next notify does not wake them again. */
    sk_watch_hub_notify(hub);
    sleep_ms(50);
    assert_int_equal(atomic_load(&a), 1);
    /* A park with the count read before a notify must look again. */
    assert_int_equal(sk_watch_hub_park(hub, seen, count_wake, &a), SK_HUB_MOVED);
    sk_watch_hub_free(hub);
}

static void test_cancel_and_stop(void **state)
{
    (void)state;
    sk_watch_hub *hub = sk_watch_hub_new();
    atomic_int a = 0, b = 0;
    uint64_t seen = sk_watch_hub_seq(hub);
    uint64_t ta = sk_watch_hub_park(hub, seen, count_wake, &a);
    sk_watch_hub_park(hub, seen, count_wake, &b);
    sk_watch_hub_cancel(hub, ta);
    sk_watch_hub_stop(hub);
    assert_int_equal(atomic_load(&a), 0);
    assert_int_equal(atomic_load(&b), 1);
    assert_int_equal(sk_watch_hub_park(hub, sk_watch_hub_seq(hub), count_wake, &a),
                     SK_HUB_STOPPED);
    sk_watch_hub_free(hub);
}

/* A wake that holds the wake pass until another thread managed to park. */
typedef struct slow_wake {
    sk_watch_hub *hub;
    atomic_int parked_meanwhile; /* the other thread's park returned */
    atomic_int in_wake, done;
    atomic_int saw_park; /* the park returned while this wake ran */
    int wait_for_park;
} slow_wake;

static void slow(void *arg)
{
    slow_wake *sw = arg;
    atomic_store(&sw->in_wake, 1);
    /* Up to 2 s: with the wakes under the list lock the park could not
     * return before this wake ends, and the flag stays 0. */
    for (int i = 0; i < 200 && sw->wait_for_park && !atomic_load(&sw->parked_meanwhile); i++)
        sleep_ms(10);
    atomic_store(&sw->saw_park, atomic_load(&sw->parked_meanwhile));
    if (!sw->wait_for_park)
        sleep_ms(200);
    atomic_store(&sw->done, 1);
}

static void *notifier(void *arg)
{
    sk_watch_hub_notify(((slow_wake *)arg)->hub);
    return NULL;
}

static void test_park_during_wake_pass(void **state)
{
    (void)state;
    sk_watch_hub *hub = sk_watch_hub_new();
    slow_wake sw = {.hub = hub, .wait_for_park = 1};
    sk_watch_hub_park(hub, sk_watch_hub_seq(hub), slow, &sw);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, notifier, &sw), 0);
    while (!atomic_load(&sw.in_wake))
        sleep_ms(1);
    atomic_int other = 0;
    uint64_t ticket = sk_watch_hub_park(hub, sk_watch_hub_seq(hub), count_wake, &other);
    atomic_store(&sw.parked_meanwhile, 1);
    assert_true(ticket > SK_HUB_MOVED);
    pthread_join(t, NULL);
    assert_int_equal(wait_for(&sw.done, 1), 1);
    assert_int_equal(atomic_load(&sw.saw_park), 1);
    assert_int_equal(atomic_load(&other), 0); /* parked after that notify: waits for the next */
    sk_watch_hub_notify(hub);
    assert_int_equal(wait_for(&other, 1), 1);
    sk_watch_hub_free(hub);
}

static void test_cancel_waits_for_running_wake(void **state)
{
    (void)state;
    sk_watch_hub *hub = sk_watch_hub_new();
    slow_wake sw = {.hub = hub};
    uint64_t ticket = sk_watch_hub_park(hub, sk_watch_hub_seq(hub), slow, &sw);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, notifier, &sw), 0);
    while (!atomic_load(&sw.in_wake))
        sleep_ms(1);
    sk_watch_hub_cancel(hub, ticket);
    /* The wake was running (200 ms): cancel returned only after it ended. */
    assert_int_equal(atomic_load(&sw.done), 1);
    pthread_join(t, NULL);
    sk_watch_hub_free(hub);
}

/* A watcher that parks again from its wake, with the count it has seen, as
 * a stream does after sending everything new. */
typedef struct reparker {
    sk_watch_hub *hub;
    atomic_int wakes;
    _Atomic uint64_t seen; /* the count at its last wake */
} reparker;

static void repark(void *arg)
{
    reparker *r = arg;
    atomic_fetch_add(&r->wakes, 1);
    for (;;) {
        uint64_t seen = sk_watch_hub_seq(r->hub);
        atomic_store(&r->seen, seen);
        if (sk_watch_hub_park(r->hub, seen, repark, r) != SK_HUB_MOVED)
            break; /* parked, or the hub is stopping */
    }
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_notifies_coalesce(void **state)
{
    (void)state;
    sk_watch_hub *hub = sk_watch_hub_new();
    reparker r = {.hub = hub};
    uint64_t seen = sk_watch_hub_seq(hub);
    assert_true(sk_watch_hub_park(hub, seen, repark, &r) > SK_HUB_MOVED);
    /* 2,000 notifies over about 100 ms: a pass per notify would wake it
     * 2,000 times; at most a pass per 5 ms (the hub's gap; 4 here for the
     * clocks' granularity), one per 4 ms of the time taken. */
    int64_t t0 = now_ms();
    for (int i = 0; i < 2000; i++) {
        sk_watch_hub_notify(hub);
        if (i % 20 == 0)
            sleep_ms(1);
    }
    uint64_t last = sk_watch_hub_seq(hub);
    /* The last notify is never lost: a wake comes after it. */
    for (int i = 0; i < 5000 && atomic_load(&r.seen) != last; i++)
        sleep_ms(1);
    assert_int_equal(atomic_load(&r.seen), last);
    int64_t took = now_ms() - t0;
    int wakes = atomic_load(&r.wakes);
    assert_true(wakes >= 1 && wakes <= took / 4 + 2);
    /* Parked having seen the latest count, it sleeps through later passes
     * until a notify comes. */
    sleep_ms(50);
    assert_int_equal(atomic_load(&r.wakes), wakes);
    sk_watch_hub_notify(hub);
    assert_int_equal(wait_for(&r.wakes, wakes + 1), wakes + 1);
    sk_watch_hub_free(hub); /* stop wakes it once more; that park is refused */
    assert_int_equal(atomic_load(&r.wakes), wakes + 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notify_wakes_once),
        cmocka_unit_test(test_cancel_and_stop),
        cmocka_unit_test(test_park_during_wake_pass),
        cmocka_unit_test(test_cancel_waits_for_running_wake),
        cmocka_unit_test(test_notifies_coalesce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
