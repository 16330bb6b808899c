/*
 * crconvert.c - see crconvert.h.
 *
 * The webhook's configuration is the CRD row's own (r->custom->crd, kept
 * as long as the row: registry "retire, never free"), compiled by
 * hook/conversion.c per call that sends anything.
 *
 * The kept forms: slot SK_SLOT_SERVED + k of a blob holds the compact JSON
 * of the k-th non-storage version of the CRD's spec.versions (the first
 * SK_SLOT_SERVED_N of them; later ones convert per reader). A kept form is
 * used only when its apiVersion is the reader's, so a CRD whose versions
 * were reordered since never serves one version's form as another's.
 */
#include "api/crconvert.h"
#include "api/blobslots.h"
#include "api/svcroute.h"
#include "core/check.h"
#include "hook/conversion.h"
#include "kube/convert.h"
#include "kube/status.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Locks by blob address: a watcher converting an event holds its stripe
 * for the webhook's call (30 s at most), so another watcher of the event
 * waits and finds the form kept. Lists take none (their items are many;
 * racing readers both convert, and the first form is kept). */
#define N_STRIPES 64
static pthread_mutex_t stripes[N_STRIPES];
static pthread_once_t stripes_once = PTHREAD_ONCE_INIT;

static void stripes_init(void)
{
    for (size_t i = 0; i < N_STRIPES; i++)
        pthread_mutex_init(&stripes[i], NULL);
}

static const json_t *conversion_of(const sk_resource *r)
{
    return json_object_get(json_object_get(r->custom->crd, "spec"), "conversion");
}

int sk_crconvert_webhook(const sk_resource *r)
{
    if (!r->custom)
        return 0;
    const json_t *versions = json_object_get(json_object_get(r->custom->crd, "spec"), "versions");
    const char *strategy = json_string_value(json_object_get(conversion_of(r), "strategy"));
    return json_array_size(versions) > 1 && strategy && strcmp(strategy, "Webhook") == 0;
}

int sk_crconvert_needed(const sk_resource *r)
{
    return sk_convert_needed(r) || sk_crconvert_webhook(r);
}

int sk_crconvert_as_is(const sk_resource *r, const json_t *stored)
{
    if (!sk_crconvert_needed(r))
        return 1;
    const char *av = json_string_value(json_object_get(stored, "apiVersion"));
    return sk_crconvert_webhook(r) && av && strcmp(av, r->api_version) == 0;
}

/* kube's answer to an error that is no API status (ErrorToAPIStatus):
 * 500, no reason. New. */
static json_t *failure(const char *msg)
{
    json_t *st = sk_status_new(SK_ERR_INTERNAL, msg, NULL, NULL, NULL, NULL);
    json_object_del(st, "reason");
    return st;
}

/* Converts objects (an array) to desired through r's webhook. New array,
 * or NULL with *status. */
static json_t *convert(sk_api *api, const sk_resource *r, const char *desired,
                       const json_t *objects, const char *list_gvk, json_t **status)
{
    sk_hook_conversion conv = {
        .desired = desired,
        .objects = objects,
        .list_gvk = list_gvk,
        .resolve = sk_svcroute_resolve,
        .resolve_arg = api,
    };
    json_t *out = NULL;
    char *msg = NULL;
    if (sk_hook_convert(api->hooks, json_object_get(conversion_of(r), "webhook"), &conv, &out,
                        &msg) != SK_OK) {
        *status = failure(msg);
        free(msg);
        out = NULL;
    }
    return out;
}

json_t *sk_crconvert_to_stored(sk_api *api, const sk_resource *r, const json_t *obj,
                               json_t **status)
{
    if (!sk_crconvert_webhook(r))
        return sk_convert_to_stored(r, obj);
    json_t *objects = json_pack("[O]", obj);
    json_t *out = convert(api, r, r->stored_as->api_version, objects, NULL, status);
    json_t *one = out ? json_incref(json_array_get(out, 0)) : NULL;
    json_decref(out);
    json_decref(objects);
    return one;
}

/* The slot keeping r's converted form, or -1 when none does. */
static int slot_of(const sk_resource *r)
{
    const json_t *versions = json_object_get(json_object_get(r->custom->crd, "spec"), "versions");
    size_t i;
    const json_t *v;
    int k = 0;
    if (r == r->stored_as)
        return -1; /* what it keeps is an older storage version's conversion: rare */
    json_array_foreach(versions, i, v)
    {
        if (v == r->custom->version)
            return k < SK_SLOT_SERVED_N ? SK_SLOT_SERVED + k : -1;
        if (!json_is_true(json_object_get(v, "storage")))
            k++;
    }
    return -1;
}

/* blob's kept form for r, parsed; NULL when none is (or it is not r's). */
static json_t *kept(const sk_resource *r, int slot, const sk_blob *blob)
{
    size_t len;
    const char *data = blob && slot >= 0 ? sk_blob_derived(blob, (unsigned)slot, &len) : NULL;
    json_t *obj = data ? json_loadb(data, len, 0, NULL) : NULL;
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    if (obj && (!av || strcmp(av, r->api_version) != 0)) {
        json_decref(obj);
        obj = NULL;
    }
    return obj;
}

static void keep(int slot, sk_blob *blob, const json_t *obj)
{
    if (!blob || slot < 0)
        return;
    char *text = json_dumps(obj, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    size_t len;
    sk_blob_attach_derived(blob, (unsigned)slot, text, strlen(text), &len);
    free(text);
}

/* stored[0..n) through r's webhook, the kept forms first; list: they are
 * a list's items (kube's messages name the list). 0, or -1 with *status. */
static int from_stored(sk_api *api, const sk_resource *r, json_t *const *stored,
                       sk_blob *const *blobs, size_t n, int list, json_t **out, json_t **status)
{
    int slot = slot_of(r), rc = 0;
    /* one object to keep: its converter holds the blob's stripe, so the
     * watchers of one version woken by one event convert it once */
    pthread_mutex_t *stripe = n == 1 && blobs && blobs[0] && slot >= 0
                                  ? &stripes[((uintptr_t)blobs[0] >> 6) % N_STRIPES]
                                  : NULL;
    if (stripe) {
        pthread_once(&stripes_once, stripes_init);
        pthread_mutex_lock(stripe);
    }
    json_t **got = calloc(n ? n : 1, sizeof *got);
    SK_CHECK_ALLOC(got);
    json_t *missing = json_array();
    for (size_t i = 0; i < n; i++)
        if (stored[i] && !(got[i] = kept(r, slot, blobs ? blobs[i] : NULL)))
            json_array_append(missing, stored[i]);
    if (json_array_size(missing) > 0) {
        sk_buf gvk = SK_BUF_INIT;
        if (list)
            sk_buf_printf(&gvk, "%s, Kind=%s", r->api_version, r->list_kind);
        json_t *conv = convert(api, r, r->api_version, missing, list ? gvk.data : NULL, status);
        sk_buf_free(&gvk);
        if (!conv) {
            rc = -1;
            goto out;
        }
        size_t next = 0;
        for (size_t i = 0; i < n; i++) {
            if (!stored[i] || got[i])
                continue;
            got[i] = json_incref(json_array_get(conv, next++));
            keep(slot, blobs ? blobs[i] : NULL, got[i]);
        }
        json_decref(conv);
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = got[i];
        got[i] = NULL;
    }
out:
    if (stripe)
        pthread_mutex_unlock(stripe);
    for (size_t i = 0; i < n; i++)
        json_decref(got[i]);
    free(got);
    json_decref(missing);
    return rc;
}

json_t *sk_crconvert_from_stored(sk_api *api, const sk_resource *r, const json_t *stored,
                                 sk_blob *blob, json_t **status)
{
    if (!sk_crconvert_webhook(r))
        return sk_convert_from_stored(r, stored);
    json_t *const in[1] = {(json_t *)stored};
    sk_blob *const blobs[1] = {blob};
    json_t *out[1] = {NULL};
    return from_stored(api, r, in, blobs, 1, 0, out, status) == 0 ? out[0] : NULL;
}

int sk_crconvert_list_from_stored(sk_api *api, const sk_resource *r, json_t *const *stored,
                                  sk_blob *const *blobs, size_t n, json_t **out, json_t **status)
{
    if (sk_crconvert_webhook(r))
        return from_stored(api, r, stored, blobs, n, 1, out, status);
    for (size_t i = 0; i < n; i++)
        out[i] = stored[i] ? sk_convert_from_stored(r, stored[i]) : NULL;
    return 0;
}
