/*
 * alloc.c - see alloc.h. The rules follow kube-apiserver 1.32's service
 * storage (alloc.go, strategy.go) on a single-stack IPv4 cluster:
 *
 *   - ExternalName Services get no cluster IP; a headless one
 *     (clusterIP "None") gets none either; every other type gets one: the
 *     client's (reserved if in range and free) or a random one. clusterIPs
 *     is [clusterIP]. IP family fields are defaulted as initIPFamilyFields
 *     does (SingleStack/[IPv4]; headless without selector: RequireDualStack
 *     and both families, which a single-stack cluster still reports).
 *   - NodePort and LoadBalancer Services (unless a LoadBalancer says
 *     allocateLoadBalancerNodePorts: false) get a node port per port; on
 *     create, ports sharing a port number share a node port. A LoadBalancer
 *     with externalTrafficPolicy Local gets a healthCheckNodePort.
 *   - Values an update leaves unchanged are not checked against the range
 *     again (a range may have changed since).
 *
 * The plan lists each value with whether the client asked for it, so a
 * refusal by the store can be told apart: the client's value is a 422, a
 * random one is picked again.
 */
#include "api/alloc.h"
#include "core/buf.h"
#include "core/util.h"
#include "kube/svcrange.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* Rounds of picks for one write before giving up. The first picks are
 * blind (a random value, nearly always free); once SCAN_ROUND of them were
 * refused the range is crowded, and picks come from a scan of what the store
 * says is owned (the static band too, and "range is full" when it is). */
#define MAX_PICK_ROUNDS 16
#define SCAN_ROUND 3

enum { ITEM_IP, ITEM_PORT, ITEM_HC };

typedef struct item {
    int what;
    int is_explicit; /* the client asked for this value */
    int index;       /* ITEM_PORT: the (first) port that uses it */
    uint32_t value;
    char text[SK_SVCRANGE_TEXT_MAX];
} item;

struct sk_alloc_plan {
    const char *name;         /* the Service's, for messages */
    const char *ips_rendered; /* spec.clusterIPs as Go's %#v shows it */
    int n;
    item *items;
    sk_claim *claims; /* claims[i] is items[i]'s */
    int rounds;       /* rounds of random picks after refusals */
};

/* ---- the Service's fields ------------------------------------------------ */

static int is_service(const sk_resource *r)
{
    return strcmp(r->storage, "services") == 0;
}

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static const char *svc_type(const json_t *spec)
{
    const char *t = str_of(spec, "type");
    return t && *t ? t : "ClusterIP";
}

/* clusterIP, else clusterIPs[0], else "". */
static const char *first_ip(const json_t *spec)
{
    const char *ip = str_of(spec, "clusterIP");
    if (ip && *ip)
        return ip;
    ip = json_string_value(json_array_get(json_object_get(spec, "clusterIPs"), 0));
    return ip ? ip : "";
}

static int needs_cluster_ip(const json_t *spec)
{
    return strcmp(svc_type(spec), "ExternalName") != 0 && strcmp(first_ip(spec), "None") != 0;
}

static int needs_node_port(const json_t *spec)
{
    const char *t = svc_type(spec);
    return strcmp(t, "NodePort") == 0 || strcmp(t, "LoadBalancer") == 0;
}

static int needs_hc_node_port(const json_t *spec)
{
    const char *p = str_of(spec, "externalTrafficPolicy");
    return strcmp(svc_type(spec), "LoadBalancer") == 0 && p && strcmp(p, "Local") == 0;
}

static json_int_t int_of(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : 0;
}

static int has_ips(const json_t *spec)
{
    return json_array_size(json_object_get(spec, "clusterIPs")) > 0;
}

static int same_field(const json_t *a, const json_t *b, const char *key)
{
    const json_t *x = json_object_get(a, key), *y = json_object_get(b, key);
    return (!x && !y) || (x && y && json_equal(x, y));
}

/* Whether the nodePorts of the two port lists are the same, in order. */
static int same_node_ports(const json_t *spec, const json_t *ospec)
{
    const json_t *ports = json_object_get(spec, "ports"), *oports = json_object_get(ospec, "ports");
    if (json_array_size(ports) != json_array_size(oports))
        return 0;
    for (size_t i = 0; i < json_array_size(ports); i++)
        if (int_of(json_array_get(ports, i), "nodePort") !=
            int_of(json_array_get(oports, i), "nodePort"))
            return 0;
    return 1;
}

static int port_list_has(const json_t *ports, json_int_t np)
{
    for (size_t i = 0; np && i < json_array_size(ports); i++)
        if (int_of(json_array_get(ports, i), "nodePort") == np)
            return 1;
    return 0;
}

/* clusterIPs of both specs hold the same addresses (absent is empty). */
static int same_ips(const json_t *spec, const json_t *ospec)
{
    const json_t *a = json_object_get(spec, "clusterIPs"),
                 *b = json_object_get(ospec, "clusterIPs");
    return json_array_size(a) == json_array_size(b) && (!json_array_size(a) || json_equal(a, b));
}

/* kube's normalizeClusterIPs on an update: clusterIPs follow what a client
 * that only knows clusterIP did to it (left clusterIPs out, cleared or
 * changed clusterIP), so validation judges the change. */
static void normalize_cluster_ips(json_t *spec, const json_t *ospec)
{
    const char *ip = str_of(spec, "clusterIP") ? str_of(spec, "clusterIP") : "";
    const char *old_ip = str_of(ospec, "clusterIP") ? str_of(ospec, "clusterIP") : "";
    if (has_ips(ospec) && !has_ips(spec) && strcmp(ip, old_ip) == 0)
        json_object_set_new(spec, "clusterIPs",
                            json_deep_copy(json_object_get(ospec, "clusterIPs")));
    if (strcmp(ip, old_ip) == 0 || !same_ips(spec, ospec))
        return;
    if (*old_ip && !*ip)
        json_object_del(spec, "clusterIPs");
    else
        json_object_set_new(spec, "clusterIPs", json_pack("[s]", ip));
}

void sk_alloc_carry_over(const sk_resource *r, json_t *obj, const json_t *old)
{
    json_t *spec = json_object_get(obj, "spec");
    const json_t *ospec = json_object_get(old, "spec");
    if (!is_service(r) || !json_is_object(spec) || !json_is_object(ospec))
        return;
    /* Keep what was allocated if the new version still needs it. */
    if (needs_cluster_ip(ospec) && needs_cluster_ip(spec)) {
        const char *ip = str_of(spec, "clusterIP");
        if ((!ip || !*ip) && str_of(ospec, "clusterIP"))
            json_object_set(spec, "clusterIP", json_object_get(ospec, "clusterIP"));
        if (!has_ips(spec) && has_ips(ospec))
            json_object_set_new(spec, "clusterIPs",
                                json_deep_copy(json_object_get(ospec, "clusterIPs")));
    }
    json_t *ports = json_object_get(spec, "ports");
    const json_t *oports = json_object_get(ospec, "ports");
    if (needs_node_port(ospec) && needs_node_port(spec)) {
        for (size_t i = 0; i < json_array_size(ports); i++) {
            json_t *p = json_array_get(ports, i);
            if (int_of(p, "nodePort") != 0)
                continue;
            const char *name = str_of(p, "name") ? str_of(p, "name") : "";
            for (size_t j = 0; j < json_array_size(oports); j++) {
                const json_t *op = json_array_get(oports, j);
                const char *oname = str_of(op, "name") ? str_of(op, "name") : "";
                json_int_t np = int_of(op, "nodePort");
                /* A value the new version already uses elsewhere stays there. */
                if (strcmp(name, oname) == 0 && np && !port_list_has(ports, np)) {
                    json_object_set_new(p, "nodePort", json_integer(np));
                    break;
                }
            }
        }
    }
    if (needs_hc_node_port(ospec) && needs_hc_node_port(spec) &&
        int_of(spec, "healthCheckNodePort") == 0 && int_of(ospec, "healthCheckNodePort") != 0)
        json_object_set(spec, "healthCheckNodePort", json_object_get(ospec, "healthCheckNodePort"));
    normalize_cluster_ips(spec, ospec);
    /* Drop what the new type does not use, if the client left it as it was. */
    if (needs_cluster_ip(ospec) && !needs_cluster_ip(spec)) {
        if (same_field(spec, ospec, "clusterIP") && same_field(spec, ospec, "clusterIPs")) {
            json_object_del(spec, "clusterIP");
            json_object_del(spec, "clusterIPs");
        }
        if (same_field(spec, ospec, "ipFamilies"))
            json_object_del(spec, "ipFamilies");
        if (same_field(spec, ospec, "ipFamilyPolicy"))
            json_object_del(spec, "ipFamilyPolicy");
    }
    if (needs_node_port(ospec) && !needs_node_port(spec) && same_node_ports(spec, ospec))
        for (size_t i = 0; i < json_array_size(ports); i++)
            json_object_del(json_array_get(ports, i), "nodePort");
    if (needs_hc_node_port(ospec) && !needs_hc_node_port(spec) &&
        same_field(spec, ospec, "healthCheckNodePort"))
        json_object_del(spec, "healthCheckNodePort");
}

/* ---- replies ------------------------------------------------------------- */

/* s as a Go quoted string (enough for IPs and names: quotes and
 * backslashes escaped). */
static void go_quote(sk_buf *b, const char *s)
{
    sk_buf_putc(b, '"');
    for (const char *p = s ? s : ""; *p; p++) {
        if (*p == '"' || *p == '\\')
            sk_buf_putc(b, '\\');
        sk_buf_putc(b, *p);
    }
    sk_buf_putc(b, '"');
}

/* Go's %#v of a []string: []string{"a", "b"}, or []string(nil); or with
 * arr NULL and one non-NULL, that one string quoted. In the arena. */
static const char *render(sk_api_call *call, const json_t *arr, const char *one)
{
    sk_buf b = SK_BUF_INIT;
    if (one) {
        go_quote(&b, one);
    } else if (!json_is_array(arr)) {
        sk_buf_puts(&b, "[]string(nil)");
    } else {
        sk_buf_puts(&b, "[]string{");
        for (size_t i = 0; i < json_array_size(arr); i++) {
            if (i)
                sk_buf_puts(&b, ", ");
            go_quote(&b, json_string_value(json_array_get(arr, i)));
        }
        sk_buf_putc(&b, '}');
    }
    const char *out = sk_arena_strdup(call->arena, b.data);
    sk_buf_free(&b);
    return out;
}

/* kube's 422 for one field.Invalid of a Service: value is already rendered. */
static void reply_invalid(sk_api_call *call, const char *name, const char *field, const char *value,
                          const char *detail)
{
    sk_call_reply_invalid(call, "", "Service", name, field, value, detail);
}

/* The refusal of an explicit value the store found taken, as kube words it. */
static void reply_taken(sk_api_call *call, const sk_alloc_plan *plan, const item *it)
{
    char field[64], value[24];
    switch (it->what) {
    case ITEM_IP:
        reply_invalid(call, plan->name, "spec.clusterIPs", plan->ips_rendered,
                      sk_arena_printf(call->arena,
                                      "failed to allocate IP %s: provided IP is already allocated",
                                      it->text));
        break;
    case ITEM_PORT:
        snprintf(field, sizeof field, "spec.ports[%d].nodePort", it->index);
        snprintf(value, sizeof value, "%" PRIu32, it->value);
        reply_invalid(call, plan->name, field, value, "provided port is already allocated");
        break;
    default:
        sk_call_reply_errorf(call, SK_ERR_INTERNAL,
                             "Internal error occurred: failed to allocate requested HealthCheck "
                             "NodePort %" PRIu32 ": provided port is already allocated",
                             it->value);
        break;
    }
}

/* ---- picking ------------------------------------------------------------- */

static uint64_t random64(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) /* never short for 8 bytes */
        r = (uint64_t)sk_now_ms() * 6364136223846793005ull + (uintptr_t)&r;
    return r;
}

/* Whether another item of the plan already holds value in the same space. */
static int planned(const sk_alloc_plan *plan, const item *it, uint32_t value)
{
    for (int i = 0; i < plan->n; i++) {
        const item *o = &plan->items[i];
        if (o != it && (o->what == ITEM_IP) == (it->what == ITEM_IP) && o->value == value)
            return 1;
    }
    return 0;
}

static const sk_svcrange *range_of(sk_api_call *call, const item *it)
{
    return it->what == ITEM_IP ? &call->api->service_ips : &call->api->node_ports;
}

/* Gives it (a random item) a value no other item of the plan holds. */
static void pick(sk_api_call *call, sk_alloc_plan *plan, item *it)
{
    const sk_svcrange *r = range_of(call, it);
    uint32_t v = 0;
    for (int tries = 0; tries < 64; tries++) {
        v = sk_svcrange_pick(r, random64());
        if (!planned(plan, it, v))
            break;
    }
    it->value = v;
    sk_svcrange_format(r, v, it->text);
}

typedef struct used_map {
    const sk_svcrange *r;
    unsigned char *bits;
} used_map;

static void mark_used(used_map *u, uint32_t value)
{
    uint32_t off;
    if (sk_svcrange_contains(u->r, value, &off))
        u->bits[off / 8] |= (unsigned char)(1u << (off % 8));
}

static int mark_claim(void *arg, const char *text)
{
    used_map *u = arg;
    uint32_t v;
    if (sk_svcrange_value(u->r, text, &v) == 0)
        mark_used(u, v);
    return 0;
}

/* Gives it (a random item) a value that is free by the store's claims now
 * and held by no other item of the plan. SK_ERR_INVALID if none is left. */
static sk_err scan(sk_api_call *call, sk_alloc_plan *plan, item *it)
{
    used_map u = {range_of(call, it), NULL};
    u.bits = sk_arena_alloc(call->arena, u.r->size / 8 + 1);
    sk_err err = sk_store_claims(
        call->api->store, it->what == ITEM_IP ? SK_SVCRANGE_CLAIM_IP : SK_SVCRANGE_CLAIM_PORT,
        mark_claim, &u);
    if (err != SK_OK)
        return err;
    for (int i = 0; i < plan->n; i++)
        if (&plan->items[i] != it && (plan->items[i].what == ITEM_IP) == (it->what == ITEM_IP))
            mark_used(&u, plan->items[i].value);
    uint32_t v;
    if (sk_svcrange_scan(u.r, u.bits, random64(), &v) < 0)
        return SK_ERR_INVALID;
    it->value = v;
    sk_svcrange_format(u.r, v, it->text);
    return SK_OK;
}

static void reply_full(sk_api_call *call, const item *it)
{
    sk_call_reply_errorf(call, SK_ERR_INTERNAL,
                         "Internal error occurred: failed to allocate a %s: range is full",
                         it->what == ITEM_IP ? "serviceIP" : "nodePort");
}

/* A value for a random item: blind in the first rounds, then by a scan.
 * -1 after replying. */
static int choose(sk_api_call *call, sk_alloc_plan *plan, item *it)
{
    if (plan->rounds < SCAN_ROUND) {
        pick(call, plan, it);
        return 0;
    }
    sk_err err = scan(call, plan, it);
    if (err == SK_ERR_INVALID)
        reply_full(call, it);
    else if (err != SK_OK)
        sk_call_reply_store_error(call, err, plan->name);
    return err == SK_OK ? 0 : -1;
}

static item *add_item(sk_alloc_plan *plan, int what, int is_explicit, int index)
{
    item *it = &plan->items[plan->n++];
    it->what = what;
    it->is_explicit = is_explicit;
    it->index = index;
    return it;
}

/* ---- the plan ------------------------------------------------------------- */

/* initIPFamilyFields on a single-stack IPv4 cluster. -1 after replying. */
static int settle_families(sk_api_call *call, const char *name, json_t *spec, const json_t *ospec)
{
    if (strcmp(svc_type(spec), "ExternalName") == 0)
        return 0;
    const char *policy = str_of(spec, "ipFamilyPolicy");
    const json_t *selector = json_object_get(spec, "selector");
    int headless_selectorless =
        strcmp(first_ip(spec), "None") == 0 && json_object_size(selector) == 0;
    if (!policy) {
        const char *old = str_of(ospec, "ipFamilyPolicy");
        policy = old ? old : headless_selectorless ? "RequireDualStack" : "SingleStack";
        json_object_set_new(spec, "ipFamilyPolicy", json_string(policy));
    }
    json_t *families = json_object_get(spec, "ipFamilies");
    if (!json_is_array(families) || json_array_size(families) == 0) {
        families = json_pack("[s]", "IPv4");
        json_object_set_new(spec, "ipFamilies", families);
    }
    if (headless_selectorless) {
        /* Allowed both families even here; the policy decides. */
        if (json_array_size(families) < 2 && strcmp(policy, "SingleStack") != 0) {
            const char *f = json_string_value(json_array_get(families, 0));
            json_array_append_new(families,
                                  json_string(f && strcmp(f, "IPv6") == 0 ? "IPv4" : "IPv6"));
        }
        return 0;
    }
    if (strcmp(policy, "RequireDualStack") == 0) {
        reply_invalid(call, name, "spec.ipFamilyPolicy", "\"RequireDualStack\"",
                      "this cluster is not configured for dual-stack services");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(families); i++) {
        const char *f = json_string_value(json_array_get(families, i));
        if (!f || strcmp(f, "IPv4") != 0) {
            char field[48];
            snprintf(field, sizeof field, "spec.ipFamilies[%zu]", i);
            reply_invalid(call, name, field, render(call, NULL, f ? f : ""),
                          "not configured on this cluster");
            return -1;
        }
    }
    return 0;
}

/* The cluster IP item, if the Service needs one. -1 after replying. */
static int plan_ip(sk_api_call *call, sk_alloc_plan *plan, json_t *spec, const json_t *ospec)
{
    const char *ip = first_ip(spec);
    if (*ip && !has_ips(spec)) /* NormalizeClusterIPs */
        json_object_set_new(spec, "clusterIPs", json_pack("[s]", ip));
    if (*ip && !str_of(spec, "clusterIP"))
        json_object_set_new(spec, "clusterIP", json_string(ip));
    if (!needs_cluster_ip(spec))
        return 0;
    plan->ips_rendered = render(call, json_object_get(spec, "clusterIPs"), NULL);
    const sk_svcrange *r = &call->api->service_ips;
    item *it = add_item(plan, ITEM_IP, *ip != 0, 0);
    if (!*ip) {
        if (choose(call, plan, it) < 0)
            return -1;
        json_object_set_new(spec, "clusterIP", json_string(it->text));
        json_object_set_new(spec, "clusterIPs", json_pack("[s]", it->text));
        return 0;
    }
    uint32_t offset;
    int unchanged = ospec && needs_cluster_ip(ospec) && strcmp(first_ip(ospec), ip) == 0;
    if (sk_svcrange_value(r, ip, &it->value) < 0) {
        if (!unchanged) {
            reply_invalid(call, plan->name, "spec.clusterIPs[0]", render(call, NULL, ip),
                          "must be a valid IP address");
            return -1;
        }
        snprintf(it->text, sizeof it->text, "%.*s", (int)sizeof it->text - 1, ip);
        return 0;
    }
    sk_svcrange_format(r, it->value, it->text);
    if (!unchanged && !sk_svcrange_contains(r, it->value, &offset)) {
        reply_invalid(call, plan->name, "spec.clusterIPs", plan->ips_rendered,
                      sk_arena_printf(call->arena,
                                      "failed to allocate IP %s: the provided IP (%s) is not in "
                                      "the valid range. The range of valid IPs is %s",
                                      ip, it->text, r->spec));
        return -1;
    }
    return 0;
}

/* An explicit node port: refused outside the range unless the old version
 * had it. -1 after replying. */
static int explicit_port(sk_api_call *call, sk_alloc_plan *plan, int what, int index, json_int_t np,
                         const json_t *ospec)
{
    const sk_svcrange *r = &call->api->node_ports;
    uint32_t offset;
    int had = ospec && (what == ITEM_HC ? int_of(ospec, "healthCheckNodePort") == np
                                        : port_list_has(json_object_get(ospec, "ports"), np));
    if (!had && (np < 1 || np > 65535 || !sk_svcrange_contains(r, (uint32_t)np, &offset))) {
        if (what == ITEM_HC) {
            sk_call_reply_errorf(call, SK_ERR_INTERNAL,
                                 "Internal error occurred: failed to allocate requested "
                                 "HealthCheck NodePort %" JSON_INTEGER_FORMAT
                                 ": provided port is not in the valid range. The range of valid "
                                 "ports is %s",
                                 np, r->spec);
        } else {
            char field[64], value[32];
            snprintf(field, sizeof field, "spec.ports[%d].nodePort", index);
            snprintf(value, sizeof value, "%" JSON_INTEGER_FORMAT, np);
            reply_invalid(call, plan->name, field, value,
                          sk_arena_printf(call->arena,
                                          "provided port is not in the valid range. The range "
                                          "of valid ports is %s",
                                          r->spec));
        }
        return -1;
    }
    item *it = add_item(plan, what, 1, index);
    it->value = (uint32_t)np;
    sk_svcrange_format(r, it->value, it->text);
    return 0;
}

/* Node port items (initNodePorts / updateNodePorts). -1 after replying. */
static int plan_ports(sk_api_call *call, sk_alloc_plan *plan, json_t *spec, const json_t *ospec)
{
    json_t *ports = json_object_get(spec, "ports");
    if (needs_node_port(spec)) {
        json_t *alloc_lb = json_object_get(spec, "allocateLoadBalancerNodePorts");
        int allocate = strcmp(svc_type(spec), "NodePort") == 0 || !json_is_false(alloc_lb);
        for (size_t i = 0; i < json_array_size(ports); i++) {
            json_t *p = json_array_get(ports, i);
            json_int_t np = int_of(p, "nodePort"), port = int_of(p, "port");
            if (np == 0 && !allocate)
                continue;
            /* On create, ports with one port number share one node port. */
            json_int_t shared = 0;
            for (size_t j = 0; !ospec && j < i && !shared; j++)
                if (int_of(json_array_get(ports, j), "port") == port)
                    shared = int_of(json_array_get(ports, j), "nodePort");
            for (size_t j = i + 1; !ospec && !shared && np == 0 && j < json_array_size(ports); j++)
                if (int_of(json_array_get(ports, j), "port") == port)
                    np = int_of(json_array_get(ports, j), "nodePort");
            if (shared && (np == 0 || np == shared)) {
                json_object_set_new(p, "nodePort", json_integer(shared));
                continue;
            }
            if (np != 0) {
                if (explicit_port(call, plan, ITEM_PORT, (int)i, np, ospec) < 0)
                    return -1;
                json_object_set_new(p, "nodePort", json_integer(np));
                continue;
            }
            item *it = add_item(plan, ITEM_PORT, 0, (int)i);
            if (choose(call, plan, it) < 0)
                return -1;
            json_object_set_new(p, "nodePort", json_integer(it->value));
        }
    }
    if (needs_hc_node_port(spec)) {
        json_int_t hc = int_of(spec, "healthCheckNodePort");
        if (hc != 0)
            return explicit_port(call, plan, ITEM_HC, 0, hc, ospec);
        item *it = add_item(plan, ITEM_HC, 0, 0);
        if (choose(call, plan, it) < 0)
            return -1;
        json_object_set_new(spec, "healthCheckNodePort", json_integer(it->value));
    }
    return 0;
}

int sk_alloc_plan_new(sk_api_call *call, json_t *obj, const json_t *old,
                      const sk_alloc_plan *previous, sk_alloc_plan **plan_out)
{
    *plan_out = NULL;
    if (!is_service(call->res))
        return 0;
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(obj, "spec", spec);
    }
    const json_t *ospec = old ? json_object_get(old, "spec") : NULL;
    if (ospec && !json_is_object(ospec))
        ospec = NULL;
    sk_alloc_plan *plan = sk_arena_alloc(call->arena, sizeof *plan);
    const char *name = str_of(json_object_get(obj, "metadata"), "name");
    plan->name = sk_arena_strdup(call->arena, name ? name : "");
    plan->ips_rendered = "[]string(nil)";
    plan->rounds = previous ? previous->rounds : 0;
    size_t cap = json_array_size(json_object_get(spec, "ports")) + 2;
    plan->items = sk_arena_alloc(call->arena, cap * sizeof *plan->items);
    if (settle_families(call, plan->name, spec, ospec) < 0 ||
        plan_ip(call, plan, spec, ospec) < 0 || plan_ports(call, plan, spec, ospec) < 0)
        return -1;
    plan->claims =
        sk_arena_alloc(call->arena, (size_t)(plan->n ? plan->n : 1) * sizeof *plan->claims);
    for (int i = 0; i < plan->n; i++) {
        plan->claims[i].kind =
            plan->items[i].what == ITEM_IP ? SK_SVCRANGE_CLAIM_IP : SK_SVCRANGE_CLAIM_PORT;
        plan->claims[i].value = plan->items[i].text;
    }
    *plan_out = plan;
    return 0;
}

void sk_alloc_attach(sk_alloc_plan *plan, sk_write *w)
{
    if (!plan)
        return;
    for (int i = 0; i < plan->n; i++)
        plan->claims[i].taken = 0;
    w->set_claims = 1;
    w->claims = plan->claims;
    w->n_claims = plan->n;
}

/* Sets it's value (picked again) in obj. */
static void set_value(item *it, uint32_t was, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    if (it->what == ITEM_IP) {
        json_object_set_new(spec, "clusterIP", json_string(it->text));
        json_object_set_new(spec, "clusterIPs", json_pack("[s]", it->text));
    } else if (it->what == ITEM_HC) {
        json_object_set_new(spec, "healthCheckNodePort", json_integer(it->value));
    } else {
        json_t *ports = json_object_get(spec, "ports");
        for (size_t i = 0; i < json_array_size(ports); i++) /* the ports sharing it */
            if (int_of(json_array_get(ports, i), "nodePort") == (json_int_t)was)
                json_object_set_new(json_array_get(ports, i), "nodePort", json_integer(it->value));
    }
}

int sk_alloc_after_conflict(sk_api_call *call, sk_alloc_plan *plan, json_t *obj)
{
    if (!plan)
        return 0;
    const item *taken = NULL;
    for (int i = 0; i < plan->n; i++) {
        if (!plan->claims[i].taken)
            continue;
        if (plan->items[i].is_explicit) {
            reply_taken(call, plan, &plan->items[i]);
            return -1;
        }
        taken = &plan->items[i];
    }
    if (!taken)
        return 0;
    if (++plan->rounds >= MAX_PICK_ROUNDS) {
        reply_full(call, taken);
        return -1;
    }
    for (int i = 0; obj && i < plan->n; i++) {
        item *it = &plan->items[i];
        if (!plan->claims[i].taken)
            continue;
        uint32_t was = it->value;
        if (choose(call, plan, it) < 0)
            return -1;
        set_value(it, was, obj);
    }
    return 1;
}
