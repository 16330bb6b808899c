/*
 * test_textfmt.c - core's hand-rolled text formatting against what libc
 * made before: sk_format_rfc3339 against strftime over dates across the
 * years it formats by hand (and its edges), sk_buf_printf on an empty
 * buffer, into spare capacity, and past both the stack and the capacity;
 * sk_uuid4's layout (lowercase hex, hyphens at 8-13-18-23).
 */
#include "core/buf.h"
#include "core/util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

static void reference_rfc3339(int64_t t, char out[21])
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void test_rfc3339_matches_strftime(void **state)
{
    (void)state;
    static const int64_t fixed[] = {0, 1, 59, 86399, 86400, 951782400 /* 2000-02-29 */,
                                    1798761599 /* 2026-12-31T23:59:59 */, 4102444800,
                                    -11644473600 /* 1601 */, 253402300799 /* 9999-12-31 */};
    char got[21], want[21];
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        sk_format_rfc3339(fixed[i], got);
        reference_rfc3339(fixed[i], want);
        assert_string_equal(got, want);
    }
    uint64_t x = 88172645463325252ull; /* xorshift: dates over years 1000 to 9999 */
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t t = -30610224000 + (int64_t)(x % 284012524800ull);
        sk_format_rfc3339(t, got);
        reference_rfc3339(t, want);
        assert_string_equal(got, want);
    }
    sk_format_rfc3339(1764144000, got);
    assert_string_equal(got, "2025-11-26T08:00:00Z");
}

static void test_buf_printf_every_path(void **state)
{
    (void)state;
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, "f:%s", "data"); /* empty buffer: through the stack */
    assert_string_equal(b.data, "f:data");
    assert_int_equal(b.len, 6);
    sk_buf_reserve(&b, 1000);
    sk_buf_printf(&b, "-%d-%s", 42, "x"); /* into spare capacity */
    assert_string_equal(b.data, "f:data-42-x");
    char big[3000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sk_buf_printf(&b, "[%s]", big); /* past the capacity: grown, formatted again */
    assert_int_equal(b.len, 11 + 2 + sizeof big - 1);
    assert_int_equal(strlen(b.data), b.len);
    assert_memory_equal(b.data + 11, "[qqq", 4);
    assert_int_equal(b.data[b.len - 1], ']');
    sk_buf_free(&b);
    sk_buf c = SK_BUF_INIT;
    sk_buf_printf(&c, "%s!", big); /* empty buffer, longer than the stack copy */
    assert_int_equal(c.len, sizeof big);
    assert_int_equal(c.data[c.len - 1], '!');
    assert_int_equal(c.data[c.len], '\0');
    sk_buf_printf(&c, "%s", ""); /* nothing to add keeps the terminator */
    assert_int_equal(c.len, sizeof big);
    assert_int_equal(c.data[c.len], '\0');
    sk_buf_free(&c);
}

static void test_uuid_layout(void **state)
{
    (void)state;
    for (int n = 0; n < 100; n++) {
        char u[37];
        sk_uuid4(u);
        assert_int_equal(strlen(u), 36);
        for (int i = 0; i < 36; i++) {
            if (i == 8 || i == 13 || i == 18 || i == 23)
                assert_int_equal(u[i], '-');
            else
                assert_non_null(strchr("0123456789abcdef", u[i]));
        }
        assert_int_equal(u[14], '4');
        assert_non_null(strchr("89ab", u[19]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339_matches_strftime),
        cmocka_unit_test(test_buf_printf_every_path),
        cmocka_unit_test(test_uuid_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
