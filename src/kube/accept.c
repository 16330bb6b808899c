/*
 * accept.c - see accept.h. kube parses Accept with goautoneg: clauses split
 * on commas, parameters on semicolons, sorted by q and then specificity
 * (type/subtype before type/ *, before * / *), the sort keeping the order of
 * equals for the short headers clients send. Each clause is then tried
 * against the server's media types in its serializer order (JSON, YAML,
 * protobuf) and its parameters against the endpoint's restrictions; the
 * first that passes wins. YAML is not written here, so a clause that only
 * YAML matches passes on to the next.
 */
#include "kube/accept.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_CLAUSES 32

typedef struct clause {
    char type[64], subtype[64];
    char as[40], g[40], v[16], stream[16];
    int has_as; /* as, g or v given: a conversion asked for */
    double q;
    int order;
} clause;

static void copy_trimmed(char *out, size_t cap, const char *p, size_t n)
{
    while (n && (*p == ' ' || *p == '\t'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

/* One clause from p[0..n); 0 if it has no type/subtype. */
static int parse_clause(const char *p, size_t n, clause *c)
{
    memset(c, 0, sizeof *c);
    c->q = 1.0;
    size_t tn = 0;
    while (tn < n && p[tn] != ';')
        tn++;
    char media[130];
    copy_trimmed(media, sizeof media, p, tn);
    char *slash = strchr(media, '/');
    if (!slash || slash == media || !slash[1])
        return 0;
    *slash = '\0';
    copy_trimmed(c->type, sizeof c->type, media, strlen(media));
    copy_trimmed(c->subtype, sizeof c->subtype, slash + 1, strlen(slash + 1));
    const char *q = p + tn, *end = p + n;
    while (q < end) {
        q++; /* the ';' */
        const char *semi = memchr(q, ';', (size_t)(end - q));
        const char *stop = semi ? semi : end;
        const char *eq = memchr(q, '=', (size_t)(stop - q));
        if (eq) {
            char key[16], qval[16];
            const char *v = eq + 1;
            size_t vn = (size_t)(stop - v);
            copy_trimmed(key, sizeof key, q, (size_t)(eq - q));
            if (strcasecmp(key, "q") == 0) {
                copy_trimmed(qval, sizeof qval, v, vn);
                c->q = strtod(qval, NULL);
            } else if (strcmp(key, "as") == 0) {
                copy_trimmed(c->as, sizeof c->as, v, vn);
                c->has_as = 1;
            } else if (strcmp(key, "g") == 0) {
                copy_trimmed(c->g, sizeof c->g, v, vn);
                c->has_as = 1;
            } else if (strcmp(key, "v") == 0) {
                copy_trimmed(c->v, sizeof c->v, v, vn);
                c->has_as = 1;
            } else if (strcmp(key, "stream") == 0) {
                copy_trimmed(c->stream, sizeof c->stream, v, vn);
            }
        }
        q = stop;
    }
    return 1;
}

static int specificity(const clause *c)
{
    return (strcmp(c->type, "*") != 0) + (strcmp(c->subtype, "*") != 0);
}

static int by_preference(const void *pa, const void *pb)
{
    const clause *a = pa, *b = pb;
    if (a->q != b->q)
        return a->q > b->q ? -1 : 1;
    if (specificity(a) != specificity(b))
        return specificity(b) - specificity(a);
    return a->order - b->order;
}

typedef enum { MEDIA_JSON, MEDIA_YAML, MEDIA_PROTOBUF } media;

static const struct {
    const char *type, *subtype;
} medias[] = {
    [MEDIA_JSON] = {"application", "json"},
    [MEDIA_YAML] = {"application", "yaml"},
    [MEDIA_PROTOBUF] = {"application", "vnd.kubernetes.protobuf"},
};

/* The conversion c asks for, if the server makes it in media m. */
static int converts(const clause *c, media m, sk_accept *out)
{
    out->as = SK_AS_OBJECT;
    out->meta_version = NULL;
    if (!c->has_as)
        return 1;
    if (strcmp(c->g, "meta.k8s.io") != 0 || (strcmp(c->v, "v1") && strcmp(c->v, "v1beta1")))
        return 0;
    out->meta_version = strcmp(c->v, "v1") == 0 ? "v1" : "v1beta1";
    if (strcmp(c->as, "Table") == 0)
        out->as = SK_AS_TABLE;
    else if (strcmp(c->as, "PartialObjectMetadata") == 0)
        out->as = SK_AS_PARTIAL;
    else if (strcmp(c->as, "PartialObjectMetadataList") == 0)
        out->as = SK_AS_PARTIAL_LIST;
    else
        return 0;
    /* kube's AllowsMediaTypeTransform: a Table in JSON (or YAML) only, the
     * metadata-only forms in every media type, protobuf included, for
     * custom resources too (their messages are meta.k8s.io's own) */
    return out->as == SK_AS_TABLE ? m == MEDIA_JSON : 1;
}

sk_err sk_accept_negotiate(const char *header, int protobuf_ok, sk_accept *out)
{
    sk_accept pick = {0, SK_AS_OBJECT, NULL};
    clause cs[MAX_CLAUSES];
    size_t n = 0;
    int asked_conversion = 0;
    for (const char *p = header; p && *p && n < MAX_CLAUSES;) {
        size_t len = strcspn(p, ",");
        if (parse_clause(p, len, &cs[n]) && cs[n].q > 0) {
            cs[n].order = (int)n;
            asked_conversion |= cs[n].has_as;
            n++;
        }
        p += len + (p[len] == ',');
    }
    qsort(cs, n, sizeof *cs, by_preference);
    for (size_t i = 0; i < n; i++) {
        for (media m = MEDIA_JSON; m <= MEDIA_PROTOBUF; m++) {
            int type_ok = strcmp(cs[i].type, "*") == 0 ||
                          strcasecmp(cs[i].type, medias[m].type) == 0;
            int sub_ok = strcmp(cs[i].subtype, "*") == 0 ||
                         strcasecmp(cs[i].subtype, medias[m].subtype) == 0;
            if (!type_ok || !sub_ok || (strcmp(cs[i].type, "*") == 0 && strcmp(cs[i].subtype, "*")))
                continue;
            if (cs[i].stream[0] && strcmp(cs[i].stream, "watch") != 0)
                continue;
            sk_accept a;
            if (!converts(&cs[i], m, &a))
                continue;
            /* matched, but not written here: kube would answer it; the next
             * clause may be one this server writes */
            if (m == MEDIA_YAML || (m == MEDIA_PROTOBUF && !protobuf_ok && a.as == SK_AS_OBJECT))
                continue;
            a.protobuf = m == MEDIA_PROTOBUF;
            *out = a;
            return SK_OK;
        }
    }
    if (asked_conversion)
        return SK_ERR_NOT_ACCEPTABLE;
    *out = pick;
    return SK_OK;
}
