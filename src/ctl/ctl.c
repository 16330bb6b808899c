/*
 * ctl.c - see ctl.h. The ticker owns the thread and its prompt stop; this
 * adds the pass count that health reads.
 */
#include "ctl/ctl.h"
#include "core/check.h"
#include "core/ticker.h"

#include <stdatomic.h>
#include <stdlib.h>

struct sk_ctl {
    const sk_ctl_def *def;
    void *self;
    sk_ticker *ticker;
    atomic_llong passes_done;
};

static int64_t run_pass(void *arg)
{
    sk_ctl *c = arg;
    int done = 0;
    int64_t next = c->def->pass(c->self, &done);
    if (done)
        atomic_fetch_add(&c->passes_done, 1);
    return next;
}

sk_ctl *sk_ctl_start(const sk_ctl_def *def, void *self, int64_t first_delay_ms)
{
    sk_ctl *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->def = def;
    c->self = self;
    c->ticker = sk_ticker_start(first_delay_ms, run_pass, c);
    return c;
}

void sk_ctl_stop(sk_ctl *c)
{
    if (!c)
        return;
    sk_ticker_stop(c->ticker);
    c->def->free(c->self);
    free(c);
}

int sk_ctl_healthy(const sk_ctl *c)
{
    return c && atomic_load(&c->passes_done) > 0;
}

void *sk_ctl_self(sk_ctl *c)
{
    return c->self;
}
