/*
 * served.h - stored objects as the client's version: the read edge of
 * shared storage (kube/convert.h). A resource stored in its own form
 * (nearly all) passes its stored bytes through untouched; one stored as
 * another version's (events.k8s.io Events, autoscaling/v1 HPAs, custom
 * resources' other versions) is parsed and converted (api/crconvert.h).
 */
#ifndef SK_API_SERVED_H
#define SK_API_SERVED_H

#include "api/call.h"

#include <jansson.h>

/* Replies status with the stored object data/len of the call's resource in
 * the call's version (or with the Status of a conversion webhook that
 * failed). */
void sk_served_reply(sk_api_call *call, int status, const char *data, size_t len);

/* Appends obj (borrowed, already in the served version) to b as JSON. */
void sk_served_append(sk_buf *b, const json_t *obj);

#endif
