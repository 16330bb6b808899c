/*
 * lib_url.c - k8s.io/apiserver/pkg/cel/library/urls.go at release-1.32:
 * url(), isURL(), getScheme, getHost, getHostname, getPort,
 * getEscapedPath, getQuery, over a port of what they use of Go's net/url
 * (parse, ParseRequestURI, Parse with a fragment, unescape and escape in
 * their modes, EscapedPath, Hostname, Port, Query, String).
 *
 * url() checks the string with ParseRequestURI (absolute URI or absolute
 * path) and keeps what Parse gives, as kube does; two URLs are equal when
 * their String() forms are (kube's URL.Equal), which is computed once when
 * the value is made. Every step here is linear in the string, which the
 * evaluator charged as an argument; getQuery's map is charged a step a
 * pair and its key search as value.h's lookups are.
 */
#include "cel/lib_url.h"

#include "cel/quote.h"
#include "core/buf.h"

#include <string.h>

enum mode { PATH = 1, HOST, ZONE, USER, QUERY, FRAGMENT };

typedef struct url {
    const char *scheme, *opaque, *host, *path, *raw_path, *raw_query, *fragment, *raw_fragment;
    const char *user, *password; /* user NULL: none; password NULL: not set */
    int omit_host, force_query;
    const char *string; /* String() */
} url;

static int url_equal(const void *x, const void *y)
{
    return strcmp(((const url *)x)->string, ((const url *)y)->string) == 0;
}

static size_t url_size(const void *x)
{
    return strlen(((const url *)x)->string);
}

static const sk_cel_opaque_type url_type = {"kubernetes.URL", url_equal, url_size, NULL};

static int ishex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int unhex(char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static int alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int should_escape(unsigned char c, enum mode m)
{
    if (alnum((char)c))
        return 0;
    if ((m == HOST || m == ZONE) && c && strchr("!$&'()*+,;=:[]<>\"", c))
        return 0;
    if (c && strchr("-_.~", c))
        return 0;
    if (c && strchr("$&+,/:;=?@", c)) {
        switch (m) {
        case PATH:
            return c == '?';
        case USER:
            return c == '@' || c == '/' || c == '?' || c == ':';
        case QUERY:
            return 1;
        case FRAGMENT:
            return 0;
        default:
            break;
        }
    }
    if (m == FRAGMENT && c && strchr("!()*", c))
        return 0;
    return 1;
}

/* Go's unescape of s[0..n) in mode m: a new string, or NULL with *err. */
static char *unescape(sk_arena *a, const char *s, size_t n, enum mode m, const char **err)
{
    for (size_t i = 0; i < n;) {
        if (s[i] == '%') {
            if (i + 2 >= n || !ishex(s[i + 1]) || !ishex(s[i + 2])) {
                size_t k = n - i > 3 ? 3 : n - i;
                *err = sk_arena_printf(a, "invalid URL escape %s", sk_cel_go_quote(a, s + i, k));
                return NULL;
            }
            int v = unhex(s[i + 1]) << 4 | unhex(s[i + 2]);
            int pct25 = s[i + 1] == '2' && s[i + 2] == '5';
            if ((m == HOST && unhex(s[i + 1]) < 8 && !pct25) ||
                (m == ZONE && !pct25 && v != ' ' && should_escape((unsigned char)v, HOST))) {
                *err = sk_arena_printf(a, "invalid URL escape %s", sk_cel_go_quote(a, s + i, 3));
                return NULL;
            }
            i += 3;
        } else {
            if ((m == HOST || m == ZONE) && (unsigned char)s[i] < 0x80 &&
                should_escape((unsigned char)s[i], m)) {
                *err = sk_arena_printf(a, "invalid character %s in host name",
                                       sk_cel_go_quote(a, s + i, 1));
                return NULL;
            }
            i++;
        }
    }
    char *out = sk_arena_alloc(a, n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            *o++ = (char)(unhex(s[i + 1]) << 4 | unhex(s[i + 2]));
            i += 2;
        } else {
            *o++ = s[i] == '+' && m == QUERY ? ' ' : s[i];
        }
    }
    *o = 0;
    return out;
}

static void escape(sk_buf *b, const char *s, enum mode m)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == ' ' && m == QUERY)
            sk_buf_putc(b, '+');
        else if (should_escape(c, m))
            sk_buf_printf(b, "%%%c%c", hex[c >> 4], hex[c & 15]);
        else
            sk_buf_putc(b, (char)c);
    }
}

static const char *escaped(sk_arena *a, const char *s, enum mode m)
{
    sk_buf b = SK_BUF_INIT;
    escape(&b, s, m);
    const char *r = sk_arena_strndup(a, b.data ? b.data : "", b.len);
    sk_buf_free(&b);
    return r;
}

static int valid_port(const char *p, size_t n)
{
    if (n == 0)
        return 1;
    if (p[0] != ':')
        return 0;
    for (size_t i = 1; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return 0;
    return 1;
}

/* Go's parseHost: the unescaped host, or NULL with *err. */
static char *parse_host(sk_arena *a, const char *h, size_t n, const char **err)
{
    if (n && h[0] == '[') {
        const char *close = NULL;
        for (size_t i = n; i > 0 && !close; i--)
            if (h[i - 1] == ']')
                close = h + i - 1;
        if (!close) {
            *err = "missing ']' in host";
            return NULL;
        }
        size_t pl = n - (size_t)(close + 1 - h);
        if (!valid_port(close + 1, pl)) {
            *err =
                sk_arena_printf(a, "invalid port %s after host", sk_cel_go_quote(a, close + 1, pl));
            return NULL;
        }
        const char *zone = NULL;
        for (const char *q = h; q + 2 < close && !zone; q++)
            if (q[0] == '%' && q[1] == '2' && q[2] == '5')
                zone = q;
        if (zone) {
            char *h1 = unescape(a, h, (size_t)(zone - h), HOST, err);
            char *h2 = h1 ? unescape(a, zone, (size_t)(close - zone), ZONE, err) : NULL;
            char *h3 = h2 ? unescape(a, close, n - (size_t)(close - h), HOST, err) : NULL;
            return h3 ? sk_arena_printf(a, "%s%s%s", h1, h2, h3) : NULL;
        }
    } else {
        const char *colon = NULL;
        for (size_t i = n; i > 0 && !colon; i--)
            if (h[i - 1] == ':')
                colon = h + i - 1;
        if (colon && !valid_port(colon, n - (size_t)(colon - h))) {
            *err = sk_arena_printf(a, "invalid port %s after host",
                                   sk_cel_go_quote(a, colon, n - (size_t)(colon - h)));
            return NULL;
        }
    }
    return unescape(a, h, n, HOST, err);
}

static int valid_userinfo(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && !strchr("-._:~!$&'()*+,;=%@", s[i]))
            return 0;
    return 1;
}

/* Go's parse(raw, viaRequest) of s[0..n): 1, or 0 with *err. */
static int parse(sk_arena *a, const char *s, size_t n, int via_request, url *u, const char **err)
{
    memset(u, 0, sizeof *u);
    u->scheme = u->opaque = u->host = u->path = u->raw_path = u->raw_query = u->fragment =
        u->raw_fragment = "";
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < ' ' || s[i] == 0x7f) {
            *err = "net/url: invalid control character in URL";
            return 0;
        }
    if (n == 0 && via_request) {
        *err = "empty url";
        return 0;
    }
    if (n == 1 && s[0] == '*') {
        u->path = "*";
        return 1;
    }
    /* getScheme */
    const char *rest = s;
    size_t rn = n;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            continue;
        if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
            if (i == 0)
                break;
            continue;
        }
        if (c == ':') {
            if (i == 0) {
                *err = "missing protocol scheme";
                return 0;
            }
            char *scheme = sk_arena_strndup(a, s, i);
            for (char *p = scheme; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                    *p += 32;
            u->scheme = scheme;
            rest = s + i + 1;
            rn = n - i - 1;
        }
        break;
    }
    const char *q = memchr(rest, '?', rn);
    if (q && q == rest + rn - 1) {
        u->force_query = 1;
        rn--;
    } else if (q) {
        u->raw_query = sk_arena_strndup(a, q + 1, rn - (size_t)(q + 1 - rest));
        rn = (size_t)(q - rest);
    }
    if (!(rn && rest[0] == '/')) {
        if (*u->scheme) {
            u->opaque = sk_arena_strndup(a, rest, rn);
            return 1;
        }
        if (via_request) {
            *err = "invalid URI for request";
            return 0;
        }
        const char *slash = memchr(rest, '/', rn);
        size_t seg = slash ? (size_t)(slash - rest) : rn;
        if (memchr(rest, ':', seg)) {
            *err = "first path segment in URL cannot contain colon";
            return 0;
        }
    }
    int slashes2 = rn >= 2 && rest[0] == '/' && rest[1] == '/';
    int slashes3 = slashes2 && rn >= 3 && rest[2] == '/';
    if ((*u->scheme || (!via_request && !slashes3)) && slashes2) {
        const char *auth = rest + 2;
        size_t an = rn - 2;
        const char *slash = memchr(auth, '/', an);
        if (slash)
            an = (size_t)(slash - auth);
        rest = auth + an;
        rn = rn - 2 - an;
        const char *at = NULL;
        for (size_t i = an; i > 0 && !at; i--)
            if (auth[i - 1] == '@')
                at = auth + i - 1;
        const char *h = at ? at + 1 : auth;
        char *host = parse_host(a, h, an - (size_t)(h - auth), err);
        if (!host)
            return 0;
        u->host = host;
        if (at) {
            size_t un = (size_t)(at - auth);
            if (!valid_userinfo(auth, un)) {
                *err = "net/url: invalid userinfo";
                return 0;
            }
            const char *colon = memchr(auth, ':', un);
            size_t namelen = colon ? (size_t)(colon - auth) : un;
            if (!(u->user = unescape(a, auth, namelen, USER, err)))
                return 0;
            if (colon && !(u->password = unescape(a, colon + 1, un - namelen - 1, USER, err)))
                return 0;
        }
    } else if (*u->scheme && rn && rest[0] == '/') {
        u->omit_host = 1;
    }
    /* setPath */
    char *path = unescape(a, rest, rn, PATH, err);
    if (!path)
        return 0;
    u->path = path;
    const char *e = escaped(a, path, PATH);
    if (strlen(e) != rn || memcmp(e, rest, rn) != 0)
        u->raw_path = sk_arena_strndup(a, rest, rn);
    return 1;
}

static int valid_encoded(const char *s, enum mode m)
{
    for (; *s; s++)
        if (!strchr("!$&'()*+,;=:@[]%", *s) && should_escape((unsigned char)*s, m))
            return 0;
    return 1;
}

static const char *escaped_path(sk_arena *a, const url *u)
{
    if (*u->raw_path && valid_encoded(u->raw_path, PATH)) {
        const char *err;
        char *p = unescape(a, u->raw_path, strlen(u->raw_path), PATH, &err);
        if (p && strcmp(p, u->path) == 0)
            return u->raw_path;
    }
    if (strcmp(u->path, "*") == 0)
        return "*";
    return escaped(a, u->path, PATH);
}

static const char *escaped_fragment(sk_arena *a, const url *u)
{
    if (*u->raw_fragment && valid_encoded(u->raw_fragment, FRAGMENT)) {
        const char *err;
        char *f = unescape(a, u->raw_fragment, strlen(u->raw_fragment), FRAGMENT, &err);
        if (f && strcmp(f, u->fragment) == 0)
            return u->raw_fragment;
    }
    return escaped(a, u->fragment, FRAGMENT);
}

/* Go's URL.String(). */
static const char *url_string(sk_arena *a, const url *u)
{
    sk_buf b = SK_BUF_INIT;
    if (*u->scheme)
        sk_buf_printf(&b, "%s:", u->scheme);
    if (*u->opaque) {
        sk_buf_puts(&b, u->opaque);
    } else {
        if ((*u->scheme || *u->host || u->user) && !(u->omit_host && !*u->host && !u->user)) {
            if (*u->host || *u->path || u->user)
                sk_buf_puts(&b, "//");
            if (u->user) {
                escape(&b, u->user, USER);
                if (u->password) {
                    sk_buf_putc(&b, ':');
                    escape(&b, u->password, USER);
                }
                sk_buf_putc(&b, '@');
            }
            escape(&b, u->host, HOST);
        }
        const char *path = escaped_path(a, u);
        if (*path && path[0] != '/' && *u->host)
            sk_buf_putc(&b, '/');
        if (b.len == 0) {
            const char *slash = strchr(path, '/');
            size_t seg = slash ? (size_t)(slash - path) : strlen(path);
            if (memchr(path, ':', seg))
                sk_buf_puts(&b, "./");
        }
        sk_buf_puts(&b, path);
    }
    if (u->force_query || *u->raw_query)
        sk_buf_printf(&b, "?%s", u->raw_query);
    if (*u->fragment)
        sk_buf_printf(&b, "#%s", escaped_fragment(a, u));
    const char *r = sk_arena_strndup(a, b.data ? b.data : "", b.len);
    sk_buf_free(&b);
    return r;
}

const char *sk_cel_url_request_error(sk_arena *a, const char *s, size_t n)
{
    const char *err = NULL;
    url *u = sk_arena_alloc(a, sizeof *u);
    if (parse(a, s, n, 1, u, &err))
        return NULL;
    return sk_arena_printf(a, "parse %s: %s", sk_cel_go_quote(a, s, n), err);
}

/* url(s): ParseRequestURI, then Parse (splitting the fragment off). */
static const sk_cel_val *to_url(sk_arena *a, const sk_cel_val *v, int check_only)
{
    const char *s = v->u.str.s, *err = NULL;
    size_t n = v->u.str.len;
    url *u = sk_arena_alloc(a, sizeof *u);
    const char *quoted_in = NULL;
    if (!parse(a, s, n, 1, u, &err)) {
        quoted_in = sk_cel_go_quote(a, s, n);
    } else if (!check_only) {
        const char *hash = memchr(s, '#', n);
        size_t un = hash ? (size_t)(hash - s) : n;
        if (!parse(a, s, un, 0, u, &err)) {
            quoted_in = sk_cel_go_quote(a, s, un);
        } else if (hash) {
            char *frag = unescape(a, hash + 1, n - un - 1, FRAGMENT, &err);
            if (!frag) {
                quoted_in = sk_cel_go_quote(a, s, n);
            } else {
                u->fragment = frag;
                const char *e = escaped(a, frag, FRAGMENT);
                if (strlen(e) != n - un - 1 || memcmp(e, hash + 1, n - un - 1) != 0)
                    u->raw_fragment = sk_arena_strndup(a, hash + 1, n - un - 1);
            }
        }
    }
    if (check_only)
        return sk_cel_bool(!quoted_in);
    if (quoted_in)
        return sk_cel_error(a, "URL parse error during conversion from string: parse %s: %s",
                            quoted_in, err);
    u->string = url_string(a, u);
    return sk_cel_opaque(a, &url_type, u);
}

static const sk_cel_val *str(sk_arena *a, const char *s, size_t n)
{
    return sk_cel_string(a, sk_arena_strndup(a, s, n), n);
}

/* Go's splitHostPort, for Hostname and Port. */
static const sk_cel_val *host_part(sk_arena *a, const char *h, int port)
{
    size_t n = strlen(h), hn = n;
    const char *colon = strrchr(h, ':');
    const char *p = "";
    size_t pn = 0;
    if (colon && valid_port(colon, n - (size_t)(colon - h))) {
        hn = (size_t)(colon - h);
        p = colon + 1;
        pn = n - hn - 1;
    }
    if (port)
        return str(a, p, pn);
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']')
        return str(a, h + 1, hn - 2);
    return str(a, h, hn);
}

/* Go's Query(): ParseQuery with its errors dropped (a pair with ';' or a
 * bad escape is skipped), values in order, keys in first appearance. */
static const sk_cel_val *query(sk_cel_env *env, const url *u)
{
    sk_arena *a = sk_cel_env_arena(env);
    const sk_cel_val **keys = NULL, **vals = NULL;
    size_t nk = 0, kcap = 0, vcap = 0;
    const char *q = u->raw_query;
    while (*q) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        const char *pair = q;
        q = amp ? amp + 1 : q + len;
        if (!sk_cel_env_charge(env, 1))
            return sk_cel_env_exhausted(env);
        if (len == 0 || memchr(pair, ';', len))
            continue;
        const char *eq = memchr(pair, '=', len), *err;
        size_t kl = eq ? (size_t)(eq - pair) : len;
        char *k = unescape(a, pair, kl, QUERY, &err);
        char *v = k ? unescape(a, eq ? eq + 1 : "", eq ? len - kl - 1 : 0, QUERY, &err) : NULL;
        if (!v)
            continue;
        /* the keys so far are searched linearly, and charged: a query of
         * many distinct keys costs its square, not its length */
        size_t i;
        for (i = 0; i < nk && strcmp(keys[i]->u.str.s, k) != 0; i++)
            ;
        if (!sk_cel_env_charge(env, i / 64))
            return sk_cel_env_exhausted(env);
        const sk_cel_val **one = sk_arena_alloc(a, sizeof *one);
        one[0] = sk_cel_string(a, v, strlen(v));
        if (i == nk) {
            keys = sk_arena_grow(a, keys, nk, &kcap, sizeof *keys);
            vals = sk_arena_grow(a, vals, nk, &vcap, sizeof *vals);
            keys[nk] = sk_cel_string(a, k, strlen(k));
            vals[nk++] = sk_cel_list(a, one, 1);
        } else {
            size_t copied;
            vals[i] = sk_cel_list_concat(a, vals[i], sk_cel_list(a, one, 1), &copied);
        }
    }
    return sk_cel_map(a, keys, vals, nk);
}

const sk_cel_val *sk_cel_lib_url(sk_cel_env *env, const char *f, int method,
                                 const sk_cel_val *const *v, size_t n)
{
    sk_arena *a = sk_cel_env_arena(env);
    if (n != 1)
        return NULL;
    if (!method) {
        int is_url = strcmp(f, "isURL") == 0;
        if (!is_url && strcmp(f, "url") != 0)
            return NULL;
        if (v[0]->type != SK_CEL_V_STRING)
            return sk_cel_error(a, "no such overload");
        return to_url(a, v[0], is_url);
    }
    if (v[0]->type != SK_CEL_V_OPAQUE || v[0]->u.opaque.type != &url_type)
        return NULL;
    const url *u = v[0]->u.opaque.data;
    if (strcmp(f, "getScheme") == 0)
        return str(a, u->scheme, strlen(u->scheme));
    if (strcmp(f, "getHost") == 0)
        return str(a, u->host, strlen(u->host));
    if (strcmp(f, "getHostname") == 0)
        return host_part(a, u->host, 0);
    if (strcmp(f, "getPort") == 0)
        return host_part(a, u->host, 1);
    if (strcmp(f, "getEscapedPath") == 0) {
        const char *p = escaped_path(a, u);
        return str(a, p, strlen(p));
    }
    if (strcmp(f, "getQuery") == 0)
        return query(env, u);
    return NULL;
}
