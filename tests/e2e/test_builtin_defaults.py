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

KUBE_DEFAULTERS lists every SetDefaults_* function of kube 1.32 for the
groups sqlkube serves (pkg/apis/<group>/<version>/defaults.go and the
apiextensions and apiregistration ones): each is either checked by a case of
DEFAULTER_CASES, which names the functions it covers, or listed in
NOT_PORTED with the reason, so a defaulter nobody ported shows as a failure.
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


    def test_every_kube_defaulter_is_ported_or_listed(self):
        covered = {}
        for case in DEFAULTER_CASES:
            for fn in case["covers"]:
                covered.setdefault(fn, []).append(case["name"])
        listed = set(KUBE_DEFAULTERS)
        self.assertEqual(sorted(set(covered) - listed), [], "cases name unknown defaulters")
        self.assertEqual(sorted(set(NOT_PORTED) - listed), [])
        self.assertEqual(sorted(set(covered) & set(NOT_PORTED)), [])
        self.assertEqual(sorted(listed - set(covered) - set(NOT_PORTED)), [],
                         "defaulters neither checked nor listed as not ported")

    def test_defaulter_cases(self):
        for case in DEFAULTER_CASES:
            with self.subTest(case["name"]):
                got = self.run_case(case)
                for path, want in case["expect"].items():
                    self.assertEqual(dig(got, path), want, "%s: %s" % (case["name"], path))

    def run_case(self, case):
        """POSTs the case's object (a dry run unless it needs a stored one),
        then its follow-up write if it has one; returns what was read back."""
        path = case["path"]
        body = case["body"]
        name = body["metadata"]["name"]
        then = case.get("then")
        r = self.server.request("POST", path + ("" if then else "?dryRun=All"), body=body)
        self.assertEqual(r.status, 201, r)
        got = r.json()
        if then:
            method, sub, edit = then
            obj = self.server.request("GET", path + "/" + name).json()
            edit(obj)
            r = self.server.request(method, path + "/" + name + sub, body=obj)
            self.assertEqual(r.status, 201 if method == "POST" else 200, r)
            got = r.json()
        return got

    def test_kubectl_autoscale(self):
        """kubectl autoscale as kube 1.32 answers it: minReplicas 1 and the
        CPU 80 % metric, in v2 and (as targetCPUUtilizationPercentage) in v1;
        no behavior, as kube fills one only when the HPA has one."""
        self.create(DEPLOYS, {"apiVersion": "apps/v1", "kind": "Deployment",
                              "metadata": {"name": "scaled"},
                              "spec": {"selector": {"matchLabels": {"app": "scaled"}},
                                       "template": template({"app": "scaled"})}})
        p = self.server.kubectl("-n", NS, "autoscale", "deployment", "scaled", "--max=5")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.server.kubectl("-n", NS, "get", "horizontalpodautoscalers.v2.autoscaling", "scaled",
                                "-o", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        v2 = json.loads(p.stdout)
        self.assertEqual(v2["apiVersion"], "autoscaling/v2")
        self.assertEqual(v2["spec"]["minReplicas"], 1)
        self.assertEqual(v2["spec"]["maxReplicas"], 5)
        self.assertEqual(v2["spec"]["metrics"], [CPU_80])
        self.assertNotIn("behavior", v2["spec"])
        p = self.server.kubectl("-n", NS, "get", "horizontalpodautoscalers.v1.autoscaling", "scaled",
                                "-o", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        v1 = json.loads(p.stdout)
        self.assertEqual(v1["apiVersion"], "autoscaling/v1")
        self.assertEqual(v1["spec"]["minReplicas"], 1)
        self.assertEqual(v1["spec"]["targetCPUUtilizationPercentage"], 80)
        self.assertNotIn("autoscaling.alpha.kubernetes.io/metrics",
                         v1["metadata"].get("annotations", {}))

    def test_hpa_v1_reads_back_in_v2_with_defaults(self):
        """A v1 HPA without a CPU target: v1's conversion gives it kube's
        implicit 80 %, so v2 reads the metric and v1 reads the target."""
        v1path = "/apis/autoscaling/v1/namespaces/%s/horizontalpodautoscalers" % NS
        v2path = "/apis/autoscaling/v2/namespaces/%s/horizontalpodautoscalers" % NS
        self.create(v1path, {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                             "metadata": {"name": "viav1"},
                             "spec": {"scaleTargetRef": SCALE_REF, "maxReplicas": 3}})
        v2 = self.server.request("GET", v2path + "/viav1").json()
        self.assertEqual(v2["spec"]["minReplicas"], 1)
        self.assertEqual(v2["spec"]["metrics"], [CPU_80])
        self.assertNotIn("behavior", v2["spec"])
        v1 = self.server.request("GET", v1path + "/viav1").json()
        self.assertEqual(v1["spec"], {"scaleTargetRef": SCALE_REF, "minReplicas": 1,
                                      "maxReplicas": 3, "targetCPUUtilizationPercentage": 80})
        # a v2 behavior survives v1 (as kube's annotation) and is filled in v2
        self.create(v2path, {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                             "metadata": {"name": "withbehavior"},
                             "spec": {"scaleTargetRef": SCALE_REF, "maxReplicas": 3,
                                      "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}})
        v1 = self.server.request("GET", v1path + "/withbehavior").json()
        self.assertEqual(v1["spec"]["targetCPUUtilizationPercentage"], 80)
        v1["spec"]["maxReplicas"] = 4
        r = self.server.request("PUT", v1path + "/withbehavior", body=v1)
        self.assertEqual(r.status, 200, r)
        v2 = self.server.request("GET", v2path + "/withbehavior").json()
        self.assertEqual(v2["spec"]["behavior"], dict(HPA_BEHAVIOR, scaleDown=dict(
            HPA_BEHAVIOR["scaleDown"], stabilizationWindowSeconds=60)))


def dig(obj, path):
    """obj's value at a dotted path; a number steps into a list."""
    for step in path.split("."):
        if isinstance(obj, list):
            obj = obj[int(step)]
        else:
            if step not in obj:
                return "<absent>"
            obj = obj[step]
    return obj


SCALE_REF = {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}
CPU_80 = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                     "averageUtilization": 80}}}
HPA_BEHAVIOR = {
    "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                             {"type": "Percent", "value": 100, "periodSeconds": 15}]},
    "scaleDown": {"selectPolicy": "Max",
                  "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
}

# kube 1.32's SetDefaults_* functions of the group/versions sqlkube serves.
KUBE_DEFAULTERS = [
    "core/v1.SetDefaults_ResourceList", "core/v1.SetDefaults_ReplicationController",
    "core/v1.SetDefaults_Volume", "core/v1.SetDefaults_Container",
    "core/v1.SetDefaults_EphemeralContainer", "core/v1.SetDefaults_Service",
    "core/v1.SetDefaults_Pod", "core/v1.SetDefaults_PodSpec", "core/v1.SetDefaults_Probe",
    "core/v1.SetDefaults_SecretVolumeSource", "core/v1.SetDefaults_ConfigMapVolumeSource",
    "core/v1.SetDefaults_DownwardAPIVolumeSource", "core/v1.SetDefaults_Secret",
    "core/v1.SetDefaults_ProjectedVolumeSource", "core/v1.SetDefaults_ServiceAccountTokenProjection",
    "core/v1.SetDefaults_PersistentVolume", "core/v1.SetDefaults_PersistentVolumeClaim",
    "core/v1.SetDefaults_PersistentVolumeClaimSpec", "core/v1.SetDefaults_ISCSIVolumeSource",
    "core/v1.SetDefaults_ISCSIPersistentVolumeSource", "core/v1.SetDefaults_AzureDiskVolumeSource",
    "core/v1.SetDefaults_Endpoints", "core/v1.SetDefaults_HTTPGetAction",
    "core/v1.SetDefaults_Namespace", "core/v1.SetDefaults_NamespaceStatus",
    "core/v1.SetDefaults_NodeStatus", "core/v1.SetDefaults_ObjectFieldSelector",
    "core/v1.SetDefaults_LimitRangeItem", "core/v1.SetDefaults_ConfigMap",
    "core/v1.SetDefaults_ScaleIOVolumeSource", "core/v1.SetDefaults_ScaleIOPersistentVolumeSource",
    "core/v1.SetDefaults_HostPathVolumeSource",
    "apps/v1.SetDefaults_DaemonSet", "apps/v1.SetDefaults_StatefulSet",
    "apps/v1.SetDefaults_Deployment", "apps/v1.SetDefaults_ReplicaSet",
    "batch/v1.SetDefaults_Job", "batch/v1.SetDefaults_CronJob",
    "autoscaling/v1.SetDefaults_HorizontalPodAutoscaler",
    "autoscaling/v2.SetDefaults_HorizontalPodAutoscaler",
    "autoscaling/v2.SetDefaults_HorizontalPodAutoscalerBehavior",
    "networking/v1.SetDefaults_NetworkPolicyPort", "networking/v1.SetDefaults_NetworkPolicy",
    "networking/v1.SetDefaults_IngressClass",
    "rbac/v1.SetDefaults_ClusterRoleBinding", "rbac/v1.SetDefaults_RoleBinding",
    "rbac/v1.SetDefaults_Subject",
    "storage/v1.SetDefaults_StorageClass", "storage/v1.SetDefaults_CSIDriver",
    "scheduling/v1.SetDefaults_PriorityClass",
    "discovery/v1.SetDefaults_EndpointPort",
    "admissionregistration/v1.SetDefaults_ValidatingWebhook",
    "admissionregistration/v1.SetDefaults_MutatingWebhook",
    "admissionregistration/v1.SetDefaults_Rule",
    "admissionregistration/v1.SetDefaults_ServiceReference",
    "admissionregistration/v1.SetDefaults_ValidatingAdmissionPolicySpec",
    "admissionregistration/v1.SetDefaults_MatchResources",
    "flowcontrol/v1.SetDefaults_FlowSchemaSpec",
    "flowcontrol/v1.SetDefaults_ExemptPriorityLevelConfiguration",
    "flowcontrol/v1.SetDefaults_LimitedPriorityLevelConfiguration",
    "flowcontrol/v1.SetDefaults_QueuingConfiguration",
    "authentication/v1.SetDefaults_TokenRequestSpec",
    "apiextensions/v1.SetDefaults_CustomResourceDefinition",
    "apiextensions/v1.SetDefaults_CustomResourceDefinitionSpec",
    "apiextensions/v1.SetDefaults_ServiceReference",
    "apiregistration/v1.SetDefaults_ServiceReference",
    # The +default markers of k8s.io/api types (defaulter-gen's code for
    # them sits in zz_generated.defaults.go; an RBD volume's pool, user and
    # keyring are only markers since kube dropped SetDefaults_RBD*).
    "k8s.io/api +default markers",
    # certificates/v1, coordination/v1, events/v1, node/v1, policy/v1 and
    # authorization/v1 have no SetDefaults_* functions.
]

NOT_PORTED = {
    "core/v1.SetDefaults_ConfigMap": "sets a nil data to an empty map, which Go's omitempty "
                                     "encodes as no data: nothing a client can read",
}


def pod_body(name, spec_extra=None, container_extra=None):
    c = dict({"name": "c", "image": "nginx:1.25"}, **(container_extra or {}))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": dict({"containers": [c]}, **(spec_extra or {}))}


def pv_body(name, source):
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": dict({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]},
                         **source)}


def webhook_config(kind, name):
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name},
            "webhooks": [{"name": "w.example.com", "sideEffects": "None",
                          "admissionReviewVersions": ["v1"],
                          "clientConfig": {"service": {"namespace": "ns", "name": "svc"}},
                          # CONNECT only (no connect subresource is served): never
                          # called for another test's pod, with no server behind it
                          "rules": [{"operations": ["CONNECT"], "apiGroups": [""],
                                     "apiVersions": ["v1"], "resources": ["pods"]}]}]}


WEBHOOK_EXPECT = {"webhooks.0.failurePolicy": "Fail", "webhooks.0.matchPolicy": "Equivalent",
                  "webhooks.0.namespaceSelector": {}, "webhooks.0.objectSelector": {},
                  "webhooks.0.timeoutSeconds": 10, "webhooks.0.clientConfig.service.port": 443,
                  "webhooks.0.rules.0.scope": "*"}
MATCH_RULES = {"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""],
                                  "apiVersions": ["v1"], "resources": ["pods"]}],
               "excludeResourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
                                         "apiVersions": ["v1"], "resources": ["deployments"]}]}


def match_expect(at):
    return {at + ".matchPolicy": "Equivalent", at + ".namespaceSelector": {},
            at + ".objectSelector": {}, at + ".resourceRules.0.scope": "*",
            at + ".excludeResourceRules.0.scope": "*"}


def add_ephemeral(pod):
    pod["spec"]["ephemeralContainers"] = [{"name": "debug", "image": "busybox"}]


def set_lb_ingress(svc):
    svc["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}, {"hostname": "lb.example"}]}}


VOLUME_SOURCES = [
    {"name": "empty"},
    {"name": "secret", "secret": {"secretName": "s"}},
    {"name": "cm", "configMap": {"name": "cm"}},
    {"name": "dapi", "downwardAPI": {"items": [{"path": "n",
                                                "fieldRef": {"fieldPath": "metadata.name"}}]}},
    {"name": "proj", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
    {"name": "iscsi", "iscsi": {"targetPortal": "192.0.2.1:3260", "lun": 0,
                                "iqn": "iqn.2001-04.com.example:storage"}},
    {"name": "rbd", "rbd": {"monitors": ["192.0.2.1:6789"], "image": "img"}},
    {"name": "sio", "scaleIO": {"gateway": "https://gw", "system": "sys",
                                "secretRef": {"name": "s"}}},
    {"name": "az", "azureDisk": {"diskName": "d", "diskURI": "https://example/d.vhd"}},
    {"name": "hp", "hostPath": {"path": "/data"}},
    {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
]

DEFAULTER_CASES = [
    {"name": "pod", "path": PODS,
     "covers": ["core/v1.SetDefaults_Pod", "core/v1.SetDefaults_PodSpec",
                "core/v1.SetDefaults_Container", "core/v1.SetDefaults_Probe",
                "core/v1.SetDefaults_HTTPGetAction", "core/v1.SetDefaults_ObjectFieldSelector",
                "core/v1.SetDefaults_ResourceList", "k8s.io/api +default markers"],
     "body": pod_body("dpod", container_extra={
         "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
         "livenessProbe": {"httpGet": {"port": 80}},
         "readinessProbe": {"grpc": {"port": 9000}},
         "ports": [{"containerPort": 80}],
         "envFrom": [{"configMapRef": {"name": "cm"}}],
         "resources": {"limits": {"cpu": "100u", "memory": "1Gi"}}}),
     "expect": {"spec.enableServiceLinks": True, "spec.dnsPolicy": "ClusterFirst",
                "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
                "spec.terminationGracePeriodSeconds": 30, "spec.securityContext": {},
                "spec.containers.0.imagePullPolicy": "IfNotPresent",
                "spec.containers.0.terminationMessagePolicy": "File",
                "spec.containers.0.livenessProbe": {
                    "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                    "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
                "spec.containers.0.env.0.valueFrom.fieldRef.apiVersion": "v1",
                "spec.containers.0.readinessProbe.grpc": {"port": 9000, "service": ""},
                "spec.containers.0.ports": [{"containerPort": 80, "protocol": "TCP"}],
                "spec.containers.0.resources.limits.cpu": "1m",
                "spec.containers.0.resources.requests": {"cpu": "1m", "memory": "1Gi"}}},
    {"name": "pod volumes", "path": PODS,
     "covers": ["core/v1.SetDefaults_Volume", "core/v1.SetDefaults_SecretVolumeSource",
                "core/v1.SetDefaults_ConfigMapVolumeSource",
                "core/v1.SetDefaults_DownwardAPIVolumeSource",
                "core/v1.SetDefaults_ProjectedVolumeSource",
                "core/v1.SetDefaults_ServiceAccountTokenProjection",
                "core/v1.SetDefaults_ISCSIVolumeSource", "k8s.io/api +default markers",
                "core/v1.SetDefaults_ScaleIOVolumeSource",
                "core/v1.SetDefaults_AzureDiskVolumeSource",
                "core/v1.SetDefaults_HostPathVolumeSource",
                "core/v1.SetDefaults_PersistentVolumeClaimSpec"],
     "body": pod_body("dvols", spec_extra={"volumes": VOLUME_SOURCES}),
     "expect": {"spec.volumes.0.emptyDir": {}, "spec.volumes.1.secret.defaultMode": 420,
                "spec.volumes.2.configMap.defaultMode": 420,
                "spec.volumes.3.downwardAPI.defaultMode": 420,
                "spec.volumes.3.downwardAPI.items.0.fieldRef.apiVersion": "v1",
                "spec.volumes.4.projected.defaultMode": 420,
                "spec.volumes.4.projected.sources.0.serviceAccountToken.expirationSeconds": 3600,
                "spec.volumes.5.iscsi.iscsiInterface": "default",
                "spec.volumes.6.rbd.pool": "rbd", "spec.volumes.6.rbd.user": "admin",
                "spec.volumes.6.rbd.keyring": "/etc/ceph/keyring",
                "spec.volumes.7.scaleIO.storageMode": "ThinProvisioned",
                "spec.volumes.7.scaleIO.fsType": "xfs",
                "spec.volumes.8.azureDisk": {"diskName": "d", "diskURI": "https://example/d.vhd",
                                             "cachingMode": "ReadWrite", "fsType": "ext4",
                                             "readOnly": False, "kind": "Shared"},
                "spec.volumes.9.hostPath.type": "",
                "spec.volumes.10.ephemeral.volumeClaimTemplate.spec.volumeMode": "Filesystem"}},
    {"name": "ephemeral container", "path": PODS,
     "covers": ["core/v1.SetDefaults_EphemeralContainer"],
     "body": pod_body("dephemeral"), "then": ("PUT", "/ephemeralcontainers", add_ephemeral),
     "expect": {"spec.ephemeralContainers.0.imagePullPolicy": "Always",
                "spec.ephemeralContainers.0.terminationMessagePath": "/dev/termination-log",
                "spec.ephemeralContainers.0.terminationMessagePolicy": "File"}},
    {"name": "replication controller", "path": "/api/v1/namespaces/%s/replicationcontrollers" % NS,
     "covers": ["core/v1.SetDefaults_ReplicationController"],
     "body": {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "drc"},
              "spec": {"template": template({"app": "drc"})}},
     "expect": {"spec.replicas": 1, "spec.selector": {"app": "drc"},
                "metadata.labels": {"app": "drc"}}},
    {"name": "service", "path": SERVICES, "covers": ["core/v1.SetDefaults_Service"],
     "body": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dlb"},
              "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}},
     "then": ("PUT", "/status", set_lb_ingress),
     "expect": {"spec.sessionAffinity": "None", "spec.ports.0.protocol": "TCP",
                "spec.ports.0.targetPort": 80, "spec.externalTrafficPolicy": "Cluster",
                "spec.internalTrafficPolicy": "Cluster",
                "spec.allocateLoadBalancerNodePorts": True,
                "status.loadBalancer.ingress": [{"ip": "192.0.2.10", "ipMode": "VIP"},
                                                {"hostname": "lb.example"}]}},
    {"name": "secret", "path": "/api/v1/namespaces/%s/secrets" % NS,
     "covers": ["core/v1.SetDefaults_Secret"],
     "body": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "dsecret"}},
     "expect": {"type": "Opaque"}},
    {"name": "persistent volume iscsi", "path": "/api/v1/persistentvolumes",
     "covers": ["core/v1.SetDefaults_PersistentVolume",
                "core/v1.SetDefaults_ISCSIPersistentVolumeSource"],
     "body": pv_body("dpv-iscsi", {"iscsi": {"targetPortal": "192.0.2.1:3260", "lun": 0,
                                             "iqn": "iqn.2001-04.com.example:storage"}}),
     "expect": {"spec.persistentVolumeReclaimPolicy": "Retain", "spec.volumeMode": "Filesystem",
                "status.phase": "Pending", "spec.iscsi.iscsiInterface": "default"}},
    {"name": "persistent volume rbd", "path": "/api/v1/persistentvolumes",
     "covers": ["k8s.io/api +default markers"],
     "body": pv_body("dpv-rbd", {"rbd": {"monitors": ["192.0.2.1:6789"], "image": "img"}}),
     "expect": {"spec.rbd.pool": "rbd", "spec.rbd.user": "admin",
                "spec.rbd.keyring": "/etc/ceph/keyring"}},
    {"name": "persistent volume scaleio", "path": "/api/v1/persistentvolumes",
     "covers": ["core/v1.SetDefaults_ScaleIOPersistentVolumeSource"],
     "body": pv_body("dpv-sio", {"scaleIO": {"gateway": "https://gw", "system": "sys",
                                             "secretRef": {"name": "s"}}}),
     "expect": {"spec.scaleIO.storageMode": "ThinProvisioned", "spec.scaleIO.fsType": "xfs"}},
    {"name": "persistent volume claim", "path": "/api/v1/namespaces/%s/persistentvolumeclaims" % NS,
     "covers": ["core/v1.SetDefaults_PersistentVolumeClaim"],
     "body": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "dpvc"},
              "spec": {"accessModes": ["ReadWriteOnce"],
                       "resources": {"requests": {"storage": "1Gi"}}}},
     "expect": {"status.phase": "Pending", "spec.volumeMode": "Filesystem"}},
    {"name": "endpoints", "path": "/api/v1/namespaces/%s/endpoints" % NS,
     "covers": ["core/v1.SetDefaults_Endpoints"],
     "body": {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "dep"},
              "subsets": [{"addresses": [{"ip": "192.0.2.5"}], "ports": [{"port": 80}]}]},
     "expect": {"subsets.0.ports.0.protocol": "TCP"}},
    {"name": "namespace", "path": "/api/v1/namespaces",
     "covers": ["core/v1.SetDefaults_Namespace", "core/v1.SetDefaults_NamespaceStatus"],
     "body": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dns"}},
     "expect": {"metadata.labels": {"kubernetes.io/metadata.name": "dns"},
                "status.phase": "Active"}},
    {"name": "node", "path": "/api/v1/nodes", "covers": ["core/v1.SetDefaults_NodeStatus"],
     "body": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "dnode"},
              "status": {"capacity": {"cpu": "4", "memory": "8Gi"}}},
     "expect": {"status.allocatable": {"cpu": "4", "memory": "8Gi"}}},
    {"name": "limit range", "path": "/api/v1/namespaces/%s/limitranges" % NS,
     "covers": ["core/v1.SetDefaults_LimitRangeItem"],
     "body": {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "dlr"},
              "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"},
                                   "min": {"memory": "64Mi"}},
                                  {"type": "Pod", "max": {"cpu": "4"}}]}},
     "expect": {"spec.limits.0.default": {"cpu": "2"},
                "spec.limits.0.defaultRequest": {"cpu": "2", "memory": "64Mi"},
                "spec.limits.1": {"type": "Pod", "max": {"cpu": "4"}}}},
    {"name": "deployment", "path": DEPLOYS, "covers": ["apps/v1.SetDefaults_Deployment"],
     "body": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ddeploy"},
              "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": template({"app": "d"})}},
     "expect": {"spec.replicas": 1, "spec.revisionHistoryLimit": 10,
                "spec.progressDeadlineSeconds": 600,
                "spec.strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}}},
    {"name": "replica set", "path": "/apis/apps/v1/namespaces/%s/replicasets" % NS,
     "covers": ["apps/v1.SetDefaults_ReplicaSet"],
     "body": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "drs"},
              "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": template({"app": "d"})}},
     "expect": {"spec.replicas": 1}},
    {"name": "stateful set", "path": "/apis/apps/v1/namespaces/%s/statefulsets" % NS,
     "covers": ["apps/v1.SetDefaults_StatefulSet"],
     "body": {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "dsts"},
              "spec": {"selector": {"matchLabels": {"app": "d"}}, "serviceName": "d",
                       "template": template({"app": "d"})}},
     "expect": {"spec.replicas": 1, "spec.podManagementPolicy": "OrderedReady",
                "spec.updateStrategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"partition": 0}},
                "spec.persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain",
                                                              "whenScaled": "Retain"}}},
    {"name": "daemon set", "path": DAEMONSETS, "covers": ["apps/v1.SetDefaults_DaemonSet"],
     "body": {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "dds"},
              "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": template({"app": "d"})}},
     "expect": {"spec.revisionHistoryLimit": 10,
                "spec.updateStrategy.rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}},
    {"name": "job", "path": JOBS, "covers": ["batch/v1.SetDefaults_Job"],
     "body": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "djob"},
              "spec": {"template": template({"app": "j"}, restart="Never")}},
     "expect": {"spec.completions": 1, "spec.parallelism": 1, "spec.backoffLimit": 6,
                "spec.completionMode": "NonIndexed", "spec.suspend": False,
                "spec.podReplacementPolicy": "TerminatingOrFailed"}},
    {"name": "cron job", "path": "/apis/batch/v1/namespaces/%s/cronjobs" % NS,
     "covers": ["batch/v1.SetDefaults_CronJob"],
     "body": {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "dcj"},
              "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {
                  "template": template({"app": "c"}, restart="Never")}}}},
     "expect": {"spec.concurrencyPolicy": "Allow", "spec.suspend": False,
                "spec.successfulJobsHistoryLimit": 3, "spec.failedJobsHistoryLimit": 1}},
    {"name": "hpa v1", "path": "/apis/autoscaling/v1/namespaces/%s/horizontalpodautoscalers" % NS,
     "covers": ["autoscaling/v1.SetDefaults_HorizontalPodAutoscaler"],
     "body": {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
              "metadata": {"name": "dhpa1"}, "spec": {"scaleTargetRef": SCALE_REF,
                                                      "maxReplicas": 3}},
     "expect": {"spec.minReplicas": 1, "spec.targetCPUUtilizationPercentage": 80}},
    {"name": "hpa v2", "path": "/apis/autoscaling/v2/namespaces/%s/horizontalpodautoscalers" % NS,
     "covers": ["autoscaling/v2.SetDefaults_HorizontalPodAutoscaler"],
     "body": {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
              "metadata": {"name": "dhpa2"}, "spec": {"scaleTargetRef": SCALE_REF,
                                                      "maxReplicas": 3}},
     "expect": {"spec.minReplicas": 1, "spec.metrics": [CPU_80], "spec.behavior": "<absent>"}},
    {"name": "hpa v2 behavior", "path":
        "/apis/autoscaling/v2/namespaces/%s/horizontalpodautoscalers" % NS,
     "covers": ["autoscaling/v2.SetDefaults_HorizontalPodAutoscalerBehavior"],
     "body": {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
              "metadata": {"name": "dhpa2b"},
              "spec": {"scaleTargetRef": SCALE_REF, "minReplicas": 2, "maxReplicas": 3,
                       "behavior": {"scaleUp": {"selectPolicy": "Min"},
                                    "scaleDown": {"policies": [{"type": "Pods", "value": 1,
                                                                "periodSeconds": 60}]}}}},
     "expect": {"spec.minReplicas": 2,
                "spec.behavior": {"scaleUp": dict(HPA_BEHAVIOR["scaleUp"], selectPolicy="Min"),
                                  "scaleDown": {"selectPolicy": "Max", "policies": [
                                      {"type": "Pods", "value": 1, "periodSeconds": 60}]}}}},
    {"name": "network policy", "path": "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies" % NS,
     "covers": ["networking/v1.SetDefaults_NetworkPolicy",
                "networking/v1.SetDefaults_NetworkPolicyPort"],
     "body": {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": "dnp"},
              "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}],
                       "egress": [{"ports": [{"port": 53, "protocol": "UDP"}, {"port": 443}]}]}},
     "expect": {"spec.policyTypes": ["Ingress", "Egress"],
                "spec.ingress.0.ports.0.protocol": "TCP",
                "spec.egress.0.ports": [{"port": 53, "protocol": "UDP"},
                                        {"port": 443, "protocol": "TCP"}]}},
    {"name": "network policy ingress only",
     "path": "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies" % NS,
     "covers": ["networking/v1.SetDefaults_NetworkPolicy"],
     "body": {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": "dnp2"}, "spec": {"podSelector": {}}},
     "expect": {"spec.policyTypes": ["Ingress"]}},
    {"name": "ingress class", "path": "/apis/networking.k8s.io/v1/ingressclasses",
     "covers": ["networking/v1.SetDefaults_IngressClass"],
     "body": {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
              "metadata": {"name": "dic"},
              "spec": {"controller": "example.com/ingress",
                       "parameters": {"kind": "Params", "name": "p", "apiGroup": "example.com"}}},
     "expect": {"spec.parameters.scope": "Cluster"}},
    {"name": "role binding", "path": "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings" % NS,
     "covers": ["rbac/v1.SetDefaults_RoleBinding", "rbac/v1.SetDefaults_Subject"],
     "body": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
              "metadata": {"name": "drb"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
              "subjects": [{"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"},
                           {"kind": "ServiceAccount", "name": "sa", "namespace": NS}]},
     "expect": {"roleRef.apiGroup": "rbac.authorization.k8s.io",
                "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io",
                              "name": "u"},
                             {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                              "name": "g"},
                             {"kind": "ServiceAccount", "name": "sa", "namespace": NS}]}},
    {"name": "cluster role binding",
     "path": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
     "covers": ["rbac/v1.SetDefaults_ClusterRoleBinding", "rbac/v1.SetDefaults_Subject"],
     "body": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
              "metadata": {"name": "dcrb"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
              "subjects": [{"kind": "User", "name": "u"}]},
     "expect": {"roleRef.apiGroup": "rbac.authorization.k8s.io",
                "subjects.0.apiGroup": "rbac.authorization.k8s.io"}},
    {"name": "storage class", "path": "/apis/storage.k8s.io/v1/storageclasses",
     "covers": ["storage/v1.SetDefaults_StorageClass"],
     "body": {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
              "metadata": {"name": "dsc"}, "provisioner": "example.com/p"},
     "expect": {"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"}},
    {"name": "csi driver", "path": "/apis/storage.k8s.io/v1/csidrivers",
     "covers": ["storage/v1.SetDefaults_CSIDriver"],
     "body": {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
              "metadata": {"name": "d.example.com"}, "spec": {}},
     "expect": {"spec": {"attachRequired": True, "podInfoOnMount": False,
                         "volumeLifecycleModes": ["Persistent"], "storageCapacity": False,
                         "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False,
                         "seLinuxMount": False}}},
    {"name": "priority class", "path": "/apis/scheduling.k8s.io/v1/priorityclasses",
     "covers": ["scheduling/v1.SetDefaults_PriorityClass"],
     "body": {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
              "metadata": {"name": "dpc"}, "value": 1000},
     "expect": {"preemptionPolicy": "PreemptLowerPriority"}},
    {"name": "endpoint slice", "path": "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices" % NS,
     "covers": ["discovery/v1.SetDefaults_EndpointPort"],
     "body": {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
              "metadata": {"name": "deps"}, "addressType": "IPv4",
              "endpoints": [{"addresses": ["192.0.2.7"]}], "ports": [{"port": 80}]},
     "expect": {"ports": [{"name": "", "protocol": "TCP", "port": 80}]}},
    {"name": "validating webhook",
     "path": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
     "covers": ["admissionregistration/v1.SetDefaults_ValidatingWebhook",
                "admissionregistration/v1.SetDefaults_ServiceReference",
                "admissionregistration/v1.SetDefaults_Rule"],
     "body": webhook_config("ValidatingWebhookConfiguration", "dvwc"),
     "expect": dict(WEBHOOK_EXPECT, **{"webhooks.0.reinvocationPolicy": "<absent>"})},
    {"name": "mutating webhook",
     "path": "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
     "covers": ["admissionregistration/v1.SetDefaults_MutatingWebhook",
                "admissionregistration/v1.SetDefaults_ServiceReference",
                "admissionregistration/v1.SetDefaults_Rule"],
     "body": webhook_config("MutatingWebhookConfiguration", "dmwc"),
     "expect": dict(WEBHOOK_EXPECT, **{"webhooks.0.reinvocationPolicy": "Never"})},
    {"name": "validating admission policy",
     "path": "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
     "covers": ["admissionregistration/v1.SetDefaults_ValidatingAdmissionPolicySpec",
                "admissionregistration/v1.SetDefaults_MatchResources",
                "admissionregistration/v1.SetDefaults_Rule"],
     "body": {"apiVersion": "admissionregistration.k8s.io/v1",
              "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "dvap"},
              "spec": {"matchConstraints": MATCH_RULES,
                       "validations": [{"expression": "true"}]}},
     "expect": dict(match_expect("spec.matchConstraints"), **{"spec.failurePolicy": "Fail"})},
    {"name": "validating admission policy binding",
     "path": "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
     "covers": ["admissionregistration/v1.SetDefaults_MatchResources",
                "admissionregistration/v1.SetDefaults_Rule"],
     "body": {"apiVersion": "admissionregistration.k8s.io/v1",
              "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "dvapb"},
              "spec": {"policyName": "dvap", "validationActions": ["Deny"],
                       "matchResources": MATCH_RULES}},
     "expect": match_expect("spec.matchResources")},
    {"name": "flow schema", "path": "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
     "covers": ["flowcontrol/v1.SetDefaults_FlowSchemaSpec"],
     "body": {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
              "metadata": {"name": "dfs"},
              "spec": {"priorityLevelConfiguration": {"name": "global-default"}}},
     "expect": {"spec.matchingPrecedence": 1000}},
    {"name": "priority level limited",
     "path": "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
     "covers": ["flowcontrol/v1.SetDefaults_LimitedPriorityLevelConfiguration",
                "flowcontrol/v1.SetDefaults_QueuingConfiguration"],
     "body": {"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
              "kind": "PriorityLevelConfiguration", "metadata": {"name": "dplc"},
              "spec": {"type": "Limited", "limited": {"limitResponse": {
                  "type": "Queue", "queuing": {}}}}},
     "expect": {"spec.limited": {"nominalConcurrencyShares": 30, "lendablePercent": 0,
                                 "limitResponse": {"type": "Queue", "queuing": {
                                     "queues": 64, "handSize": 8, "queueLengthLimit": 50}}}}},
    {"name": "priority level exempt",
     "path": "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
     "covers": ["flowcontrol/v1.SetDefaults_ExemptPriorityLevelConfiguration"],
     "body": {"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
              "kind": "PriorityLevelConfiguration", "metadata": {"name": "dplce"},
              "spec": {"type": "Exempt", "exempt": {}}},
     "expect": {"spec.exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}},
    {"name": "token request", "path": "/api/v1/namespaces/%s/serviceaccounts" % NS,
     "covers": ["authentication/v1.SetDefaults_TokenRequestSpec"],
     "body": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "dsa"}},
     "then": ("POST", "/token", lambda sa: sa.clear() or sa.update(
         {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})),
     "expect": {"spec.expirationSeconds": 3600}},
    {"name": "custom resource definition",
     "path": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
     "covers": ["apiextensions/v1.SetDefaults_CustomResourceDefinition",
                "apiextensions/v1.SetDefaults_CustomResourceDefinitionSpec",
                "apiextensions/v1.SetDefaults_ServiceReference"],
     "body": {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
              "metadata": {"name": "widgets.d.example.com"},
              "spec": {"group": "d.example.com", "scope": "Namespaced",
                       "names": {"plural": "widgets", "kind": "Widget"},
                       "conversion": {"strategy": "Webhook", "webhook": {
                           "conversionReviewVersions": ["v1"],
                           "clientConfig": {"service": {"namespace": "ns", "name": "svc"}}}},
                       "versions": [{"name": "v1", "served": True, "storage": True,
                                     "schema": {"openAPIV3Schema": {"type": "object"}}}]}},
     "expect": {"spec.names.singular": "widget", "spec.names.listKind": "WidgetList",
                "spec.conversion.webhook.clientConfig.service.port": 443,
                "status.storedVersions": ["v1"]}},
    {"name": "api service", "path": "/apis/apiregistration.k8s.io/v1/apiservices",
     "covers": ["apiregistration/v1.SetDefaults_ServiceReference"],
     "body": {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
              "metadata": {"name": "v1.d.example.com"},
              "spec": {"group": "d.example.com", "version": "v1", "groupPriorityMinimum": 100,
                       "versionPriority": 10, "insecureSkipTLSVerify": True,
                       "service": {"namespace": "ns", "name": "svc"}}},
     "expect": {"spec.service.port": 443}},
]


if __name__ == "__main__":
    unittest.main()
