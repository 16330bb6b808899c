/*
 * verbs.h - the entry point of each verb and fixed endpoint, each in its
 * own file (get.c, list.c, watch.c, create.c, update.c, delete.c,
 * endpoints.c) with its own state. api.c dispatches a routed call to one of
 * them as its first step. Each returns a step code (call.h).
 */
#ifndef SK_API_VERBS_H
#define SK_API_VERBS_H

typedef struct sk_api_call sk_api_call;

int sk_verb_get(sk_api_call *call);
int sk_verb_list(sk_api_call *call);
int sk_verb_watch(sk_api_call *call); /* a collection, or one object (call->name) */
int sk_verb_create(sk_api_call *call);
int sk_verb_update(sk_api_call *call);
int sk_verb_patch(sk_api_call *call);
int sk_verb_delete(sk_api_call *call);
int sk_verb_delete_collection(sk_api_call *call);

/* /healthz, /livez, /readyz (call->route.doc names which). */
int sk_endpoint_health(sk_api_call *call);
int sk_endpoint_metrics(sk_api_call *call);
int sk_endpoint_consistency(sk_api_call *call);
/* Discovery, OpenAPI and /version: cached documents. */
int sk_endpoint_document(sk_api_call *call);

#endif
