/*
 * test_grpc.c - gRPC framing (etcd/grpc.h): the 5-byte prefix both ways,
 * partial frames, the size bound checked from the prefix alone, the
 * compressed flag, grpc-message's percent-encoding, and a stream's
 * reassembly of messages however its DATA frames cut them.
 */
#include "core/err.h"
#include "etcd/grpc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_prefix_round_trip(void **state)
{
    static const uint32_t lens[] = {0, 1, 255, 256, 65536, 0x01020304u};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint8_t p[SK_GRPC_PREFIX];
        sk_grpc_frame_prefix(p, lens[i]);
        assert_int_equal(p[0], 0);
        assert_int_equal((uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4],
                         lens[i]);
    }
    uint8_t p[SK_GRPC_PREFIX];
    sk_grpc_frame_prefix(p, 0x01020304u);
    assert_memory_equal(p, "\0\1\2\3\4", 5);
}

static void test_parse(void **state)
{
    uint8_t buf[16] = {0, 0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 0, 0};
    const uint8_t *msg = NULL;
    size_t mlen = 99, flen = 99;
    /* Every prefix of the frame is "more". */
    for (size_t n = 0; n < 8; n++)
        assert_int_equal(sk_grpc_frame_parse(buf, n, 100, &msg, &mlen, &flen), SK_GRPC_FRAME_MORE);
    assert_null(msg);
    assert_int_equal(sk_grpc_frame_parse(buf, 8, 100, &msg, &mlen, &flen), SK_GRPC_FRAME_OK);
    assert_ptr_equal(msg, buf + 5);
    assert_int_equal(mlen, 3);
    assert_int_equal(flen, 8);
    /* Trailing bytes are the next frame's: the frame length says where it ends. */
    assert_int_equal(sk_grpc_frame_parse(buf, 13, 100, &msg, &mlen, &flen), SK_GRPC_FRAME_OK);
    assert_int_equal(flen, 8);
    assert_int_equal(sk_grpc_frame_parse(buf + 8, 5, 100, &msg, &mlen, &flen), SK_GRPC_FRAME_OK);
    assert_int_equal(mlen, 0);
    assert_int_equal(flen, 5);
}

static void test_bounds_and_flags(void **state)
{
    const uint8_t *msg = NULL;
    size_t mlen = 0, flen = 0;
    /* A length past the bound is refused from the prefix alone. */
    uint8_t big[5] = {0, 0x7f, 0xff, 0xff, 0xff};
    assert_int_equal(sk_grpc_frame_parse(big, 5, 1 << 20, &msg, &mlen, &flen),
                     SK_GRPC_FRAME_TOO_LARGE);
    assert_int_equal(mlen, 0x7fffffff);
    uint8_t at[5] = {0, 0, 0, 0, 10};
    assert_int_equal(sk_grpc_frame_parse(at, 5, 10, &msg, &mlen, &flen), SK_GRPC_FRAME_MORE);
    assert_int_equal(sk_grpc_frame_parse(at, 5, 9, &msg, &mlen, &flen), SK_GRPC_FRAME_TOO_LARGE);
    uint8_t gz[6] = {1, 0, 0, 0, 1, 'x'};
    assert_int_equal(sk_grpc_frame_parse(gz, 6, 100, &msg, &mlen, &flen),
                     SK_GRPC_FRAME_COMPRESSED);
    assert_null(msg);
}

static void test_percent_encode(void **state)
{
    sk_buf b = SK_BUF_INIT;
    sk_grpc_percent_encode(&b, "etcdserver: key not found");
    assert_string_equal(b.data, "etcdserver: key not found");
    sk_buf_reset(&b);
    sk_grpc_percent_encode(&b, "100% \xc3\xa9\n~");
    assert_string_equal(b.data, "100%25 %C3%A9%0A~");
    sk_buf_free(&b);
}

/* The one error table gives every error a gRPC code, the ones clients
 * switch on being the protocol's. */
static void test_error_codes(void **state)
{
    for (int e = 0; e < SK_ERR__COUNT; e++) {
        int code = sk_err_grpc_code((sk_err)e);
        assert_true(code >= 0 && code <= 16);
        assert_true((code == 0) == (e == SK_OK));
    }
    assert_int_equal(sk_err_grpc_code(SK_ERR_NOT_FOUND), SK_GRPC_NOT_FOUND);
    assert_int_equal(sk_err_grpc_code(SK_ERR_EXPIRED), SK_GRPC_OUT_OF_RANGE);
    assert_int_equal(sk_err_grpc_code(SK_ERR_TOO_LARGE), SK_GRPC_RESOURCE_EXHAUSTED);
    assert_int_equal(sk_err_grpc_code(SK_ERR_UNAVAILABLE), SK_GRPC_UNAVAILABLE);
    assert_int_equal(sk_err_grpc_code(SK_ERR_INVALID), SK_GRPC_INVALID_ARGUMENT);
}

typedef struct taken {
    char text[256];
    size_t len;
    int count;
} taken;

/* Records each message as "<len>:<bytes>|". */
static void take_one(void *arg, const uint8_t *msg, size_t len)
{
    taken *t = arg;
    t->len += (size_t)snprintf(t->text + t->len, sizeof t->text - t->len, "%zu:%.*s|", len,
                               (int)len, (const char *)msg);
    t->count++;
}

static void frame(sk_buf *b, const char *msg)
{
    uint8_t p[SK_GRPC_PREFIX];
    sk_grpc_frame_prefix(p, (uint32_t)strlen(msg));
    sk_buf_append(b, p, sizeof p);
    sk_buf_append(b, msg, strlen(msg));
}

/* Three messages (one empty) fed in every cut of two pieces, and byte by
 * byte: the same messages in the same order, each once, nothing left. */
static void test_take_any_cut(void **state)
{
    sk_buf all = SK_BUF_INIT;
    frame(&all, "abc");
    frame(&all, "");
    frame(&all, "hello");
    for (size_t cut = 0; cut <= all.len; cut++) {
        sk_buf in = SK_BUF_INIT;
        taken t = {{0}, 0, 0};
        size_t big = 0;
        sk_buf_append(&in, all.data, cut);
        assert_int_equal(sk_grpc_take(&in, 100, take_one, &t, &big), SK_GRPC_FRAME_MORE);
        sk_buf_append(&in, all.data + cut, all.len - cut);
        assert_int_equal(sk_grpc_take(&in, 100, take_one, &t, &big), SK_GRPC_FRAME_MORE);
        assert_string_equal(t.text, "3:abc|0:|5:hello|");
        assert_int_equal(in.len, 0);
        sk_buf_free(&in);
    }
    sk_buf in = SK_BUF_INIT;
    taken t = {{0}, 0, 0};
    size_t big = 0;
    for (size_t i = 0; i < all.len; i++) {
        sk_buf_append(&in, all.data + i, 1);
        assert_int_equal(sk_grpc_take(&in, 100, take_one, &t, &big), SK_GRPC_FRAME_MORE);
    }
    assert_string_equal(t.text, "3:abc|0:|5:hello|");
    assert_int_equal(t.count, 3);
    sk_buf_free(&in);
    sk_buf_free(&all);
}

/* A message past the bound stops the reassembly after the ones before it,
 * as soon as its prefix is in; so does the compressed flag. */
static void test_take_errors(void **state)
{
    sk_buf in = SK_BUF_INIT;
    taken t = {{0}, 0, 0};
    size_t big = 0;
    frame(&in, "ok");
    uint8_t huge[SK_GRPC_PREFIX];
    sk_grpc_frame_prefix(huge, 1000);
    sk_buf_append(&in, huge, sizeof huge);
    assert_int_equal(sk_grpc_take(&in, 100, take_one, &t, &big), SK_GRPC_FRAME_TOO_LARGE);
    assert_string_equal(t.text, "2:ok|");
    assert_int_equal(big, 1000);
    sk_buf_reset(&in);
    static const uint8_t zipped[] = {1, 0, 0, 0, 1, 'x'};
    sk_buf_append(&in, zipped, sizeof zipped);
    assert_int_equal(sk_grpc_take(&in, 100, take_one, &t, &big), SK_GRPC_FRAME_COMPRESSED);
    assert_int_equal(t.count, 1);
    sk_buf_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_round_trip),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_bounds_and_flags),
        cmocka_unit_test(test_percent_encode),
        cmocka_unit_test(test_error_codes),
        cmocka_unit_test(test_take_any_cut),
        cmocka_unit_test(test_take_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
