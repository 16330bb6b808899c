/*
 * regex.c - RE2 regular expressions (regex.h): a parser of Go's
 * regexp/syntax (Perl flags), a compiler to a small program, and a Pike VM.
 *
 * Parse: recursive descent to a tree, nesting at most MAX_DEPTH deep (Go's
 * own limit is 1000 too), errors in Go's words and with the text Go quotes.
 * A character class is a sorted list of disjoint code point ranges with two
 * flags: fold (case-insensitive: a character also matches when another case
 * of it, by Go's unicode.SimpleFold orbits, is in the ranges) and negate
 * (applied after folding, as Go folds a class before negating it).
 *
 * Compile: x* is split(x, out) with a jump back, x{n,m} is n copies and
 * m-n nested optional ones (Go's own expansion), so the program's size is
 * what bounds a search's cost and it is refused past SK_CEL_RE_MAX_PROG.
 *
 * Run: the Pike VM keeps the live threads of one input position in
 * priority order (a sparse set, so a thread is added once a position and
 * an empty loop like (a*)* cannot spin); a new thread starts at every
 * position until a match is found, the first thread (in priority order)
 * to reach MATCH cuts off every thread after it, and the last match so
 * kept is leftmost-first, as in Go. Only where the whole match starts and
 * ends is tracked: no caller needs submatches.
 */
#include "cel/regex.h"

#include "cel/unicode.h"
#include "core/utf8.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 1000
#define MAX_REPEAT 1000

typedef struct rng {
    uint32_t lo, hi;
} rng;

enum op { OP_CLASS, OP_SPLIT, OP_JMP, OP_MATCH, OP_ASSERT };
enum assertion { A_BOT, A_EOT, A_BOL, A_EOL, A_WORD, A_NOT_WORD };

typedef struct inst {
    uint8_t op, fold, negate, assertion;
    uint32_t x, y; /* SPLIT: x preferred; JMP: x */
    const rng *r;  /* CLASS */
    size_t nr;
} inst;

typedef struct tlist {
    uint32_t *dense, *sparse;
    size_t *start;
    size_t n;
} tlist;

struct sk_cel_re {
    inst *prog;
    size_t n;
    /* a search's working memory, made with the program: two thread lists
     * and add_thread's stack (a split pushes two, each pc at most once per
     * visit of the instruction before it: 2n bounds it) */
    tlist lists[2];
    uint32_t *stack;
};

/* ---- the tree ---- */

enum kind { N_EMPTY, N_CLASS, N_ASSERT, N_CAT, N_ALT, N_REPEAT };

typedef struct node {
    enum kind kind;
    /* CAT, ALT: kids; REPEAT: kids is the operand */
    struct node *kids, *next;
    int min, max, greedy; /* REPEAT; max -1: unbounded */
    int counted;          /* REPEAT: written x{n,m} */
    rng *r;               /* CLASS */
    size_t nr;
    int fold, negate, assertion;
} node;

enum flags { F_FOLD = 1, F_MULTILINE = 2, F_DOTNL = 4, F_UNGREEDY = 8 };

typedef struct parser {
    sk_arena *a;
    const char *s, *p, *end;
    const char *err;
    int depth;
    size_t bytes; /* taken from the arena so far, parse and compile */
} parser;

static void *take(parser *ps, size_t n)
{
    ps->bytes += n;
    return sk_arena_alloc(ps->a, n);
}

/* sk_arena_grow, counting what a new array takes. */
static void *grow(parser *ps, void *items, size_t n, size_t *cap, size_t size)
{
    size_t before = *cap;
    items = sk_arena_grow(ps->a, items, n, cap, size);
    if (*cap != before)
        ps->bytes += *cap * size;
    return items;
}

static node *fail(parser *ps, const char *code, const char *text, size_t len)
{
    if (!ps->err)
        ps->err = sk_arena_printf(ps->a, "error parsing regexp: %s: `%.*s`", code, (int)len, text);
    return NULL;
}

static node *mk(parser *ps, enum kind k)
{
    node *n = take(ps, sizeof *n);
    memset(n, 0, sizeof *n);
    n->kind = k;
    return n;
}

/* A growing range list. */
typedef struct rlist {
    rng *r;
    size_t n, cap;
} rlist;

static void add_range(parser *ps, rlist *l, uint32_t lo, uint32_t hi)
{
    l->r = grow(ps, l->r, l->n, &l->cap, sizeof *l->r);
    l->r[l->n].lo = lo;
    l->r[l->n].hi = hi;
    l->n++;
}

static int by_lo(const void *x, const void *y)
{
    const rng *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Sorts and merges l's ranges in place. */
static void merge(rlist *l)
{
    qsort(l->r, l->n, sizeof *l->r, by_lo);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (k && l->r[i].lo <= l->r[k - 1].hi + 1) {
            if (l->r[i].hi > l->r[k - 1].hi)
                l->r[k - 1].hi = l->r[i].hi;
        } else {
            l->r[k++] = l->r[i];
        }
    }
    l->n = k;
}

static int in_ranges(const rng *r, size_t n, uint32_t c);

/* Adds the n sorted, disjoint ranges at r to l, or their complement. A
 * named class negated under (?i) (\W, \P{Lu}, [:^lower:]) is Go's: the
 * class's case closure, then its complement, so (?i)\W refuses the long s
 * U+017F, which folds to s. */
static void add_ranges(parser *ps, rlist *l, const rng *r, size_t n, int negate, int fold)
{
    if (!negate) {
        for (size_t i = 0; i < n; i++)
            add_range(ps, l, r[i].lo, r[i].hi);
        return;
    }
    if (fold) {
        rlist closed = {0};
        size_t nf;
        const uint32_t(*folds)[2] = sk_cel_unicode_folds(&nf);
        for (size_t i = 0; i < n; i++)
            add_range(ps, &closed, r[i].lo, r[i].hi);
        for (size_t i = 0; i < nf; i++)
            if (in_ranges(r, n, folds[i][0]))
                for (uint32_t f = folds[i][1]; f != folds[i][0]; f = sk_cel_unicode_simple_fold(f))
                    add_range(ps, &closed, f, f);
        merge(&closed);
        r = closed.r;
        n = closed.n;
    }
    uint32_t next = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].lo > next)
            add_range(ps, l, next, r[i].lo - 1);
        next = r[i].hi + 1;
    }
    if (next <= 0x10FFFF)
        add_range(ps, l, next, 0x10FFFF);
}

/* Sorts and merges the ranges into a class node. */
static node *class_node(parser *ps, rlist *l, int fold, int negate)
{
    merge(l);
    node *n = mk(ps, N_CLASS);
    n->r = l->r;
    n->nr = l->n;
    n->fold = fold;
    n->negate = negate;
    return n;
}

static node *char_node(parser *ps, uint32_t c, int flags)
{
    rlist l = {0};
    add_range(ps, &l, c, c);
    return class_node(ps, &l, (flags & F_FOLD) != 0, 0);
}

/* ---- case folding ---- */

static int in_ranges(const rng *r, size_t n, uint32_t c)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c < r[mid].lo)
            hi = mid;
        else if (c > r[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static int class_has(const inst *in, uint32_t c)
{
    int has = in_ranges(in->r, in->nr, c);
    if (in->fold)
        for (uint32_t f = sk_cel_unicode_simple_fold(c); !has && f != c;
             f = sk_cel_unicode_simple_fold(f))
            has = in_ranges(in->r, in->nr, f);
    return has != in->negate;
}

/* ---- named classes ---- */

static const rng digit[] = {{'0', '9'}};
static const rng space[] = {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}};
static const rng word[] = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};

typedef struct named {
    const char *name;
    const rng *r;
    size_t n;
} named;

#define NAMED(name, ...)                                                                           \
    {                                                                                              \
        name, (const rng[]){__VA_ARGS__}, sizeof((const rng[]){__VA_ARGS__}) / sizeof(rng)         \
    }

static const named posix[] = {
    NAMED("alnum", {'0', '9'}, {'A', 'Z'}, {'a', 'z'}),
    NAMED("alpha", {'A', 'Z'}, {'a', 'z'}),
    NAMED("ascii", {0, 0x7F}),
    NAMED("blank", {'\t', '\t'}, {' ', ' '}),
    NAMED("cntrl", {0, 0x1F}, {0x7F, 0x7F}),
    NAMED("digit", {'0', '9'}),
    NAMED("graph", {'!', '~'}),
    NAMED("lower", {'a', 'z'}),
    NAMED("print", {' ', '~'}),
    NAMED("punct", {'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}),
    NAMED("space", {'\t', '\r'}, {' ', ' '}),
    NAMED("upper", {'A', 'Z'}),
    NAMED("word", {'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}),
    NAMED("xdigit", {'0', '9'}, {'A', 'F'}, {'a', 'f'}),
};

/* At p (just past a backslash) a Perl class letter: adds it, 1; else 0. */
static int perl_class(parser *ps, rlist *l, char c, int fold)
{
    switch (c) {
    case 'd':
    case 'D':
        add_ranges(ps, l, digit, 1, c == 'D', fold);
        return 1;
    case 's':
    case 'S':
        add_ranges(ps, l, space, 3, c == 'S', fold);
        return 1;
    case 'w':
    case 'W':
        add_ranges(ps, l, word, 4, c == 'W', fold);
        return 1;
    default:
        return 0;
    }
}

/* At ps->p a \p or \P escape (p points at the backslash): adds the class,
 * 1; NULL-like 0 with the error set. */
static int unicode_class(parser *ps, rlist *l, int fold)
{
    const char *start = ps->p;
    int negate = ps->p[1] == 'P';
    ps->p += 2;
    if (ps->p >= ps->end)
        return fail(ps, "invalid character class range", start, (size_t)(ps->p - start)), 0;
    const char *name;
    size_t len;
    if (*ps->p == '{') {
        const char *close = memchr(ps->p, '}', (size_t)(ps->end - ps->p));
        if (!close)
            return fail(ps, "invalid character class range", start, (size_t)(ps->end - start)), 0;
        name = ps->p + 1;
        len = (size_t)(close - name);
        ps->p = close + 1;
    } else {
        uint32_t cp;
        name = ps->p;
        len = sk_utf8_decode(ps->p, (size_t)(ps->end - ps->p), &cp);
        ps->p += len;
    }
    if (len && name[0] == '^') {
        negate = !negate;
        name++, len--;
    }
    static const uint32_t any[] = {0, 0x10FFFF};
    size_t n = 1;
    const uint32_t *pairs =
        len == 3 && memcmp(name, "Any", 3) == 0 ? any : sk_cel_unicode_class(name, len, &n);
    if (!pairs)
        return fail(ps, "invalid character class range", start, (size_t)(ps->p - start)), 0;
    add_ranges(ps, l, (const rng *)pairs, n, negate, fold);
    return 1;
}

/* ---- escapes ---- */

/* A single-character escape at ps->p (the backslash): its code point, with
 * ps->p past it; -1 with the error set. */
static int64_t escape_char(parser *ps)
{
    const char *start = ps->p++;
    if (ps->p >= ps->end)
        return fail(ps, "trailing backslash at end of expression", "", 0), -1;
    uint32_t c;
    size_t w = sk_utf8_decode(ps->p, (size_t)(ps->end - ps->p), &c);
    ps->p += w;
    switch (c) {
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
        /* a lone non-zero digit is a backreference, which RE2 lacks */
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '7')
            break;
        /* fallthrough */
    case '0': {
        uint32_t v = c - '0';
        for (int i = 1; i < 3 && ps->p < ps->end && *ps->p >= '0' && *ps->p <= '7'; i++)
            v = v * 8 + (uint32_t)(*ps->p++ - '0');
        return v;
    }
    case 'x': {
        if (ps->p >= ps->end)
            break;
        if (*ps->p == '{') {
            uint32_t v = 0;
            int digits = 0;
            ps->p++;
            while (ps->p < ps->end && sk_hex_value(*ps->p) >= 0) {
                v = v * 16 + (uint32_t)sk_hex_value(*ps->p++);
                if (v > 0x10FFFF)
                    break;
                digits++;
            }
            if (!digits || v > 0x10FFFF || ps->p >= ps->end || *ps->p != '}')
                break;
            ps->p++;
            return v;
        }
        if (ps->end - ps->p < 2 || sk_hex_value(ps->p[0]) < 0 || sk_hex_value(ps->p[1]) < 0)
            break;
        ps->p += 2;
        return sk_hex_value(ps->p[-2]) * 16 + sk_hex_value(ps->p[-1]);
    }
    case 'a':
        return 7;
    case 'f':
        return 12;
    case 'n':
        return 10;
    case 'r':
        return 13;
    case 't':
        return 9;
    case 'v':
        return 11;
    default:
        if (c < 0x80 &&
            !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            return c;
        break;
    }
    if (ps->p > ps->end)
        ps->p = ps->end;
    return fail(ps, "invalid escape sequence", start, (size_t)(ps->p - start)), -1;
}

/* ---- classes ---- */

static node *parse_class(parser *ps, int flags)
{
    const char *start = ps->p++;
    int negate = 0, fold = (flags & F_FOLD) != 0;
    rlist l = {0};
    if (ps->p < ps->end && *ps->p == '^') {
        negate = 1;
        ps->p++;
    }
    int first = 1;
    while (ps->p < ps->end && (*ps->p != ']' || first)) {
        first = 0;
        const char *item = ps->p;
        if (*ps->p == '[' && ps->end - ps->p >= 2 && ps->p[1] == ':') {
            const char *close = NULL;
            for (const char *q = ps->p + 2; q + 1 < ps->end; q++)
                if (q[0] == ':' && q[1] == ']') {
                    close = q;
                    break;
                }
            if (close) {
                const char *name = ps->p + 2;
                int neg = name < close && *name == '^';
                name += neg;
                size_t len = (size_t)(close - name), i;
                for (i = 0; i < sizeof posix / sizeof *posix; i++)
                    if (strlen(posix[i].name) == len && memcmp(posix[i].name, name, len) == 0)
                        break;
                if (i == sizeof posix / sizeof *posix)
                    return fail(ps, "invalid character class range", item,
                                (size_t)(close + 2 - item));
                add_ranges(ps, &l, posix[i].r, posix[i].n, neg, fold);
                ps->p = close + 2;
                continue;
            }
        }
        if (*ps->p == '\\' && ps->end - ps->p >= 2) {
            if (perl_class(ps, &l, ps->p[1], fold)) {
                ps->p += 2;
                continue;
            }
            if (ps->p[1] == 'p' || ps->p[1] == 'P') {
                if (!unicode_class(ps, &l, fold))
                    return NULL;
                continue;
            }
        }
        int64_t lo, hi;
        uint32_t c;
        if (*ps->p == '\\') {
            if ((lo = escape_char(ps)) < 0)
                return NULL;
        } else {
            ps->p += sk_utf8_decode(ps->p, (size_t)(ps->end - ps->p), &c);
            lo = c;
        }
        hi = lo;
        if (ps->end - ps->p >= 2 && ps->p[0] == '-' && ps->p[1] != ']') {
            ps->p++;
            if (*ps->p == '\\') {
                if ((hi = escape_char(ps)) < 0)
                    return NULL;
            } else {
                ps->p += sk_utf8_decode(ps->p, (size_t)(ps->end - ps->p), &c);
                hi = c;
            }
            if (hi < lo)
                return fail(ps, "invalid character class range", item, (size_t)(ps->p - item));
        }
        add_range(ps, &l, (uint32_t)lo, (uint32_t)hi);
    }
    if (ps->p >= ps->end)
        return fail(ps, "missing closing ]", start, (size_t)(ps->end - start));
    ps->p++;
    return class_node(ps, &l, fold, negate);
}

/* ---- expressions ---- */

static node *parse_alt(parser *ps, int *flags);

static node *cat_of(parser *ps, node *first)
{
    node *c = mk(ps, N_CAT);
    c->kids = first;
    return c;
}

/* At ps->p "(?": flags, a non-capturing group or a named one. Sets *group
 * when a group follows (its flags in *gflags), else applies the flags. */
static int perl_group(parser *ps, int *flags, int *group, int *gflags)
{
    const char *start = ps->p;
    const char *t = ps->p + 2;
    if (t < ps->end && (*t == '<' || (*t == 'P' && t + 1 < ps->end && t[1] == '<'))) {
        const char *name = t + (*t == '<' ? 1 : 2);
        const char *close = memchr(name, '>', (size_t)(ps->end - name));
        if (!close)
            return fail(ps, "invalid named capture", start, (size_t)(ps->end - start)), 0;
        int ok = close > name;
        for (const char *q = name; q < close; q++)
            ok &= (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') ||
                  (*q >= 'A' && *q <= 'Z') || *q == '_';
        if (!ok)
            return fail(ps, "invalid named capture", start, (size_t)(close + 1 - start)), 0;
        ps->p = close + 1;
        *group = 1;
        *gflags = *flags;
        return 1;
    }
    int f = *flags, neg = 0, saw = 0;
    while (t < ps->end) {
        uint32_t c;
        t += sk_utf8_decode(t, (size_t)(ps->end - t), &c);
        int bit = c == 'i'   ? F_FOLD
                  : c == 'm' ? F_MULTILINE
                  : c == 's' ? F_DOTNL
                  : c == 'U' ? F_UNGREEDY
                             : 0;
        if (bit) {
            f = neg ? f & ~bit : f | bit;
            saw = 1;
            continue;
        }
        if (c == '-' && !neg) {
            neg = 1;
            saw = 0;
            continue;
        }
        if ((c == ':' || c == ')') && !(neg && !saw)) {
            ps->p = t;
            if (c == ':') {
                *group = 1;
                *gflags = f;
            } else {
                *flags = f;
            }
            return 1;
        }
        break;
    }
    return fail(ps, "invalid or unsupported Perl syntax", start, (size_t)(t - start)), 0;
}

/* A repetition operator at ps->p, if there is one: 1 with min/max/greedy
 * and ps->p past it; 0 if none ({ not starting a valid count is a
 * literal); -1 on an error. */
static int repeat_op(parser *ps, int flags, int *min, int *max, int *greedy)
{
    const char *start = ps->p;
    char c = *ps->p;
    if (c == '*' || c == '+' || c == '?') {
        *min = c == '+';
        *max = c == '?' ? 1 : -1;
        ps->p++;
    } else if (c == '{') {
        const char *q = ps->p + 1;
        long lo = -1, hi;
        if (q < ps->end && *q >= '0' && *q <= '9')
            for (lo = 0; q < ps->end && *q >= '0' && *q <= '9'; q++)
                lo = lo < 100000 ? lo * 10 + (*q - '0') : lo;
        if (lo < 0 || q >= ps->end)
            return 0;
        hi = lo;
        if (*q == ',') {
            q++;
            hi = -1;
            if (q < ps->end && *q >= '0' && *q <= '9')
                for (hi = 0; q < ps->end && *q >= '0' && *q <= '9'; q++)
                    hi = hi < 100000 ? hi * 10 + (*q - '0') : hi;
        }
        if (q >= ps->end || *q != '}')
            return 0;
        ps->p = q + 1;
        if (lo > MAX_REPEAT || hi > MAX_REPEAT || (hi >= 0 && hi < lo))
            return fail(ps, "invalid repeat count", start, (size_t)(ps->p - start)), -1;
        *min = (int)lo;
        *max = (int)hi;
    } else {
        return 0;
    }
    *greedy = !(flags & F_UNGREEDY);
    if (ps->p < ps->end && *ps->p == '?') {
        *greedy = !*greedy;
        ps->p++;
    }
    return 1;
}

/* Go's repeatIsValid: counted repetitions nested in one another may
 * multiply to at most n copies. */
static int repeat_valid(const node *x, int n)
{
    if (x->kind == N_REPEAT && x->counted) {
        int m = x->max < 0 ? x->min : x->max;
        if (m > n)
            return 0;
        if (m > 0)
            n /= m;
    }
    if (x->kind == N_REPEAT || x->kind == N_CAT || x->kind == N_ALT)
        for (const node *k = x->kids; k; k = k->next)
            if (!repeat_valid(k, n))
                return 0;
    return 1;
}

static node *parse_cat(parser *ps, int *flags)
{
    node *head = NULL, **tail = &head, *last = NULL;
    const char *last_repeat = NULL;
    while (ps->p < ps->end && *ps->p != '|' && *ps->p != ')') {
        const char *start = ps->p;
        int min, max, greedy;
        int r = repeat_op(ps, *flags, &min, &max, &greedy);
        if (r < 0)
            return NULL;
        if (r > 0) {
            if (last_repeat)
                return fail(ps, "invalid nested repetition operator", last_repeat,
                            (size_t)(ps->p - last_repeat));
            if (!last)
                return fail(ps, "missing argument to repetition operator", start,
                            (size_t)(ps->p - start));
            node *operand = mk(ps, N_EMPTY);
            *operand = *last;
            operand->next = NULL;
            last->kind = N_REPEAT;
            last->kids = operand;
            last->min = min;
            last->max = max;
            last->greedy = greedy;
            last->counted = *start == '{';
            if (last->counted && (min >= 2 || max >= 2) && !repeat_valid(last, MAX_REPEAT))
                return fail(ps, "invalid repeat count", start, (size_t)(ps->p - start));
            last_repeat = start;
            continue;
        }
        last_repeat = NULL;
        node *atom;
        char c = *ps->p;
        if (c == '(') {
            int group = 1, gflags = *flags;
            if (ps->end - ps->p >= 2 && ps->p[1] == '?') {
                group = 0;
                if (!perl_group(ps, flags, &group, &gflags))
                    return NULL;
                if (!group) {
                    last = NULL;
                    continue;
                }
            } else {
                ps->p++;
            }
            if (++ps->depth > MAX_DEPTH)
                return fail(ps, "expression nests too deeply", "", 0);
            atom = parse_alt(ps, &gflags);
            ps->depth--;
            if (!atom)
                return NULL;
            if (ps->p >= ps->end)
                return fail(ps, "missing closing )", ps->s, (size_t)(ps->end - ps->s));
            ps->p++;
        } else if (c == '[') {
            if (!(atom = parse_class(ps, *flags)))
                return NULL;
        } else if (c == '.') {
            ps->p++;
            rlist l = {0};
            if (*flags & F_DOTNL) {
                add_range(ps, &l, 0, 0x10FFFF);
            } else {
                add_range(ps, &l, 0, '\n' - 1);
                add_range(ps, &l, '\n' + 1, 0x10FFFF);
            }
            atom = class_node(ps, &l, 0, 0);
        } else if (c == '^' || c == '$') {
            ps->p++;
            atom = mk(ps, N_ASSERT);
            atom->assertion = c == '^' ? (*flags & F_MULTILINE ? A_BOL : A_BOT)
                                       : (*flags & F_MULTILINE ? A_EOL : A_EOT);
        } else if (c == '\\' && ps->end - ps->p >= 2 && strchr("AzbBQpPdDsSwW", ps->p[1]) &&
                   ps->p[1]) {
            char e = ps->p[1];
            if (e == 'A' || e == 'z' || e == 'b' || e == 'B') {
                ps->p += 2;
                atom = mk(ps, N_ASSERT);
                atom->assertion = e == 'A'   ? A_BOT
                                  : e == 'z' ? A_EOT
                                  : e == 'b' ? A_WORD
                                             : A_NOT_WORD;
            } else if (e == 'Q') {
                /* \Q...\E: literal text, each character an atom of its own */
                ps->p += 2;
                const char *q = ps->p;
                while (q < ps->end && !(q[0] == '\\' && q + 1 < ps->end && q[1] == 'E'))
                    q++;
                while (ps->p < q) {
                    uint32_t cp;
                    ps->p += sk_utf8_decode(ps->p, (size_t)(q - ps->p), &cp);
                    last = char_node(ps, cp, *flags);
                    *tail = last;
                    tail = &last->next;
                }
                ps->p = q < ps->end ? q + 2 : q;
                continue;
            } else {
                rlist l = {0};
                if (e == 'p' || e == 'P') {
                    if (!unicode_class(ps, &l, (*flags & F_FOLD) != 0))
                        return NULL;
                } else {
                    perl_class(ps, &l, e, (*flags & F_FOLD) != 0);
                    ps->p += 2;
                }
                atom = class_node(ps, &l, (*flags & F_FOLD) != 0, 0);
            }
        } else if (c == '\\') {
            int64_t cp = escape_char(ps);
            if (cp < 0)
                return NULL;
            atom = char_node(ps, (uint32_t)cp, *flags);
        } else {
            uint32_t cp;
            ps->p += sk_utf8_decode(ps->p, (size_t)(ps->end - ps->p), &cp);
            atom = char_node(ps, cp, *flags);
        }
        last = atom;
        *tail = atom;
        tail = &atom->next;
    }
    if (!head)
        return mk(ps, N_EMPTY);
    return head->next ? cat_of(ps, head) : head;
}

static node *parse_alt(parser *ps, int *flags)
{
    node *head = NULL, **tail = &head;
    size_t n = 0;
    for (;;) {
        node *c = parse_cat(ps, flags);
        if (!c)
            return NULL;
        *tail = c;
        tail = &c->next;
        n++;
        if (ps->p >= ps->end || *ps->p != '|')
            break;
        ps->p++;
    }
    if (n == 1)
        return head;
    node *alt = mk(ps, N_ALT);
    alt->kids = head;
    return alt;
}

/* ---- compile ---- */

typedef struct compiler {
    parser *ps; /* its arena and byte count */
    inst *prog;
    size_t n, cap;
    int too_large;
} compiler;

static uint32_t emit(compiler *c, uint8_t op)
{
    if (c->n >= SK_CEL_RE_MAX_PROG) {
        c->too_large = 1;
        return (uint32_t)(c->n - 1);
    }
    c->prog = grow(c->ps, c->prog, c->n, &c->cap, sizeof *c->prog);
    memset(&c->prog[c->n], 0, sizeof *c->prog);
    c->prog[c->n].op = op;
    return (uint32_t)c->n++;
}

static void compile(compiler *c, const node *n);

static int nullable(const node *n)
{
    switch (n->kind) {
    case N_CLASS:
        return 0;
    case N_CAT:
        for (const node *k = n->kids; k; k = k->next)
            if (!nullable(k))
                return 0;
        return 1;
    case N_ALT:
        for (const node *k = n->kids; k; k = k->next)
            if (nullable(k))
                return 1;
        return 0;
    case N_REPEAT:
        return n->min == 0 || nullable(n->kids);
    default:
        return 1;
    }
}

static void plus(compiler *c, const node *x, int greedy)
{
    uint32_t body = (uint32_t)c->n;
    compile(c, x);
    uint32_t split = emit(c, OP_SPLIT);
    if (c->too_large)
        return;
    c->prog[split].x = greedy ? body : split + 1;
    c->prog[split].y = greedy ? split + 1 : body;
}

/* x*: a loop, but (x+)? when x matches the empty string, as Go compiles it
 * (golang.org/issue/46123): an empty pass through x must not outrank
 * leaving the loop. */
static void star(compiler *c, const node *x, int greedy)
{
    if (nullable(x)) {
        uint32_t split = emit(c, OP_SPLIT);
        plus(c, x, greedy);
        if (c->too_large)
            return;
        c->prog[split].x = greedy ? split + 1 : (uint32_t)c->n;
        c->prog[split].y = greedy ? (uint32_t)c->n : split + 1;
        return;
    }
    uint32_t split = emit(c, OP_SPLIT);
    compile(c, x);
    uint32_t jmp = emit(c, OP_JMP);
    if (c->too_large)
        return;
    c->prog[jmp].x = split;
    c->prog[split].x = greedy ? split + 1 : jmp + 1;
    c->prog[split].y = greedy ? jmp + 1 : split + 1;
}

static void compile(compiler *c, const node *n)
{
    if (c->too_large)
        return;
    switch (n->kind) {
    case N_EMPTY:
        break;
    case N_CLASS: {
        uint32_t i = emit(c, OP_CLASS);
        if (c->too_large)
            return;
        c->prog[i].r = n->r;
        c->prog[i].nr = n->nr;
        c->prog[i].fold = (uint8_t)n->fold;
        c->prog[i].negate = (uint8_t)n->negate;
        break;
    }
    case N_ASSERT: {
        uint32_t i = emit(c, OP_ASSERT);
        if (!c->too_large)
            c->prog[i].assertion = (uint8_t)n->assertion;
        break;
    }
    case N_CAT:
        for (const node *k = n->kids; k; k = k->next)
            compile(c, k);
        break;
    case N_ALT: {
        /* split(a, split(b, ...)), each branch jumping to the end */
        size_t count = 0, nj = 0;
        for (const node *k = n->kids; k; k = k->next)
            count++;
        uint32_t *js = take(c->ps, count * sizeof *js);
        for (const node *k = n->kids; k; k = k->next) {
            uint32_t split = 0;
            if (k->next)
                split = emit(c, OP_SPLIT);
            compile(c, k);
            if (k->next)
                js[nj++] = emit(c, OP_JMP);
            if (c->too_large)
                return;
            if (k->next) {
                c->prog[split].x = split + 1;
                c->prog[split].y = (uint32_t)c->n;
            }
        }
        for (size_t i = 0; i < nj; i++)
            c->prog[js[i]].x = (uint32_t)c->n;
        break;
    }
    case N_REPEAT: {
        const node *x = n->kids;
        if (n->min == 0 && n->max == -1) {
            star(c, x, n->greedy);
            break;
        }
        for (int i = 0; i < n->min - (n->max == -1); i++)
            compile(c, x);
        if (n->max == -1) {
            plus(c, x, n->greedy);
            break;
        }
        /* (x(x(x)?)?)?: each optional copy's split skips all the rest */
        size_t extra = (size_t)(n->max - n->min);
        uint32_t *splits = take(c->ps, (extra ? extra : 1) * sizeof *splits);
        for (size_t i = 0; i < extra; i++) {
            splits[i] = emit(c, OP_SPLIT);
            compile(c, x);
            if (c->too_large)
                return;
        }
        for (size_t i = 0; i < extra; i++) {
            c->prog[splits[i]].x = n->greedy ? splits[i] + 1 : (uint32_t)c->n;
            c->prog[splits[i]].y = n->greedy ? (uint32_t)c->n : splits[i] + 1;
        }
        break;
    }
    }
}

sk_cel_re *sk_cel_re_compile(sk_arena *a, const char *pat, size_t len, const char **err,
                             size_t *bytes)
{
    sk_cel_re *re = NULL;
    parser ps = {.a = a, .s = pat, .p = pat, .end = pat + len};
    if (!sk_utf8_valid(pat, len)) {
        fail(&ps, "invalid UTF-8", pat, len);
        goto out;
    }
    int flags = 0;
    node *root = parse_alt(&ps, &flags);
    if (root && ps.p < ps.end)
        root = fail(&ps, "unexpected )", pat, len);
    if (!root)
        goto out;
    compiler c = {.ps = &ps};
    compile(&c, root);
    emit(&c, OP_MATCH);
    if (c.too_large) {
        fail(&ps, "expression too large", "", 0);
        goto out;
    }
    re = take(&ps, sizeof *re);
    re->prog = c.prog;
    re->n = c.n;
    for (int i = 0; i < 2; i++) {
        re->lists[i].dense = take(&ps, c.n * sizeof(uint32_t));
        re->lists[i].sparse = take(&ps, c.n * sizeof(uint32_t));
        re->lists[i].start = take(&ps, c.n * sizeof(size_t));
    }
    re->stack = take(&ps, 2 * c.n * sizeof *re->stack);
out:
    if (!re)
        *err = ps.err;
    *bytes = ps.bytes;
    return re;
}

size_t sk_cel_re_size(const sk_cel_re *re)
{
    return re->n;
}

/* ---- run ---- */

static int has(const tlist *l, uint32_t pc)
{
    uint32_t i = l->sparse[pc];
    return i < l->n && l->dense[i] == pc;
}

static int is_word(const char *s, size_t len, size_t i)
{
    if (i >= len)
        return 0;
    char c = s[i];
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int assertion_holds(int kind, const char *s, size_t len, size_t pos)
{
    switch (kind) {
    case A_BOT:
        return pos == 0;
    case A_EOT:
        return pos == len;
    case A_BOL:
        return pos == 0 || s[pos - 1] == '\n';
    case A_EOL:
        return pos == len || s[pos] == '\n';
    case A_WORD:
        return (pos > 0 && is_word(s, len, pos - 1)) != is_word(s, len, pos);
    default:
        return (pos > 0 && is_word(s, len, pos - 1)) == is_word(s, len, pos);
    }
}

/* Adds the thread at pc (started at start) and every thread its empty
 * transitions reach at pos, in priority order; stack holds re->n slots.
 * Returns the instructions visited. */
static size_t add_thread(const sk_cel_re *re, tlist *l, uint32_t *stack, uint32_t pc, size_t start,
                         const char *s, size_t len, size_t pos)
{
    size_t top = 0, visited = 0;
    stack[top++] = pc;
    while (top) {
        pc = stack[--top];
        if (has(l, pc))
            continue;
        visited++;
        l->sparse[pc] = (uint32_t)l->n;
        l->dense[l->n] = pc;
        l->start[l->n++] = start;
        const inst *in = &re->prog[pc];
        switch (in->op) {
        case OP_JMP:
            stack[top++] = in->x;
            break;
        case OP_SPLIT:
            stack[top++] = in->y;
            stack[top++] = in->x;
            break;
        case OP_ASSERT:
            if (assertion_holds(in->assertion, s, len, pos))
                stack[top++] = pc + 1;
            break;
        default:
            break;
        }
    }
    return visited;
}

int sk_cel_re_search(sk_cel_re *re, const char *s, size_t len, size_t from, size_t *start,
                     size_t *end, uint64_t *work, uint64_t limit)
{
    tlist *cl = &re->lists[0], *nl = &re->lists[1];
    uint32_t *stack = re->stack;
    cl->n = nl->n = 0;
    int matched = 0, result = 0;
    size_t mstart = 0, mend = 0;
    int earliest = !start || !end;
    for (size_t pos = from;;) {
        if (!matched)
            *work += add_thread(re, cl, stack, 0, pos, s, len, pos);
        if (cl->n == 0)
            break;
        uint32_t c = 0;
        size_t w = 0;
        if (pos < len)
            w = sk_utf8_decode(s + pos, len - pos, &c);
        for (size_t i = 0; i < cl->n; i++) {
            const inst *in = &re->prog[cl->dense[i]];
            if (in->op == OP_MATCH) {
                matched = 1;
                mstart = cl->start[i];
                mend = pos;
                break; /* threads after this one have lower priority */
            }
            if (in->op == OP_CLASS && w && class_has(in, c))
                *work += add_thread(re, nl, stack, cl->dense[i] + 1, cl->start[i], s, len, pos + w);
        }
        *work += cl->n;
        if (*work > limit) {
            result = -1;
            goto out;
        }
        if (matched && earliest)
            break;
        tlist *t = cl;
        cl = nl;
        nl = t;
        nl->n = 0;
        if (pos >= len)
            break;
        pos += w;
    }
    result = matched;
    if (matched && !earliest) {
        *start = mstart;
        *end = mend;
    }
out:
    return result;
}
