/*
 * compile.h - an expression as Kubernetes compiles it before storing it:
 * parsed with the syntax kube's CEL environment enables (optional values
 * on), its references to variables checked against the variables the
 * expression may use, and any error worded as kube quotes cel-go's
 * (Issues.String(): "ERROR: <input>:1:5: ..." with the source line and a
 * caret under the column).
 *
 * The server no longer compiles with it: admission expressions go
 * through cel/admission.h and CRD rules through cel/check.h, both type
 * checked; it stays as the parser's checker-free compile for the parsing
 * suite (tests/cel/cel_parse.c) and its fuzz target. Here what
 * only types would refuse (a non-bool condition, a function with no
 * overload for its arguments) passes and is an error value when
 * evaluated. What is checked is what needs no types: syntax, macros, and that every free identifier
 * names a declared variable, a type (int, string, net.IP, ...) or a variable bound by a
 * comprehension around it (a namespaced function's namespace, as in
 * sets.contains or optional.of, is no reference) ("undeclared reference to 'x' (in container
 * '')", at each use, as cel-go's checker reports it), and that no message
 * literal is written (kube's environment declares no message type).
 * Function names are not checked: a call of an unknown function is an
 * error when evaluated.
 */
#ifndef SK_CEL_COMPILE_H
#define SK_CEL_COMPILE_H

#include "cel/ast.h"
#include "cel/lex.h"
#include "cel/parse.h"
#include "core/arena.h"
#include "core/buf.h"

#include <stddef.h>

/*
 * Compiles the len bytes at src (borrowed; must outlive a) where the
 * variables named in variables (a NULL-ended array, borrowed) are
 * declared, parsed with opt (NULL: kube's syntax, optional values on).
 * Returns the tree (in a), or NULL with the errors appended to errors in
 * cel-go's display form (cel/issues.h), "\n" between them.
 */
const sk_cel_expr *sk_cel_compile(sk_arena *a, const char *src, size_t len,
                                  const char *const *variables, const sk_cel_parse_options *opt,
                                  sk_buf *errors);

/* 1 if e, an identifier or a chain of selects on one (scratch in a),
 * spells a type's name: int, google.protobuf.Duration, net.IP. */
int sk_cel_names_type(sk_arena *a, const sk_cel_expr *e);

#endif
