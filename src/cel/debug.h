/*
 * debug.h - cel-go's adorned debug string of an expression tree
 * (common/debug/debug.go with its kind adorner: each node followed by
 * ^#*expr.Expr_IdentExpr# and the like), the form cel-go's parser tests and
 * the cel-spec package's parsing tests state their expected trees in. It is
 * how tests compare our trees with cel-go's, byte for byte.
 */
#ifndef SK_CEL_DEBUG_H
#define SK_CEL_DEBUG_H

#include "cel/ast.h"
#include "core/buf.h"

/* Appends e's debug string to b. */
void sk_cel_debug_string(sk_buf *b, const sk_cel_expr *e);

#endif
