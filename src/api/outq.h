/*
 * outq.h - a streamed response's pending output: small rendered text plus
 * references to the watch cache's shared object bytes.
 *
 * Why: a list or watch stream of large objects must not copy each object
 * into a per-client buffer (64 watchers x 1 MiB objects would be 64 copies).
 * Text (list framing, event prefixes, Table rows) is rendered into `text`
 * with the sk_buf API; an object from the cache is queued as a reference to
 * its immutable blob and copied only into the HTTP layer's own send buffer
 * as the socket drains. Memory per stream: the text rendered so far plus
 * pointers.
 *
 * Order: everything appended to `text` before sk_outq_blob precedes the
 * blob, everything after follows it.
 */
#ifndef SK_API_OUTQ_H
#define SK_API_OUTQ_H

#include "cache/cache.h"
#include "core/buf.h"

#include <stddef.h>
#include <sys/types.h>

typedef struct outq_seg outq_seg;

typedef struct sk_outq {
    sk_buf text;    /* append rendered text here */
    size_t sealed;  /* text before this offset belongs to queued segments */
    outq_seg *segs; /* FIFO of text ranges and blob references */
    size_t n_segs, cap_segs, head;
    size_t seg_pos;    /* bytes of segs[head] already read */
    size_t blob_bytes; /* bytes of queued blobs not yet read */
} sk_outq;

#define SK_OUTQ_INIT                                                                               \
    {                                                                                              \
        SK_BUF_INIT, 0, NULL, 0, 0, 0, 0, 0                                                        \
    }

/* Queues blob (borrowed; the queue takes its own reference) after the text
 * appended so far. */
void sk_outq_blob(sk_outq *q, sk_blob *blob);
/* The same for the blob's bytes from offset off (at most its length) on. */
void sk_outq_blob_from(sk_outq *q, sk_blob *blob, size_t off);
/* The same for bytes the blob keeps alive (its derived encoding,
 * cache/blob.h): data/len are borrowed from blob. */
void sk_outq_blob_bytes(sk_outq *q, sk_blob *blob, const char *data, size_t len);
/* Moves everything src holds, unread, to the end of dst; src is left empty
 * (and may be reused). For output whose head is known only once its body
 * is: the body is queued in src first. */
void sk_outq_append(sk_outq *dst, sk_outq *src);
/* Bytes held: rendered text (read or not, until the queue drains) plus
 * queued blobs. What a producer compares against its budget. */
size_t sk_outq_size(const sk_outq *q);
/* Copies up to max queued bytes into buf; 0 when empty. */
size_t sk_outq_read(sk_outq *q, char *buf, size_t max);
void sk_outq_free(sk_outq *q);

#endif
