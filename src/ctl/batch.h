/*
 * batch.h - the writes a controller makes in one round (the namespace
 * controller's deletions, the garbage collector's deletions and edits),
 * queued together so the store's group commit turns a thousand of them into
 * a few transactions, and awaited together.
 *
 * Every write is planned against the stored version the controller read
 * (its revision is the write's precondition), so a write that raced a
 * client, or another instance's controller sharing the database, fails
 * with a conflict and changes nothing: with several instances each deletion
 * happens exactly once. Deletions are planned by kube/lifecycle.h as a
 * client's DELETE is: an object with finalizers is marked, not removed.
 * Conflicts and objects gone meanwhile are not errors: the next round reads
 * again.
 */
#ifndef SK_CTL_BATCH_H
#define SK_CTL_BATCH_H

#include "kube/options.h"
#include "kube/registry.h"
#include "store/store.h"

#include <jansson.h>
#include <stdint.h>

typedef struct sk_batch sk_batch;

/* A new batch over store (borrowed; must outlive it). Its updates and
 * creates are recorded in metadata.managedFields as manager's Update
 * entries (static string: the component kube would name,
 * "kube-controller-manager" or "kube-apiserver"), as kube records the
 * writes of its built-in controllers. */
sk_batch *sk_batch_new(sk_store *store, const char *manager);

/* Queues deleting obj (borrowed, the stored form of resource r, read at
 * revision rev) with options d. */
void sk_batch_delete(sk_batch *b, const sk_resource *r, const json_t *obj, int64_t rev,
                     const sk_delete_options *d);

/* Queues writing edited (stolen: old with a finalizer, owner references or
 * status changed) over old (borrowed, read at rev); an edit that leaves an
 * object being deleted without finalizers removes it, as a client's update
 * would. Nothing is written if edited equals old. subresource: the one kube's
 * controller writes through ("status", "finalize") or NULL, for the
 * managedFields entry. */
void sk_batch_update(sk_batch *b, const sk_resource *r, const json_t *old, json_t *edited,
                     int64_t rev, const char *subresource);

/* Queues a server-side apply of config (borrowed: the fields the manager
 * owns, as kube's controllers apply them, with Force) over live (borrowed,
 * read at rev) through subresource ("status" or NULL), recorded as the
 * manager's Apply entry. Nothing is written when it changes nothing. */
void sk_batch_apply(sk_batch *b, const sk_resource *r, const json_t *live, const json_t *config,
                    int64_t rev, const char *subresource);
/* Creates obj (stolen) as resource r in namespace ns ("" if cluster-scoped);
 * an object that exists already is not an error. */
void sk_batch_create(sk_batch *b, const sk_resource *r, const char *ns, json_t *obj);

/* Waits for every queued write and frees b. Returns the number of writes
 * that failed for another reason than a conflict, a missing object or an
 * existing one (logged). */
int sk_batch_finish(sk_batch *b);

#endif
