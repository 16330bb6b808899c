/*
 * err.c - the single table mapping sk_err to HTTP code and Status reason.
 *
 * Reasons are the metav1.StatusReason strings kube-apiserver uses; clients
 * (client-go's errors.IsConflict and friends) switch on them, so they must
 * match Kubernetes exactly.
 */
#include "core/err.h"

#include <assert.h>

static const struct {
    int code;
    const char *reason;
    const char *name;
} err_table[SK_ERR__COUNT] = {
    [SK_OK] = {200, "", "ok"},
    [SK_ERR_BAD_REQUEST] = {400, "BadRequest", "bad request"},
    [SK_ERR_UNAUTHORIZED] = {401, "Unauthorized", "unauthorized"},
    [SK_ERR_FORBIDDEN] = {403, "Forbidden", "forbidden"},
    [SK_ERR_NOT_FOUND] = {404, "NotFound", "not found"},
    [SK_ERR_METHOD_NOT_ALLOWED] = {405, "MethodNotAllowed", "method not allowed"},
    [SK_ERR_NOT_ACCEPTABLE] = {406, "NotAcceptable", "not acceptable"},
    [SK_ERR_ALREADY_EXISTS] = {409, "AlreadyExists", "already exists"},
    [SK_ERR_CONFLICT] = {409, "Conflict", "conflict"},
    [SK_ERR_EXPIRED] = {410, "Expired", "expired"},
    [SK_ERR_TOO_LARGE] = {413, "RequestEntityTooLarge", "request entity too large"},
    [SK_ERR_UNSUPPORTED_MEDIA] = {415, "UnsupportedMediaType", "unsupported media type"},
    [SK_ERR_INVALID] = {422, "Invalid", "invalid"},
    [SK_ERR_TOO_MANY_REQUESTS] = {429, "TooManyRequests", "too many requests"},
    [SK_ERR_INTERNAL] = {500, "InternalError", "internal error"},
    [SK_ERR_UNAVAILABLE] = {503, "ServiceUnavailable", "service unavailable"},
    [SK_ERR_TIMEOUT] = {504, "Timeout", "timeout"},
};

int sk_err_http_code(sk_err e)
{
    assert(e >= 0 && e < SK_ERR__COUNT);
    return err_table[e].code;
}

const char *sk_err_reason(sk_err e)
{
    assert(e >= 0 && e < SK_ERR__COUNT);
    return err_table[e].reason;
}

const char *sk_err_name(sk_err e)
{
    assert(e >= 0 && e < SK_ERR__COUNT);
    return err_table[e].name;
}
