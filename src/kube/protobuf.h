/*
 * protobuf.h - the Kubernetes protobuf wire form of every built-in kind
 * (application/vnd.kubernetes.protobuf), transcoded to and from the JSON
 * form sqlkube validates, stores and serves. One generic transcoder driven
 * by kube/schema.h; see protobuf.c for the rules.
 */
#ifndef SK_KUBE_PROTOBUF_H
#define SK_KUBE_PROTOBUF_H
#include "core/buf.h"
#include "core/err.h"
#include "kube/schema.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The media type, and the one watch streams answer with. */
#define SK_PROTOBUF_MEDIA "application/vnd.kubernetes.protobuf"
#define SK_PROTOBUF_WATCH_MEDIA "application/vnd.kubernetes.protobuf;stream=watch"

/* Non-zero if the media type (may carry ;params) is application/vnd.kubernetes.protobuf */
int sk_protobuf_is_media(const char *ct);

/* The schema of the kind apiVersion/kind names: a registered kind, its list
 * kind, a subresource's kind (Scale, Eviction), meta/v1 Status,
 * DeleteOptions, WatchEvent in any group version, or a meta.k8s.io kind
 * (PartialObjectMetadata, PartialObjectMetadataList). NULL if none. */
const sk_schema *sk_protobuf_schema_for(const char *api_version, const char *kind);

/*
 * Decodes a Kubernetes protobuf envelope ("k8s\0" + runtime.Unknown) into
 * the JSON encoding/json would print for the same Go object, apiVersion and
 * kind first. On success *out = new reference, SK_OK. On failure
 * SK_ERR_BAD_REQUEST (malformed, truncated, unknown kind) and *why = a
 * malloc'd message naming the message and field; *out untouched.
 */
sk_err sk_protobuf_to_json(const char *body, size_t len, json_t **out, char **why);

/* The apiVersion and kind of a protobuf envelope's TypeMeta, whatever its
 * object holds: both new on SK_OK; SK_ERR_BAD_REQUEST (nothing written)
 * if body is not an envelope or names no apiVersion or kind. */
sk_err sk_protobuf_type_meta(const char *body, size_t len, char **api_version, char **kind);

/* Decodes one bare message of schema s (no envelope) to JSON; as above. */
sk_err sk_protobuf_decode_message(const sk_schema *s, const char *data, size_t len, json_t **out,
                                  char **why);

/*
 * Appends the envelope encoding of obj (borrowed; its apiVersion and kind
 * pick the schema) to out, as Go's Marshal writes it. A kind without a
 * schema or a value of the wrong JSON type is SK_ERR_BAD_REQUEST with *why
 * (malloc'd); out may then hold a partial encoding past its old length.
 */
sk_err sk_protobuf_from_json(const json_t *obj, sk_buf *out, char **why);

/*
 * Appends one protobuf watch frame to out: a 4-byte big-endian length and a
 * bare meta/v1 WatchEvent {1 type, 2 RawExtension{1 raw = the envelope of
 * object}}. event is {"type": ..., "object": {...}} (borrowed). Errors as
 * sk_protobuf_from_json.
 */
sk_err sk_protobuf_watch_frame(const json_t *event, sk_buf *out, char **why);

/*
 * Replies spliced around message bytes kept elsewhere (the API layer keeps
 * each cached object version's message, so that lists and watch frames
 * copy bytes instead of encoding): these write the pieces that go around
 * them, byte for byte what the whole encoders above write.
 *
 * sk_protobuf_message appends the bare message of obj (borrowed) as a value
 * of apiVersion/kind: no envelope, so no kind or apiVersion on the wire; a
 * list's item and an envelope's raw are such messages. Errors as
 * sk_protobuf_from_json.
 */
sk_err sk_protobuf_message(const char *api_version, const char *kind, const json_t *obj,
                           sk_buf *out, char **why);

/* An envelope is sk_protobuf_envelope_open, the msg_len bytes of message,
 * then SK_PROTOBUF_ENVELOPE_END. */
void sk_protobuf_envelope_open(const char *api_version, const char *kind, size_t msg_len,
                               sk_buf *out);
#define SK_PROTOBUF_ENVELOPE_END "\x1a\x00\x22\x00"
#define SK_PROTOBUF_ENVELOPE_END_LEN 4

/* A list is sk_protobuf_list_open with head (the list without items:
 * apiVersion, kind, metadata; borrowed) and the length of all items, each
 * item sk_protobuf_list_item_open (with the list kind's items field) then
 * its message, then SK_PROTOBUF_ENVELOPE_END. Errors as
 * sk_protobuf_from_json. */
sk_err sk_protobuf_list_open(const json_t *head, size_t items_len, sk_buf *out, char **why);
void sk_protobuf_list_item_open(uint32_t items_field, size_t msg_len, sk_buf *out);
/* The field number of the items of list kind apiVersion/kind, from its
 * schema (2 in kube's lists but meta.k8s.io/v1beta1's
 * PartialObjectMetadataList, where it is 1); 0 if it has none. */
uint32_t sk_protobuf_list_items_field(const char *api_version, const char *kind);

/* A watch frame is sk_protobuf_watch_frame_open, then the object's
 * envelope of envelope_len bytes. */
void sk_protobuf_watch_frame_open(const char *type, size_t envelope_len, sk_buf *out);

#endif
