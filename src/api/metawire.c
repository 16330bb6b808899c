/*
 * metawire.c - see metawire.h.
 *
 * Kept bytes are made by the version's first reader that needs them and
 * attached with cache/blob.h's first-writer-wins: two requests making the
 * same bytes at once both do the work and both serve the winner's. The
 * metadata slot holds sk_partial_metadata's text and the row slot
 * sk_table_row_template's bytes, so a kept answer is the answer kube/
 * would write from the parsed object, byte for byte.
 */
#include "api/metawire.h"
#include "api/blobslots.h"
#include "api/call.h"
#include "core/check.h"
#include "kube/partial.h"
#include "kube/table.h"

/* One item's inputs: the stored object parsed at most once, and the kept
 * (or, when not keepable, scratch) bytes it needs. */
typedef struct item {
    const sk_resource *res;
    sk_blob *blob;
    const json_t *obj; /* borrowed from the caller, or parsed */
    json_t *parsed;    /* owned: obj when this file parsed it */
    sk_buf scratch;    /* a row template that is not kept */
} item;

/* The stored object, parsed on first need; NULL when it cannot be. */
static const json_t *object_of(item *it)
{
    if (!it->obj) {
        size_t len;
        const char *data = sk_blob_data(it->blob, &len);
        it->obj = it->parsed = sk_call_parse_stored(it->res, data, len, sk_blob_name(it->blob));
    }
    return it->obj;
}

/* The kept bytes of slot, made by make from the parsed object on a miss. */
static const char *kept(item *it, unsigned slot, void (*make)(sk_buf *, const item *),
                        size_t *len_out)
{
    const char *data = sk_blob_derived(it->blob, slot, len_out);
    if (data || !object_of(it))
        return data;
    sk_buf b = SK_BUF_INIT;
    make(&b, it);
    data = sk_blob_attach_derived(it->blob, slot, b.data ? b.data : "", b.len, len_out);
    sk_buf_free(&b);
    return data;
}

static void make_metadata(sk_buf *b, const item *it)
{
    sk_partial_metadata(b, it->obj);
}

static void make_row(sk_buf *b, const item *it)
{
    sk_table_row_template(b, it->res, it->obj);
}

/* The metadata text of the stored object. */
static const char *metadata_of(item *it, size_t *len_out)
{
    return kept(it, SK_SLOT_METADATA, make_metadata, len_out);
}

/* The row template: kept unless the resource's rows may not be. */
static const char *template_of(item *it, size_t *len_out)
{
    if (sk_table_row_kept(it->res))
        return kept(it, SK_SLOT_TABLE_ROW, make_row, len_out);
    if (!object_of(it))
        return NULL;
    make_row(&it->scratch, it);
    *len_out = it->scratch.len;
    return it->scratch.data ? it->scratch.data : "";
}

static void item_free(item *it)
{
    json_decref(it->parsed);
    sk_buf_free(&it->scratch);
}

/* Queues the PartialObjectMetadata of kept metadata text. */
static void queue_partial(sk_outq *q, sk_blob *blob, const char *meta, size_t len,
                          const char *meta_version)
{
    sk_partial_open(&q->text, meta_version);
    sk_outq_blob_bytes(q, blob, meta, len);
    sk_buf_putc(&q->text, '}');
}

int sk_metawire_partial(sk_outq *q, const char *prefix, const sk_resource *res, sk_blob *blob,
                        const json_t *obj, const json_t *served, const char *meta_version)
{
    if (served) {
        sk_buf_puts(&q->text, prefix);
        sk_partial_append(&q->text, served, meta_version);
        return 0;
    }
    item it = {res, blob, obj, NULL, SK_BUF_INIT};
    size_t len;
    const char *meta = metadata_of(&it, &len);
    if (meta) {
        sk_buf_puts(&q->text, prefix);
        queue_partial(q, blob, meta, len, meta_version);
    }
    item_free(&it);
    return meta ? 0 : -1;
}

int sk_metawire_row(sk_outq *q, const char *prefix, const sk_resource *res, sk_blob *blob,
                    const json_t *obj, sk_include_object include, int64_t now_s)
{
    item it = {res, blob, obj, NULL, SK_BUF_INIT};
    size_t tlen, mlen = 0;
    const char *tmpl = template_of(&it, &tlen);
    const char *meta = tmpl && include == SK_INCLUDE_METADATA ? metadata_of(&it, &mlen) : NULL;
    const json_t *stored = tmpl && include == SK_INCLUDE_OBJECT ? object_of(&it) : NULL;
    int ok = tmpl && (include != SK_INCLUDE_METADATA || meta) &&
             (include != SK_INCLUDE_OBJECT || stored);
    if (ok) {
        sk_buf_puts(&q->text, prefix);
        sk_table_row_fill(&q->text, tmpl, tlen, now_s);
        if (meta) {
            sk_buf_puts(&q->text, ",\"object\":");
            queue_partial(q, blob, meta, mlen, "v1");
        } else if (stored) {
            sk_table_row_object(&q->text, res, stored);
        }
        sk_buf_putc(&q->text, '}');
    }
    item_free(&it);
    return ok ? 0 : -1;
}

int sk_metawire_table(sk_outq *q, const char *prefix, const sk_resource *res, sk_blob *blob,
                      const json_t *obj, sk_include_object include, int64_t rev, int64_t now_s)
{
    sk_buf head = SK_BUF_INIT;
    sk_buf_puts(&head, prefix);
    sk_table_single_begin(&head, res, rev);
    int rc = sk_metawire_row(q, head.data, res, blob, obj, include, now_s);
    if (rc == 0)
        sk_buf_puts(&q->text, "]}");
    sk_buf_free(&head);
    return rc;
}
