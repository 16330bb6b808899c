/*
 * body.h - a request's body as the verbs read it: an object of the URL's
 * kind (JSON, or Kubernetes protobuf decoded to the same JSON) or
 * DeleteOptions, and what server-side field validation (fieldValidation)
 * makes of unknown and duplicate fields.
 *
 * Each function replies to the call on a refusal (400 for a body that does
 * not decode or names another kind, 415 for a media type it cannot read)
 * and returns NULL or -1; the verb then returns SK_STEP_DONE.
 */
#ifndef SK_API_BODY_H
#define SK_API_BODY_H

#include "api/call.h"
#include "kube/options.h"

#include <jansson.h>

/* Non-zero if a POST/PUT body of this Content-Type can be read. */
int sk_body_media_supported(const char *content_type);

/* The body as a JSON object (at most SK_OBJECT_MAX_DEPTH deep); `expected`
 * names what a non-object should have been. New reference. */
json_t *sk_body_decode(sk_api_call *call, const char *expected);

/* The body as an object of the call's kind: kind and apiVersion taken from
 * the URL when absent and refused when they differ, metadata an object.
 * New reference. */
json_t *sk_body_object(sk_api_call *call);

/* POST/PUT: the unknown and duplicate fields of the body's JSON bytes, as
 * mode says: warnings (Warn), a 400 (Strict), nothing (Ignore). Returns -1
 * if it replied. */
int sk_body_check_fields(sk_api_call *call, sk_field_validation mode);

/* Acts on strict-decoding findings (stolen): warnings (Warn); for Strict a
 * 400 for a POST/PUT body (patched NULL), or for a PATCH a 422 Invalid on
 * the field "patch" quoting the patched object, as kube-apiserver answers
 * a patch whose result fails strict decoding. Returns -1 if it replied. */
int sk_body_act_on_findings(sk_api_call *call, sk_field_validation mode, json_t *findings,
                            const json_t *patched);

#endif
