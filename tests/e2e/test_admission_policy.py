"""ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
(admissionregistration.k8s.io/v1), enforced as kube-apiserver 1.32's
validating policy plugin enforces them, and validated when written as its
admissionregistration validation does. README's example, applied with
kubectl as written, does what README says.

Checked here, each against kube's texts (dispatcher.go, validator.go,
policy_dispatcher.go's CollectParams, validation.go): the Kubernetes docs'
replicas limit on Deployments (and its ReplicaLimit custom resource as
params) refused with kube's Status (Invalid, 422,
"deployments.apps \"N\" is forbidden: ValidatingAdmissionPolicy 'P' with
binding 'B' denied request: failed expression: ...", the message as its
one cause) and as kubectl prints it; Warn as kube's Warning header and
Audit as the validation.policy.admission.k8s.io/validation_failure audit
annotation; a policy's auditAnnotations as POLICY/KEY; message,
messageExpression and reason (Forbidden: 403); variables; params by name,
by selector (each param evaluated), and parameterNotFoundAction Deny and
Allow; kube's errors for a paramRef's namespace against the kinds' scopes;
matchPolicy Equivalent (a v2 request converted to the v1 the policy names,
request.kind v1, requestKind v2) and Exact; namespaceSelector, objectSelector, excludeResourceRules and
resourceNames; matchConditions; failurePolicy Fail and Ignore on an
evaluation error; a costly expression cut off by kube's per-call cost limit,
and expressions together spending the policy's cost budget, in bounded
time; the authorizer (kube's CEL authorization library) in variables,
validations and matchConditions, decided by the server's RBAC; the
write-time 422s (an expression that does not compile, the authorizer in a
messageExpression, Deny with Warn, paramRef name and selector, no
validations); status.typeChecking as kube-controller-manager's status
controller writes it (typechecking.go's texts and fieldRefs, for a built-in
kind, a custom resource and paramKind's params, shown by kubectl get and
describe; {} once nothing warns).

Why: Kubernetes 1.30+ clusters (and the tools that install policies, such
as Kyverno's and Gatekeeper's VAP generators, or operators shipping a VAP)
expect the API server to refuse what a policy refuses; a server that stores
policies but never applies them lets everything through silently.
"""

import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import AuditedServerTestCase, describe, wait_until  # noqa: E402

ADM = "/apis/admissionregistration.k8s.io/v1"
VAP = ADM + "/validatingadmissionpolicies"
VAPB = ADM + "/validatingadmissionpolicybindings"
CM_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
           "resources": ["configmaps"]}


def deployment(name, replicas, labels=None):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": labels or {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


class AdmissionPolicy(AuditedServerTestCase, unittest.TestCase):
    # ---- helpers ----

    def namespace(self, name):
        """A namespace labelled vap=<name>, for this test's namespaceSelector."""
        r = self.server.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"vap": name}}})
        self.assertEqual(r.status, 201, r)
        return name

    def create(self, collection, obj):
        r = self.server.request("POST", collection, obj)
        self.assertEqual(r.status, 201, r)
        self.addCleanup(self.server.request, "DELETE",
                        "%s/%s" % (collection, obj["metadata"]["name"]))
        return r.json()

    def policy(self, name, validations=None, rules=None, **spec):
        s = {"failurePolicy": "Fail",
             "matchConstraints": {"resourceRules": rules or [CM_RULE]}}
        if validations is not None:
            s["validations"] = validations
        s.update(spec)
        return self.create(VAP, {"apiVersion": "admissionregistration.k8s.io/v1",
                                 "kind": "ValidatingAdmissionPolicy",
                                 "metadata": {"name": name}, "spec": s})

    def binding(self, name, policy, ns, actions=("Deny",), **spec):
        """A binding of policy to namespace ns (by its label), unless spec says otherwise."""
        s = {"policyName": policy, "validationActions": list(actions),
             "matchResources": {"namespaceSelector": {"matchLabels": {"vap": ns}}}}
        s.update(spec)
        return self.create(VAPB, {"apiVersion": "admissionregistration.k8s.io/v1",
                                  "kind": "ValidatingAdmissionPolicyBinding",
                                  "metadata": {"name": name}, "spec": s})

    def cm(self, ns, name, data=None, labels=None):
        meta = {"name": name}
        if labels:
            meta["labels"] = labels
        return self.server.request("POST", "/api/v1/namespaces/%s/configmaps" % ns, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {}})

    def denial(self, resource, name, text, reason="Invalid", code=422):
        message = "ValidatingAdmissionPolicy %s denied request: %s" % (resource[1], text)
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": '%s "%s" is forbidden: %s' % (resource[0], name, message),
                "reason": reason, "details": dict(
                    {"name": name, "kind": resource[0].split(".")[0],
                     "causes": [{"message": message}]},
                    **({"group": resource[2]} if resource[2] else {})),
                "code": code}

    def type_checked(self, name, generation):
        """The policy once the status controller has checked its generation."""
        def checked():
            p = self.server.request("GET", VAP + "/" + name).json()
            seen = p.get("status", {}).get("observedGeneration")
            return p if seen == generation == p["metadata"]["generation"] else None
        return wait_until(checked, timeout=10, what="status.observedGeneration %d" % generation)

    def audit_annotations(self, r):
        return self.audit_events(r)[-1].get("annotations", {})

    # ---- enforcement ----

    def test_docs_replicas_limit_denied_as_kube_words_it(self):
        ns = self.namespace("vap-docs")
        self.policy("demo-policy.example.com", [{"expression": "object.spec.replicas <= 5"}],
                    rules=[{"apiGroups": ["apps"], "apiVersions": ["v1"],
                            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}])
        self.binding("demo-binding-test.example.com", "demo-policy.example.com", ns)
        coll = "/apis/apps/v1/namespaces/%s/deployments" % ns
        r = self.server.request("POST", coll, deployment("big", 6))
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json(), self.denial(
            ("deployments.apps", "'demo-policy.example.com' with binding "
             "'demo-binding-test.example.com'", "apps"), "big",
            "failed expression: object.spec.replicas <= 5"))
        self.assertEqual(self.server.request("GET", coll + "/big").status, 404)
        r = self.server.request("POST", coll, deployment("small", 3))
        self.assertEqual(r.status, 201, r)
        # an update past the limit too
        d = r.json()
        d["spec"]["replicas"] = 7
        r = self.server.request("PUT", coll + "/small", d)
        self.assertEqual(r.status, 422, r)
        # another namespace is not the binding's
        r = self.server.request("POST", "/apis/apps/v1/namespaces/default/deployments",
                                deployment("vap-docs-elsewhere", 9))
        self.assertEqual(r.status, 201, r)
        self.server.request("DELETE", "/apis/apps/v1/namespaces/default/deployments/"
                            "vap-docs-elsewhere")
        # kubectl prints the Invalid Status from its cause
        manifest = dict(deployment("kbig", 6))
        manifest["metadata"]["namespace"] = ns
        p = self.server.kubectl("create", "-f", "-", input=json.dumps(manifest))
        self.assertNotEqual(p.returncode, 0, describe(p))
        self.assertIn('The deployments "kbig" is invalid: : ValidatingAdmissionPolicy '
                      "'demo-policy.example.com' with binding 'demo-binding-test.example.com' "
                      "denied request: failed expression: object.spec.replicas <= 5",
                      p.stderr, describe(p))

    def test_readme_example_applied_with_kubectl(self):
        """README's example, applied as written with kubectl apply."""
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                               "README.md")) as f:
            readme = f.read()
        start = readme.index("### ValidatingAdmissionPolicy")
        start = readme.index("```yaml\n", start) + len("```yaml\n")
        manifest = readme[start:readme.index("```", start)]
        ns = "vap-readme"
        r = self.server.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "labels": {"environment": "test"}}})
        self.assertEqual(r.status, 201, r)
        p = self.server.kubectl("apply", "-f", "-", input=manifest)
        self.assertEqual(p.returncode, 0, describe(p))
        self.addCleanup(self.server.kubectl, "delete", "-f", "-", input=manifest)
        p = self.server.kubectl("create", "configmap", "replicas-limit", "-n", ns,
                                "--from-literal=max=5")
        self.assertEqual(p.returncode, 0, describe(p))
        coll = "/apis/apps/v1/namespaces/%s/deployments" % ns
        r = self.server.request("POST", coll, deployment("web", 6))
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["message"],
                         "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy "
                         "'replicas-limit' with binding 'replicas-limit-test' denied request: "
                         "at most 5 replicas")
        r = self.server.request("POST", coll, deployment("web", 5))
        self.assertEqual(r.status, 201, r)
        self.assertEqual(self.audit_annotations(r)["replicas-limit/replicas"], "5")

    def test_docs_custom_resource_params(self):
        """The Kubernetes docs' ReplicaLimit param, a custom resource, by name and namespace."""
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "replicalimits.rules.example.com"},
               "spec": {"group": "rules.example.com", "scope": "Namespaced",
                        "names": {"plural": "replicalimits", "singular": "replicalimit",
                                  "kind": "ReplicaLimit"},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {
                                          "type": "object",
                                          "properties": {"maxReplicas": {"type": "integer"}}}}}]}}
        self.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        ns = self.namespace("vap-crd")
        self.policy("replicalimit-policy.example.com",
                    [{"expression": "object.spec.replicas <= params.maxReplicas",
                      "messageExpression": "'object.spec.replicas must be no greater than ' + "
                                           "string(params.maxReplicas)",
                      "reason": "Invalid"}],
                    rules=[{"apiGroups": ["apps"], "apiVersions": ["v1"],
                            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}],
                    paramKind={"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"})
        self.create("/apis/rules.example.com/v1/namespaces/default/replicalimits", {
            "apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit",
            "metadata": {"name": "replica-limit-test.example.com", "namespace": "default"},
            "maxReplicas": 3})
        self.binding("replicalimit-binding-test.example.com", "replicalimit-policy.example.com",
                     ns, paramRef={"name": "replica-limit-test.example.com",
                                   "namespace": "default", "parameterNotFoundAction": "Deny"})
        coll = "/apis/apps/v1/namespaces/%s/deployments" % ns
        r = self.server.request("POST", coll, deployment("four", 4))
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["message"],
                         "deployments.apps \"four\" is forbidden: ValidatingAdmissionPolicy "
                         "'replicalimit-policy.example.com' with binding "
                         "'replicalimit-binding-test.example.com' denied request: "
                         "object.spec.replicas must be no greater than 3")
        r = self.server.request("POST", coll, deployment("three", 3))
        self.assertEqual(r.status, 201, r)

    def test_equivalent_version_converted(self):
        """A policy on v1 of a custom resource judges a v2 request on the object converted to v1,
        with request.kind v1 and request.requestKind v2 (matchPolicy Equivalent)."""
        schema = {"openAPIV3Schema": {"type": "object",
                                      "x-kubernetes-preserve-unknown-fields": True}}
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "gadgets.vapeq.example.com"},
               "spec": {"group": "vapeq.example.com", "scope": "Namespaced",
                        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                        "versions": [
                            {"name": "v1", "served": True, "storage": True, "schema": schema},
                            {"name": "v2", "served": True, "storage": False,
                             "schema": schema}]}}
        self.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        ns = self.namespace("vap-eq")
        self.policy("vap-eq", [
            {"expression": "object.apiVersion == 'vapeq.example.com/v1'",
             "message": "not converted"},
            {"expression": "request.kind.version == 'v1' && "
                           "request.requestKind.version == 'v2'", "message": "kinds"},
            {"expression": "object.spec.size <= 3", "message": "too big"}],
            rules=[{"apiGroups": ["vapeq.example.com"], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["gadgets"]}])
        self.binding("vap-eq-b", "vap-eq", ns)
        coll = "/apis/vapeq.example.com/v2/namespaces/%s/gadgets" % ns

        def gadget(name, size):
            return {"apiVersion": "vapeq.example.com/v2", "kind": "Gadget",
                    "metadata": {"name": name}, "spec": {"size": size}}
        r = self.server.request("POST", coll, gadget("small", 2))
        self.assertEqual(r.status, 201, r)
        r = self.server.request("POST", coll, gadget("big", 5))
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith("denied request: too big"), r)
        # matchPolicy Exact: a v2 request is not the policy's
        self.server.request("DELETE", VAPB + "/vap-eq-b")
        self.policy("vap-eq-exact", [{"expression": "false", "message": "exact"}],
                    rules=[{"apiGroups": ["vapeq.example.com"], "apiVersions": ["v1"],
                            "operations": ["CREATE"], "resources": ["gadgets"]}],
                    matchConstraints={"matchPolicy": "Exact", "resourceRules": [
                        {"apiGroups": ["vapeq.example.com"], "apiVersions": ["v1"],
                         "operations": ["CREATE"], "resources": ["gadgets"]}]})
        self.binding("vap-eq-exact-b", "vap-eq-exact", ns)
        self.assertEqual(self.server.request("POST", coll, gadget("exact", 9)).status, 201)
        r = self.server.request("POST", "/apis/vapeq.example.com/v1/namespaces/%s/gadgets" % ns,
                                dict(gadget("exact-v1", 1), apiVersion="vapeq.example.com/v1"))
        self.assertEqual(r.status, 422, r)

    def test_warn_and_audit_actions_and_audit_annotations(self):
        ns = self.namespace("vap-warn")
        self.policy("vap-warn", [{"expression": "size(object.data) < 2",
                                  "message": "too much data"}],
                    auditAnnotations=[{"key": "size",
                                       "valueExpression": "string(size(object.data))"}])
        self.binding("vap-warn-b", "vap-warn", ns, actions=("Warn", "Audit"))
        r = self.cm(ns, "big", {"a": "1", "b": "2"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.headers.get("warning"),
                         "299 - \"Validation failed for ValidatingAdmissionPolicy 'vap-warn' "
                         "with binding 'vap-warn-b': too much data\"", r.headers)
        ann = self.audit_annotations(r)
        self.assertEqual(json.loads(ann["validation.policy.admission.k8s.io/validation_failure"]),
                         [{"message": "too much data", "policy": "vap-warn",
                           "binding": "vap-warn-b", "expressionIndex": 0,
                           "validationActions": ["Warn", "Audit"]}])
        self.assertEqual(ann["vap-warn/size"], "2")
        # a request that passes: no warning, no failure annotation
        r = self.cm(ns, "small", {"a": "1"})
        self.assertEqual(r.status, 201, r)
        self.assertIsNone(r.headers.get("warning"))
        ann = self.audit_annotations(r)
        self.assertNotIn("validation.policy.admission.k8s.io/validation_failure", ann)
        self.assertEqual(ann["vap-warn/size"], "1")

    def test_message_expression_reason_and_variables(self):
        ns = self.namespace("vap-msg")
        self.policy("vap-msg", [
            {"expression": "variables.n <= 1", "reason": "Forbidden",
             "messageExpression": "'has ' + string(variables.n) + ' keys'",
             "message": "unused when the expression gives a message"},
            {"expression": "!('bad' in object.data)", "message": "no bad key",
             "messageExpression": "'two\\nlines are refused'"},
        ], variables=[{"name": "n", "expression": "size(object.data)"}])
        self.binding("vap-msg-b", "vap-msg", ns)
        r = self.cm(ns, "two", {"a": "1", "b": "2"})
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json(), self.denial(
            ("configmaps", "'vap-msg' with binding 'vap-msg-b'", ""), "two", "has 2 keys",
            reason="Forbidden", code=403))
        # a multi-line messageExpression falls back to message
        r = self.cm(ns, "bad", {"bad": "1"})
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith("denied request: no bad key"), r)
        self.assertEqual(self.cm(ns, "one", {"a": "1"}).status, 201)

    def test_authorizer_decided_by_rbac(self):
        # kube's CEL authorization library in a policy's variable,
        # validation and matchCondition, decided by this server's RBAC: a
        # service account's permission (granted in between) changes the answer
        ns = self.namespace("vap-authz")
        self.policy("vap-authz", [
            {"expression": "!('approved' in object.metadata.?labels.orValue({})) || "
                           "variables.approver",
             "message": "approval needs the approver"}],
            variables=[{"name": "approver", "expression":
                        "authorizer.serviceAccount(request.namespace, 'approver').group('')"
                        ".resource('configmaps').namespace(request.namespace)"
                        ".check('approve').allowed()"}],
            matchConditions=[{"name": "creator", "expression":
                              "authorizer.requestResource.check('create').allowed()"}])
        self.binding("vap-authz-b", "vap-authz", ns)
        r = self.cm(ns, "a", labels={"approved": "yes"})
        self.assertEqual(r.json(), self.denial(
            ("configmaps", "'vap-authz' with binding 'vap-authz-b'", ""), "a",
            "approval needs the approver"))
        self.assertEqual(self.cm(ns, "b").status, 201)
        rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/" % ns
        self.create(rbac + "roles", {"metadata": {"name": "approve"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["approve"]}]})
        self.create(rbac + "rolebindings", {
            "metadata": {"name": "approver"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                        "name": "approve"},
            "subjects": [{"kind": "ServiceAccount", "name": "approver", "namespace": ns}]})
        wait_until(lambda: self.cm(ns, "c", labels={"approved": "yes"}).status == 201,
                   what="the binding seen by the policy")

    def test_namespaced_functions_and_library_types(self):
        # sets.contains, optional.of, ip.isCanonical and net.IP compile as
        # kube's environment declares them (no variables named sets, net)
        ns = self.namespace("vap-sets")
        self.policy("vap-sets", [
            {"expression": "!has(object.data) || sets.contains(['a', 'b', 'ip'], "
                           "object.data.map(k, k))", "message": "only keys a, b and ip"},
            {"expression": "!has(object.data.ip) || (ip.isCanonical(object.data.ip) && "
                           "type(ip(object.data.ip)) == net.IP && "
                           "optional.of(object.data.ip).hasValue())",
             "message": "a canonical address"}])
        self.binding("vap-sets-b", "vap-sets", ns)
        self.assertEqual(self.cm(ns, "ok", {"a": "1", "b": "2"}).status, 201)
        r = self.cm(ns, "other", {"a": "1", "c": "3"})
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith("denied request: only keys a, b and ip"), r)
        r = self.cm(ns, "ip", {"ip": "2001:DB8::1"})
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith("denied request: a canonical address"), r)

    def test_params_by_name_selector_and_not_found(self):
        ns = self.namespace("vap-params")
        self.policy("vap-params", [{"expression": "size(object.data) <= int(params.data.max)",
                                    "messageExpression": "'at most ' + params.data.max"}],
                    paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                    matchConditions=[{"name": "not-params",
                                      "expression": "!object.metadata.name.startsWith('limit')"}])
        self.binding("vap-params-missing", "vap-params", ns,
                     paramRef={"name": "missing", "parameterNotFoundAction": "Deny"})
        # the param does not exist: kube's configuration error
        r = self.cm(ns, "x", {"a": "1"})
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["message"],
                         "configmaps \"x\" is forbidden: ValidatingAdmissionPolicy 'vap-params' "
                         "with binding 'vap-params-missing' denied request: failed to configure "
                         "binding: no params found for policy binding with `Deny` "
                         "parameterNotFoundAction")
        self.assertEqual(self.server.request("DELETE", VAPB + "/vap-params-missing").status, 200)
        # the param in the request's namespace (paramRef.namespace unset)
        self.assertEqual(self.cm(ns, "limit", {"max": "1"}, {"limit": "yes"}).status, 201)
        self.binding("vap-params-name", "vap-params", ns,
                     paramRef={"name": "limit", "parameterNotFoundAction": "Deny"})
        self.assertEqual(self.cm(ns, "ok", {"a": "1"}).status, 201)
        r = self.cm(ns, "over", {"a": "1", "b": "2"})
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith("denied request: at most 1"), r)

    def test_params_by_selector_and_allow(self):
        ns = self.namespace("vap-sel")
        self.policy("vap-sel", [{"expression": "size(object.data) <= int(params.data.max)",
                                 "messageExpression": "'at most ' + params.data.max"}],
                    paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                    matchConditions=[{"name": "not-params",
                                      "expression": "!has(object.metadata.labels)"}])
        self.binding("vap-sel-b", "vap-sel", ns,
                     paramRef={"selector": {"matchLabels": {"limit": "yes"}},
                               "parameterNotFoundAction": "Allow"})
        # no params and Allow: nothing evaluated
        self.assertEqual(self.cm(ns, "free", {"a": "1", "b": "2", "c": "3"}).status, 201)
        self.assertEqual(self.cm(ns, "l1", {"max": "3"}, {"limit": "yes"}).status, 201)
        self.assertEqual(self.cm(ns, "l2", {"max": "1"}, {"limit": "yes"}).status, 201)
        # every selected param is evaluated: the stricter one refuses
        r = self.cm(ns, "two", {"a": "1", "b": "2"})
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith("denied request: at most 1"), r)
        self.assertEqual(self.cm(ns, "one", {"a": "1"}).status, 201)

    def test_selectors_exclusions_names_and_match_conditions(self):
        ns = self.namespace("vap-match")
        self.policy("vap-match", [{"expression": "false", "message": "refused"}],
                    rules=[dict(CM_RULE)],
                    matchConditions=[{"name": "not-skipped",
                                      "expression": "!object.metadata.name.startsWith('skip')"}])
        self.binding("vap-match-b", "vap-match", ns, matchResources={
            "namespaceSelector": {"matchLabels": {"vap": ns}},
            "objectSelector": {"matchExpressions": [
                {"key": "free", "operator": "DoesNotExist"}]},
            "excludeResourceRules": [dict(CM_RULE, resourceNames=["excluded"])]})
        self.assertEqual(self.cm(ns, "refused").status, 422)
        self.assertEqual(self.cm(ns, "labelled", labels={"free": "1"}).status, 201)
        self.assertEqual(self.cm(ns, "excluded").status, 201)
        self.assertEqual(self.cm(ns, "skipped").status, 201)
        self.assertEqual(self.cm("default", "vap-match-elsewhere").status, 201)
        self.server.request("DELETE", "/api/v1/namespaces/default/configmaps/vap-match-elsewhere")

    def test_failure_policy_on_errors_and_cost_budget(self):
        ns = self.namespace("vap-fail")
        self.policy("vap-fail", [{"expression": "object.data.missing == 'x'"}],
                    matchConditions=[{"name": "named", "expression":
                                      "object.metadata.name.startsWith('err')"}])
        self.binding("vap-fail-b", "vap-fail", ns)
        r = self.cm(ns, "err", {"a": "1"})
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith(
            "denied request: expression 'object.data.missing == 'x'' resulted in error: "
            "no such key: missing"), r)
        self.policy("vap-ignore", [{"expression": "object.data.missing == 'x'"}],
                    failurePolicy="Ignore",
                    matchConditions=[{"name": "named", "expression":
                                      "object.metadata.name.startsWith('ign')"}])
        self.binding("vap-ignore-b", "vap-ignore", ns)
        self.assertEqual(self.cm(ns, "ign", {"a": "1"}).status, 201)
        # a hostile expression is cut off by kube's per-call cost limit
        # (PerCallLimit), with its error, in bounded time
        big = "[" + ",".join(str(i) for i in range(100)) + "]"
        hostile = ("%s.all(a, %s.all(b, %s.all(c, %s.all(d, a + b + c + d >= 0))))"
                   % (big, big, big, big))
        self.policy("vap-cost", [{"expression": hostile}],
                    matchConditions=[{"name": "named", "expression":
                                      "object.metadata.name.startsWith('cost')"}])
        self.binding("vap-cost-b", "vap-cost", ns)
        t0 = time.monotonic()
        r = self.cm(ns, "cost")
        took = time.monotonic() - t0
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith(
            "denied request: expression '%s' resulted in error: operation cancelled: actual "
            "cost limit exceeded" % hostile), r)
        self.assertLess(took, 30, "the limit did not bound the request")
        # expressions each within the limit (kube's runtime cost of one:
        # 631,201, the literal list folded) spend the policy's budget
        # (RuntimeCELCostBudget, 10,000,000) at the 16th
        wide = "[" + ",".join(str(i) for i in range(300)) + "]"
        costly = "%s.all(a, %s.all(b, a + b >= 0))" % (wide, wide)
        self.policy("vap-budget", [{"expression": costly}] * 16,
                    matchConditions=[{"name": "named", "expression":
                                      "object.metadata.name.startsWith('budget')"}])
        self.binding("vap-budget-b", "vap-budget", ns)
        t0 = time.monotonic()
        r = self.cm(ns, "budget")
        took = time.monotonic() - t0
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith(
            "denied request: validation failed due to running out of cost budget, no further "
            "validation rules will be run"), r)
        self.assertLess(took, 30, "the budget did not bound the request")
        # fifteen are within it
        self.policy("vap-within", [{"expression": costly}] * 15,
                    matchConditions=[{"name": "named", "expression":
                                      "object.metadata.name.startsWith('within')"}])
        self.binding("vap-within-b", "vap-within", ns)
        r = self.cm(ns, "within")
        self.assertEqual(r.status, 201, r)

    def test_cluster_scoped_request_and_param_namespaces(self):
        """A namespaced paramRef without a namespace cannot serve a cluster-scoped request,
        and a cluster-scoped paramKind takes no namespace: kube's configuration errors."""
        rules = [{"apiGroups": ["rbac.authorization.k8s.io"], "apiVersions": ["v1"],
                  "operations": ["CREATE"], "resources": ["clusterroles"]}]
        coll = "/apis/rbac.authorization.k8s.io/v1/clusterroles"

        def clusterrole(name, label):
            return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": name, "labels": {label: "yes"}}, "rules": []}
        self.policy("vap-cs", [{"expression": "true"}], rules=rules,
                    paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
        self.binding("vap-cs-b", "vap-cs", None, matchResources={
            "objectSelector": {"matchLabels": {"vap-cs": "yes"}}},
            paramRef={"name": "limits", "parameterNotFoundAction": "Deny"})
        r = self.server.request("POST", coll, clusterrole("vap-cs-a", "vap-cs"))
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["message"],
                         "clusterroles.rbac.authorization.k8s.io \"vap-cs-a\" is forbidden: "
                         "ValidatingAdmissionPolicy 'vap-cs' with binding 'vap-cs-b' denied "
                         "request: failed to configure binding: cannot use namespaced paramRef in "
                         "policy binding that matches cluster-scoped resources")
        self.policy("vap-cs2", [{"expression": "params.metadata.name == 'default'"}],
                    rules=rules, paramKind={"apiVersion": "v1", "kind": "Namespace"})
        self.binding("vap-cs2-b", "vap-cs2", None, matchResources={
            "objectSelector": {"matchLabels": {"vap-cs2": "yes"}}},
            paramRef={"name": "default", "namespace": "default",
                      "parameterNotFoundAction": "Deny"})
        r = self.server.request("POST", coll, clusterrole("vap-cs-b", "vap-cs2"))
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith(
            "failed to configure binding: paramRef.namespace must not be provided for a "
            "cluster-scoped `paramKind`"), r)
        # no namespace given: the Namespace named is the param
        self.assertEqual(self.server.request("DELETE", VAPB + "/vap-cs2-b").status, 200)
        self.binding("vap-cs2-c", "vap-cs2", None, matchResources={
            "objectSelector": {"matchLabels": {"vap-cs2": "yes"}}},
            paramRef={"name": "default", "parameterNotFoundAction": "Deny"})
        self.create(coll, clusterrole("vap-cs-b", "vap-cs2"))

    def test_delete_is_reviewed(self):
        ns = self.namespace("vap-del")
        self.assertEqual(self.cm(ns, "keep").status, 201)
        self.policy("vap-del", [{"expression": "request.operation != 'DELETE' || "
                                               "oldObject.metadata.name != 'keep'",
                                 "message": "keep is kept"}],
                    rules=[dict(CM_RULE, operations=["DELETE"])])
        self.binding("vap-del-b", "vap-del", ns)
        r = self.server.request("DELETE", "/api/v1/namespaces/%s/configmaps/keep" % ns)
        self.assertEqual(r.status, 422, r)
        self.assertTrue(r.json()["message"].endswith("denied request: keep is kept"), r)

    # ---- validation when written ----

    def bad(self, collection, kind, spec, name="bad"):
        r = self.server.request("POST", collection, {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name}, "spec": spec})
        self.assertEqual(r.status, 422, r)
        return r.json()["message"]

    def test_policy_validated_when_written(self):
        rules = {"resourceRules": [CM_RULE]}
        msg = self.bad(VAP, "ValidatingAdmissionPolicy", {
            "matchConstraints": rules, "validations": [{"expression": "object.spec.x <"}]})
        self.assertIn('ValidatingAdmissionPolicy.admissionregistration.k8s.io "bad" is invalid: '
                      'spec.validations[0].expression: Invalid value: "object.spec.x <": '
                      "compilation failed: ERROR: <input>:1:16: Syntax error", msg)
        msg = self.bad(VAP, "ValidatingAdmissionPolicy", {"matchConstraints": rules})
        self.assertIn("spec.validations: Required value: validations or auditAnnotations must "
                      "contain at least one item", msg)
        msg = self.bad(VAP, "ValidatingAdmissionPolicy", {
            "matchConstraints": rules, "validations": [{"expression": "params.x == 1"}]})
        self.assertIn("undeclared reference to 'params'", msg)
        msg = self.bad(VAP, "ValidatingAdmissionPolicy", {
            "matchConstraints": rules,
            "validations": [{"expression": "true", "reason": "Teapot"}],
            "variables": [{"name": "in", "expression": "1"}]})
        self.assertIn('spec.variables[0].name: Invalid value: "in": name is not a valid CEL '
                      "identifier", msg)
        self.assertIn('spec.validations[0].reason: Unsupported value: "Teapot": supported '
                      'values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"',
                      msg)
        # kube declares no authorizer for a messageExpression
        msg = self.bad(VAP, "ValidatingAdmissionPolicy", {
            "matchConstraints": rules, "validations": [
                {"expression": "authorizer.path('/').check('get').allowed()",
                 "messageExpression": "authorizer.path('/').check('get').reason()"}]})
        self.assertIn("spec.validations[0].messageExpression: Invalid value: ", msg)
        self.assertIn("undeclared reference to 'authorizer'", msg)
        self.assertNotIn("spec.validations[0].expression", msg)
        msg = self.bad(VAP, "ValidatingAdmissionPolicy", {"validations": [{"expression": "true"}]})
        self.assertIn("spec.matchConstraints: Required value", msg)

    def test_policy_types_checked_when_written(self):
        # kube 1.32 type-checks each expression with its variables declared
        # (object, oldObject, params dyn; request and namespaceObject its own
        # types; the authorizer's; variables with their own types) and holds
        # it to the type its field gives
        rules = {"resourceRules": [CM_RULE]}
        name = "typed"
        r = self.server.request("POST", VAP, {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name}, "spec": {
                "failurePolicy": "Fail", "matchConstraints": rules,
                "validations": [{"expression": "object.spec.paused"}]}})
        message = ('spec.validations[0].expression: Invalid value: "object.spec.paused": '
                   "must evaluate to bool but got dyn")
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json(), {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'ValidatingAdmissionPolicy.admissionregistration.k8s.io "typed" is '
                       "invalid: " + message,
            "reason": "Invalid", "details": {
                "name": name, "group": "admissionregistration.k8s.io",
                "kind": "ValidatingAdmissionPolicy",
                "causes": [{"reason": "FieldValueInvalid",
                            "message": 'Invalid value: "object.spec.paused": must evaluate to '
                                       "bool but got dyn",
                            "field": "spec.validations[0].expression"}]},
            "code": 422})
        cases = [
            ({"validations": [{"expression": "true", "messageExpression": "size(object.data)"}]},
             'spec.validations[0].messageExpression: Invalid value: "size(object.data)": must '
             "evaluate to string but got int"),
            ({"auditAnnotations": [{"key": "k", "valueExpression": "1"}]},
             'spec.auditAnnotations[0].valueExpression: Invalid value: "1": must evaluate to '
             "one of [string null_type] but got int"),
            ({"validations": [{"expression": "true"}],
              "matchConditions": [{"name": "m", "expression": "[1]"}]},
             'spec.matchConditions[0].expression: Invalid value: "[1]": must evaluate to bool '
             "but got list(int)"),
            ({"validations": [{"expression": "request.name + 1 == 'x'"}]},
             "spec.validations[0].expression: Invalid value: \"request.name + 1 == 'x'\": "
             "compilation failed: ERROR: <input>:1:14: found no matching overload for '_+_' "
             "applied to '(string, int)'\n | request.name + 1 == 'x'\n | .............^"),
            ({"validations": [{"expression": "request.userInfo.name == 'x'"}]},
             "compilation failed: ERROR: <input>:1:17: undefined field 'name'\n"
             " | request.userInfo.name == 'x'\n | ................^"),
            # variables have their types, and see only those before them
            ({"validations": [{"expression": "variables.n == 'two'"}],
              "variables": [{"name": "n", "expression": "size(object.data)"},
                            {"name": "m", "expression": "variables.later"},
                            {"name": "later", "expression": "1"}]},
             "spec.variables[1].expression: Invalid value: \"variables.later\": compilation "
             "failed: ERROR: <input>:1:10: undefined field 'later'\n | variables.later\n"
             " | .........^, spec.validations[0].expression: Invalid value: \"variables.n == "
             "'two'\": compilation failed: ERROR: <input>:1:13: found no matching overload "
             "for '_==_' applied to '(int, string)'\n | variables.n == 'two'\n"
             " | ............^"),
            # a new expression is checked in kube 1.31's environment
            ({"validations": [{"expression": "object.data.all(k, v, k != v)"}]},
             "spec.validations[0].expression: Invalid value: \"object.data.all(k, v, k != v)\": "
             "compilation failed: ERROR: <input>:1:16: undeclared reference to 'all' (in "
             "container '')"),
        ]
        for spec, want in cases:
            spec = dict({"matchConstraints": rules}, **spec)
            self.assertIn(want, self.bad(VAP, "ValidatingAdmissionPolicy", spec))
        # what the types allow is stored: null and a string annotation, a
        # string message, a typed request and namespaceObject, the authorizer
        self.policy("typed-ok", [
            {"expression": "request.userInfo.groups.exists(g, g == 'x') || "
                           "namespaceObject.metadata.labels['tier'] != 'gold' || "
                           "authorizer.requestResource.check('get').allowed() || "
                           "variables.names.all(n, n != '')",
             "messageExpression": "'keys: ' + variables.names.join(',')"}],
            auditAnnotations=[{"key": "a", "valueExpression": "null"},
                              {"key": "b", "valueExpression": " request.operation "}],
            variables=[{"name": "names", "expression": "object.data.map(k, k)"}])
        # an update checks again, its stored expressions in 1.32's environment
        # (read once the status controller has written, so the update does
        # not race it)
        p = self.type_checked("typed-ok", 1)
        r = self.server.request("PUT", VAP + "/typed-ok", p)
        self.assertEqual(r.status, 200, r)
        p = r.json()
        p["spec"]["validations"].append({"expression": "variables.names"})
        r = self.server.request("PUT", VAP + "/typed-ok", p)
        self.assertEqual(r.status, 422, r)
        self.assertIn('spec.validations[1].expression: Invalid value: "variables.names": must '
                      "evaluate to bool but got list(dyn)", r.json()["message"])

    # ---- status.typeChecking (kube-controller-manager's
    # validatingadmissionpolicy-status controller, pkg/controller/
    # validatingadmissionpolicystatus/controller.go; the checker and its
    # texts: k8s.io/apiserver pkg/admission/plugin/policy/validating/
    # typechecking.go) ----

    def test_status_type_checking_of_a_built_in_kind(self):
        """Warnings against apps/v1 Deployment's schema, none once fixed; kubectl shows them."""
        rules = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                  "resources": ["deployments", "deployments/scale"]}]
        self.policy("typecheck-deployments", [
            {"expression": "object.spec.replicas > 1",
             "messageExpression": "'replicas: ' + string(object.spec.replicas)"},
            {"expression": "object.spec.replicasx > 1",
             "messageExpression": "'name: ' + object.metadata.namex"},
            {"expression": "object.metadata.labels['app'] == variables.app"},
        ], rules=rules, variables=[{"name": "app", "expression": "object.metadata.name"}])
        p = self.type_checked("typecheck-deployments", 1)
        # TypeCheckingResult.String: "<GVK>: <cel-go's issues>\n"
        self.assertEqual(p["status"], {"observedGeneration": 1, "typeChecking": {
            "expressionWarnings": [
                {"fieldRef": "spec.validations[1].expression",
                 "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field "
                            "'replicasx'\n | object.spec.replicasx > 1\n | ...........^\n"},
                {"fieldRef": "spec.validations[1].messageExpression",
                 "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:27: undefined field "
                            "'namex'\n | 'name: ' + object.metadata.namex\n"
                            " | ..........................^\n"}]}})
        # applied as kube's controller applies it: forced, through /status
        entry = [m for m in p["metadata"]["managedFields"]
                 if m.get("manager") == "validatingadmissionpolicy-status"]
        self.assertEqual([(m["operation"], m.get("subresource"), m["fieldsV1"]) for m in entry], [
            ("Apply", "status", {"f:status": {"f:observedGeneration": {}, "f:typeChecking": {
                "f:expressionWarnings": {}}}})])
        out = self.server.kubectl("get", "validatingadmissionpolicy", "typecheck-deployments",
                                  "-o", "jsonpath={.status.typeChecking.expressionWarnings[0]"
                                  ".fieldRef}")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, "spec.validations[1].expression")
        out = self.server.kubectl("describe", "validatingadmissionpolicy",
                                  "typecheck-deployments")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("Observed Generation:  1", out.stdout)
        self.assertIn("Field Ref:  spec.validations[1].messageExpression", out.stdout)
        self.assertIn("undefined field 'replicasx'", out.stdout)
        # a new generation is checked again: nothing to warn leaves typeChecking {}
        p["spec"]["validations"] = p["spec"]["validations"][:1]
        r = self.server.request("PUT", VAP + "/typecheck-deployments", p)
        self.assertEqual(r.status, 200, r)
        p = self.type_checked("typecheck-deployments", 2)
        self.assertEqual(p["status"], {"observedGeneration": 2, "typeChecking": {}})
        entry = [m for m in p["metadata"]["managedFields"]
                 if m.get("manager") == "validatingadmissionpolicy-status"]
        self.assertEqual([m["fieldsV1"] for m in entry], [
            {"f:status": {"f:observedGeneration": {}, "f:typeChecking": {}}}])

    def test_status_type_checking_of_custom_resources_and_params(self):
        """A CRD's schema types object, paramKind's params; kinds in order, wildcards skipped."""
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "gizmos.typecheck.example.com"},
               "spec": {"group": "typecheck.example.com", "scope": "Namespaced",
                        "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {
                                          "type": "object", "properties": {"spec": {
                                              "type": "object", "properties": {
                                                  "size": {"type": "integer"}}}}}}}]}}
        self.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        wait_until(lambda: self.server.request(
            "GET", "/apis/typecheck.example.com/v1/gizmos").status == 200, what="gizmos served")
        rules = [{"apiGroups": ["typecheck.example.com"], "apiVersions": ["v1"],
                  "operations": ["CREATE"], "resources": ["gizmos"]},
                 {"apiGroups": ["*"], "apiVersions": ["v1"], "operations": ["CREATE"],
                  "resources": ["configmaps"]},
                 {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                  "resources": ["secrets", "configmaps"]}]
        self.policy("typecheck-gizmos", [
            {"expression": "object.spec.size < int(params.data.max)"},
            {"expression": "params.foo == 'x'"},
            {"expression": "object.spec.sizes > 1"},
            {"expression": "object.metadata.labels['a'] == 'b'"},
        ], rules=rules, paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
        p = self.type_checked("typecheck-gizmos", 1)

        def text(gvk, src, col, error):
            return "%s: ERROR: <input>:1:%d: %s\n | %s\n | %s^\n" % (
                gvk, col, error, src, "." * (col - 1))
        kinds = ["/v1, Kind=ConfigMap", "/v1, Kind=Secret", "typecheck.example.com/v1, Kind=Gizmo"]
        self.assertEqual(p["status"]["typeChecking"]["expressionWarnings"], [
            # ConfigMap and Secret have no spec
            {"fieldRef": "spec.validations[0].expression", "warning": "\n".join(
                text(k, "object.spec.size < int(params.data.max)", 7, "undefined field 'spec'")
                for k in kinds[:2])},
            {"fieldRef": "spec.validations[1].expression", "warning": "\n".join(
                text(k, "params.foo == 'x'", 7, "undefined field 'foo'") for k in kinds)},
            {"fieldRef": "spec.validations[2].expression", "warning": "\n".join(
                text(k, "object.spec.sizes > 1", 7, "undefined field 'spec'")
                for k in kinds[:2]) + "\n" + text(kinds[2], "object.spec.sizes > 1", 12,
                                                   "undefined field 'sizes'")},
        ])

    def test_binding_validated_when_written(self):
        kind = "ValidatingAdmissionPolicyBinding"
        msg = self.bad(VAPB, kind, {"policyName": "p", "validationActions": ["Deny", "Warn"]})
        self.assertIn("spec.validationActions: Invalid value: ", msg)
        self.assertIn("must not contain both Deny and Warn (repeating the same validation "
                      "failure information in the API response and headers serves no purpose)",
                      msg)
        msg = self.bad(VAPB, kind, {"policyName": "p"})
        self.assertIn("spec.validationActions: Required value: at least one validation action "
                      "is required", msg)
        msg = self.bad(VAPB, kind, {"policyName": "p", "validationActions": ["Deny"],
                                    "paramRef": {"name": "a", "selector": {}}})
        self.assertIn("spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
                      msg)
        self.assertIn("spec.paramRef.parameterNotFoundAction: Required value", msg)
        msg = self.bad(VAPB, kind, {"validationActions": ["Deny"], "paramRef": {
            "parameterNotFoundAction": "Deny"}})
        self.assertIn("spec.policyName: Required value", msg)
        self.assertIn("spec.paramRef: Required value: one of name or selector must be specified",
                      msg)


if __name__ == "__main__":
    unittest.main()
