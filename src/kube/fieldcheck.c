/*
 * fieldcheck.c - finds unknown and duplicate fields the way kube-apiserver's
 * strict decoder (sigs.k8s.io/json UnmarshalStrict) does.
 *
 * One walker over JSON text serves every check. It must read the bytes, not a
 * json_t: duplicates vanish when jansson parses, and kube-apiserver reports
 * duplicates and unknown fields interleaved in document order. Checks of an
 * already-parsed object (merge results) serialize it first; the same walker
 * then finds only unknown fields, as a parsed object has no duplicates.
 *
 * The walker mirrors the Go decoder's rules: a finding is recorded when its
 * key is read, before its value; the value of an unknown key is skipped
 * unchecked; a repeated known key is reported and its value decoded again;
 * identical findings are recorded once, and at most SK_FIELDCHECK_MAX.
 *
 * Invariants: schemas are borrowed from the immutable schema table (kube/schema.h) and only
 * read; the walker never reads outside [p, end), so malformed input yields
 * SK_ERR_BAD_REQUEST, never undefined behaviour.
 */
#include "kube/fieldcheck.h"

#include "kube/schema.h"
#include "core/buf.h"
#include "core/check.h"

#include <stdlib.h>
#include <string.h>

/* jansson's own nesting limit: deeper bodies never parse, so never get here legitimately. */
#define MAX_DEPTH 2048

/* How a value's schema constrains what is inside it. */
typedef enum {
    SHAPE_ANY,    /* untyped (a patch body): every key is known, duplicates count */
    SHAPE_OPAQUE, /* scalar, free-form or type mismatch: nothing inside is reported */
    SHAPE_STRUCT, /* undeclared keys are unknown */
    SHAPE_MAP,    /* any key, values have one schema */
    SHAPE_LIST,
} shape;

typedef struct node {
    shape shape;
    const sk_schema *schema; /* NULL for SHAPE_ANY */
} node;

typedef struct walker {
    const char *p, *end;
    sk_buf path;   /* k8s path of the value being read ("spec.containers[0]") */
    json_t *found; /* findings, in order */
    json_t *seen;  /* findings as keys, to record each once */
} walker;

static node node_of(const sk_schema *schema)
{
    node n = {SHAPE_OPAQUE, schema};
    switch (schema ? sk_schema_kind_of(schema) : SK_SCHEMA_RAW) {
    case SK_SCHEMA_STRUCT:
        n.shape = SHAPE_STRUCT;
        break;
    case SK_SCHEMA_MAP:
        n.shape = SHAPE_MAP;
        break;
    case SK_SCHEMA_ARRAY:
        n.shape = SHAPE_LIST;
        break;
    default:
        break;
    }
    return n;
}


/* Records "<what> field <quoted path>" unless already recorded or the cap is reached. */
static void report(walker *w, const char *what)
{
    if (json_array_size(w->found) >= SK_FIELDCHECK_MAX)
        return;
    sk_buf m = SK_BUF_INIT;
    sk_buf_printf(&m, "%s field ", what);
    sk_buf_go_quoted(&m, w->path.data);
    if (!json_object_get(w->seen, m.data)) {
        SK_CHECK(json_object_set_new(w->seen, m.data, json_true()) == 0);
        json_t *s = json_string(m.data);
        SK_CHECK_ALLOC(s);
        SK_CHECK(json_array_append_new(w->found, s) == 0);
    }
    sk_buf_free(&m);
}

static void truncate_path(walker *w, size_t len)
{
    w->path.len = len;
    w->path.data[len] = '\0';
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void skip_ws(walker *w)
{
    while (w->p < w->end && is_ws(*w->p))
        w->p++;
}

/* The string token at p, quotes included; p moves past it. */
static sk_err string_token(walker *w, const char **tok, size_t *len)
{
    sk_err err = SK_ERR_BAD_REQUEST;
    const char *q = w->p;
    if (q >= w->end || *q != '"')
        goto out;
    /* to each quote by memchr: it ends the string unless an odd run of
     * backslashes escapes it (the opening quote stops the run) */
    for (q++;; q++) {
        q = memchr(q, '"', (size_t)(w->end - q));
        if (!q)
            goto out;
        size_t run = 0;
        while (q[-1 - (ptrdiff_t)run] == '\\')
            run++;
        if (run % 2 == 0)
            break;
    }
    *tok = w->p;
    *len = (size_t)(q + 1 - w->p);
    w->p = q + 1;
    err = SK_OK;
out:
    return err;
}

/* A key token's decoded text, *s / *n. Plain printable ASCII is the token's
 * own bytes (no copy: keys are most of what a body holds); anything else
 * goes through jansson, which unescapes and rejects invalid UTF-8 and
 * \u0000, so keys are always valid, NUL-free strings. *owner (NULL for a
 * plain key) holds the decoded text until the caller drops it. */
static sk_err decode_key(const char *tok, size_t len, const char **s, size_t *n, json_t **owner)
{
    sk_err err = SK_ERR_BAD_REQUEST;
    int plain = 1;
    for (size_t i = 1; i + 1 < len; i++)
        plain &= tok[i] >= 0x20 && tok[i] < 0x7f && tok[i] != '\\';
    json_t *key = NULL;
    if (!plain) {
        key = json_loadb(tok, len, JSON_DECODE_ANY, NULL);
        if (!json_is_string(key)) {
            json_decref(key);
            goto out;
        }
    }
    *s = key ? json_string_value(key) : tok + 1;
    *n = key ? json_string_length(key) : len - 2;
    *owner = key;
    err = SK_OK;
out:
    return err;
}

/*
 * The keys met so far in one object, to find repeats: a few compared in
 * place, without copies; past KEYS_INLINE, or once a key needed decoding
 * (its text lives only as long as its token's turn), a hash of copies, so
 * an object of 100,000 keys costs no quadratic scan.
 */
#define KEYS_INLINE 16

typedef struct key_set {
    struct {
        const char *s;
        size_t n;
    } few[KEYS_INLINE];
    size_t n_few;
    json_t *many; /* NULL until needed */
} key_set;

/* Adds key (s, n) to ks; returns whether it was there already. lasting:
 * s outlives the object's walk (a plain key, pointing into the body). */
static int key_seen(key_set *ks, const char *s, size_t n, int lasting)
{
    int seen = 0;
    for (size_t i = 0; !ks->many && i < ks->n_few && !seen; i++)
        seen = ks->few[i].n == n && memcmp(ks->few[i].s, s, n) == 0;
    if (!ks->many && !seen && lasting && ks->n_few < KEYS_INLINE) {
        ks->few[ks->n_few].s = s;
        ks->few[ks->n_few++].n = n;
    } else if (!seen) {
        if (!ks->many) {
            ks->many = json_object();
            SK_CHECK_ALLOC(ks->many);
            for (size_t i = 0; i < ks->n_few; i++)
                SK_CHECK(json_object_setn_new(ks->many, ks->few[i].s, ks->few[i].n, json_true()) ==
                         0);
        }
        seen = json_object_getn(ks->many, s, n) != NULL;
        if (!seen)
            SK_CHECK(json_object_setn_new(ks->many, s, n, json_true()) == 0);
    }
    return seen;
}

static sk_err value(walker *w, node n, int depth);

static sk_err object(walker *w, node n, int depth)
{
    sk_err err = SK_OK;
    key_set keys = {.n_few = 0, .many = NULL};
    size_t base = w->path.len;
    int checked = n.shape == SHAPE_ANY || n.shape == SHAPE_STRUCT || n.shape == SHAPE_MAP;
    w->p++;
    skip_ws(w);
    if (w->p < w->end && *w->p == '}') {
        w->p++;
        goto out;
    }
    for (;;) {
        const char *tok, *k;
        size_t len, klen;
        json_t *owner = NULL;
        skip_ws(w);
        if ((err = string_token(w, &tok, &len)) != SK_OK ||
            (err = decode_key(tok, len, &k, &klen, &owner)))
            goto out;
        if (base > 0)
            sk_buf_putc(&w->path, '.');
        sk_buf_append(&w->path, k, klen);
        node c = {SHAPE_OPAQUE, NULL};
        const sk_schema_field *f =
            n.shape == SHAPE_STRUCT ? sk_schema_field_find(n.schema, k, klen) : NULL;
        if (n.shape == SHAPE_STRUCT && !f) {
            report(w, "unknown");
        } else if (checked) {
            if (key_seen(&keys, k, klen, owner == NULL))
                report(w, "duplicate");
            if (n.shape == SHAPE_ANY)
                c = n;
            else
                c = node_of(f ? sk_schema_field_type(f) : sk_schema_elem(n.schema));
        }
        json_decref(owner);
        skip_ws(w);
        err = SK_ERR_BAD_REQUEST;
        if (w->p >= w->end || *w->p != ':')
            goto out;
        w->p++;
        if ((err = value(w, c, depth + 1)) != SK_OK)
            goto out;
        truncate_path(w, base);
        skip_ws(w);
        err = SK_ERR_BAD_REQUEST;
        if (w->p >= w->end || (*w->p != ',' && *w->p != '}'))
            goto out;
        err = SK_OK;
        if (*w->p++ == '}')
            goto out;
    }
out:
    json_decref(keys.many);
    return err;
}

static sk_err array(walker *w, node n, int depth)
{
    sk_err err = SK_OK;
    size_t base = w->path.len;
    node c = n.shape == SHAPE_LIST  ? node_of(sk_schema_elem(n.schema))
             : n.shape == SHAPE_ANY ? n
                                    : (node){SHAPE_OPAQUE, NULL};
    w->p++;
    skip_ws(w);
    if (w->p < w->end && *w->p == ']') {
        w->p++;
        goto out;
    }
    for (size_t i = 0;; i++) {
        sk_buf_printf(&w->path, "[%zu]", i);
        if ((err = value(w, c, depth + 1)) != SK_OK)
            goto out;
        truncate_path(w, base);
        skip_ws(w);
        err = SK_ERR_BAD_REQUEST;
        if (w->p >= w->end || (*w->p != ',' && *w->p != ']'))
            goto out;
        err = SK_OK;
        if (*w->p++ == ']')
            goto out;
    }
out:
    return err;
}

/* Reads one value at p (leading whitespace allowed) and checks it against n. */
static sk_err value(walker *w, node n, int depth)
{
    sk_err err = SK_ERR_BAD_REQUEST;
    const char *tok;
    size_t len;
    skip_ws(w);
    if (w->p >= w->end || depth > MAX_DEPTH)
        goto out;
    if (*w->p == '{') {
        err = object(w, n, depth);
    } else if (*w->p == '[') {
        err = array(w, n, depth);
    } else if (*w->p == '"') {
        err = string_token(w, &tok, &len);
    } else {
        /* A number or literal: its syntax is the parser's business, only its extent matters. */
        const char *start = w->p;
        while (w->p < w->end && !is_ws(*w->p) && *w->p != ',' && *w->p != ']' && *w->p != '}')
            w->p++;
        err = w->p > start ? SK_OK : SK_ERR_BAD_REQUEST;
    }
out:
    return err;
}

/* Walks text as one value of r's kind (r NULL: untyped) and returns the findings. */
static sk_err walk(const sk_resource *r, const char *text, size_t len, json_t **out)
{
    sk_err err;
    walker w = {text, text + len, SK_BUF_INIT, json_array(), json_object()};
    SK_CHECK_ALLOC(w.found);
    SK_CHECK_ALLOC(w.seen);
    sk_buf_reserve(&w.path, 0); /* data is NUL-terminated from here on */
    node root = {SHAPE_ANY, NULL};
    if (r)
        root = node_of(r->schema);
    if ((err = value(&w, root, 0)) != SK_OK)
        goto out;
    skip_ws(&w);
    if (w.p != w.end) {
        err = SK_ERR_BAD_REQUEST;
        goto out;
    }
    *out = json_incref(w.found);
out:
    json_decref(w.found);
    json_decref(w.seen);
    sk_buf_free(&w.path);
    return err;
}

sk_err sk_fieldcheck_body(const sk_resource *r, const char *body, size_t len, json_t **out)
{
    return walk(r, body, len, out);
}

sk_err sk_fieldcheck_unknown(const sk_resource *r, const json_t *obj, json_t **out)
{
    /* Insertion order is document order: jansson keeps object keys in the order they were read. */
    char *text = json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);
    SK_CHECK_ALLOC(text);
    sk_err err = walk(r, text, strlen(text), out);
    free(text);
    return err;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

sk_err sk_fieldcheck_patch(const sk_resource *r, const char *patch, size_t len,
                           const json_t *patched, json_t **out)
{
    sk_err err;
    json_t *dups = NULL, *unknown = NULL, **sorted = NULL;
    if ((err = walk(NULL, patch, len, &dups)) != SK_OK ||
        (err = sk_fieldcheck_unknown(r, patched, &unknown)) != SK_OK)
        goto out;
    /* kube-apiserver sorts these: the merge result is a Go map, re-encoded with sorted keys. */
    size_t n = json_array_size(unknown);
    sorted = calloc(n ? n : 1, sizeof *sorted);
    SK_CHECK_ALLOC(sorted);
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_array_get(unknown, i);
    qsort(sorted, n, sizeof *sorted, by_text);
    for (size_t i = 0; i < n; i++)
        SK_CHECK(json_array_append(dups, sorted[i]) == 0);
    *out = json_incref(dups);
out:
    free(sorted);
    json_decref(dups);
    json_decref(unknown);
    return err;
}

sk_err sk_fieldcheck_message(const sk_resource *r, const json_t *findings, char **out)
{
    sk_err err = SK_ERR_INTERNAL;
    sk_buf m = SK_BUF_INIT;
    if (json_array_size(findings) == 0)
        goto out;
    if (r)
        sk_buf_printf(&m, "%s in version \"%s\" cannot be handled as a %s: ", r->kind, r->version,
                      r->kind);
    sk_buf_puts(&m, "strict decoding error: ");
    for (size_t i = 0; i < json_array_size(findings); i++) {
        const char *f = json_string_value(json_array_get(findings, i));
        if (!f)
            goto out;
        sk_buf_printf(&m, "%s%s", i ? ", " : "", f);
    }
    *out = sk_buf_steal(&m, NULL);
    err = SK_OK;
out:
    sk_buf_free(&m);
    return err;
}
