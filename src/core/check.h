/*
 * check.h - always-on invariant checks.
 *
 * assert() disappears under NDEBUG; these do not. They guard invariants whose
 * violation would corrupt stored data or hand a client wrong bytes, where
 * crashing loudly is the only honest answer.
 */
#ifndef SK_CORE_CHECK_H
#define SK_CORE_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define SK_CHECK(cond)                                                                             \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "sqlkube: invariant failed at %s:%d: %s\n", __FILE__, __LINE__,       \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define SK_CHECK_ALLOC(p) SK_CHECK((p) != NULL)

#endif
