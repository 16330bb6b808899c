/*
 * grpc.h - gRPC's framing over HTTP/2 (pure): the 5-byte prefix of each
 * message (a compressed flag, then the length, big-endian), the status codes
 * and the percent-encoding of grpc-message.
 *
 * Kept apart from the HTTP/2 server so the parser that meets untrusted bytes
 * first can be unit-tested and fuzzed on its own.
 */
#ifndef SK_ETCD_GRPC_H
#define SK_ETCD_GRPC_H

#include "core/buf.h"

#include <stddef.h>
#include <stdint.h>

/* gRPC status codes (the numbers are the protocol's). */
typedef enum {
    SK_GRPC_OK = 0,
    SK_GRPC_CANCELLED = 1,
    SK_GRPC_UNKNOWN = 2,
    SK_GRPC_INVALID_ARGUMENT = 3,
    SK_GRPC_DEADLINE_EXCEEDED = 4,
    SK_GRPC_NOT_FOUND = 5,
    SK_GRPC_ALREADY_EXISTS = 6,
    SK_GRPC_PERMISSION_DENIED = 7,
    SK_GRPC_RESOURCE_EXHAUSTED = 8,
    SK_GRPC_FAILED_PRECONDITION = 9,
    SK_GRPC_ABORTED = 10,
    SK_GRPC_OUT_OF_RANGE = 11,
    SK_GRPC_UNIMPLEMENTED = 12,
    SK_GRPC_INTERNAL = 13,
    SK_GRPC_UNAVAILABLE = 14,
} sk_grpc_code;

#define SK_GRPC_PREFIX 5

typedef enum {
    SK_GRPC_FRAME_MORE = 0,       /* a frame has begun but not all of it is here */
    SK_GRPC_FRAME_OK = 1,         /* *msg, *msg_len and *frame_len are set */
    SK_GRPC_FRAME_TOO_LARGE = -1, /* the length exceeds max; *msg_len is set to it */
    SK_GRPC_FRAME_COMPRESSED = -2 /* the compressed flag is set (no codec is offered) */
} sk_grpc_frame;

/* Parses the frame at the start of buf[0..len). msg points into buf. Out-
 * params are written only for the results that name them. */
sk_grpc_frame sk_grpc_frame_parse(const uint8_t *buf, size_t len, size_t max, const uint8_t **msg,
                                  size_t *msg_len, size_t *frame_len);

/* A streaming call's reassembly: calls fn(arg, msg, len) for each complete
 * message at the front of b (the DATA received so far, however the frames
 * were cut), in order, then drops those bytes from b; a message begun stays
 * for more DATA. Returns SK_GRPC_FRAME_MORE after taking every complete
 * one, else the first error, as
 * sk_grpc_frame_parse's (*too_large set for TOO_LARGE), with the messages
 * before it taken. msg is borrowed for the call. */
typedef void (*sk_grpc_msg_fn)(void *arg, const uint8_t *msg, size_t len);
sk_grpc_frame sk_grpc_take(sk_buf *b, size_t max, sk_grpc_msg_fn fn, void *arg, size_t *too_large);

/* Writes the prefix of an uncompressed message of msg_len bytes. */
void sk_grpc_frame_prefix(uint8_t out[SK_GRPC_PREFIX], uint32_t msg_len);

/* Appends msg percent-encoded as grpc-message wants: every byte outside
 * 0x20..0x7E, and '%' itself, as %XX. */
void sk_grpc_percent_encode(sk_buf *b, const char *msg);

#endif
