/*
 * pbwire.c - see pbwire.h.
 *
 * A kept message is a function of the blob's JSON alone: it is made only
 * when the resource is stored as itself (no conversion), and then the one
 * resource that reads the blob unconverted is the blob's own, whose kind
 * picks the schema. Two requests encoding the same version at once both
 * encode; the blob keeps the first and both serve it (cache/blob.c).
 *
 * Failures (an object the schema cannot encode: stored by hand with a value
 * of the wrong type) end the stream, as they did when the whole reply was
 * transcoded: a protobuf list cannot skip an item it has counted.
 */
#include "api/pbwire.h"
#include "api/blobslots.h"
#include "api/call.h"
#include "core/log.h"
#include "kube/protobuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One object's message: bytes kept with its blob, or encoded into scratch
 * for this request alone. */
typedef struct message {
    const char *data;
    size_t len;
    sk_blob *owner; /* the blob keeping data alive; NULL: data is scratch's */
    sk_buf scratch;
} message;

/* The meta.k8s.io apiVersion ("meta.k8s.io/v1") of partial into out. */
static const char *partial_api_version(char out[32], const char *partial)
{
    snprintf(out, 32, "meta.k8s.io/%s", partial);
    return out;
}

/* Appends obj's message as res's kind, or (partial) its
 * PartialObjectMetadata's. 0, or -1 (logged). */
static int encode(const sk_resource *res, const json_t *obj, const char *partial, sk_buf *out,
                  const char *name)
{
    char *why = NULL;
    sk_err err;
    if (partial) {
        json_t *md = json_object_get(obj, "metadata");
        json_t *pom = md ? json_pack("{s:O}", "metadata", md) : json_pack("{s:{}}", "metadata");
        err = pom ? sk_protobuf_message("meta.k8s.io/v1", "PartialObjectMetadata", pom, out, &why)
                  : SK_ERR_INTERNAL;
        json_decref(pom);
    } else {
        err = sk_protobuf_message(res->api_version, res->kind, obj, out, &why);
    }
    if (err != SK_OK)
        sk_log_error("%s \"%s\" has no protobuf encoding: %s", res->resource, name, why ? why : "");
    free(why);
    return err == SK_OK ? 0 : -1;
}

static int message_of(const sk_resource *res, sk_blob *blob, const json_t *served,
                      const char *partial, message *m)
{
    *m = (message){NULL, 0, NULL, SK_BUF_INIT};
    const char *name = sk_blob_name(blob);
    if (served) {
        if (encode(res, served, partial, &m->scratch, name) < 0) {
            sk_buf_free(&m->scratch);
            return -1;
        }
        m->data = m->scratch.data;
        m->len = m->scratch.len;
        return 0;
    }
    unsigned slot = partial ? SK_SLOT_PARTIAL_PROTOBUF : SK_SLOT_PROTOBUF;
    m->owner = blob;
    if ((m->data = sk_blob_derived(blob, slot, &m->len)))
        return 0;
    /* The version's first protobuf reader: encode and keep. */
    size_t len;
    const char *data = sk_blob_data(blob, &len);
    json_t *obj = sk_call_parse_stored(res, data, len, name);
    int rc = obj ? encode(res, obj, partial, &m->scratch, name) : -1;
    if (rc == 0)
        m->data = sk_blob_attach_derived(blob, slot, m->scratch.data ? m->scratch.data : "",
                                         m->scratch.len, &m->len);
    sk_buf_free(&m->scratch);
    json_decref(obj);
    return rc;
}

/* Queues m's bytes on q and releases m. */
static void queue_message(sk_outq *q, message *m)
{
    if (m->owner)
        sk_outq_blob_bytes(q, m->owner, m->data, m->len);
    else
        sk_buf_append(&q->text, m->data, m->len);
    sk_buf_free(&m->scratch);
}

uint32_t sk_pbwire_items_field(const sk_resource *res, const char *partial)
{
    char av[32];
    return partial ? sk_protobuf_list_items_field(partial_api_version(av, partial),
                                                  "PartialObjectMetadataList")
           : res->list_kind ? sk_protobuf_list_items_field(res->api_version, res->list_kind)
                            : 0;
}

int sk_pbwire_list_item(sk_outq *q, uint32_t items_field, const sk_resource *res, sk_blob *blob,
                        const json_t *served, const char *partial)
{
    message m;
    if (items_field == 0 || message_of(res, blob, served, partial, &m) < 0)
        return -1;
    sk_protobuf_list_item_open(items_field, m.len, &q->text);
    queue_message(q, &m);
    return 0;
}

int sk_pbwire_list(sk_outq *out, const sk_resource *res, const char *partial,
                   const char *meta_json, sk_outq *items)
{
    char av[32];
    const char *kind = partial ? "PartialObjectMetadataList" : res->list_kind;
    json_t *head = json_pack("{s:s, s:s, s:o}", "apiVersion",
                             partial ? partial_api_version(av, partial) : res->api_version, "kind",
                             kind, "metadata", json_loads(meta_json, 0, NULL));
    char *why = NULL;
    sk_err err =
        head ? sk_protobuf_list_open(head, sk_outq_size(items), &out->text, &why) : SK_ERR_INTERNAL;
    if (err == SK_OK) {
        sk_outq_append(out, items);
        sk_buf_append(&out->text, SK_PROTOBUF_ENVELOPE_END, SK_PROTOBUF_ENVELOPE_END_LEN);
    } else {
        sk_log_error("cannot encode a %s as protobuf: %s", kind, why ? why : "");
    }
    free(why);
    json_decref(head);
    return err == SK_OK ? 0 : -1;
}

int sk_pbwire_event(sk_outq *q, const char *type, const sk_resource *res, sk_blob *blob,
                    const json_t *served, const char *partial)
{
    message m;
    if (message_of(res, blob, served, partial, &m) < 0)
        return -1;
    sk_buf env = SK_BUF_INIT;
    char av[32];
    if (partial)
        sk_protobuf_envelope_open(partial_api_version(av, partial), "PartialObjectMetadata", m.len,
                                  &env);
    else
        sk_protobuf_envelope_open(res->api_version, res->kind, m.len, &env);
    sk_protobuf_watch_frame_open(type, env.len + m.len + SK_PROTOBUF_ENVELOPE_END_LEN, &q->text);
    sk_buf_append(&q->text, env.data, env.len);
    queue_message(q, &m);
    sk_buf_append(&q->text, SK_PROTOBUF_ENVELOPE_END, SK_PROTOBUF_ENVELOPE_END_LEN);
    sk_buf_free(&env);
    return 0;
}

int sk_pbwire_json_event(sk_outq *q, const char *line, size_t len)
{
    json_error_t jerr;
    json_t *ev = json_loadb(line, len, 0, &jerr);
    char *why = NULL;
    sk_err err = ev ? sk_protobuf_watch_frame(ev, &q->text, &why) : SK_ERR_INTERNAL;
    if (err != SK_OK)
        sk_log_error("cannot encode a watch event as protobuf: %s", why ? why : jerr.text);
    free(why);
    json_decref(ev);
    return err == SK_OK ? 0 : -1;
}
