/*
 * formats.c - see formats.h. The table follows format.go's
 * ConstantFormats entry by entry.
 */
#include "policy/formats.h"
#include "cel/lib_url.h"
#include "core/check.h"
#include "kube/strfmt.h"
#include "kube/validate.h"

#include <string.h>

_Static_assert(SK_VALIDATE_MAX_MSGS <= SK_CEL_FORMAT_MAX_MSGS, "room for every message");

/* A kube-openapi format and the one message format.go gives for it. */
static size_t openapi(const char *format, const char *s, const char *msg, const char **msgs)
{
    sk_strfmt_check check = sk_strfmt_lookup(format);
    SK_CHECK(check != NULL);
    if (check(s))
        return 0;
    msgs[0] = msg;
    return 1;
}

size_t sk_policy_format_validate(const char *format, const char *s, sk_arena *a,
                                 const char *msgs[SK_CEL_FORMAT_MAX_MSGS])
{
    static const struct {
        const char *name;
        sk_validate_name_kind kind;
        int prefix;
    } names[] = {
        {"dns1123Label", SK_VALIDATE_DNS1123_LABEL, 0},
        {"dns1123Subdomain", SK_VALIDATE_DNS1123_SUBDOMAIN, 0},
        {"dns1035Label", SK_VALIDATE_DNS1035_LABEL, 0},
        {"dns1123LabelPrefix", SK_VALIDATE_DNS1123_LABEL, 1},
        {"dns1123SubdomainPrefix", SK_VALIDATE_DNS1123_SUBDOMAIN, 1},
        {"dns1035LabelPrefix", SK_VALIDATE_DNS1035_LABEL, 1},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(format, names[i].name) == 0)
            return sk_validate_name_is(names[i].kind, s, names[i].prefix, msgs);
    if (strcmp(format, "qualifiedName") == 0)
        return sk_validate_qualified_name(s, msgs);
    if (strcmp(format, "labelValue") == 0)
        return sk_validate_label_value(s, msgs);
    if (strcmp(format, "uri") == 0) {
        const char *err = sk_cel_url_request_error(a, s, strlen(s));
        if (err)
            msgs[0] = err;
        return err != NULL;
    }
    if (strcmp(format, "uuid") == 0)
        return openapi("uuid", s, "does not match the UUID format", msgs);
    if (strcmp(format, "byte") == 0)
        return openapi("byte", s, "invalid base64", msgs);
    if (strcmp(format, "date") == 0)
        return openapi("date", s, "invalid date", msgs);
    SK_CHECK(strcmp(format, "datetime") == 0); /* lib_format.h's table, all of it */
    return openapi("datetime", s, "invalid datetime", msgs);
}
