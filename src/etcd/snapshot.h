/*
 * snapshot.h - the Maintenance Snapshot method (`etcdctl snapshot save`):
 * the store's etcd keyspace at one revision, streamed as the bbolt file an
 * etcd member would have written, so that `etcdctl snapshot status` reads
 * it and `etcdctl snapshot restore` makes an etcd member of it with the
 * same keys, values and revisions.
 *
 * A server-streaming call on the transport's stream API (stream.h): the
 * request starts it, the file goes out in etcd's 32 KiB chunks, each with
 * the bytes that remain, then one message holding the file's SHA-256, as
 * etcd ends its snapshots (restore checks it), then the call ends OK.
 */
#ifndef SK_ETCD_SNAPSHOT_H
#define SK_ETCD_SNAPSHOT_H

#include "etcd/stream.h"

/* For the transport's table of streaming methods. */
extern const sk_etcd_stream_ops sk_etcd_snapshot_ops;

#endif
