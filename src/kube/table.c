/*
 * table.c - see table.h.
 *
 * The columns of each kind are data (the kinds[] table at the end): name,
 * type, format, priority (1 = shown by `-o wide` only) and a short
 * description of our own. Each kind's cells come from one small pure
 * function over the stored object, computing what kube-apiserver's printers
 * compute (pkg/printers/internalversion): e.g. a pod's READY is ready
 * containers / containers, STATUS the phase refined by container states,
 * RESTARTS the count with "(5m ago)" of the last termination. AGE is sent
 * by the server as a human duration string; kubectl prints cells as sent.
 * Cells follow the column order, wide columns included: kubectl drops the
 * priority-1 cells itself unless asked for wide output.
 *
 * A row is made in two steps so that its costly part can be kept per
 * object version: a template (the row's JSON with each age left as a hole
 * holding its source time; cell functions called with now_s = DEFER put a
 * hole cell, an object {p, t, s}, where they would put a duration), then a
 * fill at the request's time. A hole is written into the template as the
 * byte 0x01 and the 8 bytes of its time: jansson escapes every control
 * character it writes, so 0x01 occurs nowhere else in a template, and a
 * fill reads it in one pass with memchr.
 */
#include "kube/table.h"
#include "core/check.h"
#include "core/util.h"
#include "kube/convert.h"
#include "kube/partial.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table_column {
    const char *name, *type, *format;
    int priority;
    const char *description;
} table_column;

/* ---- reading the object ---- */

/* The value at a dotted path ("spec.template.spec"), or NULL. */
static json_t *at(const json_t *o, const char *path)
{
    char key[64];
    json_t *v = (json_t *)o;
    while (v && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = 0;
        v = json_object_get(v, key);
        path += n + (path[n] == '.');
    }
    return v;
}

static const char *str_at(const json_t *o, const char *path)
{
    const char *s = json_string_value(at(o, path));
    return s ? s : "";
}

static json_int_t int_at(const json_t *o, const char *path)
{
    return json_integer_value(at(o, path));
}

static void add_str(json_t *cells, const char *s)
{
    json_array_append_new(cells, json_string(s ? s : ""));
}

static void add_int(json_t *cells, json_int_t v)
{
    json_array_append_new(cells, json_integer(v));
}

static void add_buf(json_t *cells, sk_buf *b)
{
    add_str(cells, b->data ? b->data : "");
    sk_buf_free(b);
}

/* ---- formatting ---- */

void sk_table_human_duration(int64_t secs, char *out, size_t n)
{
    int64_t m = secs / 60, h = secs / 3600, d = h / 24, y = d / 365;
    if (secs < -1)
        snprintf(out, n, "<invalid>");
    else if (secs < 0)
        snprintf(out, n, "0s");
    else if (secs < 120)
        snprintf(out, n, "%llds", (long long)secs);
    else if (m < 10 && secs % 60)
        snprintf(out, n, "%lldm%llds", (long long)m, (long long)(secs % 60));
    else if (m < 180)
        snprintf(out, n, "%lldm", (long long)m);
    else if (h < 8 && m % 60)
        snprintf(out, n, "%lldh%lldm", (long long)h, (long long)(m % 60));
    else if (h < 48)
        snprintf(out, n, "%lldh", (long long)h);
    else if (h < 192 && h % 24)
        snprintf(out, n, "%lldd%lldh", (long long)d, (long long)(h % 24));
    else if (d < 730)
        snprintf(out, n, "%lldd", (long long)d);
    else if (y < 8 && d % 365)
        snprintf(out, n, "%lldy%lldd", (long long)y, (long long)(d % 365));
    else
        snprintf(out, n, "%lldy", (long long)y);
}

/* The time at ts (RFC 3339), or -1 when unset or malformed. */
static int64_t when(const char *ts)
{
    return ts && *ts ? sk_parse_rfc3339(ts) : -1;
}

/* now_s when a row is made as a template: ages become holes. */
#define DEFER INT64_MIN
#define HOLE '\x01'

/* The cell prefix + (the age of t at now_s) + suffix, or its hole. */
static json_t *ago_cell(const char *prefix, int64_t t, const char *suffix, int64_t now_s)
{
    json_t *c;
    if (now_s == DEFER) {
        c = json_pack("{s:s, s:I, s:s}", "p", prefix, "t", (json_int_t)t, "s", suffix);
    } else {
        char out[32];
        sk_table_human_duration(now_s - t, out, sizeof out);
        c = json_sprintf("%s%s%s", prefix, out, suffix);
    }
    SK_CHECK_ALLOC(c);
    return c;
}

/* "<unknown>" for an unset time, else its age at now_s. */
static void add_since(json_t *cells, const char *ts, int64_t now_s)
{
    int64_t t = when(ts);
    if (t >= 0)
        json_array_append_new(cells, ago_cell("", t, "", now_s));
    else
        add_str(cells, "<unknown>");
}

static void add_age(json_t *cells, const json_t *o, int64_t now_s)
{
    add_since(cells, str_at(o, "metadata.creationTimestamp"), now_s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of a JSON object, sorted (free the array, not the strings). */
static const char **sorted_keys(const json_t *map, size_t *n_out)
{
    size_t n = json_object_size(map), i = 0;
    const char **keys = calloc(n + 1, sizeof *keys);
    SK_CHECK_ALLOC(keys);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_str);
    *n_out = n;
    return keys;
}

/* labels.FormatLabels: "a=b,c=d" sorted by key; "<none>" when empty. */
static void add_labels(json_t *cells, const json_t *map)
{
    size_t n;
    const char **keys = sorted_keys(map, &n);
    sk_buf b = SK_BUF_INIT;
    for (size_t i = 0; i < n; i++)
        sk_buf_printf(&b, "%s%s=%s", i ? "," : "", keys[i],
                      json_string_value(json_object_get(map, keys[i])) ?: "");
    free(keys);
    if (n == 0)
        sk_buf_puts(&b, "<none>");
    add_buf(cells, &b);
}

/* A requirement of a label selector, for sorting by key. */
typedef struct requirement {
    const char *key;
    sk_buf text;
} requirement;

static int cmp_req(const void *a, const void *b)
{
    return strcmp(((const requirement *)a)->key, ((const requirement *)b)->key);
}

/* A LabelSelector as its selector string ("app=x,tier in (a,b)"), its
 * requirements sorted by key; "" for none. */
static void selector_string(const json_t *sel, sk_buf *out)
{
    json_t *ml = json_object_get(sel, "matchLabels");
    json_t *me = json_object_get(sel, "matchExpressions");
    size_t n = json_object_size(ml) + json_array_size(me), i = 0;
    requirement *reqs = calloc(n + 1, sizeof *reqs);
    SK_CHECK_ALLOC(reqs);
    const char *k;
    json_t *v;
    json_object_foreach(ml, k, v)
    {
        reqs[i].key = k;
        sk_buf_printf(&reqs[i].text, "%s=%s", k, json_string_value(v) ?: "");
        i++;
    }
    size_t j;
    json_array_foreach(me, j, v)
    {
        const char *key = str_at(v, "key"), *op = str_at(v, "operator");
        reqs[i].key = key;
        if (!strcmp(op, "Exists")) {
            sk_buf_puts(&reqs[i].text, key);
        } else if (!strcmp(op, "DoesNotExist")) {
            sk_buf_printf(&reqs[i].text, "!%s", key);
        } else {
            json_t *vals = json_object_get(v, "values");
            size_t nv = json_array_size(vals);
            const char **sv = calloc(nv + 1, sizeof *sv);
            SK_CHECK_ALLOC(sv);
            for (size_t x = 0; x < nv; x++)
                sv[x] = json_string_value(json_array_get(vals, x)) ?: "";
            qsort(sv, nv, sizeof *sv, cmp_str);
            sk_buf_printf(&reqs[i].text, "%s %s (", key, !strcmp(op, "In") ? "in" : "notin");
            for (size_t x = 0; x < nv; x++)
                sk_buf_printf(&reqs[i].text, "%s%s", x ? "," : "", sv[x]);
            sk_buf_putc(&reqs[i].text, ')');
            free(sv);
        }
        i++;
    }
    qsort(reqs, n, sizeof *reqs, cmp_req);
    for (i = 0; i < n; i++) {
        sk_buf_printf(out, "%s%s", i ? "," : "", reqs[i].text.data ? reqs[i].text.data : "");
        sk_buf_free(&reqs[i].text);
    }
    free(reqs);
}

/* metav1.FormatLabelSelector: the selector string, "<none>" when empty. */
static void add_selector(json_t *cells, const json_t *sel)
{
    sk_buf b = SK_BUF_INIT;
    selector_string(sel, &b);
    if (b.len == 0)
        sk_buf_puts(&b, "<none>");
    add_buf(cells, &b);
}

/* Container names and images, each comma-joined (the wide columns of the
 * workload kinds). */
static void add_containers(json_t *cells, const json_t *pod_spec)
{
    sk_buf names = SK_BUF_INIT, images = SK_BUF_INIT;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(pod_spec, "containers"), i, c)
    {
        sk_buf_printf(&names, "%s%s", i ? "," : "", str_at(c, "name"));
        sk_buf_printf(&images, "%s%s", i ? "," : "", str_at(c, "image"));
    }
    add_buf(cells, &names);
    add_buf(cells, &images);
}

/* The condition of type in conditions is "True". */
static int condition_true(const json_t *conditions, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c)
    {
        if (!strcmp(str_at(c, "type"), type))
            return !strcmp(str_at(c, "status"), "True");
    }
    return 0;
}

/* ---- cells per kind ---- */

static void cells_default(const json_t *o, int64_t now_s, json_t *cells)
{
    char out[21] = "";
    int64_t t = when(str_at(o, "metadata.creationTimestamp"));
    if (t >= 0)
        sk_format_rfc3339(t, out);
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, t >= 0 ? out : "0001-01-01T00:00:00Z");
}

static int is_restartable_init(const json_t *spec, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(spec, "initContainers"), i, c)
    {
        if (!strcmp(str_at(c, "name"), name))
            return !strcmp(str_at(c, "restartPolicy"), "Always");
    }
    return 0;
}

/* A later lastState.terminated.finishedAt of container status cs. */
static void later_restart(const json_t *cs, int64_t *last)
{
    int64_t t = when(str_at(cs, "lastState.terminated.finishedAt"));
    if (t > *last)
        *last = t;
}

/* A pod's STATUS, READY and RESTARTS, as kubectl has always shown them. */
static void cells_pod(const json_t *o, int64_t now_s, json_t *cells)
{
    json_t *spec = json_object_get(o, "spec"), *status = json_object_get(o, "status");
    json_t *conds = json_object_get(status, "conditions");
    const char *phase = str_at(status, "phase");
    char reason[256];
    snprintf(reason, sizeof reason, "%s",
             *str_at(status, "reason") ? str_at(status, "reason") : phase);
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        if (!strcmp(str_at(c, "type"), "PodScheduled") &&
            !strcmp(str_at(c, "reason"), "SchedulingGated"))
            snprintf(reason, sizeof reason, "SchedulingGated");
    }
    json_int_t restarts = 0, sidecar_restarts = 0;
    json_int_t total = (json_int_t)json_array_size(json_object_get(spec, "containers")), ready = 0;
    int64_t last = -1, sidecar_last = -1;
    json_t *inits = json_object_get(spec, "initContainers");
    json_array_foreach(inits, i, c)
    {
        if (!strcmp(str_at(c, "restartPolicy"), "Always"))
            total++;
    }
    int initializing = 0;
    size_t n_inits = json_array_size(inits);
    json_array_foreach(json_object_get(status, "initContainerStatuses"), i, c)
    {
        restarts += int_at(c, "restartCount");
        later_restart(c, &last);
        int sidecar = is_restartable_init(spec, str_at(c, "name"));
        if (sidecar) {
            sidecar_restarts += int_at(c, "restartCount");
            later_restart(c, &sidecar_last);
        }
        json_t *term = at(c, "state.terminated");
        const char *wait_reason = str_at(c, "state.waiting.reason");
        if (term && int_at(term, "exitCode") == 0)
            continue;
        if (sidecar && json_is_true(json_object_get(c, "started"))) {
            if (json_is_true(json_object_get(c, "ready")))
                ready++;
            continue;
        }
        if (term) {
            if (*str_at(term, "reason"))
                snprintf(reason, sizeof reason, "Init:%s", str_at(term, "reason"));
            else if (int_at(term, "signal"))
                snprintf(reason, sizeof reason, "Init:Signal:%lld",
                         (long long)int_at(term, "signal"));
            else
                snprintf(reason, sizeof reason, "Init:ExitCode:%lld",
                         (long long)int_at(term, "exitCode"));
        } else if (*wait_reason && strcmp(wait_reason, "PodInitializing") != 0) {
            snprintf(reason, sizeof reason, "Init:%s", wait_reason);
        } else {
            snprintf(reason, sizeof reason, "Init:%zu/%zu", i, n_inits);
        }
        initializing = 1;
        break;
    }
    if (!initializing || condition_true(conds, "Initialized")) {
        restarts = sidecar_restarts;
        last = sidecar_last;
        int has_running = 0;
        json_t *statuses = json_object_get(status, "containerStatuses");
        for (size_t k = json_array_size(statuses); k-- > 0;) {
            c = json_array_get(statuses, k);
            restarts += int_at(c, "restartCount");
            later_restart(c, &last);
            json_t *term = at(c, "state.terminated");
            if (*str_at(c, "state.waiting.reason"))
                snprintf(reason, sizeof reason, "%s", str_at(c, "state.waiting.reason"));
            else if (term && *str_at(term, "reason"))
                snprintf(reason, sizeof reason, "%s", str_at(term, "reason"));
            else if (term && int_at(term, "signal"))
                snprintf(reason, sizeof reason, "Signal:%lld", (long long)int_at(term, "signal"));
            else if (term)
                snprintf(reason, sizeof reason, "ExitCode:%lld",
                         (long long)int_at(term, "exitCode"));
            else if (json_is_true(json_object_get(c, "ready")) && at(c, "state.running")) {
                has_running = 1;
                ready++;
            }
        }
        if (!strcmp(reason, "Completed") && has_running)
            snprintf(reason, sizeof reason, "%s",
                     condition_true(conds, "Ready") ? "Running" : "NotReady");
    }
    int deleting = *str_at(o, "metadata.deletionTimestamp") != 0;
    if (deleting && !strcmp(str_at(status, "reason"), "NodeLost"))
        snprintf(reason, sizeof reason, "Unknown");
    else if (deleting && strcmp(phase, "Failed") != 0 && strcmp(phase, "Succeeded") != 0)
        snprintf(reason, sizeof reason, "Terminating");

    char buf[64];
    add_str(cells, str_at(o, "metadata.name"));
    snprintf(buf, sizeof buf, "%lld/%lld", (long long)ready, (long long)total);
    add_str(cells, buf);
    add_str(cells, reason);
    if (restarts != 0 && last >= 0) {
        snprintf(buf, sizeof buf, "%lld (", (long long)restarts);
        json_array_append_new(cells, ago_cell(buf, last, " ago)", now_s));
    } else {
        snprintf(buf, sizeof buf, "%lld", (long long)restarts);
        add_str(cells, buf);
    }
    add_age(cells, o, now_s);
    const char *ip = str_at(json_array_get(json_object_get(status, "podIPs"), 0), "ip");
    const char *node = str_at(spec, "nodeName"), *nominated = str_at(status, "nominatedNodeName");
    add_str(cells, *ip ? ip : "<none>");
    add_str(cells, *node ? node : "<none>");
    add_str(cells, *nominated ? nominated : "<none>");
    json_t *gates = json_object_get(spec, "readinessGates");
    if (json_array_size(gates)) {
        size_t true_n = 0;
        json_array_foreach(gates, i, c)
        {
            const char *type = str_at(c, "conditionType");
            size_t k;
            json_t *cond;
            json_array_foreach(conds, k, cond)
            {
                if (!strcmp(str_at(cond, "type"), type)) {
                    true_n += !strcmp(str_at(cond, "status"), "True");
                    break;
                }
            }
        }
        snprintf(buf, sizeof buf, "%zu/%zu", true_n, json_array_size(gates));
        add_str(cells, buf);
    } else {
        add_str(cells, "<none>");
    }
}

static void cells_deployment(const json_t *o, int64_t now_s, json_t *cells)
{
    char buf[64];
    add_str(cells, str_at(o, "metadata.name"));
    snprintf(buf, sizeof buf, "%lld/%lld", (long long)int_at(o, "status.readyReplicas"),
             (long long)int_at(o, "spec.replicas"));
    add_str(cells, buf);
    add_int(cells, int_at(o, "status.updatedReplicas"));
    add_int(cells, int_at(o, "status.availableReplicas"));
    add_age(cells, o, now_s);
    add_containers(cells, at(o, "spec.template.spec"));
    sk_buf sel = SK_BUF_INIT;
    selector_string(at(o, "spec.selector"), &sel);
    add_buf(cells, &sel);
}

static void cells_replicaset(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_int(cells, int_at(o, "spec.replicas"));
    add_int(cells, int_at(o, "status.replicas"));
    add_int(cells, int_at(o, "status.readyReplicas"));
    add_age(cells, o, now_s);
    add_containers(cells, at(o, "spec.template.spec"));
    add_selector(cells, at(o, "spec.selector"));
}

static void cells_replicationcontroller(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_int(cells, int_at(o, "spec.replicas"));
    add_int(cells, int_at(o, "status.replicas"));
    add_int(cells, int_at(o, "status.readyReplicas"));
    add_age(cells, o, now_s);
    add_containers(cells, at(o, "spec.template.spec"));
    add_labels(cells, at(o, "spec.selector"));
}

static void cells_statefulset(const json_t *o, int64_t now_s, json_t *cells)
{
    char buf[64];
    add_str(cells, str_at(o, "metadata.name"));
    snprintf(buf, sizeof buf, "%lld/%lld", (long long)int_at(o, "status.readyReplicas"),
             (long long)int_at(o, "spec.replicas"));
    add_str(cells, buf);
    add_age(cells, o, now_s);
    add_containers(cells, at(o, "spec.template.spec"));
}

static void cells_daemonset(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_int(cells, int_at(o, "status.desiredNumberScheduled"));
    add_int(cells, int_at(o, "status.currentNumberScheduled"));
    add_int(cells, int_at(o, "status.numberReady"));
    add_int(cells, int_at(o, "status.updatedNumberScheduled"));
    add_int(cells, int_at(o, "status.numberAvailable"));
    add_labels(cells, at(o, "spec.template.spec.nodeSelector"));
    add_age(cells, o, now_s);
    add_containers(cells, at(o, "spec.template.spec"));
    add_selector(cells, at(o, "spec.selector"));
}

static void cells_job(const json_t *o, int64_t now_s, json_t *cells)
{
    char buf[96];
    json_t *conds = at(o, "status.conditions");
    long long ok = (long long)int_at(o, "status.succeeded");
    add_str(cells, str_at(o, "metadata.name"));
    const char *st = condition_true(conds, "Complete")          ? "Complete"
                     : condition_true(conds, "Failed")          ? "Failed"
                     : *str_at(o, "metadata.deletionTimestamp") ? "Terminating"
                     : condition_true(conds, "Suspended")       ? "Suspended"
                     : condition_true(conds, "FailureTarget")   ? "FailureTarget"
                                                                : "Running";
    add_str(cells, st);
    if (at(o, "spec.completions"))
        snprintf(buf, sizeof buf, "%lld/%lld", ok, (long long)int_at(o, "spec.completions"));
    else if (int_at(o, "spec.parallelism") > 1)
        snprintf(buf, sizeof buf, "%lld/1 of %lld", ok, (long long)int_at(o, "spec.parallelism"));
    else
        snprintf(buf, sizeof buf, "%lld/1", ok);
    add_str(cells, buf);
    int64_t start = when(str_at(o, "status.startTime"));
    int64_t end = when(str_at(o, "status.completionTime"));
    buf[0] = 0;
    if (start >= 0 && end >= 0)
        sk_table_human_duration(end - start, buf, sizeof buf);
    if (start >= 0 && end < 0)
        json_array_append_new(cells, ago_cell("", start, "", now_s)); /* running: its age */
    else
        add_str(cells, buf);
    add_age(cells, o, now_s);
    add_containers(cells, at(o, "spec.template.spec"));
    add_selector(cells, at(o, "spec.selector"));
}

static void cells_cronjob(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, str_at(o, "spec.schedule"));
    add_str(cells, at(o, "spec.timeZone") ? str_at(o, "spec.timeZone") : "<none>");
    json_t *suspend = at(o, "spec.suspend");
    add_str(cells,
            json_is_boolean(suspend) ? (json_is_true(suspend) ? "True" : "False") : "<unset>");
    add_int(cells, (json_int_t)json_array_size(at(o, "status.active")));
    if (at(o, "status.lastScheduleTime"))
        add_since(cells, str_at(o, "status.lastScheduleTime"), now_s);
    else
        add_str(cells, "<none>");
    add_age(cells, o, now_s);
    add_containers(cells, at(o, "spec.jobTemplate.spec.template.spec"));
    add_selector(cells, at(o, "spec.jobTemplate.spec.selector"));
}

/* The addresses of a load balancer status, each once ("<ip|hostname>,..."). */
static void lb_addresses(const json_t *ingress, sk_buf *out)
{
    size_t i;
    json_t *e;
    json_array_foreach(ingress, i, e)
    {
        const char *a = *str_at(e, "ip") ? str_at(e, "ip") : str_at(e, "hostname");
        if (!*a)
            continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) {
            json_t *p = json_array_get(ingress, k);
            seen = !strcmp(*str_at(p, "ip") ? str_at(p, "ip") : str_at(p, "hostname"), a);
        }
        if (!seen)
            sk_buf_printf(out, "%s%s", out->len ? "," : "", a);
    }
}

static void join_strings(const json_t *arr, const char *sep, sk_buf *out)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
        sk_buf_printf(out, "%s%s", out->len ? sep : "", json_string_value(v) ?: "");
}

static void cells_service(const json_t *o, int64_t now_s, json_t *cells)
{
    json_t *spec = json_object_get(o, "spec");
    const char *type = str_at(spec, "type");
    json_t *ips = json_object_get(spec, "clusterIPs");
    json_t *ext = json_object_get(spec, "externalIPs");
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, type);
    add_str(cells, json_array_size(ips) ? json_string_value(json_array_get(ips, 0)) : "<none>");
    sk_buf b = SK_BUF_INIT;
    if (!strcmp(type, "ClusterIP") || !strcmp(type, "NodePort")) {
        join_strings(ext, ",", &b);
        if (b.len == 0)
            sk_buf_puts(&b, "<none>");
    } else if (!strcmp(type, "LoadBalancer")) {
        lb_addresses(at(o, "status.loadBalancer.ingress"), &b);
        join_strings(ext, ",", &b);
        if (b.len == 0)
            sk_buf_puts(&b, "<pending>");
    } else if (!strcmp(type, "ExternalName")) {
        sk_buf_puts(&b, str_at(spec, "externalName"));
    } else {
        sk_buf_puts(&b, "<unknown>");
    }
    add_buf(cells, &b);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(spec, "ports"), i, p)
    {
        sk_buf_printf(&b, "%s%lld", i ? "," : "", (long long)int_at(p, "port"));
        if (int_at(p, "nodePort") > 0)
            sk_buf_printf(&b, ":%lld", (long long)int_at(p, "nodePort"));
        sk_buf_printf(&b, "/%s", str_at(p, "protocol"));
    }
    if (b.len == 0)
        sk_buf_puts(&b, "<none>");
    add_buf(cells, &b);
    add_age(cells, o, now_s);
    add_labels(cells, json_object_get(spec, "selector"));
}

static void cells_ingress(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, at(o, "spec.ingressClassName") ? str_at(o, "spec.ingressClassName") : "<none>");
    sk_buf b = SK_BUF_INIT;
    json_t *rules = at(o, "spec.rules");
    size_t i, listed = 0;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        if (listed < 3 && i < 3 && *str_at(r, "host"))
            sk_buf_printf(&b, "%s%s", listed++ ? "," : "", str_at(r, "host"));
    }
    if (listed == 0)
        sk_buf_puts(&b, "*");
    else if (json_array_size(rules) > 3)
        sk_buf_printf(&b, " + %zu more...", json_array_size(rules) - 3);
    add_buf(cells, &b);
    lb_addresses(at(o, "status.loadBalancer.ingress"), &b);
    add_buf(cells, &b);
    add_str(cells, json_array_size(at(o, "spec.tls")) ? "80, 443" : "80");
    add_age(cells, o, now_s);
}

static void cells_endpoints(const json_t *o, int64_t now_s, json_t *cells)
{
    sk_buf b = SK_BUF_INIT;
    size_t i, count = 0, listed = 0;
    json_t *ss;
    json_array_foreach(json_object_get(o, "subsets"), i, ss)
    {
        json_t *addrs = json_object_get(ss, "addresses"), *ports = json_object_get(ss, "ports");
        size_t np = json_array_size(ports) ? json_array_size(ports) : 1;
        for (size_t p = 0; p < np; p++) {
            json_t *port = json_array_get(ports, p);
            size_t k;
            json_t *a;
            count += json_array_size(addrs);
            json_array_foreach(addrs, k, a)
            {
                if (listed == 3)
                    break;
                const char *ip = str_at(a, "ip");
                if (!port)
                    sk_buf_printf(&b, "%s%s", listed ? "," : "", ip);
                else if (strchr(ip, ':'))
                    sk_buf_printf(&b, "%s[%s]:%lld", listed ? "," : "", ip,
                                  (long long)int_at(port, "port"));
                else
                    sk_buf_printf(&b, "%s%s:%lld", listed ? "," : "", ip,
                                  (long long)int_at(port, "port"));
                listed++;
            }
        }
    }
    if (count > 3)
        sk_buf_printf(&b, " + %zu more...", count - 3);
    if (json_array_size(json_object_get(o, "subsets")) == 0)
        sk_buf_puts(&b, "<none>");
    add_str(cells, str_at(o, "metadata.name"));
    add_buf(cells, &b);
    add_age(cells, o, now_s);
}

static const char *node_address(const json_t *o, const char *type)
{
    size_t i;
    json_t *a;
    json_array_foreach(at(o, "status.addresses"), i, a)
    {
        if (!strcmp(str_at(a, "type"), type))
            return str_at(a, "address");
    }
    return "<none>";
}

static void cells_node(const json_t *o, int64_t now_s, json_t *cells)
{
    sk_buf b = SK_BUF_INIT;
    size_t i;
    json_t *c;
    const char *ready = NULL;
    json_array_foreach(at(o, "status.conditions"), i, c)
    {
        if (!strcmp(str_at(c, "type"), "Ready"))
            ready = str_at(c, "status");
    }
    sk_buf_puts(&b, !ready ? "Unknown" : !strcmp(ready, "True") ? "Ready" : "NotReady");
    if (json_is_true(at(o, "spec.unschedulable")))
        sk_buf_puts(&b, ",SchedulingDisabled");
    add_str(cells, str_at(o, "metadata.name"));
    add_buf(cells, &b);
    /* roles: node-role.kubernetes.io/<role> labels and kubernetes.io/role */
    json_t *labels = at(o, "metadata.labels");
    size_t n;
    const char **keys = sorted_keys(labels, &n);
    const char **roles = calloc(n + 1, sizeof *roles);
    SK_CHECK_ALLOC(roles);
    size_t nr = 0;
    static const char prefix[] = "node-role.kubernetes.io/";
    for (i = 0; i < n; i++) {
        const char *v = json_string_value(json_object_get(labels, keys[i])) ?: "";
        if (!strncmp(keys[i], prefix, sizeof prefix - 1) && keys[i][sizeof prefix - 1])
            roles[nr++] = keys[i] + sizeof prefix - 1;
        else if (!strcmp(keys[i], "kubernetes.io/role") && *v)
            roles[nr++] = v;
    }
    qsort(roles, nr, sizeof *roles, cmp_str);
    for (i = 0; i < nr; i++)
        if (i == 0 || strcmp(roles[i], roles[i - 1]))
            sk_buf_printf(&b, "%s%s", b.len ? "," : "", roles[i]);
    free(roles);
    free(keys);
    if (b.len == 0)
        sk_buf_puts(&b, "<none>");
    add_buf(cells, &b);
    add_age(cells, o, now_s);
    add_str(cells, str_at(o, "status.nodeInfo.kubeletVersion"));
    add_str(cells, node_address(o, "InternalIP"));
    add_str(cells, node_address(o, "ExternalIP"));
    static const char *const info[] = {"status.nodeInfo.osImage", "status.nodeInfo.kernelVersion",
                                       "status.nodeInfo.containerRuntimeVersion"};
    for (i = 0; i < 3; i++)
        add_str(cells, *str_at(o, info[i]) ? str_at(o, info[i]) : "<unknown>");
}

/* A core v1 Event (events.k8s.io Events are stored so too). */
static void cells_event(const json_t *o, int64_t now_s, json_t *cells)
{
    /* first and last seen: -1 prints "<unknown>" */
    int64_t first = when(str_at(o, "firstTimestamp"));
    if (first < 0)
        first = when(str_at(o, "eventTime"));
    int64_t last = when(str_at(o, "lastTimestamp"));
    if (last < 0)
        last = first;
    json_int_t count = int_at(o, "count");
    json_t *series = json_object_get(o, "series");
    if (json_is_object(series)) {
        last = when(str_at(series, "lastObservedTime"));
        count = int_at(series, "count");
    } else if (count == 0) {
        count = 1;
    }
    sk_buf b = SK_BUF_INIT;
    const char *kind = str_at(o, "involvedObject.kind"), *name = str_at(o, "involvedObject.name");
    for (const char *p = kind; *p; p++)
        sk_buf_putc(&b, (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p));
    if (*name)
        sk_buf_printf(&b, "/%s", name);
    json_array_append_new(cells,
                          last >= 0 ? ago_cell("", last, "", now_s) : json_string("<unknown>"));
    add_str(cells, str_at(o, "type"));
    add_str(cells, str_at(o, "reason"));
    add_buf(cells, &b);
    add_str(cells, str_at(o, "involvedObject.fieldPath"));
    const char *comp = *str_at(o, "source.component") ? str_at(o, "source.component")
                                                      : str_at(o, "reportingComponent");
    const char *host =
        *str_at(o, "source.host") ? str_at(o, "source.host") : str_at(o, "reportingInstance");
    sk_buf_puts(&b, comp);
    if (*host)
        sk_buf_printf(&b, ", %s", host);
    add_buf(cells, &b);
    /* the message, trimmed of surrounding white space */
    const char *m = str_at(o, "message");
    while (*m == ' ' || *m == '\t' || *m == '\n' || *m == '\r' || *m == '\v' || *m == '\f')
        m++;
    size_t ml = strlen(m);
    while (ml && strchr(" \t\n\r\v\f", m[ml - 1]))
        ml--;
    sk_buf_append(&b, m, ml);
    sk_buf_putc(&b, 0);
    add_str(cells, b.data);
    sk_buf_free(&b);
    json_array_append_new(cells,
                          first >= 0 ? ago_cell("", first, "", now_s) : json_string("<unknown>"));
    add_int(cells, count);
    add_str(cells, str_at(o, "metadata.name"));
}

static void cells_namespace(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, str_at(o, "status.phase"));
    add_age(cells, o, now_s);
}

static void cells_configmap(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_int(cells, (json_int_t)(json_object_size(json_object_get(o, "data")) +
                                json_object_size(json_object_get(o, "binaryData"))));
    add_age(cells, o, now_s);
}

static void cells_secret(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, str_at(o, "type"));
    add_int(cells, (json_int_t)json_object_size(json_object_get(o, "data")));
    add_age(cells, o, now_s);
}

static void cells_serviceaccount(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_int(cells, (json_int_t)json_array_size(json_object_get(o, "secrets")));
    add_age(cells, o, now_s);
}

/* Access modes in their short forms, in kube's order. */
static void add_access_modes(json_t *cells, const json_t *modes)
{
    static const char *const m[][2] = {{"ReadWriteOnce", "RWO"},
                                       {"ReadOnlyMany", "ROX"},
                                       {"ReadWriteMany", "RWX"},
                                       {"ReadWriteOncePod", "RWOP"}};
    sk_buf b = SK_BUF_INIT;
    for (size_t k = 0; k < 4; k++) {
        size_t i;
        json_t *v;
        json_array_foreach(modes, i, v)
        {
            if (!strcmp(json_string_value(v) ?: "", m[k][0])) {
                sk_buf_printf(&b, "%s%s", b.len ? "," : "", m[k][1]);
                break;
            }
        }
    }
    add_buf(cells, &b);
}

/* The storage class: the beta annotation wins over spec.storageClassName. */
static const char *storage_class(const json_t *o)
{
    json_t *ann = at(o, "metadata.annotations");
    const char *a =
        json_string_value(json_object_get(ann, "volume.beta.kubernetes.io/storage-class"));
    return a ? a : str_at(o, "spec.storageClassName");
}

static void cells_pv(const json_t *o, int64_t now_s, json_t *cells)
{
    char claim[512] = "";
    if (at(o, "spec.claimRef"))
        snprintf(claim, sizeof claim, "%s/%s", str_at(o, "spec.claimRef.namespace"),
                 str_at(o, "spec.claimRef.name"));
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, str_at(o, "spec.capacity.storage"));
    add_access_modes(cells, at(o, "spec.accessModes"));
    add_str(cells, str_at(o, "spec.persistentVolumeReclaimPolicy"));
    add_str(cells,
            *str_at(o, "metadata.deletionTimestamp") ? "Terminating" : str_at(o, "status.phase"));
    add_str(cells, claim);
    add_str(cells, storage_class(o));
    add_str(cells, at(o, "spec.volumeAttributesClassName")
                       ? str_at(o, "spec.volumeAttributesClassName")
                       : "<unset>");
    add_str(cells, str_at(o, "status.reason"));
    add_age(cells, o, now_s);
    add_str(cells, at(o, "spec.volumeMode") ? str_at(o, "spec.volumeMode") : "<unset>");
}

static void cells_pvc(const json_t *o, int64_t now_s, json_t *cells)
{
    int bound = *str_at(o, "spec.volumeName") != 0;
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells,
            *str_at(o, "metadata.deletionTimestamp") ? "Terminating" : str_at(o, "status.phase"));
    add_str(cells, str_at(o, "spec.volumeName"));
    add_str(cells, bound ? str_at(o, "status.capacity.storage") : "");
    if (bound)
        add_access_modes(cells, at(o, "status.accessModes"));
    else
        add_str(cells, "");
    add_str(cells, storage_class(o));
    add_str(cells, at(o, "spec.volumeAttributesClassName")
                       ? str_at(o, "spec.volumeAttributesClassName")
                       : "<unset>");
    add_age(cells, o, now_s);
    add_str(cells, at(o, "spec.volumeMode") ? str_at(o, "spec.volumeMode") : "<unset>");
}

static void cells_binding(const json_t *o, int64_t now_s, json_t *cells)
{
    char role[512];
    snprintf(role, sizeof role, "%s/%s", str_at(o, "roleRef.kind"), str_at(o, "roleRef.name"));
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, role);
    add_age(cells, o, now_s);
    sk_buf users = SK_BUF_INIT, groups = SK_BUF_INIT, sas = SK_BUF_INIT;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(o, "subjects"), i, s)
    {
        const char *kind = str_at(s, "kind"), *name = str_at(s, "name");
        if (!strcmp(kind, "User"))
            sk_buf_printf(&users, "%s%s", users.len ? ", " : "", name);
        else if (!strcmp(kind, "Group"))
            sk_buf_printf(&groups, "%s%s", groups.len ? ", " : "", name);
        else if (!strcmp(kind, "ServiceAccount"))
            sk_buf_printf(&sas, "%s%s:%s", sas.len ? ", " : "", str_at(s, "namespace"), name);
    }
    add_buf(cells, &users);
    add_buf(cells, &groups);
    add_buf(cells, &sas);
}

static void cells_lease(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, str_at(o, "spec.holderIdentity"));
    add_age(cells, o, now_s);
}

static void cells_storageclass(const json_t *o, int64_t now_s, json_t *cells)
{
    json_t *ann = at(o, "metadata.annotations");
    const char *d =
        json_string_value(json_object_get(ann, "storageclass.kubernetes.io/is-default-class"));
    const char *bd =
        json_string_value(json_object_get(ann, "storageclass.beta.kubernetes.io/is-default-class"));
    char name[300];
    snprintf(name, sizeof name, "%s%s", str_at(o, "metadata.name"),
             (d && !strcmp(d, "true")) || (bd && !strcmp(bd, "true")) ? " (default)" : "");
    add_str(cells, name);
    add_str(cells, str_at(o, "provisioner"));
    add_str(cells, at(o, "reclaimPolicy") ? str_at(o, "reclaimPolicy") : "Delete");
    add_str(cells, at(o, "volumeBindingMode") ? str_at(o, "volumeBindingMode") : "Immediate");
    json_array_append_new(cells, json_boolean(json_is_true(at(o, "allowVolumeExpansion"))));
    add_age(cells, o, now_s);
}

static void cells_priorityclass(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_int(cells, int_at(o, "value"));
    json_array_append_new(cells, json_boolean(json_is_true(at(o, "globalDefault"))));
    add_age(cells, o, now_s);
    add_str(cells, str_at(o, "preemptionPolicy"));
}

static void cells_pdb(const json_t *o, int64_t now_s, json_t *cells)
{
    static const char *const f[] = {"spec.minAvailable", "spec.maxUnavailable"};
    add_str(cells, str_at(o, "metadata.name"));
    for (int i = 0; i < 2; i++) {
        json_t *v = at(o, f[i]);
        char buf[64] = "N/A";
        if (json_is_integer(v))
            snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        else if (json_is_string(v))
            snprintf(buf, sizeof buf, "%s", json_string_value(v));
        add_str(cells, buf);
    }
    add_int(cells, int_at(o, "status.disruptionsAllowed"));
    add_age(cells, o, now_s);
}

static void cells_networkpolicy(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_selector(cells, at(o, "spec.podSelector"));
    add_age(cells, o, now_s);
}

static void cells_webhooks(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_int(cells, (json_int_t)json_array_size(json_object_get(o, "webhooks")));
    add_age(cells, o, now_s);
}

static void cells_runtimeclass(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, str_at(o, "handler"));
    add_age(cells, o, now_s);
}

static void cells_ingressclass(const json_t *o, int64_t now_s, json_t *cells)
{
    sk_buf b = SK_BUF_INIT;
    json_t *p = at(o, "spec.parameters");
    if (p) {
        sk_buf_puts(&b, str_at(p, "kind"));
        if (json_object_get(p, "apiGroup"))
            sk_buf_printf(&b, ".%s", str_at(p, "apiGroup"));
        sk_buf_printf(&b, "/%s", str_at(p, "name"));
    } else {
        sk_buf_puts(&b, "<none>");
    }
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, str_at(o, "spec.controller"));
    add_buf(cells, &b);
    add_age(cells, o, now_s);
}

static void cells_podtemplate(const json_t *o, int64_t now_s, json_t *cells)
{
    add_str(cells, str_at(o, "metadata.name"));
    add_containers(cells, at(o, "template.spec"));
    add_labels(cells, at(o, "template.metadata.labels"));
}

/* kube-aggregator's APIService table. */
static void cells_apiservice(const json_t *o, int64_t now_s, json_t *cells)
{
    char svc[512] = "Local", avail[300] = "Unknown";
    if (at(o, "spec.service"))
        snprintf(svc, sizeof svc, "%s/%s", str_at(o, "spec.service.namespace"),
                 str_at(o, "spec.service.name"));
    size_t i;
    json_t *c;
    json_array_foreach(at(o, "status.conditions"), i, c)
    {
        if (strcmp(str_at(c, "type"), "Available") != 0)
            continue;
        if (strcmp(str_at(c, "status"), "True") != 0 && *str_at(c, "reason"))
            snprintf(avail, sizeof avail, "%s (%s)", str_at(c, "status"), str_at(c, "reason"));
        else
            snprintf(avail, sizeof avail, "%s", str_at(c, "status"));
        break;
    }
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, svc);
    add_str(cells, avail);
    add_age(cells, o, now_s);
}

/* One autoscaling/v2 metric target as the TARGETS cell shows it. */
static void hpa_metric(const json_t *spec, const json_t *status, sk_buf *b)
{
    const char *type = str_at(spec, "type");
    char cur[64] = "<unknown>";
    if (!strcmp(type, "Resource") || !strcmp(type, "ContainerResource")) {
        const char *key = !strcmp(type, "Resource") ? "resource" : "containerResource";
        json_t *s = json_object_get(spec, key), *st = json_object_get(status, key);
        json_t *avg = at(s, "target.averageValue");
        if (avg) {
            if (st)
                snprintf(cur, sizeof cur, "%s", str_at(st, "current.averageValue"));
            sk_buf_printf(b, "%s: %s/%s", str_at(s, "name"), cur, json_string_value(avg) ?: "");
        } else {
            if (json_is_integer(at(st, "current.averageUtilization")))
                snprintf(cur, sizeof cur, "%lld%%",
                         (long long)int_at(st, "current.averageUtilization"));
            char target[32] = "<auto>";
            if (json_is_integer(at(s, "target.averageUtilization")))
                snprintf(target, sizeof target, "%lld%%",
                         (long long)int_at(s, "target.averageUtilization"));
            sk_buf_printf(b, "%s: %s/%s", str_at(s, "name"), cur, target);
        }
    } else if (!strcmp(type, "Pods")) {
        if (json_object_get(status, "pods"))
            snprintf(cur, sizeof cur, "%s", str_at(status, "pods.current.averageValue"));
        sk_buf_printf(b, "%s/%s", cur, str_at(spec, "pods.target.averageValue"));
    } else if (!strcmp(type, "Object") || !strcmp(type, "External")) {
        const char *key = !strcmp(type, "Object") ? "object" : "external";
        json_t *s = json_object_get(spec, key), *st = json_object_get(status, key);
        if (at(s, "target.averageValue")) {
            if (at(st, "current.averageValue"))
                snprintf(cur, sizeof cur, "%s", str_at(st, "current.averageValue"));
            sk_buf_printf(b, "%s/%s (avg)", cur, str_at(s, "target.averageValue"));
        } else {
            if (st)
                snprintf(cur, sizeof cur, "%s", str_at(st, "current.value"));
            sk_buf_printf(b, "%s/%s", cur, str_at(s, "target.value"));
        }
    } else {
        sk_buf_puts(b, "<unknown type>");
    }
}

/* An autoscaling/v2 HPA (the stored form of both versions). */
static void cells_hpa(const json_t *o, int64_t now_s, json_t *cells)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", str_at(o, "spec.scaleTargetRef.kind"),
             str_at(o, "spec.scaleTargetRef.name"));
    add_str(cells, str_at(o, "metadata.name"));
    add_str(cells, buf);
    sk_buf b = SK_BUF_INIT;
    json_t *metrics = at(o, "spec.metrics"), *current = at(o, "status.currentMetrics");
    size_t n = json_array_size(metrics);
    for (size_t i = 0; i < n && i < 2; i++) {
        if (i)
            sk_buf_puts(&b, ", ");
        hpa_metric(json_array_get(metrics, i), json_array_get(current, i), &b);
    }
    if (n == 0)
        sk_buf_puts(&b, "<none>");
    else if (n > 2)
        sk_buf_printf(&b, " + %zu more...", n - 2);
    add_buf(cells, &b);
    if (json_is_integer(at(o, "spec.minReplicas")))
        snprintf(buf, sizeof buf, "%lld", (long long)int_at(o, "spec.minReplicas"));
    else
        snprintf(buf, sizeof buf, "<unset>");
    add_str(cells, buf);
    add_int(cells, int_at(o, "spec.maxReplicas"));
    add_int(cells, int_at(o, "status.currentReplicas"));
    add_age(cells, o, now_s);
}

/* ---- the columns, as data ---- */

#define NAME                                                                                       \
    {                                                                                              \
        "Name", "string", "name", 0, "The object's name, unique within its namespace."             \
    }
#define AGE                                                                                        \
    {                                                                                              \
        "Age", "string", "", 0, "Time since the object was created."                               \
    }
#define WIDE_CONTAINERS                                                                            \
    {"Containers", "string", "", 1, "The names of the template's containers."},                    \
    {                                                                                              \
        "Images", "string", "", 1, "The images of the template's containers."                      \
    }
#define WIDE_SELECTOR                                                                              \
    {                                                                                              \
        "Selector", "string", "", 1, "The label selector of the pods it manages."                  \
    }

static const table_column default_cols[] = {
    NAME, {"Created At", "date", "", 0, "When the object was created."}};
static const table_column pod_cols[] = {
    NAME,
    {"Ready", "string", "", 0, "Ready containers out of all containers."},
    {"Status", "string", "", 0, "The pod's phase, or why its containers are not running."},
    {"Restarts", "string", "", 0, "Container restarts, and how long ago the last one was."},
    AGE,
    {"IP", "string", "", 1, "The pod's IP address."},
    {"Node", "string", "", 1, "The node the pod is bound to."},
    {"Nominated Node", "string", "", 1, "The node the scheduler nominated for the pod."},
    {"Readiness Gates", "string", "", 1, "Readiness gates that are true, out of all of them."}};
static const table_column deployment_cols[] = {
    NAME,
    {"Ready", "string", "", 0, "Ready replicas out of desired replicas."},
    {"Up-to-date", "string", "", 0, "Replicas running the current template."},
    {"Available", "string", "", 0, "Replicas available to serve."},
    AGE,
    WIDE_CONTAINERS,
    WIDE_SELECTOR};
static const table_column replicaset_cols[] = {NAME,
                                               {"Desired", "integer", "", 0, "Desired replicas."},
                                               {"Current", "integer", "", 0, "Current replicas."},
                                               {"Ready", "integer", "", 0, "Ready replicas."},
                                               AGE,
                                               WIDE_CONTAINERS,
                                               WIDE_SELECTOR};
static const table_column statefulset_cols[] = {
    NAME,
    {"Ready", "string", "", 0, "Ready replicas out of desired replicas."},
    AGE,
    WIDE_CONTAINERS};
static const table_column daemonset_cols[] = {
    NAME,
    {"Desired", "integer", "", 0, "Nodes that should run the daemon pod."},
    {"Current", "integer", "", 0, "Nodes running the daemon pod."},
    {"Ready", "integer", "", 0, "Nodes whose daemon pod is ready."},
    {"Up-to-date", "integer", "", 0, "Nodes running the current template."},
    {"Available", "integer", "", 0, "Nodes whose daemon pod is available."},
    {"Node Selector", "string", "", 0, "The template's node selector."},
    AGE,
    WIDE_CONTAINERS,
    WIDE_SELECTOR};
static const table_column job_cols[] = {
    NAME,
    {"Status", "string", "", 0, "The job's state."},
    {"Completions", "string", "", 0, "Succeeded pods out of the completions wanted."},
    {"Duration", "string", "", 0, "How long the job ran."},
    AGE,
    WIDE_CONTAINERS,
    WIDE_SELECTOR};
static const table_column cronjob_cols[] = {
    NAME,
    {"Schedule", "string", "", 0, "The cron schedule."},
    {"Timezone", "string", "", 0, "The schedule's time zone."},
    {"Suspend", "boolean", "", 0, "Whether runs are suspended."},
    {"Active", "integer", "", 0, "Jobs running now."},
    {"Last Schedule", "string", "", 0, "Time since a job was last scheduled."},
    AGE,
    WIDE_CONTAINERS,
    WIDE_SELECTOR};
static const table_column service_cols[] = {
    NAME,
    {"Type", "string", "", 0, "How the service is exposed."},
    {"Cluster-IP", "string", "", 0, "The service's cluster IP address."},
    {"External-IP", "string", "", 0, "External addresses of the service."},
    {"Port(s)", "string", "", 0, "The service's ports (port[:nodePort]/protocol)."},
    AGE,
    {"Selector", "string", "", 1, "The labels of the pods it routes to."}};
static const table_column ingress_cols[] = {
    NAME,
    {"Class", "string", "", 0, "The ingress class."},
    {"Hosts", "string", "", 0, "Hosts the rules match."},
    {"Address", "string", "", 0, "The load balancer's addresses."},
    {"Ports", "string", "", 0, "Ports served."},
    AGE};
static const table_column endpoints_cols[] = {
    NAME, {"Endpoints", "string", "", 0, "The endpoints' addresses and ports."}, AGE};
static const table_column node_cols[] = {
    NAME,
    {"Status", "string", "", 0, "Whether the node is ready."},
    {"Roles", "string", "", 0, "The node's roles, from its labels."},
    AGE,
    {"Version", "string", "", 0, "The kubelet's version."},
    {"Internal-IP", "string", "", 1, "The node's internal IP address."},
    {"External-IP", "string", "", 1, "The node's external IP address."},
    {"OS-Image", "string", "", 1, "The node's operating system image."},
    {"Kernel-Version", "string", "", 1, "The node's kernel version."},
    {"Container-Runtime", "string", "", 1, "The node's container runtime."}};
static const table_column event_cols[] = {
    {"Last Seen", "string", "", 0, "Time since the event was last seen."},
    {"Type", "string", "", 0, "The event's type."},
    {"Reason", "string", "", 0, "Why the event happened."},
    {"Object", "string", "", 0, "The object the event is about."},
    {"Subobject", "string", "", 1, "The part of the object it is about."},
    {"Source", "string", "", 1, "The component that reported it."},
    {"Message", "string", "", 0, "The event's message."},
    {"First Seen", "string", "", 1, "Time since the event was first seen."},
    {"Count", "string", "", 1, "How often it happened."},
    {"Name", "string", "name", 1, "The event's name."}};
static const table_column namespace_cols[] = {
    NAME, {"Status", "string", "", 0, "The namespace's phase."}, AGE};
static const table_column configmap_cols[] = {
    NAME, {"Data", "string", "", 0, "Number of data keys."}, AGE};
static const table_column secret_cols[] = {NAME,
                                           {"Type", "string", "", 0, "The secret's type."},
                                           {"Data", "string", "", 0, "Number of data keys."},
                                           AGE};
static const table_column serviceaccount_cols[] = {
    NAME, {"Secrets", "string", "", 0, "Number of secrets."}, AGE};
static const table_column pv_cols[] = {
    NAME,
    {"Capacity", "string", "", 0, "The volume's storage capacity."},
    {"Access Modes", "string", "", 0, "How the volume can be mounted."},
    {"Reclaim Policy", "string", "", 0, "What happens to it when released."},
    {"Status", "string", "", 0, "The volume's phase."},
    {"Claim", "string", "", 0, "The claim bound to it."},
    {"StorageClass", "string", "", 0, "Its storage class."},
    {"VolumeAttributesClass", "string", "", 0, "Its volume attributes class."},
    {"Reason", "string", "", 0, "Why it is in its phase."},
    AGE,
    {"VolumeMode", "string", "", 1, "Filesystem or Block."}};
static const table_column pvc_cols[] = {
    NAME,
    {"Status", "string", "", 0, "The claim's phase."},
    {"Volume", "string", "", 0, "The volume bound to it."},
    {"Capacity", "string", "", 0, "The bound volume's capacity."},
    {"Access Modes", "string", "", 0, "How the bound volume can be mounted."},
    {"StorageClass", "string", "", 0, "Its storage class."},
    {"VolumeAttributesClass", "string", "", 0, "Its volume attributes class."},
    AGE,
    {"VolumeMode", "string", "", 1, "Filesystem or Block."}};
static const table_column binding_cols[] = {
    NAME,
    {"Role", "string", "", 0, "The role bound."},
    AGE,
    {"Users", "string", "", 1, "Users bound."},
    {"Groups", "string", "", 1, "Groups bound."},
    {"ServiceAccounts", "string", "", 1, "Service accounts bound."}};
static const table_column lease_cols[] = {
    NAME, {"Holder", "string", "", 0, "Who holds the lease."}, AGE};
static const table_column storageclass_cols[] = {
    NAME,
    {"Provisioner", "string", "", 0, "The volume plugin that provisions volumes."},
    {"ReclaimPolicy", "string", "", 0, "The reclaim policy of its volumes."},
    {"VolumeBindingMode", "string", "", 0, "When volumes are bound."},
    {"AllowVolumeExpansion", "string", "", 0, "Whether volumes can grow."},
    AGE};
static const table_column priorityclass_cols[] = {
    NAME,
    {"Value", "integer", "", 0, "The priority."},
    {"Global-Default", "boolean", "", 0, "Whether it is the default."},
    AGE,
    {"PreemptionPolicy", "string", "", 0, "Whether its pods preempt others."}};
static const table_column pdb_cols[] = {
    NAME,
    {"Min Available", "string", "", 0, "Pods that must stay available."},
    {"Max Unavailable", "string", "", 0, "Pods that may be unavailable."},
    {"Allowed Disruptions", "integer", "", 0, "Disruptions allowed now."},
    AGE};
static const table_column networkpolicy_cols[] = {
    NAME, {"Pod-Selector", "string", "", 0, "The pods the policy applies to."}, AGE};
static const table_column webhook_cols[] = {
    NAME, {"Webhooks", "integer", "", 0, "Number of webhooks."}, AGE};
static const table_column runtimeclass_cols[] = {
    NAME, {"Handler", "string", "", 0, "The runtime handler."}, AGE};
static const table_column ingressclass_cols[] = {
    NAME,
    {"Controller", "string", "", 0, "The controller that implements the class."},
    {"Parameters", "string", "", 0, "The class's parameters object."},
    AGE};
static const table_column podtemplate_cols[] = {
    NAME,
    {"Containers", "string", "", 0, "The names of the template's containers."},
    {"Images", "string", "", 0, "The images of the template's containers."},
    {"Pod Labels", "string", "", 0, "The template's labels."}};
static const table_column hpa_cols[] = {
    NAME,
    {"Reference", "string", "", 0, "The object scaled."},
    {"Targets", "string", "", 0, "Current and target metric values."},
    {"MinPods", "string", "", 0, "The fewest replicas."},
    {"MaxPods", "string", "", 0, "The most replicas."},
    {"Replicas", "string", "", 0, "Current replicas."},
    AGE};

static const table_column apiservice_cols[] = {
    NAME,
    {"Service", "string", "", 0, "The service that serves the API, or Local."},
    {"Available", "string", "", 0, "Whether the API is available."},
    AGE};

typedef void (*cells_fn)(const json_t *o, int64_t now_s, json_t *cells);

typedef struct table_kind {
    const char *group, *kind; /* of the stored form */
    const table_column *cols;
    size_t n_cols;
    cells_fn cells;
} table_kind;

#define KIND(g, k, cols, fn)                                                                       \
    {                                                                                              \
        g, k, cols, sizeof cols / sizeof *cols, fn                                                 \
    }
static const table_kind kinds[] = {
    KIND("", "Pod", pod_cols, cells_pod),
    KIND("", "Service", service_cols, cells_service),
    KIND("", "Endpoints", endpoints_cols, cells_endpoints),
    KIND("", "Node", node_cols, cells_node),
    KIND("", "Event", event_cols, cells_event),
    KIND("", "Namespace", namespace_cols, cells_namespace),
    KIND("", "ConfigMap", configmap_cols, cells_configmap),
    KIND("", "Secret", secret_cols, cells_secret),
    KIND("", "ServiceAccount", serviceaccount_cols, cells_serviceaccount),
    KIND("", "PersistentVolume", pv_cols, cells_pv),
    KIND("", "PersistentVolumeClaim", pvc_cols, cells_pvc),
    KIND("", "ReplicationController", replicaset_cols, cells_replicationcontroller),
    KIND("", "PodTemplate", podtemplate_cols, cells_podtemplate),
    KIND("apps", "Deployment", deployment_cols, cells_deployment),
    KIND("apps", "ReplicaSet", replicaset_cols, cells_replicaset),
    KIND("apps", "StatefulSet", statefulset_cols, cells_statefulset),
    KIND("apps", "DaemonSet", daemonset_cols, cells_daemonset),
    KIND("batch", "Job", job_cols, cells_job),
    KIND("batch", "CronJob", cronjob_cols, cells_cronjob),
    KIND("autoscaling", "HorizontalPodAutoscaler", hpa_cols, cells_hpa),
    KIND("policy", "PodDisruptionBudget", pdb_cols, cells_pdb),
    KIND("networking.k8s.io", "Ingress", ingress_cols, cells_ingress),
    KIND("networking.k8s.io", "IngressClass", ingressclass_cols, cells_ingressclass),
    KIND("networking.k8s.io", "NetworkPolicy", networkpolicy_cols, cells_networkpolicy),
    KIND("rbac.authorization.k8s.io", "RoleBinding", binding_cols, cells_binding),
    KIND("rbac.authorization.k8s.io", "ClusterRoleBinding", binding_cols, cells_binding),
    KIND("coordination.k8s.io", "Lease", lease_cols, cells_lease),
    KIND("storage.k8s.io", "StorageClass", storageclass_cols, cells_storageclass),
    KIND("scheduling.k8s.io", "PriorityClass", priorityclass_cols, cells_priorityclass),
    KIND("node.k8s.io", "RuntimeClass", runtimeclass_cols, cells_runtimeclass),
    KIND("apiregistration.k8s.io", "APIService", apiservice_cols, cells_apiservice),
    KIND("admissionregistration.k8s.io", "MutatingWebhookConfiguration", webhook_cols,
         cells_webhooks),
    KIND("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", webhook_cols,
         cells_webhooks),
};

static const table_kind default_kind = KIND("", "", default_cols, cells_default);

/* The printer of r: its stored form's kind's, or the default. */
static const table_kind *kind_of(const sk_resource *r)
{
    const sk_resource *s = r->stored_as;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (!strcmp(kinds[i].group, s->group) && !strcmp(kinds[i].kind, s->kind))
            return &kinds[i];
    return &default_kind;
}

/* ---- custom resources: the CRD's additionalPrinterColumns ---- */

/* A CRD without printer columns shows its objects' age (apiextensions'
 * default column). */
static const char default_custom_columns[] =
    "[{\"name\":\"Age\",\"type\":\"date\",\"jsonPath\":\".metadata.creationTimestamp\"}]";

/* r's columns: its CRD's (borrowed: the registry's entry is shared by every
 * thread and never touched, not even its reference count), else the
 * default, new in *owned. */
static const json_t *custom_columns(const sk_resource *r, json_t **owned)
{
    *owned = NULL;
    if (json_array_size(r->custom->columns) > 0)
        return r->custom->columns;
    *owned = json_loads(default_custom_columns, 0, NULL);
    SK_CHECK_ALLOC(*owned);
    return *owned;
}

/* The value at a simple JSON path (".spec.size", ".status.conditions[0].type"),
 * or NULL: what the CRD's columns may name (validated as simple paths);
 * filters and wildcards find nothing here. */
static const json_t *json_path(const json_t *o, const char *path)
{
    const json_t *v = o;
    const char *p = path;
    while (v && *p) {
        if (*p == '.') {
            p++;
            size_t n = strcspn(p, ".[");
            char key[128];
            if (n == 0 || n >= sizeof key)
                return NULL;
            memcpy(key, p, n);
            key[n] = '\0';
            v = json_object_get(v, key);
            p += n;
        } else if (*p == '[') {
            char *end;
            long i = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end != ']')
                return NULL;
            v = json_array_get(v, (size_t)i);
            p = end + 1;
        } else {
            return NULL;
        }
    }
    return v;
}

/* cellForJSONValue, with the string columns printed as jsonpath prints them. */
static json_t *custom_cell(const char *type, const json_t *v, int64_t now_s)
{
    if (!v || json_is_null(v))
        return json_null();
    if (!strcmp(type, "string")) {
        if (json_is_string(v))
            return json_string(json_string_value(v));
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        SK_CHECK_ALLOC(text);
        json_t *c = json_string(text);
        free(text);
        return c;
    }
    if (!strcmp(type, "integer") && json_is_number(v))
        return json_integer((json_int_t)json_number_value(v));
    if (!strcmp(type, "number") && json_is_number(v))
        return json_real(json_number_value(v));
    if (!strcmp(type, "boolean") && json_is_boolean(v))
        return json_boolean(json_is_true(v));
    if (!strcmp(type, "date") && json_is_string(v)) {
        int64_t t = when(json_string_value(v));
        return t < 0 ? json_string("<invalid>") : ago_cell("", t, "", now_s);
    }
    return json_null();
}

/* ---- the Table ---- */

json_t *sk_table_columns(const sk_resource *r)
{
    if (r->custom) {
        json_t *defs = json_pack("[{s:s, s:s, s:s, s:s, s:i}]", "name", "Name", "type", "string",
                                 "format", "name", "description",
                                 "The object's name, unique within its namespace.", "priority", 0);
        json_t *owned;
        const json_t *cols = custom_columns(r, &owned);
        size_t i;
        const json_t *c;
        json_array_foreach(cols, i, c)
        {
            const char *desc = json_string_value(json_object_get(c, "description"));
            json_t *d = json_pack("{s:s, s:s, s:s, s:s, s:I}", "name", str_at(c, "name"), "type",
                                  str_at(c, "type"), "format", str_at(c, "format"), "description",
                                  "", "priority", int_at(c, "priority"));
            SK_CHECK_ALLOC(d);
            if (desc && *desc)
                json_object_set_new(d, "description", json_string(desc));
            else
                json_object_set_new(d, "description",
                                    json_sprintf("Custom resource definition column (in JSONPath "
                                                 "format): %s",
                                                 str_at(c, "jsonPath")));
            json_array_append_new(defs, d);
        }
        json_decref(owned);
        return defs;
    }
    const table_kind *k = kind_of(r);
    json_t *defs = json_array();
    for (size_t i = 0; i < k->n_cols; i++) {
        const table_column *c = &k->cols[i];
        json_array_append_new(defs, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", c->name, "type",
                                              c->type, "format", c->format, "description",
                                              c->description, "priority", c->priority));
    }
    return defs;
}

json_t *sk_table_cells(const sk_resource *r, const json_t *stored, int64_t now_s)
{
    if (r->custom) {
        json_t *cells = json_array();
        SK_CHECK_ALLOC(cells);
        add_str(cells, str_at(stored, "metadata.name"));
        json_t *owned;
        const json_t *cols = custom_columns(r, &owned);
        size_t i;
        const json_t *c;
        json_array_foreach(cols, i, c) json_array_append_new(
            cells, custom_cell(str_at(c, "type"), json_path(stored, str_at(c, "jsonPath")), now_s));
        json_decref(owned);
        return cells;
    }
    const table_kind *k = kind_of(r);
    json_t *cells = json_array();
    k->cells(stored, now_s, cells);
    /* a cell function must fill every column: a short row would shift kubectl's output */
    SK_CHECK(json_array_size(cells) == k->n_cols);
    return cells;
}

void sk_table_begin(sk_buf *b, const sk_resource *r, const char *list_meta)
{
    json_t *defs = sk_table_columns(r);
    char *text = json_dumps(defs, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    sk_buf_printf(b,
                  "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":%s,"
                  "\"columnDefinitions\":%s,\"rows\":[",
                  list_meta, text);
    free(text);
    json_decref(defs);
}

/* A finished pod's row carries a Completed condition, as kube's does. */
static json_t *row_conditions(const table_kind *k, const json_t *o)
{
    const char *phase = str_at(o, "status.phase");
    int ok = !strcmp(phase, "Succeeded");
    if (k->cells != cells_pod || (!ok && strcmp(phase, "Failed") != 0))
        return NULL;
    return json_pack("[{s:s, s:s, s:s, s:s}]", "type", "Completed", "status", "True", "reason",
                     phase, "message",
                     ok ? "The pod has completed successfully." : "The pod failed.");
}

/* Appends a cell of a template: a hole as its string with the hole's
 * bytes, anything else as JSON. */
static void template_cell(sk_buf *out, const json_t *c)
{
    json_t *t = json_is_object(c) ? json_object_get(c, "t") : NULL;
    const json_t *parts[] = {t ? json_object_get(c, "p") : c, t ? json_object_get(c, "s") : NULL};
    for (int i = 0; i < 2 && parts[i]; i++) {
        char *text = json_dumps(parts[i], JSON_COMPACT | JSON_ENCODE_ANY);
        SK_CHECK_ALLOC(text);
        size_t n = strlen(text);
        if (!t) {
            sk_buf_append(out, text, n);
        } else if (i == 0) { /* "prefix, without its closing quote */
            sk_buf_append(out, text, n - 1);
            int64_t when_s = json_integer_value(t);
            sk_buf_putc(out, HOLE);
            sk_buf_append(out, (const char *)&when_s, sizeof when_s);
        } else { /* suffix", without its opening quote */
            sk_buf_append(out, text + 1, n - 1);
        }
        free(text);
    }
}

void sk_table_row_template(sk_buf *out, const sk_resource *r, const json_t *stored)
{
    json_t *cells = sk_table_cells(r, stored, DEFER);
    sk_buf_puts(out, "{\"cells\":[");
    size_t i;
    const json_t *c;
    json_array_foreach(cells, i, c)
    {
        if (i)
            sk_buf_putc(out, ',');
        template_cell(out, c);
    }
    sk_buf_putc(out, ']');
    json_decref(cells);
    json_t *conds = row_conditions(kind_of(r), stored);
    if (conds) {
        char *text = json_dumps(conds, JSON_COMPACT);
        SK_CHECK_ALLOC(text);
        sk_buf_printf(out, ",\"conditions\":%s", text);
        free(text);
        json_decref(conds);
    }
}

void sk_table_row_fill(sk_buf *b, const char *tmpl, size_t len, int64_t now_s)
{
    const char *p = tmpl, *end = tmpl + len;
    const char *h;
    while ((h = memchr(p, HOLE, (size_t)(end - p)))) {
        int64_t t;
        SK_CHECK((size_t)(end - h) > sizeof t);
        memcpy(&t, h + 1, sizeof t);
        char out[32];
        sk_table_human_duration(now_s - t, out, sizeof out);
        sk_buf_append(b, p, (size_t)(h - p));
        sk_buf_puts(b, out);
        p = h + 1 + sizeof t;
    }
    sk_buf_append(b, p, (size_t)(end - p));
}

int sk_table_row_kept(const sk_resource *r)
{
    return r->custom == NULL;
}

void sk_table_row_object(sk_buf *b, const sk_resource *r, const json_t *stored)
{
    json_t *obj = sk_convert_from_stored(r, stored);
    char *text = json_dumps(obj, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    sk_buf_printf(b, ",\"object\":%s", text);
    free(text);
    json_decref(obj);
}

void sk_table_row(sk_buf *b, const sk_resource *r, json_t *stored, sk_include_object include,
                  int64_t now_s)
{
    sk_buf tmpl = SK_BUF_INIT;
    sk_table_row_template(&tmpl, r, stored);
    sk_table_row_fill(b, tmpl.data, tmpl.len, now_s);
    sk_buf_free(&tmpl);
    if (include == SK_INCLUDE_OBJECT) {
        sk_table_row_object(b, r, stored);
    } else if (include == SK_INCLUDE_METADATA) {
        sk_buf_puts(b, ",\"object\":");
        sk_partial_append(b, stored, "v1");
    }
    sk_buf_putc(b, '}');
}

void sk_table_single_begin(sk_buf *b, const sk_resource *r, int64_t rev)
{
    char meta[48];
    snprintf(meta, sizeof meta, "{\"resourceVersion\":\"%lld\"}", (long long)rev);
    sk_table_begin(b, r, meta);
}

void sk_table_single(sk_buf *b, const sk_resource *r, json_t *stored, sk_include_object include,
                     int64_t rev, int64_t now_s)
{
    sk_table_single_begin(b, r, rev);
    sk_table_row(b, r, stored, include, now_s);
    sk_buf_puts(b, "]}");
}
