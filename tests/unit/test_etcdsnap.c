/*
 * test_etcdsnap.c - the bbolt reader and etcd's layout on top of it
 * (core/bbolt.h, core/etcdsnap.h), over files built by
 * tests/support/bbolt_image: the rows, leases and revisions come back as
 * written, across a branch page, through inline buckets, with either meta
 * page in use, with the compaction and revision etcd's restore would set; each kind of damage (a meta checksum, a page id, a page
 * reached twice, a truncation, keys out of order, a revision that is not
 * one, a key-value that is not etcd's, a bad protobuf) is refused with a
 * message.
 */
#include "bbolt_image.h"
#include "core/bbolt.h"
#include "core/etcdsnap.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const bi_row rows[] = {
    {2, 0, 0, "/registry/a", "1", 2, 2, 1, 0},
    {3, 0, 0, "/registry/b", "2", 3, 3, 1, 0},
    {3, 1, 0, "/registry/c", "3", 3, 3, 1, 7},
    {4, 0, 0, "/registry/a", "4", 2, 4, 2, 0},
    {5, 0, 1, "/registry/b", NULL, 0, 0, 0, 0},
    {6, 0, 0, "/registry/d", "", 6, 6, 1, 0},
};
static const int64_t lease_ids[] = {7, 9}, lease_ttls[] = {60, 3600};

static bi_spec spec(int split)
{
    return (bi_spec){rows, 6, split, lease_ids, lease_ttls, 2, 3, 0};
}

typedef struct seen {
    sk_etcdsnap_kv kvs[8];
    char keys[8][32], values[8][32];
    int n;
    int64_t leases[4][2];
    int n_leases;
} seen;

static sk_err on_kv(void *arg, const sk_etcdsnap_kv *kv)
{
    seen *s = arg;
    s->kvs[s->n] = *kv;
    memcpy(s->keys[s->n], kv->key, kv->key_len);
    if (kv->value_len)
        memcpy(s->values[s->n], kv->value, kv->value_len);
    s->n++;
    return SK_OK;
}

static sk_err on_lease(void *arg, int64_t id, int64_t ttl)
{
    seen *s = arg;
    s->leases[s->n_leases][0] = id;
    s->leases[s->n_leases++][1] = ttl;
    return SK_OK;
}

static void check_reads_back(unsigned char *f, size_t len)
{
    sk_etcdsnap *snap = NULL;
    char *why = NULL;
    assert_int_equal(sk_etcdsnap_open(f, len, &snap, &why), SK_OK);
    assert_null(why);
    const sk_etcdsnap_info *info = sk_etcdsnap_info_of(snap);
    assert_int_equal(info->rev, 6);
    assert_int_equal(info->compact_rev, 3);
    assert_int_equal(info->compact_finished, 3);
    assert_int_equal(info->rows, 6);
    assert_int_equal(info->tombstones, 1);
    assert_int_equal(info->leases, 2);
    seen s = {0};
    assert_int_equal(sk_etcdsnap_each_kv(snap, on_kv, &s), SK_OK);
    assert_int_equal(s.n, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(s.kvs[i].rev, rows[i].rev);
        assert_int_equal(s.kvs[i].sub, rows[i].sub);
        assert_int_equal(s.kvs[i].tombstone, rows[i].tombstone);
        assert_string_equal(s.keys[i], rows[i].key);
        assert_string_equal(s.values[i], rows[i].value ? rows[i].value : "");
        assert_int_equal(s.kvs[i].create_rev, rows[i].create_rev);
        assert_int_equal(s.kvs[i].version, rows[i].version);
        assert_int_equal(s.kvs[i].lease, rows[i].lease);
    }
    assert_int_equal(sk_etcdsnap_each_lease(snap, on_lease, &s), SK_OK);
    assert_int_equal(s.n_leases, 2);
    assert_int_equal(s.leases[1][0], 9);
    assert_int_equal(s.leases[1][1], 3600);
    sk_etcdsnap_free(snap);
}

static void test_reads_back(void **state)
{
    (void)state;
    for (int split = 0; split <= 3; split += 3) {
        bi_spec sp = spec(split);
        size_t len;
        unsigned char *f = bi_build(&sp, &len);
        check_reads_back(f, len);
        /* meta 1 (the newer) damaged: meta 0 is the database */
        f[BI_PAGE + 16 + 20] ^= 1;
        check_reads_back(f, len);
        free(f);
    }
}

/* The message of a refused file, which must be refused. */
static char *refused(const unsigned char *f, size_t len)
{
    sk_etcdsnap *snap = NULL;
    char *why = NULL;
    assert_int_equal(sk_etcdsnap_open(f, len, &snap, &why), SK_ERR_INVALID);
    assert_null(snap);
    assert_non_null(why);
    return why;
}

static void expect_refused(const unsigned char *f, size_t len, const char *part)
{
    char *why = refused(f, len);
    if (!strstr(why, part))
        fail_msg("\"%s\" does not say \"%s\"", why, part);
    free(why);
}

static void test_damage_is_refused(void **state)
{
    (void)state;
    bi_spec sp = spec(3);
    size_t len;
    unsigned char *good = bi_build(&sp, &len), *f = malloc(len);

    memcpy(f, good, len); /* both meta pages */
    f[16 + 20] ^= 1;
    f[BI_PAGE + 16 + 20] ^= 1;
    expect_refused(f, len, "checksum does not match");

    expect_refused(good, len - BI_PAGE, "truncated");
    expect_refused(good, 100, "meta page");

    memcpy(f, good, len); /* a leaf that says it is another page */
    f[5 * BI_PAGE] = 9;
    expect_refused(f, len, "page 5 says it is page 9");

    memcpy(f, good, len); /* the branch's second child is its first: reached twice */
    f[4 * BI_PAGE + 16 + 16 + 8] = 5;
    expect_refused(f, len, "reached twice");

    memcpy(f, good, len); /* a child out of range */
    f[4 * BI_PAGE + 16 + 8] = 77;
    expect_refused(f, len, "out of range");

    memcpy(f, good, len); /* a child that is a meta page */
    f[4 * BI_PAGE + 16 + 8] = 1;
    expect_refused(f, len, "out of range");

    memcpy(f, good, len); /* more elements than the page holds */
    f[5 * BI_PAGE + 11] = 0x7f;
    expect_refused(f, len, "do not fit");

    memcpy(f, good, len); /* an element running past its page */
    f[5 * BI_PAGE + 16 + 14] = 0x7f;
    expect_refused(f, len, "runs past the page");

    memcpy(f, good, len); /* the leaves swapped: keys out of order */
    f[4 * BI_PAGE + 16 + 8] = 6;
    f[4 * BI_PAGE + 16 + 16 + 8] = 5;
    expect_refused(f, len, "keys out of order");

    memcpy(f, good, len); /* the '_' of a revision key */
    unsigned char *el0 = f + 5 * BI_PAGE + 16;
    el0[(el0[4] | el0[5] << 8) + 8] = '-';
    expect_refused(f, len, "not a revision");
    free(good);

    /* rows etcd does not write */
    bi_row bad[] = {{2, 0, 0, "/k", "v", 2, 3, 1, 0}};
    bi_spec one = {bad, 1, 0, NULL, NULL, 0, 0, 0};
    good = bi_build(&one, &len);
    expect_refused(good, len, "not etcd's");
    free(good);
    bad[0] = (bi_row){2, 0, 0, "/k", "v", 2, 2, 0, 0};
    good = bi_build(&one, &len);
    expect_refused(good, len, "not etcd's");
    free(good);
    bad[0] = (bi_row){2, 0, 0, NULL, "v", 2, 2, 1, 0};
    good = bi_build(&one, &len);
    expect_refused(good, len, "no key");
    /* a truncated protobuf: the key's length byte says more than there is */
    bad[0] = (bi_row){2, 0, 0, "/k", "v", 2, 2, 1, 0};
    free(good);
    good = bi_build(&one, &len);
    unsigned char *el = good + 4 * BI_PAGE + 16;
    unsigned char *val = el + (el[4] | el[5] << 8) + 17;
    val[1] = 0x70;
    expect_refused(good, len, "malformed protobuf");
    free(good);
    free(f);
}

/* A compaction scheduled beyond the finished one is the one in effect (a
 * member resumes it); one beyond every row sets the revision, as etcd's
 * restore does when the newest rows were all compacted away. */
static void test_compactions(void **state)
{
    (void)state;
    struct {
        int64_t scheduled, finished, rev, compact;
    } cases[] = {{5, 3, 6, 5}, {9, 9, 9, 9}, {4, 8, 8, 8}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bi_spec sp = spec(0);
        sp.compact_rev = cases[i].scheduled;
        sp.compact_finished = cases[i].finished;
        size_t len;
        unsigned char *f = bi_build(&sp, &len);
        sk_etcdsnap *snap = NULL;
        char *why = NULL;
        assert_int_equal(sk_etcdsnap_open(f, len, &snap, &why), SK_OK);
        const sk_etcdsnap_info *info = sk_etcdsnap_info_of(snap);
        assert_int_equal(info->rev, cases[i].rev);
        assert_int_equal(info->compact_rev, cases[i].compact);
        assert_int_equal(info->compact_finished, cases[i].finished);
        sk_etcdsnap_free(snap);
        free(f);
    }
}

static void test_no_etcd_buckets(void **state)
{
    (void)state;
    bi_spec sp = spec(0);
    size_t len;
    unsigned char *f = bi_build(&sp, &len);
    /* rename bucket "key" to "kez" (same order): not etcd's file */
    unsigned char *el = f + 3 * BI_PAGE + 16;
    unsigned char *k = el + (el[4] | el[5] << 8);
    assert_memory_equal(k, "key", 3);
    k[2] = 'z';
    expect_refused(f, len, "no bucket \"key\"");
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_back),
        cmocka_unit_test(test_damage_is_refused),
        cmocka_unit_test(test_compactions),
        cmocka_unit_test(test_no_etcd_buckets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
