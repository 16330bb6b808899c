/*
 * jsontext.h - JSON text to and from jansson values, faster than
 * jansson's parser and encoder for what request bodies and stored objects
 * are made of.
 *
 * jansson's parser reads through a byte stream one character at a time
 * (about 14 us for a 1 KiB ConfigMap, the largest single cost of a create
 * on the request thread). This parser takes the common shape directly:
 * ASCII strings with the short escapes, integers up to 18 digits, objects,
 * arrays, true, false, null. Anything else (a byte above 0x7f, a \u
 * escape, a real, a longer integer, deep nesting, any error) makes it give
 * up and hand the whole text to json_loadb, so every answer, value and
 * error message alike, is jansson's.
 *
 * The encoder writes what json_dumps(v, JSON_COMPACT) writes, and leaves
 * to it the values whose spelling is jansson's own business: reals, strings
 * with bytes above 0x7f (its UTF-8 check), deep nesting.
 */
#ifndef SK_CORE_JSONTEXT_H
#define SK_CORE_JSONTEXT_H

#include <jansson.h>
#include <stddef.h>

/* As json_loadb(buf, len, 0, err): a new reference, or NULL with *err
 * (may be NULL) filled as jansson fills it; *err is untouched on success. */
json_t *sk_jsontext_load(const char *buf, size_t len, json_error_t *err);

/* As json_dumps(v, JSON_COMPACT) (a new string, or NULL where it fails),
 * and its length in *len_out. */
char *sk_jsontext_dump(const json_t *v, size_t *len_out);

/* As sk_jsontext_dump, and *mark_at_out is the offset in the text where
 * mark (a value inside v, compared by identity) begins, or SIZE_MAX if mark
 * is not in v or jansson wrote the text (see above). So a writer can dump
 * an object once and splice one value in later (the store stamps each
 * version's resourceVersion, known only at commit, into text dumped on the
 * request's thread). */
char *sk_jsontext_dump_marked(const json_t *v, const json_t *mark, size_t *len_out,
                              size_t *mark_at_out);

#endif
