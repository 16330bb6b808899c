/*
 * patch.c - JSON patch (RFC 6902), merge patch (RFC 7386) and strategic
 * merge patch, applied to a private deep copy of the target.
 *
 * Invariants: the borrowed target and patch are never modified; every
 * in-place edit happens on the deep copy, which is discarded on failure, so a
 * failed patch leaves nothing half-applied. Values copied in from a patch are
 * always fresh copies, never shared with the caller's patch.
 *
 * Strategic merge follows k8s.io/apimachinery/pkg/util/strategicpatch
 * (mergeMap / mergeSlice / normalizeElementOrder) walking the kind's schema
 * (kube/schema.h) alongside the object, as upstream walks the Go struct
 * tags: each map merged knows its type, each list field its patch strategy
 * and merge key, so no list of fields is kept here. Lookups fail where
 * upstream's do (a field the type lacks, a map of structs merged into), and
 * only where upstream looks: where the original and the patch both hold a
 * map or both a list under the key. Where upstream copies a raw patch value
 * and relies on the typed decode that follows to drop directives and nulls,
 * we do that dropping explicitly (smp_clean): sqlkube stores JSON as given,
 * so nothing downstream would. Error texts are upstream's, values printed
 * as Go's %v prints them.
 *
 * Patches come from clients, so no patch may cost more than its size
 * warrants: strategic merges index lists by merge key instead of scanning
 * them (O(n log n), not quadratic), and a JSON patch may copy at most
 * SK_PATCH_MAX_COPY_BYTES in all and nest the document at most
 * MAX_DOC_DEPTH levels deep, so neither memory nor the recursion of
 * jansson's walks over the result can be driven past a fixed bound.
 */
#include "kube/patch.h"
#include "kube/typed.h"
#include "core/buf.h"
#include "core/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_JSON_PATCH_OPS 10000

/* kube-apiserver answers every failed JSON patch operation with this (see
 * NewGenericServerResponse for 422): the jsonpatch error text is dropped. */
static const char generic_invalid[] =
    "the server rejected our request due to an error in our request";

static const char directive_key[] = "$patch";
static const char retain_keys_key[] = "$retainKeys";
static const char set_order_prefix[] = "$setElementOrder";
static const char delete_prim_prefix[] = "$deleteFromPrimitiveList";

static sk_err failf(char **errmsg, sk_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static sk_err failf(char **errmsg, sk_err e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(errmsg, fmt, ap);
    va_end(ap);
    SK_CHECK(n >= 0);
    return e;
}

/* Compact JSON text of v for error messages (new string). */
static char *dump(const json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
    SK_CHECK_ALLOC(s);
    return s;
}

/* ---- RFC 6901 JSON pointers ------------------------------------------- */

typedef struct {
    char **tok;
    size_t n;
} jptr;

static void jptr_free(jptr *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->tok[i]);
    free(p->tok);
}

/* Splits s into unescaped reference tokens; "" is the whole document. A
 * pointer of more than max_tokens tokens fails before any is allocated: one
 * that cannot resolve in the document would otherwise cost a malloc per
 * '/' (a 3 MB "////..." path took 115 MB). */
static int jptr_parse(const char *s, size_t max_tokens, jptr *out)
{
    jptr p = {NULL, 0};
    int rc = -1;
    size_t n_tokens = 0;
    for (const char *c = strchr(s, '/'); c; c = strchr(c + 1, '/'))
        n_tokens++;
    if ((*s != '\0' && *s != '/') || n_tokens > max_tokens)
        goto out;
    p.tok = malloc((n_tokens + 1) * sizeof *p.tok);
    SK_CHECK_ALLOC(p.tok);
    while (*s == '/') {
        s++;
        size_t len = strcspn(s, "/");
        char *t = malloc(len + 1);
        SK_CHECK_ALLOC(t);
        size_t j = 0;
        for (size_t i = 0; i < len; i++) {
            if (s[i] != '~') {
                t[j++] = s[i];
            } else if (i + 1 < len && (s[i + 1] == '0' || s[i + 1] == '1')) {
                t[j++] = s[++i] == '0' ? '~' : '/';
            } else {
                free(t);
                goto out;
            }
        }
        t[j] = '\0';
        SK_CHECK(p.n < n_tokens);
        p.tok[p.n++] = t;
        s += len;
    }
    *out = p;
    p.tok = NULL;
    p.n = 0;
    rc = 0;
out:
    jptr_free(&p);
    return rc;
}

/* Array index token: decimal digits without leading zeros, below limit. */
static int array_index(const char *tok, size_t limit, size_t *out)
{
    size_t v = 0;
    if (*tok == '\0' || (tok[0] == '0' && tok[1] != '\0'))
        return -1;
    for (const char *c = tok; *c; c++) {
        if (*c < '0' || *c > '9' || v > (limit + 9) / 10)
            return -1;
        v = v * 10 + (size_t)(*c - '0');
    }
    if (v >= limit)
        return -1;
    *out = v;
    return 0;
}

/* The value after the first depth tokens of p (borrowed), or NULL. */
static json_t *jptr_walk(json_t *doc, const jptr *p, size_t depth)
{
    json_t *cur = doc;
    for (size_t i = 0; i < depth && cur; i++) {
        size_t idx;
        if (json_is_object(cur))
            cur = json_object_get(cur, p->tok[i]);
        else if (json_is_array(cur) && array_index(p->tok[i], json_array_size(cur), &idx) == 0)
            cur = json_array_get(cur, idx);
        else
            cur = NULL;
    }
    return cur;
}

/* RFC 6902 "add"; value is stolen. */
static int ptr_add(json_t **doc, const jptr *p, json_t *value)
{
    if (p->n == 0) {
        json_decref(*doc);
        *doc = value;
        return 0;
    }
    json_t *parent = jptr_walk(*doc, p, p->n - 1);
    const char *key = p->tok[p->n - 1];
    size_t idx;
    if (json_is_object(parent))
        return json_object_set_new(parent, key, value);
    if (json_is_array(parent)) {
        size_t size = json_array_size(parent);
        if (strcmp(key, "-") == 0)
            return json_array_append_new(parent, value);
        if (array_index(key, size + 1, &idx) == 0)
            return json_array_insert_new(parent, idx, value);
    }
    json_decref(value);
    return -1;
}

/* RFC 6902 "remove"; *removed (if given) receives the old value. */
static int ptr_remove(json_t *doc, const jptr *p, json_t **removed)
{
    if (p->n == 0)
        return -1;
    json_t *parent = jptr_walk(doc, p, p->n - 1);
    const char *key = p->tok[p->n - 1];
    json_t *old = NULL;
    size_t idx;
    if (json_is_object(parent)) {
        old = json_incref(json_object_get(parent, key));
        if (old)
            json_object_del(parent, key);
    } else if (json_is_array(parent) && array_index(key, json_array_size(parent), &idx) == 0) {
        old = json_incref(json_array_get(parent, idx));
        json_array_remove(parent, idx);
    }
    if (!old)
        return -1;
    if (removed)
        *removed = old;
    else
        json_decref(old);
    return 0;
}

static int jptr_is_proper_prefix(const jptr *a, const jptr *b)
{
    if (a->n >= b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->tok[i], b->tok[i]) != 0)
            return 0;
    return 1;
}

/*
 * How deep a JSON patch may nest the document while it works (a scalar is
 * level 1): a target and a patch value each as deep as jansson parses
 * (2048), stacked. Without a bound, `copy` operations that each put the
 * document's deepest chain under itself double its depth per operation: a
 * 260 kB patch built 131,072 levels, and freeing the result overflowed the
 * stack, as would jansson's other recursive walks (copy, compare, dump).
 */
#define MAX_DOC_DEPTH 4096

/* A JSON patch being applied. */
typedef struct jpatch {
    json_t *doc;
    size_t depth;  /* at least the nesting depth of doc */
    size_t copied; /* bytes of JSON text `copy` operations added so far */
    char **errmsg;
} jpatch;

/* What a value weighs: its size as compact JSON text and its depth. */
typedef struct json_weight {
    size_t bytes;
    size_t depth;
} json_weight;

/* Bytes string s of len bytes takes as JSON text, quotes included; jansson
 * escapes only '"', '\\' and control characters. Stops past limit. */
static size_t string_text_size(const char *s, size_t len, size_t limit)
{
    size_t n = 2;
    for (size_t i = 0; i < len && n <= limit; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
            n += 2;
        else
            n += c < 0x20 ? 6 : 1; /* \u00XX */
    }
    return n;
}

/*
 * Adds v, found at nesting level `level`, to w: its size as json_dumps with
 * JSON_COMPACT writes it (upstream counts the size of the copied JSON
 * against the copy limit) and its deepest level. Counting stops once
 * w->bytes passes limit, so a huge value costs about limit work; w->bytes
 * is then only known to be above limit.
 */
static void weigh(const json_t *v, size_t level, size_t limit, json_weight *w)
{
    const char *key;
    const json_t *x;
    size_t i, n;
    char scalar[64];
    if (level > w->depth)
        w->depth = level;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        n = json_object_size(v);
        w->bytes += n > 0 ? 2 * n + 1 : 2; /* braces, colons, commas */
        json_object_foreach((json_t *)v, key, x)
        {
            if (w->bytes > limit)
                break;
            w->bytes += string_text_size(key, strlen(key), limit);
            weigh(x, level + 1, limit, w);
        }
        break;
    case JSON_ARRAY:
        n = json_array_size(v);
        w->bytes += n > 0 ? n + 1 : 2; /* brackets, commas */
        json_array_foreach(v, i, x)
        {
            if (w->bytes > limit)
                break;
            weigh(x, level + 1, limit, w);
        }
        break;
    case JSON_STRING:
        w->bytes += string_text_size(json_string_value(v), json_string_length(v), limit);
        break;
    default:
        w->bytes += json_dumpb(v, scalar, sizeof scalar, JSON_ENCODE_ANY);
    }
}

/* Records that a value depth levels deep goes where a pointer of n tokens
 * leads, unless that would nest the document too deep. */
static sk_err deepen(jpatch *jp, size_t n, size_t depth)
{
    if (n + depth > MAX_DOC_DEPTH)
        return failf(jp->errmsg, SK_ERR_INVALID,
                     "the patched object would be nested more than %d levels deep", MAX_DOC_DEPTH);
    if (n + depth > jp->depth)
        jp->depth = n + depth;
    return SK_OK;
}

/* Counts src, about to be copied where a pointer of n tokens leads,
 * against the copy limit and the depth bound. */
static sk_err charge_copy(jpatch *jp, const json_t *src, size_t n)
{
    json_weight w = {0, 0};
    weigh(src, 1, SK_PATCH_MAX_COPY_BYTES, &w);
    jp->copied += w.bytes;
    if (jp->copied > SK_PATCH_MAX_COPY_BYTES)
        return failf(jp->errmsg, SK_ERR_TOO_LARGE,
                     "Unable to complete the copy, the accumulated size increase of copy is %zu, "
                     "exceeding the limit %d",
                     jp->copied, SK_PATCH_MAX_COPY_BYTES);
    return deepen(jp, n, w.depth);
}

/* Applies one operation to jp->doc. */
static sk_err json_patch_op(jpatch *jp, const json_t *op)
{
    const char *kind = json_string_value(json_object_get(op, "op"));
    const char *path_s = json_string_value(json_object_get(op, "path"));
    const char *from_s = json_string_value(json_object_get(op, "from"));
    const json_t *value = json_object_get(op, "value");
    jptr path = {NULL, 0}, from = {NULL, 0};
    json_t *moved = NULL, *v = NULL;
    sk_err e = SK_OK;
    int rc = -1;
    /* No pointer longer than the document is deep can lead anywhere in it. */
    if (!kind || !path_s || jptr_parse(path_s, jp->depth, &path) != 0)
        goto out;
    if (strcmp(kind, "move") == 0 || strcmp(kind, "copy") == 0) {
        if (!from_s || jptr_parse(from_s, jp->depth, &from) != 0)
            goto out;
    }
    /* An absent "value" decodes to null upstream (jsonpatch v4). */
    v = value ? json_deep_copy(value) : json_null();
    if (strcmp(kind, "add") == 0 || strcmp(kind, "replace") == 0) {
        json_weight vw = {0, 0};
        weigh(v, 1, (size_t)-1, &vw);
        if ((e = deepen(jp, path.n, vw.depth)) != SK_OK)
            goto out;
        if (strcmp(kind, "add") == 0 || path.n == 0 || ptr_remove(jp->doc, &path, NULL) == 0) {
            rc = ptr_add(&jp->doc, &path, v);
            v = NULL;
        }
    } else if (strcmp(kind, "remove") == 0) {
        rc = ptr_remove(jp->doc, &path, NULL);
    } else if (strcmp(kind, "move") == 0) {
        /* The moved value is at most jp->depth - from.n levels deep. */
        if (path.n > from.n && (e = deepen(jp, path.n, jp->depth - from.n)) != SK_OK)
            goto out;
        if (!jptr_is_proper_prefix(&from, &path) && ptr_remove(jp->doc, &from, &moved) == 0) {
            rc = ptr_add(&jp->doc, &path, moved);
            moved = NULL;
        }
    } else if (strcmp(kind, "copy") == 0) {
        json_t *src = jptr_walk(jp->doc, &from, from.n);
        if (src && (e = charge_copy(jp, src, path.n)) != SK_OK)
            goto out;
        if (src)
            rc = ptr_add(&jp->doc, &path, json_deep_copy(src));
    } else if (strcmp(kind, "test") == 0) {
        json_t *cur = jptr_walk(jp->doc, &path, path.n);
        /* jsonpatch v4: testing a missing member against null passes. */
        rc = (cur ? json_equal(cur, v) : json_is_null(v)) ? 0 : -1;
    }
out:
    if (e == SK_OK && rc != 0)
        e = failf(jp->errmsg, SK_ERR_INVALID, "%s", generic_invalid);
    json_decref(v);
    json_decref(moved);
    jptr_free(&path);
    jptr_free(&from);
    return e;
}

static sk_err apply_json_patch(const json_t *target, const json_t *ops, json_t **out, char **errmsg)
{
    jpatch jp = {NULL, 0, 0, errmsg};
    json_weight tw = {0, 0};
    sk_err e = SK_OK;
    size_t i;
    const json_t *op;
    /* Go decodes a null patch into an empty operation list. */
    if (!json_is_null(ops) && !json_is_array(ops)) {
        e = failf(errmsg, SK_ERR_BAD_REQUEST,
                  "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
                  sk_typed_go_kind(ops));
        goto out;
    }
    json_array_foreach(ops, i, op)
    {
        if (!json_is_object(op) && !json_is_null(op)) {
            e = failf(errmsg, SK_ERR_BAD_REQUEST,
                      "json: cannot unmarshal %s into Go value of type jsonpatch.Operation",
                      sk_typed_go_kind(op));
            goto out;
        }
    }
    if (json_array_size(ops) > MAX_JSON_PATCH_OPS) {
        e = failf(errmsg, SK_ERR_TOO_LARGE,
                  "Request entity too large: The allowed maximum operations in a JSON patch "
                  "is %d, got %zu",
                  MAX_JSON_PATCH_OPS, json_array_size(ops));
        goto out;
    }
    weigh(target, 1, (size_t)-1, &tw);
    jp.doc = json_deep_copy(target);
    jp.depth = tw.depth;
    json_array_foreach(ops, i, op)
    {
        if ((e = json_patch_op(&jp, op)) != SK_OK)
            goto out;
    }
    if (!json_is_object(jp.doc)) {
        e = failf(errmsg, SK_ERR_INVALID, "%s", generic_invalid);
        goto out;
    }
    *out = jp.doc;
    jp.doc = NULL;
out:
    json_decref(jp.doc);
    return e;
}

/* ---- RFC 7386 merge patch --------------------------------------------- */

/* MergePatch(target, patch) from RFC 7386 section 2. target is stolen (NULL
 * allowed) and edited in place; returns a new reference. */
static json_t *merge_patch(json_t *target, const json_t *patch)
{
    const char *key;
    const json_t *pv;
    if (!json_is_object(patch)) {
        json_decref(target);
        return json_deep_copy(patch);
    }
    if (!json_is_object(target)) {
        json_decref(target);
        target = json_object();
    }
    json_object_foreach((json_t *)patch, key, pv)
    {
        if (json_is_null(pv)) {
            json_object_del(target, key);
        } else {
            json_t *cur = json_incref(json_object_get(target, key));
            json_object_set_new(target, key, merge_patch(cur, pv));
        }
    }
    return target;
}

/* ---- strategic merge patch -------------------------------------------- */

typedef struct smp {
    sk_buf key; /* scratch: the key text of a list element being indexed */
    sk_buf fmt; /* scratch: a value as Go's fmt prints it, for error messages */
    char **errmsg;
} smp;

static int has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Parallel-list directive "<prefix>/<field>": the field, or NULL when the
 * key does not carry prefix. A key with the prefix but no '/' right after
 * it is malformed and yields "" so callers can report it. */
static const char *directive_field(const char *key, const char *prefix)
{
    if (!has_prefix(key, prefix))
        return NULL;
    key += strlen(prefix);
    return *key == '/' ? key + 1 : "";
}

static int is_directive_key(const char *k)
{
    return strcmp(k, directive_key) == 0 || strcmp(k, retain_keys_key) == 0 ||
           has_prefix(k, set_order_prefix) || has_prefix(k, delete_prim_prefix);
}

/*
 * Deep copy of a patch value minus null members and directive keys: what
 * the typed decode that follows a merge upstream leaves of a patch value
 * taken as it is. With strip, also minus every map that carries "$patch"
 * (upstream's removeDirectives, applied where a patch value meets no
 * original); such a map yields NULL at the top. sqlkube stores JSON as
 * given, so the dropping has to happen here.
 */
static json_t *smp_clean(const json_t *v, int strip)
{
    json_t *c, *x;
    const char *key;
    size_t i;
    if (strip && json_is_object(v) && json_object_get(v, directive_key))
        return NULL;
    if (json_is_object(v)) {
        c = json_object();
        json_object_foreach((json_t *)v, key, x)
        {
            json_t *cx = json_is_null(x) || is_directive_key(key) ? NULL : smp_clean(x, strip);
            if (cx)
                json_object_set_new(c, key, cx);
        }
    } else if (json_is_array(v)) {
        c = json_array();
        json_array_foreach(v, i, x)
        {
            json_t *cx = smp_clean(x, strip);
            if (cx)
                json_array_append_new(c, cx);
        }
    } else {
        c = json_deep_copy(v);
    }
    return c;
}

/*
 * List indexes. Upstream matches list elements by scanning (index()), which
 * makes a merge of n elements onto n quadratic: 20,000 owner references
 * onto 20,000 took minutes of a server thread. Here every list a merge
 * looks things up in is indexed once, by a text of each element's merge key
 * value (of the whole element for lists of primitives) that two values
 * share exactly when json_equal, upstream's equality, holds for them. A
 * jansson object serves as the hash table. An element without the merge key
 * is not indexed and matches nothing, as json_equal(NULL, v) matched
 * nothing; for duplicates the first position is kept, which is what the
 * scan found.
 */

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends s (len bytes) quoted, with '"', '\\' and NUL escaped. */
static void put_key_string(sk_buf *b, const char *s, size_t len)
{
    sk_buf_putc(b, '"');
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"' || s[i] == '\\' || s[i] == '\0')
            sk_buf_putc(b, '\\');
        sk_buf_putc(b, s[i] == '\0' ? '0' : s[i]);
    }
    sk_buf_putc(b, '"');
}

/* Appends the key text of v: JSON-like with object keys sorted, reals
 * tagged 'r' (json_equal never equates an integer and a real) and zero
 * unsigned (it does equate -0.0 and 0.0). Recursion follows v's depth. */
static void put_key_text(sk_buf *b, const json_t *v)
{
    const char **keys, *key;
    const json_t *x;
    size_t i, n;
    double d;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        n = json_object_size(v);
        keys = malloc((n + 1) * sizeof *keys);
        SK_CHECK_ALLOC(keys);
        i = 0;
        json_object_foreach((json_t *)v, key, x) keys[i++] = key;
        qsort(keys, n, sizeof *keys, cmp_key);
        sk_buf_putc(b, '{');
        for (i = 0; i < n; i++) {
            put_key_string(b, keys[i], strlen(keys[i]));
            sk_buf_putc(b, ':');
            put_key_text(b, json_object_get(v, keys[i]));
            sk_buf_putc(b, ',');
        }
        sk_buf_putc(b, '}');
        free(keys);
        break;
    case JSON_ARRAY:
        sk_buf_putc(b, '[');
        json_array_foreach(v, i, x)
        {
            put_key_text(b, x);
            sk_buf_putc(b, ',');
        }
        sk_buf_putc(b, ']');
        break;
    case JSON_STRING:
        put_key_string(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        sk_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        d = json_real_value(v);
        sk_buf_printf(b, "r%.17g", d == 0 ? 0.0 : d);
        break;
    case JSON_TRUE:
        sk_buf_putc(b, 't');
        break;
    case JSON_FALSE:
        sk_buf_putc(b, 'f');
        break;
    default:
        sk_buf_putc(b, 'n');
    }
}

/* The key text of item in s->key (valid until the next call), or NULL if
 * item lacks the merge key. */
static const char *key_text(smp *s, const json_t *item, const char *mkey)
{
    const json_t *k = *mkey ? json_object_get(item, mkey) : item;
    if (!k)
        return NULL;
    sk_buf_reset(&s->key);
    put_key_text(&s->key, k);
    return s->key.data;
}

/* Records item at position at, unless its key is already there. */
static void index_add(smp *s, json_t *idx, const json_t *item, const char *mkey, size_t at)
{
    const char *t = key_text(s, item, mkey);
    if (t && !json_object_get(idx, t))
        SK_CHECK(json_object_set_new_nocheck(idx, t, json_integer((json_int_t)at)) == 0);
}

/* A new index of list. */
static json_t *index_list(smp *s, const json_t *list, const char *mkey)
{
    json_t *idx = json_object();
    SK_CHECK_ALLOC(idx);
    size_t i;
    const json_t *x;
    json_array_foreach(list, i, x) index_add(s, idx, x, mkey, i);
    return idx;
}

/* Position of item's key in the indexed list, -1 if absent. */
static long index_find(smp *s, const json_t *idx, const json_t *item, const char *mkey)
{
    const char *t = key_text(s, item, mkey);
    const json_t *at = t ? json_object_get(idx, t) : NULL;
    return at ? (long)json_integer_value(at) : -1;
}

/* Keeps the elements of list whose key is not in drop (an index). */
static void remove_indexed(smp *s, json_t *list, const json_t *drop, const char *mkey)
{
    json_t *kept = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (index_find(s, drop, x, mkey) < 0)
            json_array_append(kept, x);
    }
    json_array_clear(list);
    json_array_extend(list, kept);
    json_decref(kept);
}

typedef struct ranked {
    json_t *item;   /* borrowed from the merged list */
    size_t by;      /* the position it is sorted by; absent last */
    long at_server; /* its position in the server's list, -1 if absent */
    size_t seq;     /* its position in the merged list: keeps the sort stable */
} ranked;

static int by_rank(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->by != y->by)
        return x->by < y->by ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Upstream normalizeElementOrder + mergeSortedSlice: the items of merged
 * that appear in order follow order's sequence, the others follow server's,
 * and the two runs are interleaved by their positions in server. Each
 * item's positions are looked up once. Returns a new array.
 */
static json_t *order_list(smp *s, const json_t *merged, const json_t *order, const json_t *server,
                          const char *mkey)
{
    size_t n = json_array_size(merged), n_in = 0, n_only = 0, i, j;
    json_t *order_idx = index_list(s, order, mkey), *server_idx = index_list(s, server, mkey);
    json_t *out = json_array();
    ranked *in_order = malloc((n + 1) * sizeof *in_order);
    ranked *server_only = malloc((n + 1) * sizeof *server_only);
    SK_CHECK(in_order && server_only);
    const json_t *x;
    json_array_foreach(merged, i, x)
    {
        long at_order = index_find(s, order_idx, x, mkey);
        long at_server = index_find(s, server_idx, x, mkey);
        if (at_order >= 0)
            in_order[n_in++] = (ranked){(json_t *)x, (size_t)at_order, at_server, i};
        else
            server_only[n_only++] =
                (ranked){(json_t *)x, at_server < 0 ? (size_t)-1 : (size_t)at_server, at_server, i};
    }
    qsort(in_order, n_in, sizeof *in_order, by_rank);
    qsort(server_only, n_only, sizeof *server_only, by_rank);
    i = j = 0;
    while (i < n_only || j < n_in) {
        const ranked *l = i < n_only ? &server_only[i] : NULL, *r = j < n_in ? &in_order[j] : NULL;
        if (!r || (l && l->at_server >= 0 && r->at_server >= 0 && l->at_server < r->at_server)) {
            json_array_append(out, l->item);
            i++;
        } else {
            json_array_append(out, r->item);
            j++;
        }
    }
    free(in_order);
    free(server_only);
    json_decref(order_idx);
    json_decref(server_idx);
    return out;
}

/* ---- error texts: values as Go prints them ----------------------------- */

/* Go's reflect.TypeOf of two decoded values differ: JSON types, but for
 * true and false, both bool. */
static int go_types_differ(const json_t *a, const json_t *b)
{
    json_type ta = json_is_boolean(a) ? JSON_TRUE : json_typeof(a);
    json_type tb = json_is_boolean(b) ? JSON_TRUE : json_typeof(b);
    return ta != tb;
}

/* v as Go's %v prints it, in s->fmt (valid until the next call). */
static const char *go_v(smp *s, const json_t *v)
{
    sk_buf_reset(&s->fmt);
    sk_typed_go_print(&s->fmt, v);
    return s->fmt.data;
}

/* mergepatch.ErrBadArgType for a value that should have been a list. */
static sk_err not_a_list(smp *s, const json_t *v)
{
    return failf(s->errmsg, SK_ERR_BAD_REQUEST, "expected a []interface {}, but received a %s",
                 sk_typed_go_type_name(v));
}

/* mergepatch.ErrBadPatchType: directive d (printed with %s) in map m. */
static sk_err bad_patch_type(smp *s, const json_t *d, const json_t *m)
{
    sk_buf dtext = SK_BUF_INIT;
    if (json_is_null(d))
        sk_buf_puts(&dtext, "%!s(<nil>)"); /* fmt's bad verb for a nil interface */
    else
        sk_typed_go_print_s(&dtext, d);
    sk_err e = failf(s->errmsg, SK_ERR_BAD_REQUEST, "unknown patch type: %s in map: %s", dtext.data,
                     go_v(s, m));
    sk_buf_free(&dtext);
    return e;
}

/* mergepatch.ErrNoMergeKey. */
static sk_err no_merge_key(smp *s, const json_t *item, const char *mkey)
{
    return failf(s->errmsg, SK_ERR_BAD_REQUEST, "map: %s does not contain declared merge key: %s",
                 go_v(s, item), mkey);
}

/* ---- the schema as upstream's struct-tag lookups see it ----------------- */

/* The reflect.Kind of type t as Go names it. The types that marshal
 * themselves (Time, Quantity, IntOrString, RawExtension...) are structs. */
static const char *go_kind_name(const sk_schema *t)
{
    switch (sk_schema_kind_of(t)) {
    case SK_SCHEMA_STRING:
        return "string";
    case SK_SCHEMA_BOOL:
        return "bool";
    case SK_SCHEMA_INT32:
        return "int32";
    case SK_SCHEMA_INT64:
        return "int64";
    case SK_SCHEMA_DOUBLE:
        return "float64";
    case SK_SCHEMA_BYTES:
    case SK_SCHEMA_ARRAY:
        return "slice";
    case SK_SCHEMA_MAP:
        return "map";
    default:
        return "struct";
    }
}

/*
 * Upstream LookupPatchMetadataForStruct: the field key of t, the type of
 * the map being merged (*out borrowed). Go finds fields of structs only,
 * so merging into a map of structs (a CRD's properties) fails there too.
 */
static sk_err find_field(smp *s, const sk_schema *t, const char *key, const sk_schema_field **out)
{
    if (strcmp(go_kind_name(t), "struct") != 0)
        return failf(s->errmsg, SK_ERR_BAD_REQUEST,
                     "merging an object in json but data type is not struct, instead is: %s",
                     go_kind_name(t));
    const sk_schema_field *f = sk_schema_field_find(t, key, strlen(key));
    if (!f) {
        /* reflect's Name() is the Go type without its package. */
        const char *name = strrchr(sk_schema_go_type(t), '.');
        json_t *quoted = json_string(key);
        char *q = dump(quoted);
        sk_err e = failf(s->errmsg, SK_ERR_BAD_REQUEST,
                         "unable to find api field in struct %s for the json field %s",
                         name ? name + 1 : sk_schema_go_type(t), q);
        free(q);
        json_decref(quoted);
        return e;
    }
    *out = f;
    return SK_OK;
}

/* Upstream LookupPatchMetadataForSlice: the list field key of t and the
 * type of its elements (both borrowed). */
static sk_err find_list(smp *s, const sk_schema *t, const char *key, const sk_schema_field **field,
                        const sk_schema **elem)
{
    const sk_schema_field *f = NULL;
    sk_err e = find_field(s, t, key, &f);
    if (e != SK_OK)
        return e;
    const sk_schema *ft = sk_schema_field_type(f);
    const sk_schema *el = ft;
    if (sk_schema_kind_of(ft) == SK_SCHEMA_ARRAY) {
        el = sk_schema_elem(ft);
        if (strcmp(go_kind_name(el), "slice") == 0)
            return failf(s->errmsg, SK_ERR_BAD_REQUEST, "unexpected slice of slice");
    } else if (!(sk_schema_field_flags(f) & SK_FIELD_POINTER)) {
        /* Go names the kind of the struct looked in, not of the field. */
        return failf(s->errmsg, SK_ERR_BAD_REQUEST, "expected slice or array type, but got: %s",
                     go_kind_name(t));
    }
    *field = f;
    *elem = el;
    return SK_OK;
}

/* The merge key of a list field ("" for none). */
static const char *merge_key_of(const sk_schema_field *f)
{
    const char *k = sk_schema_field_merge_key(f);
    return k ? k : "";
}

/* ---- merging ---------------------------------------------------------- */

static sk_err smp_map(smp *s, json_t *orig, const json_t *patch, const sk_schema *t, json_t **out);

/* Upstream sliceElementType over both lists: every element of one Go type
 * (JSON integers and reals are int64 and float64 there), the first not a
 * list. *are_maps tells which; an error for two empty lists. */
static sk_err check_element_kinds(smp *s, const json_t *a, const json_t *b, int *are_maps)
{
    const json_t *first = NULL, *x;
    const json_t *lists[2] = {a, b};
    size_t i;
    for (int l = 0; l < 2; l++) {
        json_array_foreach(lists[l], i, x)
        {
            if (!first) {
                first = x;
                if (json_is_array(x))
                    return failf(s->errmsg, SK_ERR_INVALID, "%s", generic_invalid);
            } else if (go_types_differ(first, x)) {
                /* fmt.Sprint of the two lists; an absent one prints as [] */
                json_t *both = json_array();
                json_array_append_new(both, a ? json_incref((json_t *)a) : json_array());
                json_array_append_new(both, b ? json_incref((json_t *)b) : json_array());
                sk_err e = failf(s->errmsg, SK_ERR_BAD_REQUEST,
                                 "list element types are not identical: %s", go_v(s, both));
                json_decref(both);
                return e;
            }
        }
    }
    if (!first)
        return failf(s->errmsg, SK_ERR_BAD_REQUEST, "no elements in any of the given slices");
    *are_maps = json_is_object(first);
    return SK_OK;
}

/*
 * Upstream mergeSliceWithSpecialElements: applies "$patch" elements of a
 * map list. Deletions edit base; "$patch: replace" makes base the plain
 * elements. plain receives the elements still to merge (borrowed).
 */
static sk_err list_directives(smp *s, json_t **base, const json_t *patch, const char *mkey,
                              json_t *plain)
{
    size_t i;
    const json_t *pe;
    int replace = 0;
    sk_err e = SK_OK;
    json_t *deleted = json_object(); /* an index of the keys to delete */
    json_array_foreach(patch, i, pe)
    {
        const json_t *d = json_object_get(pe, directive_key);
        const char *ds = json_string_value(d);
        if (!d) {
            json_array_append(plain, (json_t *)pe);
        } else if (ds && strcmp(ds, "delete") == 0) {
            if (!json_object_get(pe, mkey)) {
                e = no_merge_key(s, pe, mkey);
                goto out;
            }
            index_add(s, deleted, pe, mkey, 0);
        } else if (ds && strcmp(ds, "replace") == 0) {
            replace = 1;
        } else if (ds && strcmp(ds, "merge") == 0) {
            e = failf(s->errmsg, SK_ERR_BAD_REQUEST,
                      "merging lists cannot yet be specified in the patch");
            goto out;
        } else {
            e = bad_patch_type(s, d, pe);
            goto out;
        }
    }
    if (json_object_size(deleted) > 0)
        remove_indexed(s, *base, deleted, mkey);
    if (replace) {
        json_decref(*base);
        *base = smp_clean(plain, 0);
        json_array_clear(plain);
    }
out:
    json_decref(deleted);
    return e;
}

/*
 * Upstream mergeSlice: merges patch into orig, a list whose elements are of
 * type elem, by merge key mkey ("" for primitives, merged as a set);
 * is_delete for a "$deleteFromPrimitiveList" list. *out new reference.
 */
static sk_err merge_list(smp *s, const json_t *orig, const json_t *patch, const char *mkey,
                         const sk_schema *elem, int is_delete, json_t **out)
{
    json_t *base = NULL, *plain = json_array(), *server = NULL, *idx = NULL;
    size_t i;
    const json_t *pe;
    int are_maps = 0;
    sk_err e = SK_OK;
    if (json_array_size(orig) == 0 && json_array_size(patch) == 0) {
        base = json_array();
        goto done;
    }
    if ((e = check_element_kinds(s, orig, patch, &are_maps)) != SK_OK)
        goto out;
    if (!are_maps && is_delete) {
        /* Every copy of every listed value goes; nothing is reordered. */
        base = json_copy((json_t *)orig);
        idx = index_list(s, patch, "");
        remove_indexed(s, base, idx, "");
        goto done;
    }
    if (!are_maps) {
        /* A set union without duplicates, as deduplicateScalars leaves it. */
        base = json_array();
        idx = json_object();
        json_array_foreach(orig, i, pe)
        {
            if (index_find(s, idx, pe, "") < 0) {
                index_add(s, idx, pe, "", json_array_size(base));
                json_array_append(base, (json_t *)pe);
            }
        }
        json_array_foreach(patch, i, pe)
        {
            json_array_append(plain, (json_t *)pe);
            if (index_find(s, idx, pe, "") < 0) {
                index_add(s, idx, pe, "", json_array_size(base));
                json_array_append_new(base, json_deep_copy(pe));
            }
        }
        server = json_incref((json_t *)orig);
    } else if (*mkey == '\0') {
        e = failf(s->errmsg, SK_ERR_BAD_REQUEST, "cannot merge lists without merge key for %s",
                  go_kind_name(elem));
        goto out;
    } else {
        base = json_copy((json_t *)orig);
        if ((e = list_directives(s, &base, patch, mkey, plain)) != SK_OK)
            goto out;
        server = json_copy(base);
        idx = index_list(s, base, mkey);
        json_array_foreach(plain, i, pe)
        {
            if (!json_object_get(pe, mkey)) {
                e = no_merge_key(s, pe, mkey);
                goto out;
            }
            long at = index_find(s, idx, pe, mkey);
            if (at < 0) {
                /* upstream appends the patch element as it is */
                index_add(s, idx, pe, mkey, json_array_size(base));
                json_array_append_new(base, smp_clean(pe, 0));
                continue;
            }
            json_t *merged;
            e = smp_map(s, json_incref(json_array_get(base, (size_t)at)), pe, elem, &merged);
            if (e != SK_OK)
                goto out;
            json_array_set_new(base, (size_t)at, merged);
        }
    }
    json_t *ordered = order_list(s, base, plain, server, are_maps ? mkey : "");
    json_decref(base);
    base = ordered;
done:
    *out = base;
    base = NULL;
out:
    json_decref(base);
    json_decref(plain);
    json_decref(server);
    json_decref(idx);
    return e;
}

/* Upstream mergeSliceHandler: list field f (elements elem) of orig and of
 * the patch, both present; *out new reference. A list without the merge
 * strategy takes the patch's list as it is. */
static sk_err merge_field_list(smp *s, const json_t *o, const json_t *p, const sk_schema_field *f,
                               const sk_schema *elem, int is_delete, json_t **out)
{
    if (!(sk_schema_field_flags(f) & SK_FIELD_PATCH_MERGE) && !is_delete) {
        *out = smp_clean(p, 0);
        return SK_OK;
    }
    return merge_list(s, o, p, merge_key_of(f), elem, is_delete, out);
}

/* Upstream applyRetainKeysDirective; consumes "$retainKeys" from todo. */
static sk_err retain_keys(smp *s, json_t *orig, json_t *todo)
{
    json_t *list = json_object_get(todo, retain_keys_key);
    const char *key;
    json_t *v, *tmp, *names = NULL;
    size_t i;
    sk_err e = SK_OK;
    if (!list)
        goto out;
    if (!json_is_array(list)) {
        e = failf(s->errmsg, SK_ERR_BAD_REQUEST, "invalid patch format of retainKeys");
        goto out;
    }
    names = json_object(); /* the retained names, as a set */
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v))
            json_object_set_new(names, json_string_value(v), json_true());
    }
    json_object_foreach(todo, key, v)
    {
        if (json_is_null(v) || strcmp(key, retain_keys_key) == 0 ||
            has_prefix(key, delete_prim_prefix) || has_prefix(key, set_order_prefix))
            continue;
        if (!json_object_get(names, key)) {
            e = failf(s->errmsg, SK_ERR_BAD_REQUEST, "invalid patch format of retainKeys");
            goto out;
        }
    }
    json_object_foreach_safe(orig, tmp, key, v)
    {
        if (!json_object_get(names, key))
            json_object_del(orig, key);
    }
    json_object_del(todo, retain_keys_key);
out:
    json_decref(names);
    return e;
}

/*
 * Upstream validatePatchWithSetOrderList: the patch list's elements (bar
 * directives) appear in order in the same relative order. One pass over
 * both lists; merge key values compare with json_equal.
 */
static sk_err check_order(smp *s, const json_t *list, const json_t *order, const char *mkey)
{
    size_t pi = 0, oi = 0, n = json_array_size(list), m = json_array_size(order);
    const json_t *x;
    if (n == 0 || m == 0)
        return SK_OK;
    while (pi < n && oi < m) {
        const json_t *pe = json_array_get(list, pi), *oe = json_array_get(order, oi);
        const json_t *pk = pe, *ok = oe;
        if (json_object_get(pe, directive_key)) {
            pi++;
            continue;
        }
        if (*mkey) {
            for (int side = 0; side < 2; side++) {
                x = side ? oe : pe;
                if (!json_is_object(x))
                    return failf(s->errmsg, SK_ERR_BAD_REQUEST,
                                 "expected a map[string]interface {}, but received a %s",
                                 sk_typed_go_type_name(x));
                if (!json_object_get(x, mkey))
                    return no_merge_key(s, x, mkey);
            }
            pk = json_object_get(pe, mkey);
            ok = json_object_get(oe, mkey);
        }
        if (json_equal(pk, ok))
            pi++;
        oi++;
    }
    if (pi < n) {
        char *lt = strdup(go_v(s, list));
        SK_CHECK_ALLOC(lt);
        sk_err e = failf(s->errmsg, SK_ERR_BAD_REQUEST,
                         "The order in patch list:\n%s\n doesn't match %s list:\n%s\n", lt,
                         set_order_prefix, go_v(s, order));
        free(lt);
        return e;
    }
    return SK_OK;
}

/* Upstream mergePatchIntoOriginal for one "$setElementOrder/<field>" key of
 * a map of type t: merges the list, orders it, and consumes both keys from
 * todo. */
static sk_err set_element_order(smp *s, json_t *orig, json_t *todo, const char *key,
                                const sk_schema *t)
{
    const json_t *order = json_object_get(todo, key);
    const char *field = directive_field(key, set_order_prefix);
    const json_t *o = json_object_get(orig, field), *p = json_object_get(todo, field);
    const sk_schema_field *f;
    const sk_schema *elem;
    json_t *merged = NULL, *server = NULL;
    int are_maps;
    sk_err e = SK_OK;
    if (!json_is_array(order)) {
        e = not_a_list(s, order);
        goto out;
    }
    if (*field == '\0') {
        e = failf(s->errmsg, SK_ERR_BAD_REQUEST, "invalid patch format of setElementOrder list");
        goto out;
    }
    if ((o && !json_is_array(o)) || (p && !json_is_array(p))) {
        e = not_a_list(s, o && !json_is_array(o) ? o : p);
        goto out;
    }
    if ((e = find_list(s, t, field, &f, &elem)) != SK_OK)
        goto out;
    const char *mkey = merge_key_of(f);
    if (json_array_size(p) > 0 && json_array_size(order) > 0) {
        /* upstream leaves out "$patch: delete" elements before comparing */
        json_t *kept = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(p, i, x)
        {
            const char *d = json_string_value(json_object_get(x, directive_key));
            if (*mkey && !json_is_object(x)) {
                e = failf(s->errmsg, SK_ERR_BAD_REQUEST,
                          "expected a map[string]interface {}, but received a %s",
                          sk_typed_go_type_name(x));
                break;
            }
            if (!*mkey || !d || strcmp(d, "delete") != 0)
                json_array_append(kept, x);
        }
        if (e == SK_OK)
            e = check_order(s, kept, order, mkey);
        json_decref(kept);
        if (e != SK_OK)
            goto out;
    }
    if (!o && !p)
        goto consumed;
    if (o && p)
        e = merge_field_list(s, o, p, f, elem, 0, &merged);
    else
        merged = o ? json_incref((json_t *)o) : smp_clean(p, 1);
    if (e != SK_OK || (e = check_element_kinds(s, o, p, &are_maps)) != SK_OK)
        goto out;
    server = o ? json_incref((json_t *)o) : json_array();
    json_object_set_new(orig, field, order_list(s, merged, order, server, mkey));
    json_object_del(todo, field);
consumed:
    json_object_del(todo, key);
out:
    json_decref(merged);
    json_decref(server);
    return e;
}

static sk_err set_element_orders(smp *s, json_t *orig, json_t *todo, const sk_schema *t)
{
    json_t *keys = json_array(), *v;
    const char *key;
    size_t i;
    sk_err e = SK_OK;
    json_object_foreach(todo, key, v)
    {
        if (has_prefix(key, set_order_prefix))
            json_array_append_new(keys, json_string(key));
    }
    json_array_foreach(keys, i, v)
    {
        if ((e = set_element_order(s, orig, todo, json_string_value(v), t)) != SK_OK)
            break;
    }
    json_decref(keys);
    return e;
}

/* Merges one remaining patch member into orig, a map of type t (mergeMap's
 * main loop). */
static sk_err merge_member(smp *s, json_t *orig, const char *key, const json_t *pv,
                           const sk_schema *t)
{
    const char *field = directive_field(key, delete_prim_prefix);
    const sk_schema_field *f;
    const sk_schema *elem;
    json_t *merged = NULL;
    sk_err e = SK_OK;
    if (field && *field == '\0')
        return failf(s->errmsg, SK_ERR_BAD_REQUEST, "invalid patch format of primitive list");
    int is_delete = field != NULL;
    if (is_delete)
        key = field;
    const json_t *ov = json_object_get(orig, key);
    if (json_is_null(pv)) {
        json_object_del(orig, key);
    } else if (!ov || go_types_differ(ov, pv) || !(json_is_object(ov) || json_is_array(ov))) {
        /* A deletion list meets nothing to delete from: a no-op. */
        if (is_delete && (!ov || go_types_differ(ov, pv)))
            return SK_OK;
        merged = smp_clean(pv, 1);
        if (merged)
            json_object_set_new(orig, key, merged);
        else
            json_object_del(orig, key);
    } else if (json_is_object(ov)) {
        if ((e = find_field(s, t, key, &f)) != SK_OK)
            return e;
        if (sk_schema_field_flags(f) & SK_FIELD_PATCH_REPLACE)
            merged = smp_clean(pv, 0);
        else
            e = smp_map(s, json_incref((json_t *)ov), pv, sk_schema_field_type(f), &merged);
        if (e == SK_OK)
            json_object_set_new(orig, key, merged);
    } else {
        if ((e = find_list(s, t, key, &f, &elem)) != SK_OK)
            return e;
        e = merge_field_list(s, ov, pv, f, elem, is_delete, &merged);
        if (e == SK_OK)
            json_object_set_new(orig, key, merged);
    }
    return e;
}

/*
 * Upstream mergeMap: merges patch (borrowed object) into orig (stolen, NULL
 * or a non-object means empty), a map of type t, and returns the result as
 * *out.
 */
static sk_err smp_map(smp *s, json_t *orig, const json_t *patch, const sk_schema *t, json_t **out)
{
    const json_t *directive = json_object_get(patch, directive_key);
    json_t *todo = NULL;
    const char *key;
    json_t *pv;
    sk_err e = SK_OK;
    if (directive) {
        const char *d = json_string_value(directive);
        if (d && strcmp(d, "replace") == 0)
            *out = smp_clean(patch, 0);
        else if (d && strcmp(d, "delete") == 0)
            *out = json_object();
        else
            e = bad_patch_type(s, directive, patch);
        goto out;
    }
    if (!json_is_object(orig)) {
        json_decref(orig);
        orig = json_object();
    }
    todo = json_copy((json_t *)patch);
    if ((e = retain_keys(s, orig, todo)) != SK_OK ||
        (e = set_element_orders(s, orig, todo, t)) != SK_OK)
        goto out;
    json_object_foreach(todo, key, pv)
    {
        if ((e = merge_member(s, orig, key, pv, t)) != SK_OK)
            goto out;
    }
    *out = orig;
    orig = NULL;
out:
    json_decref(orig);
    json_decref(todo);
    return e;
}

static sk_err apply_strategic(const json_t *target, const json_t *patch, const sk_schema *t,
                              json_t **out, char **errmsg)
{
    smp s = {SK_BUF_INIT, SK_BUF_INIT, errmsg};
    sk_err e = SK_OK;
    /* Without a built-in type there are no patch strategies to follow:
     * kube-apiserver does not offer strategic merge for custom resources. */
    if (!t) {
        e = failf(errmsg, SK_ERR_UNSUPPORTED_MEDIA,
                  "strategic merge patch format is not supported");
        goto out;
    }
    /* Go decodes a null patch into an empty map: a no-op. */
    if (json_is_null(patch)) {
        *out = json_deep_copy(target);
        goto out;
    }
    if (!json_is_object(patch)) {
        e = failf(errmsg, SK_ERR_BAD_REQUEST,
                  "json: cannot unmarshal %s into Go value of type map[string]interface {}",
                  sk_typed_go_kind(patch));
        goto out;
    }
    e = smp_map(&s, json_deep_copy(target), patch, t, out);
out:
    sk_buf_free(&s.key);
    sk_buf_free(&s.fmt);
    return e;
}

/* ---- entry points ------------------------------------------------------ */

/* Non-zero if content_type names media (case-insensitive, parameters and
 * surrounding blanks ignored). */
static int media_is(const char *content_type, const char *media)
{
    if (!content_type)
        return 0;
    while (*content_type == ' ' || *content_type == '\t')
        content_type++;
    size_t len = strcspn(content_type, ";");
    while (len > 0 && (content_type[len - 1] == ' ' || content_type[len - 1] == '\t'))
        len--;
    return strlen(media) == len && strncasecmp(media, content_type, len) == 0;
}

int sk_patch_is_apply(const char *content_type)
{
    return media_is(content_type, "application/apply-patch+yaml");
}

sk_err sk_patch_type_parse(const char *content_type, sk_patch_type *out)
{
    static const struct {
        const char *media;
        sk_patch_type type;
    } types[] = {
        {"application/json-patch+json", SK_PATCH_JSON},
        {"application/merge-patch+json", SK_PATCH_MERGE},
        {"application/strategic-merge-patch+json", SK_PATCH_STRATEGIC},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (media_is(content_type, types[i].media)) {
            *out = types[i].type;
            return SK_OK;
        }
    }
    return SK_ERR_UNSUPPORTED_MEDIA;
}

sk_err sk_patch_apply(sk_patch_type type, const sk_schema *schema, const json_t *target,
                      const char *patch, size_t len, json_t **out, char **errmsg)
{
    json_error_t jerr;
    json_t *p = json_loadb(patch, len, JSON_DECODE_ANY, &jerr);
    json_t *result = NULL;
    sk_err e = SK_OK;
    if (!p) {
        /* evanphx/json-patch reports any unparsable merge patch this way. */
        e = type == SK_PATCH_MERGE ? failf(errmsg, SK_ERR_BAD_REQUEST, "Invalid JSON Patch")
                                   : failf(errmsg, SK_ERR_BAD_REQUEST, "%s", jerr.text);
        goto out;
    }
    switch (type) {
    case SK_PATCH_JSON:
        e = apply_json_patch(target, p, &result, errmsg);
        break;
    case SK_PATCH_MERGE:
        if (!json_is_object(p))
            e = failf(errmsg, SK_ERR_BAD_REQUEST, "Invalid JSON Patch");
        else
            result = merge_patch(json_deep_copy(target), p);
        break;
    case SK_PATCH_STRATEGIC:
        e = apply_strategic(target, p, schema, &result, errmsg);
        break;
    }
    if (e == SK_OK)
        *out = result;
out:
    json_decref(p);
    return e;
}
