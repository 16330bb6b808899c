/*
 * partial.h - meta.k8s.io PartialObjectMetadata: an object reduced to its
 * metadata, what client-go's metadata client, the garbage collector and
 * controller-runtime's metadata-only watches ask for (Accept: ...;
 * as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1), as kube-apiserver's
 * asPartialObjectMetadata[List] builds it.
 *
 * Pure: JSON in, JSON out.
 */
#ifndef SK_KUBE_PARTIAL_H
#define SK_KUBE_PARTIAL_H

#include "core/buf.h"

#include <jansson.h>

/* obj's (borrowed) metadata as a PartialObjectMetadata of meta.k8s.io/
 * meta_version ("v1" or "v1beta1"), appended to b as JSON. */
void sk_partial_append(sk_buf *b, const json_t *obj, const char *meta_version);

/* The start of a PartialObjectMetadataList, up to its items' '[', with
 * list_meta (borrowed) as its metadata, JSON text. */
void sk_partial_list_begin(sk_buf *b, const char *meta_version, const char *list_meta);

#endif
