/*
 * partial.c - see partial.h. The metadata is the object's own, whole
 * (managedFields included, as meta.AsPartialObjectMetadata copies
 * ObjectMeta); each item of a list carries its kind and apiVersion, as
 * kube sets them on every item.
 */
#include "kube/partial.h"
#include "core/check.h"

#include <stdlib.h>

void sk_partial_open(sk_buf *b, const char *meta_version)
{
    sk_buf_printf(b,
                  "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/%s\","
                  "\"metadata\":",
                  meta_version);
}

void sk_partial_metadata(sk_buf *b, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    if (json_is_object(meta)) {
        char *text = json_dumps(meta, JSON_COMPACT);
        SK_CHECK_ALLOC(text);
        sk_buf_puts(b, text);
        free(text);
    } else {
        sk_buf_puts(b, "{}");
    }
}

void sk_partial_append(sk_buf *b, const json_t *obj, const char *meta_version)
{
    sk_partial_open(b, meta_version);
    sk_partial_metadata(b, obj);
    sk_buf_putc(b, '}');
}

void sk_partial_list_begin(sk_buf *b, const char *meta_version, const char *list_meta)
{
    sk_buf_printf(b,
                  "{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"meta.k8s.io/%s\","
                  "\"metadata\":%s,\"items\":[",
                  meta_version, list_meta);
}
