/*
 * parse.h - CEL source text to its expression tree (cel-spec doc/langdef.md;
 * cel-go's parser is the reference, and the trees it made for the cel-spec
 * package's tests the oracle: see tests/cel/parse_test.py).
 *
 * Precedence, lowest first: ?: (right), ||, &&, relations (< <= >= > == !=
 * in), + -, * / %, unary ! -, then member access (.f, .f(args), [i]).
 * Chains of || and && become balanced trees as in cel-go, so their depth is
 * logarithmic. Macros are expanded as they are parsed (macro.h).
 *
 * Errors: cel-go's, at cel-go's positions. The parser stops at the first
 * syntax error (ANTLR would recover and report more; the first one, which
 * is what a user fixes first, is at the same place) but for ANTLR's
 * single-token deletion where an operand is due ("1 + / 2"), and collects
 * every semantic error before it (a reserved identifier, a bad literal, a
 * malformed macro call). Two limits bound the work, both cel-go's, both
 * reported at line -1: the nesting of expressions (parentheses, lists,
 * arguments: "expression recursion limit exceeded") and the depth of the
 * operator and member nodes ("max recursion depth exceeded"); and the
 * source is at most 100,000 code points.
 */
#ifndef SK_CEL_PARSE_H
#define SK_CEL_PARSE_H

#include "cel/ast.h"
#include "cel/lex.h"
#include "core/arena.h"

#include <stddef.h>

typedef struct sk_cel_parse_options {
    /* Both recursion limits; 0 is cel-go's default, 250. The parser's stack
     * grows with it (some ten frames an expression). */
    int max_recursion_depth;
    /* The optional syntax: a.?f, a[?i], [?e], {?k: v}, Msg{?f: v}. Off, as
     * in cel-go's parser by default: "unsupported syntax '.?'". */
    int enable_optional_syntax;
    /* Backquoted field names, a.`b-c` and Msg{`b-c`: v}. Off: "unsupported
     * syntax: '`'". */
    int enable_ident_escape;
    /* Calls named like macros stay calls. */
    int disable_macros;
    /* The optional library's macros, m.optMap(v, e) and m.optFlatMap(v,
     * e) (macro.h). Off, as in cel-go's parser without that library;
     * Kubernetes has them, and the optional syntax, always. */
    int enable_optional_macros;
    /* The two-variable comprehensions (cel-go's TwoVarComprehensions,
     * macro.h): m.all(k, v, p), exists, existsOne/exists_one,
     * transformList, transformMap, transformMapEntry. Off, as in cel-go's
     * parser without that library; Kubernetes 1.32 has them. */
    int enable_two_var_macros;
} sk_cel_parse_options;

/* One parse: its tree or its errors. Opaque; lives in the arena. */
typedef struct sk_cel_ast sk_cel_ast;

/* Parses the len bytes at src (borrowed; must outlive a) with opt (NULL:
 * all defaults). Never NULL. */
sk_cel_ast *sk_cel_parse(sk_arena *a, const char *src, size_t len, const sk_cel_parse_options *opt);
/* The tree, borrowed from the ast; NULL when there are errors. */
const sk_cel_expr *sk_cel_ast_expr(const sk_cel_ast *ast);
/* The errors, sorted by position (line -1 first) as cel-go prints them. */
size_t sk_cel_ast_error_count(const sk_cel_ast *ast);
const sk_cel_diag *sk_cel_ast_error(const sk_cel_ast *ast, size_t i);

#endif
