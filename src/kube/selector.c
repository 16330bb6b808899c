/*
 * selector.c - label and field selectors, parsed the way
 * k8s.io/apimachinery/pkg/labels/selector.go and fields/selector.go parse
 * them.
 *
 * The label parser keeps upstream's shape (scan all tokens, then a recursive
 * descent with one token of lookahead and "in"/"notin" read as plain
 * identifiers in value position) because its error messages name the token
 * found and what was expected at that point; a different grammar would
 * report different tokens. Requirement values are kept sorted and unique,
 * as upstream's sets.String leaves them, since error paths index them
 * ("values[0]") in that order.
 *
 * Field selector terms are sorted before parsing, as upstream does, so the
 * first error reported for a selector with several bad terms is the same.
 */
#include "kube/selector.h"
#include "kube/validate.h"
#include "core/buf.h"
#include "core/check.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- label selectors --------------------------------------------------- */

typedef enum {
    OP_IN,
    OP_NOT_IN,
    OP_EQUALS, /* "=" and "==" */
    OP_NOT_EQUALS,
    OP_EXISTS,
    OP_NOT_EXISTS,
    OP_GT,
    OP_LT,
} label_op;

typedef struct {
    char *key;
    label_op op;
    char **values; /* sorted, unique */
    size_t n;
    int64_t num; /* OP_GT / OP_LT operand */
} requirement;

struct sk_label_selector {
    requirement *reqs;
    size_t n;
};

typedef enum {
    TOK_END,
    TOK_CLOSE,
    TOK_COMMA,
    TOK_NOT,
    TOK_DOUBLE_EQUALS,
    TOK_EQUALS,
    TOK_GT,
    TOK_IDENT,
    TOK_IN,
    TOK_LT,
    TOK_NOT_EQUALS,
    TOK_NOT_IN,
    TOK_OPEN,
} tok_type;

typedef struct {
    tok_type type;
    char *lit;
} token;

typedef struct {
    token *toks;
    size_t n, pos;
} parser;

/* Parser contexts: "in"/"notin" are operators only after a key. */
enum { CTX_OPERATOR, CTX_VALUES };

static char *strdup_checked(const char *s, size_t len)
{
    char *c = strndup(s, len);
    SK_CHECK_ALLOC(c);
    return c;
}

static char *vformat(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *vformat(const char *fmt, ...)
{
    char *s;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    SK_CHECK(n >= 0);
    return s;
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int is_special(char c)
{
    return c != '\0' && strchr("=!(),><", c) != NULL;
}

static void push_token(parser *p, tok_type type, const char *lit, size_t len)
{
    p->toks = realloc(p->toks, (p->n + 1) * sizeof *p->toks);
    SK_CHECK_ALLOC(p->toks);
    p->toks[p->n].type = type;
    p->toks[p->n].lit = strdup_checked(lit, len);
    p->n++;
}

/* Upstream Lexer: the whole input as tokens, ending with TOK_END. */
static void lex(parser *p, const char *s)
{
    for (;;) {
        while (is_ws(*s))
            s++;
        if (*s == '\0') {
            push_token(p, TOK_END, "", 0);
            return;
        }
        if (is_special(*s)) {
            static const struct {
                char c;
                tok_type type;
            } singles[] = {{')', TOK_CLOSE}, {',', TOK_COMMA}, {'!', TOK_NOT}, {'=', TOK_EQUALS},
                           {'>', TOK_GT},    {'<', TOK_LT},    {'(', TOK_OPEN}};
            if ((s[0] == '!' || s[0] == '=') && s[1] == '=') {
                push_token(p, s[0] == '!' ? TOK_NOT_EQUALS : TOK_DOUBLE_EQUALS, s, 2);
                s += 2;
                continue;
            }
            for (size_t i = 0; i < sizeof singles / sizeof singles[0]; i++)
                if (singles[i].c == *s)
                    push_token(p, singles[i].type, s, 1);
            s++;
            continue;
        }
        size_t len = 0;
        while (s[len] && !is_special(s[len]) && !is_ws(s[len]))
            len++;
        tok_type type = TOK_IDENT;
        if (len == 2 && strncmp(s, "in", 2) == 0)
            type = TOK_IN;
        else if (len == 5 && strncmp(s, "notin", 5) == 0)
            type = TOK_NOT_IN;
        push_token(p, type, s, len);
        s += len;
    }
}

static const token *peek(const parser *p, int ctx, tok_type *type)
{
    const token *t = &p->toks[p->pos < p->n ? p->pos : p->n - 1];
    *type = t->type;
    if (ctx == CTX_VALUES && (t->type == TOK_IN || t->type == TOK_NOT_IN))
        *type = TOK_IDENT;
    return t;
}

static const token *consume(parser *p, int ctx, tok_type *type)
{
    const token *t = peek(p, ctx, type);
    if (p->pos < p->n)
        p->pos++;
    return t;
}

static void requirement_free(requirement *r)
{
    free(r->key);
    for (size_t i = 0; i < r->n; i++)
        free(r->values[i]);
    free(r->values);
}

/* Inserts v keeping r->values sorted and unique (sets.String.List()). */
static void add_value(requirement *r, const char *v)
{
    size_t at = 0;
    while (at < r->n && strcmp(r->values[at], v) < 0)
        at++;
    if (at < r->n && strcmp(r->values[at], v) == 0)
        return;
    r->values = realloc(r->values, (r->n + 1) * sizeof *r->values);
    SK_CHECK_ALLOC(r->values);
    memmove(r->values + at + 1, r->values + at, (r->n - at) * sizeof *r->values);
    r->values[at] = strdup_checked(v, strlen(v));
    r->n++;
}

/* strconv.ParseInt(s, 10, 64). */
static int parse_int64(const char *s, int64_t *out)
{
    int neg = *s == '-';
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (*s == '+' || *s == '-')
        s++;
    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (limit - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* "<field>: Invalid value: ..." with msgs joined by "; ", as upstream's
 * validateLabelKey / validateLabelValue report; nothing if n == 0. */
static void add_label_error(sk_field_errors *fe, const char *field, const char *value,
                            const char **msgs, size_t n)
{
    sk_buf detail = SK_BUF_INIT;
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            sk_buf_puts(&detail, "; ");
        sk_buf_puts(&detail, msgs[i]);
    }
    sk_field_errors_invalid(fe, field, value, detail.data);
    sk_buf_free(&detail);
}

/* Upstream NewRequirement's value checks; new error string or NULL. */
static char *check_requirement(requirement *r)
{
    sk_field_errors *fe = sk_field_errors_new();
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    char *err = NULL;
    char field[64];
    for (size_t i = 0; (r->op == OP_GT || r->op == OP_LT) && i < r->n; i++) {
        if (parse_int64(r->values[i], &r->num) != 0) {
            snprintf(field, sizeof field, "values[%zu]", i);
            sk_field_errors_invalid(fe, field, r->values[i],
                                    "for 'Gt', 'Lt' operators, the value must be an integer");
        }
    }
    for (size_t i = 0; i < r->n; i++) {
        sk_buf path = SK_BUF_INIT;
        sk_buf_printf(&path, "values[%zu][%s]", i, r->key);
        add_label_error(fe, path.data, r->values[i], msgs,
                        sk_validate_label_value(r->values[i], msgs));
        sk_buf_free(&path);
    }
    if (sk_field_errors_count(fe) > 0)
        err = sk_field_errors_message(fe);
    sk_field_errors_free(fe);
    return err;
}

/* Upstream parseIdentifiersList, after "(" with an identifier or "," next. */
static char *parse_identifiers(parser *p, requirement *r)
{
    tok_type t, t2;
    for (;;) {
        const token *tok = consume(p, CTX_VALUES, &t);
        if (t == TOK_IDENT) {
            add_value(r, tok->lit);
            const token *next = peek(p, CTX_VALUES, &t2);
            if (t2 == TOK_CLOSE)
                return NULL;
            if (t2 != TOK_COMMA)
                return vformat("found '%s', expected: ',' or ')'", next->lit);
        } else if (t == TOK_COMMA) {
            if (r->n == 0)
                add_value(r, ""); /* "(," */
            peek(p, CTX_VALUES, &t2);
            if (t2 == TOK_CLOSE || t2 == TOK_COMMA)
                add_value(r, ""); /* ",)" and ",," */
            if (t2 == TOK_CLOSE)
                return NULL;
        } else {
            return vformat("found '%s', expected: ',', or identifier", tok->lit);
        }
    }
}

/* Upstream parseValues: "(" values ")". */
static char *parse_set(parser *p, requirement *r)
{
    tok_type t;
    const token *tok = consume(p, CTX_VALUES, &t);
    if (t != TOK_OPEN)
        return vformat("found '%s' expected: '('", tok->lit);
    const token *first = peek(p, CTX_VALUES, &t);
    if (t == TOK_CLOSE) {
        consume(p, CTX_VALUES, &t);
        add_value(r, "");
        return NULL;
    }
    if (t != TOK_IDENT && t != TOK_COMMA)
        return vformat("found '%s', expected: ',', ')' or identifier", first->lit);
    char *err = parse_identifiers(p, r);
    if (err)
        return err;
    consume(p, CTX_VALUES, &t);
    /* Upstream reports the token that followed "(", not the one found. */
    return t == TOK_CLOSE ? NULL : vformat("found '%s', expected: ')'", first->lit);
}

/* Upstream parseExactValue: one value, possibly empty. */
static char *parse_exact(parser *p, requirement *r)
{
    tok_type t;
    peek(p, CTX_VALUES, &t);
    if (t == TOK_END || t == TOK_COMMA) {
        add_value(r, "");
        return NULL;
    }
    const token *tok = consume(p, CTX_VALUES, &t);
    if (t != TOK_IDENT)
        return vformat("found '%s', expected: identifier", tok->lit);
    add_value(r, tok->lit);
    return NULL;
}

/* Upstream parseRequirement; fills r (caller frees) or returns an error. */
static char *parse_requirement(parser *p, requirement *r)
{
    static const struct {
        tok_type tok;
        label_op op;
    } ops[] = {{TOK_IN, OP_IN},
               {TOK_NOT_IN, OP_NOT_IN},
               {TOK_EQUALS, OP_EQUALS},
               {TOK_DOUBLE_EQUALS, OP_EQUALS},
               {TOK_NOT_EQUALS, OP_NOT_EQUALS},
               {TOK_GT, OP_GT},
               {TOK_LT, OP_LT}};
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    tok_type t;
    int negated = 0;
    const token *tok = consume(p, CTX_VALUES, &t);
    if (t == TOK_NOT) {
        negated = 1;
        tok = consume(p, CTX_VALUES, &t);
    }
    if (t != TOK_IDENT)
        return vformat("found '%s', expected: identifier", tok->lit);
    size_t n = sk_validate_qualified_name(tok->lit, msgs);
    if (n > 0) {
        /* Upstream validates the key against a nil field path. */
        sk_field_errors *fe = sk_field_errors_new();
        add_label_error(fe, "<nil>", tok->lit, msgs, n);
        char *err = sk_field_errors_message(fe);
        sk_field_errors_free(fe);
        return err;
    }
    r->key = strdup_checked(tok->lit, strlen(tok->lit));
    peek(p, CTX_VALUES, &t);
    if (negated || t == TOK_END || t == TOK_COMMA) {
        r->op = negated ? OP_NOT_EXISTS : OP_EXISTS;
        return NULL;
    }
    tok = consume(p, CTX_OPERATOR, &t);
    size_t i = 0;
    while (i < sizeof ops / sizeof ops[0] && ops[i].tok != t)
        i++;
    if (i == sizeof ops / sizeof ops[0])
        return vformat("found '%s', expected: in, notin, =, ==, !=, gt, lt", tok->lit);
    r->op = ops[i].op;
    char *err = r->op == OP_IN || r->op == OP_NOT_IN ? parse_set(p, r) : parse_exact(p, r);
    return err ? err : check_requirement(r);
}

/* Upstream Parser.parse: requirements separated by commas. */
static char *parse_selector(parser *p, sk_label_selector *sel)
{
    tok_type t;
    for (;;) {
        const token *tok = peek(p, CTX_VALUES, &t);
        if (t == TOK_END)
            return NULL;
        if (t != TOK_IDENT && t != TOK_NOT)
            return vformat("found '%s', expected: !, identifier, or 'end of string'", tok->lit);
        requirement r = {0};
        char *err = parse_requirement(p, &r);
        if (err) {
            char *wrapped = vformat("unable to parse requirement: %s", err);
            free(err);
            requirement_free(&r);
            return wrapped;
        }
        sel->reqs = realloc(sel->reqs, (sel->n + 1) * sizeof *sel->reqs);
        SK_CHECK_ALLOC(sel->reqs);
        sel->reqs[sel->n++] = r;
        tok = consume(p, CTX_VALUES, &t);
        if (t == TOK_END)
            return NULL;
        if (t != TOK_COMMA)
            return vformat("found '%s', expected: ',' or 'end of string'", tok->lit);
        tok = peek(p, CTX_VALUES, &t);
        if (t != TOK_IDENT && t != TOK_NOT)
            return vformat("found '%s', expected: identifier after ','", tok->lit);
    }
}

sk_err sk_label_selector_parse(const char *s, sk_label_selector **out, char **errmsg)
{
    parser p = {NULL, 0, 0};
    sk_label_selector *sel = calloc(1, sizeof *sel);
    sk_err e = SK_OK;
    SK_CHECK_ALLOC(sel);
    lex(&p, s);
    char *err = parse_selector(&p, sel);
    if (err) {
        *errmsg = err;
        e = SK_ERR_BAD_REQUEST;
        goto out;
    }
    *out = sel;
    sel = NULL;
out:
    for (size_t i = 0; i < p.n; i++)
        free(p.toks[i].lit);
    free(p.toks);
    sk_label_selector_free(sel);
    return e;
}

static int has_value(const requirement *r, const char *v)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->values[i], v) == 0)
            return 1;
    return 0;
}

static int requirement_matches(const requirement *r, const json_t *labels)
{
    const json_t *lv = json_is_object(labels) ? json_object_get(labels, r->key) : NULL;
    const char *v = json_string_value(lv);
    int64_t num;
    switch (r->op) {
    case OP_IN:
    case OP_EQUALS:
        return v && has_value(r, v);
    case OP_NOT_IN:
    case OP_NOT_EQUALS:
        return !v || !has_value(r, v);
    case OP_EXISTS:
        return lv != NULL;
    case OP_NOT_EXISTS:
        return lv == NULL;
    case OP_GT:
    case OP_LT:
        if (!v || parse_int64(v, &num) != 0)
            return 0;
        return r->op == OP_GT ? num > r->num : num < r->num;
    }
    return 0;
}

int sk_label_selector_matches(const sk_label_selector *sel, const json_t *labels)
{
    for (size_t i = 0; i < sel->n; i++)
        if (!requirement_matches(&sel->reqs[i], labels))
            return 0;
    return 1;
}

int sk_label_selector_is_empty(const sk_label_selector *sel)
{
    return sel->n == 0;
}

void sk_label_selector_free(sk_label_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++)
        requirement_free(&sel->reqs[i]);
    free(sel->reqs);
    free(sel);
}

/* ---- field selectors --------------------------------------------------- */

typedef struct {
    char *field;
    int negated;
    char *value; /* unescaped */
} field_term;

struct sk_field_selector {
    field_term *terms;
    size_t n;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Upstream splitTerms: split on commas not preceded by a backslash; the
 * backslashes stay for UnescapeValue. */
static char **split_terms(const char *s, size_t *n_out)
{
    char **terms = NULL;
    size_t n = 0, start = 0;
    int in_slash = 0;
    for (size_t i = 0;; i++) {
        if (s[i] == '\0' || (!in_slash && s[i] == ',')) {
            terms = realloc(terms, (n + 1) * sizeof *terms);
            SK_CHECK_ALLOC(terms);
            terms[n++] = strdup_checked(s + start, i - start);
            start = i + 1;
            if (s[i] == '\0')
                break;
            continue;
        }
        in_slash = !in_slash && s[i] == '\\';
    }
    *n_out = n;
    return terms;
}

/* Upstream UnescapeValue; new string in *out or an error message. */
static char *unescape_value(const char *s, char **out)
{
    sk_buf b = SK_BUF_INIT;
    for (; *s; s++) {
        if (*s == '\\') {
            if (s[1] != '\\' && s[1] != ',' && s[1] != '=') {
                sk_buf_free(&b);
                return s[1] ? vformat("invalid field selector: invalid escape sequence: \\%c", s[1])
                            : vformat("invalid field selector: invalid escape sequence: \\");
            }
            s++;
        } else if (*s == ',' || *s == '=') {
            /* Go prints the rune with %v: its code point. */
            sk_buf_free(&b);
            return vformat("invalid field selector: unescaped character in value: %d", *s);
        }
        sk_buf_putc(&b, *s);
    }
    *out = sk_buf_steal(&b, NULL);
    return NULL;
}

/* Upstream splitTerm: the first "!=", "==" or "=" splits field from value. */
static char *parse_term(const char *selector, const char *term, field_term *ft)
{
    static const char *const ops[] = {"!=", "==", "="};
    for (size_t i = 0; term[i]; i++) {
        for (size_t k = 0; k < 3; k++) {
            size_t len = strlen(ops[k]);
            if (strncmp(term + i, ops[k], len) != 0)
                continue;
            char *err = unescape_value(term + i + len, &ft->value);
            if (err)
                return err;
            ft->field = strdup_checked(term, i);
            ft->negated = k == 0;
            return NULL;
        }
    }
    return vformat("invalid selector: '%s'; can't understand '%s'", selector, term);
}

static int field_supported(const sk_resource *r, const char *field)
{
    if (strcmp(field, "metadata.name") == 0 || strcmp(field, "metadata.namespace") == 0)
        return 1;
    for (size_t i = 0; r->field_selectors[i]; i++)
        if (strcmp(r->field_selectors[i], field) == 0)
            return 1;
    return 0;
}

sk_err sk_field_selector_parse(const char *s, const sk_resource *r, sk_field_selector **out,
                               char **errmsg)
{
    sk_field_selector *sel = calloc(1, sizeof *sel);
    size_t n = 0;
    char **terms = *s ? split_terms(s, &n) : NULL;
    char *err = NULL;
    sk_err e = SK_OK;
    SK_CHECK_ALLOC(sel);
    if (n > 0)
        qsort(terms, n, sizeof *terms, cmp_str);
    for (size_t i = 0; i < n && !err; i++) {
        if (*terms[i] == '\0')
            continue;
        field_term ft = {NULL, 0, NULL};
        err = parse_term(s, terms[i], &ft);
        if (err)
            break;
        sel->terms = realloc(sel->terms, (sel->n + 1) * sizeof *sel->terms);
        SK_CHECK_ALLOC(sel->terms);
        sel->terms[sel->n++] = ft;
    }
    /* Upstream checks field support in a later pass (Transform). */
    for (size_t i = 0; i < sel->n && !err; i++)
        if (!field_supported(r, sel->terms[i].field))
            err = vformat("field label not supported: %s", sel->terms[i].field);
    if (err) {
        *errmsg = err;
        e = SK_ERR_BAD_REQUEST;
        goto out;
    }
    *out = sel;
    sel = NULL;
out:
    for (size_t i = 0; i < n; i++)
        free(terms[i]);
    free(terms);
    sk_field_selector_free(sel);
    return e;
}

/* The value at a dotted path of obj as a field selector sees it: a string
 * as is, an integer in decimal and a boolean as "true"/"false" (a custom
 * resource's selectableFields), "" if missing or anything else. num holds
 * the text of a number. */
static const char *field_value(const json_t *obj, const char *path, char num[32])
{
    const json_t *cur = obj;
    char seg[256];
    while (cur && *path) {
        size_t len = strcspn(path, ".");
        if (len >= sizeof seg)
            return "";
        memcpy(seg, path, len);
        seg[len] = '\0';
        cur = json_is_object(cur) ? json_object_get(cur, seg) : NULL;
        path += len + (path[len] == '.');
    }
    if (json_is_integer(cur)) {
        snprintf(num, 32, "%" JSON_INTEGER_FORMAT, json_integer_value(cur));
        return num;
    }
    if (json_is_boolean(cur))
        return json_is_true(cur) ? "true" : "false";
    return json_is_string(cur) ? json_string_value(cur) : "";
}

int sk_field_selector_matches(const sk_field_selector *sel, const json_t *obj)
{
    for (size_t i = 0; i < sel->n; i++) {
        const field_term *t = &sel->terms[i];
        char num[32];
        int eq = strcmp(field_value(obj, t->field, num), t->value) == 0;
        if (eq == t->negated)
            return 0;
    }
    return 1;
}

const char *sk_field_selector_required(const sk_field_selector *sel, const char *field)
{
    for (size_t i = 0; i < sel->n; i++)
        if (!sel->terms[i].negated && strcmp(sel->terms[i].field, field) == 0)
            return sel->terms[i].value;
    return NULL;
}

void sk_field_selector_free(sk_field_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++) {
        free(sel->terms[i].field);
        free(sel->terms[i].value);
    }
    free(sel->terms);
    free(sel);
}
