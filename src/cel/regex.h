/*
 * regex.h - regular expressions as Go's regexp package (RE2) has them, for
 * CEL's matches() and Kubernetes' find()/findAll(): the syntax Go's
 * regexp/syntax accepts with its Perl flags (classes \d \s \w, POSIX
 * [[:alpha:]], \pN and \p{Greek}-style Unicode classes, flags (?imsU),
 * non-greedy repetition, \A \z \b \B, \Q...\E), leftmost-first matching,
 * UTF-8 code points as the units. What RE2 refuses (backreferences,
 * lookaround, possessive repetition) is a compile error in Go's words
 * ("error parsing regexp: invalid or unsupported Perl syntax: `(?=`").
 *
 * Time is linear: a pattern compiles to a program of at most
 * SK_CEL_RE_MAX_PROG instructions and a search runs every thread of the
 * program in lock step over the input (a Pike VM), so a search costs at
 * most (program size) x (input length + 1) thread steps whatever the
 * pattern, (a*)*b included. The caller bounds even that: a search counts
 * its thread steps into *work and gives up once they pass a limit.
 */
#ifndef SK_CEL_REGEX_H
#define SK_CEL_REGEX_H

#include "core/arena.h"

#include <stddef.h>
#include <stdint.h>

#define SK_CEL_RE_MAX_PROG 100000

typedef struct sk_cel_re sk_cel_re;

/* The compiled form of the len bytes at pat (borrowed), in a, or NULL with
 * *err set to Go's message (in a). *bytes is set to the memory taken from a
 * either way (the tree, the classes, the program and a search's working
 * memory), for a caller bounding memory: a short pattern can take much
 * (each \pL copies some 600 ranges, x{1000} a thousand copies of x). */
sk_cel_re *sk_cel_re_compile(sk_arena *a, const char *pat, size_t len, const char **err,
                             size_t *bytes);

/* The program's size in instructions: a search's cost per input character. */
size_t sk_cel_re_size(const sk_cel_re *re);

/* Searches the len bytes at s from byte offset from on for re's leftmost-
 * first match; on one returns 1 with [*start, *end) its byte offsets (when
 * start and end are not NULL; a caller that needs only whether there is a
 * match passes NULLs and the search stops at the first match found), 0
 * when there is none. The thread steps taken are added to *work; once
 * *work passes limit the search stops and returns -1. The search is
 * unanchored, but ^ and \A see the start of s, not from, and \b sees the
 * character before from. re holds the search's working memory (made with
 * it, 40 bytes an instruction), so one re serves one search at a time. */
int sk_cel_re_search(sk_cel_re *re, const char *s, size_t len, size_t from, size_t *start,
                     size_t *end, uint64_t *work, uint64_t limit);

#endif
