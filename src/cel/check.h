/*
 * check.h - cel-go's type checker (checker/checker.go, types.go at v0.22,
 * the version Kubernetes 1.32 builds with) over a parsed expression: a type
 * for every node, given the variables' types, with cel-go's standard
 * overloads and those of the libraries Kubernetes' CEL environment adds
 * (optional types, the strings extension v2, sets, two-variable
 * comprehensions, and k8s.io/apiserver's url, regex, lists, quantity, ip,
 * cidr, format and authz libraries), and cel-go's error texts ("found no
 * matching overload for '_+_' applied to '(int, string)'", "undefined field
 * 'x'", "undeclared reference to 'f' (in container '')", ...).
 *
 * The caller gives the variables' types (cel/types.h), object types
 * carrying a pointer of its own that the field callback reads, so a
 * schema's types are made only as far as an expression walks into them.
 *
 * The AST validators cel-go's environment runs after a check without
 * errors are here too (env options: homogeneous literals, duration,
 * timestamp and regex literals); the result type an expression must have
 * is the caller's to check.
 */
#ifndef SK_CEL_CHECK_H
#define SK_CEL_CHECK_H

#include "cel/ast.h"
#include "cel/parse.h"
#include "cel/types.h"
#include "core/arena.h"
#include "core/buf.h"

#include <stddef.h>

/* The type of field name of object (an OBJECT type), made in a, or NULL if
 * the object has no such field. */
typedef const sk_cel_ty *(*sk_cel_check_field_fn)(void *ctx, sk_arena *a, const sk_cel_ty *object,
                                                  const char *name);

typedef struct sk_cel_check_var {
    const char *name;
    const sk_cel_ty *type;
} sk_cel_check_var;

typedef struct sk_cel_check_env {
    const sk_cel_check_var *vars; /* borrowed */
    size_t nvars;
    sk_cel_check_field_fn field; /* NULL: objects have no fields */
    void *field_ctx;
    /* cel.CrossTypeNumericComparisons: 1 < 1.0 type-checks (Kubernetes
     * sets it; cel-go's default, and the cel-spec checking tests, do not) */
    int cross_type_numeric;
    /* cel.ValidateHomogeneousAggregateLiterals: a list's elements, a map's
     * keys and values each of one type (Kubernetes sets it) */
    int homogeneous_literals;
    /* cel.ValidateDurationLiterals, ValidateTimestampLiterals and
     * ValidateRegexLiterals: duration() and timestamp() of a literal must
     * evaluate, a literal matches() pattern (the first argument) must
     * compile (Kubernetes sets them) */
    int literal_validators;
} sk_cel_check_env;

typedef struct sk_cel_checked sk_cel_checked;

/*
 * Checks e (borrowed; from a parse without errors) under env: the checked
 * expression in a, or NULL with cel-go's errors appended to errors in the
 * display form of cel/issues.h (src, len: the source e was parsed from).
 */
sk_cel_checked *sk_cel_check(sk_arena *a, const sk_cel_expr *e, const char *src, size_t len,
                             const sk_cel_check_env *env, sk_buf *errors);

/* The expression checked (borrowed from the caller). */
const sk_cel_expr *sk_cel_checked_expr(const sk_cel_checked *c);

/* The type of the whole expression, and of node n of it (NULL for a node
 * not in it). Type parameters left free are dyn, as cel-go leaves them. */
const sk_cel_ty *sk_cel_checked_type(const sk_cel_checked *c);
const sk_cel_ty *sk_cel_checked_node_type(const sk_cel_checked *c, const sk_cel_expr *n);

/* The overloads call node n resolved to (cel-go's reference map; several
 * when more than one matched), *n set to their count; NULL for others. */
struct sk_cel_overload;
const struct sk_cel_overload *const *sk_cel_checked_overloads(const sk_cel_checked *c,
                                                              const sk_cel_expr *n, size_t *count);

/* containers.ToQualifiedName: "a.b.c" for a chain of selects (not has())
 * on an identifier, in a, else NULL. A select whose name resolves (a type,
 * net.CIDR) is checked as that one name: its operands get no type. */
const char *sk_cel_qualified_name(sk_arena *a, const sk_cel_expr *e);

/* 1 if the checked expression refers to the variable name. */
int sk_cel_checked_uses(const sk_cel_checked *c, const char *name);

#endif
