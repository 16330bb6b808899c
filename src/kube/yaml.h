/*
 * yaml.h - a YAML document (a server-side apply body: YAML, or JSON, which
 * is YAML) as JSON, the way kube-apiserver's sigs.k8s.io/yaml reads it:
 * plain scalars resolve as YAML 1.1 does (null, ~, true/false/yes/no/on/off,
 * integers, floats), quoted ones stay strings, anchors and aliases are
 * expanded, map keys become strings.
 *
 * Parsing is libyaml's (the same grammar and messages go-yaml, a port of
 * it, gives). Pure: no I/O.
 */
#ifndef SK_KUBE_YAML_H
#define SK_KUBE_YAML_H

#include "core/err.h"

#include <jansson.h>
#include <stddef.h>

/*
 * Parses the first document of the len bytes at text. On success *out is a
 * new reference (an empty document is JSON null); a key repeated in a
 * mapping takes its last value, and when dups (borrowed array) is given
 * each repetition is appended to it as go-yaml's strict decoding words it:
 * "line 7: key \"a\" already set in map". On failure,
 * SK_ERR_BAD_REQUEST with *errmsg (free()) worded as kube's decoder:
 * "error converting YAML to JSON: yaml: line 3: mapping values are not
 * allowed in this context". Nesting deeper than max_depth is refused the
 * same way, before the tree is built.
 */
sk_err sk_yaml_to_json(const char *text, size_t len, int max_depth, json_t **out,
                       char **errmsg, json_t *dups);

#endif
