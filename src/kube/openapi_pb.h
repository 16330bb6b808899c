/*
 * openapi_pb.h - GET /openapi/v2 in protobuf: the swagger 2.0 document of
 * kube/openapi.h encoded as gnostic's openapi_v2.Document, what client-go's
 * DiscoveryClient.OpenAPISchema() asks for (Accept SK_OPENAPI_PB_ACCEPT) and
 * proto-unmarshals. kube-apiserver (kube-openapi's handler) makes it by
 * compiling its JSON with gnostic and proto-marshalling the result; we
 * follow the same compiler rules, taken from gnostic's sources into the
 * generated table src/kube/gen/gnostic_v2.h (scripts/gen_gnostic_v2.py).
 *
 * The bytes are built once from sk_openapi_v2() (first use, thread-safe) and
 * never change. They share the JSON document's hash: kube-openapi uses one
 * ETag for both forms (its responses vary on Accept).
 */
#ifndef SK_KUBE_OPENAPI_PB_H
#define SK_KUBE_OPENAPI_PB_H

#include <jansson.h>
#include <stddef.h>

/* The media type client-go sends (kube-openapi also accepts it without the
 * "@": SK_OPENAPI_PB_MEDIA) ... */
#define SK_OPENAPI_PB_ACCEPT "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
/* ... and the Content-Type kube-openapi answers with for either. */
#define SK_OPENAPI_PB_MEDIA "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

/*
 * Whether an Accept header asks for the protobuf form: kube-openapi serves
 * the first clause (in q order) naming application/json, either protobuf
 * subtype or a wildcard, and "*" picks JSON, so protobuf is chosen only when
 * a protobuf clause outranks every JSON or wildcard clause. NULL/"" -> 0.
 */
int sk_openapi_pb_wanted(const char *accept);

/* The cached encoding (borrowed, process lifetime); *len receives its length. */
const unsigned char *sk_openapi_v2_pb(size_t *len);

/*
 * Encodes a swagger 2.0 document (borrowed) as openapi_v2.Document into a
 * NEW malloc'd buffer (caller frees) of *len bytes; never NULL (allocation
 * failure aborts). Exposed for tests.
 */
unsigned char *sk_openapi_pb_encode(const json_t *doc, size_t *len);

#endif
