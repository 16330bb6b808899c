"""CRD x-kubernetes-validations (CEL) rules, enforced as kube-apiserver 1.32
does (issue 41), through kubectl and direct HTTPS requests.

Covers: a CRD whose rules do not compile (syntax, an undeclared name, an
undefined field, a type error, a messageExpression that is not a string,
oldSelf under an atomic list, an unsupported reason, a fieldPath naming no
field) is 422 with kube's field paths and words, and so is a CRD whose
rules kube's static cost estimate finds too expensive (per rule and for the
whole schema; the same CRD with maxItems/maxLength is accepted); rules run at every level of a custom
resource (the root, with metadata.name visible, properties, map values,
map-list items, an embedded resource), two-variable comprehensions refused
in a new CRD as kube 1.32 refuses them, with
message, messageExpression, reason and fieldPath shaping the error; integer vs number and
int-or-string values as kube's CEL sees them; metadata, schema and rule
errors in one answer; transition rules (oldSelf) on updates, correlated by
map-list keys, and optionalOldSelf ones on creates too; ratcheting (an unchanged value's failure is a warning on
update); status subresource writes; patches and server-side apply; a
hostile rule stopped by the per-call bound with kube's cost error while
the server stays responsive, and an object whose rules together spend the
per-object budget refused with kube's budget error, both in kube's runtime
cost units (a string containing itself costs the product of the lengths
/ 10: past the per-call limit at 10,001 characters, not at 9,990; eleven
such rules spend the budget); Gateway API's listener
rules. The answers are compared whole: code 422, reason Invalid, the
message and every cause (field, reason, message), as apiextensions-apiserver
1.32 builds them (pkg/apiserver/schema/cel/validation.go,
pkg/apis/apiextensions/validation/validation.go).
Why: CRDs of real operators (Gateway API, cert-manager, ...) carry their
invariants as CEL rules; a server that stores but does not run them accepts
objects kube refuses.
"""

import copy
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import ServerTestCase, wait_until  # noqa: E402
from test_kubectl import KubectlMixin  # noqa: E402

GROUP = "rules.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/%s/v1/namespaces/default/widgets" % GROUP
SCHEMA_PATH = "spec.versions[0].schema.openAPIV3Schema"


# cheap to run (anchored, it fails at the first character of a string of
# b's), costly in kube's units
LONG_RULE = "!self.matches('^" + "a" * 399 + "')"


def widget_schema(tags_rule=False):
    tags_items = {"type": "string"}
    if tags_rule:
        tags_items["x-kubernetes-validations"] = [{"rule": "self != 'bad'"}]
    return {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('w-')", "message": "name must start with w-"}],
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [
                    {"rule": "!has(self.minReplicas) || !has(self.maxReplicas) || "
                             "self.minReplicas <= self.maxReplicas",
                     "message": "minReplicas must not exceed maxReplicas",
                     "fieldPath": ".minReplicas", "reason": "FieldValueForbidden"},
                    # (kube's cost estimate refuses concatenating strings of
                    # no known size, as string(x) and join() give: format()
                    # and literals are what a messageExpression can afford)
                    {"rule": "!has(self.ratio) || self.ratio < 1.5",
                     "messageExpression": "'ratio %s is too big'.format([self.ratio])"},
                    # (two-variable comprehensions are 1.32's: a new CRD of
                    # 1.32 may not use them, see test_two_variable_comprehensions)
                    {"rule": "!has(self.selectors) || "
                             "self.selectors.all(k, self.selectors[k] != k)",
                     "messageExpression": "self.selectors.exists(k, k == 'a' && "
                                          "self.selectors[k] == k) ? "
                                          "'selector a maps to itself' : "
                                          "'a selector maps to itself'"},
                ],
                "properties": {
                    "minReplicas": {"type": "integer"},
                    "since": {"type": "string", "format": "date-time"},
                    # kube 1.31's format library (format.go)
                    "host": {"type": "string", "maxLength": 253, "x-kubernetes-validations": [
                        {"rule": "!format.dns1123Subdomain().validate(self).hasValue()",
                         "messageExpression":
                             "format.dns1123Subdomain().validate(self).value()[0]"}]},
                    "link": {"type": "string", "maxLength": 200, "x-kubernetes-validations": [
                        {"rule": "!format.named('uri').value().validate(self).hasValue()",
                         "message": "link must be a request URI"}]},
                    "maxReplicas": {"type": "integer"},
                    "ratio": {"type": "number", "x-kubernetes-validations": [
                        {"rule": "type(self) == double", "message": "a number is a double"}]},
                    "mode": {"type": "string", "x-kubernetes-validations": [
                        {"rule": "self == oldSelf", "message": "mode is immutable"}]},
                    "level": {"type": "integer", "x-kubernetes-validations": [
                        {"rule": "oldSelf.hasValue() ? self >= oldSelf.value() : self == 1",
                         "message": "level starts at 1 and never decreases",
                         "optionalOldSelf": True}]},
                    "size": {"x-kubernetes-int-or-string": True, "x-kubernetes-validations": [
                        {"rule": "type(self) == int ? self > 0 : self.endsWith('%')",
                         "message": "size is a positive count or a percentage"}]},
                    "ports": {
                        "type": "array", "maxItems": 16,
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object", "required": ["name"],
                            "properties": {
                                "name": {"type": "string"},
                                "port": {"type": "integer", "x-kubernetes-validations": [
                                    {"rule": "self >= 1 && self <= 65535"}]},
                                "protocol": {"type": "string", "maxLength": 16,
                                             "x-kubernetes-validations": [
                                    {"rule": "self == oldSelf",
                                     "message": "protocol is immutable"}]},
                            }}},
                    "selectors": {
                        "type": "object",
                        "additionalProperties": {"type": "string", "x-kubernetes-validations": [
                            {"rule": "self.size() <= 5", "reason": "FieldValueRequired",
                             "message": "a selector value has at most 5 characters"}]}},
                    "tags": {"type": "array", "items": tags_items},
                    "template": {
                        "type": "object", "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                        "x-kubernetes-validations": [
                            {"rule": "self.kind == 'ConfigMap' && "
                                     "self.metadata.name.startsWith('cm-')",
                             "message": "a ConfigMap named cm-*"}]},
                    # bounded so that kube's static estimate (7N^2+5N+2 a rule,
                    # times 30 rows: 8,430,060) passes, while the three rules
                    # together spend the object's runtime budget
                    "matrix": {"type": "array", "maxItems": 30, "items": {
                        "type": "array", "maxItems": 200, "items": {"type": "integer"},
                        "x-kubernetes-validations": [
                            {"rule": "self.all(x, self.all(y, x + y >= 0))"}] * 3}},
                    # kube's runtime cost of matches is the string's length
                    # / 10 times the pattern's / 4: 999,902 a rule here for
                    # 99,980 characters (under PerCallLimit), 1,000,102 for
                    # 100,000 (over); eleven such rules spend the object's
                    # RuntimeCELCostBudget. The static estimate of each
                    # (4,000,102: kube counts 4 bytes a character) is within
                    # StaticEstimatedCostLimit.
                    "long": {"type": "string", "maxLength": 100000,
                             "x-kubernetes-validations": [{"rule": LONG_RULE}] * 11},
                    # estimated at 9N^3+5N^2+5N+2 = 9,050,502 for 100 items:
                    # under StaticEstimatedCostLimit, over PerCallLimit
                    "hostile": {"type": "array", "maxItems": 100, "items": {"type": "integer"},
                                "x-kubernetes-validations": [
                                    {"rule": "self.all(x, self.all(y, self.all(z, "
                                             "x + y + z >= 0)))"}]},
                }},
            "status": {
                "type": "object",
                "properties": {"phase": {"type": "string", "x-kubernetes-validations": [
                    {"rule": "self in ['Ready', 'Pending']", "reason": "FieldValueDuplicate"}]}}},
        }}


def crd(name="widgets", kind="Widget", schema=None):
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "%s.%s" % (name, GROUP)},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"plural": name, "singular": name[:-1], "kind": kind},
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": schema or widget_schema()},
                          "subresources": {"status": {}}}],
        }}


def widget(name, **spec):
    return {"apiVersion": GROUP + "/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": spec}


def go_rule(rule, message="", message_expression="", field_path=""):
    """Go's %#v of the internal apiextensions.ValidationRule kube shows as the
    bad value of a rule that does not compile (pointers unset)."""
    return ('apiextensions.ValidationRule{Rule:%s, Message:%s, MessageExpression:%s, '
            'Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:%s, '
            'OptionalOldSelf:(*bool)(nil)}' % tuple(json.dumps(s) for s in (
                rule, message, message_expression, field_path)))


class CrdRules(KubectlMixin, ServerTestCase, unittest.TestCase):
    server_tls = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = cls.server.request("POST", CRDS, crd())
        assert r.status == 201, r
        assert "not enforced" not in r.headers.get("warning", ""), r.headers
        p = cls.server.kubectl("wait", "--for", "condition=established",
                               "crd/widgets." + GROUP, "--timeout=20s")
        assert p.returncode == 0, p.stderr

    def invalid(self, r, name, causes, kind="Widget." + GROUP):
        """r is kube's 422 for object name with exactly these causes
        [(field, reason, message)]."""
        self.assertEqual(r.status, 422, r)
        st = r.json()
        self.assertEqual((st["kind"], st["status"], st["reason"], st["code"]),
                         ("Status", "Failure", "Invalid", 422))
        bodies = ["%s: %s" % (f, m) for f, _, m in causes]
        agg = bodies[0] if len(bodies) == 1 else "[" + ", ".join(bodies) + "]"
        self.assertEqual(st["message"], '%s "%s" is invalid: %s' % (kind, name, agg))
        self.assertEqual(st["details"]["name"], name)
        self.assertEqual([(c.get("field"), c.get("reason"), c.get("message"))
                          for c in st["details"]["causes"]], list(causes))

    def post(self, obj, path=WIDGETS):
        return self.server.request("POST", path, obj)

    # --- the CRD: rules checked when it is written --------------------------------

    def test_crd_rules_that_do_not_compile_are_refused(self):
        at = SCHEMA_PATH + ".properties[spec]"
        cases = [
            ({"rule": "self.minReplicas >"},
             "rule", go_rule("self.minReplicas >"),
             "compilation failed: ERROR: <input>:1:19: Syntax error: mismatched input '<EOF>' "
             "expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, "
             "NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.minReplicas >\n"
             " | ..................^"),
            ({"rule": "replicas > 1"},
             "rule", go_rule("replicas > 1"),
             "compilation failed: ERROR: <input>:1:1: undeclared reference to 'replicas' "
             "(in container '')\n | replicas > 1\n | ^"),
            ({"rule": "self.replicas > 1"},
             "rule", go_rule("self.replicas > 1"),
             "compilation failed: ERROR: <input>:1:5: undefined field 'replicas'\n"
             " | self.replicas > 1\n | ....^"),
            ({"rule": "self.minReplicas > 0", "messageExpression": "42"},
             "messageExpression", go_rule("self.minReplicas > 0", message_expression="42"),
             "messageExpression must evaluate to a string"),
            # a comprehension's variable has its list's item type
            ({"rule": "self.ports.all(p, p.nmae != '')"},
             "rule", go_rule("self.ports.all(p, p.nmae != '')"),
             "compilation failed: ERROR: <input>:1:20: undefined field 'nmae'\n"
             " | self.ports.all(p, p.nmae != '')\n | ...................^"),
            ({"rule": "'yes'"}, "rule", go_rule("'yes'"), "cel expression must evaluate to a bool"),
            # type errors (cel-go's checker over the schema's types)
            ({"rule": "self.minReplicas + self.mode > 0"},
             "rule", go_rule("self.minReplicas + self.mode > 0"),
             "compilation failed: ERROR: <input>:1:18: found no matching overload for '_+_' "
             "applied to '(int, string)'\n | self.minReplicas + self.mode > 0\n"
             " | .................^"),
            ({"rule": "self.mode.startsWith(1)"},
             "rule", go_rule("self.mode.startsWith(1)"),
             "compilation failed: ERROR: <input>:1:21: found no matching overload for "
             "'startsWith' applied to 'string.(int)'\n | self.mode.startsWith(1)\n"
             " | ....................^"),
            ({"rule": "self.tags.all(t, t)"},
             "rule", go_rule("self.tags.all(t, t)"),
             "compilation failed: ERROR: <input>:1:18: expected type 'bool' but found 'string'\n"
             " | self.tags.all(t, t)\n | .................^"),
            ({"rule": "self.mode.nope"},
             "rule", go_rule("self.mode.nope"),
             "compilation failed: ERROR: <input>:1:10: type 'string' does not support field "
             "selection\n | self.mode.nope\n | .........^"),
            # a date-time field is a timestamp to kube's CEL
            ({"rule": "self.since.startsWith('2020')"},
             "rule", go_rule("self.since.startsWith('2020')"),
             "compilation failed: ERROR: <input>:1:22: found no matching overload for "
             "'startsWith' applied to 'timestamp.(string)'\n"
             " | self.since.startsWith('2020')\n | .....................^"),
            # Kubernetes' environment validates homogeneous literals
            ({"rule": "[1, 'a'].size() > 0"},
             "rule", go_rule("[1, 'a'].size() > 0"),
             "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'\n"
             " | [1, 'a'].size() > 0\n | ....^"),
            # and checks literal patterns and durations
            ({"rule": "self.mode.matches('[')"},
             "rule", go_rule("self.mode.matches('[')"),
             "compilation failed: ERROR: <input>:1:19: invalid matches argument\n"
             " | self.mode.matches('[')\n | ..................^"),
            # an int-or-string is dyn: not a bool
            ({"rule": "self.size"}, "rule", go_rule("self.size"),
             "cel expression must evaluate to a bool"),
            ({"rule": "self.minReplicas > 0", "messageExpression": "self.minReplicas"},
             "messageExpression",
             go_rule("self.minReplicas > 0", message_expression="self.minReplicas"),
             "messageExpression must evaluate to a string"),
        ]
        for i, (rule, field, value, detail) in enumerate(cases):
            schema = widget_schema()
            schema["properties"]["spec"]["x-kubernetes-validations"] = [rule]
            c = crd("bads", "Bad", schema)
            r = self.post(c, CRDS)
            f = "%s.x-kubernetes-validations[0].%s" % (at, field)
            self.invalid(r, c["metadata"]["name"],
                         [(f, "FieldValueInvalid", "Invalid value: %s: %s" % (value, detail))],
                         kind="CustomResourceDefinition.apiextensions.k8s.io")

    def test_crd_rules_too_expensive_are_refused(self):
        """kube's static cost estimate at CRD write: a rule over a list
        without maxItems (or over strings without maxLength) is refused
        with kube's Forbidden texts; the same CRD with the bounds added is
        accepted."""
        def schema(items=None, length=None, rule="self.all(x, self.all(y, true))",
                   item_rule=None):
            item = {"type": "string"}
            if length is not None:
                item["maxLength"] = length
            if item_rule:
                item["x-kubernetes-validations"] = [{"rule": item_rule}]
            lst = {"type": "array", "items": item}
            if items is not None:
                lst["maxItems"] = items
            if rule:
                lst["x-kubernetes-validations"] = [{"rule": rule}]
            return {"type": "object", "properties": {"spec": {
                "type": "object", "properties": {"names": lst}}}}

        at = SCHEMA_PATH + ".properties[spec].properties[names]"
        hint = ("(try simplifying the rule, or adding maxItems, maxProperties, and maxLength "
                "where arrays, maps, and strings are declared)")

        def refused(sch, causes):
            c = crd("costlies", "Costly", sch)
            r = self.post(c, CRDS)
            self.invalid(r, c["metadata"]["name"], causes,
                         kind="CustomResourceDefinition.apiextensions.k8s.io")

        def accepted(sch, plural, kind):
            r = self.post(crd(plural, kind, sch), CRDS)
            self.assertEqual(r.status, 201, r)

        # nested all() over an unbounded list: over both limits
        rule = at + ".x-kubernetes-validations[0].rule"
        refused(schema(), [
            (rule, "FieldValueForbidden",
             "Forbidden: estimated rule cost exceeds budget by factor of more than 100x " + hint),
            (rule, "FieldValueForbidden",
             "Forbidden: contributed to estimated rule cost total exceeding cost limit for "
             "entire OpenAPIv3 schema"),
            (SCHEMA_PATH, "FieldValueForbidden",
             "Forbidden: x-kubernetes-validations estimated rule cost total for entire "
             "OpenAPIv3 schema exceeds budget by factor of more than 100x " + hint)])
        # 3N^2+5N+2 (kube's O(n^2) case): 25,001,420 for 2886 items, 2.5x;
        # 10,839,502 for 1900, 1.083950x (Go's %f)
        refused(schema(items=2886), [
            (rule, "FieldValueForbidden",
             "Forbidden: estimated rule cost exceeds budget by factor of 2.5x " + hint)])
        refused(schema(items=1900), [
            (rule, "FieldValueForbidden",
             "Forbidden: estimated rule cost exceeds budget by factor of 1.083950x " + hint)])
        accepted(schema(items=100), "cheaps", "Cheap")
        # a rule on each item counts once per item: matches() on a string
        # without maxLength costs 629,147, times 100 items
        irule = at + ".items.x-kubernetes-validations[0].rule"
        refused(schema(items=100, rule=None, item_rule="self.matches('^[a-z]+$')"), [
            (irule, "FieldValueForbidden",
             "Forbidden: estimated rule cost exceeds budget by factor of 6.3x " + hint)])
        accepted(schema(items=100, length=64, rule=None, item_rule="self.matches('^[a-z]+$')"),
                 "shorts", "Short")

    def test_crd_rule_fields_checked(self):
        schema = widget_schema()
        spec = schema["properties"]["spec"]
        spec["x-kubernetes-validations"] = [
            {"rule": "self.minReplicas > 0", "reason": "Bogus"},
            {"rule": "self.minReplicas > 0", "fieldPath": ".nope"},
            {"rule": "self.minReplicas > 0", "messageExpression": "  "},
        ]
        c = crd("bads", "Bad", schema)
        r = self.post(c, CRDS)
        at = SCHEMA_PATH + ".properties[spec].x-kubernetes-validations"
        self.invalid(r, c["metadata"]["name"], [
            (at + "[0].reason", "FieldValueNotSupported",
             'Unsupported value: "Bogus": supported values: "FieldValueDuplicate", '
             '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"'),
            (at + "[1].fieldPath", "FieldValueInvalid",
             'Invalid value: ".nope": fieldPath must be a valid path'),
            (at + "[2].messageExpression", "FieldValueRequired",
             "Required value: messageExpression must be non-empty if specified"),
        ], kind="CustomResourceDefinition.apiextensions.k8s.io")

    def test_crd_old_self_under_atomic_list_refused(self):
        schema = widget_schema()
        tags_schema = schema["properties"]["spec"]["properties"]["tags"]
        # bounded: kube's cost estimate would refuse the comparison too
        tags_schema["maxItems"] = 10
        tags_schema["items"]["maxLength"] = 10
        tags_schema["items"]["x-kubernetes-validations"] = [{"rule": "self == oldSelf"}]
        c = crd("bads", "Bad", schema)
        r = self.post(c, CRDS)
        tags = SCHEMA_PATH + ".properties[spec].properties[tags]"
        self.invalid(r, c["metadata"]["name"], [
            (tags + ".items.x-kubernetes-validations[0].rule", "FieldValueInvalid",
             'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable '
             "portion of the schema within " + tags)],
            kind="CustomResourceDefinition.apiextensions.k8s.io")

    # --- custom resources: rules at every level -------------------------------------

    def test_root_rule_sees_metadata_name(self):
        r = self.post(widget("x-1"))
        self.invalid(r, "x-1", [("<nil>", "FieldValueInvalid",
                                 'Invalid value: "object": name must start with w-')])
        r = self.post(widget("w-root"))
        self.assertEqual(r.status, 201, r)

    def test_metadata_schema_and_rule_errors_in_one_answer(self):
        # kube's custom-resource strategy lists the metadata's errors, then
        # the schema's, then the rules' (an Invalid name does not block them)
        r = self.post(widget("x_1", minReplicas="two"))
        self.assertEqual(r.status, 422, r)
        causes = [(c["field"], c["reason"]) for c in r.json()["details"]["causes"]]
        self.assertEqual(causes, [("metadata.name", "FieldValueInvalid"),
                                  ("spec.minReplicas", "FieldValueTypeInvalid"),
                                  ("<nil>", "FieldValueInvalid")])
        self.assertEqual(r.json()["details"]["causes"][2]["message"],
                         'Invalid value: "null": some validation rules were not checked because '
                         "the object was invalid; correct the existing errors to complete "
                         "validation")
        r = self.post(widget("x_1"))
        self.invalid(r, "x_1", [
            ("metadata.name", "FieldValueInvalid",
             'Invalid value: "x_1": a lowercase RFC 1123 subdomain must consist of lower case '
             "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
             "character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
            ("<nil>", "FieldValueInvalid", 'Invalid value: "object": name must start with w-')])

    def test_embedded_resource(self):
        # an embedded resource shows apiVersion, kind and metadata's name
        # and generateName only (labels are there, and invisible)
        tpl = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cm-a", "labels": {"a": "b"}}}
        r = self.post(widget("w-tpl", template=tpl))
        self.assertEqual(r.status, 201, r)
        tpl["metadata"]["name"] = "other"
        r = self.post(widget("w-tpl2", template=tpl))
        self.invalid(r, "w-tpl2", [("spec.template", "FieldValueInvalid",
                                    'Invalid value: "object": a ConfigMap named cm-*')])
        # and kube's compiler refuses a rule that reads labels there
        schema = widget_schema()
        schema["properties"]["spec"]["properties"]["template"]["x-kubernetes-validations"] = [
            {"rule": "has(self.metadata.labels)"}]
        c = crd("bads", "Bad", schema)
        r = self.post(c, CRDS)
        self.invalid(r, c["metadata"]["name"], [(
            SCHEMA_PATH + ".properties[spec].properties[template].x-kubernetes-validations[0].rule",
            "FieldValueInvalid",
            "Invalid value: %s: compilation failed: ERROR: <input>:1:4: undefined field "
            "'labels'\n | has(self.metadata.labels)\n | ...^" % go_rule(
                "has(self.metadata.labels)"))],
            kind="CustomResourceDefinition.apiextensions.k8s.io")

    def test_reason_and_field_path(self):
        r = self.post(widget("w-minmax", minReplicas=5, maxReplicas=3))
        self.invalid(r, "w-minmax", [("spec.minReplicas", "FieldValueForbidden",
                                      "Forbidden: minReplicas must not exceed maxReplicas")])

    def test_message_expression_and_number_is_double(self):
        r = self.post(widget("w-ratio", ratio=2))
        self.invalid(r, "w-ratio", [("spec", "FieldValueInvalid",
                                     'Invalid value: "object": ratio 2 is too big')])
        r = self.post(widget("w-ratio", ratio=1))
        self.assertEqual(r.status, 201, r)

    def test_format_library(self):
        """format.go's checks and messages: apimachinery's subdomain message
        as the messageExpression, url.ParseRequestURI for format.named('uri')."""
        r = self.post(widget("w-host", host="Bad_Host"))
        self.invalid(r, "w-host", [(
            "spec.host", "FieldValueInvalid",
            'Invalid value: "string": a lowercase RFC 1123 subdomain must consist of lower '
            "case alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")])
        r = self.post(widget("w-link", link="not a uri"))
        self.invalid(r, "w-link", [("spec.link", "FieldValueInvalid",
                                    'Invalid value: "string": link must be a request URI')])
        r = self.post(widget("w-format", host="api.example.com", link="https://example.com/x"))
        self.assertEqual(r.status, 201, r)

    def test_int_or_string(self):
        r = self.post(widget("w-size", size="50"))
        self.invalid(r, "w-size", [("spec.size", "FieldValueInvalid",
                                    'Invalid value: "": size is a positive count or a percentage')])
        for i, size in enumerate((3, "50%")):
            r = self.post(widget("w-size-%d" % i, size=size))
            self.assertEqual(r.status, 201, r)

    def test_list_items_and_map_values(self):
        r = self.post(widget("w-ports", ports=[{"name": "http", "port": 80},
                                               {"name": "big", "port": 70000}],
                             selectors={"a": "ok", "b": "toolong"}))
        st = r.json()
        self.assertEqual(r.status, 422, r)
        # kube walks an object's fields in Go map order: compare as a set
        self.assertEqual(sorted((c["field"], c["reason"], c["message"])
                                for c in st["details"]["causes"]), [
            ("spec.ports[1].port", "FieldValueInvalid",
             'Invalid value: "integer": failed rule: self >= 1 && self <= 65535'),
            ("spec.selectors[b]", "FieldValueRequired",
             "Required value: a selector value has at most 5 characters")])

    def test_two_variable_comprehensions(self):
        # kube 1.32 checks a new expression in its compatibility version's
        # environment (1.31): TwoVarComprehensions (1.32) is not in it, so
        # all(k, v, ...) is a call of an undeclared function 'all'
        schema = widget_schema()
        rule = "self.selectors.all(k, v, k != v)"
        schema["properties"]["spec"]["x-kubernetes-validations"] = [{"rule": rule}]
        c = crd("bads", "Bad", schema)
        r = self.post(c, CRDS)
        line = "\n | " + rule + "\n | "
        self.invalid(r, c["metadata"]["name"], [
            (SCHEMA_PATH + ".properties[spec].x-kubernetes-validations[0].rule",
             "FieldValueInvalid",
             "Invalid value: %s: compilation failed: "
             "ERROR: <input>:1:19: undeclared reference to 'all' (in container '')%s"
             "..................^\n"
             "ERROR: <input>:1:20: undeclared reference to 'k' (in container '')%s"
             "...................^\n"
             "ERROR: <input>:1:23: undeclared reference to 'v' (in container '')%s"
             "......................^\n"
             "ERROR: <input>:1:26: undeclared reference to 'k' (in container '')%s"
             ".........................^\n"
             "ERROR: <input>:1:31: undeclared reference to 'v' (in container '')%s"
             "..............................^" % ((go_rule(rule),) + (line,) * 5))],
            kind="CustomResourceDefinition.apiextensions.k8s.io")

    def test_map_comprehension_and_index(self):
        r = self.post(widget("w-sel", selectors={"a": "a", "b": "c", "d": "d"}))
        self.invalid(r, "w-sel", [("spec", "FieldValueInvalid",
                                   'Invalid value: "object": selector a maps to itself')])
        r = self.post(widget("w-sel", selectors={"a": "b"}))
        self.assertEqual(r.status, 201, r)

    def test_kubectl_create_and_apply_show_kube_error(self):
        path = self.write("bad.json", widget("w-kubectl", minReplicas=9, maxReplicas=1))
        for verb in (["create"], ["apply"], ["apply", "--server-side"]):
            p = self.bad(*verb, "-f", path)
            self.assertIn('The Widget "w-kubectl" is invalid: spec.minReplicas: Forbidden: '
                          "minReplicas must not exceed maxReplicas", p.stderr)

    # --- updates: transition rules, correlation, ratcheting, status, patches -------

    def test_transition_rules_and_map_list_correlation(self):
        r = self.post(widget("w-trans", mode="a", ports=[{"name": "http", "protocol": "TCP"}]))
        self.assertEqual(r.status, 201, r)
        merge = {"Content-Type": "application/merge-patch+json"}
        r = self.server.request("PATCH", WIDGETS + "/w-trans",
                                json.dumps({"spec": {"mode": "b"}}), headers=merge)
        self.invalid(r, "w-trans", [("spec.mode", "FieldValueInvalid",
                                     'Invalid value: "string": mode is immutable')])
        # a new item first: "http" still correlates by its key, at index 1
        ports = [{"name": "dns", "protocol": "UDP"}, {"name": "http", "protocol": "TCP"}]
        r = self.server.request("PATCH", WIDGETS + "/w-trans",
                                json.dumps({"spec": {"ports": ports}}), headers=merge)
        self.assertEqual(r.status, 200, r)
        ports[1]["protocol"] = "UDP"
        r = self.server.request("PATCH", WIDGETS + "/w-trans",
                                json.dumps({"spec": {"ports": ports}}), headers=merge)
        self.invalid(r, "w-trans", [("spec.ports[1].protocol", "FieldValueInvalid",
                                     'Invalid value: "string": protocol is immutable')])
        # kubectl: the same refusal through a strategic-merge patch
        p = self.bad("patch", "widget", "w-trans", "--type=merge", "-p",
                     json.dumps({"spec": {"mode": "c"}}))
        self.assertIn('The Widget "w-trans" is invalid: spec.mode: Invalid value: "string": '
                      "mode is immutable", p.stderr)

    def test_optional_old_self(self):
        # the rule runs on a create too, oldSelf an optional (none there)
        r = self.post(widget("w-level", level=2))
        self.invalid(r, "w-level", [("spec.level", "FieldValueInvalid",
                                     'Invalid value: "integer": level starts at 1 and never '
                                     "decreases")])
        r = self.post(widget("w-level", level=1))
        self.assertEqual(r.status, 201, r)
        self.assertNotIn("warning", r.headers)
        merge = {"Content-Type": "application/merge-patch+json"}
        for level, status in ((3, 200), (2, 422), (3, 200)):
            r = self.server.request("PATCH", WIDGETS + "/w-level",
                                    json.dumps({"spec": {"level": level}}), headers=merge)
            self.assertEqual(r.status, status, r)

    def test_status_subresource(self):
        r = self.post(widget("w-status"))
        self.assertEqual(r.status, 201, r)
        obj = r.json()
        obj["status"] = {"phase": "Broken"}
        r = self.server.request("PUT", WIDGETS + "/w-status/status", obj)
        self.invalid(r, "w-status", [("status.phase", "FieldValueDuplicate",
                                      'Duplicate value: "string"')])
        obj["status"] = {"phase": "Ready"}
        r = self.server.request("PUT", WIDGETS + "/w-status/status", obj)
        self.assertEqual(r.status, 200, r)

    def test_ratcheting_unchanged_values(self):
        # objects written before the rule existed keep their value on updates
        c = crd("gizmos", "Gizmo")
        r = self.post(c, CRDS)
        self.assertEqual(r.status, 201, r)
        path = "/apis/%s/v1/namespaces/default/gizmos" % GROUP
        self.ok("wait", "--for", "condition=established", "crd/gizmos." + GROUP, "--timeout=20s")
        g = widget("w-gizmo", tags=["bad"], minReplicas=1)
        g["kind"] = "Gizmo"
        self.assertEqual(self.post(g, path).status, 201)
        c = self.server.request("GET", CRDS + "/gizmos." + GROUP).json()
        c["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = widget_schema(tags_rule=True)
        r = self.server.request("PUT", CRDS + "/gizmos." + GROUP, c)
        self.assertEqual(r.status, 200, r)
        merge = {"Content-Type": "application/merge-patch+json"}
        # the new rule is served once the CRD controller has installed it
        wait_until(lambda: self.server.request(
            "POST", path, dict(g, metadata={"name": "w-probe"})).status == 422,
            what="the tags rule to be served")
        r = self.server.request("PATCH", path + "/w-gizmo",
                                json.dumps({"spec": {"minReplicas": 2}}), headers=merge)
        self.assertEqual(r.status, 200, r)
        # the warning kube's ratcheting adds: the error's text, quoted as RFC 7234 says
        self.assertEqual(r.headers.get("warning"),
                         '299 - "spec.tags[0]: Invalid value: \\"string\\": failed rule: '
                         'self != \'bad\'"')
        r = self.server.request("PATCH", path + "/w-gizmo",
                                json.dumps({"spec": {"tags": ["bad", "ok"]}}), headers=merge)
        self.invalid(r, "w-gizmo", [("spec.tags[0]", "FieldValueInvalid",
                                     "Invalid value: \"string\": failed rule: self != 'bad'")],
                     kind="Gizmo." + GROUP)

    # --- the bound ---------------------------------------------------------------------

    def test_hostile_rule_hits_the_per_call_limit(self):
        t0 = time.monotonic()
        r = self.post(widget("w-hostile", hostile=list(range(100))))
        took = time.monotonic() - t0
        self.invalid(r, "w-hostile", [(
            "spec.hostile", "FieldValueInvalid",
            "Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no "
            "further validation rules will be run due to call cost exceeds limit for rule: "
            "self.all(x, self.all(y, self.all(z, x + y + z >= 0)))")])
        self.assertLess(took, 10.0)
        # the server answers others meanwhile and after
        self.assertEqual(self.server.request("GET", "/readyz").status, 200)
        self.assertEqual(self.post(widget("w-after", hostile=[1, 2])).status, 201)

    def test_rule_cost_is_kubes_runtime_cost(self):
        # past PerCallLimit in kube's cost at 100,000 characters, the first
        # rule stops the rest
        r = self.post(widget("w-long", long="b" * 100000))
        self.invalid(r, "w-long", [(
            "spec.long", "FieldValueInvalid",
            "Invalid value: \"string\": 'operation cancelled: actual cost limit exceeded': no "
            "further validation rules will be run due to call cost exceeds limit for rule: "
            + LONG_RULE)])
        # at 99,980 each rule is within it, and the eleventh spends the
        # object's budget
        r = self.post(widget("w-long", long="b" * 99980))
        self.invalid(r, "w-long", [(
            "spec.long", "FieldValueInvalid",
            'Invalid value: "string": validation failed due to running out of cost budget, no '
            "further validation rules will be run")])
        # at 9,000 all eleven (991,122) are within the budget
        self.assertEqual(self.post(widget("w-long", long="b" * 9000)).status, 201)

    def test_object_budget_runs_out(self):
        # each row's rule stays under the per-call limit; all rows together
        # spend the object's budget (RuntimeCELCostBudget)
        t0 = time.monotonic()
        r = self.post(widget("w-matrix", matrix=[list(range(200))] * 30))
        took = time.monotonic() - t0
        self.assertEqual(r.status, 422, r)
        causes = r.json()["details"]["causes"]
        self.assertEqual(len(causes), 1, causes)
        self.assertRegex(causes[0]["field"], r"^spec\.matrix\[[0-9]+\]$")
        self.assertEqual((causes[0]["reason"], causes[0]["message"]), (
            "FieldValueInvalid",
            'Invalid value: "array": validation failed due to running out of cost budget, no '
            "further validation rules will be run"))
        self.assertLess(took, 10.0)
        r = self.post(widget("w-matrix", matrix=[list(range(200))] * 2))
        self.assertEqual(r.status, 201, r)

# Gateway API's listener rules (gateway.networking.k8s.io v1 Gateway,
# config/crd/standard/gateway.networking.k8s.io_gateways.yaml): the rules,
# messages and the schema around them as the CRD has them, trimmed to the
# fields they read. The cases follow its tests/cel/gateway_test.go.
GW_LISTENERS = {
    "type": "array", "minItems": 1, "maxItems": 64,
    "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
    "x-kubernetes-validations": [
        {"message": "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
         "rule": "self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)"},
        {"message": "tls mode must be Terminate for protocol HTTPS",
         "rule": "self.all(l, (l.protocol == 'HTTPS' && has(l.tls)) ? (l.tls.mode == '' || "
                 "l.tls.mode == 'Terminate') : true)"},
        {"message": "tls mode must be set for protocol TLS",
         "rule": "self.all(l, (l.protocol == 'TLS' ? has(l.tls) && has(l.tls.mode) && "
                 "l.tls.mode != '' : true))"},
        {"message": "hostname must not be specified for protocols ['TCP', 'UDP']",
         "rule": "self.all(l, l.protocol in ['TCP', 'UDP']  ? (!has(l.hostname) || "
                 "l.hostname == '') : true)"},
        {"message": "Listener name must be unique within the Gateway",
         "rule": "self.all(l1, self.exists_one(l2, l1.name == l2.name))"},
        {"message": "Combination of port, protocol and hostname must be unique for each listener",
         "rule": "self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == "
                 "l2.protocol && (has(l1.hostname) && has(l2.hostname) ? l1.hostname == "
                 "l2.hostname : !has(l1.hostname) && !has(l2.hostname))))"},
    ],
    "items": {
        "type": "object", "required": ["name", "port", "protocol"],
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 253},
            "hostname": {"type": "string", "minLength": 1, "maxLength": 253},
            "port": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535},
            "protocol": {"type": "string", "minLength": 1, "maxLength": 255},
            "tls": {
                "type": "object",
                "x-kubernetes-validations": [
                    {"message": "certificateRefs or options must be specified when mode is "
                                "Terminate",
                     "rule": "self.mode == 'Terminate' ? size(self.certificateRefs) > 0 || "
                             "size(self.options) > 0 : true"}],
                "properties": {
                    "certificateRefs": {"type": "array", "maxItems": 64, "items": {
                        "type": "object", "required": ["name"],
                        "properties": {"name": {"type": "string"}}}},
                    "mode": {"type": "string", "default": "Terminate",
                             "enum": ["Terminate", "Passthrough"]},
                    "options": {"type": "object", "maxProperties": 16,
                                "additionalProperties": {"type": "string"}},
                }},
        }},
}


class GatewayListenerRules(ServerTestCase, unittest.TestCase):
    server_tls = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        schema = {"type": "object", "properties": {"spec": {
            "type": "object", "required": ["listeners"],
            "properties": {"listeners": GW_LISTENERS}}}}
        r = cls.server.request("POST", CRDS, crd("gateways", "Gateway", schema))
        assert r.status == 201, r
        wait_until(lambda: cls.server.request(
            "GET", "/apis/%s/v1/namespaces/default/gateways" % GROUP).status == 200,
            what="gateways to be served")

    def gateway(self, name, *listeners):
        obj = {"apiVersion": GROUP + "/v1", "kind": "Gateway", "metadata": {"name": name},
               "spec": {"listeners": list(listeners)}}
        return self.server.request("POST", "/apis/%s/v1/namespaces/default/gateways" % GROUP,
                                   obj)

    def causes(self, r):
        self.assertEqual(r.status, 422, r)
        return [(c["field"], c["reason"], c["message"]) for c in r.json()["details"]["causes"]]

    def test_valid_gateway(self):
        r = self.gateway("ok", {"name": "http", "port": 80, "protocol": "HTTP"},
                         {"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "a.b",
                          "tls": {"certificateRefs": [{"name": "cert"}]}})
        self.assertEqual(r.status, 201, r)

    def test_tls_on_http(self):
        r = self.gateway("g1", {"name": "http", "port": 80, "protocol": "HTTP",
                                "tls": {"options": {"a": "b"}}})
        self.assertEqual(self.causes(r), [(
            "spec.listeners", "FieldValueInvalid",
            "Invalid value: \"array\": tls must not be specified for protocols "
            "['HTTP', 'TCP', 'UDP']")])

    def test_tls_mode_for_tls_protocol(self):
        r = self.gateway("g2", {"name": "tls", "port": 443, "protocol": "TLS"})
        self.assertEqual(self.causes(r), [(
            "spec.listeners", "FieldValueInvalid",
            'Invalid value: "array": tls mode must be set for protocol TLS')])

    def test_terminate_without_certificates(self):
        # the defaulted mode is Terminate; the absent certificateRefs is a
        # runtime error of the rule, reported with the rule's message
        r = self.gateway("g3", {"name": "https", "port": 443, "protocol": "HTTPS", "tls": {}})
        self.assertEqual(self.causes(r), [(
            "spec.listeners[0].tls", "FieldValueInvalid",
            'Invalid value: "object": no such key: certificateRefs evaluating rule: '
            "certificateRefs or options must be specified when mode is Terminate")])

    def test_duplicate_port_protocol_hostname(self):
        r = self.gateway("g4", {"name": "a", "port": 80, "protocol": "HTTP"},
                         {"name": "b", "port": 80, "protocol": "HTTP"})
        self.assertEqual(self.causes(r), [(
            "spec.listeners", "FieldValueInvalid",
            'Invalid value: "array": Combination of port, protocol and hostname must be unique '
            "for each listener")])


    def test_http_route_header_pattern(self):
        # Gateway API's HTTPHeaderName pattern (httproutes CRD) has RE2's
        # \x60 inside a bracket, and its hostname pattern an alternation;
        # both are Go regexp patterns, as kube compiles them
        header = r"^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$"
        host = (r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
        schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "hostnames": {"type": "array", "items": {"type": "string", "pattern": host}},
            "headers": {"type": "array", "items": {
                "type": "object", "properties": {
                    "name": {"type": "string", "pattern": header},
                    "value": {"type": "string", "pattern": r"^\p{L}+$"}}}}}}}}
        r = self.server.request("POST", CRDS, crd("httproutes", "HTTPRoute", schema))
        self.assertEqual(r.status, 201, r)
        routes = "/apis/%s/v1/namespaces/default/httproutes" % GROUP
        wait_until(lambda: self.server.request("GET", routes).status == 200,
                   what="httproutes to be served")

        def route(name, hostnames, headers):
            return self.server.request("POST", routes, {
                "apiVersion": GROUP + "/v1", "kind": "HTTPRoute", "metadata": {"name": name},
                "spec": {"hostnames": hostnames, "headers": headers}})
        r = route("ok", ["*.example.com"], [{"name": "X-Tick`Name", "value": "Grüße"}])
        self.assertEqual(r.status, 201, r)
        r = route("bad", ["Example.com"], [{"name": "bad header", "value": "x1"}])
        self.assertEqual(sorted(f for f, _, _ in self.causes(r)),
                         ["spec.headers[0].name", "spec.headers[0].value", "spec.hostnames[0]"])
        for f, reason, message in self.causes(r):
            self.assertEqual(reason, "FieldValueInvalid")
            self.assertIn("%s in body should match '" % f, message)


if __name__ == "__main__":
    unittest.main()
