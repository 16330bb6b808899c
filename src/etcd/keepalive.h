/*
 * keepalive.h - the LeaseKeepAlive method (etcd's Lease service): a
 * bidirectional stream on which each LeaseKeepAliveRequest renews a lease
 * and is answered by one LeaseKeepAliveResponse, in order.
 *
 * The exchange itself is service.h's (sk_etcd_lease_keepalive: the renewal
 * goes through the store's writer, the expiry it writes is stored); this
 * module only carries it over the transport's stream API (stream.h). A
 * store failure ends the stream with its status, as etcd's does.
 */
#ifndef SK_ETCD_KEEPALIVE_H
#define SK_ETCD_KEEPALIVE_H

#include "etcd/stream.h"

/* For the transport's table of streaming methods. */
extern const sk_etcd_stream_ops sk_etcd_lease_keepalive_ops;

#endif
