/*
 * endpoints.c - the fixed endpoints: health checks, /metrics,
 * /debug/consistency, and the cached discovery, OpenAPI and version
 * documents, all GET (the router refuses other methods); and the
 * SelfSubjectReview (POST), which reads nothing but the request's user.
 * All answered at once.
 */
#include "api/api.h"
#include "api/authn.h"
#include "api/body.h"
#include "api/call.h"
#include "api/verbs.h"
#include "ctl/consistency.h"
#include "kube/discovery.h"
#include "kube/openapi.h"
#include "kube/openapi_pb.h"

#include <string.h>

static int reply_text(sk_api_call *call, int status, const char *content_type)
{
    call->status = status;
    call->content_type_out = content_type;
    return SK_STEP_DONE;
}

/* The named checks of /healthz, /livez and /readyz, as kube-apiserver
 * lists them (the store stands where etcd would). Until the store is up
 * (call->up) nothing but the reason it is not may be read. */
int sk_endpoint_health(sk_api_call *call)
{
    sk_api *api = call->api;
    const char *which = call->route.doc;
    struct {
        const char *name;
        int ok;
        const char *why; /* said when it fails; NULL: kube's "reason withheld" */
    } checks[] = {
        {"ping", 1, NULL},
        {"log", 1, NULL},
        /* not in /livez: a store that is down (or not up yet) wants the
         * store back, not a restart; nor a full disk, which wants space */
        {"storage", call->up && sk_api_ready(api),
         call->up ? NULL : sk_api_store_down_why(api, call->arena)},
        {"storage-space", !call->up || !sk_store_out_of_space(api->store),
         "the database or its disk is full"},
        {"poststarthook/start-kube-apiserver-identity-lease-controller",
         sk_ctl_healthy(api->identity), NULL},
        {"poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
         sk_ctl_healthy(api->collector), NULL},
        {"poststarthook/crd-informer-synced", sk_ctl_healthy(api->crd), NULL},
        {"poststarthook/rbac/bootstrap-roles", sk_ctl_healthy(api->rbac), NULL},
    };
    size_t n = sizeof checks / sizeof *checks;
    if (strcmp(which, "livez") == 0)
        n = 2; /* liveness waits for no store, start-up hook or disk space */
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= checks[i].ok;
    sk_buf_reset(&call->out);
    if (ok && sk_call_query(call, "verbose") == NULL) {
        sk_buf_puts(&call->out, "ok");
    } else {
        for (size_t i = 0; i < n; i++)
            sk_buf_printf(&call->out, "[%c]%s %s%s\n", checks[i].ok ? '+' : '-', checks[i].name,
                          checks[i].ok ? "ok" : "failed: ",
                          checks[i].ok ? "" : checks[i].why ? checks[i].why : "reason withheld");
        sk_buf_printf(&call->out, "%s check %s\n", which, ok ? "passed" : "failed");
    }
    return reply_text(call, ok ? 200 : 500, "text/plain; charset=utf-8");
}

int sk_endpoint_metrics(sk_api_call *call)
{
    sk_watch_stats ws;
    sk_cache_stats cs;
    sk_watch_hub_stats(call->api->hub, &ws);
    sk_cache_get_stats(call->api->cache, &cs);
    sk_store_resolved resolved = sk_store_commits_resolved(call->api->store);
    sk_metrics_gauges g = {
        .registered_watchers = ws.registered,
        .watch_events_sent = ws.events_sent,
        .terminated_watchers = ws.terminated,
        .cache_revision = cs.rev,
        .store_revision = cs.store_rev,
        .cache_objects = cs.objects,
        .cache_events = cs.events,
        .cache_rebuilds = cs.rebuilds,
        .cache_list_oldest = cs.list_oldest,
        .cache_snapshots = cs.snapshots,
        .cache_object_bytes = cs.object_bytes,
        .cache_index_bytes = cs.index_bytes,
        .cache_snapshot_bytes = cs.snapshot_bytes,
        .cache_snapshot_budget = cs.snapshot_budget,
        .store_batch_replays = sk_store_batch_replays(call->api->store),
        .store_commits = sk_store_commits(call->api->store),
        .store_writer_round_trips = sk_store_writer_round_trips(call->api->store),
        .store_resolved_committed = resolved.committed,
        .store_resolved_not_committed = resolved.not_committed,
        .store_resolved_unknown = resolved.unknown,
    };
    sk_buf_reset(&call->out);
    sk_metrics_render(call->api->metrics, &g, &call->out);
    sk_consistency_render(call->api->consistency, &call->out);
    return reply_text(call, 200, "text/plain; version=0.0.4; charset=utf-8");
}

/* GET /debug/consistency: one consistency check of every resource, now. */
int sk_endpoint_consistency(sk_api_call *call)
{
    sk_buf_reset(&call->out);
    sk_consistency_run(call->api->consistency, &call->out);
    return reply_text(call, 200, "text/plain; charset=utf-8");
}

/* kube's SelfSubjectReview: whatever the body holds, the status is who
 * asked (the object is never stored, so its metadata is empty). */
int sk_endpoint_self_subject_review(sk_api_call *call)
{
    json_t *review = json_pack("{s:s, s:s, s:{s:n}, s:{s:o}}", "kind", "SelfSubjectReview",
                               "apiVersion", "authentication.k8s.io/v1", "metadata",
                               "creationTimestamp", "status", "userInfo", sk_authn_user_info(call->user));
    sk_call_reply_json(call, 201, sk_call_keep(call, review));
    return SK_STEP_DONE;
}

/* kube's TokenReview: the body comes back with its status saying what
 * spec.token proves for spec.audiences (none: the API's), as a request
 * bearing it would be authenticated. A token that fails says why only in
 * status.error (a request would get the bare 401); a token no
 * authenticator knows has no error, as in kube. Nothing is stored. */
int sk_endpoint_token_review(sk_api_call *call)
{
    json_t *obj = sk_call_keep(call, sk_body_decode(call, "expected a TokenReview"));
    if (!obj)
        return SK_STEP_DONE;
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    if ((kind && *kind && strcmp(kind, "TokenReview") != 0) ||
        (av && *av && strcmp(av, "authentication.k8s.io/v1") != 0)) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                             "the body is a %s, not a TokenReview.authentication.k8s.io/v1",
                             kind && *kind ? kind : "object");
        return SK_STEP_DONE;
    }
    json_t *spec = json_object_get(obj, "spec");
    const char *token = json_string_value(json_object_get(spec, "token"));
    if (!token || !*token) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST,
                            "token is required for TokenReview in authentication");
        return SK_STEP_DONE;
    }
    size_t n;
    const char **auds = sk_call_strings(call, json_object_get(spec, "audiences"), &n);
    sk_authn_result r;
    sk_authn_token(&call->api->authn, call->api->reader, call->arena, token, auds, n, &r);
    json_t *status = json_pack("{s:b}", "authenticated", r.user != NULL);
    json_object_set_new(status, "user", r.user ? sk_authn_user_info(r.user) : json_object());
    if (r.user) {
        json_t *a = json_array();
        for (size_t i = 0; i < r.n_audiences; i++)
            json_array_append_new(a, json_string(r.audiences[i]));
        json_object_set_new(status, "audiences", a);
    } else if (r.error) {
        json_object_set_new(status, "error", json_string(r.error));
    }
    sk_call_reply_review(call, obj, "TokenReview", "authentication.k8s.io/v1", status);
    return SK_STEP_DONE;
}

/* A cached, immutable document (discovery, OpenAPI, version), or 404. */
int sk_endpoint_document(sk_api_call *call)
{
    const sk_route *rt = &call->route;
    size_t len = 0;
    const char *text = NULL, *media = NULL;
    int protobuf = 0;
    const char *aggregated = sk_discovery_aggregated_version(call->accept);
    switch (rt->kind) {
    case SK_ROUTE_VERSION:
        text = sk_discovery_version_text(&len);
        break;
    case SK_ROUTE_OPENAPI_V3_ROOT:
        text = sk_openapi_v3_root_text(&len);
        break;
    case SK_ROUTE_OPENAPI_V3_DOC:
        text = sk_openapi_v3_doc_text(rt->doc, &len);
        break;
    case SK_ROUTE_OPENAPI_V2:
        /* client-go's OpenAPISchema() asks for gnostic's protobuf form */
        if (sk_openapi_pb_wanted(call->accept)) {
            text = (const char *)sk_openapi_v2_pb(&len);
            media = SK_OPENAPI_PB_MEDIA;
            protobuf = 1;
        } else {
            text = sk_openapi_v2_text(&len);
        }
        break;
    case SK_ROUTE_CORE_VERSIONS:
    case SK_ROUTE_GROUPS:
        if (aggregated) {
            text = sk_discovery_aggregated_text(rt->kind == SK_ROUTE_CORE_VERSIONS, aggregated,
                                                &len);
            media = sk_discovery_aggregated_media(aggregated);
        } else {
            text = rt->kind == SK_ROUTE_CORE_VERSIONS ? sk_discovery_core_versions_text(&len)
                                                      : sk_discovery_groups_text(&len);
        }
        break;
    case SK_ROUTE_GROUP:
        text = sk_discovery_group_text(rt->group, &len);
        break;
    case SK_ROUTE_GROUP_RESOURCES:
        text = sk_discovery_resources_text(rt->group, rt->version, &len);
        break;
    default:
        break;
    }
    if (!text) {
        sk_call_reply_error(call, SK_ERR_NOT_FOUND,
                            "the server could not find the requested resource");
        return SK_STEP_DONE;
    }
    if (protobuf) {
        sk_buf_reset(&call->out);
        sk_buf_append(&call->out, text, len);
        return reply_text(call, 200, media);
    }
    sk_call_reply_raw(call, 200, text, len);
    if (media)
        call->content_type_out = media;
    return SK_STEP_DONE;
}
