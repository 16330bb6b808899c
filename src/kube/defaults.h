/*
 * defaults.h - kind-specific defaulting, as kube-apiserver's registry
 * strategies and defaulters apply it before validation: what a client
 * reads back that it did not send.
 */
#ifndef SK_KUBE_DEFAULTS_H
#define SK_KUBE_DEFAULTS_H

#include "core/err.h"
#include "kube/registry.h"

#include <jansson.h>

/* Defaults obj (edited, through the typed round trip of kube/typed.h) as
 * a new r. SK_ERR_BAD_REQUEST (*msg new) when a field it converts has the
 * wrong type. */
sk_err sk_defaults_apply(const sk_resource *r, json_t *obj, char **msg);

/* The same for obj replacing old (borrowed): without the create-only steps
 * (a Namespace's kubernetes finalizer and phase). */
sk_err sk_defaults_update(const sk_resource *r, json_t *obj, const json_t *old, char **msg);

#endif
