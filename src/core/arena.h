/*
 * arena.h - request-scoped memory: allocate as often as needed, free once.
 *
 * A request makes many small allocations (copies of its parameters, its
 * route, per-verb state, messages) whose lifetimes all end with the
 * request; freeing them one by one on every path is where leaks and double
 * frees come from. Like PostgreSQL's memory contexts, an arena hands out
 * memory from blocks it owns and releases all of it in sk_arena_free.
 * What lives outside it (a json_t reference, a store row, a stream) is
 * registered with sk_arena_defer and released then too, last registered
 * first.
 */
#ifndef SK_CORE_ARENA_H
#define SK_CORE_ARENA_H

#include <stdarg.h>
#include <stddef.h>

typedef struct sk_arena sk_arena;

sk_arena *sk_arena_new(void);
/* Runs every deferred release (newest first), then frees all memory. NULL-safe. */
void sk_arena_free(sk_arena *a);

/* n zeroed bytes, aligned for any type, valid until sk_arena_free. */
void *sk_arena_alloc(sk_arena *a, size_t n);
/* n bytes as they are, not zeroed, aligned like sk_arena_alloc's: for a
 * buffer the caller writes whole (a copy, a packed message). */
void *sk_arena_alloc_uninit(sk_arena *a, size_t n);
/* A copy of s in the arena; NULL for NULL. */
char *sk_arena_strdup(sk_arena *a, const char *s);
/* A copy of the n bytes at s, NUL-terminated, in the arena. */
char *sk_arena_strndup(sk_arena *a, const char *s, size_t n);
/* A copy of s without its leading and trailing white space as Go's
 * strings.TrimSpace sees it (core/utf8.h), in the arena: kube trims
 * expressions and messages so. */
char *sk_arena_trim(sk_arena *a, const char *s);
/* A formatted string in the arena. */
char *sk_arena_printf(sk_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An array of n items of size bytes in a (NULL with *cap 0 at first) with
 * room for one more: items itself if n < *cap, else a copy with twice the
 * slots (at least 8), *cap updated. The old array stays until the arena
 * is freed, which bounds the waste at the array's final size. */
void *sk_arena_grow(sk_arena *a, void *items, size_t n, size_t *cap, size_t size);
/* Calls release(ptr) when the arena is freed. */
void sk_arena_defer(sk_arena *a, void (*release)(void *ptr), void *ptr);

#endif
