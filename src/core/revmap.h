/*
 * revmap.h - a hash map from revision (a positive int64) to a pointer, for
 * what a controller remembers about object versions from one pass to the
 * next: a revision names one version of one object for good, so whatever
 * was derived from that version's bytes stays true while the revision does.
 *
 * Open addressing with linear probing, no deletion: a pass builds the next
 * map from the revisions it meets (sk_revmap_take moves an entry over from
 * the previous one) and frees what is left in the old map, which is what
 * fell out of the scan. The map does not own its values.
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
/* Stores value (not NULL) for rev (> 0), which must not be in the map
 * (it may have been taken). */
void sk_revmap_put(sk_revmap *m, int64_t rev, void *value);
/* Removes rev and returns its value, or NULL if absent. Only for moving
 * entries out of a map that is then drained with sk_revmap_each and freed:
 * the slot stays claimed until the table grows, so probes past it go on. */
void *sk_revmap_take(sk_revmap *m, int64_t rev);
/* Calls fn for every value still in the map, in no order. */
void sk_revmap_each(const sk_revmap *m, void (*fn)(void *value));

#endif
