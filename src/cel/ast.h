/*
 * ast.h - the parsed form of a CEL expression: cel-go's ast.Expr, as plain data.
 *
 * The cel layer is the Common Expression Language (issue 41): the lexer
 * (lex.c), the parser with its macros (parse.c, macro.c), the debug printer
 * (debug.c), runtime values (value.c), the type checker (check.c) and
 * the evaluator over this tree (eval.c). Everything is pure: no I/O, no globals,
 * all memory in the caller's sk_arena.
 *
 * Nodes are the shapes of cel.expr.Expr (constant, ident, select, call, list,
 * struct/map, comprehension), so a later checker and evaluator walk the same
 * tree cel-go's would, and the debug printer can be compared byte for byte
 * with cel-go's output. Unlike most of sqlkube the node struct is public: it
 * is read by every later stage of the layer, is immutable once sk_cel_parse
 * returns, and accessor functions for a dozen union members would only hide
 * the shape. Nodes are made only through the constructors below (parse.c and
 * macro.c), which copy nothing: strings and child pointers handed to them must
 * live in the same arena.
 *
 * Positions are those of cel-go: line 1-based, column 1-based in code points
 * (a tab is one column), of the token cel-go attaches the node to (an
 * operator, the '.' of a select, the '(' of a call, the '[' of a list or
 * index, the '{' of a map or message, a literal's first character).
 */
#ifndef SK_CEL_AST_H
#define SK_CEL_AST_H

#include "core/arena.h"

#include <stddef.h>
#include <stdint.h>

typedef enum sk_cel_kind {
    SK_CEL_CONST,
    SK_CEL_IDENT,
    SK_CEL_SELECT,
    SK_CEL_CALL,
    SK_CEL_LIST,
    SK_CEL_MAP,
    SK_CEL_STRUCT,
    SK_CEL_COMPREHENSION,
    /* Stands in for a part that produced an error; only in refused parses. */
    SK_CEL_ERROR_NODE,
} sk_cel_kind;

typedef enum sk_cel_const_kind {
    SK_CEL_NULL,
    SK_CEL_BOOL,
    SK_CEL_INT,
    SK_CEL_UINT,
    SK_CEL_DOUBLE,
    SK_CEL_STRING, /* UTF-8, may hold NUL: use len */
    SK_CEL_BYTES,
} sk_cel_const_kind;

typedef struct sk_cel_expr sk_cel_expr;

/* A map entry (key set) or a message field initializer (field set). */
typedef struct sk_cel_entry {
    int line, col;          /* the ':' */
    int optional;           /* ?key: / ?field: */
    const char *field;      /* message literals */
    const sk_cel_expr *key; /* map literals */
    const sk_cel_expr *value;
} sk_cel_entry;

struct sk_cel_expr {
    sk_cel_kind kind;
    int line, col;
    union {
        struct {
            sk_cel_const_kind kind;
            int b;
            int64_t i;
            uint64_t u;
            double d;
            const char *s; /* strings and bytes, NUL-terminated too */
            size_t len;
        } lit;
        const char *ident;
        struct {
            const sk_cel_expr *operand;
            const char *field;
            int test_only; /* has(operand.field) */
        } select;
        struct {
            const char *function;
            const sk_cel_expr *target; /* NULL for a global call */
            const sk_cel_expr *const *args;
            size_t nargs;
        } call;
        struct {
            const sk_cel_expr *const *elems;
            size_t n;
            const size_t *optional; /* indices of ?elem, ascending */
            size_t noptional;
        } list;
        struct {
            const char *message; /* SK_CEL_STRUCT: the type name as written */
            const sk_cel_entry *entries;
            size_t n;
        } obj;
        struct {
            const char *iter_var;
            /* the second variable of a two-variable comprehension (cel-go's
             * TwoVarComprehensions: a list's index and item, a map's key
             * and value), else NULL */
            const char *iter_var2;
            const sk_cel_expr *iter_range;
            const char *accu_var;
            const sk_cel_expr *accu_init;
            const sk_cel_expr *loop_cond;
            const sk_cel_expr *loop_step;
            const sk_cel_expr *result;
        } comp;
    } u;
};

/* Constructors: each returns a new node in a (never NULL: the arena aborts
 * on exhaustion), borrowing every pointer argument, which must outlive a. */
sk_cel_expr *sk_cel_new_const(sk_arena *a, sk_cel_const_kind kind, int line, int col);
sk_cel_expr *sk_cel_new_ident(sk_arena *a, const char *name, int line, int col);
sk_cel_expr *sk_cel_new_select(sk_arena *a, const sk_cel_expr *operand, const char *field,
                               int test_only, int line, int col);
/* args: an array of nargs in a. */
sk_cel_expr *sk_cel_new_call(sk_arena *a, const char *function, const sk_cel_expr *target,
                             const sk_cel_expr *const *args, size_t nargs, int line, int col);
/* A call with up to three arguments given inline (the operators). */
sk_cel_expr *sk_cel_new_call3(sk_arena *a, const char *function, const sk_cel_expr *a0,
                              const sk_cel_expr *a1, const sk_cel_expr *a2, int line, int col);
sk_cel_expr *sk_cel_new_list(sk_arena *a, const sk_cel_expr *const *elems, size_t n,
                             const size_t *optional, size_t noptional, int line, int col);
/* message NULL: a map literal; else a message literal of that type. */
sk_cel_expr *sk_cel_new_object(sk_arena *a, const char *message, const sk_cel_entry *entries,
                               size_t n, int line, int col);
sk_cel_expr *sk_cel_new_comprehension(sk_arena *a, const char *iter_var,
                                      const sk_cel_expr *iter_range, const char *accu_var,
                                      const sk_cel_expr *accu_init, const sk_cel_expr *loop_cond,
                                      const sk_cel_expr *loop_step, const sk_cel_expr *result,
                                      int line, int col);
sk_cel_expr *sk_cel_new_error_node(sk_arena *a, int line, int col);

/* Calls fn on each direct child of e (borrowed) in source order: a select's
 * operand; a call's target, then its arguments; a list's elements; each
 * entry's key, then its value; a comprehension's range, initial
 * accumulator, condition, step and result. Absent children are skipped.
 * Stops at the first non-zero fn returns and returns it, else 0. The walks
 * over a tree (the checker's validators, what a rule calls) use it, so the
 * shape of the tree is spelled once. */
int sk_cel_children(const sk_cel_expr *e, int (*fn)(void *ctx, const sk_cel_expr *child),
                    void *ctx);

#endif
