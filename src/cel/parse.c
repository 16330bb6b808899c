/*
 * parse.c - recursive descent over CEL's grammar (see parse.h).
 *
 * The grammar is cel-go's CEL.g4; each function below is one of its rules,
 * and builds what cel-go's visitor builds for it. Two counters stand in for
 * cel-go's two recursion guards: `nesting` counts the expr rules open at
 * once (the ANTLR listener's count; loops such as a.b.c or 1 + 2 + 3 do not
 * nest rules), and each result carries `depth`, the number of ternary,
 * relation, arithmetic, select, member call and index nodes on its deepest
 * path (the visitor's count, which a left-nested chain does grow).
 *
 * A syntax error or a limit ends the parse by longjmp to sk_cel_parse
 * (but for the one recovery of sync_operand),
 * cel-go's panic: every allocation is in the arena, so nothing leaks, and
 * no rule needs an error path of its own. Semantic errors are recorded and
 * the rule yields an SK_CEL_ERROR_NODE, so parsing goes on to find the
 * others, as cel-go's visitor does.
 */
#include "cel/parse.h"

#include "cel/macro.h"
#include "core/buf.h"
#include "core/utf8.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_DEPTH 250
#define MAX_CODE_POINTS 100000
/* cel-go stops reporting syntax errors (the lexer's among them) after 100. */
#define MAX_SYNTAX_ERRORS 100

static const char expecting_expr[] =
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
    "STRING, BYTES, IDENTIFIER}";

struct sk_cel_ast {
    const sk_cel_expr *expr;
    sk_cel_diag *errs;
    size_t nerr;
};

typedef struct parser {
    sk_arena *a;
    sk_cel_parse_options opt;
    const sk_cel_token *toks;
    size_t ntok, pos;
    sk_cel_diag *errs;
    size_t nerr, errcap;
    int nesting;
    int syntax_errors; /* the lexer's too */
    jmp_buf stop;
} parser;

/* A rule's result: the node and its depth in cel-go's visitor count. */
typedef struct res {
    const sk_cel_expr *e;
    int depth;
} res;

static res parse_expr(parser *p);

static const sk_cel_token *tok(const parser *p)
{
    return &p->toks[p->pos];
}

static sk_cel_tok peek(const parser *p, size_t ahead)
{
    size_t i = p->pos + ahead;
    return i < p->ntok ? p->toks[i].kind : SK_CEL_T_EOF;
}

static const sk_cel_token *next(parser *p)
{
    const sk_cel_token *t = tok(p);
    if (t->kind != SK_CEL_T_EOF)
        p->pos++;
    return t;
}

static void add_error(parser *p, int line, int col, const char *message)
{
    p->errs = sk_arena_grow(p->a, p->errs, p->nerr, &p->errcap, sizeof *p->errs);
    p->errs[p->nerr++] = (sk_cel_diag){line, col, message};
}

/* A semantic error at (line, col): recorded; the caller goes on. */
static res semantic_error(parser *p, int line, int col, const char *message)
{
    add_error(p, line, col, message);
    return (res){sk_cel_new_error_node(p->a, line, col), 0};
}

static __attribute__((noreturn)) void stop(parser *p)
{
    longjmp(p->stop, 1);
}

static __attribute__((noreturn)) void limit_error(parser *p, const char *message)
{
    add_error(p, -1, 0, message);
    stop(p);
}

/* ANTLR's words for what is wrong with token t. cel-go reports 100 syntax
 * errors at most, then gives up. */
static void add_syntax_error(parser *p, const sk_cel_token *t, const char *what,
                             const char *expecting)
{
    const char *text = t->kind == SK_CEL_T_EOF ? "<EOF>" : sk_arena_strndup(p->a, t->text, t->len);
    if (++p->syntax_errors > MAX_SYNTAX_ERRORS) {
        add_error(p, t->line, t->col,
                  sk_arena_printf(p->a, "More than %d syntax errors", MAX_SYNTAX_ERRORS));
        stop(p);
    }
    add_error(p, t->line, t->col,
              sk_arena_printf(p->a, "Syntax error: %s '%s' expecting %s", what, text, expecting));
}

/* A mismatched token at hand: the end of the parse. */
static __attribute__((noreturn)) void syntax_error(parser *p, const char *expecting)
{
    add_syntax_error(p, tok(p), "mismatched input", expecting);
    stop(p);
}

static const sk_cel_token *expect(parser *p, sk_cel_tok kind, const char *expecting)
{
    if (tok(p)->kind != kind)
        syntax_error(p, expecting);
    return next(p);
}

/* A node of the visitor's count: one deeper than its deepest child. */
static res counted(parser *p, const sk_cel_expr *e, int child_depth)
{
    if (child_depth + 1 > p->opt.max_recursion_depth)
        limit_error(p, "max recursion depth exceeded");
    return (res){e, child_depth + 1};
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static const char *tok_text(parser *p, const sk_cel_token *t)
{
    return sk_arena_strndup(p->a, t->text, t->len);
}

/* cel-go's globalCallOrMacro and receiverCallOrMacro. */
static res call_or_macro(parser *p, const char *function, const sk_cel_expr *target,
                         const sk_cel_expr *const *args, size_t nargs, int line, int col)
{
    sk_cel_macro_result m;
    if (!p->opt.disable_macros &&
        sk_cel_macro_expand(p->a, function, target, args, nargs,
                            (p->opt.enable_optional_macros ? SK_CEL_MACROS_OPTIONAL : 0) |
                                (p->opt.enable_two_var_macros ? SK_CEL_MACROS_TWO_VAR : 0),
                            line, col, &m)) {
        if (!m.expr)
            return semantic_error(p, m.error_at->line, m.error_at->col, m.error);
        return (res){m.expr, 0};
    }
    return (res){sk_cel_new_call(p->a, function, target, args, nargs, line, col), 0};
}

static res binary(parser *p, const char *function, const sk_cel_token *op, res l, res r)
{
    const sk_cel_expr **args = sk_arena_alloc(p->a, 2 * sizeof *args);
    args[0] = l.e;
    args[1] = r.e;
    res c = call_or_macro(p, function, NULL, args, 2, op->line, op->col);
    return c;
}

/* A growing array of pointers or entries in the arena. */
typedef struct vec {
    void *items;
    size_t n, cap, size;
} vec;

static void *vec_push(parser *p, vec *v)
{
    v->items = sk_arena_grow(p->a, v->items, v->n, &v->cap, v->size);
    return (char *)v->items + v->size * v->n++;
}

/* exprList: expr (',' expr)* up to ')', which it consumes. */
static const sk_cel_expr *const *parse_args(parser *p, size_t *nargs, int *depth)
{
    vec v = {NULL, 0, 0, sizeof(const sk_cel_expr *)};
    if (tok(p)->kind != SK_CEL_T_RPAREN) {
        for (;;) {
            res r = parse_expr(p);
            *(const sk_cel_expr **)vec_push(p, &v) = r.e;
            *depth = max_int(*depth, r.depth);
            if (tok(p)->kind != SK_CEL_T_COMMA)
                break;
            next(p);
        }
    }
    expect(p, SK_CEL_T_RPAREN, "')'");
    *nargs = v.n;
    return v.items;
}

static uint64_t digits_value(const char *s, size_t len, int base, int *overflow)
{
    uint64_t v = 0;
    *overflow = 0;
    for (size_t i = 0; i < len; i++) {
        int c = s[i], d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            *overflow = 1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    return v;
}

/* literal: sign? NUM_INT | NUM_UINT | sign? NUM_FLOAT | STRING | BYTES | true
 * | false | null; the token is at hand (after the sign, if any). */
static res parse_literal(parser *p, const sk_cel_token *sign)
{
    const sk_cel_token *t = next(p);
    int line = sign ? sign->line : t->line, col = sign ? sign->col : t->col;
    sk_cel_expr *e = NULL;
    int overflow = 0;
    if (t->kind == SK_CEL_T_INT || t->kind == SK_CEL_T_UINT) {
        int hex = t->len > 2 && t->text[1] == 'x';
        size_t len = t->len - (t->kind == SK_CEL_T_UINT) - (hex ? 2 : 0);
        uint64_t v = digits_value(t->text + (hex ? 2 : 0), len, hex ? 16 : 10, &overflow);
        if (t->kind == SK_CEL_T_UINT) {
            if (overflow)
                return semantic_error(p, line, col, "invalid uint literal");
            e = sk_cel_new_const(p->a, SK_CEL_UINT, line, col);
            e->u.lit.u = v;
        } else {
            if (overflow || v > (uint64_t)INT64_MAX + (sign ? 1 : 0))
                return semantic_error(p, line, col, "invalid int literal");
            e = sk_cel_new_const(p->a, SK_CEL_INT, line, col);
            e->u.lit.i = sign ? (int64_t)(0 - v) : (int64_t)v;
        }
    } else if (t->kind == SK_CEL_T_DOUBLE) {
        char *text = sk_arena_printf(p->a, "%s%.*s", sign ? "-" : "", (int)t->len, t->text);
        /* strtod's decimal point is '.': sqlkube never sets a locale. */
        double d = strtod(text, NULL);
        if (isinf(d))
            return semantic_error(p, line, col, "invalid double literal");
        e = sk_cel_new_const(p->a, SK_CEL_DOUBLE, line, col);
        e->u.lit.d = d;
    } else if (t->kind == SK_CEL_T_STRING || t->kind == SK_CEL_T_BYTES) {
        int bytes = t->kind == SK_CEL_T_BYTES;
        const char *s = NULL;
        size_t len = 0;
        const char *err =
            sk_cel_unquote(p->a, t->text + bytes, t->len - (size_t)bytes, bytes, &s, &len);
        if (err)
            return semantic_error(p, line, col, err);
        e = sk_cel_new_const(p->a, bytes ? SK_CEL_BYTES : SK_CEL_STRING, line, col);
        e->u.lit.s = s;
        e->u.lit.len = len;
    } else if (t->kind == SK_CEL_T_TRUE || t->kind == SK_CEL_T_FALSE) {
        e = sk_cel_new_const(p->a, SK_CEL_BOOL, line, col);
        e->u.lit.b = t->kind == SK_CEL_T_TRUE;
    } else {
        e = sk_cel_new_const(p->a, SK_CEL_NULL, line, col);
    }
    return (res){e, 0};
}

static int reserved(const char *id)
{
    static const char *const words[] = {
        "as",        "break", "const",  "continue", "else", "false", "for",
        "function",  "if",    "import", "in",       "let",  "loop",  "package",
        "namespace", "null",  "return", "true",     "var",  "void",  "while",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(words[i], id) == 0)
            return 1;
    return 0;
}

/* escapeIdent: IDENTIFIER or ESC_IDENTIFIER; *escaped_off when escapes are
 * not enabled (the caller reports it where cel-go does). */
static const char *parse_field_name(parser *p, int *escaped_off)
{
    const sk_cel_token *t = tok(p);
    *escaped_off = 0;
    if (t->kind == SK_CEL_T_IDENT) {
        next(p);
        return tok_text(p, t);
    }
    if (t->kind != SK_CEL_T_ESC_IDENT)
        syntax_error(p, "{IDENTIFIER, ESC_IDENTIFIER}");
    next(p);
    *escaped_off = !p->opt.enable_ident_escape;
    return sk_arena_strndup(p->a, t->text + 1, t->len - 2);
}

/* '[' (optExpr (',' optExpr)*)? ','? ']' */
static res parse_list(parser *p)
{
    const sk_cel_token *open = next(p);
    vec elems = {NULL, 0, 0, sizeof(const sk_cel_expr *)};
    vec optional = {NULL, 0, 0, sizeof(size_t)};
    int depth = 0;
    while (tok(p)->kind != SK_CEL_T_RBRACKET && tok(p)->kind != SK_CEL_T_COMMA) {
        const sk_cel_token *q = NULL;
        if (tok(p)->kind == SK_CEL_T_QUESTION)
            q = next(p);
        res r = parse_expr(p);
        depth = max_int(depth, r.depth);
        if (q && !p->opt.enable_optional_syntax)
            semantic_error(p, q->line, q->col, "unsupported syntax '?'");
        else if (q)
            *(size_t *)vec_push(p, &optional) = elems.n;
        *(const sk_cel_expr **)vec_push(p, &elems) = r.e;
        if (tok(p)->kind != SK_CEL_T_COMMA || peek(p, 1) == SK_CEL_T_RBRACKET)
            break;
        next(p);
    }
    if (tok(p)->kind == SK_CEL_T_COMMA)
        next(p);
    expect(p, SK_CEL_T_RBRACKET, "']'");
    return (res){sk_cel_new_list(p->a, elems.items, elems.n, optional.items, optional.n, open->line,
                                 open->col),
                 depth};
}

/* '{' entries? ','? '}' for a map (message NULL) or a message literal:
 * map entries are optExpr ':' expr, message fields ('?'? escapeIdent) ':'
 * expr. */
static res parse_object(parser *p, const char *message)
{
    const sk_cel_token *open = next(p);
    vec entries = {NULL, 0, 0, sizeof(sk_cel_entry)};
    int depth = 0;
    const sk_cel_token *first = tok(p);
    while (tok(p)->kind != SK_CEL_T_RBRACE && tok(p)->kind != SK_CEL_T_COMMA) {
        const sk_cel_token *q = NULL;
        if (tok(p)->kind == SK_CEL_T_QUESTION)
            q = next(p);
        sk_cel_entry entry = {0};
        int escaped_off = 0;
        if (message) {
            entry.field = parse_field_name(p, &escaped_off);
        } else {
            res k = parse_expr(p);
            entry.key = k.e;
            depth = max_int(depth, k.depth);
        }
        const sk_cel_token *colon = expect(p, SK_CEL_T_COLON, "':'");
        res v = parse_expr(p);
        depth = max_int(depth, v.depth);
        entry.line = colon->line;
        entry.col = colon->col;
        entry.optional = q != NULL;
        entry.value = v.e;
        if (q && !p->opt.enable_optional_syntax)
            semantic_error(p, q->line, q->col, "unsupported syntax '?'");
        else if (escaped_off) /* cel-go reports it at the start of the field list */
            semantic_error(p, first->line, first->col, "unsupported syntax: '`'");
        *(sk_cel_entry *)vec_push(p, &entries) = entry;
        if (tok(p)->kind != SK_CEL_T_COMMA || peek(p, 1) == SK_CEL_T_RBRACE)
            break;
        next(p);
    }
    if (tok(p)->kind == SK_CEL_T_COMMA)
        next(p);
    expect(p, SK_CEL_T_RBRACE, "'}'");
    return (res){sk_cel_new_object(p->a, message, entries.items, entries.n, open->line, open->col),
                 depth};
}

/* '.'? IDENTIFIER as an identifier, a global call or (IDENTIFIER ('.'
 * IDENTIFIER)* '{') a message literal's type. */
static res parse_name(parser *p)
{
    const sk_cel_token *start = tok(p);
    int dot = start->kind == SK_CEL_T_DOT;
    if (dot)
        next(p);
    if (tok(p)->kind != SK_CEL_T_IDENT)
        syntax_error(p, "IDENTIFIER");
    size_t k = 0;
    while (peek(p, k) == SK_CEL_T_IDENT && peek(p, k + 1) == SK_CEL_T_DOT &&
           peek(p, k + 2) == SK_CEL_T_IDENT)
        k += 2;
    if (peek(p, k) == SK_CEL_T_IDENT && peek(p, k + 1) == SK_CEL_T_LBRACE) {
        sk_buf name = SK_BUF_INIT;
        if (dot)
            sk_buf_putc(&name, '.');
        for (size_t i = 0; i <= k; i++) {
            const sk_cel_token *part = next(p);
            sk_buf_append(&name, part->text, part->len);
        }
        const char *message = sk_arena_strndup(p->a, name.data, name.len);
        sk_buf_free(&name);
        return parse_object(p, message);
    }
    const sk_cel_token *id = next(p);
    const char *text = tok_text(p, id);
    const char *name = dot ? sk_arena_printf(p->a, ".%s", text) : text;
    if (tok(p)->kind == SK_CEL_T_LPAREN) {
        const sk_cel_token *open = next(p);
        size_t nargs = 0, before = p->nerr;
        int depth = 0;
        const sk_cel_expr *const *args = parse_args(p, &nargs, &depth);
        if (reserved(text)) {
            p->nerr = before; /* cel-go does not look into the arguments */
            return semantic_error(p, start->line, start->col,
                                  sk_arena_printf(p->a, "reserved identifier: %s", text));
        }
        res c = call_or_macro(p, name, NULL, args, nargs, open->line, open->col);
        c.depth = depth;
        return c;
    }
    if (reserved(text))
        return semantic_error(p, start->line, start->col,
                              sk_arena_printf(p->a, "reserved identifier: %s", text));
    return (res){sk_cel_new_ident(p->a, name, id->line, id->col), 0};
}

static res parse_primary(parser *p)
{
    const sk_cel_token *t = tok(p);
    switch (t->kind) {
    case SK_CEL_T_DOT:
    case SK_CEL_T_IDENT:
        return parse_name(p);
    case SK_CEL_T_LPAREN: {
        next(p);
        res r = parse_expr(p);
        expect(p, SK_CEL_T_RPAREN, "')'");
        return r;
    }
    case SK_CEL_T_LBRACKET:
        return parse_list(p);
    case SK_CEL_T_LBRACE:
        return parse_object(p, NULL);
    case SK_CEL_T_MINUS:
        if (peek(p, 1) != SK_CEL_T_INT && peek(p, 1) != SK_CEL_T_DOUBLE)
            syntax_error(p, expecting_expr);
        next(p);
        return parse_literal(p, t);
    case SK_CEL_T_INT:
    case SK_CEL_T_UINT:
    case SK_CEL_T_DOUBLE:
    case SK_CEL_T_STRING:
    case SK_CEL_T_BYTES:
    case SK_CEL_T_TRUE:
    case SK_CEL_T_FALSE:
    case SK_CEL_T_NULL:
        return parse_literal(p, NULL);
    default:
        syntax_error(p, expecting_expr);
    }
}

/* member: primary ('.' '?'? escapeIdent | '.' IDENTIFIER '(' args ')' |
 * '[' '?'? expr ']')* */
static res parse_member(parser *p)
{
    res r = parse_primary(p);
    for (;;) {
        const sk_cel_token *op = tok(p);
        if (op->kind == SK_CEL_T_DOT) {
            next(p);
            const sk_cel_token *q = NULL;
            if (tok(p)->kind == SK_CEL_T_QUESTION)
                q = next(p);
            if (!q && tok(p)->kind == SK_CEL_T_IDENT && peek(p, 1) == SK_CEL_T_LPAREN) {
                const char *name = tok_text(p, next(p));
                const sk_cel_token *open = next(p);
                size_t nargs = 0;
                int depth = r.depth;
                const sk_cel_expr *const *args = parse_args(p, &nargs, &depth);
                res c = call_or_macro(p, name, r.e, args, nargs, open->line, open->col);
                r = counted(p, c.e, depth);
                continue;
            }
            const sk_cel_token *id = tok(p);
            int escaped_off = 0;
            const char *field = parse_field_name(p, &escaped_off);
            if (escaped_off)
                semantic_error(p, id->line, id->col, "unsupported syntax: '`'");
            if (q && !p->opt.enable_optional_syntax) {
                r = counted(p, semantic_error(p, op->line, op->col, "unsupported syntax '.?'").e,
                            r.depth);
            } else if (q) {
                sk_cel_expr *s = sk_cel_new_const(p->a, SK_CEL_STRING, id->line, id->col);
                s->u.lit.s = field;
                s->u.lit.len = strlen(field);
                r = counted(p, sk_cel_new_call3(p->a, "_?._", r.e, s, NULL, op->line, op->col),
                            r.depth);
            } else {
                r = counted(p, sk_cel_new_select(p->a, r.e, field, 0, op->line, op->col), r.depth);
            }
        } else if (op->kind == SK_CEL_T_LBRACKET) {
            next(p);
            const sk_cel_token *q = NULL;
            if (tok(p)->kind == SK_CEL_T_QUESTION)
                q = next(p);
            res index = parse_expr(p);
            expect(p, SK_CEL_T_RBRACKET, "']'");
            int depth = max_int(r.depth, index.depth);
            if (q && !p->opt.enable_optional_syntax)
                r = counted(p, semantic_error(p, op->line, op->col, "unsupported syntax '[?'").e,
                            depth);
            else
                r = counted(p, binary(p, q ? "_[?_]" : "_[_]", op, r, index).e, depth);
        } else {
            return r;
        }
    }
}

static int starts_operand(sk_cel_tok t)
{
    switch (t) {
    case SK_CEL_T_LBRACKET:
    case SK_CEL_T_LBRACE:
    case SK_CEL_T_LPAREN:
    case SK_CEL_T_DOT:
    case SK_CEL_T_MINUS:
    case SK_CEL_T_EXCLAM:
    case SK_CEL_T_TRUE:
    case SK_CEL_T_FALSE:
    case SK_CEL_T_NULL:
    case SK_CEL_T_DOUBLE:
    case SK_CEL_T_INT:
    case SK_CEL_T_UINT:
    case SK_CEL_T_STRING:
    case SK_CEL_T_BYTES:
    case SK_CEL_T_IDENT:
        return 1;
    default:
        return 0;
    }
}

/* ANTLR's one recovery that goes on parsing: where an operand is due, a
 * token that cannot start one but is followed by one that can is reported
 * as extraneous and skipped. Later errors, a limit's among them, are then
 * found as cel-go finds them. */
static void sync_operand(parser *p)
{
    const sk_cel_token *t = tok(p);
    if (starts_operand(t->kind) || t->kind == SK_CEL_T_EOF || !starts_operand(peek(p, 1)))
        return;
    add_syntax_error(p, t, "extraneous input", expecting_expr);
    next(p);
}

/* unary: member | '!'+ member | '-'+ member. A '-' before a number is the
 * number's sign (ANTLR prefers the literal); a run of them is taken whole,
 * and an even run cancels out, as in cel-go. */
static res parse_unary(parser *p)
{
    sync_operand(p);
    const sk_cel_token *op = tok(p);
    if ((op->kind != SK_CEL_T_EXCLAM && op->kind != SK_CEL_T_MINUS) ||
        (op->kind == SK_CEL_T_MINUS &&
         (peek(p, 1) == SK_CEL_T_INT || peek(p, 1) == SK_CEL_T_DOUBLE)))
        return parse_member(p);
    int n = 0;
    while (tok(p)->kind == op->kind) {
        next(p);
        n++;
    }
    res m = parse_member(p);
    if (n % 2 == 0)
        return m;
    const sk_cel_expr **args = sk_arena_alloc(p->a, sizeof *args);
    args[0] = m.e;
    res c = call_or_macro(p, op->kind == SK_CEL_T_EXCLAM ? "!_" : "-_", NULL, args, 1, op->line,
                          op->col);
    c.depth = m.depth;
    return c;
}

typedef struct binop {
    sk_cel_tok tok;
    const char *function;
} binop;

static const binop mul_ops[] = {{SK_CEL_T_STAR, "_*_"},
                                {SK_CEL_T_SLASH, "_/_"},
                                {SK_CEL_T_PERCENT, "_%_"},
                                {SK_CEL_T_EOF, NULL}};
static const binop add_ops[] = {
    {SK_CEL_T_PLUS, "_+_"}, {SK_CEL_T_MINUS, "_-_"}, {SK_CEL_T_EOF, NULL}};
static const binop rel_ops[] = {{SK_CEL_T_LT, "_<_"}, {SK_CEL_T_LE, "_<=_"}, {SK_CEL_T_GE, "_>=_"},
                                {SK_CEL_T_GT, "_>_"}, {SK_CEL_T_EQ, "_==_"}, {SK_CEL_T_NE, "_!=_"},
                                {SK_CEL_T_IN, "@in"}, {SK_CEL_T_EOF, NULL}};

static const char *find_op(const binop *ops, sk_cel_tok t)
{
    for (; ops->function; ops++)
        if (ops->tok == t)
            return ops->function;
    return NULL;
}

/* One left-associative level: operand (op operand)*. */
static res parse_level(parser *p, const binop *ops, res (*operand)(parser *))
{
    res l = operand(p);
    const char *function;
    while ((function = find_op(ops, tok(p)->kind)) != NULL) {
        const sk_cel_token *op = next(p);
        res r = operand(p);
        l = counted(p, binary(p, function, op, l, r).e, max_int(l.depth, r.depth));
    }
    return l;
}

static res parse_mul(parser *p)
{
    return parse_level(p, mul_ops, parse_unary);
}

static res parse_add(parser *p)
{
    return parse_level(p, add_ops, parse_mul);
}

static res parse_relation(parser *p)
{
    return parse_level(p, rel_ops, parse_add);
}

/* cel-go's balancing logic manager: terms t0..tn joined by ops o0..on-1
 * become a balanced tree, the middle operator at the root. */
static const sk_cel_expr *balance(parser *p, const char *function, const sk_cel_expr **terms,
                                  const sk_cel_token **ops, size_t lo, size_t hi)
{
    size_t mid = (lo + hi + 1) / 2;
    const sk_cel_expr *l = mid == lo ? terms[mid] : balance(p, function, terms, ops, lo, mid - 1);
    const sk_cel_expr *r =
        mid == hi ? terms[mid + 1] : balance(p, function, terms, ops, mid + 1, hi);
    return binary(p, function, ops[mid], (res){l, 0}, (res){r, 0}).e;
}

/* operand (op operand)* for || and &&: not a visitor-counted node. */
static res parse_logic(parser *p, sk_cel_tok optok, const char *function, res (*operand)(parser *))
{
    res first = operand(p);
    if (tok(p)->kind != optok)
        return first;
    vec terms = {NULL, 0, 0, sizeof(const sk_cel_expr *)};
    vec ops = {NULL, 0, 0, sizeof(const sk_cel_token *)};
    int depth = first.depth;
    *(const sk_cel_expr **)vec_push(p, &terms) = first.e;
    while (tok(p)->kind == optok) {
        *(const sk_cel_token **)vec_push(p, &ops) = next(p);
        res r = operand(p);
        depth = max_int(depth, r.depth);
        *(const sk_cel_expr **)vec_push(p, &terms) = r.e;
    }
    return (res){balance(p, function, terms.items, ops.items, 0, ops.n - 1), depth};
}

static res parse_and(parser *p)
{
    return parse_logic(p, SK_CEL_T_AND, "_&&_", parse_relation);
}

static res parse_or(parser *p)
{
    return parse_logic(p, SK_CEL_T_OR, "_||_", parse_and);
}

/* expr: conditionalOr ('?' conditionalOr ':' expr)? */
static res parse_expr(parser *p)
{
    if (++p->nesting > p->opt.max_recursion_depth)
        limit_error(p, sk_arena_printf(p->a, "expression recursion limit exceeded: %d",
                                       p->opt.max_recursion_depth));
    res r = parse_or(p);
    if (tok(p)->kind == SK_CEL_T_QUESTION) {
        const sk_cel_token *op = next(p);
        res t = parse_or(p);
        expect(p, SK_CEL_T_COLON, "':'");
        res f = parse_expr(p);
        int depth = max_int(r.depth, max_int(t.depth, f.depth));
        const sk_cel_expr **args = sk_arena_alloc(p->a, 3 * sizeof *args);
        args[0] = r.e;
        args[1] = t.e;
        args[2] = f.e;
        r = counted(p, call_or_macro(p, "_?_:_", NULL, args, 3, op->line, op->col).e, depth);
    }
    p->nesting--;
    return r;
}

static int before(const sk_cel_diag *a, const sk_cel_diag *b)
{
    return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* cel-go's order: by position, stably (a bottom-up merge sort; qsort is not
 * stable). */
static void sort_errors(sk_arena *a, sk_cel_diag *d, size_t n)
{
    sk_cel_diag *tmp = sk_arena_alloc(a, (n ? n : 1) * sizeof *tmp);
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid || j < hi)
                tmp[k++] = j >= hi || (i < mid && !before(&d[j], &d[i])) ? d[i++] : d[j++];
        }
        memcpy(d, tmp, n * sizeof *d);
    }
}

sk_cel_ast *sk_cel_parse(sk_arena *a, const char *src, size_t len, const sk_cel_parse_options *opt)
{
    sk_cel_ast *ast = sk_arena_alloc(a, sizeof *ast);
    parser *p = sk_arena_alloc(a, sizeof *p);
    p->a = a;
    if (opt)
        p->opt = *opt;
    if (p->opt.max_recursion_depth <= 0)
        p->opt.max_recursion_depth = DEFAULT_MAX_DEPTH;
    size_t points = 0;
    for (size_t i = 0; i < len; points++) {
        uint32_t cp;
        i += sk_utf8_decode(src + i, len - i, &cp);
    }
    if (points > MAX_CODE_POINTS) {
        add_error(p, -1, 0,
                  sk_arena_printf(a,
                                  "expression code point size exceeds limit: size: %zu, "
                                  "limit %d",
                                  points, MAX_CODE_POINTS));
        goto out;
    }
    sk_cel_lexed *lx = sk_cel_lex(a, src, len);
    for (size_t i = 0; i < sk_cel_lexed_error_count(lx) && i < MAX_SYNTAX_ERRORS; i++) {
        const sk_cel_diag *d = sk_cel_lexed_error(lx, i);
        add_error(p, d->line, d->col, d->message);
        p->syntax_errors++;
    }
    p->toks = sk_cel_lexed_token(lx, 0);
    p->ntok = sk_cel_lexed_count(lx);
    if (setjmp(p->stop) == 0) {
        res r = parse_expr(p);
        expect(p, SK_CEL_T_EOF, "<EOF>");
        if (p->nerr == 0)
            ast->expr = r.e;
    }
out:
    sort_errors(a, p->errs, p->nerr);
    ast->errs = p->errs;
    ast->nerr = p->nerr;
    return ast;
}

const sk_cel_expr *sk_cel_ast_expr(const sk_cel_ast *ast)
{
    return ast->expr;
}

size_t sk_cel_ast_error_count(const sk_cel_ast *ast)
{
    return ast->nerr;
}

const sk_cel_diag *sk_cel_ast_error(const sk_cel_ast *ast, size_t i)
{
    return &ast->errs[i];
}
