/*
 * manage.c - see manage.h.
 */
#include "api/manage.h"
#include "core/buf.h"
#include "core/util.h"
#include "kube/status_rules.h"

#include <string.h>

#define MAX_MANAGER_LEN 128 /* kube's FieldManagerMaxLength */

/* kube's ValidateFieldManager: at most 128 bytes, printable. -1 after
 * replying. (Only ASCII controls are caught as unprintable.) */
static int refuse_manager(sk_api_call *call, const char *fm, const char *options_kind)
{
    size_t n = strlen(fm);
    if (n > MAX_MANAGER_LEN) {
        sk_call_reply_status_object(call, sk_options_invalid(options_kind, "FieldValueTooLong",
                                                             "fieldManager", "Too long",
                                                             "may not be more than 128 bytes"));
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)fm[i];
        if (c >= 0x20 && c != 0x7f)
            continue;
        sk_buf detail = SK_BUF_INIT;
        sk_buf_go_quoted(&detail, fm);
        sk_buf_printf(&detail, ": invalid character U+%04X (at position %zu)", c, i);
        sk_call_reply_status_object(call, sk_options_invalid(options_kind, "FieldValueInvalid",
                                                             "fieldManager", "Invalid value",
                                                             detail.data));
        sk_buf_free(&detail);
        return -1;
    }
    return 0;
}

int sk_manage_begin(sk_api_call *call, const sk_write_options *wo, const char *options_kind,
                    int apply, sk_manage *m)
{
    memset(m, 0, sizeof *m);
    const char *fm = wo->field_manager;
    if (apply && !fm) {
        sk_call_reply_status_object(call, sk_options_invalid(options_kind, "FieldValueRequired",
                                                             "fieldManager", "Required value",
                                                             "is required for apply patch"));
        return -1;
    }
    if (!apply && wo->force_given && strcmp(options_kind, "PatchOptions") == 0) {
        sk_call_reply_status_object(call, sk_options_invalid(options_kind, "FieldValueForbidden",
                                                             "force", "Forbidden",
                                                             "may not be specified for non-apply "
                                                             "patch"));
        return -1;
    }
    if (fm && refuse_manager(call, fm, options_kind) < 0)
        return -1;
    if (fm)
        strcpy(m->manager, fm);
    else
        sk_managed_from_user_agent(call->user_agent, m->manager, sizeof m->manager);
    sk_format_rfc3339(sk_wall_s(), m->now);
    m->type.schema = call->res->schema;
    m->type.openapi = call->res->custom ? call->res->custom->schema : NULL;
    m->w.manager = m->manager;
    m->w.api_version = call->res->api_version;
    m->w.subresource = call->route.sub ? call->route.sub->name : NULL;
    m->w.now = m->now;
    m->w.status_subresource = sk_status_rules_has_status(call->res);
    return 0;
}
