/*
 * kv.h - the etcd v3 keyspace's records: byte keys and values with etcd's
 * per-key revisions, range requests, and transactions (compares, then one
 * list of operations or the other), as the store applies them.
 *
 * The store speaks etcd's data model here (it is what the table holds) but
 * knows nothing of gRPC or protobuf: src/etcd translates messages to these
 * structs and back.
 *
 * Ranges follow etcd's convention, so the face passes them through:
 * end_len == 0 names the single key `key`; an end of one NUL byte means
 * every key >= key; otherwise [key, end) in bytewise order.
 *
 * Memory. Request structs are borrowed by the store for the call. Results
 * are allocated in the arena the caller passes (the writer thread fills it
 * while the caller waits for the completion callback).
 */
#ifndef SK_STORE_KV_H
#define SK_STORE_KV_H

#include <stddef.h>
#include <stdint.h>

/* One version of a key (etcd's mvccpb.KeyValue). */
typedef struct sk_kv {
    const unsigned char *key;
    size_t key_len;
    const unsigned char *value;
    size_t value_len;
    int64_t create_rev;
    int64_t mod_rev;
    int64_t version;
    int64_t lease;
} sk_kv;

typedef struct sk_kv_range {
    const unsigned char *key, *end;
    size_t key_len, end_len;
    int64_t rev;    /* 0: the current revision */
    int64_t limit;  /* 0: no limit */
    int count_only; /* no key-values, only count */
    int keys_only;  /* key-values without values */
} sk_kv_range;

typedef struct sk_kv_range_result {
    sk_kv *kvs;    /* NULL when they were handed to a callback instead */
    int64_t n_kvs; /* key-values returned (or handed over) */
    int64_t count; /* keys in the range at that revision, whatever the limit */
    int more;      /* a limit left keys out */
    /* the last key returned (n_kvs > 0), a copy: where the next page starts */
    const unsigned char *last_key;
    size_t last_key_len;
} sk_kv_range_result;

typedef enum { SK_KV_VERSION, SK_KV_CREATE, SK_KV_MOD, SK_KV_VALUE, SK_KV_LEASE } sk_kv_target;
typedef enum { SK_KV_EQUAL, SK_KV_GREATER, SK_KV_LESS, SK_KV_NOT_EQUAL } sk_kv_cmp_result;

/* Holds when every key in the range compares as asked; an absent key (or an
 * empty range) compares as a key-value of zeroes, except that a VALUE compare
 * then fails (as etcd does). */
typedef struct sk_kv_compare {
    sk_kv_target target;
    sk_kv_cmp_result result;
    const unsigned char *key, *end;
    size_t key_len, end_len;
    int64_t number; /* VERSION, CREATE, MOD, LEASE */
    const unsigned char *value;
    size_t value_len;
} sk_kv_compare;

typedef enum { SK_KV_OP_RANGE, SK_KV_OP_PUT, SK_KV_OP_DELETE, SK_KV_OP_TXN } sk_kv_op_kind;

struct sk_kv_txn;

typedef struct sk_kv_op {
    sk_kv_op_kind kind;
    sk_kv_range range; /* RANGE; PUT and DELETE use its key (and DELETE its end) */
    /* PUT */
    const unsigned char *value;
    size_t value_len;
    /* non-zero: the lease must exist, else SK_ERR_NOT_FOUND */
    int64_t lease;
    int ignore_value, ignore_lease; /* keep the current value / lease: the key
                                       must exist, else SK_ERR_BAD_REQUEST */
    int prev_kv;                    /* PUT, DELETE: return what was replaced */
    const struct sk_kv_txn *txn;    /* TXN */
} sk_kv_op;

typedef struct sk_kv_txn {
    const sk_kv_compare *compares;
    int n_compares;
    const sk_kv_op *success;
    int n_success;
    const sk_kv_op *failure;
    int n_failure;
} sk_kv_txn;

struct sk_kv_txn_result;

typedef struct sk_kv_op_result {
    sk_kv_op_kind kind;
    /* The revision as this operation left it: the transaction's revision
     * once one of its writes has run, the one before it until then (what
     * etcd reports in each response's header). */
    int64_t rev;
    sk_kv_range_result range; /* RANGE */
    sk_kv *prev;              /* PUT with prev_kv: the replaced version, NULL if none */
    int64_t deleted;          /* DELETE: keys deleted */
    sk_kv *prev_kvs;          /* DELETE with prev_kv: the deleted versions */
    struct sk_kv_txn_result *txn; /* TXN */
} sk_kv_op_result;

typedef struct sk_kv_txn_result {
    int succeeded; /* the compares held: the success ops ran */
    sk_kv_op_result *results;
    int n_results;
    int64_t rev; /* the store's revision after the transaction */
} sk_kv_txn_result;

/*
 * Leases (etcd's lessor, stored: table sk_lease). A lease expires at an
 * absolute time recorded in the store, so a restart keeps its clock; its
 * keys are the live key-values whose lease field names it (a key re-put
 * without the lease, or deleted, leaves it). TTLs are in seconds, times in
 * ms since the Unix epoch.
 */
typedef struct sk_lease {
    int64_t id;
    int64_t ttl; /* granted (after the minimum was applied) */
    int64_t expires_at_ms;
} sk_lease;

/* etcd's bounds with its default election settings: 3/2 of the 1 s election
 * timeout, rounded up to seconds; lease.MaxLeaseTTL. */
#define SK_LEASE_MIN_TTL 2
#define SK_LEASE_MAX_TTL 9000000000LL

typedef enum {
    /* Grant: id 0 picks an unused positive id; SK_ERR_ALREADY_EXISTS if id
     * is taken. ttl below the minimum is raised to it (the caller refuses
     * one over the maximum). Takes no revision. */
    SK_LEASE_GRANT,
    /* Revoke: deletes the lease's keys at ONE revision (none if it has no
     * keys) and the lease. SK_ERR_NOT_FOUND if there is no such lease. */
    SK_LEASE_REVOKE,
    /* Renew (a keep-alive): expiry = now + ttl. SK_ERR_NOT_FOUND if there is
     * no such lease or it has expired (its collection is due). */
    SK_LEASE_RENEW,
    /* Expire: a revoke that happens only if the lease's expiry is at or
     * before now_ms, judged in the writer's transaction: SK_ERR_NOT_FOUND if
     * it is gone (revoked, or expired by another process), SK_ERR_CONFLICT
     * if it was renewed. So of several processes exactly one expires it. */
    SK_LEASE_EXPIRE,
} sk_lease_op_kind;

typedef struct sk_lease_op {
    sk_lease_op_kind kind;
    int64_t id;
    int64_t ttl;    /* GRANT */
    int64_t now_ms; /* the clock the expiry is computed or judged against */
} sk_lease_op;

typedef struct sk_lease_result {
    sk_lease lease;  /* GRANT, RENEW: the lease as written */
    int64_t rev;     /* the store's revision after the operation */
    int64_t deleted; /* REVOKE, EXPIRE: keys deleted */
} sk_lease_result;

/* A version row as the backends store it. */
typedef struct sk_kv_row {
    sk_kv kv; /* kv.mod_rev is the row's revision */
    int sub;
    int deleted;
} sk_kv_row;

/* A version row decoded for people reading SQL (table sk_kv_doc, shown by
 * the views sk_kv_history and sk_kv_latest): what the key and the value
 * say in kube-apiserver's layout (kube/etcdkey.h). Strings borrowed, NULL
 * for none; doc is JSON text. */
typedef struct sk_kv_doc {
    int64_t rev;
    int sub;
    const char *key_text, *group, *resource, *ns, *name;
    const char *encoding, *kind, *api_version, *doc;
} sk_kv_doc;

/* Visitor over version rows; row and its bytes are borrowed for the call.
 * Return non-zero to stop. */
typedef int (*sk_kv_row_fn)(void *arg, const sk_kv_row *row);
/* Visitor over key-values; kv and its bytes are borrowed for the call.
 * Return non-zero to stop. */
typedef int (*sk_kv_fn)(void *arg, const sk_kv *kv);
/* Visitor over leases, likewise. */
typedef int (*sk_lease_fn)(void *arg, const sk_lease *l);

/* Visitor over the writes of the keyspace in revision order (what an etcd
 * watcher sees): row is the version written (a tombstone when
 * row->deleted), prev the live version it replaced (NULL if the key was
 * absent). Both borrowed for the call. Return non-zero to stop. */
typedef int (*sk_kv_change_fn)(void *arg, const sk_kv_row *row, const sk_kv *prev);

#endif
