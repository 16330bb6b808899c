/*
 * audit.h - kube's audit log (audit.k8s.io/v1 Events, one JSON line each)
 * at the Metadata level of a policy with no omitStages: who did what to
 * which object and how it ended, never a request or response body, a
 * header's value or a credential.
 *
 * Stages, as kube-apiserver emits them for such a policy:
 *  - RequestReceived when an authenticated call starts (before it is
 *    authorized, so without the authorization annotations);
 *  - ResponseStarted when a long-running request (a watch) has its status
 *    and its stream begins;
 *  - ResponseComplete when the call ends (the body sent, the watch over);
 *  - a request that fails authentication gets one event only,
 *    ResponseStarted with code 401 and an empty user, as kube's failed-
 *    authentication filter writes it (its audit filter never sees it).
 * kube's Panic stage has no counterpart: a failed check aborts the process.
 *
 * Every response carries its call's audit ID in the Audit-Id header, log or
 * no log (kube's outermost filter does the same); a request's own Audit-ID
 * header is kept as the ID, as kube keeps it.
 *
 * The log: one write(2) per event under a mutex, no fsync: kube's log
 * backend in its default blocking mode also writes each event as it
 * happens (the request waits for the write), into a file or stdout. With a
 * maximum size, the file is rotated as kube's (lumberjack) does it: renamed
 * to NAME-<UTC time>.EXT and a new one opened, the oldest rotated files
 * beyond the maximum count removed.
 */
#ifndef SK_API_AUDIT_H
#define SK_API_AUDIT_H

#include "api/request.h"

#include <stdint.h>

typedef struct sk_audit_log sk_audit_log;

typedef struct sk_audit_config {
    const char *path;   /* "-": standard output */
    int64_t max_size_mb; /* --audit-log-maxsize: rotate beyond this (0: never) */
    int64_t max_backups; /* --audit-log-maxbackup: rotated files kept (0: all) */
} sk_audit_config;

/* Opens (appends to) the log; -1 with *errmsg new on failure. */
int sk_audit_open(const sk_audit_config *cfg, sk_audit_log **out, char **errmsg);
/* NULL-safe. No call may write any more. */
void sk_audit_close(sk_audit_log *log);

/* The call's side (private to src/api), each once per call, in order. */
typedef struct sk_api_call sk_api_call;
/* At start, once the user is known: the audit ID and the event's request
 * part (from req, borrowed for this call only); RequestReceived. */
void sk_audit_call_start(sk_api_call *call, const sk_http_req *req);
/* The call's response is made (before content negotiation, which may
 * re-encode the body): its status; ResponseStarted where kube sends one. */
void sk_audit_call_responded(sk_api_call *call);
/* The call is over: ResponseComplete. */
void sk_audit_call_end(sk_api_call *call);

#endif
