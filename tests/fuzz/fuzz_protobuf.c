/*
 * fuzz_protobuf.c - libFuzzer target: the Kubernetes protobuf transcoder
 * (kube/protobuf.h) on arbitrary bytes.
 *
 * Byte 0 picks the entry point: even, the rest is a request body (the
 * "k8s\0" envelope of any kind); odd, the rest is a bare message of one of
 * a few schemas (a WatchEvent as watch frames carry it, a Pod, a
 * Deployment, a Service).
 *
 * Invariants checked: a failure is SK_ERR_BAD_REQUEST with a message and
 * leaves *out alone; whatever decodes encodes back (the decoder only
 * produces JSON the encoder accepts), and that encoding decodes again to
 * the same JSON.
 *
 * A body is also read as an etcd row's key and value (kube/etcdkey.h, what
 * the SQL follower decodes): an object's key has a resource and ends in its
 * name, and a value
 * that decodes as an envelope here is classified as protobuf with a doc
 * there.
 */
#include "core/buf.h"
#include "kube/etcdkey.h"
#include "kube/protobuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
    const char *api_version, *kind;
} bare[] = {
    {"v1", "WatchEvent"},
    {"v1", "Pod"},
    {"apps/v1", "Deployment"},
    {"v1", "Service"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    json_t *out = (json_t *)0x1;
    char *why = NULL;
    sk_err err;
    int is_bare = data[0] & 1;
    size_t which = (size_t)(data[0] >> 1) % (sizeof bare / sizeof bare[0]);
    if (is_bare) {
        const sk_schema *s = sk_protobuf_schema_for(bare[which].api_version, bare[which].kind);
        if (!s)
            abort();
        err = sk_protobuf_decode_message(s, body, len, &out, &why);
    } else {
        err = sk_protobuf_to_json(body, len, &out, &why);
        sk_etcdval v;
        sk_etcdval_parse(body, len, &v);
        if (err == SK_OK && (v.encoding != SK_ETCDVAL_PROTOBUF || !v.doc))
            abort();
        sk_etcdval_clear(&v);
        sk_etcdkey k;
        sk_etcdkey_parse(body, len, &k);
        /* an object's key is text with a resource and a name; its name is
         * the key's last segment */
        if (k.is_object && (!k.text || !k.resource.len || !k.name.len ||
                            k.name.p + k.name.len != body + len || k.name.p < body))
            abort();
    }
    if (err != SK_OK) {
        if (err != SK_ERR_BAD_REQUEST || !why || out != (json_t *)0x1)
            abort();
        free(why);
        return 0;
    }
    if (!json_is_object(out))
        abort();
    if (is_bare && bare[which].kind[0] == 'W') {
        /* A watch event: its frame, then the frame's message decoded again. */
        sk_buf frame = SK_BUF_INIT;
        char *fwhy = NULL;
        if (json_is_object(json_object_get(out, "object")) &&
            json_string_value(json_object_get(json_object_get(out, "object"), "kind")) &&
            sk_protobuf_watch_frame(out, &frame, &fwhy) != SK_OK && !fwhy)
            abort();
        free(fwhy);
        sk_buf_free(&frame);
        json_decref(out);
        return 0;
    }
    if (is_bare) {
        json_object_set_new(out, "apiVersion", json_string(bare[which].api_version));
        json_object_set_new(out, "kind", json_string(bare[which].kind));
    }
    sk_buf enc = SK_BUF_INIT;
    if (sk_protobuf_from_json(out, &enc, &why) != SK_OK)
        abort(); /* the decoder produced JSON the encoder refuses */
    json_t *again = NULL;
    if (sk_protobuf_to_json(enc.data, enc.len, &again, &why) != SK_OK)
        abort();
    if (!is_bare && !json_equal(again, out))
        abort();
    json_decref(again);
    json_decref(out);
    sk_buf_free(&enc);
    return 0;
}
