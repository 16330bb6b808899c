/*
 * options.c - see options.h. A parameter given empty ("?limit=") counts as
 * absent, as kube-apiserver's parameter codec leaves a zero value. Rules
 * are checked in the order kube-apiserver's handlers meet them, so a
 * request with several problems hears about the same one first.
 */
#include "kube/options.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/util.h"
#include "kube/schema.h"
#include "kube/status.h"
#include "kube/typed.h"
#include "kube/validate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST_LIMIT 1000000

static const char *param(sk_query_fn query, void *ctx, const char *key)
{
    const char *v = query(ctx, key);
    return v && *v ? v : NULL;
}

int sk_parse_bool(const char *s)
{
    static const char *const truthy[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const falsy[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < sizeof truthy / sizeof *truthy; i++) {
        if (strcmp(s, truthy[i]) == 0)
            return 1;
        if (strcmp(s, falsy[i]) == 0)
            return 0;
    }
    return -1;
}

static sk_err refuse(json_t **status_out, sk_err e, const char *msg)
{
    *status_out = sk_status_new(e, msg, NULL, NULL, NULL, NULL);
    return e;
}

json_t *sk_list_options_forbidden(const char *field, const char *msg)
{
    json_t *causes = json_array();
    sk_status_add_cause(causes, "FieldValueForbidden", msg, field);
    sk_buf full = SK_BUF_INIT;
    sk_buf_printf(&full, "ListOptions.meta.k8s.io \"\" is invalid: %s: Forbidden: %s", field, msg);
    json_t *st = sk_status_new(SK_ERR_INVALID, full.data, "meta.k8s.io", "ListOptions", "", causes);
    sk_buf_free(&full);
    return st;
}

json_t *sk_options_invalid(const char *options_kind, const char *reason, const char *field,
                           const char *what, const char *detail)
{
    json_t *causes = json_array();
    sk_buf cm = SK_BUF_INIT, full = SK_BUF_INIT;
    sk_buf_printf(&cm, "%s: %s", what, detail);
    sk_status_add_cause(causes, reason, cm.data, field);
    sk_buf_printf(&full, "%s.meta.k8s.io \"\" is invalid: %s: %s", options_kind, field, cm.data);
    json_t *st = sk_status_new(SK_ERR_INVALID, full.data, "meta.k8s.io", options_kind, "", causes);
    sk_buf_free(&cm);
    sk_buf_free(&full);
    return st;
}

/* kube's errors.NewInvalid on <kind>.meta.k8s.io "" for a non-empty fe
 * (new reference). */
static json_t *options_invalid(const char *options_kind, const sk_field_errors *fe)
{
    char *agg = sk_field_errors_message(fe);
    sk_buf full = SK_BUF_INIT;
    sk_buf_printf(&full, "%s.meta.k8s.io \"\" is invalid: %s", options_kind, agg);
    json_t *st = sk_status_new(SK_ERR_INVALID, full.data, "meta.k8s.io", options_kind, "",
                               json_deep_copy(sk_field_errors_causes(fe)));
    sk_buf_free(&full);
    free(agg);
    return st;
}

static sk_err forbid(json_t **status_out, const char *field, const char *msg)
{
    *status_out = sk_list_options_forbidden(field, msg);
    return SK_ERR_INVALID;
}

int sk_parse_include_object(const char *s, sk_include_object *out)
{
    if (!s || !*s || strcmp(s, "Metadata") == 0)
        *out = SK_INCLUDE_METADATA;
    else if (strcmp(s, "None") == 0)
        *out = SK_INCLUDE_NONE;
    else if (strcmp(s, "Object") == 0)
        *out = SK_INCLUDE_OBJECT;
    else
        return -1;
    return 0;
}

/* The watch-only parameters and the rules joining them to rvm. */
static sk_err parse_watch(sk_query_fn query, void *ctx, const char *rvm, sk_list_options *o,
                          json_t **status_out)
{
    const char *send = param(query, ctx, "sendInitialEvents");
    const char *bookmarks = param(query, ctx, "allowWatchBookmarks");
    const char *timeout = param(query, ctx, "timeoutSeconds");
    o->send_initial_events = -1;
    if (send && (o->send_initial_events = sk_parse_bool(send)) < 0)
        return refuse(status_out, SK_ERR_BAD_REQUEST, "sendInitialEvents: want a boolean");
    o->allow_bookmarks = bookmarks && sk_parse_bool(bookmarks) == 1;
    if (o->send_initial_events >= 0 && (!rvm || strcmp(rvm, "NotOlderThan") != 0))
        return forbid(status_out, "resourceVersionMatch",
                      "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
    if (o->send_initial_events == 1 && !o->allow_bookmarks)
        return forbid(status_out, "allowWatchBookmarks",
                      "sendInitialEvents requires setting allowWatchBookmarks to true");
    if (rvm && o->send_initial_events < 0)
        return forbid(status_out, "resourceVersionMatch",
                      "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                      "provided");
    if (timeout && (o->timeout_s = sk_parse_i64(timeout)) < 0)
        return refuse(status_out, SK_ERR_BAD_REQUEST,
                      "timeoutSeconds: want a non-negative integer");
    return SK_OK;
}

/* The list-only rules: continue and resourceVersionMatch. */
static sk_err parse_list(const char *rv, const char *rvm, const char *cont, json_t **status_out)
{
    if (rvm && !rv && !cont)
        return forbid(status_out, "resourceVersionMatch",
                      "resourceVersionMatch is forbidden unless resourceVersion is provided");
    if (rvm && strcmp(rvm, "Exact") != 0 && strcmp(rvm, "NotOlderThan") != 0) {
        sk_buf msg = SK_BUF_INIT;
        sk_buf_printf(&msg, "resourceVersionMatch: Unsupported value: \"%s\"", rvm);
        sk_err e = refuse(status_out, SK_ERR_INVALID, msg.data);
        sk_buf_free(&msg);
        return e;
    }
    if (cont && rv)
        return refuse(status_out, SK_ERR_BAD_REQUEST,
                      "specifying resource version is not allowed when using continue");
    if (cont && rvm)
        return forbid(status_out, "resourceVersionMatch",
                      "resourceVersionMatch is forbidden for continue");
    return SK_OK;
}

sk_err sk_list_options_parse(sk_query_fn query, void *ctx, int watch, sk_list_options *out,
                             json_t **status_out)
{
    sk_list_options o = {.rv = -1, .send_initial_events = -1};
    const char *rv = param(query, ctx, "resourceVersion");
    const char *rvm = param(query, ctx, "resourceVersionMatch");
    const char *limit = param(query, ctx, "limit");
    sk_err err = SK_OK;
    if (sk_parse_include_object(param(query, ctx, "includeObject"), &o.include_object) < 0)
        return refuse(status_out, SK_ERR_BAD_REQUEST, "includeObject: unsupported value");
    o.label_selector = param(query, ctx, "labelSelector");
    o.field_selector = param(query, ctx, "fieldSelector");
    if (watch) {
        err = parse_watch(query, ctx, rvm, &o, status_out);
    } else {
        o.cont = param(query, ctx, "continue");
        if (limit && (o.limit = sk_parse_i64(limit)) < 0)
            return refuse(status_out, SK_ERR_BAD_REQUEST, "limit must be a non-negative integer");
        if (o.limit > MAX_LIST_LIMIT)
            o.limit = MAX_LIST_LIMIT;
        err = parse_list(rv, rvm, o.cont, status_out);
    }
    if (err != SK_OK)
        return err;
    if (rv && (o.rv = sk_parse_i64(rv)) < 0)
        return refuse(status_out, SK_ERR_BAD_REQUEST, "invalid resource version");
    if (rvm)
        o.rvm = strcmp(rvm, "Exact") == 0 ? SK_RVM_EXACT : SK_RVM_NOT_OLDER_THAN;
    *out = o;
    return SK_OK;
}

/* kube's ValidateDryRun over the dryRun values given (a JSON array of
 * strings, borrowed; NULL or empty: none), for the query's options and
 * DeleteOptions' body alike. Non-zero when they ask for a dry run. */
static int check_dry_run(sk_field_errors *fe, const json_t *values)
{
    static const char *const allowed[] = {"All"};
    size_t i;
    const json_t *v;
    int all = json_array_size(values) > 0;
    json_array_foreach(values, i, v) all &= strcmp(json_string_value(v), "All") == 0;
    if (json_array_size(values) > 0 && !all) {
        sk_buf rendered = SK_BUF_INIT;
        sk_go_string_slice(&rendered, values);
        sk_field_errors_not_supported_rendered(fe, "dryRun", rendered.data, allowed, 1);
        sk_buf_free(&rendered);
    }
    return all;
}

sk_err sk_write_options_parse(sk_query_fn query, void *ctx, const char *options_kind,
                              sk_write_options *out, json_t **status_out)
{
    static const char *const validations[] = {"", "Ignore", "Strict", "Warn"};
    sk_write_options o = {0};
    const char *dry = query(ctx, "dryRun"); /* "" is a value kube refuses */
    const char *fv = param(query, ctx, "fieldValidation");
    const char *force = param(query, ctx, "force");
    sk_field_errors *fe = sk_field_errors_new();
    sk_err e = SK_OK;
    o.dry_run = dry != NULL;
    o.field_manager = param(query, ctx, "fieldManager");
    if (o.field_manager && !*o.field_manager)
        o.field_manager = NULL;
    o.force_given = force != NULL;
    o.force = force && sk_parse_bool(force) == 1;
    if (dry) {
        json_t *given = json_pack("[s]", dry);
        check_dry_run(fe, given);
        json_decref(given);
    }
    if (!fv || !*fv || strcmp(fv, "Warn") == 0) {
        o.validation = SK_FV_WARN;
    } else if (strcmp(fv, "Strict") == 0) {
        o.validation = SK_FV_STRICT;
    } else if (strcmp(fv, "Ignore") == 0) {
        o.validation = SK_FV_IGNORE;
    } else {
        json_t *given = json_string(fv);
        sk_field_errors_not_supported(fe, "fieldValidation", given, validations,
                                      sizeof validations / sizeof *validations);
        json_decref(given);
    }
    if (sk_field_errors_count(fe) > 0) {
        *status_out = options_invalid(options_kind, fe);
        e = SK_ERR_INVALID;
        goto out;
    }
    *out = o;
out:
    sk_field_errors_free(fe);
    return e;
}

/* ---- DeleteOptions -------------------------------------------------------- */

/* A typed decode of the body as kube's DeleteOptions, from the generated
 * schema (a field of the wrong type is Go's 400, never ignored: ignoring a
 * precondition would delete unconditionally). */
static sk_err check_delete_types(const json_t *body, json_t **status_out)
{
    const sk_schema *s = sk_schema_named("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions");
    SK_CHECK(s != NULL);
    json_t *typed = NULL;
    char *msg = NULL;
    sk_err e = sk_typed_normalize_value(s, body, &typed, &msg);
    if (e == SK_OK) {
        json_decref(typed);
        return SK_OK;
    }
    e = refuse(status_out, SK_ERR_BAD_REQUEST, msg ? msg : "cannot decode DeleteOptions");
    free(msg);
    return e;
}

/* ValidateDeleteOptions over o, the propagationPolicy as given and the
 * dryRun values as given (an array of strings, borrowed; NULL: none), then
 * *out = *o with dry_run set. Every error is reported, as kube aggregates
 * them. */
static sk_err validate_delete(const sk_delete_options *o, const char *policy, const json_t *dry,
                              sk_delete_options *out, json_t **status_out)
{
    static const char *const propagations[] = {"Foreground", "Background", "Orphan", "nil"};
    sk_field_errors *fe = sk_field_errors_new();
    sk_buf quoted = SK_BUF_INIT;
    sk_err e = SK_OK;
    if (policy)
        sk_buf_go_quoted(&quoted, policy);
    if (o->orphan_dependents >= 0 && policy)
        sk_field_errors_invalid_rendered(fe, "propagationPolicy", quoted.data,
                                         "orphanDependents and deletionPropagation cannot be both "
                                         "set");
    if (policy && o->propagation == SK_PROPAGATION_UNSET)
        sk_field_errors_not_supported_rendered(fe, "propagationPolicy", quoted.data, propagations,
                                               sizeof propagations / sizeof *propagations);
    int all = check_dry_run(fe, dry);
    if (sk_field_errors_count(fe) > 0) {
        *status_out = options_invalid("DeleteOptions", fe);
        e = SK_ERR_INVALID;
        goto out;
    }
    *out = *o;
    out->dry_run = all;
out:
    sk_buf_free(&quoted);
    sk_field_errors_free(fe);
    return e;
}

static sk_propagation propagation_of(const char *s)
{
    if (!s)
        return SK_PROPAGATION_UNSET;
    if (strcmp(s, "Orphan") == 0)
        return SK_PROPAGATION_ORPHAN;
    if (strcmp(s, "Background") == 0)
        return SK_PROPAGATION_BACKGROUND;
    if (strcmp(s, "Foreground") == 0)
        return SK_PROPAGATION_FOREGROUND;
    return SK_PROPAGATION_UNSET;
}

sk_err sk_delete_options_decode(const json_t *body, sk_delete_options *out, json_t **status_out)
{
    sk_delete_options o = SK_DELETE_OPTIONS_INIT;
    sk_err err = check_delete_types(body, status_out);
    if (err != SK_OK)
        return err;
    const json_t *pre = json_object_get(body, "preconditions");
    const char *rv = json_string_value(json_object_get(pre, "resourceVersion"));
    const char *uid = json_string_value(json_object_get(pre, "uid"));
    if (rv && *rv && (o.precondition_rev = sk_parse_i64(rv)) <= 0)
        return refuse(status_out, SK_ERR_BAD_REQUEST, "invalid resourceVersion precondition");
    o.precondition_uid = uid && *uid ? uid : NULL;
    const json_t *grace = json_object_get(body, "gracePeriodSeconds");
    if (json_is_integer(grace)) {
        o.has_grace = 1;
        o.grace_s = json_integer_value(grace);
    }
    const json_t *orphan = json_object_get(body, "orphanDependents");
    if (json_is_boolean(orphan))
        o.orphan_dependents = json_is_true(orphan);
    const char *policy = json_string_value(json_object_get(body, "propagationPolicy"));
    o.propagation = propagation_of(policy);
    return validate_delete(&o, policy, json_object_get(body, "dryRun"), out, status_out);
}

sk_err sk_delete_options_query(sk_query_fn query, void *ctx, sk_delete_options *out,
                               json_t **status_out)
{
    sk_delete_options o = SK_DELETE_OPTIONS_INIT;
    const char *grace = param(query, ctx, "gracePeriodSeconds");
    const char *orphan = param(query, ctx, "orphanDependents");
    const char *policy = param(query, ctx, "propagationPolicy");
    const char *dry_run = query(ctx, "dryRun"); /* "" is a value kube refuses */
    char *end = NULL;
    if (grace) {
        errno = 0;
        long long v = strtoll(grace, &end, 10);
        if (!*grace || *end || errno) {
            sk_buf msg = SK_BUF_INIT;
            sk_buf_puts(&msg, "strconv.ParseInt: parsing ");
            sk_buf_go_quoted(&msg, grace);
            sk_buf_puts(&msg, errno ? ": value out of range" : ": invalid syntax");
            sk_err e = refuse(status_out, SK_ERR_BAD_REQUEST, msg.data);
            sk_buf_free(&msg);
            return e;
        }
        o.has_grace = 1;
        o.grace_s = v;
    }
    if (orphan && (o.orphan_dependents = sk_parse_bool(orphan)) < 0) {
        sk_buf msg = SK_BUF_INIT;
        sk_buf_puts(&msg, "strconv.ParseBool: parsing ");
        sk_buf_go_quoted(&msg, orphan);
        sk_buf_puts(&msg, ": invalid syntax");
        sk_err e = refuse(status_out, SK_ERR_BAD_REQUEST, msg.data);
        sk_buf_free(&msg);
        return e;
    }
    o.propagation = propagation_of(policy);
    json_t *dry = dry_run ? json_pack("[s]", dry_run) : NULL;
    sk_err e = validate_delete(&o, policy, dry, out, status_out);
    json_decref(dry);
    return e;
}
