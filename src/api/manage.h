/*
 * manage.h - private to src/api: the request's side of managedFields
 * (kube/managed.h): which manager writes (the fieldManager query, else the
 * User-Agent's product as kube derives it), in which version, through which
 * subresource, at what time, over which schema.
 */
#ifndef SK_API_MANAGE_H
#define SK_API_MANAGE_H

#include "api/call.h"
#include "kube/managed.h"
#include "kube/options.h"

typedef struct sk_manage {
    sk_fieldset_type type;
    sk_managed_write w; /* its strings point into this struct and the call */
    char manager[129];
    char now[21];
} sk_manage;

/* Fills *m for call (m in the call's arena or on the caller's stack for
 * the call's life). options_kind names the options kube validates
 * ("CreateOptions", "UpdateOptions", "PatchOptions"); apply: a
 * server-side apply, which needs a fieldManager. Returns -1 after replying
 * 422 as kube does. */
int sk_manage_begin(sk_api_call *call, const sk_write_options *wo, const char *options_kind,
                    int apply, sk_manage *m);

#endif
