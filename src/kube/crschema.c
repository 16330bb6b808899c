/*
 * crschema.c - see crschema.h. A short list under a mutex: there are as
 * many entries as served custom resource versions ever installed, each
 * with every compiled form of its schema.
 */
#include "kube/crschema.h"
#include "core/buf.h"
#include "core/check.h"

#include <pthread.h>
#include <stdlib.h>

/* One schema's forms; made[i]: forms[i] was made (it may be NULL). */
typedef struct compiled {
    struct compiled *next;
    const json_t *schema; /* the registry entry's, never freed */
    const void *forms[SK_CRSCHEMA_FORMS];
    unsigned char made[SK_CRSCHEMA_FORMS];
} compiled;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static compiled *all;

const void *sk_crschema_form_of(const sk_resource *r, sk_crschema_form form,
                                void *(*make)(const json_t *schema))
{
    if (!r->custom || !r->custom->schema)
        return NULL;
    SK_CHECK(form < SK_CRSCHEMA_FORMS);
    pthread_mutex_lock(&mu);
    compiled *c = all;
    while (c && c->schema != r->custom->schema)
        c = c->next;
    if (!c) {
        c = calloc(1, sizeof *c);
        SK_CHECK_ALLOC(c);
        c->schema = r->custom->schema;
        c->next = all;
        all = c;
    }
    if (!c->made[form]) {
        c->forms[form] = make(c->schema);
        c->made[form] = 1;
    }
    const void *out = c->forms[form];
    pthread_mutex_unlock(&mu);
    return out;
}

/* The structural form; NULL when the schema does not compile. */
static void *make_structural(const json_t *schema)
{
    sk_structural *s = NULL;
    sk_field_errors *fe = sk_field_errors_new();
    if (sk_structural_compile(schema, "openAPIV3Schema", fe, &s) != SK_OK)
        s = NULL;
    sk_field_errors_free(fe);
    return s;
}

const sk_structural *sk_crschema_of(const sk_resource *r)
{
    return sk_crschema_form_of(r, SK_CRSCHEMA_STRUCTURAL, make_structural);
}

void sk_crschema_check_crd(const json_t *crd, sk_field_errors *fe)
{
    size_t i;
    const json_t *ver;
    json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), i, ver)
    {
        const json_t *schema = json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema");
        if (!json_is_object(schema))
            continue; /* a missing schema is the CRD validation's to report */
        sk_buf path = SK_BUF_INIT;
        sk_buf_printf(&path, "spec.versions[%zu].schema.openAPIV3Schema", i);
        sk_structural *s = NULL;
        if (sk_structural_compile(schema, path.data, fe, &s) == SK_OK)
            sk_structural_free(s);
        sk_buf_free(&path);
    }
}
