/*
 * tokenfile.c - see tokenfile.h.
 *
 * The CSV reader follows encoding/csv with the settings kube's tokenfile
 * uses (FieldsPerRecord -1, nothing else: spaces are part of a field, and a
 * quote opens a quoted field only as its first byte): a record is a line,
 * or several when a quoted field holds newlines; "\r\n" is read as "\n",
 * inside quotes too.
 * Every string lives in the table's arena, so a table is freed at once.
 *
 * Lookups scan every entry with a constant-time comparison: token files are
 * small (kube's is meant for a handful of bootstrap users), and the time a
 * failed lookup takes then says nothing about how close a guess was.
 * Duplicates are settled once after parsing (sorted by token, then by
 * line), so a large file costs O(n log n) at start, not O(n^2).
 */
#include "kube/tokenfile.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    const char *token;
    size_t token_len;
    size_t order; /* its record's position: the last of equal tokens wins */
    sk_user user;
} entry;

struct sk_tokenfile {
    sk_arena *arena;
    entry *entries;
    size_t n, cap;
};

/* One record's fields, in the arena. */
typedef struct record {
    const char **fields;
    size_t n, cap;
} record;

static void record_add(sk_arena *a, record *r, const sk_buf *field)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        const char **f = sk_arena_alloc(a, cap * sizeof *f);
        if (r->n)
            memcpy(f, r->fields, r->n * sizeof *f);
        r->fields = f;
        r->cap = cap;
    }
    r->fields[r->n++] = sk_arena_strdup(a, field->data ? field->data : "");
}

static int at_line_end(const char *s, size_t len, size_t i)
{
    return i >= len || s[i] == '\n' || (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n');
}

/* Past the line end at i (which at_line_end accepted). */
static size_t skip_line_end(const char *s, size_t len, size_t i, size_t *line)
{
    if (i >= len)
        return i;
    (*line)++;
    return s[i] == '\r' ? i + 2 : i + 1;
}

/* Reads the record starting at *pos into r. 0, or -1 with *why set. */
static int read_record(sk_arena *a, const char *s, size_t len, size_t *pos, size_t *line,
                       record *r, const char **why)
{
    size_t i = *pos;
    sk_buf field = {0};
    int rc = -1;
    for (;;) {
        sk_buf_reset(&field);
        if (i < len && s[i] == '"') {
            i++;
            for (;;) {
                if (i >= len) {
                    *why = "extraneous or missing \" in quoted-field";
                    goto out;
                }
                if (s[i] == '"') {
                    if (i + 1 < len && s[i + 1] == '"') {
                        sk_buf_putc(&field, '"');
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
                    i++;
                if (s[i] == '\n')
                    (*line)++;
                sk_buf_putc(&field, s[i++]);
            }
            if (!at_line_end(s, len, i) && s[i] != ',') {
                *why = "extraneous or missing \" in quoted-field";
                goto out;
            }
        } else {
            while (!at_line_end(s, len, i) && s[i] != ',') {
                if (s[i] == '"') {
                    *why = "bare \" in non-quoted-field";
                    goto out;
                }
                sk_buf_putc(&field, s[i++]);
            }
        }
        if (memchr(field.data ? field.data : "", '\0', field.len)) {
            *why = "a NUL byte in a field";
            goto out;
        }
        record_add(a, r, &field);
        if (at_line_end(s, len, i)) {
            i = skip_line_end(s, len, i, line);
            break;
        }
        i++; /* the ',' */
    }
    *pos = i;
    rc = 0;
out:
    sk_buf_free(&field);
    return rc;
}

static entry *find(const sk_tokenfile *t, const char *token, size_t token_len)
{
    entry *hit = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const entry *e = &t->entries[i];
        unsigned char diff = e->token_len != token_len;
        size_t n = e->token_len < token_len ? e->token_len : token_len;
        for (size_t k = 0; k < n; k++)
            diff |= (unsigned char)(e->token[k] ^ token[k]);
        if (!diff)
            hit = &t->entries[i];
    }
    return hit;
}

static int by_token_then_order(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    int c = strcmp(a->token, b->token);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* Keeps the last record of each token. */
static void drop_duplicates(sk_tokenfile *t)
{
    if (t->n == 0)
        return;
    qsort(t->entries, t->n, sizeof *t->entries, by_token_then_order);
    size_t kept = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (i + 1 < t->n && strcmp(t->entries[i].token, t->entries[i + 1].token) == 0)
            continue;
        t->entries[kept++] = t->entries[i];
    }
    t->n = kept;
}

/* Adds the record's user (duplicates are settled by drop_duplicates). */
static void add_user(sk_tokenfile *t, const record *r)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        entry *grown = sk_arena_alloc(t->arena, cap * sizeof *grown);
        if (t->n)
            memcpy(grown, t->entries, t->n * sizeof *grown);
        t->entries = grown;
        t->cap = cap;
    }
    entry *e = &t->entries[t->n];
    memset(e, 0, sizeof *e);
    e->order = t->n++;
    e->token = r->fields[0];
    e->token_len = strlen(r->fields[0]);
    e->user.name = r->fields[1];
    e->user.uid = r->fields[2];
    if (r->n < 4)
        return;
    const char *list = r->fields[3];
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    const char **groups = sk_arena_alloc(t->arena, n * sizeof *groups);
    const char *start = list;
    for (size_t g = 0; g < n; g++) {
        const char *end = strchr(start, ',');
        size_t glen = end ? (size_t)(end - start) : strlen(start);
        char *name = sk_arena_alloc(t->arena, glen + 1);
        memcpy(name, start, glen);
        groups[g] = name;
        start = end ? end + 1 : start + glen;
    }
    e->user.groups = groups;
    e->user.n_groups = n;
}

sk_err sk_tokenfile_parse(const char *text, size_t len, sk_tokenfile **out, char **errmsg)
{
    sk_tokenfile *t = calloc(1, sizeof *t);
    SK_CHECK_ALLOC(t);
    t->arena = sk_arena_new();
    size_t pos = 0, line = 1;
    while (pos < len) {
        if (at_line_end(text, len, pos)) { /* an empty line */
            pos = skip_line_end(text, len, pos, &line);
            continue;
        }
        size_t first_line = line;
        record r = {0};
        const char *why = NULL;
        if (read_record(t->arena, text, len, &pos, &line, &r, &why) < 0) {
            if (asprintf(errmsg, "line %zu: %s", line, why) < 0)
                *errmsg = NULL;
            sk_tokenfile_free(t);
            return SK_ERR_INVALID;
        }
        if (r.n < 3) {
            if (asprintf(errmsg,
                         "line %zu: must have at least 3 columns (token, user name, user uid), "
                         "found %zu",
                         first_line, r.n) < 0)
                *errmsg = NULL;
            sk_tokenfile_free(t);
            return SK_ERR_INVALID;
        }
        if (*r.fields[0])
            add_user(t, &r);
    }
    drop_duplicates(t);
    *out = t;
    return SK_OK;
}

const sk_user *sk_tokenfile_lookup(const sk_tokenfile *t, const char *token)
{
    if (!t || !token)
        return NULL;
    entry *e = find(t, token, strlen(token));
    return e ? &e->user : NULL;
}

size_t sk_tokenfile_count(const sk_tokenfile *t)
{
    return t ? t->n : 0;
}

void sk_tokenfile_free(sk_tokenfile *t)
{
    if (!t)
        return;
    sk_arena_free(t->arena);
    free(t);
}
