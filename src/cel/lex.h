/*
 * lex.h - CEL's tokens (cel-spec doc/langdef.md, cel-go's CEL.g4 lexer
 * rules) and the meaning of its string and bytes literals.
 *
 * The token rules are ANTLR's, longest match first: "1.e" is the int 1,
 * '.', the identifier e; "0X1" is 0 then X1; "r'a'" a raw string while "r"
 * alone is an identifier. Where no rule matches, the lexer does what ANTLR's
 * does, so error positions agree with cel-go: a "token recognition error"
 * at the token's start, naming the text up to and including the character
 * that could not continue it, which is skipped with it; lexing goes on
 * after it. The parser then sees the tokens that did lex.
 *
 * Escapes are checked twice, as in cel-go: their shape here (an unknown
 * escape, "\xF" short of a digit, a newline in a one-line string: the
 * literal does not lex), their value by sk_cel_unquote (a surrogate or
 * code point above U+10FFFF, \u in bytes).
 */
#ifndef SK_CEL_LEX_H
#define SK_CEL_LEX_H

#include "core/arena.h"

#include <stddef.h>

typedef enum sk_cel_tok {
    SK_CEL_T_EOF,
    SK_CEL_T_IDENT,
    SK_CEL_T_ESC_IDENT, /* `a-b` (field names only) */
    SK_CEL_T_INT,
    SK_CEL_T_UINT,
    SK_CEL_T_DOUBLE,
    SK_CEL_T_STRING,
    SK_CEL_T_BYTES,
    SK_CEL_T_TRUE,
    SK_CEL_T_FALSE,
    SK_CEL_T_NULL,
    SK_CEL_T_IN,
    SK_CEL_T_EQ,  /* == */
    SK_CEL_T_NE,  /* != */
    SK_CEL_T_LT,  /* < */
    SK_CEL_T_LE,  /* <= */
    SK_CEL_T_GE,  /* >= */
    SK_CEL_T_GT,  /* > */
    SK_CEL_T_AND, /* && */
    SK_CEL_T_OR,  /* || */
    SK_CEL_T_LBRACKET,
    SK_CEL_T_RBRACKET,
    SK_CEL_T_LBRACE,
    SK_CEL_T_RBRACE,
    SK_CEL_T_LPAREN,
    SK_CEL_T_RPAREN,
    SK_CEL_T_DOT,
    SK_CEL_T_COMMA,
    SK_CEL_T_MINUS,
    SK_CEL_T_EXCLAM,
    SK_CEL_T_QUESTION,
    SK_CEL_T_COLON,
    SK_CEL_T_PLUS,
    SK_CEL_T_STAR,
    SK_CEL_T_SLASH,
    SK_CEL_T_PERCENT,
} sk_cel_tok;

typedef struct sk_cel_token {
    sk_cel_tok kind;
    const char *text; /* into the source; not NUL-terminated */
    size_t len;
    int line, col; /* 1-based; col in code points */
} sk_cel_token;

/* One error: where (line -1, col 0 for the whole expression, as cel-go
 * prints a limit) and cel-go's words. */
typedef struct sk_cel_diag {
    int line, col;
    const char *message;
} sk_cel_diag;

/* The tokens of one source, opaque; lives in the arena it was made in. */
typedef struct sk_cel_lexed sk_cel_lexed;

/* Tokens of the len bytes at src (borrowed: tokens point into it, so it must
 * outlive a). Never NULL; errors are in the result. */
sk_cel_lexed *sk_cel_lex(sk_arena *a, const char *src, size_t len);
/* The tokens, the last one SK_CEL_T_EOF; borrowed from l. */
size_t sk_cel_lexed_count(const sk_cel_lexed *l);
const sk_cel_token *sk_cel_lexed_token(const sk_cel_lexed *l, size_t i);
size_t sk_cel_lexed_error_count(const sk_cel_lexed *l);
const sk_cel_diag *sk_cel_lexed_error(const sk_cel_lexed *l, size_t i);

/* The value of a STRING or BYTES token's text (bytes: without its b), in a:
 * *out (NUL-terminated too) and *out_len. On an invalid escape value returns
 * cel-go's message (static) and writes nothing; else NULL. */
const char *sk_cel_unquote(sk_arena *a, const char *text, size_t len, int is_bytes,
                           const char **out, size_t *out_len);

#endif
