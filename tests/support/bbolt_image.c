/*
 * bbolt_image.c - see bbolt_image.h. Written from the format's description,
 * independently of core/bbolt.c, so that the two cannot share a mistake
 * unseen.
 */
#include "bbolt_image.h"

#include <stdlib.h>
#include <string.h>

static void le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void be(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (56 - 8 * i));
}

static size_t varint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    do {
        p[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

static size_t field_varint(unsigned char *p, int field, int64_t v)
{
    if (!v)
        return 0;
    size_t n = varint(p, (uint64_t)field << 3);
    return n + varint(p + n, (uint64_t)v);
}

static size_t field_bytes(unsigned char *p, int field, const char *s)
{
    if (!s)
        return 0;
    size_t len = strlen(s), n = varint(p, (uint64_t)field << 3 | 2);
    n += varint(p + n, len);
    memcpy(p + n, s, len);
    return n + len;
}

size_t bi_kv_proto(const bi_row *r, unsigned char *out)
{
    size_t n = field_bytes(out, 1, r->key);
    if (r->tombstone)
        return n;
    n += field_varint(out + n, 2, r->create_rev);
    n += field_varint(out + n, 3, r->mod_rev);
    n += field_varint(out + n, 4, r->version);
    n += field_bytes(out + n, 5, r->value);
    return n + field_varint(out + n, 6, r->lease);
}

typedef struct ent {
    uint32_t flags;
    const unsigned char *k, *v;
    size_t klen, vlen;
} ent;

/* A leaf page (id) of n entries at p; returns its length. */
static size_t leaf(unsigned char *p, uint64_t id, const ent *e, int n)
{
    le(p, id, 8);
    le(p + 8, 2, 2);
    le(p + 10, (uint64_t)n, 2);
    le(p + 12, 0, 4);
    size_t data = 16 + 16 * (size_t)n;
    for (int i = 0; i < n; i++) {
        unsigned char *el = p + 16 + 16 * i;
        le(el, e[i].flags, 4);
        le(el + 4, data - (size_t)(el - p), 4);
        le(el + 8, e[i].klen, 4);
        le(el + 12, e[i].vlen, 4);
        memcpy(p + data, e[i].k, e[i].klen);
        memcpy(p + data + e[i].klen, e[i].v, e[i].vlen);
        data += e[i].klen + e[i].vlen;
    }
    return data;
}

void bi_fix_meta(unsigned char *file, size_t off)
{
    const unsigned char *m = file + off + 16;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 56; i++) {
        h ^= m[i];
        h *= 0x100000001b3ull;
    }
    le(file + off + 16 + 56, h, 8);
}

static void meta(unsigned char *p, uint64_t id, uint64_t pages, uint64_t txid)
{
    le(p, id, 8);
    le(p + 8, 4, 2);
    unsigned char *m = p + 16;
    le(m, 0xED0CDAEDu, 4);
    le(m + 4, 2, 4);
    le(m + 8, BI_PAGE, 4);
    le(m + 16, 3, 8); /* root bucket's page */
    le(m + 32, 2, 8); /* freelist */
    le(m + 40, pages, 8);
    le(m + 48, txid, 8);
}

/* The key bucket's rows [from, to) as a leaf page (id) at p. */
static void key_leaf(unsigned char *p, uint64_t id, const bi_row *rows, int from, int to)
{
    int n = to - from;
    ent *e = calloc((size_t)n + 1, sizeof *e);
    unsigned char(*keys)[18] = calloc((size_t)n + 1, 18);
    unsigned char *vals = calloc((size_t)n + 1, BI_PAGE);
    for (int i = 0; i < n; i++) {
        const bi_row *r = &rows[from + i];
        be(keys[i], (uint64_t)r->rev);
        keys[i][8] = '_';
        be(keys[i] + 9, (uint64_t)r->sub);
        keys[i][17] = 't';
        size_t vlen = bi_kv_proto(r, vals + (size_t)i * BI_PAGE);
        e[i] = (ent){0, keys[i], vals + (size_t)i * BI_PAGE, r->tombstone ? 18 : 17, vlen};
    }
    leaf(p, id, e, n);
    free(e);
    free(keys);
    free(vals);
}

unsigned char *bi_build(const bi_spec *s, size_t *len)
{
    uint64_t pages = s->split > 0 ? 7 : 5;
    unsigned char *f = calloc(pages, BI_PAGE);
    meta(f, 0, pages, 4);
    meta(f + BI_PAGE, 1, pages, 5);
    bi_fix_meta(f, 0);
    bi_fix_meta(f, BI_PAGE);
    le(f + 2 * BI_PAGE, 2, 8);
    le(f + 2 * BI_PAGE + 8, 0x10, 2);
    if (s->split > 0) {
        unsigned char *b = f + 4 * BI_PAGE;
        le(b, 4, 8);
        le(b + 8, 1, 2);
        le(b + 10, 2, 2);
        for (int i = 0; i < 2; i++) { /* keys are not read by the walk: left empty */
            le(b + 16 + 16 * i + 4, 0, 4);
            le(b + 16 + 16 * i + 8, 5 + (uint64_t)i, 8);
        }
        key_leaf(f + 5 * BI_PAGE, 5, s->rows, 0, s->split);
        key_leaf(f + 6 * BI_PAGE, 6, s->rows, s->split, s->n_rows);
    } else {
        key_leaf(f + 4 * BI_PAGE, 4, s->rows, 0, s->n_rows);
    }
    /* inline buckets: 16-byte header (root 0) and a leaf page */
    unsigned char lease_b[BI_PAGE] = {0}, meta_b[BI_PAGE] = {0}, key_b[16] = {0};
    unsigned char lkeys[16][8], lvals[16][32], rev[2][17];
    ent le_ents[16];
    for (int i = 0; i < s->n_leases && i < 16; i++) {
        be(lkeys[i], (uint64_t)s->lease_ids[i]);
        size_t n = field_varint(lvals[i], 1, s->lease_ids[i]);
        n += field_varint(lvals[i] + n, 2, s->lease_ttls[i]);
        le_ents[i] = (ent){0, lkeys[i], lvals[i], 8, n};
    }
    size_t lease_len = 16 + leaf(lease_b + 16, 0, le_ents, s->n_leases);
    for (int i = 0; i < 2; i++) {
        be(rev[i], (uint64_t)(i == 0 && s->compact_finished ? s->compact_finished
                                                              : s->compact_rev));
        rev[i][8] = '_';
    }
    ent me[2] = {{0, (const unsigned char *)"finishedCompactRev", rev[0], 18, 17},
                 {0, (const unsigned char *)"scheduledCompactRev", rev[1], 19, 17}};
    size_t meta_len = 16 + leaf(meta_b + 16, 0, me, s->compact_rev ? 2 : 0);
    le(key_b, 4, 8);
    ent root[3] = {{1, (const unsigned char *)"key", key_b, 3, 16},
                   {1, (const unsigned char *)"lease", lease_b, 5, lease_len},
                   {1, (const unsigned char *)"meta", meta_b, 4, meta_len}};
    leaf(f + 3 * BI_PAGE, 3, root, 3);
    *len = pages * BI_PAGE;
    return f;
}
