// The Kubernetes JavaScript client (@kubernetes/client-node) against a
// server, with the kubeconfig given: what a Node.js operator does first.
// Prints one JSON line for tests/e2e/test_client_node.py to check:
// the namespaces it lists, a ConfigMap it creates, the ConfigMaps an
// informer reports as added (one created before it started, one after),
// and the HTTP code of a read of a missing object.
import * as k8s from '@kubernetes/client-node';

const kc = new k8s.KubeConfig();
kc.loadFromFile(process.argv[2]);
const ns = process.argv[3];
const core = kc.makeApiClient(k8s.CoreV1Api);
const out = {};

out.namespaces = (await core.listNamespace()).items.map(n => n.metadata.name).sort();
const made = await core.createNamespacedConfigMap(
    {namespace: ns, body: {metadata: {name: 'node-a'}, data: {k: 'v'}}});
out.created = made.metadata.name;

const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/configmaps`,
    () => core.listNamespacedConfigMap({namespace: ns}));
const added = [];
let stopping = false;
let sawB;
const gotB = new Promise(resolve => { sawB = resolve; });
informer.on('add', obj => {
    added.push(obj.metadata.name);
    if (obj.metadata.name === 'node-b') sawB();
});
informer.on('error', err => {
    if (!stopping) out.informer_error = String(err);  // stop() aborts the watch: not an error
    sawB();
});
await informer.start();
await core.createNamespacedConfigMap({namespace: ns, body: {metadata: {name: 'node-b'}}});
let timer;
await Promise.race([gotB, new Promise(resolve => { timer = setTimeout(resolve, 20000); })]);
clearTimeout(timer);  // a pending timer would keep the process alive
stopping = true;
await informer.stop();
out.informer_added = added.sort();

try {
    await core.readNamespacedConfigMap({name: 'missing', namespace: ns});
    out.missing_code = 200;
} catch (e) {
    out.missing_code = e.code;
}
console.log(JSON.stringify(out));
