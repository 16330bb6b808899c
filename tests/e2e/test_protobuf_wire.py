"""Protobuf lists and watch frames, decoded by the protobuf runtime itself.

sqlkube keeps each object version's protobuf message with the cached object
and builds list pages and watch frames by copying those bytes (api/pbwire.h).
Here the replies are decoded by Debian's python3-protobuf (the C++-backed
runtime, not sqlkube's transcoder nor test_protobuf_kinds' small decoder)
with messages declared as kube's generated.proto declares them
(k8s.io/api/core/v1 ConfigMap and ConfigMapList, core/v1 Event,
apimachinery's meta/v1 ObjectMeta, ListMeta, Time, ManagedFieldsEntry,
FieldsV1, WatchEvent, runtime's Unknown, TypeMeta, RawExtension), and every
decoded page, item and event must equal the JSON answer to the same request,
with no field the declarations do not know.

Also: an object updated twice is served with each version's own bytes (a
kept encoding is never stale: a watch from before the updates sees both
versions, a list the last), many protobuf watchers of the same events get
the same bytes, and a shared-storage resource (events.k8s.io/v1 Events,
stored as core v1 Events) is served in its own version's message after the
core version's was kept.
"""

import base64
import datetime
import json
import os
import struct
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402

from server import ServerTestCase, wait_until  # noqa: E402

PROTOBUF = "application/vnd.kubernetes.protobuf"
NS = "pbwire"
CMS = "/api/v1/namespaces/%s/configmaps" % NS
GROUP = "pbwire.example.com"
WIDGETS = "/apis/%s/v1/namespaces/%s/widgets" % (GROUP, NS)
# client-go's metadata client: protobuf first, JSON as its fallback
METADATA_CLIENT = ("application/vnd.kubernetes.protobuf;as=%s;g=meta.k8s.io;v=%s,"
                   "application/json;as=%s;g=meta.k8s.io;v=%s")


def metadata_accept(kind, version, json_only=False):
    accept = METADATA_CLIENT % (kind, version, kind, version)
    return accept.split(",")[1] if json_only else accept

# --- kube's messages, as generated.proto declares them -------------------------
# (package, message) -> [(field, number, type, repeated)]; a type is a scalar,
# "map<string,T>", or another message's name.
META = "k8s.io.apimachinery.pkg.apis.meta.v1"
RUNTIME = "k8s.io.apimachinery.pkg.runtime"
CORE = "k8s.io.api.core.v1"
EVENTS = "k8s.io.api.events.v1"
META_V1BETA1 = "k8s.io.apimachinery.pkg.apis.meta.v1beta1"
MESSAGES = {
    (RUNTIME, "TypeMeta"): [("apiVersion", 1, "string"), ("kind", 2, "string")],
    (RUNTIME, "Unknown"): [("typeMeta", 1, RUNTIME + ".TypeMeta"), ("raw", 2, "bytes"),
                           ("contentEncoding", 3, "string"), ("contentType", 4, "string")],
    (RUNTIME, "RawExtension"): [("raw", 1, "bytes")],
    (META, "Time"): [("seconds", 1, "int64"), ("nanos", 2, "int32")],
    (META, "MicroTime"): [("seconds", 1, "int64"), ("nanos", 2, "int32")],
    (META, "FieldsV1"): [("Raw", 1, "bytes")],
    (META, "ManagedFieldsEntry"): [
        ("manager", 1, "string"), ("operation", 2, "string"), ("apiVersion", 3, "string"),
        ("time", 4, META + ".Time"), ("fieldsType", 6, "string"),
        ("fieldsV1", 7, META + ".FieldsV1"), ("subresource", 8, "string")],
    (META, "ObjectMeta"): [
        ("name", 1, "string"), ("generateName", 2, "string"), ("namespace", 3, "string"),
        ("selfLink", 4, "string"), ("uid", 5, "string"), ("resourceVersion", 6, "string"),
        ("generation", 7, "int64"), ("creationTimestamp", 8, META + ".Time"),
        ("deletionTimestamp", 9, META + ".Time"), ("deletionGracePeriodSeconds", 10, "int64"),
        ("labels", 11, "map<string,string>"), ("annotations", 12, "map<string,string>"),
        ("finalizers", 14, "string", True),
        ("managedFields", 17, META + ".ManagedFieldsEntry", True)],
    (META, "ListMeta"): [("selfLink", 1, "string"), ("resourceVersion", 2, "string"),
                         ("continue", 3, "string"), ("remainingItemCount", 4, "int64")],
    (META, "WatchEvent"): [("type", 1, "string"), ("object", 2, RUNTIME + ".RawExtension")],
    (CORE, "ConfigMap"): [("metadata", 1, META + ".ObjectMeta"),
                          ("data", 2, "map<string,string>"),
                          ("binaryData", 3, "map<string,bytes>"), ("immutable", 4, "bool")],
    (CORE, "ConfigMapList"): [("metadata", 1, META + ".ListMeta"),
                              ("items", 2, CORE + ".ConfigMap", True)],
    (CORE, "ObjectReference"): [
        ("kind", 1, "string"), ("namespace", 2, "string"), ("name", 3, "string"),
        ("uid", 4, "string"), ("apiVersion", 5, "string"), ("resourceVersion", 6, "string"),
        ("fieldPath", 7, "string")],
    (CORE, "EventSource"): [("component", 1, "string"), ("host", 2, "string")],
    (CORE, "Event"): [
        ("metadata", 1, META + ".ObjectMeta"), ("involvedObject", 2, CORE + ".ObjectReference"),
        ("reason", 3, "string"), ("message", 4, "string"), ("source", 5, CORE + ".EventSource"),
        ("firstTimestamp", 6, META + ".Time"), ("lastTimestamp", 7, META + ".Time"),
        ("count", 8, "int32"), ("type", 9, "string"), ("eventTime", 10, META + ".MicroTime"),
        ("action", 12, "string"), ("related", 13, CORE + ".ObjectReference"),
        ("reportingComponent", 14, "string"), ("reportingInstance", 15, "string")],
    (CORE, "EventList"): [("metadata", 1, META + ".ListMeta"),
                          ("items", 2, CORE + ".Event", True)],
    (EVENTS, "Event"): [
        ("metadata", 1, META + ".ObjectMeta"), ("eventTime", 2, META + ".MicroTime"),
        ("reportingController", 4, "string"), ("reportingInstance", 5, "string"),
        ("action", 6, "string"), ("reason", 7, "string"),
        ("regarding", 8, CORE + ".ObjectReference"), ("note", 10, "string"),
        ("type", 11, "string"), ("deprecatedSource", 12, CORE + ".EventSource"),
        ("deprecatedFirstTimestamp", 13, META + ".Time"),
        ("deprecatedLastTimestamp", 14, META + ".Time"), ("deprecatedCount", 15, "int32")],
    (EVENTS, "EventList"): [("metadata", 1, META + ".ListMeta"),
                            ("items", 2, EVENTS + ".Event", True)],
    (META, "PartialObjectMetadata"): [("metadata", 1, META + ".ObjectMeta")],
    (META, "PartialObjectMetadataList"): [("metadata", 1, META + ".ListMeta"),
                                          ("items", 2, META + ".PartialObjectMetadata", True)],
    # meta/v1beta1 numbers its list's fields the other way round
    (META_V1BETA1, "PartialObjectMetadataList"): [
        ("items", 1, META + ".PartialObjectMetadata", True), ("metadata", 2, META + ".ListMeta")],
}
SCALARS = {"string": 9, "bytes": 12, "int64": 3, "int32": 5, "bool": 8}


def build_classes():
    """{message name: class}, from MESSAGES through a descriptor pool."""
    pool = descriptor_pool.DescriptorPool()
    by_pkg = {}
    for (pkg, name), fields in MESSAGES.items():
        by_pkg.setdefault(pkg, []).append((name, fields))
    order = [RUNTIME, META, CORE, EVENTS, META_V1BETA1]  # each file needs the ones before it
    for i, pkg in enumerate(order):
        fdp = descriptor_pb2.FileDescriptorProto(name=pkg + ".proto", package=pkg,
                                                 syntax="proto2",
                                                 dependency=[p + ".proto" for p in order[:i]])
        for name, fields in by_pkg[pkg]:
            m = fdp.message_type.add(name=name)
            for spec in fields:
                fname, num, typ = spec[:3]
                repeated = len(spec) > 3 and spec[3]
                f = m.field.add(name=fname, number=num,
                                label=3 if repeated else 1)  # LABEL_REPEATED / OPTIONAL
                if typ.startswith("map<"):
                    val = typ[len("map<string,"):-1]
                    entry = m.nested_type.add(name=fname[0].upper() + fname[1:] + "Entry")
                    entry.options.map_entry = True
                    entry.field.add(name="key", number=1, label=1, type=9)
                    entry.field.add(name="value", number=2, label=1, type=SCALARS[val])
                    f.label = 3
                    f.type = 11  # TYPE_MESSAGE
                    f.type_name = ".%s.%s.%s" % (pkg, name, entry.name)
                elif typ in SCALARS:
                    f.type = SCALARS[typ]
                else:
                    f.type = 11
                    f.type_name = "." + typ
        pool.Add(fdp)
    factory = message_factory.MessageFactory(pool)
    prefix = {EVENTS: "events.", META_V1BETA1: "v1beta1."}
    return {prefix.get(pkg, "") + name:
            factory.GetPrototype(pool.FindMessageTypeByName(pkg + "." + name))
            for (pkg, name) in MESSAGES}


PB = build_classes()


def no_unknown_fields(test, msg):
    """Every field of msg (recursively) is one the declarations know."""
    test.assertEqual(len(msg.UnknownFields()), 0, "unknown fields in %s" % type(msg).__name__)
    for fd, v in msg.ListFields():
        if fd.message_type is None or fd.message_type.GetOptions().map_entry:
            continue
        for sub in (v if fd.label == fd.LABEL_REPEATED else [v]):
            no_unknown_fields(test, sub)


def time_json(t, micro=False):
    """A Time as Go's JSON writes it (RFC 3339, UTC; MicroTime with 6 digits)."""
    d = datetime.datetime.fromtimestamp(t.seconds, datetime.timezone.utc)
    if micro:
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%06dZ" % (t.nanos // 1000)
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def norm(v):
    """v without empty values: Go's protobuf writes every non-pointer field
    where its JSON leaves the empty ones out (omitempty), so both sides of a
    comparison drop "", null, {}, [] and integer 0."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()
                if not (x in ("", None) or x == {} or x == [] or (type(x) is int and x == 0))}
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def item_json(obj):
    """A JSON object as a list item holds it: no kind or apiVersion."""
    return norm({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})


def to_json(msg):
    """The decoded message as the JSON answer writes the same object (the
    fields these tests' objects use), empty values left out (norm)."""
    return norm(to_json_raw(msg))


def to_json_raw(msg):
    out = {}
    for fd, v in msg.ListFields():
        mt = fd.message_type
        if mt is not None and mt.GetOptions().map_entry:
            val = mt.fields_by_name["value"]
            out[fd.name] = {k: base64.b64encode(x).decode() if val.type == val.TYPE_BYTES else x
                            for k, x in v.items()}
        elif mt is not None and mt.name in ("Time", "MicroTime"):
            # Go writes the zero time as an empty message (JSON: null)
            out[fd.name] = time_json(v, mt.name == "MicroTime") if v.ByteSize() else None
        elif mt is not None and mt.name == "FieldsV1":
            out[fd.name] = json.loads(v.Raw)
        elif mt is not None:
            out[fd.name] = [to_json_raw(x) for x in v] if fd.label == fd.LABEL_REPEATED \
                else to_json_raw(v)
        elif fd.label == fd.LABEL_REPEATED:
            out[fd.name] = list(v)
        else:
            out[fd.name] = v
    return out


def unwrap(test, body, want_kind):
    """An envelope ("k8s\\0" + Unknown): its message, decoded."""
    test.assertEqual(body[:4], b"k8s\x00")
    u = PB["Unknown"].FromString(body[4:])
    no_unknown_fields(test, u)
    test.assertEqual((u.typeMeta.kind, u.contentEncoding, u.contentType),
                     (want_kind.split(".")[-1], "", ""))
    test.assertTrue(u.HasField("contentEncoding") and u.HasField("contentType"))
    msg = PB[want_kind].FromString(u.raw)
    no_unknown_fields(test, msg)
    return u.typeMeta.apiVersion, msg


def frames(test, body, kind):
    """A protobuf watch stream: [(type, decoded object)]."""
    out = []
    while body:
        n = struct.unpack(">I", body[:4])[0]
        test.assertLessEqual(4 + n, len(body))
        ev = PB["WatchEvent"].FromString(body[4:4 + n])
        no_unknown_fields(test, ev)
        body = body[4 + n:]
        out.append((ev.type, unwrap(test, ev.object.raw, kind)[1]))
    return out


def json_lines(body):
    return [json.loads(line) for line in body.decode().splitlines() if line.strip()]


class ProtobufWire(ServerTestCase, unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = cls.server.request("POST", "/api/v1/namespaces", body={
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        assert r.status == 201, r
        for i in range(40):
            cm = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "cm-%02d" % i, "labels": {"i": str(i), "app": "pb"},
                               "annotations": {"note": "ünïcode ✓ %d" % i}},
                  "data": {"k": "v%d" % i, "long": "x" * (200 * i)}}
            if i % 3 == 0:
                cm["binaryData"] = {"b": base64.b64encode(bytes(range(i + 1))).decode()}
            if i % 7 == 0:
                cm["immutable"] = True
            r = cls.server.request("POST", CMS, body=cm)
            assert r.status == 201, r
        r = cls.server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                               body={
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets." + GROUP},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                             "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}})
        assert r.status == 201, r
        wait_until(lambda: cls.server.request("GET", WIDGETS).status == 200, what="widgets served")
        for i in range(5):
            r = cls.server.request("POST", WIDGETS, body={
                "apiVersion": GROUP + "/v1", "kind": "Widget",
                "metadata": {"name": "w-%d" % i, "labels": {"i": str(i)},
                             "annotations": {"size": "%d" % (10 * i)}},
                "spec": {"size": i}})
            assert r.status == 201, r

    def get(self, path, accept, want=200):
        r = self.server.request("GET", path, headers={"Accept": accept})
        self.assertEqual(r.status, want, r)
        return r

    def list_both(self, query):
        """A page in protobuf and in JSON: (ListMeta, items) decoded, and the JSON."""
        r = self.get(CMS + query, PROTOBUF)
        self.assertEqual(r.headers["content-type"], PROTOBUF)
        av, lst = unwrap(self, r.body, "ConfigMapList")
        self.assertEqual(av, "v1")
        if "continue=" not in query:  # at the same revision (the leases move it)
            query += "%sresourceVersion=%s&resourceVersionMatch=Exact" % (
                "&" if "?" in query else "?", lst.metadata.resourceVersion)
        return lst, self.get(CMS + query, "application/json").json()

    def assert_same_list(self, lst, js):
        self.assertEqual(to_json(lst.metadata), norm(js["metadata"]))
        self.assertEqual([to_json(i) for i in lst.items], [item_json(i) for i in js["items"]])

    def test_list_pages_equal_json(self):
        # Twice: the first request encodes and keeps each version's
        # message, the second copies the kept bytes.
        for _ in range(2):
            lst, js = self.list_both("")
            self.assertEqual(len(lst.items), 41)  # with kube-root-ca.crt
            self.assert_same_list(lst, js)
        # Pages: continue tokens and remaining counts as in JSON.
        query, pages = "?limit=15", 0
        while True:
            lst, js = self.list_both(query)
            self.assert_same_list(lst, js)
            pages += 1
            if not js["metadata"].get("continue"):
                break
            self.assertEqual(lst.metadata.remainingItemCount, 41 - 15 * pages)
            query = "?limit=15&continue=" + js["metadata"]["continue"]
        self.assertEqual(pages, 3)
        # A label selector, and an empty page.
        lst, js = self.list_both("?labelSelector=i%3D7")
        self.assert_same_list(lst, js)
        self.assertEqual([i.metadata.name for i in lst.items], ["cm-07"])
        lst, js = self.list_both("?labelSelector=i%3Dnone")
        self.assert_same_list(lst, js)
        self.assertEqual(len(lst.items), 0)

    def test_each_version_its_own_bytes(self):
        # Kept encodings are per version: after two updates a list serves the
        # last, and a watch from before them both versions, each its own.
        name = "twice"
        r = self.server.request("POST", CMS, body={"apiVersion": "v1", "kind": "ConfigMap",
                                                   "metadata": {"name": name},
                                                   "data": {"v": "1"}})
        self.assertEqual(r.status, 201, r)
        rv0 = r.json()["metadata"]["resourceVersion"]
        self.list_both("")  # keeps version 1's message
        obj = r.json()
        for v in ("2", "3"):
            obj["data"] = {"v": v, "pad": v * 300}
            r = self.server.request("PUT", CMS + "/" + name, body=obj)
            self.assertEqual(r.status, 200, r)
            obj = r.json()
            lst, js = self.list_both("?fieldSelector=metadata.name%3D" + name)
            self.assert_same_list(lst, js)
            self.assertEqual(lst.items[0].data["v"], v)
        path = CMS + "?watch=1&resourceVersion=%s&timeoutSeconds=1" % rv0
        pb = frames(self, self.get(path, PROTOBUF).body, "ConfigMap")
        js = json_lines(self.get(path, "application/json").body)
        self.assertEqual([(t, to_json(o)) for t, o in pb],
                         [(e["type"], item_json(e["object"])) for e in js])
        mine = [(t, o.data["v"], o.metadata.resourceVersion) for t, o in pb
                if o.metadata.name == name]
        self.assertEqual([m[:2] for m in mine], [("MODIFIED", "2"), ("MODIFIED", "3")])
        self.assertNotEqual(mine[0][2], mine[1][2])
        # A GET in protobuf: the last version.
        av, got = unwrap(self, self.get(CMS + "/" + name, PROTOBUF).body, "ConfigMap")
        self.assertEqual(got.data["v"], "3")

    def test_watch_frames_equal_json(self):
        # Initial events (ADDED frames from the list path), a watch-list
        # bookmark, and changes for several watchers at once, all the
        # watchers receiving the same bytes.
        rv = self.get(CMS, "application/json").json()["metadata"]["resourceVersion"]
        path = CMS + "?watch=1&timeoutSeconds=1&labelSelector=app%3Dpb"
        pb = frames(self, self.get(path, PROTOBUF).body, "ConfigMap")
        js = json_lines(self.get(path, "application/json").body)
        self.assertEqual(len(pb), 40)
        self.assertEqual(sorted((t, json.dumps(to_json(o), sort_keys=True)) for t, o in pb),
                         sorted((e["type"], json.dumps(item_json(e["object"]), sort_keys=True))
                                for e in js))
        wl = CMS + ("?watch=1&timeoutSeconds=1&sendInitialEvents=true&allowWatchBookmarks=true"
                    "&resourceVersionMatch=NotOlderThan&labelSelector=i%3D3")
        pb = frames(self, self.get(wl, PROTOBUF).body, "ConfigMap")
        # (then, within the second, periodic bookmarks)
        self.assertEqual([(t, o.metadata.name) for t, o in pb[:2]], [("ADDED", "cm-03"),
                                                                     ("BOOKMARK", "")])
        self.assertEqual({t for t, _ in pb[2:]}, {"BOOKMARK"} if pb[2:] else set())
        self.assertEqual(dict(pb[1][1].metadata.annotations),
                         {"k8s.io/initial-events-end": "true"})
        self.assertGreaterEqual(int(pb[1][1].metadata.resourceVersion),
                                int(pb[0][1].metadata.resourceVersion))

        # The changes first, then the watchers from before them at once: the
        # events come from the cache's window, as for any watcher behind,
        # whatever the machine's speed.
        for i in (5, 6):
            r = self.server.request("PATCH", CMS + "/cm-%02d" % i,
                                    body={"data": {"k": "patched"}},
                                    headers={"Content-Type": "application/merge-patch+json"})
            self.assertEqual(r.status, 200, r)
        r = self.server.request("DELETE", CMS + "/cm-08")
        self.assertEqual(r.status, 200, r)
        live = CMS + "?watch=1&resourceVersion=%s&timeoutSeconds=2" % rv
        bodies = [None] * 4

        def watch(i):
            bodies[i] = self.get(live, PROTOBUF if i else "application/json").body
        threads = [threading.Thread(target=watch, args=(i,)) for i in range(len(bodies))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(bodies[1], bodies[2])
        self.assertEqual(bodies[1], bodies[3])
        pb = frames(self, bodies[1], "ConfigMap")
        js = json_lines(bodies[0])
        self.assertEqual([(t, o.metadata.name) for t, o in pb],
                         [("MODIFIED", "cm-05"), ("MODIFIED", "cm-06"), ("DELETED", "cm-08")])
        self.assertEqual([(t, to_json(o)) for t, o in pb],
                         [(e["type"], item_json(e["object"])) for e in js])

    def test_metadata_only_lists_in_protobuf(self):
        # client-go's metadata client (the garbage collector, controller-
        # runtime's metadata-only informers) asks protobuf first: a
        # PartialObjectMetadataList of meta.k8s.io, for built-in and custom
        # resources alike, equal to the JSON answer at the same revision.
        # Twice each: the first request keeps each version's message.
        for version in ("v1", "v1beta1", "v1"):
            kind = {"v1": "PartialObjectMetadataList",
                    "v1beta1": "v1beta1.PartialObjectMetadataList"}[version]
            for path, n in ((CMS, 41), (WIDGETS, 5)):
                r = self.get(path, metadata_accept("PartialObjectMetadataList", version))
                self.assertEqual(r.headers["content-type"], PROTOBUF)
                av, lst = unwrap(self, r.body, kind)
                self.assertEqual(av, "meta.k8s.io/" + version)
                self.assertEqual(len(lst.items), n)
                exact = "?resourceVersion=%s&resourceVersionMatch=Exact" % \
                    lst.metadata.resourceVersion
                js = self.get(path + exact, metadata_accept("PartialObjectMetadataList", version,
                                                            json_only=True)).json()
                self.assertEqual(js["kind"], "PartialObjectMetadataList")
                self.assert_same_list(lst, js)
                self.assertTrue(all(i.metadata.uid for i in lst.items))
        # Pages: continue tokens and remaining counts as in JSON.
        accept = metadata_accept("PartialObjectMetadataList", "v1")
        query, pages, seen = "?limit=15", 0, []
        while True:
            av, lst = unwrap(self, self.get(CMS + query, accept).body, "PartialObjectMetadataList")
            pages += 1
            seen += [i.metadata.name for i in lst.items]
            if not lst.metadata.__getattribute__("continue"):
                break
            self.assertEqual(lst.metadata.remainingItemCount, 41 - 15 * pages)
            query = "?limit=15&continue=" + lst.metadata.__getattribute__("continue")
        self.assertEqual(pages, 3)
        js = self.get(CMS, "application/json").json()
        self.assertEqual(seen, [i["metadata"]["name"] for i in js["items"]])
        # A label selector.
        av, lst = unwrap(self, self.get(WIDGETS + "?labelSelector=i%3D3", accept).body,
                         "PartialObjectMetadataList")
        self.assertEqual([(i.metadata.name, dict(i.metadata.annotations)) for i in lst.items],
                         [("w-3", {"size": "30"})])

    def test_metadata_only_get_and_watch_in_protobuf(self):
        one = metadata_accept("PartialObjectMetadata", "v1")
        for path in (CMS + "/cm-04", WIDGETS + "/w-2"):
            r = self.get(path, one)
            self.assertEqual(r.headers["content-type"], PROTOBUF)
            av, got = unwrap(self, r.body, "PartialObjectMetadata")
            self.assertEqual(av, "meta.k8s.io/v1")
            js = self.get(path, metadata_accept("PartialObjectMetadata", "v1", True)).json()
            self.assertEqual(to_json(got), item_json(js))
        # A list type asked of one object: refused in protobuf as in JSON.
        self.get(CMS + "/cm-04", metadata_accept("PartialObjectMetadataList", "v1"), want=406)
        # Watches: initial events, a bookmark, then changes, each event a
        # PartialObjectMetadata frame equal to the JSON event.
        for path in (CMS, WIDGETS):
            rv = self.get(path, "application/json").json()["metadata"]["resourceVersion"]
            wl = path + ("?watch=1&timeoutSeconds=1&sendInitialEvents=true"
                         "&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
                         "&labelSelector=i%3D3")
            r = self.get(wl, one)
            self.assertEqual(r.headers["content-type"], PROTOBUF + ";stream=watch")
            pb = frames(self, r.body, "PartialObjectMetadata")
            self.assertEqual([t for t, _ in pb[:2]], ["ADDED", "BOOKMARK"])
            self.assertEqual(pb[0][1].metadata.labels["i"], "3")
            self.assertEqual(dict(pb[1][1].metadata.annotations),
                             {"k8s.io/initial-events-end": "true"})
            name = "cm-03" if path == CMS else "w-3"
            r = self.server.request("PATCH", path + "/" + name,
                                    body={"metadata": {"labels": {"seen": "yes"}}},
                                    headers={"Content-Type": "application/merge-patch+json"})
            self.assertEqual(r.status, 200, r)
            live = path + "?watch=1&timeoutSeconds=1&resourceVersion=%s" % rv
            pb = frames(self, self.get(live, one).body, "PartialObjectMetadata")
            js = json_lines(self.get(live, metadata_accept("PartialObjectMetadata", "v1",
                                                           True)).body)
            self.assertEqual([(t, to_json(o)) for t, o in pb],
                             [(e["type"], item_json(e["object"])) for e in js])
            self.assertEqual([(t, o.metadata.name, o.metadata.labels["seen"]) for t, o in pb],
                             [("MODIFIED", name, "yes")])

    def test_shared_storage_served_version(self):
        # events.k8s.io/v1 Events are stored as core v1 Events: the core
        # list keeps the core message; the events.k8s.io list is converted
        # per request and must not be served the kept core bytes.
        core = "/api/v1/namespaces/%s/events" % NS
        events = "/apis/events.k8s.io/v1/namespaces/%s/events" % NS
        r = self.server.request("POST", core, body={
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"},
            "involvedObject": {"kind": "Pod", "name": "p1", "namespace": NS},
            "reason": "Started", "message": "started container", "type": "Normal",
            "source": {"component": "kubelet", "host": "n1"}, "count": 3,
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:05:00Z"})
        self.assertEqual(r.status, 201, r)
        for _ in range(2):
            av, lst = unwrap(self, self.get(core, PROTOBUF).body, "EventList")
            self.assertEqual(av, "v1")
            got = to_json(lst.items[0])
            want = self.get(core, "application/json").json()["items"][0]
            self.assertEqual(got, item_json(want))
        for _ in range(2):
            av, lst = unwrap(self, self.get(events, PROTOBUF).body, "events.EventList")
            self.assertEqual(av, "events.k8s.io/v1")
            want = self.get(events, "application/json").json()["items"][0]
            self.assertEqual(want["note"], "started container")
            self.assertEqual(to_json(lst.items[0]), item_json(want))


if __name__ == "__main__":
    unittest.main()
