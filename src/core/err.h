/*
 * err.h - the one error enum of sqlkube and its mapping to HTTP and gRPC.
 *
 * Every layer returns sk_err. The mapping to an HTTP status code and a
 * Kubernetes Status "reason" lives in err.c and nowhere else, so that a
 * store conflict and an API conflict can never disagree about what a client
 * sees. Messages travel separately (the API layer formats them); the enum
 * only classifies.
 */
#ifndef SK_CORE_ERR_H
#define SK_CORE_ERR_H

typedef enum sk_err {
    SK_OK = 0,
    SK_ERR_BAD_REQUEST,        /* 400 BadRequest */
    SK_ERR_UNAUTHORIZED,       /* 401 Unauthorized (no or bad credentials) */
    SK_ERR_FORBIDDEN,          /* 403 Forbidden */
    SK_ERR_NOT_FOUND,          /* 404 NotFound */
    SK_ERR_METHOD_NOT_ALLOWED, /* 405 MethodNotAllowed */
    SK_ERR_NOT_ACCEPTABLE,     /* 406 NotAcceptable */
    SK_ERR_ALREADY_EXISTS,     /* 409 AlreadyExists */
    SK_ERR_CONFLICT,           /* 409 Conflict */
    SK_ERR_EXPIRED,            /* 410 Expired (compacted revision / token) */
    SK_ERR_TOO_LARGE,          /* 413 RequestEntityTooLarge */
    SK_ERR_UNSUPPORTED_MEDIA,  /* 415 UnsupportedMediaType */
    SK_ERR_INVALID,            /* 422 Invalid */
    SK_ERR_TOO_MANY_REQUESTS,  /* 429 TooManyRequests */
    SK_ERR_INTERNAL,           /* 500 InternalError */
    SK_ERR_UNAVAILABLE,        /* 503 ServiceUnavailable, Retry-After (store down, shutting
                                  down, a write's outcome unknown) */
    SK_ERR_TIMEOUT,            /* 504 Timeout */
    SK_ERR_NO_SPACE,           /* 500 InternalError: the database or its disk is full
                                  (etcd's "database space exceeded") */
    SK_ERR__COUNT
} sk_err;

/* HTTP status code for e (200 for SK_OK). */
int sk_err_http_code(sk_err e);

/* Seconds after which a client should try again (the Status's
 * details.retryAfterSeconds and the Retry-After header): > 0 for errors that
 * pass (the store unreachable, or a write's outcome unknown), else 0. */
int sk_err_retry_after(sk_err e);

/* Kubernetes Status.reason for e ("" for SK_OK). Static string. */
const char *sk_err_reason(sk_err e);

/* The gRPC status code (google.rpc.Code number) for e: 0 for SK_OK. A
 * protocol may answer some errors with codes of its own (etcd's "key not
 * found" is InvalidArgument); everything else is this. */
int sk_err_grpc_code(sk_err e);

/* Short English name for logs ("conflict"). Static string. */
const char *sk_err_name(sk_err e);

#endif
