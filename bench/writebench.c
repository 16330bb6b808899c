/*
 * writebench.c - closed-loop HTTP load generator for the create path.
 *
 *   writebench --url http[s]://127.0.0.1:PORT --namespace NS --clients N
 *              --seconds S [--count C] [--size BYTES] [--prefix P]
 *              [--cacert FILE] [--cert FILE --key FILE] [--token TOKEN]
 *
 * N threads each hold one HTTP/1.1 keep-alive connection and POST ConfigMaps
 * (names P-<thread>-<seq>, a data value of BYTES bytes) back to back for S
 * seconds, then one JSON line goes to stdout:
 *   {"clients":N,"seconds":S,"ok":..,"failed":..,"creates_per_s":..,
 *    "p50_ms":..,"p99_ms":..}
 * With --count C the run also ends once C creates have been sent in all (the
 * threads take them from one shared counter), so a benchmark can fill a
 * store with exactly C objects as fast as the server takes them.
 * "ok" counts 201 responses; anything else, and any transport error, is a
 * failure. Latency is send-to-last-byte of each successful request, so
 * p50/p99 are what a client saw; creates_per_s divides ok by the wall time
 * from the common start to the last thread's end.
 *
 * An https URL is spoken over TLS (GnuTLS), as users reach the API server by
 * default: the server's certificate is verified against --cacert when one
 * is given (for the URL's host), the client presents --cert/--key when
 * given, and --token is sent as a bearer token. The handshake happens once
 * per connection; it is not in a request's latency.
 *
 * It depends on libc, pthreads and GnuTLS only (no sqlkube code, no HTTP
 * library) so the same binary can be pointed at any build or at another API
 * server.
 * Closed loop (a new request only after the previous answer) because that is
 * how controllers write; it measures throughput at a given concurrency, not
 * behaviour under an open arrival rate. The server may close a connection
 * at any time: a request in flight then counts as failed and the next one
 * reconnects. Exits 1 if nothing succeeded, so scripts notice a broken run.
 */
#include <errno.h>
#include <getopt.h>
#include <gnutls/gnutls.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* A stuck server must not hang the benchmark forever. */
#define IO_TIMEOUT_S 30
#define LINE_MAX_LEN 8192
/* How much of a failed response body is kept to explain the failure. */
#define SNIPPET_LEN 300

typedef struct options {
    char host[256];
    char port[16];
    const char *ns;
    int clients;
    int seconds;
    long count; /* creates to send in all; 0: no limit */
    size_t size;
    const char *prefix;
    int tls;
    gnutls_certificate_credentials_t creds; /* tls: shared by every connection */
    char auth[4096];                        /* an Authorization header line, or "" */
} options;

/* One connection with its receive buffer. */
typedef struct conn {
    int fd; /* -1 when not connected */
    gnutls_session_t tls; /* NULL for plain HTTP */
    char buf[65536];
    size_t start, end; /* unread bytes are buf[start, end) */
} conn;

typedef struct response {
    int status;
    int close; /* the server will not take another request on this connection */
    char snippet[SNIPPET_LEN + 1];
    size_t snippet_len;
} response;

typedef struct worker {
    pthread_t thread;
    int id;
    const options *o;
    pthread_barrier_t *start;
    long ok, failed;
    double *lat_ms; /* latencies of successful requests */
    size_t n_lat, cap_lat;
    int64_t end_ns;
} worker;

static atomic_int reported_failure;
/* Creates sent so far by every thread, against --count. */
static atomic_long sent;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void conn_close(conn *c)
{
    if (c->tls)
        gnutls_deinit(c->tls);
    c->tls = NULL;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->start = c->end = 0;
}

static int conn_open(conn *c, const options *o)
{
    int rc = -1;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(o->host, o->port, &hints, &ai) != 0)
        goto out;
    for (struct addrinfo *a = ai; a && c->fd < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            c->fd = fd;
        else
            close(fd);
    }
    if (c->fd < 0)
        goto out;
    int one = 1;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    /* Small requests answered one at a time: Nagle would add delay, not save packets. */
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    c->start = c->end = 0;
    if (o->tls) {
        int r;
        if (gnutls_init(&c->tls, GNUTLS_CLIENT) < 0 || gnutls_set_default_priority(c->tls) < 0 ||
            gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, o->creds) < 0 ||
            gnutls_server_name_set(c->tls, GNUTLS_NAME_DNS, o->host, strlen(o->host)) < 0)
            goto fail;
        gnutls_session_set_verify_cert(c->tls, o->host, 0);
        gnutls_transport_set_int(c->tls, c->fd);
        do
            r = gnutls_handshake(c->tls);
        while (r < 0 && !gnutls_error_is_fatal(r));
        if (r < 0) {
            fprintf(stderr, "writebench: TLS handshake: %s\n", gnutls_strerror(r));
            goto fail;
        }
    }
    rc = 0;
    goto out;
fail:
    conn_close(c);
out:
    if (ai)
        freeaddrinfo(ai);
    return rc;
}

static int send_all(conn *c, const char *p, size_t n)
{
    int rc = 0;
    while (n > 0) {
        ssize_t w = c->tls ? gnutls_record_send(c->tls, p, n) : send(c->fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && (c->tls ? !gnutls_error_is_fatal((int)w) : errno == EINTR))
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        p += w;
        n -= (size_t)w;
    }
    return rc;
}

/* Reads more bytes into the buffer; -1 on EOF, error or timeout. */
static int conn_fill(conn *c)
{
    int rc = -1;
    if (c->start == c->end)
        c->start = c->end = 0;
    if (c->end == sizeof c->buf) {
        memmove(c->buf, c->buf + c->start, c->end - c->start);
        c->end -= c->start;
        c->start = 0;
    }
    ssize_t r;
    do
        r = c->tls ? gnutls_record_recv(c->tls, c->buf + c->end, sizeof c->buf - c->end)
                   : recv(c->fd, c->buf + c->end, sizeof c->buf - c->end, 0);
    while (r < 0 && (c->tls ? !gnutls_error_is_fatal((int)r) : errno == EINTR));
    if (r > 0) {
        c->end += (size_t)r;
        rc = 0;
    }
    return rc;
}

/* Reads one CRLF-terminated line (terminator stripped) into out. */
static int conn_line(conn *c, char *out, size_t cap)
{
    int rc = -1;
    for (;;) {
        char *nl = memchr(c->buf + c->start, '\n', c->end - c->start);
        if (nl) {
            size_t len = (size_t)(nl - (c->buf + c->start));
            if (len > 0 && nl[-1] == '\r')
                len--;
            if (len >= cap)
                break;
            memcpy(out, c->buf + c->start, len);
            out[len] = '\0';
            c->start = (size_t)(nl - c->buf) + 1;
            rc = 0;
            break;
        }
        if (c->end - c->start >= cap || conn_fill(c) < 0)
            break;
    }
    return rc;
}

/* Consumes n body bytes (all bytes up to EOF if until_eof), keeping the
 * start of the body in r->snippet. */
static int conn_body(conn *c, size_t n, int until_eof, response *r)
{
    int rc = 0;
    while (until_eof || n > 0) {
        if (c->start == c->end && conn_fill(c) < 0) {
            rc = until_eof ? 0 : -1;
            break;
        }
        size_t take = c->end - c->start;
        if (!until_eof && take > n)
            take = n;
        size_t keep = SNIPPET_LEN - r->snippet_len;
        memcpy(r->snippet + r->snippet_len, c->buf + c->start, take < keep ? take : keep);
        r->snippet_len += take < keep ? take : keep;
        c->start += take;
        n -= until_eof ? 0 : take;
    }
    r->snippet[r->snippet_len] = '\0';
    return rc;
}

static int read_chunked(conn *c, response *r, char *line)
{
    int rc = -1;
    for (;;) {
        if (conn_line(c, line, LINE_MAX_LEN) < 0)
            goto out;
        char *end;
        errno = 0;
        unsigned long long size = strtoull(line, &end, 16);
        if (end == line || errno != 0)
            goto out;
        if (size == 0)
            break;
        if (conn_body(c, (size_t)size, 0, r) < 0 || conn_line(c, line, LINE_MAX_LEN) < 0 ||
            line[0] != '\0')
            goto out;
    }
    do { /* trailers, up to the blank line */
        if (conn_line(c, line, LINE_MAX_LEN) < 0)
            goto out;
    } while (line[0] != '\0');
    rc = 0;
out:
    return rc;
}

/* Reads one whole response: status line, headers, and a body framed by
 * Content-Length, chunked encoding or the end of the connection. */
static int read_response(conn *c, response *r)
{
    int rc = -1;
    char *line = malloc(LINE_MAX_LEN);
    if (!line)
        goto out;
    memset(r, 0, sizeof *r);
    int minor = 0;
    if (conn_line(c, line, LINE_MAX_LEN) < 0 ||
        sscanf(line, "HTTP/1.%d %3d", &minor, &r->status) != 2)
        goto out;
    r->close = minor == 0;
    long long length = -1;
    int chunked = 0;
    for (;;) {
        if (conn_line(c, line, LINE_MAX_LEN) < 0)
            goto out;
        if (line[0] == '\0')
            break;
        if (strncasecmp(line, "Content-Length:", 15) == 0)
            length = strtoll(line + 15, NULL, 10);
        else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0)
            chunked = strcasestr(line + 18, "chunked") != NULL;
        else if (strncasecmp(line, "Connection:", 11) == 0)
            r->close = strcasestr(line + 11, "close") != NULL;
    }
    if (r->status == 204 || r->status == 304 || (r->status >= 100 && r->status < 200))
        rc = 0;
    else if (chunked)
        rc = read_chunked(c, r, line);
    else if (length >= 0)
        rc = conn_body(c, (size_t)length, 0, r);
    else {
        r->close = 1;
        rc = conn_body(c, 0, 1, r);
    }
out:
    free(line);
    return rc;
}

static void record_latency(worker *w, double ms)
{
    if (w->n_lat == w->cap_lat) {
        size_t cap = w->cap_lat ? w->cap_lat * 2 : 4096;
        double *p = realloc(w->lat_ms, cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "writebench: out of memory\n");
            exit(2);
        }
        w->lat_ms = p;
        w->cap_lat = cap;
    }
    w->lat_ms[w->n_lat++] = ms;
}

static void report_first_failure(const char *what, const response *r)
{
    if (atomic_exchange(&reported_failure, 1) == 0) {
        if (r)
            fprintf(stderr, "writebench: first failure: %s %d: %s\n", what, r->status, r->snippet);
        else
            fprintf(stderr, "writebench: first failure: %s\n", what);
    }
}

/* The request bytes for one create: headers and body in one buffer so one
 * send carries the whole request. Returns a new string. */
static char *build_request(const options *o, int id, long seq, const char *payload, size_t *len)
{
    char body_head[512];
    int bh = snprintf(body_head, sizeof body_head,
                      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                      "\"%s-%d-%ld\"},\"data\":{\"payload\":\"",
                      o->prefix, id, seq);
    const char body_tail[] = "\"}}";
    size_t body_len = (size_t)bh + o->size + sizeof body_tail - 1;
    size_t cap = body_len + 1024 + sizeof o->auth;
    char *req = malloc(cap);
    if (!req) {
        fprintf(stderr, "writebench: out of memory\n");
        exit(2);
    }
    int h = snprintf(req, cap,
                     "POST /api/v1/namespaces/%s/configmaps HTTP/1.1\r\nHost: %s:%s\r\n"
                     "Content-Type: application/json\r\nAccept: application/json\r\n"
                     "%sContent-Length: %zu\r\n\r\n%s",
                     o->ns, o->host, o->port, o->auth, body_len, body_head);
    memcpy(req + h, payload, o->size);
    memcpy(req + h + o->size, body_tail, sizeof body_tail);
    *len = (size_t)h + o->size + sizeof body_tail - 1;
    return req;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    const options *o = w->o;
    conn *c = malloc(sizeof *c);
    char *payload = malloc(o->size + 1);
    if (!c || !payload) {
        fprintf(stderr, "writebench: out of memory\n");
        exit(2);
    }
    c->fd = -1;
    c->tls = NULL;
    for (size_t i = 0; i < o->size; i++)
        payload[i] = (char)('a' + (i % 26));
    pthread_barrier_wait(w->start);
    int64_t deadline = now_ns() + (int64_t)o->seconds * 1000000000;
    for (long seq = 0; now_ns() < deadline; seq++) {
        if (o->count > 0 && atomic_fetch_add(&sent, 1) >= o->count)
            break;
        if (c->fd < 0 && conn_open(c, o) < 0) {
            w->failed++;
            report_first_failure("connect failed", NULL);
            usleep(10000); /* a down server must not turn into a busy loop */
            continue;
        }
        size_t len;
        char *req = build_request(o, w->id, seq, payload, &len);
        response r;
        int64_t t0 = now_ns();
        int io = send_all(c, req, len) == 0 && read_response(c, &r) == 0 ? 0 : -1;
        int64_t t1 = now_ns();
        free(req);
        if (io < 0) {
            w->failed++;
            report_first_failure("connection error", NULL);
            conn_close(c);
            continue;
        }
        if (r.status == 201) {
            w->ok++;
            record_latency(w, (double)(t1 - t0) / 1e6);
        } else {
            w->failed++;
            report_first_failure("status", &r);
        }
        if (r.close)
            conn_close(c);
    }
    w->end_ns = now_ns();
    conn_close(c);
    free(c);
    free(payload);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v. */
static double percentile(const double *v, size_t n, double p)
{
    double out = 0;
    if (n > 0) {
        size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
        out = v[rank == 0 ? 0 : rank - 1];
    }
    return out;
}

static void usage(void)
{
    fprintf(stderr, "usage: writebench --url http[s]://HOST:PORT --namespace NS --clients N "
                    "--seconds S [--count C] [--size BYTES] [--prefix P] [--cacert FILE] "
                    "[--cert FILE --key FILE] [--token TOKEN]\n");
    exit(2);
}

/* Splits "http[s]://host:port[/]" into o->tls, o->host and o->port. */
static int parse_url(const char *url, options *o)
{
    int rc = -1;
    const char *p = url;
    o->tls = strncmp(p, "https://", 8) == 0;
    if (!o->tls && strncmp(p, "http://", 7) != 0)
        goto out;
    p += o->tls ? 8 : 7;
    size_t hostlen = strcspn(p, ":/");
    if (hostlen == 0 || hostlen >= sizeof o->host)
        goto out;
    memcpy(o->host, p, hostlen);
    o->host[hostlen] = '\0';
    p += hostlen;
    snprintf(o->port, sizeof o->port, o->tls ? "443" : "80");
    if (*p == ':') {
        size_t portlen = strspn(p + 1, "0123456789");
        if (portlen == 0 || portlen >= sizeof o->port)
            goto out;
        memcpy(o->port, p + 1, portlen);
        o->port[portlen] = '\0';
        p += 1 + portlen;
    }
    if (strcmp(p, "") != 0 && strcmp(p, "/") != 0)
        goto out;
    rc = 0;
out:
    return rc;
}

static void parse_args(int argc, char **argv, options *o)
{
    static const struct option longopts[] = {
        {"url", required_argument, NULL, 'u'},
        {"namespace", required_argument, NULL, 'n'},
        {"clients", required_argument, NULL, 'c'},
        {"seconds", required_argument, NULL, 's'},
        {"count", required_argument, NULL, 'N'},
        {"size", required_argument, NULL, 'z'},
        {"prefix", required_argument, NULL, 'p'},
        {"cacert", required_argument, NULL, 'a'},
        {"cert", required_argument, NULL, 'C'},
        {"key", required_argument, NULL, 'k'},
        {"token", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0},
    };
    const char *url = NULL, *cacert = NULL, *cert = NULL, *key = NULL, *token = NULL;
    long size = 1024;
    int opt;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'u':
            url = optarg;
            break;
        case 'n':
            o->ns = optarg;
            break;
        case 'c':
            o->clients = atoi(optarg);
            break;
        case 's':
            o->seconds = atoi(optarg);
            break;
        case 'N':
            o->count = atol(optarg);
            break;
        case 'z':
            size = atol(optarg);
            break;
        case 'p':
            o->prefix = optarg;
            break;
        case 'a':
            cacert = optarg;
            break;
        case 'C':
            cert = optarg;
            break;
        case 'k':
            key = optarg;
            break;
        case 't':
            token = optarg;
            break;
        default:
            usage();
        }
    }
    if (!url || !o->ns || optind != argc || o->clients < 1 || o->clients > 4096 || o->seconds < 1 ||
        o->count < 0 ||
        size < 0 || size > 64 << 20 || parse_url(url, o) < 0 || !cert != !key ||
        (token && strlen(token) > sizeof o->auth - 64))
        usage();
    o->size = (size_t)size;
    if (token)
        snprintf(o->auth, sizeof o->auth, "Authorization: Bearer %s\r\n", token);
    if (o->tls) {
        if (gnutls_certificate_allocate_credentials(&o->creds) < 0 ||
            (cacert && gnutls_certificate_set_x509_trust_file(o->creds, cacert,
                                                              GNUTLS_X509_FMT_PEM) <= 0) ||
            (cert && gnutls_certificate_set_x509_key_file(o->creds, cert, key,
                                                          GNUTLS_X509_FMT_PEM) < 0)) {
            fprintf(stderr, "writebench: cannot load the TLS files\n");
            exit(2);
        }
    }
}

int main(int argc, char **argv)
{
    int rc = 2;
    options o = {.prefix = "wb"};
    parse_args(argc, argv, &o);

    worker *ws = calloc((size_t)o.clients, sizeof *ws);
    double *all = NULL;
    pthread_barrier_t start;
    if (!ws || pthread_barrier_init(&start, NULL, (unsigned)o.clients + 1) != 0) {
        fprintf(stderr, "writebench: cannot set up workers\n");
        goto out;
    }
    for (int i = 0; i < o.clients; i++) {
        ws[i] = (worker){.id = i, .o = &o, .start = &start};
        /* Failing here leaves the others blocked on the barrier; exit is the only way out. */
        if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0) {
            fprintf(stderr, "writebench: cannot start thread %d\n", i);
            exit(2);
        }
    }
    pthread_barrier_wait(&start);
    int64_t t0 = now_ns();

    long ok = 0, failed = 0;
    size_t n = 0;
    int64_t t_end = t0;
    for (int i = 0; i < o.clients; i++) {
        pthread_join(ws[i].thread, NULL);
        ok += ws[i].ok;
        failed += ws[i].failed;
        n += ws[i].n_lat;
        if (ws[i].end_ns > t_end)
            t_end = ws[i].end_ns;
    }
    pthread_barrier_destroy(&start);
    all = malloc((n ? n : 1) * sizeof *all);
    if (!all) {
        fprintf(stderr, "writebench: out of memory\n");
        goto out;
    }
    size_t k = 0;
    for (int i = 0; i < o.clients; i++) {
        if (ws[i].n_lat > 0) /* lat_ms is NULL until the first success */
            memcpy(all + k, ws[i].lat_ms, ws[i].n_lat * sizeof *all);
        k += ws[i].n_lat;
    }
    qsort(all, n, sizeof *all, cmp_double);
    double elapsed_s = (double)(t_end - t0) / 1e9;
    printf("{\"clients\":%d,\"seconds\":%d,\"ok\":%ld,\"failed\":%ld,\"creates_per_s\":%.1f,"
           "\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n",
           o.clients, o.seconds, ok, failed, elapsed_s > 0 ? (double)ok / elapsed_s : 0.0,
           percentile(all, n, 50), percentile(all, n, 99));
    rc = ok > 0 ? 0 : 1;
out:
    for (int i = 0; ws && i < o.clients; i++)
        free(ws[i].lat_ms);
    free(all);
    free(ws);
    return rc;
}
