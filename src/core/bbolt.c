/*
 * bbolt.c - reads bbolt files (see bbolt.h) without trusting them, and
 * writes them (the writer's section says how).
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

/* ---- the writer ------------------------------------------------------------
 *
 * Built bottom-up, as a bulk load: a bucket's entries arrive in key order,
 * fill a leaf until the next would overflow the page, and each full leaf
 * goes to the sink at the next page id, its first key kept for the level
 * above; when the bucket ends, branch pages are built over those keys,
 * level by level, up to one root. An entry larger than a page gets a leaf
 * of its own spanning overflow pages, as bbolt writes it. Every bucket has
 * a root page of its own (bbolt inlines small ones, and reads either way).
 * Last, the root bucket's leaf names the buckets; page 2 is an empty
 * freelist, and pages 0 and 1 are metas: the file has no free page, so
 * bbolt's consistency check (`etcdctl snapshot status`) finds every page
 * reachable exactly once.
 */

enum { FLAG_FREELIST = 0x10, FIRST_DATA_PAGE = 3 };

typedef struct node_ref {
    unsigned char *key; /* the first key under the page (new) */
    size_t key_len;
    uint64_t id;
} node_ref;

typedef struct level {
    node_ref *v;
    size_t n, cap;
} level;

typedef struct leaf_elem {
    uint32_t flags;
    size_t off, key_len, value_len; /* off: into the writer's leaf bytes */
} leaf_elem;

struct sk_bbolt_writer {
    uint32_t page_size;
    sk_bbolt_sink sink;
    void *arg;
    sk_err err;          /* the first failure; every later call returns it */
    uint64_t next_id;    /* the next page to write */
    unsigned char *page; /* scratch for one page being written (grown for overflow) */
    size_t page_cap;
    /* the leaf being filled: its elements and their key and value bytes */
    leaf_elem *elems;
    size_t n_elems, cap_elems;
    unsigned char *bytes;
    size_t n_bytes, cap_bytes;
    level leaves; /* the current tree's full leaves */
    unsigned char *last_key; /* the current bucket's last key, for the order check */
    size_t last_len, last_cap;
    int in_bucket, any_key;
    level buckets; /* the root's entries: each bucket's name and root page */
};

static void wr16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void wr64(unsigned char *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t cap2 = *cap ? *cap : 16;
    while (cap2 < need)
        cap2 *= 2;
    p = realloc(p, cap2 * elem);
    SK_CHECK_ALLOC(p);
    *cap = cap2;
    return p;
}

static void level_push(level *l, const unsigned char *key, size_t key_len, uint64_t id)
{
    l->v = grow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    node_ref *r = &l->v[l->n++];
    r->key = malloc(key_len ? key_len : 1);
    SK_CHECK_ALLOC(r->key);
    memcpy(r->key, key, key_len);
    r->key_len = key_len;
    r->id = id;
}

static void level_clear(level *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].key);
    l->n = 0;
}

sk_bbolt_writer *sk_bbolt_writer_new(uint32_t page_size, sk_bbolt_sink sink, void *arg)
{
    SK_CHECK(page_size >= 512 && page_size <= 65536 && !(page_size & (page_size - 1)));
    sk_bbolt_writer *w = calloc(1, sizeof *w);
    SK_CHECK_ALLOC(w);
    w->page_size = page_size;
    w->sink = sink;
    w->arg = arg;
    w->next_id = FIRST_DATA_PAGE;
    return w;
}

void sk_bbolt_writer_free(sk_bbolt_writer *w)
{
    if (!w)
        return;
    level_clear(&w->leaves);
    level_clear(&w->buckets);
    free(w->leaves.v);
    free(w->buckets.v);
    free(w->elems);
    free(w->bytes);
    free(w->page);
    free(w->last_key);
    free(w);
}

/* The scratch page zeroed for n pages; its bytes. */
static unsigned char *scratch(sk_bbolt_writer *w, size_t n)
{
    size_t need = n * w->page_size;
    w->page = grow(w->page, &w->page_cap, need, 1);
    memset(w->page, 0, need);
    return w->page;
}

/* Writes the scratch page (span pages) as page id with the header given. */
static void emit(sk_bbolt_writer *w, uint64_t id, uint16_t flags, size_t count, size_t span)
{
    SK_CHECK(count <= UINT16_MAX && span >= 1 && span - 1 <= UINT32_MAX);
    wr64(w->page, id);
    wr16(w->page + 8, flags);
    wr16(w->page + 10, (uint16_t)count);
    wr32(w->page + 12, (uint32_t)(span - 1));
    if (w->err == SK_OK)
        w->err = w->sink(w->arg, id * w->page_size, w->page, span * w->page_size);
}

static size_t pages_for(const sk_bbolt_writer *w, size_t bytes)
{
    return (bytes + w->page_size - 1) / w->page_size;
}

/* Writes the leaf being filled (if it has elements) and records it in
 * leaves. */
static void flush_leaf(sk_bbolt_writer *w, level *leaves)
{
    if (!w->n_elems)
        return;
    size_t size = PAGE_HEADER + ELEM_SIZE * w->n_elems + w->n_bytes, span = pages_for(w, size);
    unsigned char *p = scratch(w, span), *data = p + PAGE_HEADER + ELEM_SIZE * w->n_elems;
    for (size_t i = 0; i < w->n_elems; i++) {
        const leaf_elem *e = &w->elems[i];
        unsigned char *el = p + PAGE_HEADER + ELEM_SIZE * i;
        wr32(el, e->flags);
        wr32(el + 4, (uint32_t)(data + e->off - el));
        wr32(el + 8, (uint32_t)e->key_len);
        wr32(el + 12, (uint32_t)e->value_len);
    }
    memcpy(data, w->bytes, w->n_bytes);
    uint64_t id = w->next_id;
    w->next_id += span;
    emit(w, id, FLAG_LEAF, w->n_elems, span);
    level_push(leaves, w->bytes + w->elems[0].off, w->elems[0].key_len, id);
    w->n_elems = 0;
    w->n_bytes = 0;
}

static void add_elem(sk_bbolt_writer *w, level *leaves, uint32_t flags, const void *key,
                     size_t key_len, const void *value, size_t value_len)
{
    size_t used = PAGE_HEADER + ELEM_SIZE * w->n_elems + w->n_bytes;
    if (w->n_elems && (used + ELEM_SIZE + key_len + value_len > w->page_size ||
                       w->n_elems == UINT16_MAX))
        flush_leaf(w, leaves);
    w->elems = grow(w->elems, &w->cap_elems, w->n_elems + 1, sizeof *w->elems);
    w->bytes = grow(w->bytes, &w->cap_bytes, w->n_bytes + key_len + value_len, 1);
    w->elems[w->n_elems++] = (leaf_elem){flags, w->n_bytes, key_len, value_len};
    memcpy(w->bytes + w->n_bytes, key, key_len);
    if (value_len)
        memcpy(w->bytes + w->n_bytes + key_len, value, value_len);
    w->n_bytes += key_len + value_len;
}

/* Builds the branch levels over nodes (which it empties) and returns the
 * tree's root page; an empty tree gets an empty leaf. */
static uint64_t close_tree(sk_bbolt_writer *w, level *nodes)
{
    flush_leaf(w, nodes);
    if (!nodes->n) {
        scratch(w, 1);
        emit(w, w->next_id, FLAG_LEAF, 0, 1);
        return w->next_id++;
    }
    level up = {0};
    while (nodes->n > 1) {
        for (size_t i = 0; i < nodes->n;) {
            size_t first = i, size = PAGE_HEADER;
            for (; i < nodes->n && i - first < UINT16_MAX; i++) {
                size_t add = ELEM_SIZE + nodes->v[i].key_len;
                if (i > first && size + add > w->page_size)
                    break;
                size += add;
            }
            size_t span = pages_for(w, size);
            unsigned char *p = scratch(w, span), *data = p + PAGE_HEADER + ELEM_SIZE * (i - first);
            for (size_t j = first; j < i; j++) {
                unsigned char *el = p + PAGE_HEADER + ELEM_SIZE * (j - first);
                wr32(el, (uint32_t)(data - el));
                wr32(el + 4, (uint32_t)nodes->v[j].key_len);
                wr64(el + 8, nodes->v[j].id);
                memcpy(data, nodes->v[j].key, nodes->v[j].key_len);
                data += nodes->v[j].key_len;
            }
            uint64_t id = w->next_id;
            w->next_id += span;
            emit(w, id, FLAG_BRANCH, i - first, span);
            level_push(&up, nodes->v[first].key, nodes->v[first].key_len, id);
        }
        level_clear(nodes);
        level t = *nodes;
        *nodes = up;
        up = t;
    }
    uint64_t root = nodes->v[0].id;
    level_clear(nodes);
    free(up.v);
    return root;
}

static void end_bucket(sk_bbolt_writer *w)
{
    if (!w->in_bucket)
        return;
    uint64_t root = close_tree(w, &w->leaves);
    w->buckets.v[w->buckets.n - 1].id = root;
    w->in_bucket = 0;
}

sk_err sk_bbolt_writer_bucket(sk_bbolt_writer *w, const char *name, size_t name_len)
{
    end_bucket(w);
    const node_ref *prev = w->buckets.n ? &w->buckets.v[w->buckets.n - 1] : NULL;
    if (prev) {
        int c = memcmp(prev->key, name, prev->key_len < name_len ? prev->key_len : name_len);
        SK_CHECK(c < 0 || (c == 0 && prev->key_len < name_len));
    }
    level_push(&w->buckets, (const unsigned char *)name, name_len, 0);
    w->in_bucket = 1;
    w->any_key = 0;
    return w->err;
}

sk_err sk_bbolt_writer_put(sk_bbolt_writer *w, const void *key, size_t key_len, const void *value,
                           size_t value_len)
{
    SK_CHECK(w->in_bucket && key_len > 0 && key_len <= UINT32_MAX && value_len <= UINT32_MAX);
    if (w->any_key) {
        int c = memcmp(w->last_key, key, w->last_len < key_len ? w->last_len : key_len);
        SK_CHECK(c < 0 || (c == 0 && w->last_len < key_len)); /* keys strictly increase */
    }
    w->last_key = grow(w->last_key, &w->last_cap, key_len, 1);
    memcpy(w->last_key, key, key_len);
    w->last_len = key_len;
    w->any_key = 1;
    add_elem(w, &w->leaves, 0, key, key_len, value, value_len);
    return w->err;
}

static void write_meta(sk_bbolt_writer *w, uint64_t id, uint64_t root, uint64_t txid)
{
    unsigned char *p = scratch(w, 1), *m = p + PAGE_HEADER;
    wr32(m, BBOLT_MAGIC);
    wr32(m + 4, BBOLT_VERSION);
    wr32(m + 8, w->page_size);
    wr64(m + 16, root);
    wr64(m + 32, 2); /* the freelist */
    wr64(m + 40, w->next_id);
    wr64(m + 48, txid);
    wr64(m + 56, fnv1a64(m, 56));
    emit(w, id, FLAG_META, 0, 1);
}

sk_err sk_bbolt_writer_finish(sk_bbolt_writer *w, uint64_t txid, uint64_t *size_out)
{
    SK_CHECK(txid >= 2);
    end_bucket(w);
    level root_leaves = {0};
    unsigned char header[BUCKET_HEADER];
    for (size_t i = 0; i < w->buckets.n; i++) {
        wr64(header, w->buckets.v[i].id);
        wr64(header + 8, 0); /* sequence */
        add_elem(w, &root_leaves, LEAF_BUCKET, w->buckets.v[i].key, w->buckets.v[i].key_len,
                 header, sizeof header);
    }
    uint64_t root = close_tree(w, &root_leaves);
    free(root_leaves.v);
    scratch(w, 1);
    emit(w, 2, FLAG_FREELIST, 0, 1);
    /* Two valid metas, as a file bbolt has committed to twice. */
    write_meta(w, 0, root, txid - 1);
    write_meta(w, 1, root, txid);
    if (w->err == SK_OK)
        *size_out = w->next_id * w->page_size;
    return w->err;
}
