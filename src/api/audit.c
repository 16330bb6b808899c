/*
 * audit.c - see audit.h.
 *
 * An event is composed whole at each stage from the call (its route and
 * user, the request's part kept at start, the response's status kept when
 * it was made), so its keys come in kube's order and nothing of a stage is
 * kept between stages but plain fields of the call. The request's
 * attributes (verb, objectRef) are the authorizer's (authz.h), as kube
 * takes them from its authorizer attributes.
 *
 * What is never read: the body, any header but User-Agent, X-Forwarded-For
 * and Audit-ID, and the query apart from the request URI itself (kube logs
 * the URI as sent). A Status reply's message is logged as kube logs it;
 * the server's messages never carry object data or credentials.
 */
#include "api/audit.h"
#include "api/authn.h"
#include "api/authz.h"
#include "api/call.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_AUDIT_ID 128      /* a longer Audit-ID header is replaced */
#define MAX_USER_AGENT 1024   /* kube's: longer ones are cut and marked */
#define MAX_SOURCE_IPS 16
#define MAX_ROTATED 4096      /* rotated files considered when pruning */

struct sk_audit_log {
    pthread_mutex_t mu;
    int fd;
    int is_stdout;
    char *path;
    int64_t max_bytes, max_backups;
    int64_t size; /* of the current file */
};

/* ---- the file --------------------------------------------------------------- */

static int open_file(sk_audit_log *log, char **errmsg)
{
    int fd = open(log->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (asprintf(errmsg, "cannot open --audit-log-path %s: %s", log->path, strerror(errno)) <
            0)
            *errmsg = NULL;
        if (fd >= 0)
            close(fd);
        return -1;
    }
    log->fd = fd;
    log->size = st.st_size;
    return 0;
}

int sk_audit_open(const sk_audit_config *cfg, sk_audit_log **out, char **errmsg)
{
    sk_audit_log *log = calloc(1, sizeof *log);
    SK_CHECK_ALLOC(log);
    log->path = strdup(cfg->path);
    SK_CHECK_ALLOC(log->path);
    log->is_stdout = strcmp(cfg->path, "-") == 0;
    log->max_bytes = cfg->max_size_mb > 0 ? cfg->max_size_mb * 1024 * 1024 : 0;
    log->max_backups = cfg->max_backups;
    if (log->is_stdout) {
        log->fd = STDOUT_FILENO;
    } else if (open_file(log, errmsg) < 0) {
        free(log->path);
        free(log);
        return -1;
    }
    pthread_mutex_init(&log->mu, NULL);
    *out = log;
    return 0;
}

void sk_audit_close(sk_audit_log *log)
{
    if (!log)
        return;
    if (!log->is_stdout && log->fd >= 0)
        close(log->fd);
    pthread_mutex_destroy(&log->mu);
    free(log->path);
    free(log);
}

/* The path split as lumberjack splits it: dir, the name before its
 * extension, the extension ("" when none). In bufs of PATH_MAX. */
static void split_path(const char *path, char *dir, char *stem, char *ext)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(dir, PATH_MAX, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(dir, PATH_MAX, "/");
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = base + strlen(base);
    snprintf(stem, PATH_MAX, "%.*s", (int)(dot - base), base);
    snprintf(ext, PATH_MAX, "%s", dot);
}

/* Removes the oldest rotated files beyond max_backups (their names sort
 * by time: NAME-2006-01-02T15-04-05.000.EXT). */
static void prune_rotated(sk_audit_log *log, const char *dir, const char *stem, const char *ext)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = calloc(MAX_ROTATED, sizeof *names);
    SK_CHECK_ALLOC(names);
    size_t n = 0, stem_len = strlen(stem), ext_len = strlen(ext);
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_ROTATED) {
        size_t len = strlen(e->d_name);
        if (len == stem_len + 1 + 23 + ext_len && strncmp(e->d_name, stem, stem_len) == 0 &&
            e->d_name[stem_len] == '-' && strcmp(e->d_name + len - ext_len, ext) == 0) {
            names[n] = strdup(e->d_name);
            SK_CHECK_ALLOC(names[n]);
            n++;
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, sk_cmp_strp);
    for (size_t i = 0; i < n; i++) {
        if ((int64_t)(n - i) > log->max_backups) {
            char victim[PATH_MAX * 2 + 2];
            snprintf(victim, sizeof victim, "%s/%s", dir, names[i]);
            if (unlink(victim) < 0)
                sk_log_warn("audit: cannot remove %s: %s", victim, strerror(errno));
        }
        free(names[i]);
    }
    free(names);
}

/* Under log->mu: the current file renamed aside, a new one opened. */
static void rotate(sk_audit_log *log)
{
    static char dir[PATH_MAX], stem[PATH_MAX], ext[PATH_MAX]; /* under log->mu */
    split_path(log->path, dir, stem, ext);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H-%M-%S", &tm);
    char rotated[PATH_MAX * 3 + 128];
    snprintf(rotated, sizeof rotated, "%s/%s-%s.%03ld%s", dir, stem, stamp,
             ts.tv_nsec / 1000000, ext);
    char *err = NULL;
    if (rename(log->path, rotated) < 0) {
        sk_log_warn("audit: cannot rotate %s: %s", log->path, strerror(errno));
        return;
    }
    close(log->fd);
    log->fd = -1;
    if (open_file(log, &err) < 0) {
        sk_log_error("audit: %s", err ? err : "cannot reopen the log");
        free(err);
        return;
    }
    if (log->max_backups > 0)
        prune_rotated(log, dir, stem, ext);
}

static void write_line(sk_audit_log *log, const char *line, size_t len)
{
    pthread_mutex_lock(&log->mu);
    if (log->max_bytes > 0 && !log->is_stdout && log->size > 0 &&
        log->size + (int64_t)len > log->max_bytes)
        rotate(log);
    size_t done = 0;
    while (log->fd >= 0 && done < len) {
        ssize_t w = write(log->fd, line + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            sk_log_error("audit: cannot write %s: %s", log->path, strerror(errno));
            break;
        }
        done += (size_t)w;
    }
    log->size += (int64_t)done;
    pthread_mutex_unlock(&log->mu);
}

/* ---- events ----------------------------------------------------------------- */

enum { AUDIT_STARTED = 1, AUDIT_RESPONDED = 2, AUDIT_ENDED = 4 };

/* kube's MicroTime: RFC 3339 in UTC with microseconds. */
static json_t *micro_time(int64_t wall_us)
{
    time_t s = (time_t)(wall_us / 1000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char text[40];
    size_t n = strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(text + n, sizeof text - n, ".%06ldZ", (long)(wall_us % 1000000));
    return json_string(text);
}

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void set_str(json_t *obj, const char *key, const char *v)
{
    if (v && *v)
        json_object_set_new(obj, key, json_string(v));
}

/* kube: the event's user is empty when authentication failed. */
static json_t *user_json(const sk_user *u)
{
    return u ? sk_authn_user_info(u) : json_object();
}

/* The request's source IPs as kube lists them: X-Forwarded-For's, then
 * the peer's unless it is already last. Only well-formed addresses. */
static json_t *source_ips(const sk_http_req *req)
{
    json_t *ips = json_array();
    const char *xff = req->header(req->ctx, "X-Forwarded-For");
    char buf[64];
    unsigned char bin[16];
    while (xff && *xff && json_array_size(ips) < MAX_SOURCE_IPS) {
        const char *comma = strchr(xff, ',');
        size_t len = comma ? (size_t)(comma - xff) : strlen(xff);
        const char *p = xff;
        while (len && isspace((unsigned char)*p))
            p++, len--;
        while (len && isspace((unsigned char)p[len - 1]))
            len--;
        if (len < sizeof buf) {
            memcpy(buf, p, len);
            buf[len] = '\0';
            if (inet_pton(AF_INET, buf, bin) == 1 || inet_pton(AF_INET6, buf, bin) == 1)
                json_array_append_new(ips, json_string(buf));
        }
        xff = comma ? comma + 1 : NULL;
    }
    size_t n = json_array_size(ips);
    if (req->peer_addr &&
        (n == 0 || strcmp(json_string_value(json_array_get(ips, n - 1)), req->peer_addr) != 0))
        json_array_append_new(ips, json_string(req->peer_addr));
    return ips;
}

static json_t *object_ref(const sk_api_call *call, const sk_rbac_attrs *a)
{
    json_t *o = json_object();
    set_str(o, "resource", a->resource);
    set_str(o, "namespace", a->ns);
    set_str(o, "name", a->name);
    set_str(o, "apiGroup", a->group);
    const sk_route *rt = &call->route;
    set_str(o, "apiVersion", rt->kind == SK_ROUTE_RESOURCE ? rt->res->version : "v1");
    set_str(o, "subresource", a->subresource);
    return o;
}

/* The response's status as kube's Metadata level keeps it: the code, and
 * a Status reply's status, message, reason and details. */
static json_t *response_status(sk_api_call *call)
{
    json_t *rs = json_object();
    json_object_set_new(rs, "metadata", json_object());
    json_t *st = NULL;
    if (!call->stream.read && call->out.len > 0 && call->status >= 300)
        st = json_loadb(call->out.data, call->out.len, 0, NULL);
    const char *kind = json_string_value(json_object_get(st, "kind"));
    if (kind && strcmp(kind, "Status") == 0) {
        static const char *const keys[] = {"status", "message", "reason", "details"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
            json_t *v = json_object_get(st, keys[i]);
            if (v)
                json_object_set(rs, keys[i], v);
        }
    }
    json_decref(st);
    json_object_set_new(rs, "code", json_integer(call->status));
    return rs;
}

static void emit(sk_api_call *call, const char *stage)
{
    sk_audit_log *log = call->api->audit;
    if (!log)
        return;
    sk_rbac_attrs a;
    int checked = sk_authz_call_attrs(call, &a);
    json_t *ev = json_object();
    json_object_set_new(ev, "kind", json_string("Event"));
    json_object_set_new(ev, "apiVersion", json_string("audit.k8s.io/v1"));
    json_object_set_new(ev, "level", json_string("Metadata"));
    json_object_set_new(ev, "auditID", json_string(call->audit_id));
    json_object_set_new(ev, "stage", json_string(stage));
    json_object_set_new(ev, "requestURI", json_string(call->audit_uri));
    if (checked) {
        json_object_set_new(ev, "verb", json_string(a.verb));
    } else {
        char *verb = sk_arena_strdup(call->arena, call->method);
        for (char *p = verb; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        json_object_set_new(ev, "verb", json_string(verb));
    }
    json_object_set_new(ev, "user", user_json(call->audit_user));
    if (call->user != call->audit_user) /* kube: the authenticated user, and whom it acts as */
        json_object_set_new(ev, "impersonatedUser", user_json(call->user));
    json_object_set(ev, "sourceIPs", call->audit_ips);
    set_str(ev, "userAgent", call->user_agent);
    if (checked && a.resource_request)
        json_object_set_new(ev, "objectRef", object_ref(call, &a));
    if (call->audit_status)
        json_object_set(ev, "responseStatus", call->audit_status);
    json_object_set_new(ev, "requestReceivedTimestamp", micro_time(call->audit_received_us));
    json_object_set_new(ev, "stageTimestamp",
                        strcmp(stage, "RequestReceived") == 0
                            ? micro_time(call->audit_received_us)
                            : micro_time(wall_us()));
    /* what the authorizer and admission annotated, known once the call
     * has gone past them */
    if ((call->authz_decision || call->audit_annotations) &&
        strcmp(stage, "RequestReceived") != 0) {
        json_t *ann = json_object();
        if (call->authz_decision) {
            json_object_set_new(ann, "authorization.k8s.io/decision",
                                json_string(call->authz_decision));
            json_object_set_new(ann, "authorization.k8s.io/reason",
                                json_string(call->authz_reason ? call->authz_reason : ""));
        }
        json_object_update(ann, call->audit_annotations);
        json_object_set_new(ev, "annotations", ann);
    }
    char *text = json_dumps(ev, JSON_COMPACT);
    json_decref(ev);
    if (!text) {
        sk_log_error("audit: cannot encode the event of %s", call->audit_id);
        return;
    }
    size_t len = strlen(text);
    text[len] = '\n'; /* the NUL becomes the line's end */
    write_line(log, text, len + 1);
    free(text);
}

void sk_audit_call_start(sk_api_call *call, const sk_http_req *req)
{
    const char *given = req->header(req->ctx, "Audit-ID");
    if (given && *given && strlen(given) <= MAX_AUDIT_ID) {
        call->audit_id = sk_arena_strdup(call->arena, given);
    } else {
        char id[37];
        sk_uuid4(id);
        call->audit_id = sk_arena_strdup(call->arena, id);
    }
    call->audit_received_us = wall_us();
    if (!call->api->audit)
        return;
    call->audit_uri = sk_arena_strdup(call->arena, req->target ? req->target : "/");
    call->audit_ips = sk_call_keep(call, source_ips(req));
    if (call->user_agent && strlen(call->user_agent) > MAX_USER_AGENT)
        call->user_agent = sk_arena_printf(call->arena, "%.*s...TRUNCATED", MAX_USER_AGENT,
                                           call->user_agent);
    call->audit_flags = AUDIT_STARTED;
    call->audit_user = call->user;
    if (call->user)
        emit(call, "RequestReceived");
}

void sk_audit_call_responded(sk_api_call *call)
{
    if (!(call->audit_flags & AUDIT_STARTED) || (call->audit_flags & AUDIT_RESPONDED))
        return;
    call->audit_flags |= AUDIT_RESPONDED;
    call->audit_status = sk_call_keep(call, response_status(call));
    /* kube: long-running requests (watches) and failed authentication
     * announce the response's start. */
    if (!call->user || (call->stream.read && call->stream.is_watch))
        emit(call, "ResponseStarted");
}

void sk_audit_call_end(sk_api_call *call)
{
    if (!(call->audit_flags & AUDIT_STARTED) || (call->audit_flags & AUDIT_ENDED) || !call->user)
        return;
    call->audit_flags |= AUDIT_ENDED;
    if (!call->audit_status) {
        /* kube's stand-in when no status was ever written */
        json_t *rs = json_object();
        json_object_set_new(rs, "metadata", json_object());
        json_object_set_new(rs, "status", json_string("Success"));
        json_object_set_new(rs, "message", json_string("Connection closed early"));
        json_object_set_new(rs, "code", json_integer(200));
        call->audit_status = sk_call_keep(call, rs);
    }
    emit(call, "ResponseComplete");
}
