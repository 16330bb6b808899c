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

/* The head of a PartialObjectMetadata of meta.k8s.io/meta_version, up to
 * its "metadata": value, which the caller appends, then '}'. */
void sk_partial_open(sk_buf *b, const char *meta_version);
/* obj's (borrowed) metadata as JSON text ({} when it has none), what
 * follows sk_partial_open: a function of obj alone, so callers may keep it
 * per object version. */
void sk_partial_metadata(sk_buf *b, const json_t *obj);

/* obj's (borrowed) metadata as a PartialObjectMetadata of meta.k8s.io/
 * meta_version ("v1" or "v1beta1"), appended to b as JSON. */
void sk_partial_append(sk_buf *b, const json_t *obj, const char *meta_version);

/* The start of a PartialObjectMetadataList, up to its items' '[', with
 * list_meta (borrowed) as its metadata, JSON text. */
void sk_partial_list_begin(sk_buf *b, const char *meta_version, const char *list_meta);

#endif
