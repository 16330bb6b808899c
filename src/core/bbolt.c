/*
 * bbolt.c - reads bbolt files (see bbolt.h) without trusting them.
 *
 * The format, as bbolt lays it out (little-endian):
 * - The file is pages of page_size bytes; page n starts at n * page_size.
 *   A page starts with a 16-byte header: its id (u64, which must be n),
 *   flags (u16: 1 branch, 2 leaf, 4 meta, 0x10 freelist), a count of
 *   elements (u16) and how many pages beyond the first it spans (u32,
 *   "overflow").
 * - Pages 0 and 1 are meta pages: after the header, magic 0xED0CDAED,
 *   version 2, page size, flags (u32 each), the root bucket (root page id,
 *   sequence: u64 each), the freelist page id, the high-water page id (the
 *   file's page count), the transaction id and an FNV-1a 64 checksum of the
 *   56 bytes before it (u64 each). The valid one with the higher
 *   transaction id is the database.
 * - A branch page has count elements of {pos u32, ksize u32, child u64};
 *   a leaf page count elements of {flags u32, pos u32, ksize u32, vsize
 *   u32}; pos is counted from the element's own first byte. A leaf element
 *   with flag 1 is a nested bucket, whose value starts with its header
 *   {root u64, sequence u64}; root 0 means an inline bucket, whose one leaf
 *   page follows the header within the value.
 *
 * Every read goes through page_at/elem checks against the span the page
 * really has in the bytes, and a walk marks each page it enters in a
 * bitmap, so a page reached twice (a cycle, or two parents) is an error
 * rather than an endless or exponential walk. Depth is bounded as well, so
 * a chain of pages cannot exhaust the stack.
 */
#include "core/bbolt.h"

#include "core/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    PAGE_HEADER = 16,
    ELEM_SIZE = 16,
    META_SIZE = 64,
    BUCKET_HEADER = 16,
    FLAG_BRANCH = 0x01,
    FLAG_LEAF = 0x02,
    FLAG_META = 0x04,
    LEAF_BUCKET = 0x01,
    /* Far beyond any real tree (a fan-out of 2 would need 2^64 pages). */
    MAX_DEPTH = 64,
};

#define BBOLT_MAGIC 0xED0CDAEDu
#define BBOLT_VERSION 2u

struct sk_bbolt {
    const unsigned char *data;
    size_t len;
    uint32_t page_size;
    uint64_t pages; /* the high-water mark: pages [0, pages) exist */
    uint64_t txid;
    uint64_t root;
};

static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static sk_err fail(char **errmsg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    SK_CHECK(vasprintf(errmsg, fmt, ap) >= 0);
    va_end(ap);
    return SK_ERR_INVALID;
}

static uint64_t fnv1a64(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* The meta page at offset off, if it is whole and valid for a file of len
 * bytes; else why not (a static string). */
static const char *meta_at(const unsigned char *data, size_t len, size_t off, uint64_t id,
                           sk_bbolt *out)
{
    if (off > len || len - off < PAGE_HEADER + META_SIZE)
        return "the file ends inside it";
    const unsigned char *h = data + off, *m = h + PAGE_HEADER;
    if (rd32(m) != BBOLT_MAGIC)
        return "not a bbolt meta page (wrong magic number)";
    if (rd32(m + 4) != BBOLT_VERSION)
        return "an unsupported bbolt version";
    if (rd64(m + 56) != fnv1a64(m, 56))
        return "its checksum does not match";
    if (rd64(h) != id || rd16(h + 8) != FLAG_META)
        return "its page header is not a meta page's";
    uint32_t ps = rd32(m + 8);
    if (ps < 512 || ps > 65536 || (ps & (ps - 1)))
        return "its page size is not a power of two from 512 to 65536";
    uint64_t pages = rd64(m + 40), root = rd64(m + 16);
    if (pages < 3 || pages > len / ps)
        return "it names more pages than the file holds (truncated?)";
    if (root < 2 || root >= pages)
        return "its root page is out of range";
    *out = (sk_bbolt){data, len, ps, pages, rd64(m + 48), root};
    return NULL;
}

sk_err sk_bbolt_open(const unsigned char *data, size_t len, sk_bbolt **out, char **errmsg)
{
    sk_bbolt m0 = {0}, m1 = {0};
    const char *why0 = meta_at(data, len, 0, 0, &m0);
    const char *why1 = "not found";
    /* Meta 1 sits one page in: meta 0's page size says where, even when
     * meta 0 itself is damaged (its size field may still be right);
     * otherwise every possible page size is tried. */
    uint32_t guess = len >= PAGE_HEADER + 12 ? rd32(data + PAGE_HEADER + 8) : 0;
    if (guess >= 512 && guess <= 65536 && !(guess & (guess - 1)))
        why1 = meta_at(data, len, guess, 1, &m1);
    for (uint32_t ps = 512; why1 && ps <= 65536; ps *= 2)
        if (ps != guess && !meta_at(data, len, ps, 1, &m1))
            why1 = NULL;
    if (why0 && why1)
        return fail(errmsg, "not a usable bbolt file: meta page 0: %s; meta page 1: %s", why0,
                    why1);
    sk_bbolt *db = malloc(sizeof *db);
    SK_CHECK_ALLOC(db);
    *db = why0 || (!why1 && m1.txid > m0.txid) ? m1 : m0;
    *out = db;
    return SK_OK;
}

void sk_bbolt_free(sk_bbolt *db)
{
    free(db);
}

/* One walk: the visitor, the pages entered, and the last key seen. */
typedef struct walk {
    const sk_bbolt *db;
    sk_bbolt_fn fn;
    void *arg;
    char **errmsg;
    unsigned char *seen; /* one bit per page */
    const unsigned char *last;
    size_t last_len;
    int have_last;
} walk;

/* The page id as a span of bytes: checked to exist, be whole in the file,
 * say it is page id, and be entered for the first time. */
static sk_err page_at(walk *w, uint64_t id, const unsigned char **page, size_t *span)
{
    const sk_bbolt *db = w->db;
    if (id < 2 || id >= db->pages)
        return fail(w->errmsg, "page %llu is out of range (the file has %llu pages)",
                    (unsigned long long)id, (unsigned long long)db->pages);
    const unsigned char *p = db->data + id * db->page_size;
    uint64_t overflow = rd32(p + 12);
    if (rd64(p) != id)
        return fail(w->errmsg, "page %llu says it is page %llu", (unsigned long long)id,
                    (unsigned long long)rd64(p));
    if (overflow >= db->pages - id)
        return fail(w->errmsg, "page %llu runs past the end of the file", (unsigned long long)id);
    if (w->seen[id / 8] & (1u << (id % 8)))
        return fail(w->errmsg, "page %llu is reached twice", (unsigned long long)id);
    w->seen[id / 8] |= (unsigned char)(1u << (id % 8));
    *page = p;
    *span = (size_t)((overflow + 1) * db->page_size);
    return SK_OK;
}

static sk_err visit_leaf(walk *w, const unsigned char *p, size_t span, const char *where)
{
    uint16_t count = rd16(p + 10);
    sk_err err = SK_OK;
    if ((size_t)PAGE_HEADER + (size_t)count * ELEM_SIZE > span)
        return fail(w->errmsg, "%s: %u elements do not fit in it", where, count);
    for (uint16_t i = 0; i < count && err == SK_OK; i++) {
        const unsigned char *e = p + PAGE_HEADER + (size_t)i * ELEM_SIZE;
        uint64_t at = (uint64_t)(e - p) + rd32(e + 4), klen = rd32(e + 8), vlen = rd32(e + 12);
        if (at + klen + vlen > span)
            return fail(w->errmsg, "%s: element %u runs past the page", where, i);
        const unsigned char *key = p + at;
        if (w->have_last) {
            size_t n = w->last_len < klen ? w->last_len : (size_t)klen;
            int c = memcmp(w->last, key, n);
            if (c > 0 || (c == 0 && w->last_len >= klen))
                return fail(w->errmsg, "%s: keys out of order", where);
        }
        w->last = key;
        w->last_len = (size_t)klen;
        w->have_last = 1;
        int is_bucket = (rd32(e) & LEAF_BUCKET) != 0;
        if (is_bucket && vlen < BUCKET_HEADER)
            return fail(w->errmsg, "%s: element %u is a bucket too short for its header", where,
                        i);
        err = w->fn(w->arg, key, (size_t)klen, key + klen, (size_t)vlen, is_bucket);
    }
    return err;
}

static sk_err visit_page(walk *w, uint64_t id, int depth)
{
    const unsigned char *p = NULL;
    size_t span = 0;
    char where[48];
    snprintf(where, sizeof where, "page %llu", (unsigned long long)id);
    if (depth > MAX_DEPTH)
        return fail(w->errmsg, "%s: the tree is deeper than %d levels", where, MAX_DEPTH);
    sk_err err = page_at(w, id, &p, &span);
    if (err != SK_OK)
        return err;
    uint16_t flags = rd16(p + 8), count = rd16(p + 10);
    if (flags == FLAG_LEAF)
        return visit_leaf(w, p, span, where);
    if (flags != FLAG_BRANCH)
        return fail(w->errmsg, "%s: a %s page where a tree page belongs (flags 0x%x)", where,
                    flags == FLAG_META ? "meta" : "non-tree", flags);
    if ((size_t)PAGE_HEADER + (size_t)count * ELEM_SIZE > span)
        return fail(w->errmsg, "%s: %u elements do not fit in it", where, count);
    for (uint16_t i = 0; i < count && err == SK_OK; i++) {
        const unsigned char *e = p + PAGE_HEADER + (size_t)i * ELEM_SIZE;
        if ((uint64_t)(e - p) + rd32(e) + rd32(e + 4) > span)
            return fail(w->errmsg, "%s: element %u runs past the page", where, i);
        err = visit_page(w, rd64(e + 8), depth + 1);
    }
    return err;
}

sk_err sk_bbolt_each(const sk_bbolt *db, const sk_bbolt_bucket *b, sk_bbolt_fn fn, void *arg,
                     char **errmsg)
{
    walk w = {db, fn, arg, errmsg, calloc(db->pages / 8 + 1, 1), NULL, 0, 0};
    SK_CHECK_ALLOC(w.seen);
    sk_err err;
    if (b->inline_page) {
        /* An inline bucket is one leaf page inside its parent's value. */
        if (b->inline_len < PAGE_HEADER || rd16(b->inline_page + 8) != FLAG_LEAF)
            err = fail(errmsg, "an inline bucket whose page is not a leaf");
        else
            err = visit_leaf(&w, b->inline_page, b->inline_len, "an inline bucket");
    } else {
        err = visit_page(&w, b->root, 0);
    }
    free(w.seen);
    return err;
}

typedef struct finder {
    const char *name;
    size_t name_len;
    const unsigned char *value;
    size_t value_len;
    int found, is_bucket;
} finder;

static sk_err find_fn(void *arg, const unsigned char *key, size_t key_len,
                      const unsigned char *value, size_t value_len, int is_bucket)
{
    finder *f = arg;
    if (key_len != f->name_len || memcmp(key, f->name, key_len) != 0)
        return SK_OK;
    *f = (finder){f->name, f->name_len, value, value_len, 1, is_bucket};
    /* Stops the walk; sk_bbolt_bucket_get tells this from a failure. */
    return SK_ERR_ALREADY_EXISTS;
}

sk_err sk_bbolt_bucket_get(const sk_bbolt *db, const sk_bbolt_bucket *parent, const char *name,
                           size_t name_len, sk_bbolt_bucket *out, char **errmsg)
{
    sk_bbolt_bucket root = {db->root, NULL, 0};
    finder f = {name, name_len, NULL, 0, 0, 0};
    sk_err err = sk_bbolt_each(db, parent ? parent : &root, find_fn, &f, errmsg);
    if (err == SK_ERR_ALREADY_EXISTS && f.found)
        err = SK_OK;
    if (err != SK_OK)
        return err;
    if (!f.found || !f.is_bucket)
        return SK_ERR_NOT_FOUND;
    uint64_t r = rd64(f.value);
    if (r == 0)
        *out = (sk_bbolt_bucket){0, f.value + BUCKET_HEADER, f.value_len - BUCKET_HEADER};
    else
        *out = (sk_bbolt_bucket){r, NULL, 0};
    return SK_OK;
}
