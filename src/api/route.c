/*
 * route.c - see route.h. Paths are matched segment by segment; an empty
 * segment ("/api//v1") matches nothing, so every later lookup sees a real
 * name. Only GET is allowed on the fixed endpoints; on resource paths the
 * method picks the verb as kube-apiserver's installer does.
 */
#include "api/route.h"

#include <stdio.h>
#include <string.h>

static int is(const char *seg, const char *word)
{
    return strcmp(seg, word) == 0;
}

static void fixed(sk_route *out, const char *method, sk_route_kind kind)
{
    out->kind = is(method, "GET") ? kind : SK_ROUTE_NOT_ALLOWED;
}

/* The verb of method on a collection (name NULL) or an item. */
static void resource_verb(sk_route *out, const char *method, int watch)
{
    sk_route_kind kind = SK_ROUTE_RESOURCE;
    if (out->name) {
        if (is(method, "GET"))
            out->verb = watch ? SK_REQ_WATCH : SK_REQ_GET;
        else if (is(method, "PUT"))
            out->verb = SK_REQ_UPDATE;
        else if (is(method, "PATCH"))
            out->verb = SK_REQ_PATCH;
        else if (is(method, "DELETE"))
            out->verb = SK_REQ_DELETE;
        else
            kind = SK_ROUTE_NOT_ALLOWED;
    } else if (is(method, "GET")) {
        out->verb = watch ? SK_REQ_WATCH : SK_REQ_LIST;
    } else if (out->all_namespaces) {
        kind = SK_ROUTE_NOT_ALLOWED;
    } else if (is(method, "POST")) {
        out->verb = SK_REQ_CREATE;
    } else if (is(method, "DELETE") && !is(out->res->resource, "namespaces")) {
        out->verb = SK_REQ_DELETECOLLECTION;
    } else {
        kind = SK_ROUTE_NOT_ALLOWED;
    }
    out->kind = kind;
}

/* The verb of method on a subresource of an item, allowed if the
 * subresource lists it (connect subresources like proxy list several). */
static void subresource_verb(sk_route *out, const char *method)
{
    static const struct {
        const char *method;
        sk_req_verb verb;
        unsigned bit;
    } map[] = {
        {"GET", SK_REQ_GET, SK_VERB_GET},          {"PUT", SK_REQ_UPDATE, SK_VERB_UPDATE},
        {"PATCH", SK_REQ_PATCH, SK_VERB_PATCH},    {"POST", SK_REQ_CREATE, SK_VERB_CREATE},
        {"DELETE", SK_REQ_DELETE, SK_VERB_DELETE},
    };
    out->kind = SK_ROUTE_NOT_ALLOWED;
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (is(method, map[i].method) && (out->sub->verbs & map[i].bit)) {
            out->verb = map[i].verb;
            out->kind = SK_ROUTE_RESOURCE;
        }
}

/* segs: what follows /api/v1 or /apis/{group}/{version}. */
static void resolve_resource(sk_route *out, const char *method, const char *group,
                             const char *version, const char *const *segs, size_t n, int watch)
{
    out->ns = "";
    if (n >= 3 && is(segs[0], "namespaces")) {
        out->ns = segs[1];
        segs += 2;
        n -= 2;
        out->res = sk_registry_find(group, version, segs[0]);
        if (n == 1 && !out->res) {
            /* /namespaces/{name}/status, /finalize: a namespace's subresource */
            out->ns = "";
            out->res = sk_registry_find(group, version, "namespaces");
            out->sub = out->res ? sk_registry_subresource(out->res, segs[0]) : NULL;
            out->name = segs[-1];
            if (out->sub)
                subresource_verb(out, method);
            return;
        }
        if (!out->res || !out->res->namespaced)
            return;
    } else {
        out->res = sk_registry_find(group, version, segs[0]);
        if (!out->res)
            return;
        if (out->res->namespaced) {
            if (n > 1)
                return;
            out->all_namespaces = 1;
        }
    }
    if (n == 3) {
        out->sub = sk_registry_subresource(out->res, segs[2]);
        if (out->sub) {
            out->name = segs[1];
            subresource_verb(out, method);
        }
        return;
    }
    if (n > 3)
        return;
    out->name = n == 2 ? segs[1] : NULL;
    resource_verb(out, method, watch);
}

/* segs: what follows /apis/authorization.k8s.io/v1. */
static void resolve_review(sk_route *out, const char *method, const char *const *segs, size_t n)
{
    static const char *const cluster[] = {"subjectaccessreviews", "selfsubjectaccessreviews",
                                          "selfsubjectrulesreviews"};
    const char *res = NULL;
    if (n == 3 && is(segs[0], "namespaces") && is(segs[2], "localsubjectaccessreviews")) {
        out->ns = segs[1];
        res = segs[2];
    }
    for (size_t i = 0; n == 1 && i < sizeof cluster / sizeof *cluster; i++)
        if (is(segs[0], cluster[i]))
            res = segs[0];
    if (!res)
        return;
    snprintf(out->doc, sizeof out->doc, "%s", res);
    out->kind = is(method, "POST") ? SK_ROUTE_REVIEW : SK_ROUTE_NOT_ALLOWED;
    out->verb = SK_REQ_CREATE;
}

static void join_doc(sk_route *out, const char *const *segs, size_t n)
{
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(out->doc + used, sizeof out->doc - used, "%s%s", i ? "/" : "", segs[i]);
        if (w < 0 || (size_t)w >= sizeof out->doc - used) {
            out->kind = SK_ROUTE_NOT_FOUND; /* no document has so long a name */
            return;
        }
        used += (size_t)w;
    }
}

void sk_route_resolve(const char *method, const char *const *segs, size_t n, int watch,
                      sk_route *out)
{
    memset(out, 0, sizeof *out);
    out->kind = SK_ROUTE_NOT_FOUND;
    for (size_t i = 0; i < n; i++)
        if (!*segs[i])
            return;
    if (n == 0)
        return;
    const char *first = segs[0];
    if (n == 1 && (is(first, "healthz") || is(first, "livez") || is(first, "readyz"))) {
        snprintf(out->doc, sizeof out->doc, "%s", first);
        fixed(out, method, SK_ROUTE_HEALTH);
    } else if (n == 1 && is(first, "metrics")) {
        fixed(out, method, SK_ROUTE_METRICS);
    } else if (n == 2 && is(first, "debug") && is(segs[1], "consistency")) {
        fixed(out, method, SK_ROUTE_CONSISTENCY);
    } else if (n == 4 && is(first, "apis") && is(segs[1], "authentication.k8s.io") &&
               is(segs[2], "v1") &&
               (is(segs[3], "selfsubjectreviews") || is(segs[3], "tokenreviews"))) {
        snprintf(out->doc, sizeof out->doc, "%s", segs[3]);
        out->kind = !is(method, "POST")          ? SK_ROUTE_NOT_ALLOWED
                    : is(segs[3], "tokenreviews") ? SK_ROUTE_TOKEN_REVIEW
                                                  : SK_ROUTE_SELF_SUBJECT_REVIEW;
    } else if (n == 1 && is(first, "version")) {
        fixed(out, method, SK_ROUTE_VERSION);
    } else if (n == 2 && is(first, "openapi") && is(segs[1], "v2")) {
        fixed(out, method, SK_ROUTE_OPENAPI_V2);
    } else if (n >= 2 && is(first, "openapi") && is(segs[1], "v3")) {
        fixed(out, method, n == 2 ? SK_ROUTE_OPENAPI_V3_ROOT : SK_ROUTE_OPENAPI_V3_DOC);
        if (out->kind == SK_ROUTE_OPENAPI_V3_DOC)
            join_doc(out, segs + 2, n - 2);
    } else if (is(first, "api")) {
        if (n == 1) {
            fixed(out, method, SK_ROUTE_CORE_VERSIONS);
        } else if (is(segs[1], "v1")) {
            out->group = "";
            out->version = "v1";
            if (n == 2)
                fixed(out, method, SK_ROUTE_GROUP_RESOURCES);
            else
                resolve_resource(out, method, "", "v1", segs + 2, n - 2, watch);
        }
    } else if (is(first, "apis")) {
        out->group = n >= 2 ? segs[1] : NULL;
        out->version = n >= 3 ? segs[2] : NULL;
        if (n == 1)
            fixed(out, method, SK_ROUTE_GROUPS);
        else if (n == 2)
            fixed(out, method, SK_ROUTE_GROUP);
        else if (n == 3)
            fixed(out, method, SK_ROUTE_GROUP_RESOURCES);
        else if (is(segs[1], "authorization.k8s.io") && is(segs[2], "v1"))
            resolve_review(out, method, segs + 3, n - 3);
        else
            resolve_resource(out, method, segs[1], segs[2], segs + 3, n - 3, watch);
    }
}
