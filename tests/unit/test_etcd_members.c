/*
 * test_etcd_members.c - the etcd face's member identity (etcd/members.h):
 * the client URL a listen address advertises (scheme by TLS, an http://
 * prefix accepted, a wildcard host replaced by this host's name) and member
 * ids that are stable and tell URLs apart.
 */
#include "etcd/members.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void test_client_url(void **state)
{
    char url[320], want[320], host[256] = "";
    sk_etcd_client_url("127.0.0.1:2379", 0, url, sizeof url);
    assert_string_equal(url, "http://127.0.0.1:2379");
    sk_etcd_client_url("http://127.0.0.1:2379", 1, url, sizeof url);
    assert_string_equal(url, "https://127.0.0.1:2379");
    sk_etcd_client_url("[::1]:2379", 0, url, sizeof url);
    assert_string_equal(url, "http://[::1]:2379");
    assert_int_equal(gethostname(host, sizeof host - 1), 0);
    snprintf(want, sizeof want, "http://%s:2379", *host ? host : "localhost");
    sk_etcd_client_url("0.0.0.0:2379", 0, url, sizeof url);
    assert_string_equal(url, want);
    sk_etcd_client_url(":2379", 0, url, sizeof url);
    assert_string_equal(url, want);
}

static void test_ids(void **state)
{
    /* FNV-1a 64 of "a" (the published test vector): ids stay stable across
     * versions, so a member keeps its id over an upgrade. */
    assert_true(sk_etcd_id_of("a") == 0xaf63dc4c8601ec8cULL);
    assert_true(sk_etcd_id_of("http://127.0.0.1:2379") != sk_etcd_id_of("http://127.0.0.1:2380"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_url),
        cmocka_unit_test(test_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
