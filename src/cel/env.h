/*
 * env.h - what a library of CEL functions (lib.h) sees of the evaluation
 * that calls it: the arena values go in, and the step bound (eval.h), which
 * a library charges for the work its function does beyond what the
 * evaluator already charged (every node, and 1 step a 64 bytes of each
 * string or bytes argument). eval.c implements it: an sk_cel_env is the
 * evaluation's context.
 */
#ifndef SK_CEL_ENV_H
#define SK_CEL_ENV_H

#include "cel/value.h"
#include "core/arena.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sk_cel_env sk_cel_env;

sk_arena *sk_cel_env_arena(sk_cel_env *env);

/* Charges n steps: 1, or 0 once the budget is spent; the function's
 * result must then be sk_cel_env_exhausted(env). */
int sk_cel_env_charge(sk_cel_env *env, uint64_t n);

/* The error every node gives once the budget is spent (NULL before). */
const sk_cel_val *sk_cel_env_exhausted(sk_cel_env *env);

/* The work (value.h's sk_cel_work units, 64 a step) the budget has left,
 * for a function to do and then charge with sk_cel_env_charge(done / 64). */
uint64_t sk_cel_env_work_left(sk_cel_env *env);

/* x + y as CEL's `+` has it for numbers and durations (overflow and mixed
 * kinds are errors). */
const sk_cel_val *sk_cel_env_add(sk_cel_env *env, const sk_cel_val *x, const sk_cel_val *y);

/* At most this many messages for one value (lib_format.h). */
#define SK_CEL_FORMAT_MAX_MSGS 8

/* The messages validating s as the named format (one of lib_format.h's
 * SK_CEL_FORMATS) gives, written to msgs (static or in a), their number;
 * 0: valid. */
typedef size_t (*sk_cel_format_fn)(const char *format, const char *s, sk_arena *a,
                                   const char *msgs[SK_CEL_FORMAT_MAX_MSGS]);

/* The caller's checks for the format library (eval.h); NULL if none. */
sk_cel_format_fn sk_cel_env_format(sk_cel_env *env);

/* A slot the libraries may keep state in for the rest of the evaluation
 * (NULL at first; what it points to lives in the arena). */
void **sk_cel_env_lib_state(sk_cel_env *env);

#endif
