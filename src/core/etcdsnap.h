/*
 * etcdsnap.h - etcd's keyspace as a bbolt file holds it (a member's
 * member/snap/db, or what `etcdctl snapshot save` writes): every version
 * row of bucket "key", the leases of bucket "lease", and the revisions of
 * bucket "meta". Pure: it reads the bytes the caller hands it.
 *
 * sk_etcdsnap_open reads the whole file once, checking every row (revision
 * keys, mvccpb.KeyValue and leasepb.Lease messages, revision order), so a
 * file it accepts is fully readable: the visits afterwards fail only if the
 * visitor does. Where etcd 3.4/3.5 restores a member from such a file, the
 * revision and compaction it sets are the ones reported here.
 */
#ifndef SK_CORE_ETCDSNAP_H
#define SK_CORE_ETCDSNAP_H

#include "core/err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sk_etcdsnap sk_etcdsnap;

/* One version row. For a tombstone (a delete) only key, rev and sub mean
 * anything; the rest is 0 or empty, as etcd writes it. */
typedef struct sk_etcdsnap_kv {
    int64_t rev; /* etcd's main revision: the row's mod_revision */
    int32_t sub; /* its position within that revision's transaction */
    int tombstone;
    const unsigned char *key, *value; /* borrowed from the file's bytes */
    size_t key_len, value_len;
    int64_t create_rev, version, lease;
} sk_etcdsnap_kv;

typedef struct sk_etcdsnap_info {
    /* The revision etcd restores: the newest row's, or the compaction's
     * if that is newer (its rows may all have gone). */
    int64_t rev;
    /* The compaction in effect (the scheduled one: a member resumes it on
     * start), and how far its rows were removed (finished). */
    int64_t compact_rev, compact_finished;
    int64_t consistent_index;
    int64_t rows, tombstones, leases;
} sk_etcdsnap_info;

/* Reads and checks the len bytes at data (borrowed: they must outlive the
 * handle). SK_ERR_INVALID with *errmsg new if they are not such a file. */
sk_err sk_etcdsnap_open(const unsigned char *data, size_t len, sk_etcdsnap **out, char **errmsg);
void sk_etcdsnap_free(sk_etcdsnap *s);
const sk_etcdsnap_info *sk_etcdsnap_info_of(const sk_etcdsnap *s);

/* Visits every version row in revision order ((rev, sub) ascending). kv
 * borrowed for the call; a non-OK return stops and is returned. */
typedef sk_err (*sk_etcdsnap_kv_fn)(void *arg, const sk_etcdsnap_kv *kv);
sk_err sk_etcdsnap_each_kv(const sk_etcdsnap *s, sk_etcdsnap_kv_fn fn, void *arg);

/* Visits every lease (id > 0, its granted TTL in seconds) in id order. */
typedef sk_err (*sk_etcdsnap_lease_fn)(void *arg, int64_t id, int64_t ttl);
sk_err sk_etcdsnap_each_lease(const sk_etcdsnap *s, sk_etcdsnap_lease_fn fn, void *arg);

#endif
