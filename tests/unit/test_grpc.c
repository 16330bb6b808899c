/*
 * test_grpc.c - gRPC framing (etcd/grpc.h): the 5-byte prefix both ways,
 * partial frames, the size bound checked from the prefix alone, the
 * compressed flag, and grpc-message's percent-encoding.
 */
#include "core/err.h"
#include "etcd/grpc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_round_trip),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_bounds_and_flags),
        cmocka_unit_test(test_percent_encode),
        cmocka_unit_test(test_error_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
