/*
 * blobslots.h - what the API layer keeps in each derived slot of a watch
 * cache blob (cache/blob.h): the cache numbers the slots and knows nothing
 * of their bytes; this is the one place that names them, so two encodings
 * can never share a slot.
 */
#ifndef SK_API_BLOBSLOTS_H
#define SK_API_BLOBSLOTS_H

#include "cache/blob.h"

enum {
    SK_SLOT_PROTOBUF,  /* the version's protobuf message (api/pbwire.c) */
    SK_SLOT_METADATA,  /* its metadata as JSON text (api/metawire.c) */
    SK_SLOT_TABLE_ROW, /* its Table row template (api/metawire.c) */
    SK_SLOT_PARTIAL_PROTOBUF, /* its PartialObjectMetadata message (api/pbwire.c) */
    /* a custom resource's served versions converted by webhook, as JSON
     * text, one slot per version (api/crconvert.c) */
    SK_SLOT_SERVED,
};
#define SK_SLOT_SERVED_N 3
_Static_assert(SK_SLOT_SERVED + SK_SLOT_SERVED_N <= SK_BLOB_SLOTS,
               "every API slot exists in a blob");

#endif
