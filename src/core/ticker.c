/*
 * ticker.c - see ticker.h.
 */
#include "core/ticker.h"
#include "core/check.h"
#include "core/util.h"

#include <pthread.h>
#include <stdlib.h>

struct sk_ticker {
    sk_ticker_fn fn;
    void *arg;
    int64_t delay_ms;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stopping;
};

static void *ticker_main(void *arg)
{
    sk_ticker *t = arg;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        struct timespec until;
        sk_deadline_after_ms(&until, t->delay_ms);
        while (!t->stopping && pthread_cond_timedwait(&t->cv, &t->mu, &until) == 0)
            ;
        if (t->stopping)
            break;
        pthread_mutex_unlock(&t->mu);
        int64_t next = t->fn(t->arg);
        pthread_mutex_lock(&t->mu);
        t->delay_ms = next;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

sk_ticker *sk_ticker_start(int64_t first_delay_ms, sk_ticker_fn fn, void *arg)
{
    sk_ticker *t = calloc(1, sizeof *t);
    SK_CHECK_ALLOC(t);
    t->fn = fn;
    t->arg = arg;
    t->delay_ms = first_delay_ms;
    pthread_mutex_init(&t->mu, NULL);
    sk_cond_init_monotonic(&t->cv);
    SK_CHECK(pthread_create(&t->thread, NULL, ticker_main, t) == 0);
    pthread_setname_np(t->thread, "sk-ticker");
    return t;
}

void sk_ticker_stop(sk_ticker *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->stopping = 1;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    free(t);
}
