/*
 * test_etcd_service.c - unary calls of the etcd face (etcd/service.h) on a
 * real SQLite store, where etcdctl cannot reach: LeaseGrant's checks and
 * codes; one exchange of the LeaseKeepAlive stream (sk_etcd_lease_keepalive,
 * which keepalive.c calls per message): it renews the stored expiry and
 * answers the granted TTL, or TTL 0 for an unknown lease (the stream
 * itself: tests/e2e/test_etcd.py); Maintenance Alarm: listed and disarmed,
 * there is none, and raising one is refused.
 */
#include "core/arena.h"
#include "core/util.h"
#include "etcd/rpc.pb-c.h"
#include "etcd/service.h"
#include "store/store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct fixture {
    char dir[64];
    char url[128];
    sk_store *store;
    sk_etcd_service svc;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    strcpy(f->dir, "/tmp/sk-etcd-service.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->url, sizeof f->url, "sqlite:%s/store.db", f->dir);
    char *msg = NULL;
    assert_int_equal(sk_store_open(f->url, &f->store, &msg), SK_OK);
    f->svc = (sk_etcd_service){.store = f->store,
                               .cluster_id = 1,
                               .self = {2, "test", "http://127.0.0.1:2379"},
                               .max_request_bytes = SK_ETCD_MAX_REQUEST_BYTES};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sk_store_close(f->store);
    static const char *const files[] = {"store.db", "store.db-wal", "store.db-shm"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[160];
        snprintf(path, sizeof path, "%s/%s", f->dir, files[i]);
        unlink(path);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

/* The unary call path with request req: the reply, its response (of type
 * resp) unpacked into *out when OK and out is given. */
static sk_etcd_reply call(fixture *f, sk_arena *a, const char *path, const ProtobufCMessage *req,
                          const ProtobufCMessageDescriptor *resp, void *out)
{
    uint8_t buf[64];
    assert_true(protobuf_c_message_get_packed_size(req) <= sizeof buf);
    size_t n = protobuf_c_message_pack(req, buf);
    sk_etcd_reply rep;
    sk_etcd_call(&f->svc, path, buf, n, a, &rep);
    if (rep.code == SK_GRPC_OK && out)
        *(ProtobufCMessage **)out = protobuf_c_message_unpack(resp, NULL, rep.body_len,
                                                                  sk_etcd_reply_bytes(&rep, a));
    return rep;
}

/* LeaseGrant(ttl, id): the reply, its response unpacked into *out when OK. */
static sk_etcd_reply grant(fixture *f, sk_arena *a, int64_t ttl, int64_t id,
                           Etcdserverpb__LeaseGrantResponse **out)
{
    Etcdserverpb__LeaseGrantRequest r = ETCDSERVERPB__LEASE_GRANT_REQUEST__INIT;
    r.ttl = ttl;
    r.id = id;
    return call(f, a, "/etcdserverpb.Lease/LeaseGrant", &r.base,
                &etcdserverpb__lease_grant_response__descriptor, out);
}

static Etcdserverpb__LeaseKeepAliveResponse *keepalive(fixture *f, sk_arena *a, int64_t id)
{
    Etcdserverpb__LeaseKeepAliveRequest r = ETCDSERVERPB__LEASE_KEEP_ALIVE_REQUEST__INIT;
    r.id = id;
    uint8_t buf[32];
    size_t n = etcdserverpb__lease_keep_alive_request__pack(&r, buf);
    sk_etcd_reply rep;
    sk_etcd_lease_keepalive(&f->svc, buf, n, a, &rep);
    assert_int_equal(rep.code, SK_GRPC_OK);
    Etcdserverpb__LeaseKeepAliveResponse *m =
        etcdserverpb__lease_keep_alive_response__unpack(NULL, rep.body_len,
                                                        sk_etcd_reply_bytes(&rep, a));
    assert_non_null(m);
    assert_non_null(m->header);
    return m;
}

static void test_grant_checks(void **state)
{
    fixture *f = *state;
    sk_arena *a = sk_arena_new();
    Etcdserverpb__LeaseGrantResponse *g = NULL;
    sk_etcd_reply rep = grant(f, a, 1, 0, &g);
    assert_int_equal(rep.code, SK_GRPC_OK);
    assert_non_null(g);
    assert_true(g->id > 0);
    assert_int_equal(g->ttl, SK_LEASE_MIN_TTL);
    etcdserverpb__lease_grant_response__free_unpacked(g, NULL);

    rep = grant(f, a, 60, 77, &g);
    assert_int_equal(rep.code, SK_GRPC_OK);
    assert_int_equal(g->id, 77);
    etcdserverpb__lease_grant_response__free_unpacked(g, NULL);
    rep = grant(f, a, 60, 77, NULL);
    assert_int_equal(rep.code, SK_GRPC_FAILED_PRECONDITION);
    assert_string_equal(rep.message, "etcdserver: lease already exists");
    rep = grant(f, a, SK_LEASE_MAX_TTL + 1, 0, NULL);
    assert_int_equal(rep.code, SK_GRPC_OUT_OF_RANGE);
    assert_string_equal(rep.message, "etcdserver: too large lease TTL");

    /* The stream is not routed as a unary call. */
    sk_etcd_call(&f->svc, "/etcdserverpb.Lease/LeaseKeepAlive", NULL, 0, a, &rep);
    assert_int_equal(rep.code, SK_GRPC_UNIMPLEMENTED);
    assert_string_equal(rep.message,
                        "unknown method LeaseKeepAlive for service etcdserverpb.Lease");
    sk_arena_free(a);
}

static void test_keepalive(void **state)
{
    fixture *f = *state;
    sk_arena *a = sk_arena_new();
    Etcdserverpb__LeaseGrantResponse *g = NULL;
    assert_int_equal(grant(f, a, 30, 0, &g).code, SK_GRPC_OK);
    int64_t id = g->id;
    etcdserverpb__lease_grant_response__free_unpacked(g, NULL);
    sk_lease before, after;
    assert_int_equal(sk_store_lease_get(f->store, id, &before), SK_OK);
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);

    Etcdserverpb__LeaseKeepAliveResponse *m = keepalive(f, a, id);
    assert_int_equal(m->id, id);
    assert_int_equal(m->ttl, 30);
    etcdserverpb__lease_keep_alive_response__free_unpacked(m, NULL);
    /* The expiry in the store moved: now + the granted TTL. */
    assert_int_equal(sk_store_lease_get(f->store, id, &after), SK_OK);
    assert_true(after.expires_at_ms > before.expires_at_ms);
    assert_true(after.expires_at_ms <= sk_wall_ms() + 30000);

    /* An unknown lease: TTL 0, not an error (etcd's answer). */
    m = keepalive(f, a, id + 1);
    assert_int_equal(m->id, id + 1);
    assert_int_equal(m->ttl, 0);
    etcdserverpb__lease_keep_alive_response__free_unpacked(m, NULL);
    sk_arena_free(a);
}

/* Maintenance Alarm with action and alarm type: the reply, its response
 * unpacked into *out when OK. */
static sk_etcd_reply call_alarm(fixture *f, sk_arena *a,
                                Etcdserverpb__AlarmRequest__AlarmAction action,
                                Etcdserverpb__AlarmType type, Etcdserverpb__AlarmResponse **out)
{
    Etcdserverpb__AlarmRequest r = ETCDSERVERPB__ALARM_REQUEST__INIT;
    r.action = action;
    r.alarm = type;
    r.memberid = 2;
    return call(f, a, "/etcdserverpb.Maintenance/Alarm", &r.base,
                &etcdserverpb__alarm_response__descriptor, out);
}

static void test_alarm(void **state)
{
    fixture *f = *state;
    sk_arena *a = sk_arena_new();
    Etcdserverpb__AlarmResponse *got = NULL;
    static const Etcdserverpb__AlarmRequest__AlarmAction answered[] = {
        ETCDSERVERPB__ALARM_REQUEST__ALARM_ACTION__GET,
        ETCDSERVERPB__ALARM_REQUEST__ALARM_ACTION__DEACTIVATE};
    for (size_t i = 0; i < 2; i++) {
        for (int type = 0; type <= 2; type++) {
            sk_etcd_reply rep = call_alarm(f, a, answered[i], (Etcdserverpb__AlarmType)type, &got);
            assert_int_equal(rep.code, SK_GRPC_OK);
            assert_non_null(got);
            assert_int_equal(got->n_alarms, 0);
            assert_non_null(got->header);
            assert_true(got->header->member_id == 2 && got->header->cluster_id == 1);
            etcdserverpb__alarm_response__free_unpacked(got, NULL);
        }
    }
    sk_etcd_reply rep = call_alarm(f, a, ETCDSERVERPB__ALARM_REQUEST__ALARM_ACTION__ACTIVATE,
                                   ETCDSERVERPB__ALARM_TYPE__NOSPACE, NULL);
    assert_int_equal(rep.code, SK_GRPC_UNIMPLEMENTED);
    assert_string_equal(rep.message, "sqlkube: alarms are not raised on this store");
    /* and none was raised */
    rep = call_alarm(f, a, ETCDSERVERPB__ALARM_REQUEST__ALARM_ACTION__GET,
                     ETCDSERVERPB__ALARM_TYPE__NONE, &got);
    assert_int_equal(rep.code, SK_GRPC_OK);
    assert_int_equal(got->n_alarms, 0);
    etcdserverpb__alarm_response__free_unpacked(got, NULL);
    sk_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_grant_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keepalive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alarm, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
