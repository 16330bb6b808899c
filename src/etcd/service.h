/*
 * service.h - the etcd v3 services the face serves, one unary call at a
 * time: KV (Range, Put, DeleteRange, Txn, Compact), Lease (LeaseGrant,
 * LeaseRevoke, LeaseTimeToLive, LeaseLeases), Maintenance Status and Alarm
 * (never an alarm: service.c says why), Cluster MemberList (the instances
 * on the store: members.h). Every other path answers Unimplemented, as a
 * gRPC server without that service does. The streaming methods (Watch, LeaseKeepAlive) are stream.h's,
 * served by watch.c and keepalive.c; LeaseKeepAlive's exchanges are
 * sk_etcd_lease_keepalive's.
 *
 * A call is: the gRPC path, the request message (protobuf, unframed), an
 * arena for everything the call makes; the reply is a status and, on OK,
 * the response message. It blocks on the store, so the transport runs it on
 * a worker thread, never on its I/O loop.
 *
 * Requests are checked as etcd's gRPC layer checks them (empty key, too many
 * operations, duplicate keys in a transaction, request size), with etcd's
 * codes and messages, before anything reaches the store; store errors map to
 * etcd's (compacted, future revision, key not found).
 */
#ifndef SK_ETCD_SERVICE_H
#define SK_ETCD_SERVICE_H

#include "core/arena.h"
#include "etcd/grpc.h"
#include "etcd/members.h"
#include "etcd/rpc.pb-c.h"
#include "store/store.h"

#include <stddef.h>
#include <stdint.h>

/* etcd's default --max-request-bytes (1.5 MiB) and --max-txn-ops. */
#define SK_ETCD_MAX_REQUEST_BYTES (1536 * 1024)
#define SK_ETCD_MAX_TXN_OPS 128
/* etcd's gRPC limits are the request limit plus this overhead: the largest
 * message it receives, and the size past which a watch that asked for
 * fragments gets a revision's events in several responses. */
#define SK_ETCD_GRPC_OVERHEAD_BYTES (512 * 1024)
/* The version Status reports: a 3.5 release, so that clients (kube-apiserver's
 * watch cache) enable what they gate on it, such as progress requests. */
#define SK_ETCD_VERSION "3.5.17"

struct sk_etcd_watches;

typedef struct sk_etcd_service {
    sk_store *store; /* borrowed */
    uint64_t cluster_id;
    sk_etcd_member self; /* this instance; self.id is every header's member_id */
    size_t max_request_bytes;
    struct sk_etcd_watches *watches; /* the Watch service's registry (watch.h) */
} sk_etcd_service;

/* A run of a reply's bytes. */
typedef struct sk_etcd_piece {
    const uint8_t *data;
    size_t len;
} sk_etcd_piece;

typedef struct sk_etcd_reply {
    sk_grpc_code code;
    const char *message; /* static or in the arena; NULL on OK */
    /* OK: the response message (arena), unframed: body_len bytes in
     * npieces runs, in order. One run, but for a Range packed as the store
     * read its rows (service.c), which is never copied into one. */
    const sk_etcd_piece *pieces;
    size_t npieces, body_len;
} sk_etcd_reply;

/* r's message in one run: its one piece, or the pieces joined in a. */
const uint8_t *sk_etcd_reply_bytes(const sk_etcd_reply *r, sk_arena *a);

/* A version row as etcd's backend stores it in bucket "key" (HashKV hashes
 * these bytes, Snapshot writes them). The key: the revision as 8 bytes of
 * main and 8 of sub, big-endian, joined by '_' and followed by 't' for a
 * tombstone; returns its length. The value: the mvccpb.KeyValue etcd
 * marshals (a tombstone's holds only the key), new, *len_out bytes. */
#define SK_ETCD_BOLT_KEY_MAX 18
/* v as 8 bytes big-endian at out: how etcd's backend writes revisions and
 * lease ids in its keys. */
void sk_etcd_put_be64(unsigned char *out, uint64_t v);
size_t sk_etcd_bolt_key(const sk_kv_row *row, unsigned char out[SK_ETCD_BOLT_KEY_MAX]);
uint8_t *sk_etcd_bolt_value(const sk_kv_row *row, size_t *len_out);

/* Fills an etcd response header for revision rev (this member, term 1). */
void sk_etcd_header_init(const sk_etcd_service *svc, Etcdserverpb__ResponseHeader *h, int64_t rev);

/* Serves one call; *out is always set. */
void sk_etcd_call(const sk_etcd_service *svc, const char *path, const uint8_t *msg, size_t len,
                  sk_arena *a, sk_etcd_reply *out);

/* Completion of sk_etcd_call_async: *out is set. */
typedef void (*sk_etcd_done_fn)(void *arg);

/*
 * Serves a write call (Put, DeleteRange, Txn) without blocking: its request
 * is checked at once and its transaction queued on the store's writer, and
 * done(arg) runs exactly once when *out is set: at once (from this call)
 * when the request fails its checks, else on the store's writer thread
 * after the commit, so done must not block (hand the reply over). The
 * writer uses arena a meanwhile: nothing else may touch it until done.
 * Returns 0, doing nothing, for any other path: serve that with
 * sk_etcd_call. The writes need no thread of their own while they wait for
 * their commit, so the transport takes them on its I/O thread.
 */
int sk_etcd_call_async(const sk_etcd_service *svc, const char *path, const uint8_t *msg,
                       size_t len, sk_arena *a, sk_etcd_reply *out, sk_etcd_done_fn done,
                       void *arg);

/*
 * One exchange of the LeaseKeepAlive stream: a LeaseKeepAliveRequest (msg,
 * unframed) renews the lease (its expiry becomes now + its granted TTL, in
 * the store) and *out is the LeaseKeepAliveResponse (ID, TTL: the granted
 * TTL; 0 for an unknown or expired lease, as etcd answers, not an error).
 * A store failure is a failed status, which ends the stream. Blocks on the
 * store like sk_etcd_call: keepalive.c runs it on the stream's worker, once
 * per received message, and sends each reply on the response stream.
 */
void sk_etcd_lease_keepalive(const sk_etcd_service *svc, const uint8_t *msg, size_t len,
                             sk_arena *a, sk_etcd_reply *out);

#endif
