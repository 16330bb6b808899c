/*
 * admit.h - the rules every object goes through on its way to the store,
 * whichever verb brings it (create, update, patch): the namespace of the
 * URL, the metadata the server owns (kube/objmeta.h), defaulting
 * (kube/defaults.h) and validation (kube/validate.h) around the typed round
 * trip (kube/typed.h), which also drops the fields the kind does not
 * declare, in kube-apiserver's order. A custom resource is pruned,
 * defaulted and validated by its version's structural schema
 * (kube/crschema.h); a CustomResourceDefinition's schemas must compile.
 * Mutating admission webhooks run right after decoding and defaulting,
 * before every check and every field the server owns (what they change is
 * decoded again and goes through all of it); validating ones last
 * (api/webhooks.h).
 */
#ifndef SK_API_ADMIT_H
#define SK_API_ADMIT_H

#include "api/call.h"
#include "kube/options.h"

#include <jansson.h>

/* Admits obj (edited) as a new object (old NULL) or as the replacement of
 * old (borrowed), mutating and validating admission webhooks included
 * (api/webhooks.h); wo (borrowed) says whether it is a dry run and what to
 * do with the fields a custom resource's schema does not know. Replies and
 * returns -1 on a refusal. */
int sk_admit_object(sk_api_call *call, json_t *obj, const json_t *old,
                    const sk_write_options *wo);

/* The store write for obj (borrowed; the write takes its own reference):
 * a create, or an update of the version at expected_rev. */
sk_write sk_admit_write(sk_api_call *call, json_t *obj, int64_t expected_rev);

#endif
