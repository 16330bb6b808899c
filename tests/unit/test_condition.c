/*
 * test_condition.c - kube/condition: a condition is replaced where it
 * stands or appended, other types are left alone, and lastTransitionTime
 * moves only when the status changes.
 */
#include "kube/condition.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static json_t *cond(const char *type, const char *status, const char *reason)
{
    return json_pack("{s:s, s:s, s:s}", "type", type, "status", status, "reason", reason);
}

static const char *field(const json_t *obj, size_t i, const char *key)
{
    const json_t *c =
        json_array_get(json_object_get(json_object_get(obj, "status"), "conditions"), i);
    return json_string_value(json_object_get(c, key));
}

static size_t count(const json_t *obj)
{
    return json_array_size(json_object_get(json_object_get(obj, "status"), "conditions"));
}

static void test_made_when_missing(void **state)
{
    (void)state;
    json_t *obj = json_object();
    sk_condition_set(obj, cond("Ready", "True", "Up"), "2026-01-01T00:00:00Z");
    assert_int_equal(count(obj), 1);
    assert_string_equal(field(obj, 0, "type"), "Ready");
    assert_string_equal(field(obj, 0, "lastTransitionTime"), "2026-01-01T00:00:00Z");
    json_decref(obj);
}

static void test_same_status_keeps_time(void **state)
{
    (void)state;
    json_t *obj = json_object();
    sk_condition_set(obj, cond("A", "True", "one"), "2026-01-01T00:00:00Z");
    sk_condition_set(obj, cond("B", "False", "two"), "2026-01-01T00:00:00Z");
    sk_condition_set(obj, cond("A", "True", "again"), "2026-02-02T00:00:00Z");
    assert_int_equal(count(obj), 2);
    assert_string_equal(field(obj, 0, "type"), "A"); /* in place, not moved to the end */
    assert_string_equal(field(obj, 0, "reason"), "again");
    assert_string_equal(field(obj, 0, "lastTransitionTime"), "2026-01-01T00:00:00Z");
    sk_condition_set(obj, cond("A", "False", "down"), "2026-03-03T00:00:00Z");
    assert_string_equal(field(obj, 0, "lastTransitionTime"), "2026-03-03T00:00:00Z");
    assert_string_equal(field(obj, 1, "type"), "B");
    assert_string_equal(field(obj, 1, "lastTransitionTime"), "2026-01-01T00:00:00Z");
    json_decref(obj);
}

static void test_non_object_status_replaced(void **state)
{
    (void)state;
    json_t *obj = json_pack("{s:s}", "status", "junk");
    sk_condition_set(obj, cond("A", "True", "x"), "2026-01-01T00:00:00Z");
    assert_int_equal(count(obj), 1);
    json_decref(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_made_when_missing),
        cmocka_unit_test(test_same_status_keeps_time),
        cmocka_unit_test(test_non_object_status_replaced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
