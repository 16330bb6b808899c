/*
 * test_streamer.c - the streamer over socketpairs: the bytes a client gets
 * (head, chunked framing or none, the last chunk), wakes, a client that
 * goes away, a client that stops reading (stall), stop, and one endless
 * stream not holding its thread from the others.
 */
#include "http/streamer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* A scripted body: pieces handed out one per read, then -2 until more are
 * given, or the end; `endless`: a full block at every read. */
typedef struct script {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *pieces[8];
    size_t n, next;
    int end, fail, endless;
    long reads;
    int ended;
    sk_stream_end why;
} script;

static void script_init(script *sc)
{
    memset(sc, 0, sizeof *sc);
    pthread_mutex_init(&sc->mu, NULL);
    pthread_cond_init(&sc->cv, NULL);
}

static ssize_t script_read(void *arg, char *buf, size_t max)
{
    script *sc = arg;
    ssize_t n;
    pthread_mutex_lock(&sc->mu);
    sc->reads++;
    if (sc->endless) {
        memset(buf, 'e', max);
        n = (ssize_t)max;
    } else if (sc->next < sc->n) {
        size_t len = strlen(sc->pieces[sc->next]);
        assert_true(len <= max);
        memcpy(buf, sc->pieces[sc->next++], len);
        n = (ssize_t)len;
    } else {
        n = sc->fail ? -1 : sc->end ? 0 : -2;
    }
    pthread_mutex_unlock(&sc->mu);
    return n;
}

static void script_ended(void *arg, sk_stream_end why)
{
    script *sc = arg;
    pthread_mutex_lock(&sc->mu);
    sc->ended++;
    sc->why = why;
    pthread_cond_broadcast(&sc->cv);
    pthread_mutex_unlock(&sc->mu);
}

/* Waits up to ms for ended(); returns how it ended, -1 if it did not. */
static int wait_ended(script *sc, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&sc->mu);
    while (!sc->ended && pthread_cond_timedwait(&sc->cv, &sc->mu, &until) == 0)
        ;
    int r = sc->ended ? (int)sc->why : -1;
    assert_true(sc->ended <= 1);
    pthread_mutex_unlock(&sc->mu);
    return r;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct pair {
    int server, client;
} pair;

static pair make_pair(void)
{
    int fds[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    return (pair){fds[0], fds[1]};
}

static sk_stream *add(sk_streamer *st, pair p, script *sc, const char *head, int chunked,
                      int stall_s)
{
    sk_stream_spec spec = {
        .fd = p.server,
        .head = head,
        .head_len = strlen(head),
        .chunked = chunked,
        .stall_timeout_s = stall_s,
        .source = {script_read, script_ended, sc},
    };
    sk_stream *s = sk_streamer_add(st, &spec);
    assert_non_null(s);
    return s;
}

/* Reads from fd until `want` bytes came (or 5 s passed); asserts they are want. */
static void expect_bytes(int fd, const char *want)
{
    size_t len = strlen(want), got = 0;
    char buf[4096];
    assert_true(len < sizeof buf);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (got < len) {
        ssize_t n = recv(fd, buf + got, len - got, 0);
        if (n <= 0)
            fail_msg("got %zu of %zu bytes: %.*s", got, len, (int)got, buf);
        got += (size_t)n;
    }
    buf[got] = '\0';
    assert_string_equal(buf, want);
}

static void expect_nothing_pending(int fd)
{
    char c;
    assert_int_equal(recv(fd, &c, 1, MSG_DONTWAIT), -1);
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

static long reads_of(script *sc)
{
    pthread_mutex_lock(&sc->mu);
    long n = sc->reads;
    pthread_mutex_unlock(&sc->mu);
    return n;
}

/* Waits (up to 5 s) until sc's reads reach at least min; returns them. */
static long wait_reads(script *sc, long min)
{
    long n = reads_of(sc);
    for (int i = 0; i < 500 && n < min; i++) {
        usleep(10 * 1000);
        n = reads_of(sc);
    }
    return n;
}

/* Hands sc one more piece, and its end if `end`. */
static void give(script *sc, const char *piece, int end)
{
    pthread_mutex_lock(&sc->mu);
    if (piece)
        sc->pieces[sc->n++] = piece;
    sc->end = end;
    pthread_mutex_unlock(&sc->mu);
}

/* One streamer, one source and one socket pair, for a test of one stream. */
typedef struct rig {
    sk_streamer *st;
    script sc;
    pair p;
    sk_stream *s;
} rig;

static void rig_open(rig *r, unsigned threads)
{
    r->st = sk_streamer_start(threads);
    script_init(&r->sc);
    r->p = make_pair();
    r->s = NULL;
}

static void rig_add(rig *r, const char *head, int chunked, int stall_s)
{
    r->s = add(r->st, r->p, &r->sc, head, chunked, stall_s);
}

/* The streamer first: it ends a stream still going, which may then be freed. */
static void rig_close(rig *r)
{
    sk_streamer_free(r->st);
    sk_stream_free(r->s);
    close(r->p.server);
    if (r->p.client >= 0)
        close(r->p.client);
}

static void test_chunked_body_ends_with_last_chunk(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 2);
    give(&r.sc, "abc", 0);
    give(&r.sc, "0123456789abcdefg", 1); /* 17 bytes: size line "11" */
    rig_add(&r, "HTTP/1.1 200 OK\r\n\r\n", 1, 0);
    expect_bytes(r.p.client,
                 "HTTP/1.1 200 OK\r\n\r\n3\r\nabc\r\n11\r\n0123456789abcdefg\r\n0\r\n\r\n");
    assert_int_equal(wait_ended(&r.sc, 5000), SK_STREAM_ENDED);
    expect_nothing_pending(r.p.client);
    rig_close(&r);
}

static void test_unframed_body_and_wakes(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 1);
    rig_add(&r, "H\r\n\r\n", 0, 0);
    expect_bytes(r.p.client, "H\r\n\r\n");
    /* Parked (its first read found nothing): nothing until a wake. */
    assert_true(wait_reads(&r.sc, 1) >= 1);
    give(&r.sc, "line one\n", 0);
    usleep(100 * 1000);
    expect_nothing_pending(r.p.client);
    sk_streamer_wake(r.s);
    expect_bytes(r.p.client, "line one\n");
    give(&r.sc, "line two\n", 1);
    sk_streamer_wake(r.s);
    expect_bytes(r.p.client, "line two\n");
    assert_int_equal(wait_ended(&r.sc, 5000), SK_STREAM_ENDED);
    expect_nothing_pending(r.p.client);
    rig_close(&r);
}

static void test_source_failure_ends_without_last_chunk(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 1);
    give(&r.sc, "x", 0);
    r.sc.fail = 1;
    rig_add(&r, "H\r\n\r\n", 1, 0);
    expect_bytes(r.p.client, "H\r\n\r\n1\r\nx\r\n");
    assert_int_equal(wait_ended(&r.sc, 5000), SK_STREAM_FAILED);
    expect_nothing_pending(r.p.client);
    rig_close(&r);
}

static void test_client_gone_is_seen_without_a_wake(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 1);
    rig_add(&r, "H\r\n\r\n", 1, 0);
    expect_bytes(r.p.client, "H\r\n\r\n");
    close(r.p.client);
    r.p.client = -1;
    assert_int_equal(wait_ended(&r.sc, 2000), SK_STREAM_CLIENT_GONE);
    rig_close(&r);
}

/* An endless stream to a client whose socket takes 4 KiB. */
static void open_endless_to_small_socket(rig *r, int stall_s)
{
    rig_open(r, 1);
    r->sc.endless = 1;
    int small = 4096;
    setsockopt(r->p.server, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    rig_add(r, "H\r\n\r\n", 1, stall_s);
}

static void test_client_that_stops_reading_is_dropped(void **state)
{
    (void)state;
    rig r;
    open_endless_to_small_socket(&r, 1);
    int64_t t0 = now_ms();
    assert_int_equal(wait_ended(&r.sc, 5000), SK_STREAM_STALLED);
    assert_true(now_ms() - t0 >= 900); /* not before the timeout */
    /* Blocked, it stopped reading its source: a few blocks, not a stream. */
    assert_true(reads_of(&r.sc) < 16);
    rig_close(&r);
}

static void test_slow_steady_reader_is_not_dropped(void **state)
{
    (void)state;
    rig r;
    open_endless_to_small_socket(&r, 1);
    /* 4 KiB every 250 ms for 2.5 s: far below a block per stall timeout,
     * but progress every time. */
    char buf[4096];
    for (int i = 0; i < 10; i++) {
        usleep(250 * 1000);
        assert_true(recv(r.p.client, buf, sizeof buf, 0) > 0);
    }
    assert_int_equal(wait_ended(&r.sc, 0), -1);
    /* Then it stops reading: dropped. */
    assert_int_equal(wait_ended(&r.sc, 5000), SK_STREAM_STALLED);
    rig_close(&r);
}

static void test_stop_ends_parked_and_blocked_streams(void **state)
{
    (void)state;
    rig blocked, parked;
    open_endless_to_small_socket(&blocked, 0);
    rig_open(&parked, 1);
    rig_add(&parked, "H\r\n\r\n", 1, 0);
    expect_bytes(parked.p.client, "H\r\n\r\n");
    /* The endless one blocks on its full socket: its reads stop. */
    long before = -1, now = reads_of(&blocked.sc);
    for (int i = 0; i < 100 && (now == 0 || now != before); i++) {
        before = now;
        usleep(50 * 1000);
        now = reads_of(&blocked.sc);
    }
    assert_true(now > 0 && now == before);
    sk_streamer_stop(blocked.st);
    sk_streamer_stop(parked.st);
    assert_int_equal(wait_ended(&parked.sc, 0), SK_STREAM_STOPPED);
    assert_int_equal(wait_ended(&blocked.sc, 0), SK_STREAM_STOPPED);
    /* Stopped, it refuses new streams (until freed). */
    script late;
    script_init(&late);
    sk_stream_spec spec = {.fd = parked.p.server, .source = {script_read, script_ended, &late}};
    assert_null(sk_streamer_add(parked.st, &spec));
    rig_close(&parked);
    rig_close(&blocked);
}

static void *drain(void *arg)
{
    int fd = *(int *)arg;
    char buf[65536];
    while (recv(fd, buf, sizeof buf, 0) > 0)
        ;
    return NULL;
}

static void test_endless_stream_does_not_hold_its_thread(void **state)
{
    (void)state;
    rig other;
    rig_open(&other, 1); /* both streams on its one thread */
    script endless;
    script_init(&endless);
    endless.endless = 1;
    pair e = make_pair();
    pthread_t reader;
    assert_int_equal(pthread_create(&reader, NULL, drain, &e.client), 0);
    sk_stream *se = add(other.st, e, &endless, "H\r\n\r\n", 1, 0);
    rig_add(&other, "H\r\n\r\n", 1, 0);
    expect_bytes(other.p.client, "H\r\n\r\n");
    /* The endless one streams on (many turns of TURN_BLOCKS blocks)... */
    assert_true(wait_reads(&endless, 64) >= 64);
    /* ...and the other still gets its turn at a wake. */
    give(&other.sc, "event", 0);
    sk_streamer_wake(other.s);
    expect_bytes(other.p.client, "5\r\nevent\r\n");
    rig_close(&other);
    shutdown(e.client, SHUT_RDWR);
    pthread_join(reader, NULL);
    assert_int_equal(wait_ended(&endless, 0), SK_STREAM_STOPPED);
    sk_stream_free(se);
    close(e.server);
    close(e.client);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunked_body_ends_with_last_chunk),
        cmocka_unit_test(test_unframed_body_and_wakes),
        cmocka_unit_test(test_source_failure_ends_without_last_chunk),
        cmocka_unit_test(test_client_gone_is_seen_without_a_wake),
        cmocka_unit_test(test_client_that_stops_reading_is_dropped),
        cmocka_unit_test(test_slow_steady_reader_is_not_dropped),
        cmocka_unit_test(test_stop_ends_parked_and_blocked_streams),
        cmocka_unit_test(test_endless_stream_does_not_hold_its_thread),
    };
    return cmocka_run_group_tests(tests, 0, NULL);
}
