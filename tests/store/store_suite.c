/*
 * store_suite.c - the store contract (store.h), run unchanged against every
 * backend.
 *
 * SK_TEST_DB picks the database: a store URL ("sqlite:PATH" or a PostgreSQL
 * URL); unset means a fresh SQLite file in a temporary directory. Every test
 * starts from an empty database: SQLite files are deleted, PostgreSQL gets
 * its public schema dropped and recreated, so the store migrates from
 * nothing each time.
 *
 * Only the public store.h API is used. Where a test needs the expected state
 * at some revision it derives it independently, by replaying
 * sk_store_history, rather than trusting the list query under test.
 */
#include "core/util.h"
#include "store/store.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h expects the four headers above to be included first. */
#include <cmocka.h>

#define CM "configmaps"

typedef struct fixture {
    char *url;
    char *dir; /* temp dir holding the SQLite file, or NULL */
    sk_store *s;
} fixture;

/* ---- database lifecycle ------------------------------------------------ */

static int is_sqlite(const char *url)
{
    return strncmp(url, "sqlite:", 7) == 0;
}

static void remove_sqlite_files(const char *url)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s%s", url + 7, suffixes[i]);
        unlink(path);
    }
}

/* Leaves the PostgreSQL database with an empty public schema. */
static void reset_postgres(const char *url)
{
    PGconn *pg = PQconnectdb(url);
    if (PQstatus(pg) != CONNECTION_OK)
        fail_msg("cannot connect to %s: %s", url, PQerrorMessage(pg));
    PGresult *res = PQexec(pg, "SET client_min_messages = warning;"
                               " DROP SCHEMA public CASCADE; CREATE SCHEMA public");
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        fail_msg("cannot reset %s: %s", url, PQerrorMessage(pg));
    PQclear(res);
    PQfinish(pg);
}

static void store_open(fixture *f)
{
    char *msg = NULL;
    sk_err err = sk_store_open(f->url, &f->s, &msg);
    if (err != SK_OK)
        fail_msg("sk_store_open(%s): %s: %s", f->url, sk_err_name(err), msg ? msg : "");
}

static void store_reopen(fixture *f)
{
    sk_store_close(f->s);
    f->s = NULL;
    store_open(f);
}

/* A fixture on an empty database; nothing opened yet. */
static int setup_empty(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    const char *env = getenv("SK_TEST_DB");
    if (env && *env) {
        f->url = strdup(env);
        if (is_sqlite(f->url))
            remove_sqlite_files(f->url);
        else
            reset_postgres(f->url);
    } else {
        char tmpl[] = "/tmp/sk-store-test.XXXXXX";
        assert_non_null(mkdtemp(tmpl));
        f->dir = strdup(tmpl);
        size_t n = strlen(tmpl) + 32;
        f->url = malloc(n);
        snprintf(f->url, n, "sqlite:%s/store.db", tmpl);
    }
    *state = f;
    return 0;
}

static int setup(void **state)
{
    setup_empty(state);
    store_open(*state);
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sk_store_close(f->s);
    if (is_sqlite(f->url))
        remove_sqlite_files(f->url);
    if (f->dir)
        rmdir(f->dir);
    free(f->dir);
    free(f->url);
    free(f);
    return 0;
}

/* ---- writing ------------------------------------------------------------ */

static json_t *make_object(const char *ns, const char *name, const char *uid, const char *payload)
{
    json_t *o =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "name", name, "namespace", ns, "uid", uid, "data", "v", payload);
    assert_non_null(o);
    return o;
}

typedef struct wreq {
    sk_write_op op;
    const char *resource, *ns, *name;
    const char *meta_name; /* metadata.name when name itself is not valid JSON text */
    const char *uid;       /* metadata.uid of a new object */
    const char *payload;   /* data.v of a new object */
    int64_t expected_rev;
    const char *expected_uid;
    const char *require_namespace;
    int (*namespace_open)(const char *ns, size_t len);
} wreq;

static sk_write to_write(const wreq *r)
{
    sk_write w = {0};
    w.op = r->op;
    w.resource = r->resource;
    w.ns = r->ns;
    w.name = r->name;
    w.expected_rev = r->expected_rev;
    w.expected_uid = r->expected_uid;
    w.require_namespace = r->require_namespace;
    w.namespace_open = r->namespace_open;
    if (r->op != SK_WRITE_DELETE)
        w.object = make_object(r->ns, r->meta_name ? r->meta_name : r->name,
                               r->uid ? r->uid : "uid-0", r->payload ? r->payload : "");
    return w;
}

static sk_err do_write(fixture *f, const wreq *r, sk_row *out)
{
    sk_write w = to_write(r);
    return sk_store_write(f->s, &w, out);
}

static int64_t create(fixture *f, const char *resource, const char *ns, const char *name,
                      const char *payload)
{
    sk_row row = {0};
    wreq r = {
        .op = SK_WRITE_CREATE, .resource = resource, .ns = ns, .name = name, .payload = payload};
    assert_int_equal(do_write(f, &r, &row), SK_OK);
    int64_t rev = row.rev;
    sk_row_clear(&row);
    return rev;
}

static int64_t update(fixture *f, const char *resource, const char *ns, const char *name,
                      const char *payload)
{
    sk_row row = {0};
    wreq r = {
        .op = SK_WRITE_UPDATE, .resource = resource, .ns = ns, .name = name, .payload = payload};
    assert_int_equal(do_write(f, &r, &row), SK_OK);
    int64_t rev = row.rev;
    sk_row_clear(&row);
    return rev;
}

static int64_t delete (fixture *f, const char *resource, const char *ns, const char *name)
{
    sk_row row = {0};
    wreq r = {.op = SK_WRITE_DELETE, .resource = resource, .ns = ns, .name = name};
    assert_int_equal(do_write(f, &r, &row), SK_OK);
    assert_true(row.deleted);
    int64_t rev = row.rev;
    sk_row_clear(&row);
    return rev;
}

static int64_t current_rev(fixture *f)
{
    int64_t rev = -1, compact = -1;
    assert_int_equal(sk_store_revisions(f->s, &rev, &compact), SK_OK);
    return rev;
}

static int64_t compact_rev(fixture *f)
{
    int64_t rev = -1, compact = -1;
    assert_int_equal(sk_store_revisions(f->s, &rev, &compact), SK_OK);
    return compact;
}

/* ---- reading ------------------------------------------------------------ */

/* data.v and metadata.resourceVersion of a stored value, as new strings. */
static void parse_value(const sk_row *row, char **payload, char **rv)
{
    json_error_t jerr;
    json_t *o = json_loadb(row->value, row->value_len, 0, &jerr);
    if (!o)
        fail_msg("stored value is not JSON: %s", jerr.text);
    const char *p = NULL, *v = NULL;
    if (json_unpack(o, "{s:{s?s}, s:{s:s}}", "data", "v", &p, "metadata", "resourceVersion", &v))
        fail_msg("stored value lacks data/metadata: %.*s", (int)row->value_len, row->value);
    *payload = strdup(p ? p : "");
    *rv = strdup(v);
    json_decref(o);
}

/* The stored JSON's resourceVersion is the row's revision. */
static void assert_rv_is_rev(const sk_row *row)
{
    char *payload, *rv, want[24];
    parse_value(row, &payload, &rv);
    snprintf(want, sizeof want, "%lld", (long long)row->rev);
    assert_string_equal(rv, want);
    free(payload);
    free(rv);
}

static char *payload_of(const sk_row *row)
{
    char *payload, *rv;
    parse_value(row, &payload, &rv);
    free(rv);
    return payload;
}

/* get, asserting the outcome; returns data.v (new) on success. */
static char *get_payload(fixture *f, const char *ns, const char *name, int64_t at, sk_err want)
{
    sk_row row = {0};
    sk_err err = sk_store_get(f->s, CM, ns, name, at, &row);
    if (err != want)
        fail_msg("get %s/%s at %lld: %s, want %s", ns, name, (long long)at, sk_err_name(err),
                 sk_err_name(want));
    if (err != SK_OK)
        return NULL;
    assert_rv_is_rev(&row);
    assert_false(row.deleted);
    char *p = payload_of(&row);
    sk_row_clear(&row);
    return p;
}

typedef struct rows {
    sk_row *v;
    size_t n, cap;
} rows;

static void rows_push(rows *r, const sk_row *row)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        assert_non_null(r->v);
    }
    sk_row_copy(&r->v[r->n++], row);
}

static void rows_free(rows *r)
{
    for (size_t i = 0; i < r->n; i++)
        sk_row_clear(&r->v[i]);
    free(r->v);
    memset(r, 0, sizeof *r);
}

static int collect(void *arg, const sk_row *row)
{
    rows_push(arg, row);
    return 0;
}

static int collect_three(void *arg, const sk_row *row)
{
    rows *r = arg;
    rows_push(r, row);
    return r->n >= 3;
}

/* The history the feed serves, oldest first, paged through
 * sk_store_history: everything after the compact revision (the feed refuses
 * to start below it), i.e. the whole history before any compaction. */
static void read_history(fixture *f, rows *out)
{
    int64_t after = compact_rev(f);
    for (;;) {
        size_t before = out->n;
        assert_int_equal(sk_store_history(f->s, after, INT64_MAX, 100, collect, out), SK_OK);
        if (out->n == before)
            break;
        after = out->v[out->n - 1].rev;
    }
}

static int key_cmp(const sk_row *a, const sk_row *b)
{
    int c = strcmp(a->resource, b->resource);
    if (!c)
        c = strcmp(a->ns, b->ns);
    if (!c)
        c = strcmp(a->name, b->name);
    return c;
}

static int key_rev_cmp(const void *a, const void *b)
{
    const sk_row *x = a, *y = b;
    int c = key_cmp(x, y);
    return c ? c : (x->rev > y->rev) - (x->rev < y->rev);
}

/*
 * The live objects of resource at revision at (ns NULL: all namespaces) in
 * key order, replayed from history: per key the newest version <= at, minus
 * tombstones.
 */
static void model_at(const rows *history, const char *resource, const char *ns, int64_t at,
                     rows *out)
{
    rows all = {0};
    for (size_t i = 0; i < history->n; i++) {
        const sk_row *h = &history->v[i];
        if (h->rev <= at && strcmp(h->resource, resource) == 0 && (!ns || !strcmp(h->ns, ns)))
            rows_push(&all, h);
    }
    qsort(all.v, all.n, sizeof *all.v, key_rev_cmp);
    for (size_t i = 0; i < all.n; i++) {
        int newest = i + 1 == all.n || key_cmp(&all.v[i], &all.v[i + 1]) != 0;
        if (newest && !all.v[i].deleted)
            rows_push(out, &all.v[i]);
    }
    rows_free(&all);
}

static void assert_same_rows(const rows *got, const rows *want)
{
    if (got->n != want->n)
        fail_msg("got %zu objects, want %zu", got->n, want->n);
    for (size_t i = 0; i < got->n; i++) {
        const sk_row *g = &got->v[i], *w = &want->v[i];
        if (key_cmp(g, w) != 0 || g->rev != w->rev)
            fail_msg("object %zu: got %s/%s@%lld, want %s/%s@%lld", i, g->ns, g->name,
                     (long long)g->rev, w->ns, w->name, (long long)w->rev);
        assert_false(g->deleted);
        assert_int_equal(g->create_rev, w->create_rev);
        assert_int_equal(g->prev_rev, w->prev_rev);
        assert_string_equal(g->uid, w->uid);
        assert_int_equal(g->value_len, w->value_len);
        assert_memory_equal(g->value, w->value, g->value_len);
    }
}

typedef void (*between_pages_fn)(fixture *f, int page);

/* Lists resource at rev in pages of limit, calling between() after each page
 * (NULL: nothing), and checks every page is in strictly increasing key order. */
static sk_err list_all_pages(fixture *f, const char *resource, const char *ns, int64_t rev,
                             int limit, between_pages_fn between, rows *out)
{
    char *after_ns = NULL, *after_name = NULL;
    sk_err err = SK_OK;
    for (int page = 0;; page++) {
        sk_list_query q = {resource, ns, after_ns, after_name, rev, limit};
        size_t before = out->n;
        if ((err = sk_store_list(f->s, &q, collect, out)) != SK_OK)
            break;
        assert_true(out->n - before <= (size_t)limit);
        for (size_t i = before; i < out->n; i++) {
            assert_rv_is_rev(&out->v[i]);
            if (i > 0)
                assert_true(key_cmp(&out->v[i - 1], &out->v[i]) < 0);
        }
        if (out->n - before < (size_t)limit)
            break;
        free(after_ns);
        free(after_name);
        after_ns = strdup(out->v[out->n - 1].ns);
        after_name = strdup(out->v[out->n - 1].name);
        if (between)
            between(f, page);
    }
    free(after_ns);
    free(after_name);
    return err;
}

static size_t count_rows(fixture *f, const char *ns, int64_t rev)
{
    rows r = {0};
    assert_int_equal(list_all_pages(f, CM, ns, rev, 1000, NULL, &r), SK_OK);
    size_t n = r.n;
    rows_free(&r);
    return n;
}

/* ---- tests -------------------------------------------------------------- */

static void test_empty_store(void **state)
{
    fixture *f = *state;
    assert_int_equal(current_rev(f), 0);
    assert_int_equal(compact_rev(f), 0);
    sk_row row = {0};
    assert_int_equal(sk_store_get(f->s, CM, "default", "x", 0, &row), SK_ERR_NOT_FOUND);
    rows h = {0};
    read_history(f, &h);
    assert_int_equal(h.n, 0);
}

static void test_create(void **state)
{
    fixture *f = *state;
    sk_row row = {0};
    wreq r = {.op = SK_WRITE_CREATE,
              .resource = CM,
              .ns = "default",
              .name = "a",
              .uid = "uid-a",
              .payload = "one"};
    assert_int_equal(sk_store_commits(f->s), 0);
    assert_int_equal(do_write(f, &r, &row), SK_OK);
    assert_int_equal(sk_store_commits(f->s), 1);
    assert_int_equal(row.rev, 1);
    assert_int_equal(row.create_rev, 1);
    assert_int_equal(row.prev_rev, 0);
    assert_false(row.deleted);
    assert_string_equal(row.resource, CM);
    assert_string_equal(row.ns, "default");
    assert_string_equal(row.name, "a");
    assert_string_equal(row.uid, "uid-a");
    assert_rv_is_rev(&row);
    sk_row_clear(&row);

    assert_int_equal(do_write(f, &r, NULL), SK_ERR_ALREADY_EXISTS);
    assert_int_equal(current_rev(f), 1); /* a failed write burns no revision */
    assert_int_equal(sk_store_commits(f->s), 1); /* nor a commit */

    assert_int_equal(sk_store_get(f->s, CM, "default", "a", 0, &row), SK_OK);
    assert_int_equal(row.rev, 1);
    assert_string_equal(row.uid, "uid-a");
    char *p = payload_of(&row);
    assert_string_equal(p, "one");
    free(p);
    sk_row_clear(&row);

    /* Same name, other namespace / resource / cluster scope: other keys. */
    assert_int_equal(create(f, CM, "other", "a", "two"), 2);
    assert_int_equal(create(f, "secrets", "default", "a", "three"), 3);
    assert_int_equal(create(f, CM, "", "a", "four"), 4);
    p = get_payload(f, "default", "a", 0, SK_OK);
    assert_string_equal(p, "one");
    free(p);
    p = get_payload(f, "", "a", 0, SK_OK);
    assert_string_equal(p, "four");
    free(p);
}

static void test_update_preconditions(void **state)
{
    fixture *f = *state;
    create(f, CM, "default", "a", "v1");
    create(f, CM, "default", "b", "b1");

    sk_row row = {0};
    wreq r = {.op = SK_WRITE_UPDATE,
              .resource = CM,
              .ns = "default",
              .name = "a",
              .uid = "uid-0",
              .payload = "v2",
              .expected_rev = 1};
    assert_int_equal(do_write(f, &r, &row), SK_OK);
    assert_int_equal(row.rev, 3);
    assert_int_equal(row.create_rev, 1);
    assert_int_equal(row.prev_rev, 1);
    assert_rv_is_rev(&row);
    sk_row_clear(&row);

    /* Stale resourceVersion. */
    r.payload = "lost";
    assert_int_equal(do_write(f, &r, NULL), SK_ERR_CONFLICT);
    /* expected_rev 0: unconditional. */
    r.expected_rev = 0;
    r.payload = "v3";
    assert_int_equal(do_write(f, &r, &row), SK_OK);
    assert_int_equal(row.rev, 4);
    assert_int_equal(row.prev_rev, 3);
    sk_row_clear(&row);

    wreq missing = {
        .op = SK_WRITE_UPDATE, .resource = CM, .ns = "default", .name = "nope", .payload = "x"};
    assert_int_equal(do_write(f, &missing, NULL), SK_ERR_NOT_FOUND);
    missing.ns = "other";
    missing.name = "a";
    assert_int_equal(do_write(f, &missing, NULL), SK_ERR_NOT_FOUND);

    assert_int_equal(current_rev(f), 4);
    char *p = get_payload(f, "default", "a", 0, SK_OK);
    assert_string_equal(p, "v3");
    free(p);
}

typedef struct names {
    char text[256];
} names;

static int add_name(void *arg, const char *resource)
{
    names *n = arg;
    size_t len = strlen(n->text);
    snprintf(n->text + len, sizeof n->text - len, "%s%s", len ? " " : "", resource);
    return 0;
}

static int first_expired(void *arg, const sk_row *row)
{
    *(int64_t *)arg = row->rev;
    return 1;
}

/* The resources the history holds, each once and in order, deleted ones
 * too; an update with keep_expiry moves the replaced version's expiry to
 * the new one (re-encryption's rewrite), its time kept. */
static void test_resources_and_kept_expiry(void **state)
{
    fixture *f = *state;
    names n = {""};
    assert_int_equal(sk_store_resources(f->s, add_name, &n), SK_OK);
    assert_string_equal(n.text, "");
    create(f, "secrets", "default", "s", "1");
    create(f, CM, "default", "a", "1");
    create(f, CM, "other", "b", "1");
    create(f, "deployments.apps", "default", "d", "1");
    wreq del = {.op = SK_WRITE_DELETE, .resource = "secrets", .ns = "default", .name = "s"};
    assert_int_equal(do_write(f, &del, NULL), SK_OK);
    assert_int_equal(sk_store_resources(f->s, add_name, &n), SK_OK);
    assert_string_equal(n.text, "configmaps deployments.apps secrets");

    const int64_t at = 1000; /* long past: due at once */
    wreq r = {.op = SK_WRITE_UPDATE, .resource = CM, .ns = "default", .name = "a",
              .payload = "2"};
    sk_write w = to_write(&r);
    w.expires_at_ms = at;
    sk_row row = {0};
    assert_int_equal(sk_store_write(f->s, &w, &row), SK_OK);
    int64_t timed = row.rev, due = 0;
    sk_row_clear(&row);
    assert_int_equal(sk_store_expired(f->s, at, 10, first_expired, &due), SK_OK);
    assert_int_equal(due, timed);
    w = to_write(&r);
    w.expected_rev = timed;
    w.keep_expiry = 1;
    assert_int_equal(sk_store_write(f->s, &w, &row), SK_OK);
    assert_true(row.rev > timed);
    due = 0;
    assert_int_equal(sk_store_expired(f->s, at, 10, first_expired, &due), SK_OK);
    assert_int_equal(due, row.rev);
    /* Not yet due a moment before its time: the time was kept. */
    due = 0;
    assert_int_equal(sk_store_expired(f->s, at - 1, 10, first_expired, &due), SK_OK);
    assert_int_equal(due, 0);
    sk_row_clear(&row);
}

static void test_delete_preconditions(void **state)
{
    fixture *f = *state;
    sk_row row = {0};
    wreq c = {.op = SK_WRITE_CREATE,
              .resource = CM,
              .ns = "default",
              .name = "a",
              .uid = "uid-a",
              .payload = "v1"};
    assert_int_equal(do_write(f, &c, NULL), SK_OK);
    wreq u2 = {.op = SK_WRITE_UPDATE,
               .resource = CM,
               .ns = "default",
               .name = "a",
               .uid = "uid-a",
               .payload = "v2"};
    assert_int_equal(do_write(f, &u2, NULL), SK_OK);

    wreq d = {.op = SK_WRITE_DELETE,
              .resource = CM,
              .ns = "default",
              .name = "a",
              .expected_uid = "someone-else"};
    assert_int_equal(do_write(f, &d, NULL), SK_ERR_CONFLICT);
    d.expected_uid = NULL;
    d.expected_rev = 1;
    assert_int_equal(do_write(f, &d, NULL), SK_ERR_CONFLICT);
    assert_int_equal(current_rev(f), 2);

    d.expected_rev = 2;
    d.expected_uid = "uid-a";
    assert_int_equal(do_write(f, &d, &row), SK_OK);
    assert_int_equal(row.rev, 3);
    assert_true(row.deleted);
    assert_int_equal(row.create_rev, 1);
    assert_int_equal(row.prev_rev, 2);
    assert_rv_is_rev(&row);
    char *p = payload_of(&row); /* the tombstone carries the last version */
    assert_string_equal(p, "v2");
    free(p);
    sk_row_clear(&row);

    get_payload(f, "default", "a", 0, SK_ERR_NOT_FOUND);
    d.expected_rev = 0;
    d.expected_uid = NULL;
    assert_int_equal(do_write(f, &d, NULL), SK_ERR_NOT_FOUND);
    wreq u = {
        .op = SK_WRITE_UPDATE, .resource = CM, .ns = "default", .name = "a", .payload = "zombie"};
    assert_int_equal(do_write(f, &u, NULL), SK_ERR_NOT_FOUND);

    /* Re-create after delete: a new object with a new create revision. */
    assert_int_equal(do_write(f, &c, &row), SK_OK);
    assert_int_equal(row.rev, 4);
    assert_int_equal(row.create_rev, 4);
    assert_int_equal(row.prev_rev, 0);
    sk_row_clear(&row);
    assert_int_equal(current_rev(f), 4);
}

static void test_require_namespace(void **state)
{
    fixture *f = *state;
    wreq r = {.op = SK_WRITE_CREATE,
              .resource = CM,
              .ns = "ns1",
              .name = "a",
              .payload = "x",
              .require_namespace = "ns1"};
    assert_int_equal(do_write(f, &r, NULL), SK_ERR_NOT_FOUND);
    assert_int_equal(current_rev(f), 0);

    create(f, "namespaces", "", "ns1", "");
    assert_int_equal(do_write(f, &r, NULL), SK_OK);

    delete (f, "namespaces", "", "ns1");
    r.name = "b";
    assert_int_equal(do_write(f, &r, NULL), SK_ERR_NOT_FOUND);
    assert_int_equal(current_rev(f), 3);
}

/* A stand-in for kube's check (sk_lifecycle_namespace_open): the store
 * knows nothing of what makes a namespace closed. */
static int open_unless_closing(const char *ns, size_t len)
{
    return !memmem(ns, len, "closing", 7);
}

/* A write whose namespace_open refuses the stored namespace fails alone
 * with SK_ERR_FORBIDDEN and takes no revision; the same write without the
 * check, or into an open namespace, goes in. */
static void test_namespace_open(void **state)
{
    fixture *f = *state;
    create(f, "namespaces", "", "open", "");
    create(f, "namespaces", "", "shut", "closing");
    wreq r = {.op = SK_WRITE_CREATE,
              .resource = CM,
              .ns = "shut",
              .name = "a",
              .payload = "x",
              .require_namespace = "shut",
              .namespace_open = open_unless_closing};
    assert_int_equal(do_write(f, &r, NULL), SK_ERR_FORBIDDEN);
    assert_int_equal(current_rev(f), 2);
    r.ns = r.require_namespace = "open";
    assert_int_equal(do_write(f, &r, NULL), SK_OK);
    r.ns = r.require_namespace = "shut";
    r.namespace_open = NULL;
    assert_int_equal(do_write(f, &r, NULL), SK_OK);
    assert_int_equal(current_rev(f), 4);
}

static void test_history_and_revisions(void **state)
{
    fixture *f = *state;
    create(f, CM, "default", "a", "1");
    create(f, CM, "default", "b", "2");
    update(f, CM, "default", "a", "3");
    delete (f, CM, "default", "b");
    create(f, CM, "default", "b", "5");
    delete (f, CM, "default", "a");

    rows h = {0};
    read_history(f, &h);
    assert_int_equal(h.n, 6);
    assert_int_equal(current_rev(f), 6);
    static const int tomb[] = {0, 0, 0, 1, 0, 1};
    for (size_t i = 0; i < h.n; i++) {
        assert_int_equal(h.v[i].rev, (int64_t)i + 1);
        assert_int_equal(h.v[i].deleted, tomb[i]);
        assert_rv_is_rev(&h.v[i]);
    }
    assert_int_equal(h.v[2].prev_rev, 1);
    assert_int_equal(h.v[3].prev_rev, 2);
    assert_int_equal(h.v[4].prev_rev, 0);
    assert_int_equal(h.v[5].prev_rev, 3);
    rows_free(&h);

    /* after_rev and limit. */
    assert_int_equal(sk_store_history(f->s, 2, INT64_MAX, 3, collect, &h), SK_OK);
    assert_int_equal(h.n, 3);
    assert_int_equal(h.v[0].rev, 3);
    assert_int_equal(h.v[2].rev, 5);
    rows_free(&h);
    assert_int_equal(sk_store_history(f->s, 6, INT64_MAX, 10, collect, &h), SK_OK);
    assert_int_equal(h.n, 0);
}

static void test_get_at_revision(void **state)
{
    fixture *f = *state;
    create(f, CM, "default", "a", "v1");     /* 1 */
    update(f, CM, "default", "a", "v2");     /* 2 */
    create(f, CM, "default", "other", "o");  /* 3 */
    update(f, CM, "default", "a", "v3");     /* 4 */
    delete (f, CM, "default", "a");          /* 5 */
    create(f, CM, "default", "a", "reborn"); /* 6 */
    static const struct {
        int64_t at;
        const char *want;
    } cases[] = {{1, "v1"}, {2, "v2"},     {3, "v2"},     {4, "v3"},
                 {5, NULL}, {6, "reborn"}, {0, "reborn"}, {100, "reborn"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *p =
            get_payload(f, "default", "a", cases[i].at, cases[i].want ? SK_OK : SK_ERR_NOT_FOUND);
        if (cases[i].want)
            assert_string_equal(p, cases[i].want);
        free(p);
    }
    get_payload(f, "default", "other", 2, SK_ERR_NOT_FOUND);
}

/* ---- lists ---- */

/* 5 namespaces x 40 names (some deleted, some updated), plus names whose
 * byte order differs from dictionary order. */
static void populate(fixture *f)
{
    char ns[16], name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(ns, sizeof ns, "ns-%d", i % 5);
        snprintf(name, sizeof name, "obj-%03d", (i * 37) % 200);
        create(f, CM, ns, name, "first");
        if (i % 3 == 0)
            update(f, CM, ns, name, "second");
        if (i % 7 == 0)
            delete (f, CM, ns, name);
    }
    static const char *const odd[] = {"Zeta",
                                      "alpha",
                                      ("\xc3\xa9"
                                       "clair"), /* split: \xa9c would be one escape */
                                      "a-b",
                                      "a.b",
                                      "a_b"};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        create(f, CM, "ns-2", odd[i], "odd");
    create(f, "secrets", "ns-1", "not-a-configmap", "x");
}

/* Writes landing while a paged list is in progress: new keys ahead of and
 * behind the cursor, updates and deletes of keys not yet listed. */
static void churn(fixture *f, int page)
{
    char name[32];
    long long rev = (long long)current_rev(f);
    snprintf(name, sizeof name, "zz-new-%lld", rev);
    create(f, CM, "ns-4", name, "late");
    snprintf(name, sizeof name, "0-new-%lld", rev);
    create(f, CM, "ns-0", name, "late");
    snprintf(name, sizeof name, "obj-%03d", 199 - page);
    for (int i = 0; i < 5; i++) {
        char ns[16];
        snprintf(ns, sizeof ns, "ns-%d", i);
        sk_row row = {0};
        if (sk_store_get(f->s, CM, ns, name, 0, &row) != SK_OK)
            continue;
        sk_row_clear(&row);
        if (page % 2)
            update(f, CM, ns, name, "late");
        else
            delete (f, CM, ns, name);
    }
}

static void check_snapshot_listing(fixture *f, const char *ns, int limit)
{
    int64_t snapshot = current_rev(f);
    rows got = {0}, history = {0}, want = {0};
    assert_int_equal(list_all_pages(f, CM, ns, snapshot, limit, churn, &got), SK_OK);
    assert_true(current_rev(f) > snapshot); /* the writes really happened */
    read_history(f, &history);
    model_at(&history, CM, ns, snapshot, &want);
    assert_true(want.n > (size_t)limit * 3);
    assert_same_rows(&got, &want);
    rows_free(&got);
    rows_free(&want);
    rows_free(&history);
}

static void test_list_snapshot_all_namespaces(void **state)
{
    fixture *f = *state;
    populate(f);
    check_snapshot_listing(f, NULL, 7);
}

static void test_list_snapshot_one_namespace(void **state)
{
    fixture *f = *state;
    populate(f);
    check_snapshot_listing(f, "ns-2", 5);
    check_snapshot_listing(f, "ns-4", 3);
}

static void test_list_old_revisions(void **state)
{
    fixture *f = *state;
    populate(f);
    int64_t end = current_rev(f);
    churn(f, 0);
    churn(f, 1);
    rows history = {0};
    read_history(f, &history);
    for (int64_t at = 1; at <= end; at += end / 9) {
        rows got = {0}, want = {0};
        assert_int_equal(list_all_pages(f, CM, NULL, at, 11, NULL, &got), SK_OK);
        model_at(&history, CM, NULL, at, &want);
        assert_same_rows(&got, &want);
        /* sk_store_count counts the same rows: all, and after each third key */
        for (size_t i = 0; i <= want.n; i += 3) {
            sk_list_query q = {.resource = CM,
                               .after_ns = i ? want.v[i - 1].ns : NULL,
                               .after_name = i ? want.v[i - 1].name : NULL,
                               .rev = at,
                               .limit = 1};
            int64_t n = -1;
            assert_int_equal(sk_store_count(f->s, &q, &n), SK_OK); /* nothing compacted here */
            assert_int_equal(n, (int64_t)(want.n - i));
            /* and within the key's namespace */
            if (i < want.n) {
                const char *ns = want.v[i].ns;
                int64_t in_ns = 0;
                for (size_t j = i; j < want.n; j++)
                    in_ns += strcmp(want.v[j].ns, ns) == 0;
                q.ns = ns;
                assert_int_equal(sk_store_count(f->s, &q, &n), SK_OK);
                assert_int_equal(n, in_ns);
            }
        }
        rows_free(&got);
        rows_free(&want);
    }
    rows_free(&history);
}

static void test_list_namespaces_partition(void **state)
{
    fixture *f = *state;
    populate(f);
    int64_t rev = current_rev(f);
    rows all = {0};
    assert_int_equal(list_all_pages(f, CM, NULL, rev, 1000, NULL, &all), SK_OK);
    size_t sum = 0;
    for (int i = 0; i < 5; i++) {
        char ns[16];
        snprintf(ns, sizeof ns, "ns-%d", i);
        rows one = {0}, want = {0};
        assert_int_equal(list_all_pages(f, CM, ns, rev, 1000, NULL, &one), SK_OK);
        for (size_t j = 0; j < all.n; j++)
            if (strcmp(all.v[j].ns, ns) == 0)
                rows_push(&want, &all.v[j]);
        assert_same_rows(&one, &want);
        sum += one.n;
        rows_free(&one);
        rows_free(&want);
    }
    assert_int_equal(sum, all.n);
    for (size_t j = 0; j < all.n; j++)
        assert_string_equal(all.v[j].resource, CM);
    rows_free(&all);
}

static void test_list_start_keys(void **state)
{
    fixture *f = *state;
    populate(f);
    int64_t rev = current_rev(f);
    size_t ns3 = count_rows(f, "ns-3", rev);
    rows r = {0};
    /* A start key in an earlier namespace: the whole namespace. */
    sk_list_query q = {CM, "ns-3", "ns-1", "zzz", rev, 1000};
    assert_int_equal(sk_store_list(f->s, &q, collect, &r), SK_OK);
    assert_int_equal(r.n, ns3);
    rows_free(&r);
    /* A start key beyond the namespace: nothing. */
    q.after_ns = "ns-4";
    q.after_name = "";
    assert_int_equal(sk_store_list(f->s, &q, collect, &r), SK_OK);
    assert_int_equal(r.n, 0);
    /* All namespaces from inside ns-2: the rest of ns-2, then ns-3 and ns-4. */
    q = (sk_list_query){CM, NULL, "ns-2", "obj-100", rev, 1000};
    assert_int_equal(sk_store_list(f->s, &q, collect, &r), SK_OK);
    assert_true(r.n > 0);
    assert_true(strcmp(r.v[0].ns, "ns-2") == 0 && strcmp(r.v[0].name, "obj-100") > 0);
    size_t tail = count_rows(f, "ns-3", rev) + count_rows(f, "ns-4", rev);
    size_t in_ns2 = 0;
    for (size_t i = 0; i < r.n; i++)
        in_ns2 += strcmp(r.v[i].ns, "ns-2") == 0;
    assert_int_equal(r.n - in_ns2, tail);
    rows_free(&r);
    /* An early stop from the visitor is honoured. */
    q = (sk_list_query){CM, NULL, NULL, NULL, rev, 1000};
    assert_int_equal(sk_store_list(f->s, &q, collect_three, &r), SK_OK);
    assert_int_equal(r.n, 3);
    rows_free(&r);
}

/* ---- concurrency ---- */

#define THREADS 8
#define PER_THREAD 200

typedef struct op_slot {
    wreq req;
    char name[48];
    char ns[16];
    sk_err want;
    sk_err got;
    int64_t rev;
    int rv_ok; /* result JSON's resourceVersion matched its revision */
} op_slot;

typedef struct concurrent {
    sk_store **stores; /* thread t writes through stores[t % nstores] */
    int nstores;
    op_slot *ops;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int finished;
} concurrent;

typedef struct thread_arg {
    concurrent *c;
    int t;
} thread_arg;

typedef struct done_arg {
    concurrent *c;
    op_slot *op;
} done_arg;

static void on_done(void *arg, sk_err err, const sk_row *result)
{
    done_arg *d = arg;
    d->op->got = err;
    if (err == SK_OK) {
        d->op->rev = result->rev;
        char want[24];
        snprintf(want, sizeof want, "\"resourceVersion\":\"%lld\"", (long long)result->rev);
        d->op->rv_ok = memmem(result->value, result->value_len, want, strlen(want)) != NULL;
    }
    pthread_mutex_lock(&d->c->mu);
    d->c->finished++;
    pthread_cond_signal(&d->c->cv);
    pthread_mutex_unlock(&d->c->mu);
    free(d);
}

/* Waits (at most two minutes) until n completions have been reported. */
static void wait_finished(concurrent *c, int n)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 120;
    pthread_mutex_lock(&c->mu);
    while (c->finished < n)
        if (pthread_cond_timedwait(&c->cv, &c->mu, &deadline) != 0)
            break;
    int finished = c->finished;
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(finished, n);
}

/* Empties n slots and puts each in namespace "default". */
static void slots_in_default(op_slot *ops, int n)
{
    memset(ops, 0, (size_t)n * sizeof *ops);
    for (int i = 0; i < n; i++)
        snprintf(ops[i].ns, sizeof ops[i].ns, "default");
}

static void submit(concurrent *c, sk_store *s, op_slot *op)
{
    sk_write w = to_write(&op->req);
    done_arg *d = malloc(sizeof *d);
    assert_non_null(d);
    d->c = c;
    d->op = op;
    sk_store_write_async(s, &w, on_done, d);
}

/* Each kind of op has an outcome that does not depend on how the threads
 * interleave, so every intent's result can be checked exactly. */
static void *writer_thread(void *arg)
{
    thread_arg *ta = arg;
    concurrent *c = ta->c;
    for (int i = 0; i < PER_THREAD; i++) {
        op_slot *op = &c->ops[ta->t * PER_THREAD + i];
        wreq *r = &op->req;
        r->resource = CM;
        r->ns = op->ns;
        r->name = op->name;
        r->payload = "concurrent";
        snprintf(op->ns, sizeof op->ns, "ns-%d", ta->t % 3);
        switch (i % 6) {
        case 0:
        case 1: /* a fresh key */
            r->op = SK_WRITE_CREATE;
            snprintf(op->name, sizeof op->name, "t%d-%d", ta->t, i);
            op->want = SK_OK;
            break;
        case 2: /* this thread's own key, unconditionally */
            r->op = SK_WRITE_UPDATE;
            snprintf(op->name, sizeof op->name, "own-%d", ta->t);
            op->want = SK_OK;
            break;
        case 3: /* a key everyone knows exists */
            r->op = SK_WRITE_CREATE;
            snprintf(op->ns, sizeof op->ns, "shared");
            snprintf(op->name, sizeof op->name, "exists");
            op->want = SK_ERR_ALREADY_EXISTS;
            break;
        case 4: /* a stale resourceVersion */
            r->op = SK_WRITE_UPDATE;
            snprintf(op->ns, sizeof op->ns, "shared");
            snprintf(op->name, sizeof op->name, "frozen");
            r->expected_rev = 1000000000;
            op->want = SK_ERR_CONFLICT;
            break;
        default: /* a missing key, or a missing namespace */
            if (i % 12 == 5) {
                r->op = SK_WRITE_DELETE;
                snprintf(op->name, sizeof op->name, "never-%d-%d", ta->t, i);
            } else {
                r->op = SK_WRITE_CREATE;
                snprintf(op->name, sizeof op->name, "orphan-%d-%d", ta->t, i);
                r->require_namespace = "no-such-namespace";
            }
            op->want = SK_ERR_NOT_FOUND;
            break;
        }
        submit(c, c->stores[ta->t % c->nstores], op);
    }
    return NULL;
}

typedef struct compactor {
    sk_store *s;
    atomic_int stop; /* set by the test thread, polled here */
    int runs;
    sk_err err;
} compactor;

/* Compacts to 20 revisions behind the head, over and over, until stopped. */
static void *compact_loop(void *arg)
{
    compactor *k = arg;
    while (!atomic_load(&k->stop) && k->err == SK_OK) {
        int64_t rev = 0, compact = 0;
        k->err = sk_store_revisions(k->s, &rev, &compact);
        if (k->err == SK_OK && rev > 20) {
            k->err = sk_store_compact(k->s, rev - 20, NULL);
            k->runs++;
        }
        usleep(1000);
    }
    return NULL;
}

/*
 * THREADS threads queue PER_THREAD writes each without waiting, through
 * nstores stores on the same database (several stores stand in for several
 * processes), optionally while another thread keeps compacting. Afterwards
 * every intent must have its own expected outcome and the revisions must be
 * exactly 1..N: without compaction, history holds every one of them.
 */
static void run_concurrent_writers(fixture *f, sk_store **stores, int nstores, int compacting)
{
    create(f, CM, "shared", "exists", "x");
    create(f, CM, "shared", "frozen", "x");
    for (int t = 0; t < THREADS; t++) {
        char ns[16], name[16];
        snprintf(ns, sizeof ns, "ns-%d", t % 3);
        snprintf(name, sizeof name, "own-%d", t);
        create(f, CM, ns, name, "x");
    }
    int64_t base = current_rev(f);

    concurrent c = {.stores = stores,
                    .nstores = nstores,
                    .mu = PTHREAD_MUTEX_INITIALIZER,
                    .cv = PTHREAD_COND_INITIALIZER};
    c.ops = calloc(THREADS * PER_THREAD, sizeof *c.ops);
    compactor k = {.s = stores[nstores - 1], .err = SK_OK};
    pthread_t kt, th[THREADS];
    if (compacting)
        assert_int_equal(pthread_create(&kt, NULL, compact_loop, &k), 0);
    thread_arg ta[THREADS];
    for (int t = 0; t < THREADS; t++) {
        ta[t] = (thread_arg){&c, t};
        assert_int_equal(pthread_create(&th[t], NULL, writer_thread, &ta[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    wait_finished(&c, THREADS * PER_THREAD);
    if (compacting) {
        atomic_store(&k.stop, 1);
        pthread_join(kt, NULL);
        assert_int_equal(k.err, SK_OK);
        assert_true(k.runs > 0);
    }

    /* Every intent got exactly its own outcome. */
    int ok = 0, created = 0;
    char *seen = calloc((size_t)(base + THREADS * PER_THREAD + 1), 1);
    for (int i = 0; i < THREADS * PER_THREAD; i++) {
        op_slot *op = &c.ops[i];
        if (op->got != op->want)
            fail_msg("op %d (%s/%s): %s, want %s", i, op->ns, op->name, sk_err_name(op->got),
                     sk_err_name(op->want));
        if (op->got == SK_OK) {
            ok++;
            created += op->req.op == SK_WRITE_CREATE;
            assert_true(op->rv_ok);
            assert_true(op->rev > base && op->rev <= base + THREADS * PER_THREAD);
            assert_false(seen[op->rev]);
            seen[op->rev] = 1;
        }
    }
    free(seen);

    /* Revisions are exactly 1..N: no gaps, no duplicates. */
    int64_t n = base + ok;
    assert_int_equal(current_rev(f), n);
    rows h = {0};
    read_history(f, &h);
    if (!compacting)
        assert_int_equal(h.n, (size_t)n);
    for (size_t i = 0; i < h.n; i++) {
        if (!compacting)
            assert_int_equal(h.v[i].rev, (int64_t)i + 1);
        else if (i > 0)
            assert_true(h.v[i].rev > h.v[i - 1].rev);
        assert_rv_is_rev(&h.v[i]);
    }
    assert_int_equal(h.v[h.n - 1].rev, n);
    /* Each version read the one before it, whichever batches the two went
     * in (on PostgreSQL through the batch's prefetch, read after the lock):
     * prev_rev and create_rev link up. */
    for (size_t i = 0; !compacting && i < h.n; i++) {
        const sk_row *r = &h.v[i], *before = NULL;
        for (size_t j = i; j-- > 0 && !before;)
            if (strcmp(h.v[j].ns, r->ns) == 0 && strcmp(h.v[j].name, r->name) == 0)
                before = &h.v[j];
        assert_int_equal(r->prev_rev, before ? before->rev : 0);
        assert_int_equal(r->create_rev, before ? before->create_rev : r->rev);
    }
    rows_free(&h);
    assert_int_equal(count_rows(f, NULL, n), (size_t)(2 + THREADS + created));
    free(c.ops);
}

static void test_concurrent_writers(void **state)
{
    fixture *f = *state;
    run_concurrent_writers(f, &f->s, 1, 0);
}

static void test_compaction_during_writes(void **state)
{
    fixture *f = *state;
    run_concurrent_writers(f, &f->s, 1, 1);
}

static void test_concurrent_stores(void **state)
{
    fixture *f = *state;
    sk_store *stores[3] = {f->s, NULL, NULL};
    for (int i = 1; i < 3; i++) {
        char *msg = NULL;
        assert_int_equal(sk_store_open(f->url, &stores[i], &msg), SK_OK);
    }
    run_concurrent_writers(f, stores, 3, 0);
    sk_store_close(stores[1]);
    sk_store_close(stores[2]);
}

/*
 * A write the database itself rejects (PostgreSQL refuses a key that is not
 * UTF-8; SQLite stores it) queued among others: whatever happens to it, its
 * neighbours in the same group commit succeed and revisions stay gap-free.
 */
static void test_database_error_isolated(void **state)
{
    fixture *f = *state;
    enum { N = 40, BAD = 17 };
    concurrent c = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    op_slot ops[N];
    slots_in_default(ops, N);
    for (int i = 0; i < N; i++) {
        op_slot *op = &ops[i];
        snprintf(op->name, sizeof op->name, i == BAD ? "bad-\xff" : "ok-%d", i);
        op->req = (wreq){.op = SK_WRITE_CREATE,
                         .resource = CM,
                         .ns = op->ns,
                         .name = op->name,
                         .meta_name = "valid-json",
                         .payload = "x"};
        submit(&c, f->s, op);
    }
    wait_finished(&c, N);
    int ok = 0;
    for (int i = 0; i < N; i++) {
        if (i != BAD)
            assert_int_equal(ops[i].got, SK_OK);
        ok += ops[i].got == SK_OK;
    }
    rows h = {0};
    read_history(f, &h);
    assert_int_equal(h.n, (size_t)ok);
    for (size_t i = 0; i < h.n; i++)
        assert_int_equal(h.v[i].rev, (int64_t)i + 1);
    rows_free(&h);
    assert_int_equal(current_rev(f), ok);
}

/* ---- allocations ----------------------------------------------------------- */

#define SVC "services"

/* A create or update of services/ns/name that owns exactly claims[0..n). */
static sk_err write_claims(sk_store *s, sk_write_op op, const char *ns, const char *name,
                           sk_claim *claims, int n)
{
    wreq r = {.op = op, .resource = SVC, .ns = ns, .name = name, .payload = "svc"};
    sk_write w = to_write(&r);
    w.set_claims = 1;
    w.claims = claims;
    w.n_claims = n;
    return sk_store_write(s, &w, NULL);
}

/*
 * A value is owned by one live object: a claim on a value another object
 * owns fails the whole write (nothing written, no revision, the taken claim
 * marked); an update that lists other values releases the old ones; an
 * update without claims keeps them; a delete releases them.
 */
static void test_claims(void **state)
{
    fixture *f = *state;
    sk_claim a[] = {{"clusterip", "10.0.0.1", 0}, {"nodeport", "30080", 0}};
    assert_int_equal(write_claims(f->s, SK_WRITE_CREATE, "default", "a", a, 2), SK_OK);
    int64_t rev = current_rev(f);

    sk_claim b[] = {{"clusterip", "10.0.0.2", 0}, {"nodeport", "30080", 0}};
    assert_int_equal(write_claims(f->s, SK_WRITE_CREATE, "default", "b", b, 2), SK_ERR_CONFLICT);
    assert_int_equal(b[0].taken, 0);
    assert_int_equal(b[1].taken, 1);
    assert_int_equal(current_rev(f), rev);
    sk_row row = {0};
    assert_int_equal(sk_store_get(f->s, SVC, "default", "b", 0, &row), SK_ERR_NOT_FOUND);
    /* The same value in another kind is another value. */
    sk_claim b2[] = {{"clusterip", "10.0.0.2", 0}, {"nodeport", "10.0.0.1", 0}};
    assert_int_equal(write_claims(f->s, SK_WRITE_CREATE, "default", "b", b2, 2), SK_OK);

    /* Owning a value again is no conflict; listed twice, it is recorded once. */
    sk_claim a_again[] = {
        {"clusterip", "10.0.0.1", 0}, {"nodeport", "30080", 0}, {"nodeport", "30080", 0}};
    assert_int_equal(write_claims(f->s, SK_WRITE_UPDATE, "default", "a", a_again, 3), SK_OK);
    /* An update without claims keeps them. */
    update(f, SVC, "default", "a", "other");
    assert_int_equal(write_claims(f->s, SK_WRITE_UPDATE, "default", "b", b, 2), SK_ERR_CONFLICT);
    assert_int_equal(b[1].taken, 1);
    /* Dropping the port from a's list releases it. */
    assert_int_equal(write_claims(f->s, SK_WRITE_UPDATE, "default", "a", a, 1), SK_OK);
    assert_int_equal(write_claims(f->s, SK_WRITE_UPDATE, "default", "b", b, 2), SK_OK);
    assert_int_equal(b[1].taken, 0);
    /* b no longer owns ("nodeport", "10.0.0.1"): a may take it. */
    sk_claim a2[] = {{"clusterip", "10.0.0.1", 0}, {"nodeport", "10.0.0.1", 0}};
    assert_int_equal(write_claims(f->s, SK_WRITE_UPDATE, "default", "a", a2, 2), SK_OK);

    /* A delete releases everything. */
    sk_claim c[] = {{"clusterip", "10.0.0.1", 0}};
    assert_int_equal(write_claims(f->s, SK_WRITE_CREATE, "default", "c", c, 1), SK_ERR_CONFLICT);
    delete (f, SVC, "default", "a");
    assert_int_equal(write_claims(f->s, SK_WRITE_CREATE, "default", "c", c, 1), SK_OK);
    /* A failed precondition is reported as such, claims unmarked. */
    c[0].taken = 0;
    assert_int_equal(write_claims(f->s, SK_WRITE_CREATE, "default", "c", c, 1),
                     SK_ERR_ALREADY_EXISTS);
    assert_int_equal(c[0].taken, 0);
}

enum { CLAIM_THREADS = 8, CLAIMS_PER_THREAD = 30, CLAIM_VALUES = 20 };

typedef struct claim_racer {
    sk_store *s;
    int id;
    int won[CLAIMS_PER_THREAD]; /* the value won by each attempt, -1 if refused */
} claim_racer;

/* Each attempt creates its own object claiming one of a few values. */
static void *race_claims(void *arg)
{
    claim_racer *cr = arg;
    for (int i = 0; i < CLAIMS_PER_THREAD; i++) {
        char name[32], value[16];
        int v = (cr->id * 7 + i * 3) % CLAIM_VALUES;
        snprintf(name, sizeof name, "r%d-%d", cr->id, i);
        snprintf(value, sizeof value, "%d", v);
        sk_claim c[] = {{"nodeport", value, 0}};
        sk_err err = write_claims(cr->s, SK_WRITE_CREATE, "default", name, c, 1);
        if (err != SK_OK && (err != SK_ERR_CONFLICT || !c[0].taken))
            fail_msg("claim %s: %s", name, sk_err_name(err));
        cr->won[i] = err == SK_OK ? v : -1;
    }
    return NULL;
}

/*
 * Writers racing for a few values, through three stores (on PostgreSQL,
 * three writers with their own connections, as three processes would
 * be): every value is won exactly once, and every refusal left no row.
 */
static void test_claims_race(void **state)
{
    fixture *f = *state;
    sk_store *stores[3] = {f->s, NULL, NULL};
    for (int i = 1; i < 3; i++) {
        char *msg = NULL;
        assert_int_equal(sk_store_open(f->url, &stores[i], &msg), SK_OK);
    }
    claim_racer racers[CLAIM_THREADS];
    pthread_t threads[CLAIM_THREADS];
    for (int i = 0; i < CLAIM_THREADS; i++) {
        racers[i] = (claim_racer){.s = stores[i % 3], .id = i};
        assert_int_equal(pthread_create(&threads[i], NULL, race_claims, &racers[i]), 0);
    }
    for (int i = 0; i < CLAIM_THREADS; i++)
        pthread_join(threads[i], NULL);
    int owners[CLAIM_VALUES] = {0};
    int wins = 0;
    for (int i = 0; i < CLAIM_THREADS; i++)
        for (int j = 0; j < CLAIMS_PER_THREAD; j++)
            if (racers[i].won[j] >= 0) {
                owners[racers[i].won[j]]++;
                wins++;
            }
    for (int v = 0; v < CLAIM_VALUES; v++)
        assert_int_equal(owners[v], 1);
    assert_int_equal(current_rev(f), wins);
    sk_store_close(stores[1]);
    sk_store_close(stores[2]);
}

typedef struct opener {
    const char *url;
    sk_err err;
} opener;

static void *open_and_close(void *arg)
{
    opener *o = arg;
    sk_store *s = NULL;
    char *msg = NULL;
    o->err = sk_store_open(o->url, &s, &msg);
    free(msg);
    sk_store_close(s);
    return NULL;
}

/* Several processes starting at once against an empty database must
 * migrate it exactly once, and all of them must come up. */
static void test_concurrent_migrate(void **state)
{
    fixture *f = *state;
    opener o[6];
    pthread_t th[6];
    for (int i = 0; i < 6; i++) {
        o[i] = (opener){f->url, SK_ERR_INTERNAL};
        assert_int_equal(pthread_create(&th[i], NULL, open_and_close, &o[i]), 0);
    }
    for (int i = 0; i < 6; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 6; i++)
        if (o[i].err != SK_OK)
            fail_msg("opener %d: %s", i, sk_err_name(o[i].err));
    store_open(f);
    assert_int_equal(create(f, CM, "default", "a", "x"), 1);
    unsigned char a[32], b[32];
    assert_int_equal(sk_store_token_secret(f->s, a), SK_OK);
    store_reopen(f);
    assert_int_equal(sk_store_token_secret(f->s, b), SK_OK);
    assert_memory_equal(a, b, sizeof a);
}

/* PostgreSQL: listeners get one NOTIFY per committed transaction, carrying
 * its last revision. */
static void test_postgres_notify(void **state)
{
    fixture *f = *state;
    if (is_sqlite(f->url))
        skip();
    PGconn *pg = PQconnectdb(f->url);
    assert_int_equal(PQstatus(pg), CONNECTION_OK);
    PGresult *res = PQexec(pg, "LISTEN sqlkube_commit");
    assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
    PQclear(res);

    create(f, "namespaces", "", "doomed", "");
    create(f, CM, "doomed", "a", "x");
    create(f, CM, "doomed", "b", "x");
    create(f, "secrets", "doomed", "c", "x");
    delete (f, CM, "doomed", "b");

    static const char *const want[] = {"1", "2", "3", "4", "5"};
    size_t got = 0;
    for (int waited = 0; got < 5 && waited < 50; waited++) {
        PGnotify *n;
        assert_int_equal(PQconsumeInput(pg), 1);
        while ((n = PQnotifies(pg)) != NULL) {
            assert_string_equal(n->relname, "sqlkube_commit");
            assert_true(got < 5);
            assert_string_equal(n->extra, want[got]);
            got++;
            PQfreemem(n);
        }
        if (got < 5)
            usleep(100 * 1000);
    }
    assert_int_equal(got, 5);
    PQfinish(pg);
}

typedef struct delayed_create {
    fixture *f;
    int delay_ms;
    int64_t rev;
} delayed_create;

static void *create_after_delay(void *arg)
{
    delayed_create *d = arg;
    usleep((useconds_t)d->delay_ms * 1000);
    d->rev = create(d->f, CM, "", "late", "x");
    return NULL;
}

/* A waiter learns of another store's commit (another process's, on
 * PostgreSQL: through its notification, whose revision is trusted as read)
 * well before the counter's once-a-second read, and of its own store's at
 * once; with nothing committed it waits out its timeout. */
static void test_wait_commit(void **state)
{
    fixture *f = *state;
    sk_store *other = NULL;
    char *msg = NULL;
    assert_int_equal(sk_store_open(f->url, &other, &msg), SK_OK);
    fixture of = *f;
    of.s = other;
    int64_t cur = create(f, "namespaces", "", "w", "");
    int64_t rev = 0, compact = 0;
    /* the first wait starts listening and reads the counter */
    assert_int_equal(sk_store_wait_commit(f->s, cur, 50, &rev, &compact), SK_OK);
    assert_true(rev == cur);
    int64_t t0 = sk_now_ms();
    assert_int_equal(sk_store_wait_commit(f->s, cur, 200, &rev, &compact), SK_OK);
    assert_true(rev == cur);
    assert_true(sk_now_ms() - t0 >= 190);

    fixture *writer = is_sqlite(f->url) ? f : &of; /* one SQLite file, one writer */
    delayed_create d = {.f = writer, .delay_ms = 100};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, create_after_delay, &d), 0);
    t0 = sk_now_ms();
    assert_int_equal(sk_store_wait_commit(f->s, cur, 5000, &rev, &compact), SK_OK);
    int64_t waited = sk_now_ms() - t0;
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(rev == d.rev && rev == cur + 1);
    assert_true(waited < 700);

    int64_t own = create(f, CM, "", "own", "x");
    t0 = sk_now_ms();
    assert_int_equal(sk_store_wait_commit(f->s, own - 1, 5000, &rev, &compact), SK_OK);
    assert_true(rev >= own);
    assert_true(sk_now_ms() - t0 < 700);
    sk_store_close(other);
}

/* ---- compaction ---- */

static void test_compaction_basics(void **state)
{
    fixture *f = *state;
    create(f, CM, "default", "a", "a1"); /* 1 superseded */
    update(f, CM, "default", "a", "a2"); /* 2 superseded */
    update(f, CM, "default", "a", "a3"); /* 3 kept */
    create(f, CM, "default", "b", "b1"); /* 4 hidden by a tombstone */
    delete (f, CM, "default", "b");      /* 5 tombstone */
    create(f, CM, "default", "c", "c1"); /* 6 kept */
    create(f, CM, "default", "d", "d1"); /* 7 superseded, but after upto */
    update(f, CM, "default", "d", "d2"); /* 8 */
    delete (f, CM, "default", "c");      /* 9 after upto: c1 must stay */

    int64_t removed = -1;
    assert_int_equal(sk_store_compact(f->s, 6, &removed), SK_OK);
    assert_int_equal(removed, 4);
    assert_int_equal(compact_rev(f), 6);
    assert_int_equal(current_rev(f), 9);

    rows h = {0};
    read_history(f, &h);
    static const int64_t left[] = {7, 8, 9};
    assert_int_equal(h.n, 3);
    for (size_t i = 0; i < h.n; i++)
        assert_int_equal(h.v[i].rev, left[i]);
    rows_free(&h);

    /* Older than the compaction: expired, with no row visited. */
    sk_row row = {0};
    assert_int_equal(sk_store_get(f->s, CM, "default", "a", 2, &row), SK_ERR_EXPIRED);
    sk_list_query q = {CM, NULL, NULL, NULL, 3, 10};
    assert_int_equal(sk_store_list(f->s, &q, collect, &h), SK_ERR_EXPIRED);
    assert_int_equal(h.n, 0);
    assert_int_equal(sk_store_history(f->s, 5, INT64_MAX, 10, collect, &h), SK_ERR_EXPIRED);
    assert_int_equal(h.n, 0);

    /* From the compaction revision on, everything answers as before. */
    char *p = get_payload(f, "default", "a", 0, SK_OK);
    assert_string_equal(p, "a3");
    free(p);
    p = get_payload(f, "default", "c", 8, SK_OK);
    assert_string_equal(p, "c1");
    free(p);
    p = get_payload(f, "default", "d", 7, SK_OK);
    assert_string_equal(p, "d1");
    free(p);
    get_payload(f, "default", "b", 0, SK_ERR_NOT_FOUND);
    get_payload(f, "default", "b", 7, SK_ERR_NOT_FOUND);
    get_payload(f, "default", "c", 9, SK_ERR_NOT_FOUND);
    assert_int_equal(count_rows(f, NULL, 6), 2);
    assert_int_equal(count_rows(f, NULL, 9), 2);

    /* Again: nothing left to do. */
    assert_int_equal(sk_store_compact(f->s, 6, &removed), SK_OK);
    assert_int_equal(removed, 0);

    /* Writes continue normally after compaction. */
    assert_int_equal(create(f, CM, "default", "b", "b2"), 10);
}

/* Many versions (several compaction batches), tombstones and re-creates:
 * afterwards every list from the compaction revision on still matches what
 * history said before, and exactly the superseded rows are gone. */
static void test_compaction_large(void **state)
{
    fixture *f = *state;
    char name[16];
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "k%02d", i);
        create(f, CM, i % 2 ? "odd" : "even", name, "v0");
    }
    for (int round = 1; round <= 50; round++) {
        for (int i = 0; i < 50; i++) {
            snprintf(name, sizeof name, "k%02d", i);
            if (i % 10 == 0 && round == 25)
                delete (f, CM, i % 2 ? "odd" : "even", name);
            else if (i % 10 == 0 && round == 40)
                create(f, CM, i % 2 ? "odd" : "even", name, "reborn");
            else if (i % 10 != 0 || round < 25 || round > 40)
                update(f, CM, i % 2 ? "odd" : "even", name, "vN");
        }
    }
    int64_t end = current_rev(f);
    int64_t upto = end - 120;

    rows before = {0};
    read_history(f, &before);
    size_t doomed = 0;
    for (size_t i = 0; i < before.n; i++) {
        const sk_row *r = &before.v[i];
        int superseded = 0;
        for (size_t j = i + 1; j < before.n && before.v[j].rev <= upto; j++)
            if (key_cmp(r, &before.v[j]) == 0) {
                superseded = 1;
                break;
            }
        doomed += r->rev <= upto && (superseded || r->deleted);
    }
    rows want[3] = {{0}};
    int64_t ats[3] = {upto + 1, upto + 60, end};
    for (int i = 0; i < 3; i++)
        model_at(&before, CM, NULL, ats[i], &want[i]);

    int64_t removed = -1;
    assert_int_equal(sk_store_compact(f->s, upto, &removed), SK_OK);
    assert_int_equal(removed, (int64_t)doomed);
    assert_int_equal(compact_rev(f), upto);
    sk_row row = {0};
    assert_int_equal(sk_store_get(f->s, CM, "even", "k00", upto - 1, &row), SK_ERR_EXPIRED);
    for (int i = 0; i < 3; i++) {
        rows got = {0};
        assert_int_equal(list_all_pages(f, CM, NULL, ats[i], 9, NULL, &got), SK_OK);
        assert_same_rows(&got, &want[i]);
        rows_free(&got);
        rows_free(&want[i]);
    }
    /* The feed after the compaction revision is untouched. */
    rows after = {0};
    read_history(f, &after);
    size_t kept = 0;
    for (size_t i = 0; i < before.n; i++) {
        if (before.v[i].rev <= upto)
            continue;
        assert_true(kept < after.n);
        assert_int_equal(after.v[kept].rev, before.v[i].rev);
        kept++;
    }
    assert_int_equal(after.n, kept);
    rows_free(&after);

    /* Compacting everything leaves exactly the live objects. */
    int64_t more = -1;
    assert_int_equal(sk_store_compact(f->s, end, &more), SK_OK);
    assert_int_equal(compact_rev(f), end);
    assert_int_equal(before.n - (size_t)removed - (size_t)more, 50);
    rows_free(&before);
    read_history(f, &after);
    assert_int_equal(after.n, 0);
    assert_int_equal(count_rows(f, NULL, end), 50);
}

/* ---- compaction across processes ---- */

static sk_store *open_other(fixture *f)
{
    sk_store *s = NULL;
    char *msg = NULL;
    sk_err err = sk_store_open(f->url, &s, &msg);
    if (err != SK_OK)
        fail_msg("sk_store_open(%s): %s: %s", f->url, sk_err_name(err), msg ? msg : "");
    return s;
}

static int claim(sk_store *s, int64_t interval_ms)
{
    int won = -1;
    assert_int_equal(sk_store_compact_claim(s, interval_ms, &won), SK_OK);
    assert_true(won == 0 || won == 1);
    return won;
}

typedef struct claimer {
    sk_store *s;
    pthread_barrier_t *start;
    sk_err err;
    int won;
} claimer;

static void *claim_at_once(void *arg)
{
    claimer *k = arg;
    pthread_barrier_wait(k->start);
    k->err = sk_store_compact_claim(k->s, 60 * 1000, &k->won);
    return NULL;
}

/*
 * The periodic compactors of several processes (two stores, several threads
 * each): of claims racing within one interval exactly one wins; once the
 * interval has passed a claim wins again; a manual pass claims regardless,
 * and the periodic ones then skip.
 */
static void test_compaction_claim(void **state)
{
    fixture *f = *state;
    sk_store *other = open_other(f);
    enum { N = 8 };
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N);
    claimer k[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        k[i] = (claimer){i % 2 ? other : f->s, &start, SK_ERR_INTERNAL, 0};
        assert_int_equal(pthread_create(&th[i], NULL, claim_at_once, &k[i]), 0);
    }
    int winners = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(k[i].err, SK_OK);
        winners += k[i].won;
    }
    pthread_barrier_destroy(&start);
    assert_int_equal(winners, 1);
    assert_int_equal(claim(f->s, 60 * 1000), 0);
    assert_int_equal(claim(other, 60 * 1000), 0);

    /* A 50 ms interval, after 100 ms: won, and then lost within it. */
    usleep(100 * 1000);
    assert_int_equal(claim(other, 50), 1);
    assert_int_equal(claim(f->s, 60 * 1000), 0);
    usleep(100 * 1000);
    assert_int_equal(claim(f->s, 50), 1);

    /* A manual pass always claims; a periodic one right after it skips. */
    assert_int_equal(claim(other, 0), 1);
    assert_int_equal(claim(other, 0), 1);
    assert_int_equal(claim(f->s, 60 * 1000), 0);
    sk_store_close(other);
}

/* A compaction through another store (another process) is seen by this
 * store's reads at once: below its revision get, list and history expire
 * without visiting a row; from it on they answer as before. */
static void test_compaction_seen_by_other_store(void **state)
{
    fixture *f = *state;
    sk_store *other = open_other(f);
    create(f, CM, "default", "a", "a1"); /* 1 */
    update(f, CM, "default", "a", "a2"); /* 2 */
    update(f, CM, "default", "a", "a3"); /* 3 */
    create(f, CM, "default", "b", "b1"); /* 4 */
    delete (f, CM, "default", "b");      /* 5 */
    create(f, CM, "default", "c", "c1"); /* 6 */
    char *p = get_payload(f, "default", "a", 2, SK_OK);
    assert_string_equal(p, "a2");
    free(p);

    int64_t removed = -1;
    assert_int_equal(sk_store_compact(other, 4, &removed), SK_OK);
    assert_int_equal(removed, 2);
    assert_int_equal(compact_rev(f), 4);

    get_payload(f, "default", "a", 2, SK_ERR_EXPIRED);
    get_payload(f, "default", "a", 3, SK_ERR_EXPIRED);
    get_payload(f, "default", "zz", 3, SK_ERR_EXPIRED);
    rows h = {0};
    sk_list_query q = {CM, NULL, NULL, NULL, 3, 10};
    assert_int_equal(sk_store_list(f->s, &q, collect, &h), SK_ERR_EXPIRED);
    assert_int_equal(h.n, 0);
    q.ns = "default";
    assert_int_equal(sk_store_list(f->s, &q, collect, &h), SK_ERR_EXPIRED);
    assert_int_equal(h.n, 0);
    assert_int_equal(sk_store_history(f->s, 3, INT64_MAX, 10, collect, &h), SK_ERR_EXPIRED);
    assert_int_equal(h.n, 0);

    p = get_payload(f, "default", "a", 4, SK_OK);
    assert_string_equal(p, "a3");
    free(p);
    get_payload(f, "default", "zz", 4, SK_ERR_NOT_FOUND);
    q.rev = 4;
    assert_int_equal(sk_store_list(f->s, &q, collect, &h), SK_OK);
    assert_int_equal(h.n, 2); /* a@3, b@4 */
    assert_int_equal(h.v[0].rev, 3);
    assert_int_equal(h.v[1].rev, 4);
    rows_free(&h);
    assert_int_equal(sk_store_history(f->s, 4, INT64_MAX, 10, collect, &h), SK_OK);
    assert_int_equal(h.n, 2);
    assert_int_equal(h.v[0].rev, 5);
    assert_int_equal(h.v[1].rev, 6);
    rows_free(&h);
    sk_store_close(other);
}

typedef struct racer {
    sk_store *s;
    int64_t end;
    atomic_int finished;
    sk_err err;
} racer;

/* Compacts a few revisions further at a time, up to the end. */
static void *compact_upward(void *arg)
{
    racer *r = arg;
    int64_t upto = 0;
    while (upto < r->end && r->err == SK_OK) {
        upto = upto + 5 < r->end ? upto + 5 : r->end;
        r->err = sk_store_compact(r->s, upto, NULL);
    }
    atomic_store(&r->finished, 1);
    return NULL;
}

/*
 * Reads at a fixed revision racing another store's compaction past it: every
 * answer is either exactly what history said before, or SK_ERR_EXPIRED with
 * nothing visited; never a partial list, a lost key or a gap in the feed.
 */
static void test_reads_race_compaction(void **state)
{
    fixture *f = *state;
    char name[16];
    for (int round = 0; round < 25; round++)
        for (int i = 0; i < 20; i++) {
            snprintf(name, sizeof name, "k%02d", i);
            if (round == 0 || (i % 7 == 3 && round % 8 == 4))
                create(f, CM, "default", name, "v");
            else if (i % 7 == 3 && round % 8 == 3)
                delete (f, CM, "default", name);
            else
                update(f, CM, "default", name, "v");
        }
    rows before = {0}, want = {0};
    read_history(f, &before);
    int64_t end = current_rev(f), at = end / 2;
    model_at(&before, CM, NULL, at, &want);
    size_t feed_from = 0;
    while (before.v[feed_from].rev <= at)
        feed_from++;

    racer r = {.s = open_other(f), .end = end, .err = SK_OK};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, compact_upward, &r), 0);
    int answered = 0, expired = 0;
    while (!atomic_load(&r.finished) || expired == 0) {
        rows got = {0};
        sk_list_query q = {CM, "default", NULL, NULL, at, 1000};
        sk_err err = sk_store_list(f->s, &q, collect, &got);
        if (err == SK_OK)
            assert_same_rows(&got, &want);
        else
            assert_true(err == SK_ERR_EXPIRED && got.n == 0);
        rows_free(&got);

        err = sk_store_history(f->s, at, INT64_MAX, 1000, collect, &got);
        if (err == SK_OK) {
            assert_int_equal(got.n, before.n - feed_from);
            for (size_t i = 0; i < got.n; i++)
                assert_int_equal(got.v[i].rev, before.v[feed_from + i].rev);
        } else {
            assert_true(err == SK_ERR_EXPIRED && got.n == 0);
        }
        rows_free(&got);

        for (size_t i = 0; i < want.n; i++) {
            sk_row row = {0};
            err = sk_store_get(f->s, CM, "default", want.v[i].name, at, &row);
            if (err == SK_OK)
                assert_int_equal(row.rev, want.v[i].rev);
            else
                assert_int_equal(err, SK_ERR_EXPIRED);
            sk_row_clear(&row);
        }
        answered += err == SK_OK;
        expired += err == SK_ERR_EXPIRED;
    }
    pthread_join(th, NULL);
    assert_int_equal(r.err, SK_OK);
    assert_true(answered > 0);
    assert_int_equal(compact_rev(f), end);
    sk_store_close(r.s);
    rows_free(&want);
    rows_free(&before);
}

/*
 * SQLite: under a steady update load with periodic compaction the database
 * file stops growing: pages freed by compaction are reused or returned to
 * the file system (incremental vacuum), and the WAL is truncated after each
 * pass. 20,000 updates of 50 keys, compacting every 1,000 writes to 200
 * revisions behind; after warm-up, no pass may leave the files bigger than
 * the pass before by more than a few pages.
 */
static void test_sqlite_file_stops_growing(void **state)
{
    fixture *f = *state;
    if (!is_sqlite(f->url))
        skip();
    enum { KEYS = 50, ROUNDS = 400, COMPACT_EVERY = 20, RETAIN = 200, SLACK = 4 * 4096 };
    char path[4096], wal[4100], payload[400];
    snprintf(path, sizeof path, "%s", f->url + 7);
    snprintf(wal, sizeof wal, "%s-wal", path);
    memset(payload, 'x', sizeof payload - 1);
    payload[sizeof payload - 1] = '\0';
    op_slot ops[KEYS];
    memset(ops, 0, sizeof ops);
    for (int i = 0; i < KEYS; i++) {
        snprintf(ops[i].ns, sizeof ops[i].ns, "default");
        snprintf(ops[i].name, sizeof ops[i].name, "k%02d", i);
        create(f, CM, ops[i].ns, ops[i].name, payload);
        ops[i].req = (wreq){.op = SK_WRITE_UPDATE,
                            .resource = CM,
                            .ns = ops[i].ns,
                            .name = ops[i].name,
                            .payload = payload};
    }
    long long last = 0, first = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        concurrent c = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
        for (int i = 0; i < KEYS; i++)
            submit(&c, f->s, &ops[i]); /* one group commit per round */
        wait_finished(&c, KEYS);
        for (int i = 0; i < KEYS; i++)
            assert_int_equal(ops[i].got, SK_OK);
        if (round % COMPACT_EVERY)
            continue;
        assert_int_equal(sk_store_compact(f->s, current_rev(f) - RETAIN, NULL), SK_OK);
        struct stat db, log;
        assert_int_equal(stat(path, &db), 0);
        long long size = (long long)db.st_size + (stat(wal, &log) == 0 ? log.st_size : 0);
        if (round == 3 * COMPACT_EVERY)
            first = size;
        if (round > 3 * COMPACT_EVERY && size > last + SLACK)
            fail_msg("after %d rounds the files grew from %lld to %lld bytes", round, last, size);
        last = size;
    }
    assert_true(last <= first + SLACK);
}

/* ---- persistence ---- */

static void test_token_secret_stable(void **state)
{
    fixture *f = *state;
    unsigned char a[32], b[32], zero[32] = {0};
    assert_int_equal(sk_store_token_secret(f->s, a), SK_OK);
    assert_memory_not_equal(a, zero, sizeof a);
    store_reopen(f);
    assert_int_equal(sk_store_token_secret(f->s, b), SK_OK);
    assert_memory_equal(a, b, sizeof a);
}

static void test_survives_reopen(void **state)
{
    fixture *f = *state;
    create(f, CM, "default", "a", "v1");
    update(f, CM, "default", "a", "v2");
    create(f, CM, "default", "b", "b1");
    delete (f, CM, "default", "b");
    assert_int_equal(sk_store_compact(f->s, 2, NULL), SK_OK);
    store_reopen(f);
    assert_int_equal(current_rev(f), 4);
    assert_int_equal(compact_rev(f), 2);
    char *p = get_payload(f, "default", "a", 0, SK_OK);
    assert_string_equal(p, "v2");
    free(p);
    get_payload(f, "default", "b", 0, SK_ERR_NOT_FOUND);
    assert_int_equal(create(f, CM, "default", "c", "c1"), 5);
    /* Opening twice (a second process, or a restart) migrates nothing. */
    sk_store *second = NULL;
    char *msg = NULL;
    assert_int_equal(sk_store_open(f->url, &second, &msg), SK_OK);
    int64_t rev = 0, compact = 0;
    assert_int_equal(sk_store_revisions(second, &rev, &compact), SK_OK);
    assert_int_equal(rev, 5);
    sk_store_close(second);
}

/* What waiting may fix is SK_ERR_UNAVAILABLE (a server that does not
 * answer); a file that cannot be opened and a URL libpq cannot parse are
 * not, so `serve` exits on them rather than waiting (store.h). */
static void test_bad_url(void **state)
{
    fixture *f = *state;
    sk_store *s = NULL;
    char *msg = NULL;
    const char *url = is_sqlite(f->url) ? "sqlite:/nonexistent-dir/x/y.db"
                                        : "postgres://postgres@127.0.0.1:1/nope";
    sk_err err = sk_store_open(url, &s, &msg);
    assert_int_not_equal(err, SK_OK);
    assert_true(is_sqlite(f->url) ? err != SK_ERR_UNAVAILABLE : err == SK_ERR_UNAVAILABLE);
    assert_non_null(msg);
    assert_null(strchr(msg, '\n'));
    free(msg);
    if (is_sqlite(f->url))
        return;
    msg = NULL;
    assert_int_equal(sk_store_open("postgres://127.0.0.1:1/x?nosuchoption=1", &s, &msg),
                     SK_ERR_BAD_REQUEST);
    assert_non_null(strstr(msg, "invalid PostgreSQL URL"));
    free(msg);
}

/* ---- the etcd keyspace ---------------------------------------------------- */

#define B(s) (const unsigned char *)(s), strlen(s)

static sk_kv_op kv_put_op(const char *key, const char *value)
{
    sk_kv_op op = {.kind = SK_KV_OP_PUT, .value = (const unsigned char *)value,
                   .value_len = strlen(value)};
    op.range.key = (const unsigned char *)key;
    op.range.key_len = strlen(key);
    return op;
}

/* A one-operation transaction; returns its revision. */
static int64_t kv_one(fixture *f, sk_kv_op op, sk_arena *a, sk_kv_txn_result *out)
{
    sk_kv_txn t = {.success = &op, .n_success = 1};
    sk_kv_txn_result res;
    assert_int_equal(sk_store_kv_txn(f->s, &t, a, &res), SK_OK);
    assert_true(res.succeeded);
    if (out)
        *out = res;
    return res.rev;
}

static int64_t kv_put(fixture *f, const char *key, const char *value)
{
    sk_arena *a = sk_arena_new();
    int64_t rev = kv_one(f, kv_put_op(key, value), a, NULL);
    sk_arena_free(a);
    return rev;
}

static sk_kv_range kv_q(const char *key, const char *end, size_t end_len)
{
    sk_kv_range q = {.key = (const unsigned char *)key, .key_len = strlen(key),
                     .end = (const unsigned char *)end, .end_len = end_len};
    return q;
}

static void assert_kv(const sk_kv *kv, const char *key, const char *value, int64_t create,
                      int64_t mod, int64_t version)
{
    assert_int_equal(kv->key_len, strlen(key));
    assert_memory_equal(kv->key, key, kv->key_len);
    if (value) {
        assert_int_equal(kv->value_len, strlen(value));
        assert_memory_equal(kv->value, value, kv->value_len);
    }
    assert_int_equal(kv->create_rev, create);
    assert_int_equal(kv->mod_rev, mod);
    assert_int_equal(kv->version, version);
}

/* Put and range: single keys, prefixes, from-key, limits with etcd's Count
 * and More, count_only, keys_only, old and future revisions, binary bytes. */
static void test_kv_range(void **state)
{
    fixture *f = *state;
    sk_arena *a = sk_arena_new();
    int64_t r1 = kv_put(f, "a", "1");
    int64_t r2 = kv_put(f, "a/x", "2");
    int64_t r3 = kv_put(f, "a/y", "3");
    int64_t r4 = kv_put(f, "b", "4");
    int64_t r5 = kv_put(f, "a/x", "22");
    assert_int_equal(r2, r1 + 1);
    assert_int_equal(r5, r4 + 1);
    sk_kv_range_result res;
    int64_t hdr = 0;

    sk_kv_range q = kv_q("a/x", NULL, 0); /* single key */
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(hdr, r5);
    assert_int_equal(res.n_kvs, 1);
    assert_int_equal(res.count, 1);
    assert_false(res.more);
    assert_kv(&res.kvs[0], "a/x", "22", r2, r5, 2);

    q = kv_q("a/", "a0", 2); /* the prefix "a/" */
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(res.n_kvs, 2);
    assert_kv(&res.kvs[0], "a/x", "22", r2, r5, 2);
    assert_kv(&res.kvs[1], "a/y", "3", r3, r3, 1);

    q = kv_q("a/", "\0", 1); /* from a key on */
    q.limit = 2;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(res.n_kvs, 2);
    assert_int_equal(res.count, 3);
    assert_true(res.more);
    q.limit = 3;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(res.n_kvs, 3);
    assert_int_equal(res.count, 3);
    assert_false(res.more);

    q = kv_q("\0", "\0", 1); /* everything, counted */
    q.key_len = 1;
    q.count_only = 1;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(res.n_kvs, 0);
    assert_int_equal(res.count, 4);
    assert_false(res.more);

    q = kv_q("a", "b", 1);
    q.keys_only = 1;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(res.n_kvs, 3);
    assert_int_equal(res.kvs[0].value_len, 0);
    assert_int_equal(res.kvs[0].mod_rev, r1);

    q = kv_q("a/x", NULL, 0); /* history */
    q.rev = r4;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(hdr, r5);
    assert_int_equal(res.n_kvs, 1);
    assert_kv(&res.kvs[0], "a/x", "2", r2, r2, 1);
    q.rev = r1;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(res.n_kvs, 0);
    q.rev = r5 + 1;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_ERR_INVALID);

    /* Bytes, NUL included, and an empty value, on both backends. */
    static const unsigned char key[] = {'k', 0, 0xff, 'z'};
    sk_kv_op op = {.kind = SK_KV_OP_PUT, .value = (const unsigned char *)"", .value_len = 0};
    op.range.key = key;
    op.range.key_len = sizeof key;
    int64_t r6 = kv_one(f, op, a, NULL);
    q = (sk_kv_range){.key = key, .key_len = sizeof key};
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(res.n_kvs, 1);
    assert_int_equal(res.kvs[0].key_len, sizeof key);
    assert_memory_equal(res.kvs[0].key, key, sizeof key);
    assert_int_equal(res.kvs[0].value_len, 0);
    assert_int_equal(res.kvs[0].mod_rev, r6);
    q = kv_q("k", "l", 1);
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &res, &hdr), SK_OK);
    assert_int_equal(res.count, 1);
    sk_arena_free(a);
}

/* Transactions: compares judged before any write (nested ones too), one
 * revision for all of a transaction's writes, none for a failed check or a
 * read-only transaction, deletes with prev_kv; the revision is the one the
 * REST face uses, and the feed shows an etcd revision as an objectless row. */
static void test_kv_txn(void **state)
{
    fixture *f = *state;
    sk_arena *a = sk_arena_new();
    int64_t r1 = kv_put(f, "k", "v1");
    int64_t r2 = create(f, CM, "ns", "c1", "x");
    assert_int_equal(r2, r1 + 1);
    int64_t r3 = kv_put(f, "k", "v2");
    assert_int_equal(r3, r2 + 1);

    /* If mod(k) == r1 (false) then put, else get k. */
    sk_kv_compare cmp = {.target = SK_KV_MOD, .result = SK_KV_EQUAL, .number = r1};
    cmp.key = (const unsigned char *)"k";
    cmp.key_len = 1;
    sk_kv_op put = kv_put_op("k", "v3");
    sk_kv_op get = {.kind = SK_KV_OP_RANGE, .range = kv_q("k", NULL, 0)};
    sk_kv_txn t = {&cmp, 1, &put, 1, &get, 1};
    sk_kv_txn_result res;
    assert_int_equal(sk_store_kv_txn(f->s, &t, a, &res), SK_OK);
    assert_false(res.succeeded);
    assert_int_equal(res.rev, r3); /* read only: no revision */
    assert_int_equal(res.n_results, 1);
    assert_int_equal(res.results[0].range.n_kvs, 1);
    assert_kv(&res.results[0].range.kvs[0], "k", "v2", r1, r3, 2);
    assert_int_equal(current_rev(f), r3);

    /* Now it holds; two puts and a nested transaction take one revision,
     * and the nested compare sees k as it was before the outer put. */
    cmp.number = r3;
    sk_kv_compare inner_cmp = {.target = SK_KV_VALUE, .result = SK_KV_EQUAL};
    inner_cmp.key = (const unsigned char *)"k";
    inner_cmp.key_len = 1;
    inner_cmp.value = (const unsigned char *)"v2";
    inner_cmp.value_len = 2;
    sk_kv_op inner_put = kv_put_op("n", "nested");
    sk_kv_txn inner = {&inner_cmp, 1, &inner_put, 1, NULL, 0};
    sk_kv_op ops[3] = {kv_put_op("k", "v3"), kv_put_op("m", "new"),
                       {.kind = SK_KV_OP_TXN, .txn = &inner}};
    ops[0].prev_kv = 1;
    t = (sk_kv_txn){&cmp, 1, ops, 3, NULL, 0};
    assert_int_equal(sk_store_kv_txn(f->s, &t, a, &res), SK_OK);
    int64_t r4 = r3 + 1;
    assert_true(res.succeeded);
    assert_int_equal(res.rev, r4);
    assert_non_null(res.results[0].prev);
    assert_kv(res.results[0].prev, "k", "v2", r1, r3, 2);
    assert_true(res.results[2].txn->succeeded);
    assert_int_equal(current_rev(f), r4);
    sk_kv_range_result rr;
    int64_t hdr;
    sk_kv_range q = kv_q("k", "o", 1);
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_int_equal(rr.n_kvs, 3);
    assert_kv(&rr.kvs[0], "k", "v3", r1, r4, 3);
    assert_kv(&rr.kvs[1], "m", "new", r4, r4, 1);
    assert_kv(&rr.kvs[2], "n", "nested", r4, r4, 1);

    /* A put keeping the value of a missing key fails whole: no write. */
    sk_kv_op ops2[2] = {kv_put_op("p", "1"), kv_put_op("missing", "")};
    ops2[1].ignore_value = 1;
    t = (sk_kv_txn){NULL, 0, ops2, 2, NULL, 0};
    assert_int_equal(sk_store_kv_txn(f->s, &t, a, &res), SK_ERR_BAD_REQUEST);
    assert_int_equal(current_rev(f), r4);
    /* ignore_value on a live key keeps its value. */
    sk_kv_op keep = kv_put_op("m", "");
    keep.ignore_value = 1;
    int64_t r5 = kv_one(f, keep, a, NULL);
    q = kv_q("m", NULL, 0);
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_kv(&rr.kvs[0], "m", "new", r4, r5, 2);

    /* Delete a range with prev_kv; deleting nothing takes no revision. */
    sk_kv_op del = {.kind = SK_KV_OP_DELETE, .range = kv_q("k", "n", 1), .prev_kv = 1};
    sk_kv_txn_result dres;
    int64_t r6 = kv_one(f, del, a, &dres);
    assert_int_equal(r6, r5 + 1);
    assert_int_equal(dres.results[0].deleted, 2);
    assert_kv(&dres.results[0].prev_kvs[1], "m", "new", r4, r5, 2);
    assert_int_equal(kv_one(f, del, a, &dres), r6);
    assert_int_equal(dres.results[0].deleted, 0);
    q = kv_q("\0", "\0", 1);
    q.key_len = 1;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_int_equal(rr.n_kvs, 1); /* n */
    /* A re-created key starts over. */
    int64_t r7 = kv_put(f, "k", "again");
    q = kv_q("k", NULL, 0);
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_kv(&rr.kvs[0], "k", "again", r7, r7, 1);

    /* The feed: gap-free, the etcd revisions without an object. */
    rows h = {0};
    assert_int_equal(sk_store_history(f->s, 0, INT64_MAX, 100, collect, &h), SK_OK);
    assert_int_equal(h.n, (size_t)r7);
    for (size_t i = 0; i < h.n; i++) {
        assert_int_equal(h.v[i].rev, (int64_t)i + 1);
        assert_int_equal(strcmp(h.v[i].resource, CM) == 0, h.v[i].rev == r2);
    }
    rows_free(&h);
    sk_arena_free(a);
}

static void assert_row_equal(const sk_row *got, const sk_row *want)
{
    assert_int_equal(got->rev, want->rev);
    assert_int_equal(got->create_rev, want->create_rev);
    assert_int_equal(got->prev_rev, want->prev_rev);
    assert_int_equal(got->deleted, want->deleted);
    assert_string_equal(got->resource, want->resource);
    assert_string_equal(got->ns, want->ns);
    assert_string_equal(got->name, want->name);
    assert_string_equal(got->uid, want->uid);
    assert_int_equal(got->value_len, want->value_len);
    assert_memory_equal(got->value, want->value, want->value_len);
}

/* History through s from every position after, `limit` rows a page, as the
 * feed reads it, against `want` (all of history, read from SQL). */
static void assert_history_pages(sk_store *s, const rows *want, int limit)
{
    for (size_t after = 0; after < want->n; after++) {
        rows got = {0};
        assert_int_equal(sk_store_history(s, (int64_t)after, (int64_t)want->n, limit, collect, &got), SK_OK);
        size_t n = want->n - after < (size_t)limit ? want->n - after : (size_t)limit;
        assert_int_equal(got.n, n);
        for (size_t i = 0; i < n; i++)
            assert_row_equal(&got.v[i], &want->v[after + i]);
        rows_free(&got);
    }
}

/*
 * The commit hand-off (store.c): a store answers history of its own commits
 * from memory, and that answer must be exactly what SQL holds, at every
 * position, field by field: with another store's revisions in between (read
 * from SQL: no gap, no duplicate), etcd revisions, deletes, and a group
 * commit a database error rolled back after some of its rows were written,
 * then replayed (PostgreSQL refuses the bad claim): nothing of a rolled-back
 * transaction may show.
 */
static void test_history_hand_off(void **state)
{
    fixture *f = *state;
    sk_store *other = open_other(f);
    create(f, CM, "default", "a", "a1");
    kv_put(f, "k", "v1");
    update(f, CM, "default", "a", "a2");
    wreq r = {.op = SK_WRITE_CREATE, .resource = CM, .ns = "default", .name = "o", .payload = "o"};
    sk_write w = to_write(&r);
    assert_int_equal(sk_store_write(other, &w, NULL), SK_OK);
    delete (f, CM, "default", "a");

    enum { N = 60, BAD = 17 };
    concurrent c = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    op_slot ops[N];
    slots_in_default(ops, N);
    /* PostgreSQL refuses the claim's bytes when the writer checks it, after
     * the intents before it in the same transaction have appended rows. */
    sk_claim bad = {.kind = "test", .value = "bad-\xff"};
    for (int i = 0; i < N; i++) {
        op_slot *op = &ops[i];
        snprintf(op->name, sizeof op->name, "ok-%d", i);
        op->req = (wreq){.op = SK_WRITE_CREATE,
                         .resource = CM,
                         .ns = op->ns,
                         .name = op->name,
                         .payload = "x"};
        if (i != BAD) {
            submit(&c, i % 3 ? f->s : other, op); /* two writers interleave */
            continue;
        }
        sk_write w = to_write(&op->req);
        w.set_claims = 1;
        w.claims = &bad;
        w.n_claims = 1;
        done_arg *d = malloc(sizeof *d);
        assert_non_null(d);
        *d = (done_arg){&c, op};
        sk_store_write_async(f->s, &w, on_done, d);
    }
    wait_finished(&c, N);
    for (int i = 0; i < N; i++)
        assert_true(i == BAD || ops[i].got == SK_OK);
    kv_put(f, "k", "v2");
    update(f, CM, "default", "o", "o2");

    sk_store *fresh = open_other(f); /* wrote nothing: reads SQL only */
    rows want = {0};
    assert_int_equal(sk_store_history(fresh, 0, INT64_MAX, 1000, collect, &want), SK_OK);
    assert_int_equal(want.n, (size_t)current_rev(f));
    for (size_t i = 0; i < want.n; i++)
        assert_int_equal(want.v[i].rev, (int64_t)i + 1);
    assert_history_pages(f->s, &want, 5);
    assert_history_pages(other, &want, 1000);
    rows_free(&want);
    sk_store_close(fresh);
    sk_store_close(other);
}

/* One key created, updated across a flush of the held rows (another key's
 * delete), deleted, created again, updated and refused within what are
 * mostly one batch (the writer is busy with the fillers when they arrive),
 * beside a create of a key that exists and an update of another: every
 * outcome as if the writes ran one by one, no batch refused and replayed,
 * and the current rows read back from SQL by a store that wrote nothing
 * (each key's newest history row, unless a tombstone). On PostgreSQL this
 * drives the writer's known keys across a flush, whose mistakes would show
 * as wrong outcomes here. */
static void test_batch_recreates_key(void **state)
{
    fixture *f = *state;
    create(f, CM, "default", "there", "t1");
    create(f, CM, "default", "moved", "m1");
    create(f, CM, "default", "gone", "g1");
    int64_t replays = sk_store_batch_replays(f->s);
    enum { FILLERS = 40, SEQ = 11, N = FILLERS + SEQ };
    static const struct {
        sk_write_op op;
        const char *name, *payload;
        sk_err want;
    } seq[SEQ] = {
        {SK_WRITE_CREATE, "k", "k1", SK_OK},
        {SK_WRITE_DELETE, "gone", NULL, SK_OK},
        {SK_WRITE_UPDATE, "k", "k1b", SK_OK},
        {SK_WRITE_DELETE, "k", NULL, SK_OK},
        {SK_WRITE_CREATE, "k", "k2", SK_OK},
        {SK_WRITE_UPDATE, "k", "k3", SK_OK},
        {SK_WRITE_CREATE, "k", "k4", SK_ERR_ALREADY_EXISTS},
        {SK_WRITE_CREATE, "there", "t2", SK_ERR_ALREADY_EXISTS},
        {SK_WRITE_UPDATE, "moved", "m2", SK_OK},
        {SK_WRITE_DELETE, "k", NULL, SK_OK},
        {SK_WRITE_CREATE, "k", "k5", SK_OK},
    };
    concurrent c = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    op_slot ops[N];
    slots_in_default(ops, N);
    for (int i = 0; i < N; i++) {
        op_slot *op = &ops[i];
        if (i < FILLERS) {
            snprintf(op->name, sizeof op->name, "filler-%d", i);
            op->req = (wreq){.op = SK_WRITE_CREATE, .payload = "f"};
            op->want = SK_OK;
        } else {
            snprintf(op->name, sizeof op->name, "%s", seq[i - FILLERS].name);
            op->req = (wreq){.op = seq[i - FILLERS].op, .payload = seq[i - FILLERS].payload};
            op->want = seq[i - FILLERS].want;
        }
        op->req.resource = CM;
        op->req.ns = op->ns;
        op->req.name = op->name;
        submit(&c, f->s, op);
    }
    wait_finished(&c, N);
    for (int i = 0; i < N; i++)
        if (ops[i].got != ops[i].want)
            fail_msg("write %d (%s): %s, want %s", i, ops[i].name, sk_err_name(ops[i].got),
                     sk_err_name(ops[i].want));
    assert_int_equal(sk_store_batch_replays(f->s), replays);
    sk_store *fresh = open_other(f); /* wrote nothing: reads SQL only */
    fixture g = *f;
    g.s = fresh;
    static const char *const want[][2] = {{"k", "k5"}, {"there", "t1"}, {"moved", "m2"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char *p = get_payload(&g, "default", want[i][0], 0, SK_OK);
        assert_string_equal(p, want[i][1]);
        free(p);
    }
    assert_null(get_payload(&g, "default", "gone", 0, SK_ERR_NOT_FOUND));
    sk_store_close(fresh);
}

/* Compaction covers the keyspace: reads below the compact revision expire,
 * at it they still see the version then live; superseded versions and
 * tombstones at or below it are gone; it survives a reopen. */
static void test_kv_compaction(void **state)
{
    fixture *f = *state;
    sk_arena *a = sk_arena_new();
    int64_t r1 = kv_put(f, "k", "v1");
    int64_t r2 = kv_put(f, "k", "v2");
    int64_t r3 = kv_put(f, "gone", "x");
    sk_kv_op del = {.kind = SK_KV_OP_DELETE, .range = kv_q("gone", NULL, 0)};
    int64_t r4 = kv_one(f, del, a, NULL);
    int64_t r5 = kv_put(f, "k", "v3");
    int64_t removed = 0;
    assert_int_equal(sk_store_compact(f->s, r4, &removed), SK_OK);
    assert_int_equal(removed, 3); /* k@r1, gone@r3 and its tombstone */
    sk_kv_range_result rr;
    int64_t hdr;
    sk_kv_range q = kv_q("k", NULL, 0);
    q.rev = r3;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_ERR_EXPIRED);
    q.rev = r4;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_kv(&rr.kvs[0], "k", "v2", r1, r2, 2);
    q.rev = 0;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_kv(&rr.kvs[0], "k", "v3", r1, r5, 3);
    /* A range revision below the compact one fails a transaction whole. */
    sk_kv_op ops[2] = {kv_put_op("z", "1"), {.kind = SK_KV_OP_RANGE, .range = kv_q("k", NULL, 0)}};
    ops[1].range.rev = r1;
    sk_kv_txn t = {NULL, 0, ops, 2, NULL, 0};
    sk_kv_txn_result res;
    assert_int_equal(sk_store_kv_txn(f->s, &t, a, &res), SK_ERR_EXPIRED);
    ops[1].range.rev = r5 + 1;
    assert_int_equal(sk_store_kv_txn(f->s, &t, a, &res), SK_ERR_INVALID);
    assert_int_equal(current_rev(f), r5);
    store_reopen(f);
    assert_int_equal(sk_store_compact(f->s, r5, &removed), SK_OK);
    assert_int_equal(removed, 1); /* k@r2 */
    q.rev = r5;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_kv(&rr.kvs[0], "k", "v3", r1, r5, 3);
    int64_t size = 0;
    assert_int_equal(sk_store_db_size(f->s, &size), SK_OK);
    assert_true(size > 0);
    sk_arena_free(a);
}

typedef struct seen_change {
    char text[512];
    size_t len;
} seen_change;

/* Records each change as "rev.sub key=value[deleted] prev=rev:value|". */
static int note_change(void *arg, const sk_kv_row *row, const sk_kv *prev)
{
    seen_change *s = arg;
    s->len += (size_t)snprintf(s->text + s->len, sizeof s->text - s->len, "%lld.%d %.*s=%.*s%s",
                               (long long)row->kv.mod_rev, row->sub, (int)row->kv.key_len,
                               (const char *)row->kv.key, (int)row->kv.value_len,
                               (const char *)row->kv.value, row->deleted ? "[deleted]" : "");
    if (prev)
        s->len += (size_t)snprintf(s->text + s->len, sizeof s->text - s->len, " prev=%lld:%.*s",
                                   (long long)prev->mod_rev, (int)prev->value_len,
                                   (const char *)prev->value);
    s->len += (size_t)snprintf(s->text + s->len, sizeof s->text - s->len, "|");
    return 0;
}

/* The watch feed's read: the writes of a span in (rev, sub) order, each
 * with the live version it replaced (none after a tombstone or for a new
 * key), only the span's; gated on compaction from after_rev + 1. */
static void test_kv_changes(void **state)
{
    fixture *f = *state;
    sk_arena *a = sk_arena_new();
    int64_t r1 = kv_put(f, "k", "v1");
    int64_t r2 = kv_put(f, "k", "v2");
    sk_kv_op del = {.kind = SK_KV_OP_DELETE, .range = kv_q("k", NULL, 0)};
    int64_t r3 = kv_one(f, del, a, NULL);
    int64_t r4 = kv_put(f, "k", "v4");
    sk_kv_op ops[2] = {kv_put_op("m", "1"), kv_put_op("k", "v5")};
    sk_kv_txn t = {NULL, 0, ops, 2, NULL, 0};
    sk_kv_txn_result res;
    assert_int_equal(sk_store_kv_txn(f->s, &t, a, &res), SK_OK);
    int64_t r5 = res.rev;
    seen_change s = {{0}, 0};
    assert_int_equal(sk_store_kv_changes(f->s, r1 - 1, r5, note_change, &s), SK_OK);
    char want[512];
    snprintf(want, sizeof want,
             "%lld.0 k=v1|%lld.0 k=v2 prev=%lld:v1|%lld.0 k=[deleted] prev=%lld:v2|%lld.0 k=v4|"
             "%lld.0 m=1|%lld.1 k=v5 prev=%lld:v4|",
             (long long)r1, (long long)r2, (long long)r1, (long long)r3, (long long)r2,
             (long long)r4, (long long)r5, (long long)r5, (long long)r4);
    assert_string_equal(s.text, want);
    s = (seen_change){{0}, 0};
    assert_int_equal(sk_store_kv_changes(f->s, r2, r3, note_change, &s), SK_OK);
    snprintf(want, sizeof want, "%lld.0 k=[deleted] prev=%lld:v2|", (long long)r3, (long long)r2);
    assert_string_equal(s.text, want);
    int64_t removed = 0;
    assert_int_equal(sk_store_compact(f->s, r3, &removed), SK_OK);
    s = (seen_change){{0}, 0};
    assert_int_equal(sk_store_kv_changes(f->s, r1, r5, note_change, &s), SK_ERR_EXPIRED);
    assert_int_equal(s.len, 0);
    /* From the compact revision itself (its tombstone compacted away). */
    assert_int_equal(sk_store_kv_changes(f->s, r3 - 1, r4, note_change, &s), SK_OK);
    snprintf(want, sizeof want, "%lld.0 k=v4|", (long long)r4);
    assert_string_equal(s.text, want);
    sk_arena_free(a);
}

/* Puts on one key each, from several threads (so group commit batches them). */
typedef struct kv_writer {
    fixture *f;
    int id, n;
} kv_writer;

static void *kv_writer_main(void *arg)
{
    kv_writer *w = arg;
    char key[16], value[16];
    snprintf(key, sizeof key, "w%d", w->id);
    for (int i = 0; i < w->n; i++) {
        snprintf(value, sizeof value, "%d", i);
        kv_put(w->f, key, value);
    }
    return NULL;
}

/* A compaction spanning more revisions than one kv compaction transaction
 * takes still removes every superseded version, and reads stay right. */
static void test_kv_compaction_spans(void **state)
{
    fixture *f = *state;
    enum { KV_THREADS = 8, PUTS = 140 };
    pthread_t t[KV_THREADS];
    kv_writer w[KV_THREADS];
    int64_t start = current_rev(f);
    for (int i = 0; i < KV_THREADS; i++) {
        w[i] = (kv_writer){f, i, PUTS};
        assert_int_equal(pthread_create(&t[i], NULL, kv_writer_main, &w[i]), 0);
    }
    for (int i = 0; i < KV_THREADS; i++)
        pthread_join(t[i], NULL);
    int64_t end = current_rev(f);
    assert_int_equal(end - start, KV_THREADS * PUTS);
    int64_t removed = 0;
    assert_int_equal(sk_store_compact(f->s, end, &removed), SK_OK);
    assert_int_equal(removed, KV_THREADS * (PUTS - 1));
    sk_arena *a = sk_arena_new();
    sk_kv_range q = kv_q("w", "x", 1);
    sk_kv_range_result rr;
    int64_t hdr;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_int_equal(rr.n_kvs, KV_THREADS);
    for (int i = 0; i < KV_THREADS; i++) {
        char value[16];
        snprintf(value, sizeof value, "%d", PUTS - 1);
        assert_int_equal(rr.kvs[i].version, PUTS);
        assert_int_equal(rr.kvs[i].value_len, strlen(value));
        assert_memory_equal(rr.kvs[i].value, value, strlen(value));
    }
    sk_arena_free(a);
}

/* ---- etcd leases ------------------------------------------------------------ */

static sk_err lease_do(sk_store *s, sk_lease_op_kind kind, int64_t id, int64_t ttl, int64_t now,
                       sk_lease_result *out)
{
    sk_arena *a = sk_arena_new();
    sk_lease_op op = {.kind = kind, .id = id, .ttl = ttl, .now_ms = now};
    sk_lease_result res;
    sk_err err = sk_store_lease_write(s, &op, a, &res);
    if (err == SK_OK && out)
        *out = res;
    sk_arena_free(a);
    return err;
}

static int count_lease(void *arg, const sk_lease *l)
{
    (*(int *)arg)++;
    return 0;
}

static int count_kv(void *arg, const sk_kv *kv)
{
    (*(int *)arg)++;
    return 0;
}

static int64_t kv_put_leased(fixture *f, const char *key, int64_t lease, sk_err want)
{
    sk_arena *a = sk_arena_new();
    sk_kv_op op = kv_put_op(key, "v");
    op.lease = lease;
    sk_kv_txn t = {.success = &op, .n_success = 1};
    sk_kv_txn_result res = {0};
    assert_int_equal(sk_store_kv_txn(f->s, &t, a, &res), want);
    sk_arena_free(a);
    return res.rev;
}

static int64_t lease_of_key(fixture *f, const char *key)
{
    sk_arena *a = sk_arena_new();
    sk_kv_range q = kv_q(key, NULL, 0);
    sk_kv_range_result rr;
    int64_t hdr, lease = -1;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    if (rr.n_kvs == 1)
        lease = rr.kvs[0].lease;
    sk_arena_free(a);
    return lease;
}

/* Grant (ids, minimum TTL, duplicates), puts naming leases, renewal,
 * expiry judged in the writer's transaction, revoke; all on a caller's
 * clock, so nothing here waits. The expiry survives a reopen. */
static void test_kv_leases(void **state)
{
    fixture *f = *state;
    const int64_t now = 1700000000000;
    sk_lease_result r;
    int64_t rev0 = current_rev(f);
    assert_int_equal(lease_do(f->s, SK_LEASE_GRANT, 0, 1, now, &r), SK_OK);
    int64_t picked = r.lease.id;
    assert_true(picked > 0);
    assert_int_equal(r.lease.ttl, SK_LEASE_MIN_TTL);
    assert_int_equal(r.lease.expires_at_ms, now + SK_LEASE_MIN_TTL * 1000);
    assert_int_equal(r.rev, rev0);
    assert_int_equal(current_rev(f), rev0); /* a grant takes no revision */
    assert_int_equal(lease_do(f->s, SK_LEASE_GRANT, 42, 10, now, &r), SK_OK);
    assert_int_equal(r.lease.id, 42);
    assert_int_equal(lease_do(f->s, SK_LEASE_GRANT, 42, 10, now, NULL), SK_ERR_ALREADY_EXISTS);

    kv_put_leased(f, "k1", 42, SK_OK);
    kv_put_leased(f, "k2", 42, SK_OK);
    kv_put_leased(f, "k3", 0, SK_OK);
    int64_t before = current_rev(f);
    kv_put_leased(f, "k4", 7, SK_ERR_NOT_FOUND); /* no such lease: nothing written */
    assert_int_equal(current_rev(f), before);
    kv_put_leased(f, "k4", 42, SK_OK);
    kv_put_leased(f, "k1", 0, SK_OK); /* re-put without the lease: detached */
    assert_int_equal(lease_of_key(f, "k1"), 0);
    sk_arena *a = sk_arena_new();
    sk_kv_op keep = kv_put_op("k2", "new");
    keep.ignore_lease = 1;
    kv_one(f, keep, a, NULL);
    sk_arena_free(a);
    assert_int_equal(lease_of_key(f, "k2"), 42);
    int n = 0;
    assert_int_equal(sk_store_lease_keys(f->s, 42, count_kv, &n), SK_OK);
    assert_int_equal(n, 2); /* k2, k4 */

    /* Renewal: from the caller's now; an expired or unknown lease is not found. */
    assert_int_equal(lease_do(f->s, SK_LEASE_RENEW, 42, 0, now + 5000, &r), SK_OK);
    assert_int_equal(r.lease.expires_at_ms, now + 15000);
    assert_int_equal(r.lease.ttl, 10);
    assert_int_equal(lease_do(f->s, SK_LEASE_RENEW, 42, 0, now + 15000, NULL), SK_ERR_NOT_FOUND);
    assert_int_equal(lease_do(f->s, SK_LEASE_RENEW, 999, 0, now, NULL), SK_ERR_NOT_FOUND);

    /* Due leases, soonest first. */
    n = 0;
    assert_int_equal(sk_store_leases(f->s, now + 1000, 0, count_lease, &n), SK_OK);
    assert_int_equal(n, 0);
    n = 0;
    assert_int_equal(sk_store_leases(f->s, INT64_MAX, 0, count_lease, &n), SK_OK);
    assert_int_equal(n, 2);

    /* Expiry: refused while not due (renewed), then the keys at ONE revision. */
    assert_int_equal(lease_do(f->s, SK_LEASE_EXPIRE, 42, 0, now + 14999, NULL), SK_ERR_CONFLICT);
    before = current_rev(f);
    assert_int_equal(lease_do(f->s, SK_LEASE_EXPIRE, 42, 0, now + 15000, &r), SK_OK);
    assert_int_equal(r.deleted, 2);
    assert_int_equal(r.rev, before + 1);
    assert_int_equal(current_rev(f), before + 1);
    assert_int_equal(lease_of_key(f, "k2"), -1);
    assert_int_equal(lease_of_key(f, "k4"), -1);
    assert_int_equal(lease_of_key(f, "k1"), 0);
    assert_int_equal(lease_of_key(f, "k3"), 0);
    sk_lease l;
    assert_int_equal(sk_store_lease_get(f->s, 42, &l), SK_ERR_NOT_FOUND);
    assert_int_equal(lease_do(f->s, SK_LEASE_EXPIRE, 42, 0, now + 20000, NULL), SK_ERR_NOT_FOUND);
    assert_int_equal(lease_do(f->s, SK_LEASE_REVOKE, 42, 0, now, NULL), SK_ERR_NOT_FOUND);

    /* A revoke without keys takes no revision. */
    before = current_rev(f);
    assert_int_equal(lease_do(f->s, SK_LEASE_REVOKE, picked, 0, now, &r), SK_OK);
    assert_int_equal(r.deleted, 0);
    assert_int_equal(current_rev(f), before);

    /* The expiry is stored: a reopened store has the same clock. */
    assert_int_equal(lease_do(f->s, SK_LEASE_GRANT, 43, 30, now, NULL), SK_OK);
    store_reopen(f);
    assert_int_equal(sk_store_lease_get(f->s, 43, &l), SK_OK);
    assert_int_equal(l.expires_at_ms, now + 30000);
    assert_int_equal(l.ttl, 30);
}

typedef struct expirer {
    sk_store *s;
    int64_t id, now;
    sk_err err;
} expirer;

static void *expire_main(void *arg)
{
    expirer *e = arg;
    e->err = lease_do(e->s, SK_LEASE_EXPIRE, e->id, 0, e->now, NULL);
    return NULL;
}

/* Several stores (as several processes) expire one due lease at once:
 * exactly one does, and its keys go at one revision. */
static void test_kv_lease_expires_once(void **state)
{
    fixture *f = *state;
    enum { STORES = 3, ROUNDS = 5 };
    sk_store *stores[STORES] = {f->s};
    for (int i = 1; i < STORES; i++) {
        char *msg = NULL;
        assert_int_equal(sk_store_open(f->url, &stores[i], &msg), SK_OK);
    }
    for (int round = 0; round < ROUNDS; round++) {
        const int64_t now = 1700000000000;
        int64_t id = 100 + round;
        assert_int_equal(lease_do(f->s, SK_LEASE_GRANT, id, 5, now, NULL), SK_OK);
        for (int k = 0; k < 3; k++) {
            char key[32];
            snprintf(key, sizeof key, "r%d/%d", round, k);
            kv_put_leased(f, key, id, SK_OK);
        }
        int64_t before = current_rev(f);
        pthread_t t[STORES];
        expirer e[STORES];
        for (int i = 0; i < STORES; i++) {
            e[i] = (expirer){stores[i], id, now + 5000, SK_ERR_INTERNAL};
            assert_int_equal(pthread_create(&t[i], NULL, expire_main, &e[i]), 0);
        }
        int ok = 0;
        for (int i = 0; i < STORES; i++) {
            pthread_join(t[i], NULL);
            if (e[i].err == SK_OK)
                ok++;
            else
                assert_int_equal(e[i].err, SK_ERR_NOT_FOUND);
        }
        assert_int_equal(ok, 1);
        assert_int_equal(current_rev(f), before + 1);
    }
    for (int i = 1; i < STORES; i++)
        sk_store_close(stores[i]);
}

/* ---- lost COMMIT answers (PostgreSQL) ------------------------------------ */

/* Runs sql on the test's own connection; fails the test on an error. */
static void pg_ok(PGconn *pg, const char *sql)
{
    PGresult *res = PQexec(pg, sql);
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(pg));
    PQclear(res);
}

/* The pid of the one client of this database waiting on wait_event (the
 * store's writer, inside its COMMIT), once there is one; 0 if none came. */
static int waiting_backend(PGconn *pg, const char *wait_event)
{
    char q[256];
    snprintf(q, sizeof q,
             "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
             " AND backend_type = 'client backend' AND wait_event = '%s'",
             wait_event);
    for (int tries = 0; tries < 400; tries++) {
        PGresult *res = PQexec(pg, q);
        int pid = PQntuples(res) == 1 ? atoi(PQgetvalue(res, 0, 0)) : 0;
        PQclear(res);
        if (pid > 0)
            return pid;
        usleep(25 * 1000);
    }
    return 0;
}

static void terminate(PGconn *pg, int pid)
{
    char q[64];
    snprintf(q, sizeof q, "SELECT pg_terminate_backend(%d)", pid);
    if (pid > 0)
        pg_ok(pg, q);
}

/* Makes COMMIT in this database wait for a synchronous standby that does
 * not exist (on) or not (off). Other databases of the server commit
 * locally either way. */
static void missing_standby(PGconn *pg, int on)
{
    char sql[256];
    snprintf(sql, sizeof sql, "ALTER DATABASE \"%s\" %s", PQdb(pg),
             on ? "SET synchronous_commit = on" : "RESET synchronous_commit");
    pg_ok(pg, on ? "ALTER SYSTEM SET synchronous_commit = local"
                 : "ALTER SYSTEM RESET synchronous_commit");
    pg_ok(pg, on ? "ALTER SYSTEM SET synchronous_standby_names = 'sk_test_nobody'"
                 : "ALTER SYSTEM RESET synchronous_standby_names");
    pg_ok(pg, sql);
    pg_ok(pg, "SELECT pg_reload_conf()");
}

typedef struct cas_update {
    sk_store *s;
    int64_t expected_rev;
    const char *payload;
    sk_err err;
    int64_t rev;
} cas_update;

static void *cas_update_main(void *arg)
{
    cas_update *u = arg;
    wreq r = {.op = SK_WRITE_UPDATE,
              .resource = CM,
              .ns = "",
              .name = "cas",
              .payload = u->payload,
              .expected_rev = u->expected_rev};
    sk_write w = to_write(&r);
    sk_row row = {0};
    u->err = sk_store_write(u->s, &w, &row);
    u->rev = row.rev;
    sk_row_clear(&row);
    return NULL;
}

/* An etcd transaction on a thread of its own. */
typedef struct kv_txn_call {
    sk_store *s;
    const sk_kv_txn *txn;
    sk_arena *a;
    sk_err err;
    sk_kv_txn_result res;
} kv_txn_call;

static void *kv_txn_main(void *arg)
{
    kv_txn_call *k = arg;
    k->err = sk_store_kv_txn(k->s, k->txn, k->a, &k->res);
    return NULL;
}

/*
 * The connection breaks with COMMIT in flight, for real: the writer's
 * backend is terminated while its COMMIT waits. Once after the commit is
 * durable (waiting for a synchronous standby that does not exist: the
 * transaction "has already committed locally"), once before (a deferred
 * trigger sleeping inside COMMIT). Either way a CAS update (precondition:
 * the revision it read) answers success at the one revision it took,
 * never a conflict with itself, and revisions stay gap-free. The etcd face
 * goes through the same writer: a Txn whose compare held and whose COMMIT
 * answer was lost answers succeeded, not a compare failed against its own
 * put. And when the writer cannot reconnect to ask, the answer is
 * SK_ERR_UNAVAILABLE, though the write is stored: never a definite failure.
 */
static void test_lost_commit_answer(void **state)
{
    fixture *f = *state;
    if (is_sqlite(f->url))
        skip();
    PGconn *pg = PQconnectdb(f->url);
    assert_int_equal(PQstatus(pg), CONNECTION_OK);
    int64_t rev = create(f, CM, "", "cas", "v0");
    missing_standby(pg, 1);
    store_reopen(f); /* its sessions start with the database's setting */
    pthread_t t;
    cas_update u = {f->s, rev, "landed", SK_ERR_INTERNAL, 0};
    assert_int_equal(pthread_create(&t, NULL, cas_update_main, &u), 0);
    int pid = waiting_backend(pg, "SyncRep");
    terminate(pg, pid);
    missing_standby(pg, 0); /* also if the COMMIT never waited: the writer goes on */
    pthread_join(t, NULL);
    assert_true(pid > 0);
    assert_int_equal(u.err, SK_OK);
    assert_int_equal(u.rev, rev + 1);
    sk_store_resolved r = sk_store_commits_resolved(f->s);
    assert_int_equal(r.committed, 1);
    assert_int_equal(r.not_committed + r.unknown, 0);

    /* Stalls the next COMMIT of sk_writer's row before it lands, once. */
    pg_ok(pg, "CREATE TABLE sk_test_stall (on_ boolean); INSERT INTO sk_test_stall VALUES (true);"
              " CREATE FUNCTION sk_test_stall() RETURNS trigger LANGUAGE plpgsql AS"
              " $$ BEGIN IF EXISTS (SELECT 1 FROM sk_test_stall) THEN PERFORM pg_sleep(60);"
              " END IF; RETURN NULL; END $$;"
              " CREATE CONSTRAINT TRIGGER sk_test_stall AFTER INSERT OR UPDATE ON sk_writer"
              " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sk_test_stall()");
    u = (cas_update){f->s, rev + 1, "run again", SK_ERR_INTERNAL, 0};
    assert_int_equal(pthread_create(&t, NULL, cas_update_main, &u), 0);
    pid = waiting_backend(pg, "PgSleep");
    pg_ok(pg, "DELETE FROM sk_test_stall"); /* the sleeping trigger read it already */
    terminate(pg, pid);
    pthread_join(t, NULL);
    assert_true(pid > 0);
    assert_int_equal(u.err, SK_OK);
    assert_int_equal(u.rev, rev + 2);
    r = sk_store_commits_resolved(f->s);
    assert_int_equal(r.committed, 1);
    assert_int_equal(r.not_committed, 1);
    assert_int_equal(r.unknown, 0);
    rows h = {0};
    read_history(f, &h);
    assert_int_equal(h.n, 3);
    for (size_t i = 0; i < h.n; i++)
        assert_int_equal(h.v[i].rev, (int64_t)i + 1);
    rows_free(&h);
    sk_row row = {0};
    assert_int_equal(sk_store_get(f->s, CM, "", "cas", 0, &row), SK_OK);
    assert_non_null(strstr(row.value, "run again"));
    sk_row_clear(&row);

    /* If mod(k) == its put's revision then put again: etcd's CAS. */
    int64_t rk = kv_put(f, "k", "v1");
    sk_kv_compare cmp = {.target = SK_KV_MOD, .result = SK_KV_EQUAL, .number = rk};
    cmp.key = (const unsigned char *)"k";
    cmp.key_len = 1;
    sk_kv_op put = kv_put_op("k", "v2");
    sk_kv_txn txn = {&cmp, 1, &put, 1, NULL, 0};
    kv_txn_call k = {.txn = &txn, .a = sk_arena_new(), .err = SK_ERR_INTERNAL};
    missing_standby(pg, 1);
    store_reopen(f);
    k.s = f->s;
    assert_int_equal(pthread_create(&t, NULL, kv_txn_main, &k), 0);
    pid = waiting_backend(pg, "SyncRep");
    terminate(pg, pid);
    missing_standby(pg, 0);
    pthread_join(t, NULL);
    assert_true(pid > 0);
    assert_int_equal(k.err, SK_OK);
    assert_true(k.res.succeeded);
    assert_int_equal(k.res.rev, rk + 1);
    assert_int_equal(sk_store_commits_resolved(f->s).committed, 1);
    assert_int_equal(current_rev(f), rk + 1);
    sk_arena_free(k.a);

    /* from another database: PostgreSQL will not close the current one */
    const char *const keys[] = {"dbname", "dbname", NULL};
    const char *const values[] = {f->url, "postgres", NULL};
    PGconn *admin = PQconnectdbParams(keys, values, 1);
    assert_int_equal(PQstatus(admin), CONNECTION_OK);
    char sql[128];
    snprintf(sql, sizeof sql, "ALTER DATABASE \"%s\" ALLOW_CONNECTIONS false", PQdb(pg));
    int64_t rc = current_rev(f);
    u = (cas_update){NULL, rev + 2, "unknown", SK_ERR_INTERNAL, 0};
    missing_standby(pg, 1);
    store_reopen(f);
    u.s = f->s;
    assert_int_equal(pthread_create(&t, NULL, cas_update_main, &u), 0);
    pid = waiting_backend(pg, "SyncRep");
    pg_ok(admin, sql); /* the writer cannot come back to ask */
    terminate(pg, pid);
    pthread_join(t, NULL);
    snprintf(sql, sizeof sql, "ALTER DATABASE \"%s\" ALLOW_CONNECTIONS true", PQdb(pg));
    pg_ok(admin, sql);
    PQfinish(admin);
    missing_standby(pg, 0);
    assert_true(pid > 0);
    assert_int_equal(u.err, SK_ERR_UNAVAILABLE);
    r = sk_store_commits_resolved(f->s);
    assert_int_equal(r.unknown, 1);
    assert_int_equal(r.committed + r.not_committed, 0);
    assert_int_equal(sk_store_get(f->s, CM, "", "cas", 0, &row), SK_OK);
    assert_int_equal(row.rev, rc + 1); /* it was stored all the same */
    assert_non_null(strstr(row.value, "unknown"));
    sk_row_clear(&row);
    PQfinish(pg);
}


/* ---- import (sk_store_kv_import) ----------------------------------------- */

/* An etcd keyspace to import: a transaction writing two keys at revision
 * 3, a deletion, a key with a lease; compaction scheduled at 3 but finished
 * only at 2 (a@2 still there, superseded within (2, 3]). fail_after >= 0:
 * the source fails after that many rows; swap: two rows out of order. */
typedef struct import_src {
    int fail_after, swap;
} import_src;

static const sk_kv_row import_rows[] = {
    {{(const unsigned char *)"a", 1, (const unsigned char *)"1", 1, 2, 2, 1, 0}, 0, 0},
    {{(const unsigned char *)"b", 1, (const unsigned char *)"2", 1, 3, 3, 1, 0}, 0, 0},
    {{(const unsigned char *)"a", 1, (const unsigned char *)"3", 1, 2, 3, 2, 0}, 1, 0},
    {{(const unsigned char *)"b", 1, (const unsigned char *)"", 0, 0, 4, 0, 0}, 0, 1},
    {{(const unsigned char *)"a", 1, (const unsigned char *)"5", 1, 2, 5, 3, 0}, 0, 0},
    {{(const unsigned char *)"c", 1, (const unsigned char *)"x", 1, 5, 5, 1, 7}, 1, 0},
};

static sk_err import_rows_fn(void *arg, sk_import_row_fn emit, void *emit_arg)
{
    const import_src *src = arg;
    sk_err err = SK_OK;
    for (int i = 0; i < 6 && err == SK_OK; i++) {
        if (i == src->fail_after)
            return SK_ERR_INTERNAL;
        int at = src->swap && i == 1 ? 2 : src->swap && i == 2 ? 1 : i;
        err = emit(emit_arg, &import_rows[at]);
    }
    return err;
}

static sk_err import_leases_fn(void *arg, sk_import_lease_fn emit, void *emit_arg)
{
    (void)arg;
    sk_lease l = {7, 60, sk_wall_ms() + 60000};
    return emit(emit_arg, &l);
}

static sk_err run_import(fixture *f, import_src src, char **why)
{
    sk_store_import imp = {.rev = 5, .compact_rev = 3, .compact_done = 2, .arg = &src,
                           .rows = import_rows_fn, .leases = import_leases_fn};
    *why = NULL;
    return sk_store_kv_import(f->url, &imp, why);
}

static void assert_still_empty(fixture *f)
{
    store_open(f);
    int64_t rev = -1, compact = -1;
    assert_int_equal(sk_store_revisions(f->s, &rev, &compact), SK_OK);
    assert_int_equal(rev, 0);
    assert_int_equal(compact, 0);
    sk_lease l;
    assert_int_equal(sk_store_lease_get(f->s, 7, &l), SK_ERR_NOT_FOUND);
    sk_store_close(f->s);
    f->s = NULL;
}

/* All or nothing, into an empty store only; the rows keep their revisions,
 * sub-revisions and versions, the revision and compaction are the
 * source's, the next write takes the next revision, and the store's
 * compaction finishes what the source's left. */
static void test_kv_import(void **state)
{
    fixture *f = *state;
    char *why = NULL;
    assert_int_equal(run_import(f, (import_src){4, 0}, &why), SK_ERR_INTERNAL);
    assert_non_null(why);
    free(why);
    assert_still_empty(f);
    assert_int_equal(run_import(f, (import_src){-1, 1}, &why), SK_ERR_INVALID);
    assert_non_null(strstr(why, "out of order"));
    free(why);
    assert_still_empty(f);

    assert_int_equal(run_import(f, (import_src){-1, 0}, &why), SK_OK);
    assert_null(why);
    store_open(f);
    int64_t rev = 0, compact = 0, hdr = 0;
    assert_int_equal(sk_store_revisions(f->s, &rev, &compact), SK_OK);
    assert_int_equal(rev, 5);
    assert_int_equal(compact, 3);
    sk_arena *a = sk_arena_new();
    sk_kv_range_result rr;
    sk_kv_range q = kv_q("a", "\0", 1);
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_int_equal(hdr, 5);
    assert_int_equal(rr.n_kvs, 2);
    assert_kv(&rr.kvs[0], "a", "5", 2, 5, 3);
    assert_kv(&rr.kvs[1], "c", "x", 5, 5, 1);
    assert_int_equal(rr.kvs[1].lease, 7);
    q.rev = 3;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_int_equal(rr.n_kvs, 2);
    assert_kv(&rr.kvs[0], "a", "3", 2, 3, 2);
    assert_kv(&rr.kvs[1], "b", "2", 3, 3, 1);
    q.rev = 2;
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_ERR_EXPIRED);
    seen_change seen = {{0}, 0};
    assert_int_equal(sk_store_kv_changes(f->s, 2, 5, note_change, &seen), SK_OK);
    assert_string_equal(seen.text, "3.0 b=2|3.1 a=3 prev=2:1|4.0 b=[deleted] prev=3:2|"
                                   "5.0 a=5 prev=3:3|5.1 c=x|");
    sk_lease l;
    assert_int_equal(sk_store_lease_get(f->s, 7, &l), SK_OK);
    assert_int_equal(l.ttl, 60);
    assert_int_equal(kv_put(f, "d", "next"), 6);
    int64_t removed = 0;
    assert_int_equal(sk_store_compact(f->s, 3, &removed), SK_OK);
    assert_int_equal(removed, 1); /* a@2, which the source had not removed yet */
    sk_arena_free(a);

    sk_store_close(f->s);
    f->s = NULL;
    assert_int_equal(run_import(f, (import_src){-1, 0}, &why), SK_ERR_CONFLICT);
    assert_non_null(strstr(why, "not empty"));
    free(why);
}

/* Rows import_rows[from, to) of the keyspace above, as a follow-up sends
 * them; the lease only with the last slice. */
typedef struct import_slice {
    int from, to;
} import_slice;

static sk_err import_slice_rows(void *arg, sk_import_row_fn emit, void *emit_arg)
{
    const import_slice *sl = arg;
    sk_err err = SK_OK;
    for (int i = sl->from; i < sl->to && err == SK_OK; i++)
        err = emit(emit_arg, &import_rows[i]);
    return err;
}

static sk_err import_slice_leases(void *arg, sk_import_lease_fn emit, void *emit_arg)
{
    const import_slice *sl = arg;
    return sl->to == 6 ? import_leases_fn(arg, emit, emit_arg) : SK_OK;
}

static sk_err run_slice(fixture *f, int64_t after, int64_t rev, import_slice sl, char **why)
{
    sk_store_import imp = {.rev = rev, .after_rev = after, .arg = &sl,
                           .rows = import_slice_rows, .leases = import_slice_leases};
    *why = NULL;
    return sk_store_kv_import(f->url, &imp, why);
}

/* A follow-up (after_rev, `import --from-etcd` following its source)
 * continues exactly where the store is: another revision is refused, as
 * is a row at or below it; the rows keep their revisions, the compaction
 * stays the first import's, the lease is upserted. */
static void test_kv_import_follow_up(void **state)
{
    fixture *f = *state;
    char *why = NULL;
    assert_int_equal(run_slice(f, 0, 3, (import_slice){0, 3}, &why), SK_OK);
    assert_int_equal(run_slice(f, 2, 5, (import_slice){3, 6}, &why), SK_ERR_CONFLICT);
    assert_non_null(strstr(why, "moved away from the import (revision 3, not 2)"));
    free(why);
    assert_int_equal(run_slice(f, 3, 5, (import_slice){2, 6}, &why), SK_ERR_INVALID);
    assert_non_null(strstr(why, "out of order"));
    free(why);
    assert_int_equal(run_slice(f, 3, 5, (import_slice){3, 6}, &why), SK_OK);
    assert_int_equal(run_slice(f, 5, 5, (import_slice){6, 6}, &why), SK_OK); /* leases only */
    store_open(f);
    int64_t rev = 0, compact = -1, hdr = 0;
    assert_int_equal(sk_store_revisions(f->s, &rev, &compact), SK_OK);
    assert_int_equal(rev, 5);
    assert_int_equal(compact, 0);
    sk_arena *a = sk_arena_new();
    sk_kv_range_result rr;
    sk_kv_range q = kv_q("a", "\0", 1);
    assert_int_equal(sk_store_kv_range(f->s, &q, a, &rr, &hdr), SK_OK);
    assert_int_equal(rr.n_kvs, 2);
    assert_kv(&rr.kvs[0], "a", "5", 2, 5, 3);
    assert_kv(&rr.kvs[1], "c", "x", 5, 5, 1);
    seen_change seen = {{0}, 0};
    assert_int_equal(sk_store_kv_changes(f->s, 2, 5, note_change, &seen), SK_OK);
    assert_string_equal(seen.text, "3.0 b=2|3.1 a=3 prev=2:1|4.0 b=[deleted] prev=3:2|"
                                   "5.0 a=5 prev=3:3|5.1 c=x|");
    sk_lease l;
    assert_int_equal(sk_store_lease_get(f->s, 7, &l), SK_OK);
    assert_int_equal(kv_put(f, "d", "next"), 6);
    sk_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_empty_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_preconditions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resources_and_kept_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_preconditions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_require_namespace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_and_revisions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_at_revision, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_snapshot_all_namespaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_snapshot_one_namespace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_old_revisions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_namespaces_partition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_start_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_stores, setup, teardown),
        cmocka_unit_test_setup_teardown(test_database_error_isolated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claims, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claims_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_migrate, setup_empty, teardown),
        cmocka_unit_test_setup_teardown(test_postgres_notify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_commit_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_basics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_during_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_claim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_seen_by_other_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_race_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sqlite_file_stops_growing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_secret_stable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_survives_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_url, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv_txn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_hand_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_recreates_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv_compaction_spans, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv_leases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv_lease_expires_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv_import, setup_empty, teardown),
        cmocka_unit_test_setup_teardown(test_kv_import_follow_up, setup_empty, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
