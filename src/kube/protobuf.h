/*
 * protobuf.h - Kubernetes protobuf request bodies (kubectl's typed clients
 * send them) decoded to the JSON the JSON API would receive. See protobuf.c.
 */
#ifndef SK_KUBE_PROTOBUF_H
#define SK_KUBE_PROTOBUF_H
#include "core/err.h"
#include <jansson.h>
#include <stddef.h>
/* Non-zero if the media type (may carry ;params) is application/vnd.kubernetes.protobuf */
int sk_protobuf_is_media(const char *ct);
/* Decodes a Kubernetes protobuf envelope into JSON. On success *out = new reference, returns SK_OK.
   On failure returns SK_ERR_BAD_REQUEST (malformed / truncated / unknown kind) and *why = malloc'd
   message; *out untouched. */
sk_err sk_protobuf_to_json(const char *body, size_t len, json_t **out, char **why);
#endif
