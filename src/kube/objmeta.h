/*
 * objmeta.h - the metadata the server owns: what a create sets and an
 * update carries over, whatever the client sent.
 *
 * Before admission (kube's create handler): what a create's body may not
 * set wiped, so mutating webhooks never see a client's uid; an update's
 * name and uid checked. After it (kube's registry: BeforeCreate,
 * BeforeUpdate), whatever the webhooks did:
 * On create: a name from generateName (kube's SimpleNameGenerator), a new
 * uid and creationTimestamp, and no resourceVersion, generation, selfLink
 * or deletion fields of the client's (resourceVersion is the store
 * writer's to stamp; none of the kinds served keeps a generation). On
 * update: the name must be the one in the URL, a uid must be the stored
 * one (a uid is a precondition), and uid, creationTimestamp, the deletion
 * fields and generation are the stored object's.
 */
#ifndef SK_KUBE_OBJMETA_H
#define SK_KUBE_OBJMETA_H

#include "core/err.h"
#include "kube/registry.h"

#include <jansson.h>
#include <stdint.h>

/* Sets metadata.namespace of obj (edited) to ns for namespaced kinds and
 * removes it for cluster-scoped ones. SK_ERR_BAD_REQUEST (*msg new) if the
 * object names another namespace than the request. */
sk_err sk_objmeta_settle_namespace(const sk_resource *r, json_t *obj, const char *ns, char **msg);

/* kube's WipeObjectMetaSystemFields: what a create's body may not set
 * (uid, creationTimestamp, the deletion fields, selfLink) removed from obj
 * (edited) before admission sees it; sk_objmeta_on_create fills them
 * after. */
void sk_objmeta_wipe_system(json_t *obj);

/* Server-managed metadata of a new object (edited), created at now_s. */
void sk_objmeta_on_create(json_t *obj, int64_t now_s);

/* What an update's body is checked for before admission: the name from
 * the request, and a uid (a precondition) that is old's (borrowed).
 * SK_ERR_BAD_REQUEST for another name, SK_ERR_CONFLICT for another uid;
 * *msg new. */
sk_err sk_objmeta_check_update(const json_t *obj, const json_t *old, const char *name, char **msg);

/* Server-managed metadata of obj (edited) replacing old (borrowed) under
 * the name from the request, the checks above included. */
sk_err sk_objmeta_on_update(json_t *obj, const json_t *old, const char *name, char **msg);

#endif
