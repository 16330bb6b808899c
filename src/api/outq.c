/*
 * outq.c - see outq.h. Text is sealed into a segment lazily (when a blob
 * is queued or output is read), so callers render with plain sk_buf calls.
 * Once everything is read the text buffer is emptied, keeping its capacity
 * bounded by what one step renders.
 */
#include "api/outq.h"
#include "core/check.h"

#include <stdlib.h>
#include <string.h>

struct outq_seg {
    sk_blob *blob;     /* NULL: a range of text */
    const char *bytes; /* of blob, which keeps them alive; NULL for text */
    size_t off, len;   /* off: into bytes, or into the text */
};

static void push_seg(sk_outq *q, sk_blob *blob, const char *bytes, size_t off, size_t len)
{
    if (q->head + q->n_segs == q->cap_segs) {
        if (q->head > 0) {
            memmove(q->segs, q->segs + q->head, q->n_segs * sizeof *q->segs);
            q->head = 0;
        } else {
            q->cap_segs = q->cap_segs ? q->cap_segs * 2 : 8;
            q->segs = realloc(q->segs, q->cap_segs * sizeof *q->segs);
            SK_CHECK_ALLOC(q->segs);
        }
    }
    q->segs[q->head + q->n_segs++] = (outq_seg){blob, bytes, off, len};
}

static void seal_text(sk_outq *q)
{
    if (q->text.len > q->sealed) {
        push_seg(q, NULL, NULL, q->sealed, q->text.len - q->sealed);
        q->sealed = q->text.len;
    }
}

void sk_outq_blob_bytes(sk_outq *q, sk_blob *blob, const char *data, size_t len)
{
    seal_text(q);
    push_seg(q, sk_blob_ref(blob), data, 0, len);
    q->blob_bytes += len;
}

void sk_outq_blob_from(sk_outq *q, sk_blob *blob, size_t off)
{
    size_t len;
    const char *data = sk_blob_data(blob, &len);
    SK_CHECK(off <= len);
    sk_outq_blob_bytes(q, blob, data + off, len - off);
}

void sk_outq_blob(sk_outq *q, sk_blob *blob)
{
    sk_outq_blob_from(q, blob, 0);
}

void sk_outq_append(sk_outq *dst, sk_outq *src)
{
    seal_text(src);
    SK_CHECK(src->seg_pos == 0); /* src was never read from */
    for (size_t i = 0; i < src->n_segs; i++) {
        outq_seg *s = &src->segs[src->head + i];
        if (s->blob) {
            seal_text(dst);
            push_seg(dst, s->blob, s->bytes, s->off, s->len); /* the reference moves */
            dst->blob_bytes += s->len;
        } else {
            sk_buf_append(&dst->text, src->text.data + s->off, s->len);
        }
    }
    src->n_segs = src->head = src->blob_bytes = 0;
    sk_buf_reset(&src->text);
    src->sealed = 0;
}

size_t sk_outq_size(const sk_outq *q)
{
    return q->text.len + q->blob_bytes;
}

size_t sk_outq_read(sk_outq *q, char *buf, size_t max)
{
    seal_text(q);
    size_t done = 0;
    while (done < max && q->n_segs > 0) {
        outq_seg *s = &q->segs[q->head];
        const char *src = (s->bytes ? s->bytes : q->text.data) + s->off;
        size_t n = s->len - q->seg_pos;
        if (n > max - done)
            n = max - done;
        memcpy(buf + done, src + q->seg_pos, n);
        done += n;
        q->seg_pos += n;
        if (q->seg_pos == s->len) {
            if (s->blob) {
                q->blob_bytes -= s->len;
                sk_blob_unref(s->blob);
            }
            q->head++;
            q->n_segs--;
            q->seg_pos = 0;
        }
    }
    if (q->n_segs == 0) {
        q->head = 0;
        sk_buf_reset(&q->text);
        q->sealed = 0;
    }
    return done;
}

/* Drops everything queued. */
static void outq_reset(sk_outq *q)
{
    for (size_t i = 0; i < q->n_segs; i++)
        sk_blob_unref(q->segs[q->head + i].blob);
    q->n_segs = q->head = q->seg_pos = q->blob_bytes = 0;
    sk_buf_reset(&q->text);
    q->sealed = 0;
}

void sk_outq_free(sk_outq *q)
{
    outq_reset(q);
    free(q->segs);
    sk_buf_free(&q->text);
    q->segs = NULL;
    q->cap_segs = 0;
}
