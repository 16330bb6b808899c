"""Built-in workload kinds read back as kube-apiserver 1.32 stores them.

Creates a Pod, Deployment, Service, Job and DaemonSet with raw JSON and with
the official Python client, and checks what a client reads back: the
defaults (SetDefaults_* of core, apps and batch v1), the typed round trip
(zero-value fields such as a container's "resources": {} and a template's
"creationTimestamp": null, canonical quantities), the 400 a body that does
not decode gets, and the 422s with field causes for the errors users meet
first (no containers, a selector not matching its template, immutable
fields on update).
Why: a client that reads back what it wrote (kubectl apply's diff, a
controller comparing specs) sees every missing default as a change.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase  # noqa: E402

from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

NS = "default"
PODS = "/api/v1/namespaces/%s/pods" % NS
DEPLOYS = "/apis/apps/v1/namespaces/%s/deployments" % NS
DAEMONSETS = "/apis/apps/v1/namespaces/%s/daemonsets" % NS
SERVICES = "/api/v1/namespaces/%s/services" % NS
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS

CONTAINER_DEFAULTS = {"resources": {}, "terminationMessagePath": "/dev/termination-log",
                      "terminationMessagePolicy": "File"}
POD_SPEC_DEFAULTS = {"restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                     "dnsPolicy": "ClusterFirst", "securityContext": {},
                     "schedulerName": "default-scheduler"}


def template(labels, image="nginx:1.25", restart=None):
    spec = {"containers": [{"name": "c", "image": image}]}
    if restart:
        spec["restartPolicy"] = restart
    return {"metadata": {"labels": labels}, "spec": spec}


class BuiltinDefaults(ServerTestCase, unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cfg = client.Configuration()
        config.load_kube_config(config_file=cls.server.kubeconfig, client_configuration=cfg,
                                persist_config=False)
        cls.api_client = client.ApiClient(cfg)

    @classmethod
    def tearDownClass(cls):
        api = getattr(cls, "api_client", None)
        if api is not None:
            api.close()
        super().tearDownClass()

    def create(self, path, obj, code=201):
        r = self.server.request("POST", path, body=obj)
        self.assertEqual(r.status, code, r)
        return r.json()

    def invalid(self, method, path, obj, message, causes):
        r = self.server.request(method, path, body=obj)
        self.assertEqual(r.status, 422, r)
        st = r.json()
        self.assertEqual(st["reason"], "Invalid", st)
        self.assertEqual(st["message"], message)
        self.assertEqual([(c["field"], c["reason"], c["message"]) for c in st["details"]["causes"]],
                         causes)
        return st

    def test_pod_defaults_and_read_back(self):
        got = self.create(PODS, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                                     "resources": {"limits": {"cpu": "1000m", "memory": "1024Mi"}},
                                     "bogus": True}]}})
        read = self.server.request("GET", PODS + "/web").json()
        self.assertEqual(read, got)
        self.assertEqual(list(read), ["kind", "apiVersion", "metadata", "spec", "status"])
        spec = read["spec"]
        for k, v in POD_SPEC_DEFAULTS.items():
            self.assertEqual(spec[k], v, k)
        self.assertEqual(spec["enableServiceLinks"], True)
        self.assertEqual(spec["priority"], 0)
        self.assertEqual(spec["preemptionPolicy"], "PreemptLowerPriority")
        c = spec["containers"][0]
        self.assertNotIn("bogus", c)
        self.assertEqual(c["imagePullPolicy"], "Always")  # no tag means :latest
        self.assertEqual(c["ports"], [{"containerPort": 80, "protocol": "TCP"}])
        self.assertEqual(c["terminationMessagePath"], "/dev/termination-log")
        self.assertEqual(c["terminationMessagePolicy"], "File")
        # canonical quantities; requests default to limits on a Pod
        self.assertEqual(c["resources"], {"limits": {"cpu": "1", "memory": "1Gi"},
                                          "requests": {"cpu": "1", "memory": "1Gi"}})
        self.assertEqual(read["status"], {"phase": "Pending", "qosClass": "Guaranteed"})

    def test_pod_decode_and_validation_errors(self):
        r = self.server.request("POST", PODS, body={
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
            "spec": {"containers": "x"}})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["message"],
                         'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal '
                         'string into Go struct field PodSpec.spec.containers of type '
                         '[]v1.Container')
        r = self.server.request("POST", PODS, body={
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
            "spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"limits": {"cpu": "lots"}}}]}})
        self.assertEqual(r.status, 400, r)
        self.assertIn("quantities must match the regular expression", r.json()["message"])
        self.invalid("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
                                    "spec": {}},
                     'Pod "bad" is invalid: spec.containers: Required value',
                     [("spec.containers", "FieldValueRequired", "Required value")])
        self.invalid("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
                                    "spec": {"containers": [{"name": "c"}]}},
                     'Pod "bad" is invalid: spec.containers[0].image: Required value',
                     [("spec.containers[0].image", "FieldValueRequired", "Required value")])
        # Only images (and a few scheduling fields) of a pod may change.
        self.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fixed"},
                           "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}})
        pod = self.server.request("GET", PODS + "/fixed").json()
        pod["spec"]["containers"][0]["image"] = "nginx:2"
        r = self.server.request("PUT", PODS + "/fixed", body=pod)
        self.assertEqual(r.status, 200, r)
        pod = r.json()
        pod["spec"]["restartPolicy"] = "Never"
        r = self.server.request("PUT", PODS + "/fixed", body=pod)
        self.assertEqual(r.status, 422, r)
        st = r.json()
        self.assertTrue(st["message"].startswith(
            'Pod "fixed" is invalid: spec: Forbidden: pod updates may not change fields other '
            'than `spec.containers[*].image`'), st["message"])
        self.assertEqual(st["details"]["causes"][0]["field"], "spec")

    def test_deployment_defaults_and_selector(self):
        self.invalid("POST", DEPLOYS, {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "metadata": {"name": "web"},
                                       "spec": {"template": template({"app": "web"})}},
                     'Deployment.apps "web" is invalid: [spec.selector: Required value, '
                     'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
                     '`selector` does not match template `labels`]',
                     [("spec.selector", "FieldValueRequired", "Required value"),
                      ("spec.template.metadata.labels", "FieldValueInvalid",
                       'Invalid value: map[string]string{"app":"web"}: `selector` does not match '
                       'template `labels`')])
        apps = client.AppsV1Api(self.api_client)
        body = client.V1Deployment(
            metadata=client.V1ObjectMeta(name="web"),
            spec=client.V1DeploymentSpec(
                selector=client.V1LabelSelector(match_labels={"app": "web"}),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels={"app": "web"}),
                    spec=client.V1PodSpec(containers=[client.V1Container(name="c",
                                                                         image="nginx:1.25")]))))
        got = apps.create_namespaced_deployment(NS, body)
        self.assertEqual(got.spec.replicas, 1)
        self.assertEqual(got.spec.revision_history_limit, 10)
        self.assertEqual(got.spec.progress_deadline_seconds, 600)
        self.assertEqual(got.spec.strategy.type, "RollingUpdate")
        self.assertEqual(got.spec.strategy.rolling_update.max_surge, "25%")
        self.assertEqual(got.spec.strategy.rolling_update.max_unavailable, "25%")
        raw = self.server.request("GET", DEPLOYS + "/web").json()
        tmpl = raw["spec"]["template"]
        self.assertEqual(tmpl["metadata"], {"creationTimestamp": None, "labels": {"app": "web"}})
        for k, v in POD_SPEC_DEFAULTS.items():
            self.assertEqual(tmpl["spec"][k], v, k)
        self.assertEqual(tmpl["spec"]["containers"][0],
                         dict(name="c", image="nginx:1.25", imagePullPolicy="IfNotPresent",
                              **CONTAINER_DEFAULTS))
        self.assertNotIn("enableServiceLinks", tmpl["spec"])  # a Pod's default, not a template's
        # apps/v1 selectors are immutable
        raw["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
        raw["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
        self.invalid("PUT", DEPLOYS + "/web", raw,
                     'Deployment.apps "web" is invalid: spec.selector: Invalid value: '
                     'v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"x"}, '
                     'MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
                     [("spec.selector", "FieldValueInvalid",
                       'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", '
                       '"tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field '
                       'is immutable')])
        with self.assertRaises(ApiException) as cm:
            apps.create_namespaced_deployment(NS, client.V1Deployment(
                metadata=client.V1ObjectMeta(name="nocontainers"),
                spec=client.V1DeploymentSpec(
                    selector=client.V1LabelSelector(match_labels={"app": "x"}),
                    template=client.V1PodTemplateSpec(
                        metadata=client.V1ObjectMeta(labels={"app": "x"}),
                        spec=client.V1PodSpec(containers=[])))))
        self.assertEqual(cm.exception.status, 422)
        self.assertEqual(json.loads(cm.exception.body)["message"],
                         'Deployment.apps "nocontainers" is invalid: '
                         'spec.template.spec.containers: Required value')

    def test_service_defaults_and_immutable_cluster_ip(self):
        got = self.create(SERVICES, {"apiVersion": "v1", "kind": "Service",
                                     "metadata": {"name": "web"},
                                     "spec": {"selector": {"app": "web"},
                                              "ports": [{"port": 80}]}})
        spec = got["spec"]
        self.assertEqual(spec["type"], "ClusterIP")
        self.assertEqual(spec["sessionAffinity"], "None")
        self.assertEqual(spec["ports"], [{"protocol": "TCP", "port": 80, "targetPort": 80}])
        self.assertEqual(spec["internalTrafficPolicy"], "Cluster")
        self.assertEqual(spec["ipFamilies"], ["IPv4"])
        self.assertEqual(spec["ipFamilyPolicy"], "SingleStack")
        self.assertEqual(got["status"], {"loadBalancer": {}})
        self.invalid("POST", SERVICES, {"apiVersion": "v1", "kind": "Service",
                                        "metadata": {"name": "noports"}, "spec": {}},
                     'Service "noports" is invalid: spec.ports: Required value',
                     [("spec.ports", "FieldValueRequired", "Required value")])
        # A set clusterIP may not change; leaving it out keeps it.
        self.create(SERVICES, {"apiVersion": "v1", "kind": "Service",
                               "metadata": {"name": "fixed-ip"},
                               "spec": {"clusterIP": "10.96.0.50", "ports": [{"port": 80}]}})
        svc = self.server.request("GET", SERVICES + "/fixed-ip").json()
        svc["spec"]["clusterIP"] = "10.96.0.51"
        svc["spec"].pop("clusterIPs", None)
        self.invalid("PUT", SERVICES + "/fixed-ip", svc,
                     'Service "fixed-ip" is invalid: spec.clusterIPs[0]: Invalid value: '
                     '[]string{"10.96.0.51"}: may not change once set',
                     [("spec.clusterIPs[0]", "FieldValueInvalid",
                       'Invalid value: []string{"10.96.0.51"}: may not change once set')])
        del svc["spec"]["clusterIP"]
        r = self.server.request("PUT", SERVICES + "/fixed-ip", body=svc)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["spec"]["clusterIP"], "10.96.0.50")

    def test_job_defaults_selector_and_immutable_template(self):
        got = self.create(JOBS, {"apiVersion": "batch/v1", "kind": "Job",
                                 "metadata": {"name": "pi"},
                                 "spec": {"template": template(None, "busybox", "Never")}})
        uid = got["metadata"]["uid"]
        spec = got["spec"]
        self.assertEqual((spec["completions"], spec["parallelism"], spec["backoffLimit"]), (1, 1, 6))
        self.assertEqual(spec["completionMode"], "NonIndexed")
        self.assertEqual(spec["suspend"], False)
        self.assertEqual(spec["manualSelector"], False)
        self.assertEqual(spec["podReplacementPolicy"], "TerminatingOrFailed")
        self.assertEqual(spec["selector"],
                         {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
        self.assertEqual(spec["template"]["metadata"]["labels"], {
            "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
            "controller-uid": uid, "job-name": "pi"})
        self.assertEqual(spec["template"]["spec"]["containers"][0]["imagePullPolicy"], "Always")
        spec["template"]["spec"]["containers"][0]["image"] = "busybox:2"
        r = self.server.request("PUT", JOBS + "/pi", body=got)
        self.assertEqual(r.status, 422, r)
        causes = r.json()["details"]["causes"]
        self.assertEqual([(c["field"], c["reason"]) for c in causes],
                         [("spec.template", "FieldValueInvalid")])
        self.assertTrue(causes[0]["message"].endswith(": field is immutable"), causes)
        self.invalid("POST", JOBS, {"apiVersion": "batch/v1", "kind": "Job",
                                    "metadata": {"name": "always"},
                                    "spec": {"template": template(None, "busybox")}},
                     'Job.batch "always" is invalid: spec.template.spec.restartPolicy: Required '
                     'value: valid values: "OnFailure", "Never"',
                     [("spec.template.spec.restartPolicy", "FieldValueRequired",
                       'Required value: valid values: "OnFailure", "Never"')])

    def test_daemonset_defaults(self):
        got = self.create(DAEMONSETS, {"apiVersion": "apps/v1", "kind": "DaemonSet",
                                       "metadata": {"name": "agent"},
                                       "spec": {"selector": {"matchLabels": {"app": "agent"}},
                                                "template": template({"app": "agent"})}})
        spec = got["spec"]
        self.assertEqual(spec["updateStrategy"],
                         {"type": "RollingUpdate",
                          "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        self.assertEqual(spec["revisionHistoryLimit"], 10)
        self.assertEqual(spec["template"]["spec"]["schedulerName"], "default-scheduler")
        self.invalid("POST", DAEMONSETS, {"apiVersion": "apps/v1", "kind": "DaemonSet",
                                          "metadata": {"name": "mismatch"},
                                          "spec": {"selector": {"matchLabels": {"app": "a"}},
                                                   "template": template({"app": "b"})}},
                     'DaemonSet.apps "mismatch" is invalid: spec.template.metadata.labels: '
                     'Invalid value: map[string]string{"app":"b"}: `selector` does not match '
                     'template `labels`',
                     [("spec.template.metadata.labels", "FieldValueInvalid",
                       'Invalid value: map[string]string{"app":"b"}: `selector` does not match '
                       'template `labels`')])


if __name__ == "__main__":
    unittest.main()
