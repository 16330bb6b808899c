/*
 * watchbench.c - load generator for sqlkube's watch path, raw HTTP/1.1 over
 * loopback sockets (libc and pthreads only, no sqlkube code, no HTTP
 * library), so the same binary can be pointed at any build or at another
 * API server.
 *
 *   watchbench load      --url URL --namespace NS --count N --size BYTES
 *                        [--clients C] [--prefix P]
 *   watchbench watchlist --url URL --namespace NS --clients N --expect OBJECTS
 *   watchbench latency   --url URL --namespace NS --clients N --events M
 *                        [--interval-ms MS] [--threads T]
 *
 * load: creates namespace NS (an existing one is fine) and N ConfigMaps
 * P-000000.. with one data value of BYTES bytes each, over C keep-alive
 * connections. Any answer but 201 fails the run.
 *
 * watchlist: N threads start together (a barrier); each opens
 *   GET /api/v1/namespaces/NS/configmaps?watch=true&sendInitialEvents=true
 *       &resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true
 * reads the chunked stream, splits it into lines (one event a line), counts
 * ADDED events and stops at the BOOKMARK whose object carries the annotation
 * "k8s.io/initial-events-end". A client's time is request sent -> that
 * bookmark read; the wall time is the common start -> the last client's end.
 * Every client must see exactly OBJECTS ADDED events, with strictly
 * increasing names (key order, so no duplicates), and every client the same
 * number of bytes; anything else (another event type, an ERROR event, a
 * stream that ends or stalls for 120 s) fails the run loudly.
 *
 * latency: N watchers (T epoll threads) open plain watches at the current
 * revision (GET ...?watch=true&resourceVersion=R, R read from a list just
 * before). A writer then creates one warm-up ConfigMap and waits until every
 * watcher has seen it (so every watch is live and its connection resumed
 * once), then creates M ConfigMaps, one every MS milliseconds or at R a
 * second (--rate; paced against the schedule, not after each answer), each
 * carrying in its data the CLOCK_REALTIME time in ns taken just before its
 * request was sent. With --writers W the creates are spread over W
 * connections (create i on writer i mod W), so a slow answer does not lower
 * the rate. Every watcher records (time the event's last byte was received -
 * that time) for every event, and checks the events arrive exactly once, in
 * order (resourceVersions increasing; with one writer also names 0..M-1 in
 * sequence). Reports p50/p99/max over
 * all N*M deliveries. Fails if any watcher misses, repeats or reorders an
 * event, or the server ends a watch.
 *
 * Every mode prints one JSON line to stdout (progress and failures go to
 * stderr) and exits 1 on any failure, so scripts notice a broken run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define IO_TIMEOUT_S 120 /* a blocking read that waits this long is a stall */
#define HDR_MAX 16384
#define RECV_BUF (256 * 1024)

/* ---- options ---------------------------------------------------------- */

typedef struct options {
    const char *mode;
    char host[256];
    char port[16];
    const char *ns;
    const char *prefix;
    int clients;
    long count;
    size_t size;
    long expect;
    int events;
    int interval_ms;
    double rate; /* creates a second; overrides interval_ms */
    int writers;
    int threads;
    int timeout_s;
} options;

static options opt = {
    .ns = "bench",
    .prefix = "cm",
    .clients = 0,
    .count = 400,
    .size = 1 << 20,
    .expect = -1,
    .events = 200,
    .interval_ms = 10,
    .writers = 1,
    .threads = 4,
    .timeout_s = 300,
};

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "watchbench: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- sockets ---------------------------------------------------------- */

static int tcp_connect(int timeout_s)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int fd = -1;
    if (getaddrinfo(opt.host, opt.port, &hints, &ai) != 0)
        return -1;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return -1;
    int one = 1;
    struct timeval tv = {.tv_sec = timeout_s};
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_get(int fd, const char *path)
{
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s:%s\r\nAccept: application/json\r\n"
                     "User-Agent: watchbench\r\n\r\n",
                     path, opt.host, opt.port);
    return send_all(fd, req, (size_t)n);
}

/* ---- incremental HTTP/1.1 response parser ------------------------------
 * Fed arbitrary slices of the byte stream; calls on_line for every line of
 * the (de-chunked) body. A line keeps at most keep_max bytes (the rest is
 * only counted), so 1 MiB events cost no 1 MiB buffers. */

enum {
    P_HEADERS,
    P_CHUNK_SIZE,
    P_CHUNK_DATA,
    P_CHUNK_CRLF,
    P_TRAILER,
    P_IDENTITY,
    P_EOF_BODY,
    P_DONE
};

typedef struct parser parser;
/* Returns non-zero to stop feeding (the caller is done with the stream). */
typedef int (*line_fn)(parser *p, const char *line, size_t kept, size_t total);

struct parser {
    int state;
    int status;
    int chunked;
    long long content_left;
    char hdr[HDR_MAX];
    size_t hdr_len;
    char sz[80];
    size_t sz_len;
    uint64_t chunk_left;
    char *line;
    size_t line_kept, line_total, keep_max;
    uint64_t body_bytes;
    int64_t recv_ns; /* CLOCK_REALTIME of the recv that delivered the current bytes */
    line_fn on_line;
    void *arg;
    char err[256];
};

static void parser_init(parser *p, size_t keep_max, line_fn fn, void *arg)
{
    memset(p, 0, sizeof *p);
    p->keep_max = keep_max;
    p->line = malloc(keep_max + 1);
    if (!p->line)
        die("out of memory");
    p->on_line = fn;
    p->arg = arg;
}

static void parser_free(parser *p)
{
    free(p->line);
    p->line = NULL;
}

static int parse_headers(parser *p)
{
    p->hdr[p->hdr_len] = '\0';
    if (sscanf(p->hdr, "HTTP/1.%*d %d", &p->status) != 1) {
        snprintf(p->err, sizeof p->err, "bad status line: %.80s", p->hdr);
        return -1;
    }
    p->content_left = -1;
    for (char *l = strstr(p->hdr, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
        char *h = l + 2;
        if (strncasecmp(h, "transfer-encoding:", 18) == 0) {
            char *v = h + 18;
            char *e = strstr(v, "\r\n");
            if (e && memmem(v, (size_t)(e - v), "chunked", 7))
                p->chunked = 1;
        } else if (strncasecmp(h, "content-length:", 15) == 0) {
            p->content_left = strtoll(h + 15, NULL, 10);
        }
    }
    if (p->chunked)
        p->state = P_CHUNK_SIZE;
    else if (p->content_left >= 0)
        p->state = p->content_left ? P_IDENTITY : P_DONE;
    else
        p->state = P_EOF_BODY;
    return 0;
}

/* Body bytes -> lines. Returns non-zero if the line callback stopped. */
static int body_feed(parser *p, const char *d, size_t n)
{
    p->body_bytes += n;
    while (n > 0) {
        const char *nl = memchr(d, '\n', n);
        size_t seg = nl ? (size_t)(nl - d) : n;
        size_t room = p->keep_max - p->line_kept;
        size_t c = seg < room ? seg : room;
        memcpy(p->line + p->line_kept, d, c);
        p->line_kept += c;
        p->line_total += seg;
        if (!nl)
            return 0;
        p->line[p->line_kept] = '\0';
        int stop = p->on_line ? p->on_line(p, p->line, p->line_kept, p->line_total) : 0;
        p->line_kept = p->line_total = 0;
        d += seg + 1;
        n -= seg + 1;
        if (stop)
            return 1;
    }
    return 0;
}

/* Returns 1 if the callback stopped, 2 when the response is complete, 0 for
 * more input, -1 on a protocol error (p->err). */
static int parser_feed(parser *p, const char *d, size_t n)
{
    while (n > 0 || p->state == P_DONE) {
        switch (p->state) {
        case P_HEADERS: {
            while (n > 0) {
                if (p->hdr_len >= HDR_MAX - 1) {
                    char show[121];
                    size_t k = 0;
                    for (; k < 120 && k < p->hdr_len; k++)
                        show[k] = p->hdr[k] >= 32 && p->hdr[k] < 127 ? p->hdr[k] : '.';
                    show[k] = '\0';
                    snprintf(p->err, sizeof p->err, "no end of response headers in %zu bytes: %s",
                             p->hdr_len, show);
                    return -1;
                }
                p->hdr[p->hdr_len++] = *d++;
                n--;
                if (p->hdr_len >= 4 && memcmp(p->hdr + p->hdr_len - 4, "\r\n\r\n", 4) == 0) {
                    if (parse_headers(p) < 0)
                        return -1;
                    break;
                }
            }
            break;
        }
        case P_CHUNK_SIZE:
        case P_TRAILER: {
            const char *nl = memchr(d, '\n', n);
            size_t seg = nl ? (size_t)(nl - d) + 1 : n;
            if (p->sz_len + seg >= sizeof p->sz) {
                snprintf(p->err, sizeof p->err, "bad chunk header");
                return -1;
            }
            memcpy(p->sz + p->sz_len, d, seg);
            p->sz_len += seg;
            d += seg;
            n -= seg;
            if (!nl)
                break;
            p->sz[p->sz_len] = '\0';
            if (p->state == P_TRAILER) {
                int empty = strcmp(p->sz, "\r\n") == 0 || strcmp(p->sz, "\n") == 0;
                p->sz_len = 0;
                if (empty)
                    p->state = P_DONE;
                break;
            }
            char *end;
            p->chunk_left = strtoull(p->sz, &end, 16);
            if (end == p->sz) {
                snprintf(p->err, sizeof p->err, "bad chunk size line: %.40s", p->sz);
                return -1;
            }
            p->sz_len = 0;
            p->state = p->chunk_left ? P_CHUNK_DATA : P_TRAILER;
            break;
        }
        case P_CHUNK_DATA: {
            size_t c = n < p->chunk_left ? n : (size_t)p->chunk_left;
            p->chunk_left -= c;
            if (p->chunk_left == 0)
                p->state = P_CHUNK_CRLF;
            if (body_feed(p, d, c))
                return 1;
            d += c;
            n -= c;
            break;
        }
        case P_CHUNK_CRLF: /* the CRLF after a chunk's data */
            if (*d == '\n')
                p->state = P_CHUNK_SIZE;
            else if (*d != '\r') {
                snprintf(p->err, sizeof p->err, "missing CRLF after chunk");
                return -1;
            }
            d++;
            n--;
            break;
        case P_IDENTITY: {
            size_t c = (long long)n < p->content_left ? n : (size_t)p->content_left;
            p->content_left -= (long long)c;
            if (p->content_left == 0)
                p->state = P_DONE;
            if (body_feed(p, d, c))
                return 1;
            d += c;
            n -= c;
            break;
        }
        case P_EOF_BODY:
            if (body_feed(p, d, n))
                return 1;
            n = 0;
            break;
        case P_DONE:
            if (p->line_kept || p->line_total) { /* a last line without '\n' */
                p->line[p->line_kept] = '\0';
                if (p->on_line)
                    p->on_line(p, p->line, p->line_kept, p->line_total);
                p->line_kept = p->line_total = 0;
            }
            if (n > 0) {
                snprintf(p->err, sizeof p->err, "%zu unexpected bytes after the response", n);
                return -1;
            }
            return 2;
        }
    }
    return 0;
}

/* ---- small JSON helpers (the server's compact output) ----------------- */

/* Copies the string value after the first `"key":"` into out. */
static int json_str(const char *s, const char *key, char *out, size_t cap)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *v = strstr(s, pat);
    if (!v)
        return -1;
    v += strlen(pat);
    const char *e = strchr(v, '"');
    if (!e || (size_t)(e - v) >= cap)
        return -1;
    memcpy(out, v, (size_t)(e - v));
    out[e - v] = '\0';
    return 0;
}

static int event_type(const char *line, char *out, size_t cap)
{
    if (strncmp(line, "{\"type\":\"", 9) != 0)
        return -1;
    return json_str(line, "type", out, cap);
}

/* ---- a blocking request on a keep-alive connection --------------------- */

typedef struct collect {
    char *buf;
    size_t len, cap;
} collect;

static int collect_line(parser *p, const char *line, size_t kept, size_t total)
{
    (void)total;
    collect *c = p->arg;
    if (c->len + kept + 2 > c->cap) {
        c->cap = (c->len + kept + 2) * 2;
        c->buf = realloc(c->buf, c->cap);
        if (!c->buf)
            die("out of memory");
    }
    memcpy(c->buf + c->len, line, kept);
    c->len += kept;
    c->buf[c->len] = '\0';
    return 0;
}

/* Sends req (complete request bytes) and reads the whole answer; the body's
 * first keep bytes of every line are gathered into *body (caller frees).
 * Returns the status, -1 on a transport error. */
static int request(int fd, const char *req, size_t req_len, size_t keep, char **body)
{
    char *buf = malloc(65536);
    parser p;
    collect c = {0};
    parser_init(&p, keep, collect_line, &c);
    int status = -1;
    if (send_all(fd, req, req_len) < 0)
        goto out;
    for (;;) {
        ssize_t r = recv(fd, buf, 65536, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0 && p.state == P_EOF_BODY) {
                p.state = P_DONE;
                parser_feed(&p, NULL, 0);
                status = p.status;
            }
            goto out;
        }
        int rc = parser_feed(&p, buf, (size_t)r);
        if (rc < 0) {
            fprintf(stderr, "watchbench: %s\n", p.err);
            goto out;
        }
        if (rc == 2) {
            status = p.status;
            goto out;
        }
    }
out:
    free(buf);
    parser_free(&p);
    if (body)
        *body = c.buf ? c.buf : strdup("");
    else
        free(c.buf);
    return status;
}

static int simple_request(int fd, const char *method, const char *path, const char *json,
                          char **body)
{
    size_t blen = json ? strlen(json) : 0;
    size_t cap = blen + 1024;
    char *req = malloc(cap);
    if (!req)
        die("out of memory");
    int n = snprintf(req, cap,
                     "%s %s HTTP/1.1\r\nHost: %s:%s\r\nAccept: application/json\r\n"
                     "User-Agent: watchbench\r\n%s",
                     method, path, opt.host, opt.port,
                     json ? "Content-Type: application/json\r\n" : "");
    n += snprintf(req + n, cap - (size_t)n, "Content-Length: %zu\r\n\r\n", blen);
    if (json)
        memcpy(req + n, json, blen);
    int st = request(fd, req, (size_t)n + blen, 65536, body);
    free(req);
    return st;
}

static void ensure_namespace(const char *ns)
{
    int fd = tcp_connect(30);
    if (fd < 0)
        die("cannot connect to %s:%s", opt.host, opt.port);
    char json[512], *body = NULL;
    snprintf(json, sizeof json,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns);
    int st = simple_request(fd, "POST", "/api/v1/namespaces", json, &body);
    if (st != 201 && st != 409)
        die("creating namespace %s: HTTP %d: %.300s", ns, st, body);
    free(body);
    close(fd);
}

/* ---- load ------------------------------------------------------------- */

typedef struct load_worker {
    pthread_t thread;
    int id;
    atomic_long *next;
    long ok;
    int failed;
} load_worker;

static void *load_main(void *arg)
{
    load_worker *w = arg;
    size_t cap = opt.size + 4096;
    char *req = malloc(cap);
    if (!req)
        die("out of memory");
    int fd = -1;
    for (;;) {
        long i = atomic_fetch_add(w->next, 1);
        if (i >= opt.count)
            break;
        char json_head[512];
        int jh = snprintf(json_head, sizeof json_head,
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"%s-%06ld\",\"namespace\":\"%s\"},\"data\":{\"blob\":\"",
                          opt.prefix, i, opt.ns);
        const char *tail = "\"}}";
        size_t blen = (size_t)jh + opt.size + strlen(tail);
        int n = snprintf(req, cap,
                         "POST /api/v1/namespaces/%s/configmaps HTTP/1.1\r\nHost: %s:%s\r\n"
                         "Content-Type: application/json\r\nAccept: application/json\r\n"
                         "User-Agent: watchbench\r\nContent-Length: %zu\r\n\r\n%s",
                         opt.ns, opt.host, opt.port, blen, json_head);
        /* Data: printable, varied (so nothing compresses it away), no JSON escapes. */
        char *d = req + n;
        uint32_t x = (uint32_t)(i * 2654435761u + 1);
        for (size_t k = 0; k < opt.size; k++) {
            x = x * 1103515245u + 12345u;
            d[k] = (char)('a' + ((x >> 16) % 26));
        }
        memcpy(d + opt.size, tail, strlen(tail));
        size_t total = (size_t)n + opt.size + strlen(tail);
        if (fd < 0 && (fd = tcp_connect(60)) < 0)
            die("cannot connect to %s:%s", opt.host, opt.port);
        char *body = NULL;
        int st = request(fd, req, total, 512, &body);
        if (st != 201) {
            fprintf(stderr, "watchbench: create %s-%06ld: HTTP %d: %.300s\n", opt.prefix, i, st,
                    body);
            w->failed = 1;
            free(body);
            break;
        }
        free(body);
        w->ok++;
    }
    if (fd >= 0)
        close(fd);
    free(req);
    return NULL;
}

static int run_load(void)
{
    if (opt.clients <= 0)
        opt.clients = 4;
    ensure_namespace(opt.ns);
    atomic_long next = 0;
    load_worker *ws = calloc((size_t)opt.clients, sizeof *ws);
    int64_t t0 = mono_ns();
    for (int i = 0; i < opt.clients; i++) {
        ws[i].id = i;
        ws[i].next = &next;
        if (pthread_create(&ws[i].thread, NULL, load_main, &ws[i]) != 0)
            die("pthread_create");
    }
    long ok = 0;
    int failed = 0;
    for (int i = 0; i < opt.clients; i++) {
        pthread_join(ws[i].thread, NULL);
        ok += ws[i].ok;
        failed |= ws[i].failed;
    }
    double s = (double)(mono_ns() - t0) / 1e9;
    printf("{\"mode\":\"load\",\"namespace\":\"%s\",\"created\":%ld,\"size\":%zu,\"seconds\":%.2f,"
           "\"ok\":%s}\n",
           opt.ns, ok, opt.size, s, failed || ok != opt.count ? "false" : "true");
    free(ws);
    if (failed || ok != opt.count)
        die("created %ld of %ld ConfigMaps", ok, opt.count);
    return 0;
}

/* ---- watchlist -------------------------------------------------------- */

typedef struct wl_client {
    pthread_t thread;
    int id;
    pthread_barrier_t *barrier;
    int64_t t_start, t_first, t_end;
    long added;
    long other;
    int done; /* saw the initial-events-end bookmark */
    int names_checked;
    int names_ok;
    char prev_name[256];
    char bookmark_rv[32];
    uint64_t bytes;
    char err[512];
} wl_client;

static int wl_line(parser *p, const char *line, size_t kept, size_t total)
{
    wl_client *c = p->arg;
    char type[32];
    if (event_type(line, type, sizeof type) < 0) {
        snprintf(c->err, sizeof c->err, "not a watch event (%zu bytes): %.200s", total, line);
        return 1;
    }
    if (strcmp(type, "ADDED") == 0) {
        c->added++;
        char name[256];
        const char *meta = strstr(line, "\"metadata\":{");
        if (meta && json_str(meta, "name", name, sizeof name) == 0) {
            c->names_checked++;
            if (c->prev_name[0] && strcmp(name, c->prev_name) <= 0) {
                c->names_ok = 0;
                if (!c->err[0])
                    snprintf(c->err, sizeof c->err, "ADDED %.200s after %.200s (order/duplicate)",
                             name, c->prev_name);
            }
            snprintf(c->prev_name, sizeof c->prev_name, "%s", name);
        }
        (void)kept;
        return 0;
    }
    if (strcmp(type, "BOOKMARK") == 0) {
        if (strstr(line, "\"k8s.io/initial-events-end\":\"true\"")) {
            json_str(line, "resourceVersion", c->bookmark_rv, sizeof c->bookmark_rv);
            c->done = 1;
            return 1;
        }
        return 0;
    }
    c->other++;
    snprintf(c->err, sizeof c->err, "unexpected %s event during initial events: %.300s", type,
             line);
    return 1;
}

static void *wl_main(void *arg)
{
    wl_client *c = arg;
    char path[1024];
    snprintf(path, sizeof path,
             "/api/v1/namespaces/%s/configmaps?watch=true&sendInitialEvents=true"
             "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
             opt.ns);
    char *buf = malloc(RECV_BUF);
    parser p;
    parser_init(&p, 4096, wl_line, c);
    c->names_ok = 1;
    int fd = tcp_connect(IO_TIMEOUT_S);
    pthread_barrier_wait(c->barrier);
    if (fd < 0) {
        snprintf(c->err, sizeof c->err, "connect failed");
        goto out;
    }
    c->t_start = mono_ns();
    if (send_get(fd, path) < 0) {
        snprintf(c->err, sizeof c->err, "send failed: %s", strerror(errno));
        goto out;
    }
    for (;;) {
        ssize_t r = recv(fd, buf, RECV_BUF, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(c->err, sizeof c->err, "stream %s after %ld ADDED, %llu body bytes",
                     r == 0 ? "ended by the server" : strerror(errno), c->added,
                     (unsigned long long)p.body_bytes);
            break;
        }
        if (!c->t_first)
            c->t_first = mono_ns();
        int rc = parser_feed(&p, buf, (size_t)r);
        if (rc == 0)
            continue;
        if (rc < 0)
            snprintf(c->err, sizeof c->err, "%s", p.err);
        else if (rc == 2 && !c->done)
            snprintf(c->err, sizeof c->err, "HTTP %d, response ended after %ld ADDED: %.300s",
                     p.status, c->added, p.line);
        break;
    }
    c->t_end = mono_ns();
    if (p.status != 200 && !c->err[0])
        snprintf(c->err, sizeof c->err, "HTTP %d", p.status);
out:
    c->bytes = p.body_bytes;
    if (fd >= 0)
        close(fd);
    parser_free(&p);
    free(buf);
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int run_watchlist(void)
{
    if (opt.clients <= 0)
        opt.clients = 64;
    if (opt.expect < 0)
        die("watchlist needs --expect OBJECTS");
    wl_client *cs = calloc((size_t)opt.clients, sizeof *cs);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)opt.clients + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (int i = 0; i < opt.clients; i++) {
        cs[i].id = i;
        cs[i].barrier = &barrier;
        if (pthread_create(&cs[i].thread, &attr, wl_main, &cs[i]) != 0)
            die("pthread_create");
    }
    pthread_barrier_wait(&barrier);
    int64_t t0 = mono_ns();
    for (int i = 0; i < opt.clients; i++)
        pthread_join(cs[i].thread, NULL);
    int64_t t1 = mono_ns();
    int64_t *dur = calloc((size_t)opt.clients, sizeof *dur);
    int64_t *ttfb = calloc((size_t)opt.clients, sizeof *ttfb);
    int bad = 0;
    long ev_min = -1, ev_max = -1;
    uint64_t bytes0 = cs[0].bytes;
    int names_checked_all = 1;
    for (int i = 0; i < opt.clients; i++) {
        wl_client *c = &cs[i];
        dur[i] = c->t_end - c->t_start;
        ttfb[i] = c->t_first ? c->t_first - c->t_start : 0;
        if (ev_min < 0 || c->added < ev_min)
            ev_min = c->added;
        if (c->added > ev_max)
            ev_max = c->added;
        if (c->names_checked != c->added)
            names_checked_all = 0;
        int ok =
            c->done && !c->err[0] && c->added == opt.expect && c->names_ok && c->bytes == bytes0;
        if (!ok) {
            bad++;
            fprintf(stderr,
                    "watchbench: client %d: %ld ADDED (want %ld), bookmark %s, %llu bytes "
                    "(client 0: %llu)%s%s\n",
                    i, c->added, opt.expect, c->done ? "seen" : "NOT seen",
                    (unsigned long long)c->bytes, (unsigned long long)bytes0, c->err[0] ? ": " : "",
                    c->err);
        }
    }
    qsort(dur, (size_t)opt.clients, sizeof *dur, cmp_i64);
    qsort(ttfb, (size_t)opt.clients, sizeof *ttfb, cmp_i64);
    int n = opt.clients;
    printf("{\"mode\":\"watchlist\",\"clients\":%d,\"expect\":%ld,\"wall_s\":%.3f,"
           "\"client_min_s\":%.3f,\"client_median_s\":%.3f,\"client_max_s\":%.3f,"
           "\"ttfb_median_ms\":%.1f,\"ttfb_max_ms\":%.1f,"
           "\"events_min\":%ld,\"events_max\":%ld,\"names_checked\":%s,\"bytes_per_client\":%llu,"
           "\"bookmark_rv\":\"%s\",\"mib_per_s\":%.1f,\"failed_clients\":%d,\"ok\":%s}\n",
           n, opt.expect, (double)(t1 - t0) / 1e9, (double)dur[0] / 1e9, (double)dur[n / 2] / 1e9,
           (double)dur[n - 1] / 1e9, (double)ttfb[n / 2] / 1e6, (double)ttfb[n - 1] / 1e6, ev_min,
           ev_max, names_checked_all ? "true" : "false", (unsigned long long)bytes0,
           cs[0].bookmark_rv, (double)bytes0 * n / (1 << 20) / ((double)(t1 - t0) / 1e9), bad,
           bad ? "false" : "true");
    fflush(stdout);
    if (bad)
        die("%d of %d watch-list clients did not get exactly %ld ADDED events and the "
            "initial-events-end bookmark",
            bad, n, opt.expect);
    free(dur);
    free(ttfb);
    free(cs);
    return 0;
}

/* ---- latency ---------------------------------------------------------- */

typedef struct watcher {
    int fd;
    int id;
    parser p;
    int got_headers;
    int warm;     /* saw the warm-up event */
    int next_seq; /* the event expected next */
    long long last_rv;
    int ended; /* the server closed the stream */
    int bad;   /* order/duplicate/unexpected event */
    long bookmarks;
    int64_t *lat; /* ns per sequence number */
    char err[400];
} watcher;

#define LAT_NONE INT64_MIN /* not received (yet) */
static char run_id[32];
static watcher *watchers;
static atomic_int warm_count;
static atomic_int headers_count;
static atomic_long delivered;
static atomic_int stop_loops;

static int lat_line(parser *p, const char *line, size_t kept, size_t total)
{
    (void)kept;
    watcher *w = p->arg;
    char type[32], name[128], rv[32];
    if (event_type(line, type, sizeof type) < 0) {
        if (!w->err[0])
            snprintf(w->err, sizeof w->err, "not a watch event (%zu bytes): %.200s", total, line);
        w->bad = 1;
        return 0;
    }
    if (strcmp(type, "BOOKMARK") == 0) {
        w->bookmarks++;
        return 0;
    }
    const char *meta = strstr(line, "\"metadata\":{");
    if (strcmp(type, "ADDED") != 0 || !meta || json_str(meta, "name", name, sizeof name) < 0 ||
        json_str(meta, "resourceVersion", rv, sizeof rv) < 0) {
        if (!w->err[0])
            snprintf(w->err, sizeof w->err, "unexpected event: %.300s", line);
        w->bad = 1;
        return 0;
    }
    long long rvn = atoll(rv);
    if (rvn <= w->last_rv) {
        if (!w->err[0])
            snprintf(w->err, sizeof w->err, "resourceVersion %lld after %lld (%s)", rvn, w->last_rv,
                     name);
        w->bad = 1;
    }
    w->last_rv = rvn;
    char warm_name[64];
    snprintf(warm_name, sizeof warm_name, "lat-%s-warm", run_id);
    if (strcmp(name, warm_name) == 0) {
        if (w->warm) {
            w->bad = 1;
            snprintf(w->err, sizeof w->err, "warm-up event twice");
        }
        w->warm = 1;
        atomic_fetch_add(&warm_count, 1);
        return 0;
    }
    char want[64], prefix[64];
    snprintf(want, sizeof want, "lat-%s-%06d", run_id, w->next_seq);
    snprintf(prefix, sizeof prefix, "lat-%s-", run_id);
    /* Several writers commit in any order: then the name says which event it is. */
    int seq = opt.writers > 1 && strncmp(name, prefix, strlen(prefix)) == 0
                  ? atoi(name + strlen(prefix))
                  : w->next_seq;
    if (!w->warm || w->next_seq >= opt.events || seq >= opt.events || w->lat[seq] != LAT_NONE ||
        (opt.writers == 1 && strcmp(name, want) != 0)) {
        if (!w->err[0])
            snprintf(w->err, sizeof w->err, "got %s, expected %s%s", name,
                     opt.writers > 1 ? "each event once" : want,
                     w->warm ? "" : " (before the warm-up)");
        w->bad = 1;
        return 0;
    }
    char ts[32];
    const char *data = strstr(line, "\"data\":{");
    if (!data || json_str(data, "sentns", ts, sizeof ts) < 0) {
        snprintf(w->err, sizeof w->err, "no timestamp in %s", name);
        w->bad = 1;
        return 0;
    }
    w->lat[seq] = p->recv_ns - atoll(ts);
    w->next_seq++;
    atomic_fetch_add(&delivered, 1);
    return 0;
}

typedef struct loop {
    pthread_t thread;
    int ep;
    int first, last; /* watchers [first, last) */
} loop;

static void *loop_main(void *arg)
{
    loop *l = arg;
    char *buf = malloc(RECV_BUF);
    struct epoll_event evs[256];
    while (!atomic_load(&stop_loops)) {
        int n = epoll_wait(l->ep, evs, 256, 100);
        for (int i = 0; i < n; i++) {
            watcher *w = evs[i].data.ptr;
            for (;;) {
                ssize_t r = recv(w->fd, buf, RECV_BUF, 0);
                if (r < 0 && errno == EINTR)
                    continue;
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                    break;
                if (r <= 0) {
                    if (!w->ended) {
                        w->ended = 1;
                        if (!w->err[0])
                            snprintf(w->err, sizeof w->err, "stream ended by the server (%s)",
                                     r == 0 ? "EOF" : strerror(errno));
                    }
                    epoll_ctl(l->ep, EPOLL_CTL_DEL, w->fd, NULL);
                    break;
                }
                w->p.recv_ns = real_ns();
                int rc = parser_feed(&w->p, buf, (size_t)r);
                if (!w->got_headers && w->p.state != P_HEADERS) {
                    w->got_headers = 1;
                    atomic_fetch_add(&headers_count, 1);
                    if (w->p.status != 200) {
                        w->bad = 1;
                        snprintf(w->err, sizeof w->err, "HTTP %d", w->p.status);
                    }
                }
                if (rc < 0 || rc == 2) {
                    w->ended = 1;
                    if (!w->err[0])
                        snprintf(w->err, sizeof w->err, "%s", rc < 0 ? w->p.err : "response ended");
                    epoll_ctl(l->ep, EPOLL_CTL_DEL, w->fd, NULL);
                    break;
                }
            }
        }
    }
    free(buf);
    return NULL;
}

static long long current_rv(int fd)
{
    char path[512], *body = NULL;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps?limit=1", opt.ns);
    int st = simple_request(fd, "GET", path, NULL, &body);
    if (st != 200)
        die("list for the current revision: HTTP %d: %.300s", st, body);
    /* The list's own metadata comes after the items: the last occurrence. */
    const char *last = NULL;
    for (const char *s = body; (s = strstr(s, "\"resourceVersion\":\"")); s++)
        last = s;
    if (!last)
        die("no resourceVersion in the list");
    long long rv = atoll(last + strlen("\"resourceVersion\":\""));
    free(body);
    return rv;
}

static int create_cm(int fd, const char *name, int64_t *sent_out, long long *rv_out)
{
    char json[512], path[256], *body = NULL;
    int64_t sent = real_ns();
    snprintf(json, sizeof json,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"sentns\":\"%lld\"}}",
             name, (long long)sent);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", opt.ns);
    int st = simple_request(fd, "POST", path, json, &body);
    if (st != 201) {
        fprintf(stderr, "watchbench: create %s: HTTP %d: %.300s\n", name, st, body);
        free(body);
        return -1;
    }
    char rv[32] = "";
    const char *meta = strstr(body, "\"metadata\":{");
    if (meta)
        json_str(meta, "resourceVersion", rv, sizeof rv);
    *rv_out = atoll(rv);
    *sent_out = sent;
    free(body);
    return 0;
}

static void raise_nofile(int need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)need) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= (rlim_t)need ? (rlim_t)need
                                                                                  : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < (rlim_t)need)
            die("RLIMIT_NOFILE is %llu, need %d", (unsigned long long)rl.rlim_cur, need);
    }
}

typedef struct writer {
    pthread_t thread;
    int index, fd, gaps;
    int64_t t0;
    long long prev_rv;
    int64_t *create_ns, *ack_after_send; /* shared, indexed by event */
} writer;

static int64_t interval_ns(void)
{
    return opt.rate > 0 ? (int64_t)(1e9 / opt.rate) : (int64_t)opt.interval_ms * 1000000LL;
}

static void *writer_main(void *arg)
{
    writer *wr = arg;
    char name[64];
    for (int i = wr->index; i < opt.events; i += opt.writers) {
        int64_t due = wr->t0 + (int64_t)i * interval_ns();
        int64_t now = mono_ns();
        if (due > now) {
            struct timespec ts = {.tv_sec = (due - now) / 1000000000,
                                  .tv_nsec = (due - now) % 1000000000};
            nanosleep(&ts, NULL);
        }
        snprintf(name, sizeof name, "lat-%s-%06d", run_id, i);
        int64_t s0 = mono_ns(), sent;
        long long rv;
        if (create_cm(wr->fd, name, &sent, &rv) < 0)
            die("create %d failed", i);
        wr->create_ns[i] = mono_ns() - s0;
        wr->ack_after_send[i] = real_ns() - sent;
        if (rv != wr->prev_rv + 1)
            wr->gaps++; /* another writer interleaved: fine, but note it */
        wr->prev_rv = rv;
    }
    return NULL;
}

static int run_latency(void)
{
    if (opt.clients <= 0)
        opt.clients = 1000;
    raise_nofile(opt.clients + 64);
    ensure_namespace(opt.ns);
    snprintf(run_id, sizeof run_id, "%lx", (unsigned long)(real_ns() / 1000000) & 0xffffffful);
    int wfd = tcp_connect(30);
    if (wfd < 0)
        die("cannot connect to %s:%s", opt.host, opt.port);
    long long rv0 = current_rv(wfd);

    int n = opt.clients;
    watchers = calloc((size_t)n, sizeof *watchers);
    int nl = opt.threads < 1 ? 1 : opt.threads;
    if (nl > n)
        nl = n;
    loop *loops = calloc((size_t)nl, sizeof *loops);
    for (int i = 0; i < nl; i++) {
        loops[i].ep = epoll_create1(EPOLL_CLOEXEC);
        loops[i].first = (int)((long)n * i / nl);
        loops[i].last = (int)((long)n * (i + 1) / nl);
    }
    char path[1024];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps?watch=true&resourceVersion=%lld",
             opt.ns, rv0);
    int64_t t_conn = mono_ns();
    for (int li = 0; li < nl; li++) {
        for (int i = loops[li].first; i < loops[li].last; i++) {
            watcher *w = &watchers[i];
            w->id = i;
            w->lat = malloc((size_t)opt.events * sizeof *w->lat);
            for (int j = 0; j < opt.events; j++)
                w->lat[j] = LAT_NONE;
            w->last_rv = rv0;
            parser_init(&w->p, 65536, lat_line, w);
            w->fd = tcp_connect(30);
            if (w->fd < 0)
                die("watcher %d: cannot connect: %s", i, strerror(errno));
            if (send_get(w->fd, path) < 0)
                die("watcher %d: send failed", i);
            fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) | O_NONBLOCK);
            struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = w};
            if (epoll_ctl(loops[li].ep, EPOLL_CTL_ADD, w->fd, &ev) < 0)
                die("epoll_ctl: %s", strerror(errno));
        }
    }
    for (int i = 0; i < nl; i++)
        if (pthread_create(&loops[i].thread, NULL, loop_main, &loops[i]) != 0)
            die("pthread_create");
    double connect_s = (double)(mono_ns() - t_conn) / 1e9;
    /* Response headers may come only with the first event: wait briefly for
     * them, then let the warm-up event prove every watch is live. */
    int64_t until = mono_ns() + 5000000000LL;
    while (atomic_load(&headers_count) < n && mono_ns() < until)
        usleep(10000);
    int headers_before_warm = atomic_load(&headers_count);

    int64_t sent;
    long long rv;
    char name[64];
    snprintf(name, sizeof name, "lat-%s-warm", run_id);
    if (create_cm(wfd, name, &sent, &rv) < 0)
        die("warm-up create failed");
    int64_t t_warm = mono_ns();
    until = t_warm + 30000000000LL;
    while (atomic_load(&warm_count) < n && mono_ns() < until)
        usleep(1000);
    double warm_s = (double)(mono_ns() - t_warm) / 1e9;
    if (atomic_load(&warm_count) < n)
        die("only %d of %d watchers saw the warm-up event within 30 s", atomic_load(&warm_count),
            n);

    /* Paced writes: create i is due at t0 + i*interval, on writer i mod W. */
    int64_t *create_ns = calloc((size_t)opt.events, sizeof *create_ns);
    int64_t *ack_after_send = calloc((size_t)opt.events, sizeof *ack_after_send);
    writer *wr = calloc((size_t)opt.writers, sizeof *wr);
    int64_t t0 = mono_ns();
    for (int i = 0; i < opt.writers; i++) {
        wr[i] = (writer){.index = i, .t0 = t0, .prev_rv = rv, .create_ns = create_ns,
                         .ack_after_send = ack_after_send};
        wr[i].fd = i == 0 ? wfd : tcp_connect(30);
        if (wr[i].fd < 0)
            die("writer %d: cannot connect: %s", i, strerror(errno));
        if (pthread_create(&wr[i].thread, NULL, writer_main, &wr[i]) != 0)
            die("pthread_create");
    }
    int gaps = 0;
    for (int i = 0; i < opt.writers; i++) {
        pthread_join(wr[i].thread, NULL);
        gaps += wr[i].gaps;
        if (i > 0)
            close(wr[i].fd);
    }
    free(wr);
    double write_s = (double)(mono_ns() - t0) / 1e9;
    long want = (long)n * opt.events;
    until = mono_ns() + 30000000000LL;
    while (atomic_load(&delivered) < want && mono_ns() < until)
        usleep(1000);
    double drain_s = (double)(mono_ns() - t0) / 1e9 - write_s;
    /* Let anything duplicated or late show up before judging. */
    usleep(300000);
    atomic_store(&stop_loops, 1);
    for (int i = 0; i < nl; i++)
        pthread_join(loops[i].thread, NULL);

    int64_t *all = malloc((size_t)want * sizeof *all);
    size_t k = 0;
    int bad = 0, missing = 0;
    for (int i = 0; i < n; i++) {
        watcher *w = &watchers[i];
        if (w->bad || w->ended || w->next_seq != opt.events) {
            bad++;
            if (w->next_seq != opt.events)
                missing++;
            if (bad <= 10)
                fprintf(stderr, "watchbench: watcher %d: %d of %d events%s%s\n", i, w->next_seq,
                        opt.events, w->err[0] ? ": " : "", w->err);
        }
        for (int j = 0; j < opt.events; j++)
            if (w->lat[j] != LAT_NONE)
                all[k++] = w->lat[j];
    }
    /* Per delivery, receive - the writer's receipt of the 201 (negative: the
     * event came first); per event, last watcher - first watcher. */
    int64_t *after_ack = malloc((size_t)want * sizeof *after_ack);
    int64_t *spread = calloc((size_t)opt.events, sizeof *spread);
    int64_t *first = calloc((size_t)opt.events, sizeof *first);
    size_t ka = 0;
    for (int j = 0; j < opt.events; j++) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (int i = 0; i < n; i++) {
            watcher *w = &watchers[i];
            if (w->lat[j] == LAT_NONE)
                continue;
            after_ack[ka++] = w->lat[j] - ack_after_send[j];
            if (w->lat[j] < lo)
                lo = w->lat[j];
            if (w->lat[j] > hi)
                hi = w->lat[j];
        }
        spread[j] = hi >= lo ? hi - lo : 0;
        first[j] = lo == INT64_MAX ? 0 : lo;
    }
    qsort(all, k, sizeof *all, cmp_i64);
    qsort(after_ack, ka, sizeof *after_ack, cmp_i64);
    qsort(spread, (size_t)opt.events, sizeof *spread, cmp_i64);
    qsort(first, (size_t)opt.events, sizeof *first, cmp_i64);
    qsort(create_ns, (size_t)opt.events, sizeof *create_ns, cmp_i64);
    long bookmarks = 0;
    for (int i = 0; i < n; i++)
        bookmarks += watchers[i].bookmarks;
    printf("{\"mode\":\"latency\",\"watchers\":%d,\"events\":%d,\"interval_ms\":%.3f,"
           "\"writers\":%d,"
           "\"start_rv\":%lld,\"connect_s\":%.2f,\"headers_before_first_event\":%d,"
           "\"warmup_s\":%.3f,\"write_s\":%.2f,\"drain_s\":%.3f,\"create_p50_ms\":%.2f,"
           "\"create_max_ms\":%.2f,\"rv_gaps\":%d,\"deliveries\":%zu,\"expected\":%ld,"
           "\"p50_ms\":%.2f,\"p90_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f,\"min_ms\":%.2f,"
           "\"after_ack_p50_ms\":%.2f,\"after_ack_p99_ms\":%.2f,\"first_watcher_p50_ms\":%.2f,"
           "\"fanout_p50_ms\":%.2f,\"fanout_max_ms\":%.2f,"
           "\"bookmarks\":%ld,\"bad_watchers\":%d,\"all_in_order\":%s}\n",
           n, opt.events, (double)interval_ns() / 1e6, opt.writers, rv0, connect_s, headers_before_warm, warm_s, write_s,
           drain_s, (double)create_ns[opt.events / 2] / 1e6,
           (double)create_ns[opt.events - 1] / 1e6, gaps, k, want,
           k ? (double)all[k / 2] / 1e6 : -1, k ? (double)all[(size_t)(k * 0.90)] / 1e6 : -1,
           k ? (double)all[(size_t)(k * 0.99)] / 1e6 : -1, k ? (double)all[k - 1] / 1e6 : -1,
           k ? (double)all[0] / 1e6 : -1, ka ? (double)after_ack[ka / 2] / 1e6 : -1,
           ka ? (double)after_ack[(size_t)(ka * 0.99)] / 1e6 : -1,
           (double)first[opt.events / 2] / 1e6, (double)spread[opt.events / 2] / 1e6,
           (double)spread[opt.events - 1] / 1e6, bookmarks, bad, bad ? "false" : "true");
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        close(watchers[i].fd);
        parser_free(&watchers[i].p);
        free(watchers[i].lat);
    }
    close(wfd);
    if (bad)
        die("%d of %d watchers did not get all %d events exactly once in order (%d short)", bad, n,
            opt.events, missing);
    free(all);
    free(after_ack);
    free(spread);
    free(first);
    free(ack_after_send);
    free(create_ns);
    return 0;
}

/* ---- main ------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: watchbench load|watchlist|latency --url http://HOST:PORT [--namespace NS]\n"
            "         load:      [--count N] [--size BYTES] [--clients C] [--prefix P]\n"
            "         watchlist: --clients N --expect OBJECTS\n"
            "         latency:   [--clients N] [--events M] [--interval-ms MS | --rate R]\n"
            "                    [--writers W] [--threads T]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    opt.mode = argv[1];
    static const struct option longs[] = {
        {"url", required_argument, 0, 'u'},
        {"namespace", required_argument, 0, 'n'},
        {"clients", required_argument, 0, 'c'},
        {"count", required_argument, 0, 'N'},
        {"size", required_argument, 0, 's'},
        {"prefix", required_argument, 0, 'p'},
        {"expect", required_argument, 0, 'e'},
        {"events", required_argument, 0, 'm'},
        {"interval-ms", required_argument, 0, 'i'},
        {"threads", required_argument, 0, 't'},
        {"rate", required_argument, 0, 'r'},
        {"writers", required_argument, 0, 'w'},
        {0, 0, 0, 0},
    };
    const char *url = NULL;
    int ch;
    optind = 2;
    while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (ch) {
        case 'u':
            url = optarg;
            break;
        case 'n':
            opt.ns = optarg;
            break;
        case 'c':
            opt.clients = atoi(optarg);
            break;
        case 'N':
            opt.count = atol(optarg);
            break;
        case 's':
            opt.size = (size_t)atol(optarg);
            break;
        case 'p':
            opt.prefix = optarg;
            break;
        case 'e':
            opt.expect = atol(optarg);
            break;
        case 'm':
            opt.events = atoi(optarg);
            break;
        case 'i':
            opt.interval_ms = atoi(optarg);
            break;
        case 't':
            opt.threads = atoi(optarg);
            break;
        case 'r':
            opt.rate = atof(optarg);
            break;
        case 'w':
            opt.writers = atoi(optarg) > 0 ? atoi(optarg) : 1;
            break;
        default:
            usage();
        }
    }
    if (!url || strncmp(url, "http://", 7) != 0)
        usage();
    const char *h = url + 7;
    const char *colon = strrchr(h, ':');
    if (!colon)
        usage();
    snprintf(opt.host, sizeof opt.host, "%.*s", (int)(colon - h), h);
    snprintf(opt.port, sizeof opt.port, "%.*s", (int)strcspn(colon + 1, "/"), colon + 1);
    if (strcmp(opt.mode, "load") == 0)
        return run_load();
    if (strcmp(opt.mode, "watchlist") == 0)
        return run_watchlist();
    if (strcmp(opt.mode, "latency") == 0)
        return run_latency();
    usage();
    return 2;
}
