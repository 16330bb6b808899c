/*
 * test_etcdsnap.c - the bbolt reader and etcd's layout on top of it
 * (core/bbolt.h, core/etcdsnap.h), over files built by
 * tests/support/bbolt_image: the rows, leases and revisions come back as
 * written, across a branch page, through inline buckets, with either meta
 * page in use, with the compaction and revision etcd's restore would set; each kind of damage (a meta checksum, a page id, a page
 * reached twice, a truncation, keys out of order, a revision that is not
 * one, a key-value that is not etcd's, a bad protobuf) is refused with a
 * message. The writer (sk_bbolt_writer) makes a file of thousands of rows,
 * with branch pages and an overflowing value, that the reader takes whole.
 */
#include "bbolt_image.h"
#include "core/bbolt.h"
#include "core/etcdsnap.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* The writer's sink: a file in memory. */
typedef struct mem_file {
    unsigned char *p;
    size_t len;
} mem_file;

static sk_err mem_sink(void *arg, uint64_t off, const void *data, size_t len)
{
    mem_file *m = arg;
    if (off + len > m->len) {
        m->p = realloc(m->p, off + len);
        memset(m->p + m->len, 0xAB, off + len - m->len); /* gaps show as garbage */
        m->len = off + len;
    }
    memcpy(m->p + off, data, len);
    return SK_OK;
}

enum { WRITTEN_ROWS = 5000, BIG_ROW = 1234, BIG_VALUE = 20000 };

static void written_row(int i, bi_row *r, char *key, char *value)
{
    snprintf(key, 32, "/registry/k%05d", i);
    size_t n = i == BIG_ROW ? BIG_VALUE : (size_t)(i % 300);
    memset(value, 'a' + i % 26, n);
    value[n] = 0;
    *r = (bi_row){i + 2, 0, i % 97 == 5, key, value, 2, i + 2, 1, 0};
}

typedef struct written_seen {
    int n, bad;
} written_seen;

static sk_err on_written(void *arg, const sk_etcdsnap_kv *kv)
{
    written_seen *s = arg;
    static char key[32], value[BIG_VALUE + 1];
    bi_row r;
    written_row(s->n++, &r, key, value);
    if (kv->rev != r.rev || kv->tombstone != r.tombstone || kv->key_len != strlen(key) ||
        memcmp(kv->key, key, kv->key_len) != 0 ||
        (!r.tombstone && (kv->value_len != strlen(value) ||
                          memcmp(kv->value, value, kv->value_len) != 0)))
        s->bad++;
    return SK_OK;
}

static void test_writer_round_trip(void **state)
{
    (void)state;
    mem_file m = {0};
    sk_bbolt_writer *w = sk_bbolt_writer_new(4096, mem_sink, &m);
    static char key[32], value[BIG_VALUE + 1];
    static unsigned char proto[BIG_VALUE + 128];
    assert_int_equal(sk_bbolt_writer_bucket(w, "key", 3), SK_OK);
    for (int i = 0; i < WRITTEN_ROWS; i++) {
        bi_row r;
        written_row(i, &r, key, value);
        unsigned char rev[18] = {0};
        for (int b = 0; b < 8; b++)
            rev[7 - b] = (unsigned char)(r.rev >> (8 * b));
        rev[8] = '_';
        if (r.tombstone)
            rev[17] = 't';
        size_t n = bi_kv_proto(&r, proto);
        assert_int_equal(sk_bbolt_writer_put(w, rev, r.tombstone ? 18 : 17, proto, n), SK_OK);
    }
    assert_int_equal(sk_bbolt_writer_bucket(w, "lease", 5), SK_OK);
    const unsigned char lease_key[8] = {0, 0, 0, 0, 0, 0, 0, 7}, lease_val[] = {8, 7, 16, 60};
    assert_int_equal(sk_bbolt_writer_put(w, lease_key, 8, lease_val, sizeof lease_val), SK_OK);
    assert_int_equal(sk_bbolt_writer_bucket(w, "meta", 4), SK_OK); /* empty */
    uint64_t size = 0;
    assert_int_equal(sk_bbolt_writer_finish(w, 9, &size), SK_OK);
    sk_bbolt_writer_free(w);
    assert_int_equal(size, m.len);
    assert_int_equal(size % 4096, 0);
    /* every page written, none left as a gap: each header names its own id,
     * and its overflow pages follow it */
    for (size_t i = 0; i < m.len;) {
        assert_int_equal(m.p[i] | m.p[i + 1] << 8, i / 4096 & 0xffff);
        i += 4096 * (1 + (size_t)(m.p[i + 12] | m.p[i + 13] << 8));
    }

    sk_etcdsnap *snap = NULL;
    char *why = NULL;
    assert_int_equal(sk_etcdsnap_open(m.p, m.len, &snap, &why), SK_OK);
    const sk_etcdsnap_info *info = sk_etcdsnap_info_of(snap);
    assert_int_equal(info->rows, WRITTEN_ROWS);
    assert_int_equal(info->rev, WRITTEN_ROWS + 1);
    assert_int_equal(info->leases, 1);
    written_seen s = {0};
    assert_int_equal(sk_etcdsnap_each_kv(snap, on_written, &s), SK_OK);
    assert_int_equal(s.n, WRITTEN_ROWS);
    assert_int_equal(s.bad, 0);
    sk_etcdsnap_free(snap);
    free(m.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_back),
        cmocka_unit_test(test_damage_is_refused),
        cmocka_unit_test(test_compactions),
        cmocka_unit_test(test_no_etcd_buckets),
        cmocka_unit_test(test_writer_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
