/*
 * managed.c - see managed.h.
 *
 * Managers are held as a JSON array of entries shaped like
 * ManagedFieldsEntry, with "set" (kube/fieldset.h's form) in place of
 * fieldsV1 while we work; encode() turns them back. Kept as the wire shape
 * so that what a client sent round-trips (unknown-to-us members of an entry
 * are not invented or lost).
 *
 * The object compared is always the one without metadata.managedFields:
 * they are never part of any manager's set.
 */
#include "kube/managed.h"
#include "core/buf.h"
#include "kube/status.h"
#include "kube/validate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MANAGER_LEN 128
#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

const char *sk_managed_from_user_agent(const char *ua, char *buf, size_t n)
{
    size_t len = 0;
    for (const char *p = ua ? ua : ""; *p && *p != '/';) {
        unsigned char c = (unsigned char)*p;
        /* whole characters only, as kube takes runes: a cut through one
         * would leave a manager name that is not UTF-8 (the header was) */
        size_t clen = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        if (strnlen(p, clen) < clen)
            break;
        if (c < 0x20 || c == 0x7f) {
            p++; /* unprintable: left out, as kube does */
            continue;
        }
        if (len + clen >= n || len + clen > MAX_MANAGER_LEN)
            break;
        memcpy(buf + len, p, clen);
        len += clen;
        p += clen;
    }
    buf[len] = 0;
    return buf;
}

static const char *str(const json_t *e, const char *k)
{
    const char *s = json_string_value(json_object_get(e, k));
    return s ? s : "";
}

static int is_apply(const json_t *e)
{
    return strcmp(str(e, "operation"), "Apply") == 0;
}

static int same_manager(const json_t *a, const json_t *b)
{
    return !strcmp(str(a, "manager"), str(b, "manager")) &&
           !strcmp(str(a, "operation"), str(b, "operation")) &&
           !strcmp(str(a, "subresource"), str(b, "subresource")) &&
           (is_apply(a) || !strcmp(str(a, "apiVersion"), str(b, "apiVersion")));
}

/* managedFields (borrowed) as working entries; NULL if they do not decode
 * as kube's DecodeManagedFields would. */
static json_t *decode(const json_t *mf)
{
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(mf, i, e) {
        const char *op = str(e, "operation");
        json_t *set = NULL;
        if (!json_is_object(e) || (strcmp(op, "Apply") && strcmp(op, "Update")) ||
            !*str(e, "apiVersion") || strcmp(str(e, "fieldsType"), "FieldsV1") ||
            !(set = sk_fieldset_decode(json_object_get(e, "fieldsV1") ? json_object_get(e, "fieldsV1")
                                                                       : json_object()))) {
            json_decref(out);
            return NULL;
        }
        json_t *w = json_deep_copy(e);
        json_object_del(w, "fieldsV1");
        json_object_set_new(w, "set", set);
        json_array_append_new(out, w);
    }
    return out;
}

static int reset_requested(const json_t *mf)
{
    return json_array_size(mf) == 1 && json_is_object(json_array_get(mf, 0)) &&
           json_object_size(json_array_get(mf, 0)) == 0;
}

static int cmp_entries(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    int c;
    if ((c = strcmp(str(a, "operation"), str(b, "operation"))))
        return c;
    if ((c = strcmp(str(a, "time"), str(b, "time")))) /* RFC 3339 UTC sorts as time */
        return c;
    if ((c = strcmp(str(a, "manager"), str(b, "manager"))))
        return c;
    if ((c = strcmp(str(a, "apiVersion"), str(b, "apiVersion"))))
        return c;
    return strcmp(str(a, "subresource"), str(b, "subresource"));
}

#define MAX_UPDATE_MANAGERS 10
#define OLD_UPDATES_MANAGER "ancient-changes"

static int cmp_time(const void *pa, const void *pb)
{
    return strcmp(str(*(json_t *const *)pa, "time"), str(*(json_t *const *)pb, "time"));
}

/* kube's cap on Update entries: past MAX_UPDATE_MANAGERS, the oldest are
 * merged, per apiVersion, into one "ancient-changes" entry (taking the
 * time of the newest merged), so an object many writers touch does not
 * grow without bound. managers is edited; merged-away entries are left
 * with an empty set (encode drops them). */
static void cap_updates(json_t *managers)
{
    size_t n = json_array_size(managers), k = 0;
    json_t **up = malloc((n ? n : 1) * sizeof *up);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(managers, i);
        if (!is_apply(e) && !sk_fieldset_empty(json_object_get(e, "set")))
            up[k++] = e;
    }
    if (k > MAX_UPDATE_MANAGERS) {
        qsort(up, k, sizeof *up, cmp_time);
        json_t *first = json_object(); /* apiVersion -> the oldest entry of it */
        size_t left = k;
        for (size_t i = 0; i < k && left > MAX_UPDATE_MANAGERS; i++) {
            const char *av = str(up[i], "apiVersion");
            json_t *f = json_object_get(first, av);
            if (!f) {
                json_object_set_new(first, av, json_integer((json_int_t)i));
                continue;
            }
            json_t *bucket = NULL;
            for (size_t j = 0; j < n && !bucket; j++) {
                json_t *e = json_array_get(managers, j);
                if (!strcmp(str(e, "manager"), OLD_UPDATES_MANAGER) && !is_apply(e) &&
                    !strcmp(str(e, "apiVersion"), av) && !*str(e, "subresource"))
                    bucket = e;
            }
            if (bucket == up[i])
                continue; /* the bucket itself: the next oldest merges into it */
            if (!bucket) {
                bucket = up[json_integer_value(f)];
                json_object_set_new(bucket, "manager", json_string(OLD_UPDATES_MANAGER));
                json_object_del(bucket, "subresource");
            }
            json_object_set_new(bucket, "set", sk_fieldset_union(json_object_get(bucket, "set"),
                                                                 json_object_get(up[i], "set")));
            json_object_set(bucket, "time", json_object_get(up[i], "time"));
            json_object_set_new(up[i], "set", json_object());
            left--;
        }
        json_decref(first);
    }
    free(up);
}

/* A new entry naming w's manager and op, members in kube's order; NULL if a
 * name is not UTF-8 (then no entry is written, on every path alike). */
static json_t *new_entry(const sk_managed_write *w, const char *op)
{
    json_t *e = json_pack("{s:s, s:s, s:s}", "manager", w->manager, "operation", op,
                          "apiVersion", w->api_version);
    if (e && w->subresource)
        json_object_set_new(e, "subresource", json_string(w->subresource));
    return e;
}

/* The wire members that end an entry, after its time. */
static void put_fields(json_t *e, json_t *fields_v1)
{
    json_object_set_new(e, "fieldsType", json_string("FieldsV1"));
    json_object_set_new(e, "fieldsV1", fields_v1);
}

/* Working entries (stolen) to managedFields: Update entries capped, empty
 * sets dropped, sorted; NULL when none is left. */
static json_t *encode(json_t *managers)
{
    cap_updates(managers);
    size_t n = json_array_size(managers), k = 0;
    json_t **v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(managers, i);
        if (!sk_fieldset_empty(json_object_get(e, "set")))
            v[k++] = e;
    }
    qsort(v, k, sizeof *v, cmp_entries);
    json_t *out = k ? json_array() : NULL;
    for (size_t i = 0; i < k; i++) {
        /* shallow: managers is dropped below, so e's members are its own */
        json_t *e = json_copy(v[i]);
        json_t *set = json_incref(json_object_get(e, "set"));
        json_object_del(e, "set");
        put_fields(e, sk_fieldset_encode(set));
        json_decref(set);
        json_array_append_new(out, e);
    }
    free(v);
    json_decref(managers);
    return out;
}

static void set_managed(json_t *obj, json_t *mf)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (mf)
        json_object_set_new(meta, "managedFields", mf);
    else
        json_object_del(meta, "managedFields");
}

/* obj without metadata.managedFields, for reading only (new reference): it
 * shares every other member with obj, so nothing may modify it. Comparisons
 * and merges read it (sk_fieldset_merge copies what it keeps): copying the
 * whole object for every write cost more than the comparison. */
static json_t *without_managed(const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    if (!json_object_get(meta, "managedFields"))
        return json_incref((json_t *)obj);
    json_t *view = json_copy((json_t *)obj);
    json_t *view_meta = json_copy((json_t *)meta);
    json_object_del(view_meta, "managedFields");
    json_object_set_new(view, "metadata", view_meta);
    return view;
}

/* Does every entry of a have an entry of b equal to it but for its time?
 * Entries are compared as a set: a changed time reorders them. */
static int entries_match_but_times(const json_t *a, const json_t *b)
{
    if (!json_is_array(a) || !json_is_array(b) || json_array_size(a) != json_array_size(b))
        return 0;
    size_t i, j;
    json_t *ea, *eb;
    json_array_foreach(a, i, ea) {
        int found = 0;
        json_array_foreach(b, j, eb) {
            if (!json_is_object(ea) || !json_is_object(eb) || json_object_size(ea) != json_object_size(eb))
                continue;
            const char *k;
            json_t *v;
            found = 1;
            json_object_foreach(ea, k, v) {
                if (strcmp(k, "time") && !json_equal(v, json_object_get(eb, k))) {
                    found = 0;
                    break;
                }
            }
            if (found)
                break;
        }
        if (!found)
            return 0;
    }
    return 1;
}

void sk_managed_keep_times(const json_t *old, json_t *new_obj)
{
    const json_t *old_mf = json_object_get(json_object_get(old, "metadata"), "managedFields");
    const json_t *new_mf = json_object_get(json_object_get(new_obj, "metadata"), "managedFields");
    if (!old_mf || !new_mf || json_equal((json_t *)old_mf, (json_t *)new_mf) ||
        !entries_match_but_times(new_mf, old_mf))
        return;
    json_t *lhs = without_managed(old), *rhs = without_managed(new_obj);
    if (json_equal(lhs, rhs))
        set_managed(new_obj, json_deep_copy(old_mf));
    json_decref(lhs);
    json_decref(rhs);
}

static json_t *strip(json_t *set, const sk_managed_write *w)
{
    json_t *s = sk_fieldset_strip(set, w->subresource && !strcmp(w->subresource, "status"),
                                  w->status_subresource && !w->subresource);
    json_decref(set);
    return s;
}

/* The entry of w's manager with operation op (created, empty set, if missing). */
static json_t *entry_for(json_t *managers, const sk_managed_write *w, const char *op)
{
    json_t *probe = new_entry(w, op);
    size_t i;
    json_t *e;
    json_array_foreach(managers, i, e) {
        if (same_manager(e, probe)) {
            json_decref(probe);
            return e;
        }
    }
    json_object_set_new(probe, "set", json_object());
    json_array_append_new(managers, probe);
    return probe;
}

/* Takes `take` and `drop` out of every manager but self's; conflicts, when
 * wanted, collects {manager entry, set} of what was taken. */
static void take_from_others(json_t *managers, const json_t *self, const json_t *take,
                             const json_t *drop, json_t *conflicts)
{
    size_t i;
    json_t *e;
    json_array_foreach(managers, i, e) {
        if (e == self)
            continue;
        json_t *set = json_object_get(e, "set");
        json_t *hit = sk_fieldset_intersection(set, take);
        if (conflicts && !sk_fieldset_empty(hit))
            json_array_append_new(conflicts, json_pack("{s:O, s:O}", "entry", e, "set", hit));
        json_t *a = sk_fieldset_difference(set, hit);
        json_t *b = sk_fieldset_difference(a, drop);
        json_object_set_new(e, "set", b);
        json_decref(a);
        json_decref(hit);
    }
}

/* A create whose object brings no managers: w's Update entry alone, made
 * straight from the object's fields (the general path below compares with
 * the zero value, strips, unions and encodes sets: most of a create's time
 * spent here, for the same entry). */
static void managed_on_create(sk_fieldset_type t, json_t *new_obj, const sk_managed_write *w)
{
    json_t *rhs = without_managed(new_obj);
    json_t *fields = sk_fieldset_created(t, rhs, w->status_subresource);
    json_t *e = fields ? new_entry(w, "Update") : NULL;
    json_t *mf = NULL;
    if (e) {
        json_object_set_new(e, "time", json_string(w->now));
        put_fields(e, json_incref(fields));
        mf = json_array();
        json_array_append_new(mf, e);
    }
    set_managed(new_obj, mf);
    json_decref(fields);
    json_decref(rhs);
}

/* Every other write: the managers carried over, w's entry merged in. */
static void managed_on_update(sk_fieldset_type t, const json_t *old, json_t *new_obj,
                              const sk_managed_write *w)
{
    const json_t *old_mf = json_object_get(json_object_get(old, "metadata"), "managedFields");
    const json_t *new_mf = json_object_get(json_object_get(new_obj, "metadata"), "managedFields");
    json_t *managers = NULL;
    int from_new = 0;
    if (!w->subresource && reset_requested(new_mf)) {
        managers = json_array();
        from_new = 1;
    } else if (!w->subresource && json_array_size(new_mf) && (managers = decode(new_mf))) {
        from_new = !json_equal((json_t *)new_mf, (json_t *)old_mf);
    } else {
        managers = decode(old_mf);
        if (!managers)
            managers = json_array();
    }
    json_t *lhs = old ? without_managed(old) : sk_fieldset_zero(t);
    json_t *rhs = without_managed(new_obj);
    json_t *added, *modified, *removed;
    sk_fieldset_compare(t, lhs, rhs, &added, &modified, &removed);
    added = strip(added, w);
    modified = strip(modified, w);
    removed = strip(removed, w);
    if (old && !from_new && sk_fieldset_empty(added) && sk_fieldset_empty(modified) &&
        sk_fieldset_empty(removed)) {
        /* nothing changed: the write is a no-op, and so is this */
        set_managed(new_obj, json_deep_copy(old_mf));
    } else {
        json_t *changed = sk_fieldset_union(added, modified);
        json_t *self = entry_for(managers, w, "Update");
        take_from_others(managers, self, changed, removed, NULL);
        json_t *a = sk_fieldset_difference(json_object_get(self, "set"), removed);
        json_object_set_new(self, "set", sk_fieldset_union(a, changed));
        json_object_set_new(self, "time", json_string(w->now));
        json_decref(a);
        json_decref(changed);
        set_managed(new_obj, encode(managers));
        managers = NULL;
    }
    json_decref(managers);
    json_decref(lhs);
    json_decref(rhs);
    json_decref(added);
    json_decref(modified);
    json_decref(removed);
}

void sk_managed_update(sk_fieldset_type t, const json_t *old, json_t *new_obj,
                       const sk_managed_write *w)
{
    const json_t *new_mf = json_object_get(json_object_get(new_obj, "metadata"), "managedFields");
    if (!old && !w->subresource && !json_array_size(new_mf))
        managed_on_create(t, new_obj, w);
    else
        managed_on_update(t, old, new_obj, w);
}

/* How kube names a manager in a conflict (printManager). */
static void print_manager(sk_buf *b, const json_t *e)
{
    sk_buf_go_quoted(b, str(e, "manager"));
    if (*str(e, "subresource")) {
        sk_buf_puts(b, " with subresource ");
        sk_buf_go_quoted(b, str(e, "subresource"));
    }
    if (!is_apply(e))
        sk_buf_printf(b, " using %s", str(e, "apiVersion"));
}

typedef struct conflict_ctx {
    json_t *list; /* [[manager printed, path]] */
    const char *who;
} conflict_ctx;

static void add_conflict(void *ctx, const char *path)
{
    conflict_ctx *c = ctx;
    json_array_append_new(c->list, json_pack("[s, s]", c->who, path));
}

static int cmp_conflicts(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    return strcmp(json_string_value(json_array_get(a, 0)), json_string_value(json_array_get(b, 0)));
}

/* kube's apply conflict Status for conflicts ([{entry, set}]). */
static json_t *conflict_status(const json_t *conflicts)
{
    json_t *list = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(conflicts, i, c) {
        sk_buf who = SK_BUF_INIT;
        print_manager(&who, json_object_get(c, "entry"));
        conflict_ctx ctx = {list, who.data};
        sk_fieldset_each(json_object_get(c, "set"), add_conflict, &ctx);
        sk_buf_free(&who);
    }
    size_t n = json_array_size(list);
    json_t **v = malloc((n ? n : 1) * sizeof *v);
    for (i = 0; i < n; i++)
        v[i] = json_array_get(list, i);
    /* stable enough: paths come sorted per manager, managers sorted here */
    qsort(v, n, sizeof *v, cmp_conflicts);
    sk_buf msg = SK_BUF_INIT;
    json_t *causes = json_array();
    if (n == 1)
        sk_buf_printf(&msg, "Apply failed with 1 conflict: conflict with %s: %s",
                      json_string_value(json_array_get(v[0], 0)),
                      json_string_value(json_array_get(v[0], 1)));
    else
        sk_buf_printf(&msg, "Apply failed with %zu conflicts: ", n);
    for (i = 0; i < n; i++) {
        const char *who = json_string_value(json_array_get(v[i], 0));
        const char *path = json_string_value(json_array_get(v[i], 1));
        sk_buf cm = SK_BUF_INIT;
        sk_buf_printf(&cm, "conflict with %s", who);
        sk_status_add_cause(causes, "FieldManagerConflict", cm.data, path);
        sk_buf_free(&cm);
        if (n == 1)
            continue;
        if (i == 0 || strcmp(who, json_string_value(json_array_get(v[i - 1], 0))))
            sk_buf_printf(&msg, "%sconflicts with %s:", i ? "\n" : "", who);
        sk_buf_printf(&msg, "\n- %s", path);
    }
    json_t *st = sk_status_new(SK_ERR_CONFLICT, msg.data, "", "", "", causes);
    sk_buf_free(&msg);
    free(v);
    json_decref(list);
    return st;
}

/* kube's lastAppliedManager: kubectl's server-side apply may take over
 * what client-side apply set (the last-applied-configuration annotation)
 * and nobody changed since, so that switching to --server-side does not
 * conflict with "kubectl-client-side-apply". Non-zero if every conflict
 * ([{entry, set}]) is such a field. */
static int conflicts_allowed_by_last_applied(sk_fieldset_type t, const json_t *live,
                                             const json_t *conflicts)
{
    const char *text = json_string_value(json_object_get(
        json_object_get(json_object_get(live, "metadata"), "annotations"), LAST_APPLIED));
    json_t *last = text && *text ? json_loads(text, 0, NULL) : NULL;
    json_t *set = NULL, *a = NULL, *m = NULL, *r = NULL, *allowed = NULL, *all = json_object();
    char *why = NULL;
    int ok = 0;
    if (!json_is_object(last) || sk_fieldset_from_object(t, last, &set, &why) != SK_OK)
        goto out;
    json_t *clean = without_managed(live);
    sk_fieldset_compare(t, last, clean, &a, &m, &r);
    json_decref(clean);
    /* what the live object changed or dropped since is no longer kubectl's */
    json_t *kept = sk_fieldset_difference(set, m);
    allowed = sk_fieldset_difference(kept, r);
    json_decref(kept);
    size_t i;
    json_t *c;
    json_array_foreach(conflicts, i, c) {
        json_t *u = sk_fieldset_union(all, json_object_get(c, "set"));
        json_decref(all);
        all = u;
    }
    json_t *left = sk_fieldset_difference(all, allowed);
    ok = sk_fieldset_empty(left);
    json_decref(left);
out:
    free(why);
    json_decref(last);
    json_decref(set);
    json_decref(a);
    json_decref(m);
    json_decref(r);
    json_decref(allowed);
    json_decref(all);
    return ok;
}

/* v as Go's json.Encoder writes it, which is how kube spells the
 * last-applied annotation (kubectl reads it back as JSON, but a text that
 * differs only in spelling would still be a change to write): keys
 * sorted, compact, '<' '>' '&' U+2028 U+2029 escaped, \u escapes in lower
 * case, a newline at the end. Reals keep jansson's spelling. New string. */
static char *go_encoded(const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    sk_buf b = SK_BUF_INIT;
    sk_buf_puts(&b, "");
    for (const unsigned char *p = (const unsigned char *)(text ? text : "null"); *p; p++) {
        if (*p == '\\' && p[1]) {
            /* an escape jansson wrote: only \u's hex digits differ */
            int hex = p[1] == 'u' ? 4 : 0;
            sk_buf_putc(&b, (char)*p++);
            sk_buf_putc(&b, (char)*p);
            for (; hex && p[1]; hex--)
                sk_buf_putc(&b, (char)tolower(*++p));
        } else if (*p == '<' || *p == '>' || *p == '&') {
            sk_buf_printf(&b, "\\u%04x", *p);
        } else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
            sk_buf_printf(&b, "\\u202%c", p[2] == 0xa8 ? '8' : '9');
            p += 2;
        } else {
            sk_buf_putc(&b, (char)*p);
        }
    }
    sk_buf_putc(&b, '\n');
    free(text);
    return sk_buf_steal(&b, NULL);
}

/* kube's lastAppliedUpdater: kubectl's server-side apply rewrites the
 * last-applied annotation of an object that has one to the config it
 * applied (less that annotation), so that a later client-side apply diffs
 * against what was really applied last and `kubectl apply
 * view-last-applied` shows it. Left out when it would take the
 * annotations past their size limit, as kube's SetLastApplied does. */
static void sync_last_applied(json_t *obj, const json_t *config)
{
    json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    const char *had = json_string_value(json_object_get(ann, LAST_APPLIED));
    if (!had || !*had)
        return;
    json_t *cfg = json_deep_copy(config);
    json_object_del(json_object_get(json_object_get(cfg, "metadata"), "annotations"), LAST_APPLIED);
    char *text = go_encoded(cfg);
    json_object_set_new(ann, LAST_APPLIED, json_string(text));
    if (sk_validate_annotations_size(ann) > SK_VALIDATE_MAX_ANNOTATIONS_SIZE)
        json_object_del(ann, LAST_APPLIED);
    free(text);
    json_decref(cfg);
}

sk_err sk_managed_apply(sk_fieldset_type t, const json_t *live, const json_t *config,
                        const sk_managed_write *w, int force, json_t **out, json_t **status)
{
    sk_err err = SK_OK;
    char *why = NULL;
    json_t *managers = NULL, *lhs = NULL, *new_set = NULL, *merged = NULL, *conflicts = NULL;
    json_t *added = NULL, *modified = NULL, *removed = NULL;
    if (json_object_get(json_object_get(config, "metadata"), "managedFields")) {
        *status = sk_status_new(SK_ERR_BAD_REQUEST, "metadata.managedFields must be nil", "", "",
                                "", NULL);
        return SK_ERR_BAD_REQUEST;
    }
    if ((err = sk_fieldset_from_object(t, config, &new_set, &why)) != SK_OK) {
        /* kube's words, "ns/name; group/version, Kind=K"; kube answers 500
         * for these, but the body is at fault */
        const json_t *meta = json_object_get(config, "metadata");
        const char *av = str(config, "apiVersion");
        sk_buf msg = SK_BUF_INIT;
        sk_buf_printf(&msg, "failed to create typed patch object (%s/%s; %s%s, Kind=%s): %s",
                      str(meta, "namespace"), str(meta, "name"), strchr(av, '/') ? "" : "/", av,
                      str(config, "kind"), why);
        *status = sk_status_new(err, msg.data, "", "", "", NULL);
        sk_buf_free(&msg);
        free(why);
        return err;
    }
    new_set = strip(new_set, w);
    managers = live ? decode(json_object_get(json_object_get(live, "metadata"), "managedFields"))
                    : NULL;
    if (!managers)
        managers = json_array();
    lhs = live ? without_managed(live) : sk_fieldset_zero(t);
    if (live && json_array_size(managers) == 0) {
        /* an object no manager tracks yet: what it has belongs to
         * "before-first-apply", as kube records it on the first apply */
        json_t *zero = sk_fieldset_zero(t), *a, *m, *r;
        sk_fieldset_compare(t, zero, lhs, &a, &m, &r);
        sk_managed_write bfa = *w;
        bfa.manager = "before-first-apply";
        json_t *e = entry_for(managers, &bfa, "Update");
        json_object_set_new(e, "set", strip(sk_fieldset_union(a, m), w));
        json_object_set_new(e, "time", json_string(w->now));
        json_decref(zero);
        json_decref(a);
        json_decref(m);
        json_decref(r);
    }
    json_t *self = entry_for(managers, w, "Apply");
    json_t *last = json_incref(json_object_get(self, "set"));
    merged = sk_fieldset_merge(t, lhs, config);
    /* fields this manager applied before and applies no more, that no one
     * else owns, go */
    json_t *others = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(managers, i, e) {
        if (e == self)
            continue;
        json_t *u = sk_fieldset_union(others, json_object_get(e, "set"));
        json_decref(others);
        others = u;
    }
    json_t *gone = sk_fieldset_difference(last, new_set);
    json_t *gone_alone = sk_fieldset_difference(gone, others);
    json_t *owned = sk_fieldset_union(others, new_set);
    sk_fieldset_remove(t, merged, gone_alone, gone, owned);
    json_decref(owned);
    json_decref(gone_alone);
    json_decref(gone);
    json_decref(others);
    json_decref(last);
    sk_fieldset_compare(t, lhs, merged, &added, &modified, &removed);
    added = strip(added, w);
    modified = strip(modified, w);
    removed = strip(removed, w);
    json_t *changed = sk_fieldset_union(added, modified);
    conflicts = json_array();
    take_from_others(managers, self, changed, removed, conflicts);
    json_decref(changed);
    if (json_array_size(conflicts) && !force &&
        !(strcmp(w->manager, "kubectl") == 0 && live &&
          conflicts_allowed_by_last_applied(t, live, conflicts))) {
        *status = conflict_status(conflicts);
        err = SK_ERR_CONFLICT;
        goto out;
    }
    int same_set = json_equal(json_object_get(self, "set"), new_set);
    json_object_set(self, "set", new_set);
    json_t *result;
    if (live && same_set && sk_fieldset_empty(added) && sk_fieldset_empty(modified) &&
        sk_fieldset_empty(removed)) {
        /* nothing to do: the object stays as it is */
        result = json_deep_copy(live);
    } else {
        json_object_set_new(self, "time", json_string(w->now));
        set_managed(merged, encode(managers));
        managers = NULL;
        result = json_incref(merged);
    }
    if (!strcmp(w->manager, "kubectl"))
        sync_last_applied(result, config);
    *out = result;
out:
    json_decref(managers);
    json_decref(lhs);
    json_decref(new_set);
    json_decref(merged);
    json_decref(conflicts);
    json_decref(added);
    json_decref(modified);
    json_decref(removed);
    return err;
}
