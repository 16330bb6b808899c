/*
 * accept.h - what to answer for a request's Accept header, chosen as
 * kube-apiserver's content negotiation chooses it (k8s.io/apiserver
 * endpoints/handlers/negotiation, with the RequestScope's
 * AllowsMediaTypeTransform): the media type (JSON or protobuf) and whether
 * the object is sent as it is, as a meta.k8s.io Table, PartialObjectMetadata
 * or PartialObjectMetadataList.
 *
 * Pure: parses a string, no I/O.
 */
#ifndef SK_KUBE_ACCEPT_H
#define SK_KUBE_ACCEPT_H

#include "core/err.h"

typedef enum {
    SK_AS_OBJECT,       /* the object or list itself */
    SK_AS_TABLE,        /* as=Table */
    SK_AS_PARTIAL,      /* as=PartialObjectMetadata */
    SK_AS_PARTIAL_LIST, /* as=PartialObjectMetadataList */
} sk_as;

typedef struct sk_accept {
    int protobuf;            /* application/vnd.kubernetes.protobuf, else JSON */
    sk_as as;                /* the conversion asked for */
    const char *meta_version; /* "v1" or "v1beta1" when as != SK_AS_OBJECT (static) */
} sk_accept;

/*
 * Chooses from header (NULL or "" is JSON, the object as it is): clauses by
 * q (q=0 never), the more specific first among equals, then in order; the
 * first whose media type the server writes (JSON, or protobuf when
 * protobuf_ok: the kind has a protobuf form) and whose as/g/v it can
 * convert to (Table, PartialObjectMetadata and PartialObjectMetadataList of
 * meta.k8s.io v1 or v1beta1; Table in JSON only; the two metadata-only
 * forms in protobuf too, whatever protobuf_ok says, as kube serves them
 * for custom resources) wins. SK_OK with *out; SK_ERR_NOT_ACCEPTABLE
 * when no clause can be answered and one asked for a conversion. A header
 * naming only media types the server does not write is answered JSON, as
 * sqlkube always has, where kube answers 406.
 */
sk_err sk_accept_negotiate(const char *header, int protobuf_ok, sk_accept *out);

/* kube's words for a 406 on an unservable Accept. */
#define SK_ACCEPT_NOT_ACCEPTABLE                                                                   \
    "only the following media types are accepted: application/json, application/yaml, "          \
    "application/vnd.kubernetes.protobuf"

#endif
