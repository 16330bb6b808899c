/*
 * grpc.c - see grpc.h. The length is checked against the caller's bound
 * before anything is buffered for it, so a peer cannot make the server
 * reserve memory by announcing a huge message.
 */
#include "etcd/grpc.h"

#include <string.h>

sk_grpc_frame sk_grpc_frame_parse(const uint8_t *buf, size_t len, size_t max, const uint8_t **msg,
                                  size_t *msg_len, size_t *frame_len)
{
    if (len < SK_GRPC_PREFIX)
        return SK_GRPC_FRAME_MORE;
    if (buf[0] & 1)
        return SK_GRPC_FRAME_COMPRESSED;
    size_t n = (size_t)buf[1] << 24 | (size_t)buf[2] << 16 | (size_t)buf[3] << 8 | buf[4];
    if (n > max) {
        *msg_len = n;
        return SK_GRPC_FRAME_TOO_LARGE;
    }
    if (len - SK_GRPC_PREFIX < n)
        return SK_GRPC_FRAME_MORE;
    *msg = buf + SK_GRPC_PREFIX;
    *msg_len = n;
    *frame_len = SK_GRPC_PREFIX + n;
    return SK_GRPC_FRAME_OK;
}

sk_grpc_frame sk_grpc_take(sk_buf *b, size_t max, sk_grpc_msg_fn fn, void *arg, size_t *too_large)
{
    const uint8_t *p = (const uint8_t *)b->data;
    size_t off = 0;
    sk_grpc_frame f;
    for (;;) {
        const uint8_t *msg;
        size_t mlen = 0, flen = 0;
        f = sk_grpc_frame_parse(p + off, b->len - off, max, &msg, &mlen, &flen);
        if (f != SK_GRPC_FRAME_OK) {
            if (f == SK_GRPC_FRAME_TOO_LARGE)
                *too_large = mlen;
            break;
        }
        fn(arg, msg, mlen);
        off += flen;
    }
    if (off) {
        memmove(b->data, p + off, b->len - off + 1); /* with the NUL sk_buf keeps */
        b->len -= off;
    }
    return f;
}

void sk_grpc_frame_prefix(uint8_t out[SK_GRPC_PREFIX], uint32_t msg_len)
{
    out[0] = 0;
    out[1] = (uint8_t)(msg_len >> 24);
    out[2] = (uint8_t)(msg_len >> 16);
    out[3] = (uint8_t)(msg_len >> 8);
    out[4] = (uint8_t)msg_len;
}

void sk_grpc_percent_encode(sk_buf *b, const char *msg)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        if (*p >= 0x20 && *p <= 0x7e && *p != '%') {
            sk_buf_putc(b, (char)*p);
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            sk_buf_append(b, esc, 3);
        }
    }
}
