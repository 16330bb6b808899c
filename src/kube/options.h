/*
 * options.h - a request's query parameters and DeleteOptions body as typed
 * options, parsed once, with kube-apiserver's rules and messages.
 *
 * List and watch share ListOptions (sk_list_options); create, update, patch
 * and delete share the write options (dryRun, fieldValidation). Each parse
 * checks the formats of its parameters and the rules that join them
 * (resourceVersionMatch needs resourceVersion, watch-list needs bookmarks,
 * ...). On a refusal it returns the code and *status_out, a new metav1.Status
 * the caller sends as it is; *out is written only on success.
 *
 * Pure: parameters come through a lookup function, so any transport (or a
 * test) can supply them. Strings in the options are borrowed from what the
 * lookup returned and live as long as it does.
 */
#ifndef SK_KUBE_OPTIONS_H
#define SK_KUBE_OPTIONS_H

#include "core/err.h"

#include <jansson.h>
#include <stdint.h>

/* A query parameter's value ("" for "?key"), or NULL if absent. */
typedef const char *(*sk_query_fn)(void *ctx, const char *key);

typedef enum { SK_RVM_UNSET, SK_RVM_EXACT, SK_RVM_NOT_OLDER_THAN } sk_rv_match;
typedef enum { SK_INCLUDE_NONE, SK_INCLUDE_METADATA, SK_INCLUDE_OBJECT } sk_include_object;

typedef struct sk_list_options {
    int64_t limit;    /* 0: no limit (capped at 1,000,000) */
    const char *cont; /* the continue token, NULL if none */
    int64_t rv;       /* resourceVersion, -1 if unset */
    sk_rv_match rvm;
    const char *label_selector;       /* NULL if none */
    const char *field_selector;       /* NULL if none */
    sk_include_object include_object; /* Table rows (default Metadata) */
    /* Watch only. */
    int64_t timeout_s; /* 0: none */
    int allow_bookmarks;
    int send_initial_events; /* -1 unset, 0, 1 */
} sk_list_options;

/* ListOptions for a list (watch 0) or a watch (watch 1). */
sk_err sk_list_options_parse(sk_query_fn query, void *ctx, int watch, sk_list_options *out,
                             json_t **status_out);

/* A 422 Invalid ListOptions Status for field: "<field>: Forbidden: <msg>"
 * (new reference), as kube-apiserver words rules that join parameters. */
json_t *sk_list_options_forbidden(const char *field, const char *msg);

typedef enum { SK_FV_WARN, SK_FV_STRICT, SK_FV_IGNORE } sk_field_validation;

typedef struct sk_write_options {
    int dry_run;                    /* dryRun=All */
    sk_field_validation validation; /* fieldValidation, Warn when absent */
    const char *field_manager;      /* fieldManager (borrowed from the query), NULL when absent */
    int force;                      /* force=true (server-side apply) */
    int force_given;                /* force was sent at all (refused for other patches) */
} sk_write_options;

/* The query's CreateOptions, UpdateOptions or PatchOptions (options_kind
 * names which, for the error): dryRun (only "All" is defined),
 * fieldValidation, fieldManager and force, as kube reads them (from the query
 * only). A dryRun or fieldValidation kube does not define is its 422 on
 * <options_kind>.meta.k8s.io, every bad parameter named; fieldManager is
 * checked where it is used (api/manage.c, kube's ValidateFieldManager). */
sk_err sk_write_options_parse(sk_query_fn query, void *ctx, const char *options_kind,
                              sk_write_options *out, json_t **status_out);

/* kube's 422 for a write's options: "<kind>.meta.k8s.io \"\" is invalid:
 * <field>: <what>: <detail>" with one cause (reason e.g. FieldValueRequired).
 * New reference. */
json_t *sk_options_invalid(const char *options_kind, const char *reason, const char *field,
                           const char *what, const char *detail);

/* DeleteOptions propagationPolicy (metav1.DeletionPropagation). */
typedef enum {
    SK_PROPAGATION_UNSET,
    SK_PROPAGATION_ORPHAN,
    SK_PROPAGATION_BACKGROUND,
    SK_PROPAGATION_FOREGROUND,
} sk_propagation;

typedef struct sk_delete_options {
    int64_t precondition_rev;     /* 0: none */
    const char *precondition_uid; /* NULL: none; borrowed from the body */
    int has_grace;                /* gracePeriodSeconds given */
    int64_t grace_s;              /* as given (negative: kube treats it as 1) */
    sk_propagation propagation;
    int orphan_dependents; /* deprecated orphanDependents: -1 unset, 0, 1 */
    int dry_run;           /* dryRun: ["All"] (body) or dryRun=All (query) */
} sk_delete_options;

/* No options given: nothing set. */
#define SK_DELETE_OPTIONS_INIT                                                                     \
    {                                                                                              \
        .orphan_dependents = -1                                                                    \
    }

/* DeleteOptions from a decoded body (borrowed; strings in *out point into
 * it). Every field kube decodes is type-checked as a typed decode would be:
 * a precondition of the wrong type is a 400, never ignored (ignoring it
 * would delete unconditionally). The options are then validated as kube's
 * ValidateDeleteOptions does (422). */
sk_err sk_delete_options_decode(const json_t *body, sk_delete_options *out, json_t **status_out);

/* DeleteOptions from the query (gracePeriodSeconds, propagationPolicy,
 * orphanDependents, dryRun), which kube reads only when the request has no
 * body. A dryRun other than "All" is kube's 422 on DeleteOptions, from the
 * body as from the query. */
sk_err sk_delete_options_query(sk_query_fn query, void *ctx, sk_delete_options *out,
                               json_t **status_out);

/* ?includeObject= of a Table: Metadata when s is NULL or empty. -1 if s is
 * not one of None, Metadata, Object. */
int sk_parse_include_object(const char *s, sk_include_object *out);

/* Go's strconv.ParseBool: 1, 0, or -1 if s is not a boolean. */
int sk_parse_bool(const char *s);

#endif
