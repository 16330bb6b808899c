/*
 * verbs.h - the entry point of each verb and fixed endpoint, each in its
 * own file (get.c, list.c, watch.c, create.c, update.c, delete.c,
 * endpoints.c) with its own state. api.c dispatches a routed call to one of
 * them as its first step. Each returns a step code (call.h).
 */
#ifndef SK_API_VERBS_H
#define SK_API_VERBS_H

#include <jansson.h>
#include <stdint.h>

typedef struct sk_api_call sk_api_call;

int sk_verb_get(sk_api_call *call);
int sk_verb_list(sk_api_call *call);
int sk_verb_watch(sk_api_call *call); /* a collection, or one object (call->name) */
int sk_verb_create(sk_api_call *call);
/* Creates obj (borrowed; kept for the call's life), as POST does once the
 * body is read: admission, managedFields (an Update entry for m's manager
 * unless applied: the object carries its Apply entry), the write. */
typedef struct sk_manage sk_manage;
typedef struct sk_write_options sk_write_options;
int sk_create_object(sk_api_call *call, json_t *obj, const sk_write_options *wo, const sk_manage *m,
                     int applied);
int sk_verb_update(sk_api_call *call);
int sk_verb_patch(sk_api_call *call);
int sk_verb_delete(sk_api_call *call);
int sk_verb_delete_collection(sk_api_call *call);

/*
 * How an update through a subresource sees the stored object (update.c's
 * read-modify-write loop with retry, used by subresource.c and delete.c).
 * Every function replies and returns NULL on a refusal.
 */
typedef struct sk_update_view {
    /* What the client edits of the stored object (borrowed): a PATCH
     * applies to it. NULL: the object itself. New reference. */
    json_t *(*view)(sk_api_call *call, const json_t *stored);
    /* The PUT/POST body, decoded. New reference. */
    json_t *(*decode)(sk_api_call *call);
    /* The object to admit and write from what the client sent (borrowed)
     * and the stored object (borrowed). New reference. */
    json_t *(*merge)(sk_api_call *call, const json_t *sent, const json_t *stored);
    /* Optional: replies with the object written or unchanged (borrowed);
     * NULL: the object itself, 200. */
    void (*reply)(sk_api_call *call, const json_t *obj);
    int check_fields; /* the body is of the resource's kind: field validation applies */
    /* Optional, with view: a server-side apply through the view. cfg
     * (borrowed) is the apply body, already checked to be an
     * apply_api_version apply_kind named as the URL; returns the parent's
     * apply config it stands for (kube's ScaleHandler: the Scale's
     * spec.replicas is the parent's replicas field, owned with the
     * subresource). New reference, or NULL after replying. */
    json_t *(*apply_config)(sk_api_call *call, const json_t *cfg);
    const char *apply_api_version, *apply_kind;
    /* The one parent field such a config sets, and its name in the view:
     * a conflict names the view's, as kube computes it on the view. */
    const char *(*apply_parent_field)(sk_api_call *call);
    const char *apply_view_field;
    /* The merged object is written as it is, without admission: kube
     * writes a binding or a graceful deletion without the update strategy
     * (a pod's spec is otherwise immutable). */
    int unadmitted;
} sk_update_view;

/* PUT (or a POST through a view) or PATCH with view (NULL: the object). */
int sk_update_start(sk_api_call *call, int is_patch, const sk_update_view *view);
/* A verb on a subresource (call->route.sub): subresource.c. */
int sk_verb_subresource(sk_api_call *call);
/* GET of the object in the URL's version as view shows it (NULL: as it is). */
int sk_verb_get_view(sk_api_call *call, json_t *(*view)(sk_api_call *call, const json_t *obj));
/* DELETE of the object with the options given (copied; body already
 * decoded; d->dry_run: plan and answer, write nothing); evict: answer as an
 * eviction does (a Status). */
typedef struct sk_delete_options sk_delete_options;
int sk_delete_object(sk_api_call *call, const sk_delete_options *d, int evict);

/* POST .../serviceaccounts/{name}/token with a signing key (tokenrequest.c). */
int sk_verb_token_request(sk_api_call *call);
/* POST of an authorization.k8s.io/v1 review (review.c). */
int sk_verb_review(sk_api_call *call);

/* /healthz, /livez, /readyz (call->route.doc names which). */
int sk_endpoint_health(sk_api_call *call);
int sk_endpoint_metrics(sk_api_call *call);
int sk_endpoint_consistency(sk_api_call *call);
/* SelfSubjectReview create: the call's user as kube's UserInfo, 201. */
int sk_endpoint_self_subject_review(sk_api_call *call);
/* TokenReview create: what spec.token proves (api/authn.h), 201. */
int sk_endpoint_token_review(sk_api_call *call);
/* Discovery, OpenAPI and /version: cached documents. */
int sk_endpoint_document(sk_api_call *call);

#endif
