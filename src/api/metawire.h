/*
 * metawire.h - metadata-only answers (PartialObjectMetadata) and Table rows
 * written from the watch cache's objects, parsing each version once.
 *
 * Why: both answers were made by parsing the object's cached JSON per
 * request, which made a Table page ten times and a PartialObjectMetadataList
 * page five times the cost of the same page as JSON. What they take from an
 * object version is kept with its blob (api/blobslots.h): the metadata as
 * JSON text, and the row's template (kube/table.h: the cells with their
 * ages left as holes, filled at each request's time). Later requests copy.
 *
 * Only what is identical for every request is kept: the metadata of a
 * resource served from another's storage (kube/convert.h) is its
 * conversion's, made per request; a custom resource's row depends on its
 * CRD's columns, so it is made per request too.
 *
 * Each writer first makes everything it needs, then writes prefix (the
 * list's comma, a watch event's head) and the item; when the stored object
 * cannot be parsed it writes nothing and returns -1 (logged), so a list
 * leaves the object out as it leaves out one it cannot filter.
 */
#ifndef SK_API_METAWIRE_H
#define SK_API_METAWIRE_H

#include "api/outq.h"
#include "kube/options.h"
#include "kube/registry.h"

#include <jansson.h>
#include <stdint.h>

/*
 * Queues prefix and the PartialObjectMetadata (meta.k8s.io/meta_version)
 * of blob (borrowed), an object of resource res, on q. obj (borrowed) is
 * the blob parsed when the caller has it, else NULL; served (borrowed) its
 * conversion to res's version when res is not stored as itself, else NULL.
 * 0, or -1.
 */
int sk_metawire_partial(sk_outq *q, const char *prefix, const sk_resource *res, sk_blob *blob,
                        const json_t *obj, const json_t *served, const char *meta_version);

/* Queues prefix and blob's Table row (kube/table.h's sk_table_row), its
 * ages at now_s, the object as include asks. 0, or -1. */
int sk_metawire_row(sk_outq *q, const char *prefix, const sk_resource *res, sk_blob *blob,
                    const json_t *obj, sk_include_object include, int64_t now_s);

/* Queues prefix and a whole Table of blob alone (sk_table_single), as read
 * at revision rev. 0, or -1. */
int sk_metawire_table(sk_outq *q, const char *prefix, const sk_resource *res, sk_blob *blob,
                      const json_t *obj, sk_include_object include, int64_t rev, int64_t now_s);

#endif
