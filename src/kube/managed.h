/*
 * managed.h - metadata.managedFields: who owns which fields of an object,
 * kept on every write as kube-apiserver's field manager keeps it (Update
 * entries for create/update/patch, Apply entries for server-side apply),
 * and server-side apply itself: merge, removal of fields the applier no
 * longer applies, conflicts with other managers.
 *
 * Pure functions over jansson values (kube/fieldset.h does the set
 * algebra); the request path (api/update.c, api/create.c) calls them once
 * per attempt with the object it is about to write.
 *
 * Managers are told apart as kube does: manager name, operation,
 * subresource, and for Update entries the apiVersion. Entries are written
 * sorted as kube sorts them (operation, time, manager, apiVersion,
 * subresource); a manager left owning nothing is dropped.
 */
#ifndef SK_KUBE_MANAGED_H
#define SK_KUBE_MANAGED_H

#include "core/err.h"
#include "kube/fieldset.h"

#include <jansson.h>

typedef struct sk_managed_write {
    const char *manager;     /* the fieldManager */
    const char *api_version; /* the request's group/version ("v1", "apps/v1") */
    const char *subresource; /* "status", "scale" or NULL */
    const char *now;         /* RFC 3339 time of the write */
    int status_subresource;  /* the kind has a status subresource: the main
                              * resource's managers do not own .status */
} sk_managed_write;

/* The manager kube derives from a User-Agent when the request names none:
 * the part before the first '/', unprintable bytes left out, at most 128
 * bytes, into buf (n bytes). */
const char *sk_managed_from_user_agent(const char *user_agent, char *buf, size_t n);

/*
 * An Update (create: old NULL; update, patch, subresource write): sets
 * new_obj's metadata.managedFields (new_obj is modified). The managers are
 * the ones new_obj carries when it sends a valid non-empty list (a client
 * may edit them), none when it sends [{}] (kube's reset), else old's; a
 * subresource write always takes old's. Fields new_obj adds or changes
 * move to w->manager; fields it removes leave every manager. An update
 * that changes no field keeps old's managedFields as they are.
 */
void sk_managed_update(sk_fieldset_type t, const json_t *old, json_t *new_obj,
                       const sk_managed_write *w);

/*
 * A server-side apply of config (borrowed) onto live (NULL: creates). On
 * success *out is the object to write, managedFields set. On a conflict
 * without force: SK_ERR_CONFLICT, *status a Status (kube's "Apply failed
 * with N conflict(s): ..." with FieldManagerConflict causes). SK_ERR_INVALID
 * / SK_ERR_BAD_REQUEST with *status for a config that cannot be typed or
 * sets managedFields. An apply by manager "kubectl" to an object with a
 * kubectl.kubernetes.io/last-applied-configuration annotation rewrites it
 * to config, as kube's lastAppliedUpdater does, so client-side apply and
 * `kubectl apply view-last-applied` see what was applied last.
 */
sk_err sk_managed_apply(sk_fieldset_type t, const json_t *live, const json_t *config,
                        const sk_managed_write *w, int force, json_t **out, json_t **status);

/*
 * kube's IgnoreManagedFieldsTimestampsTransformer: when new_obj differs from
 * old (both borrowed; new_obj is modified) only in its managedFields' times,
 * new_obj takes old's managedFields, so the write stays a no-op. Without it
 * a repeated apply whose defaulting touches a field would write a new
 * resourceVersion whenever it crossed a second boundary.
 */
void sk_managed_keep_times(const json_t *old, json_t *new_obj);

#endif
