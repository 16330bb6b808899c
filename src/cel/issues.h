/*
 * issues.h - a parse's errors as cel-go prints them (common.Errors
 * ToDisplayString), the text Kubernetes puts after "compilation failed: ":
 * each error "ERROR: <input>:<line>:<col>: <message>", then, when the line
 * exists, the source line and a caret under the column ('.' for each code
 * point before it, the full-width forms for wide ones), errors joined by
 * newlines.
 */
#ifndef SK_CEL_ISSUES_H
#define SK_CEL_ISSUES_H

#include "cel/parse.h"
#include "core/buf.h"

#include <stddef.h>

/* Appends to b the errors of ast, parsed from the len bytes at src. */
void sk_cel_issues_format(sk_buf *b, const char *src, size_t len, const sk_cel_ast *ast);

/* Appends one error at line/col (1-based, as sk_cel_diag) with message. */
void sk_cel_issue_format(sk_buf *b, const char *src, size_t len, int line, int col,
                         const char *message);

#endif
