/*
 * test_crc32c.c - CRC-32C (core/crc32c.h) against the check value of the
 * Castagnoli polynomial and as a running checksum over pieces.
 */
#include "core/crc32c.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_check_value(void **state)
{
    (void)state;
    assert_int_equal(sk_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(sk_crc32c(0, "", 0), 0);
}

static void test_pieces(void **state)
{
    (void)state;
    uint32_t whole = sk_crc32c(0, "keyvalue", 8);
    assert_int_equal(sk_crc32c(sk_crc32c(0, "key", 3), "value", 5), whole);
    assert_int_not_equal(sk_crc32c(0, "keyvaluf", 8), whole);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_value),
        cmocka_unit_test(test_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
