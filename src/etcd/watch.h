/*
 * watch.h - etcd's Watch service (/etcdserverpb.Watch/Watch), a streaming
 * method (stream.h): one stream carries many watches, each created,
 * canceled and asked for progress by the client's messages.
 *
 * Model. A watch is a cursor: `next`, the revision from which it still owes
 * events (every event below it has been sent or filtered out). Revisions
 * are global and gap-free, so there is nothing else to remember per watch:
 * no event buffer. One feed thread per server (the registry below) moves
 * every cursor: it waits on the watch cache's feed (which follows every
 * instance's commits, PostgreSQL ones through LISTEN/NOTIFY), reads the
 * etcd writes of a span of revisions ONCE (sk_store_kv_changes: rows and
 * their previous versions, one statement) from the lowest cursor that is
 * behind, and hands every watch whose cursor lies in that span its events,
 * a response per revision, or several revisions per response for a watch
 * that fell behind (a revision's events are never split), then moves its
 * cursor past the span. A watch created with an old start revision, and a
 * watch whose stream's send queue is full, simply stay behind; the next
 * round reads from their cursor again: the "unsynced" watchers of etcd,
 * served from SQL history rather than buffered. A cursor below the
 * compacted revision ends the watch as etcd does (canceled with
 * compact_revision). A start revision in the future waits for it.
 *
 * Progress. A WatchProgressRequest is answered (watch_id -1, the feed's
 * revision) once every watch of the stream has caught up with that
 * revision; a watch with progress_notify gets an empty response with its
 * id every interval in which it had no events, once caught up.
 *
 * Threads. The registry's lock guards every stream's watches and cursors;
 * the feed reads SQL without it and sends (never blocking: stream.h) with
 * it, so responses of one watch leave in order and none follows its
 * cancel. Requests are handled on the transport's workers.
 */
#ifndef SK_ETCD_WATCH_H
#define SK_ETCD_WATCH_H

#include "cache/cache.h"
#include "etcd/service.h"
#include "etcd/stream.h"

/* etcd's default progress notification interval. */
#define SK_ETCD_PROGRESS_MS (10 * 60 * 1000)

typedef struct sk_etcd_watches sk_etcd_watches;

/* Starts the registry and its feed thread. svc and cache are borrowed and
 * outlive it. progress_ms 0: SK_ETCD_PROGRESS_MS. */
sk_etcd_watches *sk_etcd_watches_start(const sk_etcd_service *svc, sk_cache *cache,
                                       int progress_ms);
/* Stops the feed. Every stream must have closed (on_close ran). NULL-safe. */
void sk_etcd_watches_stop(sk_etcd_watches *w);

/* The Watch method, for the transport's table (state: svc->watches). */
extern const sk_etcd_stream_ops sk_etcd_watch_ops;

#endif
