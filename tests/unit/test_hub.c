/*
 * test_hub.c - the watch fan-out (watch/hub.h): a parked watcher is woken
 * exactly once per notify; a park with a stale count or after stop is
 * refused; a cancelled watcher is never woken; while a notify's wakes run,
 * other threads can still read the count and park (the wakes run outside the
 * hub's list lock); and a cancel of a watcher whose wake is running returns
 * only after that wake has finished (its connection may be freed next).
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
    assert_int_equal(atomic_load(&a), 1);
    assert_int_equal(atomic_load(&b), 1);
    assert_int_equal(sk_watch_hub_seq(hub), seen + 1);
    /* Woken means forgotten: the next notify does not wake them again. */
    sk_watch_hub_notify(hub);
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

static void sleep_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

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
    assert_int_equal(atomic_load(&sw.saw_park), 1);
    assert_int_equal(atomic_load(&other), 0); /* parked after that notify: waits for the next */
    sk_watch_hub_notify(hub);
    assert_int_equal(atomic_load(&other), 1);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notify_wakes_once),
        cmocka_unit_test(test_cancel_and_stop),
        cmocka_unit_test(test_park_during_wake_pass),
        cmocka_unit_test(test_cancel_waits_for_running_wake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
