/*
 * revmap.h - a hash map from revision (a positive int64) to a pointer, for
 * what a controller remembers about object versions from one pass to the
 * next: a revision names one version of one object for good, so whatever
 * was derived from that version's bytes stays true while the revision does.
 *
 * Open addressing with linear probing; removal shifts the entries behind
 * the removed one back (no tombstones), so a map that lives long and
 * churns (one entry out and one in per changed object) keeps its probe
 * chains as short as a fresh one. The map does not own its values.
 */
#ifndef SK_CORE_REVMAP_H
#define SK_CORE_REVMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sk_revmap sk_revmap;

/* New, empty. */
sk_revmap *sk_revmap_new(void);
/* Frees the map, not its values (NULL is a no-op). */
void sk_revmap_free(sk_revmap *m);
/* Stores value (not NULL) for rev (> 0), which must not be in the map. */
void sk_revmap_put(sk_revmap *m, int64_t rev, void *value);
/* Removes rev and returns its value, or NULL if absent. */
void *sk_revmap_take(sk_revmap *m, int64_t rev);
/* Calls fn(arg, rev, value) for every entry, in no order. fn must not
 * change the map. */
void sk_revmap_each(const sk_revmap *m, void (*fn)(void *arg, int64_t rev, void *value), void *arg);

#endif
