/*
 * selector.h - ?labelSelector= and ?fieldSelector= of list and watch.
 *
 * Parsing follows k8s.io/apimachinery labels.Parse and fields.ParseSelector,
 * error messages included, so a bad selector gets kube-apiserver's 400.
 * Parsed selectors are immutable and may be shared between threads.
 */
#ifndef SK_KUBE_SELECTOR_H
#define SK_KUBE_SELECTOR_H

#include "kube/registry.h"
#include "core/err.h"

#include <jansson.h>

typedef struct sk_label_selector sk_label_selector;

/*
 * Parses a label selector: comma-separated (AND) requirements `k=v`, `k==v`,
 * `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>n`, `k<n`; whitespace
 * between tokens is ignored; keys and values are validated as label keys and
 * values. "" selects everything. On success *out is new (free with
 * sk_label_selector_free). Invalid: SK_ERR_BAD_REQUEST and *errmsg a new
 * string with labels.Parse's message ("unable to parse requirement: ...").
 */
sk_err sk_label_selector_parse(const char *s, sk_label_selector **out, char **errmsg);
/* labels: the object's metadata.labels (borrowed; NULL or non-object means
 * no labels). Returns 1 if every requirement holds. */
int sk_label_selector_matches(const sk_label_selector *sel, const json_t *labels);
/* 1 if sel has no requirements (matches everything). */
int sk_label_selector_is_empty(const sk_label_selector *sel);
void sk_label_selector_free(sk_label_selector *sel);

typedef struct sk_field_selector sk_field_selector;

/*
 * Parses a field selector: comma-separated `field=value`, `field==value`,
 * `field!=value`; `\,` `\=` `\\` escape inside values, an unescaped `,`
 * splits terms and an unescaped `=` in a value is an error. Allowed fields:
 * metadata.name, metadata.namespace and r->field_selectors (r borrowed for
 * the call). On success *out is new. Errors: SK_ERR_BAD_REQUEST with
 * *errmsg new, e.g. "field label not supported: spec.foo".
 */
sk_err sk_field_selector_parse(const char *s, const sk_resource *r, sk_field_selector **out,
                               char **errmsg);
/* obj: the whole object (borrowed). Fields are dotted paths into it; a
 * missing or non-string field compares as "". */
int sk_field_selector_matches(const sk_field_selector *sel, const json_t *obj);
/* The value an `=`/`==` term requires of field (borrowed from sel), or NULL
 * if no such term: lets a list narrow its store range by name/namespace. */
const char *sk_field_selector_required(const sk_field_selector *sel, const char *field);
void sk_field_selector_free(sk_field_selector *sel);

#endif
