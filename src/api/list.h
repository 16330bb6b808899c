/*
 * list.h - a list of the call's resource as a stream: the LIST verb's body,
 * and a watch's initial events (every object at a revision, as ADDED
 * events).
 *
 * A stream reads at one revision in chunks through the one read path
 * (read/reader.h) and renders items as the HTTP layer pulls bytes, so a
 * list of any size costs one chunk of memory. Objects are queued as
 * references to their shared bytes, never copied per client.
 */
#ifndef SK_API_LIST_H
#define SK_API_LIST_H

#include "api/call.h"
#include "kube/options.h"

#include <jansson.h>
#include <sys/types.h>

typedef struct sk_list_stream sk_list_stream;

/* What LIST and WATCH begin with: the request's ListOptions and a stream
 * over the call's resource and scope (its namespace, and the object named
 * in the URL for a watch of one object) with their selectors. watch: items
 * are ADDED events, no list framing, and none until
 * sk_list_stream_start_initial. In the call's arena, as its verb_state;
 * NULL after replying (bad options or selectors). */
typedef struct sk_list_request {
    sk_list_options opts;
    sk_list_stream *ls;
} sk_list_request;

sk_list_request *sk_list_request_begin(sk_api_call *call, int watch);
/* Starts streaming every object at rev (> 0) as ADDED events. */
void sk_list_stream_start_initial(sk_list_stream *ls, int64_t rev);
/* As sk_api_call_read. */
ssize_t sk_list_stream_read(void *ls, char *buf, size_t max);

/* The namespace the stream is scoped to, NULL for all. */
const char *sk_list_stream_ns(const sk_list_stream *ls);
/* Non-zero if label or field selectors filter; whether obj passes them. */
int sk_list_stream_filters(const sk_list_stream *ls);
int sk_list_stream_matches(const sk_list_stream *ls, json_t *obj);

#endif
