/*
 * macro.h - CEL's standard macros, expanded at parse time as cel-go's
 * parser/macro.go expands them (cel-go's AllMacros).
 *
 * has(m.f) becomes a test-only select; m.all(v, p), m.exists(v, p),
 * m.exists_one(v, p) (also spelled existsOne), m.map(v, f), m.map(v, p, f)
 * and m.filter(v, p) become comprehensions whose accumulator is "@result"
 * (cel-go's hidden accumulator name, which no source identifier can spell).
 * m.optMap(v, e) and m.optFlatMap(v, e) become
 * m.hasValue() ? optional.of(e with v = m.value()) : optional.none()
 * (optFlatMap: e itself), as cel-go's optional library has them, when
 * the caller asks for that library's macros. With cel-go's
 * TwoVarComprehensions (when asked for): m.all(k, v, p), m.exists(k, v,
 * p), m.existsOne(k, v, p) (also exists_one), m.transformList(i, v, [f,]
 * e), m.transformMap(k, v, [f,] e) and m.transformMapEntry(k, v, [f,] e),
 * comprehensions with a second variable (a list's item, a map's value),
 * the map ones inserting with cel.@mapInsert as cel-go's expansion does.
 * The trees are node for node cel-go's, so the debug strings agree and a
 * later evaluator needs no macro of its own.
 */
#ifndef SK_CEL_MACRO_H
#define SK_CEL_MACRO_H

#include "cel/ast.h"
#include "core/arena.h"

#include <stddef.h>

/* What a matched macro gave: its expansion, or (expr NULL) cel-go's message
 * for malformed arguments and the node to report it at. */
typedef struct sk_cel_macro_result {
    const sk_cel_expr *expr;
    const char *error;
    const sk_cel_expr *error_at;
} sk_cel_macro_result;

/* The libraries whose macros a parse has besides the standard ones. */
#define SK_CEL_MACROS_OPTIONAL 1u /* optMap, optFlatMap */
#define SK_CEL_MACROS_TWO_VAR 2u  /* the two-variable comprehensions */

/* If the call function(args) on target (NULL for a global call) is a
 * macro (of the libraries in the SK_CEL_MACROS_* bits of libs too), fills
 * *res and returns 1; else returns 0 and leaves *res alone.
 * line and col (the call's) place the new nodes. Nodes in a; arguments are
 * borrowed into the expansion. */
int sk_cel_macro_expand(sk_arena *a, const char *function, const sk_cel_expr *target,
                        const sk_cel_expr *const *args, size_t nargs, unsigned libs, int line,
                        int col, sk_cel_macro_result *res);

#endif
