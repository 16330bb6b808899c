/*
 * crconvert.h - the API's one way between a served version and the stored
 * form: a custom resource whose CRD converts by webhook (strategy Webhook)
 * goes through that webhook (hook/conversion.h), everything else through
 * kube/convert.h's pure rewrites (shared-storage built-ins, conversion
 * None).
 *
 * A webhook can fail, so every function here can: the failure is kube's
 * 500 Status (reason unset, as kube-apiserver answers an error that is no
 * API status: `conversion for GVK failed: conversion webhook for ...`), and
 * the caller answers it without storing anything.
 *
 * Objects in the storage version are never sent (kube skips a same-version
 * conversion). A stored version read through the watch cache keeps its
 * converted form in the blob (api/blobslots.h), one per served version, so
 * the watchers and lists of one version convert an event once, not once
 * each: the form kept is what the webhook answered for those bytes.
 */
#ifndef SK_API_CRCONVERT_H
#define SK_API_CRCONVERT_H

#include "api/call.h"

#include <jansson.h>

/* 1 if r's objects go through its CRD's conversion webhook: r is a version
 * of a CRD with several versions whose strategy is Webhook. Its storage
 * version too: objects written before the storage version changed are
 * stored in another version, and are converted when read (kube converts
 * whatever version a stored object is in); objects already in the version
 * asked are never sent. */
int sk_crconvert_webhook(const sk_resource *r);

/* 1 if r's stored objects may differ from r's version: kube/convert.h's
 * sk_convert_needed, or a webhook-converted CRD's version. Where it is 0,
 * the stored bytes are r's form as they are. */
int sk_crconvert_needed(const sk_resource *r);

/* 1 if stored (borrowed, a stored object of r) is r's form as it is: r's
 * objects need no conversion, or it is a webhook CRD's object already in
 * r's version. A reader may then use the stored bytes. */
int sk_crconvert_as_is(const sk_resource *r, const json_t *stored);

/* obj (borrowed, in r's version) in the stored form. New, or NULL with
 * *status (new) to answer. */
json_t *sk_crconvert_to_stored(sk_api *api, const sk_resource *r, const json_t *obj,
                               json_t **status);

/* stored (borrowed, the stored form) in r's version. blob: the version it
 * was parsed from, where the converted form is kept and looked for (NULL:
 * none). New, or NULL with *status (new) to answer. */
json_t *sk_crconvert_from_stored(sk_api *api, const sk_resource *r, const json_t *stored,
                                 sk_blob *blob, json_t **status);

/* n stored objects of one list (stored[i] borrowed, parsed from blobs[i];
 * a NULL stored[i] is left NULL) in r's version, out[i] new: one review for
 * every object whose converted form is not kept yet, as kube converts a
 * list in one. 0, or -1 with *status (new) and out untouched. */
int sk_crconvert_list_from_stored(sk_api *api, const sk_resource *r, json_t *const *stored,
                                  sk_blob *const *blobs, size_t n, json_t **out, json_t **status);

#endif
