// Server-side apply through @kubernetes/client-node 1.x, as its README
// shows it: patchNamespacedConfigMap with the apply media type set by the
// setHeaderOptions middleware (PatchStrategy.ServerSideApply). Applies a
// ConfigMap (create), applies more (update), applies a field another
// manager owns (409) and then forces it. Prints one JSON line for
// tests/e2e/test_client_node.py.
import * as k8s from '@kubernetes/client-node';

const kc = new k8s.KubeConfig();
kc.loadFromFile(process.argv[2]);
const ns = process.argv[3];
const core = kc.makeApiClient(k8s.CoreV1Api);
const ssa = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);
const out = {};

const apply = (data, fieldManager, force) => core.patchNamespacedConfigMap({
    name: 'node-ssa', namespace: ns, fieldManager, force,
    body: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'node-ssa'}, data},
}, ssa);

out.created = (await apply({a: '1'}, 'node-mgr')).data;
out.updated = (await apply({a: '1', b: '2'}, 'node-mgr')).data;
try {
    await apply({a: 'mine'}, 'node-other');
    out.conflict_code = 200;
} catch (e) {
    out.conflict_code = e.code;
    out.conflict = JSON.parse(e.body);
}
out.forced = (await apply({a: 'mine'}, 'node-other', true)).data;
const got = await core.readNamespacedConfigMap({name: 'node-ssa', namespace: ns});
out.managers = got.metadata.managedFields.map(e => [e.manager, e.operation]).sort();
console.log(JSON.stringify(out));
