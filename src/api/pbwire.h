/*
 * pbwire.h - lists and watch streams written in Kubernetes protobuf
 * (application/vnd.kubernetes.protobuf) from the watch cache's objects,
 * by copying bytes.
 *
 * Why: re-encoding each object's JSON per request made a protobuf page
 * eight times the cost of the same page in JSON. An object version's
 * protobuf message is a function of its stored JSON alone, so it is encoded
 * once, by the first protobuf reader, and kept with the version's blob
 * (cache/blob.h's derived encoding); every later list item and watch frame
 * of that version, for every client, queues a reference to those bytes
 * behind a few bytes of framing (kube/protobuf.h's splicing pieces).
 *
 * Only what is identical for every request is kept: a resource served from
 * another resource's storage (kube/convert.h) is converted per request, so
 * its served object is encoded per request too, never kept.
 *
 * Metadata-only answers (Accept ...;as=PartialObjectMetadata[List]) are
 * served the same way, for every resource, custom ones included, as kube
 * serves them: the version's PartialObjectMetadata message (its ObjectMeta
 * as field 1, the same bytes in meta.k8s.io v1 and v1beta1) is kept in a
 * slot of its own. Where a writer below takes partial, NULL means the
 * object itself and "v1" or "v1beta1" its PartialObjectMetadata of that
 * meta.k8s.io version.
 */
#ifndef SK_API_PBWIRE_H
#define SK_API_PBWIRE_H

#include "api/outq.h"
#include "kube/registry.h"

#include <jansson.h>
#include <stdint.h>

/*
 * Queues one list item (its field tag, length and message) of resource res
 * on q: blob (borrowed) is the cached object; served (borrowed) is its
 * conversion to res's version, or NULL when res is stored as itself. 0, or
 * -1 (logged) when the object has no protobuf form.
 */
int sk_pbwire_list_item(sk_outq *q, uint32_t items_field, const sk_resource *res, sk_blob *blob,
                        const json_t *served, const char *partial);

/* The items field number of res's list, or of a PartialObjectMetadataList
 * of meta.k8s.io/partial: what sk_pbwire_list_item takes, found once a
 * list. 0 if the list has no protobuf form. */
uint32_t sk_pbwire_items_field(const sk_resource *res, const char *partial);

/*
 * Writes a whole list to out: its head (res's list kind, or a
 * PartialObjectMetadataList, with the list metadata meta_json, a JSON
 * object), then everything items holds (as sk_pbwire_list_item queued it;
 * items is left empty), then the envelope's end. 0, or -1 (logged).
 */
int sk_pbwire_list(sk_outq *out, const sk_resource *res, const char *partial,
                   const char *meta_json, sk_outq *items);

/* Queues one watch frame of event type for blob/served, as
 * sk_pbwire_list_item takes them. 0, or -1 (logged). */
int sk_pbwire_event(sk_outq *q, const char *type, const sk_resource *res, sk_blob *blob,
                    const json_t *served, const char *partial);

/* Queues the frame of a watch event given as one JSON line (bookmarks,
 * errors: small, rare, built as JSON). 0, or -1 (logged). */
int sk_pbwire_json_event(sk_outq *q, const char *line, size_t len);

#endif
