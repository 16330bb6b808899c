/*
 * lex.c - CEL's tokens and literal values (see lex.h).
 *
 * Each scanner below answers, for the text at a token's start, either the
 * end of the longest token there or the index of the character that could
 * not continue it (the source's length at the end of input): ANTLR's error
 * recovery then skips through that character. Positions are counted once,
 * as the lexer advances, so every token carries its line and code point
 * column and nothing is rescanned for an error's position.
 */
#include "cel/lex.h"

#include "core/buf.h"
#include "core/utf8.h"
#include "core/util.h"

#include <stdint.h>
#include <string.h>

struct sk_cel_lexed {
    sk_cel_token *toks;
    size_t n, cap;
    sk_cel_diag *errs;
    size_t nerr, errcap;
};

typedef struct lexer {
    sk_arena *a;
    const char *s;
    size_t len;
    size_t i; /* next byte */
    int line, col;
    sk_cel_lexed *out;
} lexer;

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_hex(int c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident_char(int c)
{
    return is_ident_start(c) || is_digit(c);
}

/* The byte at i, or -1 past the end. */
static int at(const lexer *lx, size_t i)
{
    return i < lx->len ? (unsigned char)lx->s[i] : -1;
}

static size_t char_len(const lexer *lx, size_t i)
{
    uint32_t cp;
    return sk_utf8_decode(lx->s + i, lx->len - i, &cp);
}

/* Moves to byte `to`, a character boundary, counting lines and columns. */
static void advance_to(lexer *lx, size_t to)
{
    while (lx->i < to) {
        if (lx->s[lx->i] == '\n') {
            lx->line++;
            lx->col = 1;
        } else {
            lx->col++;
        }
        lx->i += char_len(lx, lx->i);
    }
}

static void push_token(lexer *lx, sk_cel_tok kind, size_t end)
{
    sk_cel_lexed *o = lx->out;
    o->toks = sk_arena_grow(lx->a, o->toks, o->n, &o->cap, sizeof *o->toks);
    sk_cel_token *t = &o->toks[o->n++];
    t->kind = kind;
    t->text = lx->s + lx->i;
    t->len = end - lx->i;
    t->line = lx->line;
    t->col = lx->col;
    advance_to(lx, end);
}

static void push_error(lexer *lx, const char *message)
{
    sk_cel_lexed *o = lx->out;
    o->errs = sk_arena_grow(lx->a, o->errs, o->nerr, &o->errcap, sizeof *o->errs);
    o->errs[o->nerr++] = (sk_cel_diag){lx->line, lx->col, message};
}

/* ANTLR's "token recognition error": the text from the token's start
 * through the character at fail (ANTLR writes \n \r \t escaped), all of
 * which is skipped. */
static void recognition_error(lexer *lx, size_t fail)
{
    size_t end = fail < lx->len ? fail + char_len(lx, fail) : lx->len;
    sk_buf m = SK_BUF_INIT;
    sk_buf_puts(&m, "Syntax error: token recognition error at: '");
    for (size_t k = lx->i; k < end; k++) {
        char c = lx->s[k];
        if (c == '\n')
            sk_buf_puts(&m, "\\n");
        else if (c == '\r')
            sk_buf_puts(&m, "\\r");
        else if (c == '\t')
            sk_buf_puts(&m, "\\t");
        else
            sk_buf_putc(&m, c);
    }
    sk_buf_putc(&m, '\'');
    push_error(lx, sk_arena_strndup(lx->a, m.data, m.len));
    sk_buf_free(&m);
    advance_to(lx, end);
}

/* An escape sequence's shape (CEL.g4's ESC_SEQ) at j, a backslash: its end,
 * or 0 with *fail at the character that breaks it. */
static size_t scan_escape(const lexer *lx, size_t j, size_t *fail)
{
    int c = at(lx, j + 1);
    int digits = 0;
    size_t k = j + 2;
    if (c > 0 && strchr("abfnrtv\"'\\?`", c))
        return j + 2;
    if (c >= '0' && c <= '3') {
        for (; k < j + 4; k++) {
            if (at(lx, k) < '0' || at(lx, k) > '7') {
                *fail = k;
                return 0;
            }
        }
        return k;
    }
    if (c == 'x' || c == 'X')
        digits = 2;
    else if (c == 'u')
        digits = 4;
    else if (c == 'U')
        digits = 8;
    if (!digits) {
        *fail = j + 1 < lx->len ? j + 1 : lx->len;
        return 0;
    }
    for (; k < j + 2 + (size_t)digits; k++) {
        if (!is_hex(at(lx, k))) {
            *fail = k < lx->len ? k : lx->len;
            return 0;
        }
    }
    return k;
}

/* A quoted literal's body from the quote at q: its end, or 0 with *fail.
 * Triple quotes span lines; the others stop at a line break. Raw bodies
 * have no escapes. */
static size_t scan_quoted(const lexer *lx, size_t q, int raw, size_t *fail)
{
    int quote = at(lx, q);
    int triple = at(lx, q + 1) == quote && at(lx, q + 2) == quote;
    size_t j = q + (triple ? 3 : 1);
    for (;;) {
        int c = at(lx, j);
        if (c < 0) {
            *fail = lx->len;
            return 0;
        }
        if (triple && c == quote && at(lx, j + 1) == quote && at(lx, j + 2) == quote)
            return j + 3;
        if (!triple && c == quote)
            return j + 1;
        if (!triple && (c == '\n' || c == '\r')) {
            *fail = j;
            return 0;
        }
        if (c == '\\' && !raw) {
            j = scan_escape(lx, j, fail);
            if (!j)
                return 0;
            continue;
        }
        j += char_len(lx, j);
    }
}

/* A string or bytes literal whose quote is at q: its end, or 0 with *fail.
 * An unterminated triple quote falls back, as ANTLR's longest match does,
 * to the empty literal of its first two quotes. */
static size_t scan_literal(const lexer *lx, size_t q, int raw, size_t *fail)
{
    size_t end = scan_quoted(lx, q, raw, fail);
    int quote = at(lx, q);
    if (!end && at(lx, q + 1) == quote && at(lx, q + 2) == quote)
        return q + 2;
    return end;
}

/* A number at lx->i (a digit, or '.' before a digit): its kind and end. */
static sk_cel_tok scan_number(const lexer *lx, size_t *end)
{
    size_t j = lx->i;
    sk_cel_tok kind = SK_CEL_T_INT;
    if (at(lx, j) == '0' && at(lx, j + 1) == 'x' && is_hex(at(lx, j + 2))) {
        for (j += 2; is_hex(at(lx, j)); j++)
            ;
    } else {
        while (is_digit(at(lx, j)))
            j++;
        if (at(lx, j) == '.' && is_digit(at(lx, j + 1))) {
            kind = SK_CEL_T_DOUBLE;
            for (j++; is_digit(at(lx, j)); j++)
                ;
        }
        if (at(lx, j) == 'e' || at(lx, j) == 'E') {
            size_t k = j + 1;
            if (at(lx, k) == '+' || at(lx, k) == '-')
                k++;
            if (is_digit(at(lx, k))) {
                kind = SK_CEL_T_DOUBLE;
                for (j = k; is_digit(at(lx, j)); j++)
                    ;
            }
        }
    }
    if (kind == SK_CEL_T_INT && (at(lx, j) == 'u' || at(lx, j) == 'U')) {
        kind = SK_CEL_T_UINT;
        j++;
    }
    *end = j;
    return kind;
}

static void lex_ident(lexer *lx)
{
    static const struct {
        const char *word;
        sk_cel_tok kind;
    } keywords[] = {{"true", SK_CEL_T_TRUE},
                    {"false", SK_CEL_T_FALSE},
                    {"null", SK_CEL_T_NULL},
                    {"in", SK_CEL_T_IN}};
    size_t j = lx->i, fail = 0, end = 0;
    int c0 = at(lx, j), c1 = at(lx, j + 1), c2 = at(lx, j + 2);
    int q1 = c1 == '"' || c1 == '\'', q2 = c2 == '"' || c2 == '\'';
    sk_cel_tok kind = SK_CEL_T_STRING;
    /* r"..", b"..", br".." (any case); else the letters are an identifier. */
    if ((c0 == 'r' || c0 == 'R') && q1) {
        end = scan_literal(lx, j + 1, 1, &fail);
    } else if ((c0 == 'b' || c0 == 'B') && q1) {
        end = scan_literal(lx, j + 1, 0, &fail);
        kind = SK_CEL_T_BYTES;
    } else if ((c0 == 'b' || c0 == 'B') && (c1 == 'r' || c1 == 'R') && q2) {
        end = scan_literal(lx, j + 2, 1, &fail);
        kind = SK_CEL_T_BYTES;
    }
    if (end) {
        push_token(lx, kind, end);
        return;
    }
    while (is_ident_char(at(lx, j)))
        j++;
    kind = SK_CEL_T_IDENT;
    for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
        if (strlen(keywords[k].word) == j - lx->i &&
            memcmp(keywords[k].word, lx->s + lx->i, j - lx->i) == 0)
            kind = keywords[k].kind;
    push_token(lx, kind, j);
}

/* `field name`: letters, digits and _ . - / and space, at least one. */
static void lex_escaped_ident(lexer *lx)
{
    size_t j = lx->i + 1;
    int c;
    while ((c = at(lx, j)) > 0 && (is_ident_char(c) || strchr("./- ", c)))
        j++;
    if (j > lx->i + 1 && at(lx, j) == '`')
        push_token(lx, SK_CEL_T_ESC_IDENT, j + 1);
    else
        recognition_error(lx, j);
}

/* Operators of one or two characters. */
static void lex_operator(lexer *lx)
{
    static const struct {
        const char *text;
        sk_cel_tok kind;
    } ops[] = {
        {"==", SK_CEL_T_EQ},      {"!=", SK_CEL_T_NE},    {"<=", SK_CEL_T_LE},
        {">=", SK_CEL_T_GE},      {"&&", SK_CEL_T_AND},   {"||", SK_CEL_T_OR},
        {"<", SK_CEL_T_LT},       {">", SK_CEL_T_GT},     {"[", SK_CEL_T_LBRACKET},
        {"]", SK_CEL_T_RBRACKET}, {"{", SK_CEL_T_LBRACE}, {"}", SK_CEL_T_RBRACE},
        {"(", SK_CEL_T_LPAREN},   {")", SK_CEL_T_RPAREN}, {".", SK_CEL_T_DOT},
        {",", SK_CEL_T_COMMA},    {"-", SK_CEL_T_MINUS},  {"!", SK_CEL_T_EXCLAM},
        {"?", SK_CEL_T_QUESTION}, {":", SK_CEL_T_COLON},  {"+", SK_CEL_T_PLUS},
        {"*", SK_CEL_T_STAR},     {"/", SK_CEL_T_SLASH},  {"%", SK_CEL_T_PERCENT},
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t n = strlen(ops[k].text);
        if (lx->i + n <= lx->len && memcmp(lx->s + lx->i, ops[k].text, n) == 0) {
            push_token(lx, ops[k].kind, lx->i + n);
            return;
        }
    }
    /* '=', '&', '|' alone are the start of nothing: the next character fails. */
    int c = at(lx, lx->i);
    recognition_error(lx, c == '=' || c == '&' || c == '|' ? lx->i + 1 : lx->i);
}

sk_cel_lexed *sk_cel_lex(sk_arena *a, const char *src, size_t len)
{
    sk_cel_lexed *out = sk_arena_alloc(a, sizeof *out);
    lexer lx = {a, src, len, 0, 1, 1, out};
    while (lx.i < len) {
        int c = at(&lx, lx.i);
        size_t end = 0, fail = 0;
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
            advance_to(&lx, lx.i + 1);
        } else if (c == '/' && at(&lx, lx.i + 1) == '/') {
            for (end = lx.i; end < len && src[end] != '\n'; end++)
                ;
            advance_to(&lx, end);
        } else if (is_digit(c) || (c == '.' && is_digit(at(&lx, lx.i + 1)))) {
            sk_cel_tok kind = scan_number(&lx, &end);
            push_token(&lx, kind, end);
        } else if (is_ident_start(c)) {
            lex_ident(&lx);
        } else if (c == '"' || c == '\'') {
            end = scan_literal(&lx, lx.i, 0, &fail);
            if (end)
                push_token(&lx, SK_CEL_T_STRING, end);
            else
                recognition_error(&lx, fail);
        } else if (c == '`') {
            lex_escaped_ident(&lx);
        } else {
            lex_operator(&lx);
        }
    }
    push_token(&lx, SK_CEL_T_EOF, len);
    return out;
}

size_t sk_cel_lexed_count(const sk_cel_lexed *l)
{
    return l->n;
}

const sk_cel_token *sk_cel_lexed_token(const sk_cel_lexed *l, size_t i)
{
    return &l->toks[i];
}

size_t sk_cel_lexed_error_count(const sk_cel_lexed *l)
{
    return l->nerr;
}

const sk_cel_diag *sk_cel_lexed_error(const sk_cel_lexed *l, size_t i)
{
    return &l->errs[i];
}

const char *sk_cel_unquote(sk_arena *a, const char *text, size_t len, int is_bytes,
                           const char **out, size_t *out_len)
{
    static const char letters[] = "abfnrtv\\'\"`?", values[] = "\a\b\f\n\r\t\v\\'\"`?";
    const char *err = NULL;
    int raw = len > 0 && (text[0] == 'r' || text[0] == 'R');
    if (raw) {
        text++;
        len--;
    }
    size_t quotes = len >= 6 && text[1] == text[0] && text[2] == text[0] ? 3 : 1;
    const char *s = text + quotes, *e = text + len - quotes;
    sk_buf b = SK_BUF_INIT;
    sk_buf_reserve(&b, (size_t)(e - s) + 1);
    while (s < e) {
        uint32_t cp;
        char u8[4];
        /* cel-go reads \r\n and a lone \r in a literal as \n. */
        if (*s == '\r') {
            sk_buf_putc(&b, '\n');
            s += s + 1 < e && s[1] == '\n' ? 2 : 1;
            continue;
        }
        if (*s != '\\' || raw) {
            /* Decoded and encoded again: an invalid byte is U+FFFD, as in cel-go,
             * which reads its source as runes. */
            s += sk_utf8_decode(s, (size_t)(e - s), &cp);
            sk_buf_append(&b, u8, sk_utf8_encode(cp, u8));
            continue;
        }
        /* The lexer checked the escape's shape; its value is checked here. */
        int c = s[1], digits = 0;
        const char *simple = strchr(letters, c);
        if (c && simple) {
            sk_buf_putc(&b, values[simple - letters]);
            s += 2;
            continue;
        }
        if (c >= '0' && c <= '3') {
            cp = (uint32_t)((c - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 4;
        } else {
            digits = c == 'u' ? 4 : c == 'U' ? 8 : 2;
            if (is_bytes && digits > 2) {
                err = "unable to unescape string";
                goto out;
            }
            cp = 0;
            for (int k = 0; k < digits; k++)
                cp = cp << 4 | (uint32_t)sk_hex_value(s[2 + k]);
            s += 2 + digits;
        }
        if (is_bytes) {
            sk_buf_putc(&b, (char)cp);
        } else if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            err = "invalid unicode code point";
            goto out;
        } else {
            sk_buf_append(&b, u8, sk_utf8_encode(cp, u8));
        }
    }
    *out = sk_arena_strndup(a, b.data ? b.data : "", b.len);
    *out_len = b.len;
out:
    sk_buf_free(&b);
    return err;
}
