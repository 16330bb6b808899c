/*
 * err.c - the single table mapping sk_err to HTTP code and Status reason,
 * and to the gRPC status code the etcd face answers with.
 *
 * Reasons are the metav1.StatusReason strings kube-apiserver uses; clients
 * (client-go's errors.IsConflict and friends) switch on them, so they must
 * match Kubernetes exactly. A retry-after delay goes with the errors that
 * pass: client-go retries a 5xx only when it carries Retry-After.
 */
#include "core/err.h"

#include <assert.h>

static const struct {
    int code;
    const char *reason;
    const char *name;
    int grpc; /* google.rpc.Code */
    int retry_after; /* seconds; 0: do not say */
} err_table[SK_ERR__COUNT] = {
    [SK_OK] = {200, "", "ok", 0, 0},
    [SK_ERR_BAD_REQUEST] = {400, "BadRequest", "bad request", 3, 0},
    [SK_ERR_UNAUTHORIZED] = {401, "Unauthorized", "unauthorized", 16, 0},
    [SK_ERR_FORBIDDEN] = {403, "Forbidden", "forbidden", 7, 0},
    [SK_ERR_NOT_FOUND] = {404, "NotFound", "not found", 5, 0},
    [SK_ERR_METHOD_NOT_ALLOWED] = {405, "MethodNotAllowed", "method not allowed", 12, 0},
    [SK_ERR_NOT_ACCEPTABLE] = {406, "NotAcceptable", "not acceptable", 3, 0},
    [SK_ERR_ALREADY_EXISTS] = {409, "AlreadyExists", "already exists", 6, 0},
    [SK_ERR_CONFLICT] = {409, "Conflict", "conflict", 10, 0},
    [SK_ERR_EXPIRED] = {410, "Expired", "expired", 11, 0},
    [SK_ERR_TOO_LARGE] = {413, "RequestEntityTooLarge", "request entity too large", 8, 0},
    [SK_ERR_UNSUPPORTED_MEDIA] = {415, "UnsupportedMediaType", "unsupported media type", 3, 0},
    [SK_ERR_INVALID] = {422, "Invalid", "invalid", 3, 0},
    [SK_ERR_TOO_MANY_REQUESTS] = {429, "TooManyRequests", "too many requests", 8, 0},
    [SK_ERR_INTERNAL] = {500, "InternalError", "internal error", 13, 0},
    [SK_ERR_UNAVAILABLE] = {503, "ServiceUnavailable", "service unavailable", 14, 1},
    [SK_ERR_TIMEOUT] = {504, "Timeout", "timeout", 4, 0},
    /* kube-apiserver answers etcd's full database as an internal error;
     * gRPC's RESOURCE_EXHAUSTED is etcd's own code for it. */
    [SK_ERR_NO_SPACE] = {500, "InternalError", "database or disk full", 8, 0},
};

int sk_err_http_code(sk_err e)
{
    assert(e >= 0 && e < SK_ERR__COUNT);
    return err_table[e].code;
}

int sk_err_retry_after(sk_err e)
{
    assert(e >= 0 && e < SK_ERR__COUNT);
    return err_table[e].retry_after;
}

const char *sk_err_reason(sk_err e)
{
    assert(e >= 0 && e < SK_ERR__COUNT);
    return err_table[e].reason;
}

int sk_err_grpc_code(sk_err e)
{
    assert(e >= 0 && e < SK_ERR__COUNT);
    return err_table[e].grpc;
}

const char *sk_err_name(sk_err e)
{
    assert(e >= 0 && e < SK_ERR__COUNT);
    return err_table[e].name;
}
