/*
 * eval.h - evaluates a parsed CEL expression (ast.h) to a value (value.h),
 * with CEL's semantics (cel-spec doc/langdef.md; cel-go's interpreter where
 * the spec is silent), without a type checker: what a checker would refuse
 * ahead of time ("1 + 1u") is a runtime error value here ("no such
 * overload"), as in cel-go's unchecked evaluation.
 *
 * Errors are values: `false && e`, `true || e` and their mirror images are
 * false and true whatever e gives, a comprehension's @not_strictly_false
 * condition reads an error as true, and any other function of an error is
 * that error. int and uint overflow, division and modulo by zero, a missing
 * map key, an index out of range, a failed conversion are errors.
 *
 * Supported: the operators, indexing, field selection and has() on maps,
 * `in`, size, concatenation, the comprehensions every macro expands to,
 * int() uint() double() string() bytes() bool() type() dyn(),
 * contains/startsWith/endsWith, variables with dotted names (a.b.c is the
 * variable "a.b.c", else field c of "a.b", else of a's field b, as in
 * cel-go), durations and timestamps (time.h), optional values
 * (optional.h), the strings extension (strext.h), Kubernetes' authorization
 * library (authz.h, decided by the caller's authorize callback), and
 * whatever the libraries of lib.h have (matches, the other Kubernetes
 * libraries). Not yet: protobuf messages (a message literal is an error),
 * the other extension libraries, names resolved through a container.
 *
 * Cost: the evaluation counts cel-go v0.22's actual cost
 * (interpreter/runtimecost.go) as it goes: 1 an identifier or select
 * chain and 1 each of its selects and indexes (but not for a chain a
 * conditional or an index reads, as cel-go resolves those), 0 a
 * constant, && || ?: and a comprehension itself, 10 30 40 a list, map,
 * message literal, and a function call what cel-go's default costs or
 * Kubernetes' library (cost.h's table, kube's CallCost) give for the
 * actual arguments (strings by characters, lists and maps by entries).
 * Past cost_limit evaluation stops with cel-go's error, "operation
 * cancelled: actual cost limit exceeded", which nothing absorbs. kube's
 * programs set both options below: with optimize a list or map literal of
 * constants, a conversion of a constant and `in` such a list of scalars
 * cost nothing, as cel-go folds them when it plans the program; with
 * free_presence_tests has() costs nothing.
 *
 * Bound: a step is charged for every node evaluated and every
 * comprehension iteration, and for every 64 of anything whose size is not
 * fixed: the bytes of each string or bytes argument of a function, the
 * items a list concatenation copies, the values and bytes an equality,
 * `in` or map lookup compares (sk_cel_work), the entries of the variable
 * cache scanned, the bytes of a zoneinfo file read (time.h), the items
 * optional.unwrap reads and the bytes and items the strings extension
 * makes (strext.h: charged before they are made), the work of a library
 * function (a regular expression's length and the memory compiling it
 * takes, 64 of its thread steps to search, the digits a quantity's
 * arithmetic writes). Past max_steps evaluation stops and the result is
 * the error "evaluation step limit exceeded (N steps)", which nothing
 * absorbs. Steps are the server's own bound, kept beside the cost
 * because cel-go charges some work far less than it is: a regular
 * expression's search costs the string's length / 10 times the pattern's
 * / 4, but a counted repetition is short to write and long to run
 * ('(a|b){1000}c' over 10,000 characters: cost 3,004, a million steps,
 * 0.16-0.26 s); a lookup in a big map costs 1 (cel-go's maps hash, these are
 * scanned). An evaluation's steps are at most SK_CEL_STEPS_PER_COST times
 * its cost limit, and callers give what is left of the same multiple of
 * their budget: room for the nodes cel-go does not charge (constants,
 * &&, a comprehension's own iteration), which ordinary rules take 1.2 to
 * 2 steps a unit of cost for (the literals kube folds are made once an
 * evaluation here too). So a rule kube admits is stopped by steps only
 * where cel-go's cost undercounts its work, and a request's rules take at
 * most 3 x 10,000,000 steps (build/, a nested loop: 10,000,000 of cost,
 * 13,346,335 steps, in 0.7-1.1 s).
 * With the parser's depth limit this bounds time, stack and memory for any
 * expression and input, but for converting the JSON object's variables,
 * which is linear in what the caller handed in. A million steps take some
 * 0.2-0.3 s (build/cel_eval, nested comprehensions); memory is bounded by
 * some 64 bytes a step beyond the variables (a million steps spent on
 * concatenating a 1 MB string: 65 MB resident, 0.08 s).
 */
#ifndef SK_CEL_EVAL_H
#define SK_CEL_EVAL_H

#include "cel/ast.h"
#include "cel/authz.h"
#include "cel/env.h"
#include "cel/value.h"
#include "core/arena.h"

#include <jansson.h>
#include <stdint.h>

#define SK_CEL_DEFAULT_MAX_STEPS 1000000
/* The steps callers allow for each unit of kube's cost (above). */
#define SK_CEL_STEPS_PER_COST 3

/* celconfig.PerCallLimit: the CostLimit of every program kube builds. */
#define SK_CEL_PER_CALL_LIMIT 1000000

/* Looks a variable up: its value (in a, or living longer), or NULL if the
 * name is not bound. */
typedef const sk_cel_val *(*sk_cel_resolve_fn)(void *ctx, sk_arena *a, const char *name);

typedef struct sk_cel_eval_options {
    /* Variables: the callback first, then the members of the JSON object
     * vars (borrowed; converted by sk_cel_from_json once an evaluation).
     * Either may be NULL. Unbound names that spell a type (int, list, ...)
     * are that type. */
    sk_cel_resolve_fn resolve;
    void *resolve_ctx;
    const json_t *vars;
    /* 0: SK_CEL_DEFAULT_MAX_STEPS, or SK_CEL_STEPS_PER_COST times
     * cost_limit when that is set (which also caps it). */
    uint64_t max_steps;
    /* cel-go's CostLimit; 0: none. */
    uint64_t cost_limit;
    /* cel-go's OptOptimize, which kube's programs have (0: not). */
    int optimize;
    /* interpreter.PresenceTestHasCost(false), which kube's programs have
     * (0: has() costs 1, cel-go's default). */
    int free_presence_tests;
    /* Dotted names the caller declares whole, NULL-terminated (NULL:
     * none): kube's admission "authorizer.requestResource" is one
     * variable to its checker, costing 1, where "variables.x" is a
     * variable and a field, 2. */
    const char *const *declared;
    /* Decides the authorization library's checks (cel/authz.h); NULL: a
     * check is an error. */
    sk_cel_authorize_fn authorize;
    void *authorize_ctx;
    /* Checks the format library's values (lib_format.h); NULL: a
     * validate() is an error. Every kube environment has the library,
     * so every kube caller sets it (policy/formats.h). */
    sk_cel_format_fn format_validate;
} sk_cel_eval_options;

/* What an evaluation spent: its steps and cel-go's actual cost (the
 * cost at the moment it stopped, when a limit stopped it). */
typedef struct sk_cel_usage {
    uint64_t steps, cost;
} sk_cel_usage;

/* The value of e (borrowed; from a parse without errors) under opt (NULL:
 * no variables, the default bound), in a; never NULL, possibly an error
 * value. *used (if not NULL) is set to what it spent. */
const sk_cel_val *sk_cel_eval(sk_arena *a, const sk_cel_expr *e, const sk_cel_eval_options *opt,
                              sk_cel_usage *used);

/* cel-go's error past the cost limit. */
#define SK_CEL_COST_EXCEEDED "operation cancelled: actual cost limit exceeded"

#endif
