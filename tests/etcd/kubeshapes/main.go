// kubeshapes replays kube-apiserver's etcd3 call shapes (k8s.io/apiserver's
// storage/etcd3 store) through the real Go clientv3 and prints what each call
// answers, one line per step, so the same run against etcd and against
// sqlkube's etcd face can be compared line for line.
//
// Revisions are printed relative to the revision the run starts at, and
// headers' member and cluster ids are left out: the two stores start at
// different revisions and have different ids, and nothing else may differ.
// Errors print as the client returns them (etcd's exact messages: clients
// switch on them).
//
// Sections (-sections, comma-separated):
//
//	kv     create as Txn(ModRevision==0 -> Put), get, update as
//	       Txn(ModRevision==R -> Put, else Get) with a current and a stale R,
//	       delete likewise, paged Range with key+"\x00" continuation at the
//	       first page's revision, Count, count-only Range, keys-only Range
//	       (kube 1.34's count) with and without a limit, reads at past and
//	       future revisions
//	watch  watch from RV+1 with prev_kv over puts, updates and deletes; a
//	       progress request answered with the current revision; a watch
//	       from a compacted revision cancelled with compact_revision
//	lease  a lease (as kube-apiserver's Events use) whose keys go when it
//	       expires, seen by a watch; TimeToLive; revoke of an unknown lease
//	compact  the compact_rev_key Version CAS, seen by a watch on that key
//	       (kube 1.34) whose value gives the compacted revision (1.35),
//	       Compact, then reads below it (after the sections whose history it
//	       removes)
//	fragment  a revision larger than etcd's response limit (a prefix
//	       deleted with prev_kv), watched with and without fragment on one
//	       raw stream: how many responses and events each gets, and which
//	       are marked fragment; then clientv3's reassembly of the parts
//	batch  concurrent writers on one key, so a store that group-commits
//	       puts several in one batch: puts with prev_kv, puts and deletes
//	       mixed, and GuaranteedUpdate-style increments (CAS, else Get,
//	       retried). The order is the scheduler's, so each prints whether
//	       etcd's invariants held (revisions consecutive, each prev_kv the
//	       version the one before wrote, versions and create revisions as a
//	       serial run gives), never the order itself; last, as how many
//	       revisions the mixed puts and deletes take depends on that order
//
// Built in GOPATH mode (GO111MODULE=off) against Debian's
// golang-etcd-server-dev (clientv3 3.4).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/clientv3"
	pb "go.etcd.io/etcd/etcdserver/etcdserverpb"
	"go.etcd.io/etcd/mvcc/mvccpb"
)

var (
	base   int64
	ctx    = context.Background()
	client *clientv3.Client
	prefix string
)

func rel(r int64) int64 {
	if r <= 0 {
		return r
	}
	return r - base
}

func emit(step string, v interface{}) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %s\n", step, b)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

type kvOut struct {
	Key     string `json:"key"`
	Value   string `json:"value,omitempty"`
	Create  int64  `json:"create"`
	Mod     int64  `json:"mod"`
	Version int64  `json:"version"`
	Leased  bool   `json:"leased,omitempty"`
}

func kvsOut(kvs []*mvccpb.KeyValue) []kvOut {
	out := []kvOut{}
	for _, kv := range kvs {
		out = append(out, kvOut{strings.TrimPrefix(string(kv.Key), prefix), string(kv.Value),
			rel(kv.CreateRevision), rel(kv.ModRevision), kv.Version, kv.Lease != 0})
	}
	return out
}

func key(name string) string { return prefix + name }

// create is storage.Create: put if absent.
func create(name, value string, lease clientv3.LeaseID) int64 {
	var opts []clientv3.OpOption
	if lease != 0 {
		opts = append(opts, clientv3.WithLease(lease))
	}
	resp, err := client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key(name)), "=", 0)).
		Then(clientv3.OpPut(key(name), value, opts...)).Commit()
	if err != nil {
		emit("create "+name, map[string]interface{}{"err": errText(err)})
		return 0
	}
	emit("create "+name, map[string]interface{}{"ok": resp.Succeeded, "rev": rel(resp.Header.Revision)})
	return resp.Header.Revision
}

// update is GuaranteedUpdate's transaction: put if unchanged since origRev,
// else read the current version.
func update(name, value string, origRev int64) {
	resp, err := client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key(name)), "=", origRev)).
		Then(clientv3.OpPut(key(name), value)).Else(clientv3.OpGet(key(name))).Commit()
	if err != nil {
		emit("update "+name, map[string]interface{}{"err": errText(err)})
		return
	}
	o := map[string]interface{}{"ok": resp.Succeeded, "rev": rel(resp.Header.Revision)}
	if !resp.Succeeded {
		o["current"] = kvsOut(resp.Responses[0].GetResponseRange().Kvs)
	}
	emit("update "+name, o)
}

// remove is storage.Delete's transaction.
func remove(name string, origRev int64) {
	resp, err := client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key(name)), "=", origRev)).
		Then(clientv3.OpDelete(key(name))).Else(clientv3.OpGet(key(name))).Commit()
	if err != nil {
		emit("delete "+name, map[string]interface{}{"err": errText(err)})
		return
	}
	o := map[string]interface{}{"ok": resp.Succeeded, "rev": rel(resp.Header.Revision)}
	if resp.Succeeded {
		o["deleted"] = resp.Responses[0].GetResponseDeleteRange().Deleted
	} else {
		o["current"] = kvsOut(resp.Responses[0].GetResponseRange().Kvs)
	}
	emit("delete "+name, o)
}

func get(step, name string, opts ...clientv3.OpOption) *clientv3.GetResponse {
	resp, err := client.Get(ctx, key(name), opts...)
	if err != nil {
		emit(step, map[string]interface{}{"err": errText(err)})
		return nil
	}
	emit(step, map[string]interface{}{"kvs": kvsOut(resp.Kvs), "count": resp.Count,
		"more": resp.More, "rev": rel(resp.Header.Revision)})
	return resp
}

func modRev(name string) int64 {
	resp, err := client.Get(ctx, key(name))
	if err != nil || len(resp.Kvs) == 0 {
		return 0
	}
	return resp.Kvs[0].ModRevision
}

// list is storage.GetList's paging: a prefix range with a limit, later
// pages from the last key + "\x00" at the first page's revision.
func list(step, dir string, limit int64) {
	listWith(step, dir, limit, nil)
}

// listWith is list with writes after the first page (between, if not nil):
// the later pages, at the first page's revision, must not see them, in
// their keys or in their counts.
func listWith(step, dir string, limit int64, between func()) {
	from := key(dir)
	end := clientv3.GetPrefixRangeEnd(from)
	var rev int64
	for page := 0; ; page++ {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(limit)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := client.Get(ctx, from, opts...)
		if err != nil {
			emit(fmt.Sprintf("%s page %d", step, page), map[string]interface{}{"err": errText(err)})
			return
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		emit(fmt.Sprintf("%s page %d", step, page), map[string]interface{}{
			"kvs": kvsOut(resp.Kvs), "count": resp.Count, "more": resp.More,
			"rev": rel(resp.Header.Revision)})
		if !resp.More || len(resp.Kvs) == 0 {
			return
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		if page == 0 && between != nil {
			between()
		}
	}
}

// keysOnly is a keys-only prefix range: the keys, no values, and the count.
func keysOnly(step, dir string, limit int64) {
	resp, err := client.Get(ctx, key(dir), clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithLimit(limit))
	if err != nil {
		emit(step, map[string]interface{}{"err": errText(err)})
		return
	}
	valueBytes := 0
	for _, kv := range resp.Kvs {
		valueBytes += len(kv.Value)
	}
	emit(step, map[string]interface{}{"kvs": kvsOut(resp.Kvs), "count": resp.Count,
		"more": resp.More, "value_bytes": valueBytes, "rev": rel(resp.Header.Revision)})
}

func sectionKV() {
	for _, n := range []string{"pods/ns1/a", "pods/ns1/b", "pods/ns2/c", "pods/ns2/d", "pods/ns3/e"} {
		create(n, "v1:"+n, 0)
	}
	create("pods/ns1/a", "again", 0) // already exists: not succeeded
	get("get a", "pods/ns1/a")
	r := modRev("pods/ns1/b")
	update("pods/ns1/b", "v2", r)
	update("pods/ns1/b", "v3-stale", r) // stale: the Else Get shows the current one
	get("get b at its first revision", "pods/ns1/b", clientv3.WithRev(r))
	list("list pods", "pods/", 2)
	list("list ns2", "pods/ns2/", 10)
	resp, err := client.Get(ctx, key("pods/"), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		emit("count pods", map[string]interface{}{"err": errText(err)})
	} else {
		emit("count pods", map[string]interface{}{"count": resp.Count, "kvs": len(resp.Kvs)})
	}
	// kube 1.34 counts with a keys-only range instead (kubernetes#132355)
	// and pages one the same way
	keysOnly("count pods keys only", "pods/", 0)
	keysOnly("keys only with a limit", "pods/", 2)
	remove("pods/ns2/c", modRev("pods/ns2/c"))
	remove("pods/ns2/d", 1) // stale
	list("list pods after delete", "pods/", 3)
	get("get missing", "pods/ns9/none")
	cur := modRev("pods/ns1/b")
	get("get at a future revision", "pods/ns1/b", clientv3.WithRev(cur+1000))
	// A paged list while the range is written: the later pages keep the
	// first page's revision; then the same list again, at the new one.
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		create("paged/"+n, "v:"+n, 0)
	}
	listWith("list paged while written", "paged/", 2, func() {
		create("paged/bb", "new", 0)
		remove("paged/f", modRev("paged/f"))
		create("paged/h", "new", 0)
	})
	list("list paged after the writes", "paged/", 2)
	list("list paged after the writes, pages of 3", "paged/", 3)
}

type evOut struct {
	Type  string `json:"type"`
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
	Mod   int64  `json:"mod"`
	Prev  string `json:"prev,omitempty"`
}

func evsOut(evs []*clientv3.Event) []evOut {
	out := []evOut{}
	for _, e := range evs {
		o := evOut{Type: e.Type.String(), Key: strings.TrimPrefix(string(e.Kv.Key), prefix),
			Value: string(e.Kv.Value), Mod: rel(e.Kv.ModRevision)}
		if e.PrevKv != nil {
			o.Prev = string(e.PrevKv.Value)
		}
		out = append(out, o)
	}
	return out
}

// collect reads events from ch until n arrived or the timeout passed.
func collect(ch clientv3.WatchChan, n int, timeout time.Duration) ([]*clientv3.Event, error) {
	var evs []*clientv3.Event
	deadline := time.After(timeout)
	for len(evs) < n {
		select {
		case wr, ok := <-ch:
			if !ok {
				return evs, fmt.Errorf("watch channel closed")
			}
			if err := wr.Err(); err != nil {
				return evs, err
			}
			evs = append(evs, wr.Events...)
		case <-deadline:
			return evs, fmt.Errorf("timed out after %d of %d events", len(evs), n)
		}
	}
	return evs, nil
}

func sectionWatch() {
	start := create("cm/w/x", "1", 0)
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ch := client.Watch(wctx, key("cm/w/"), clientv3.WithPrefix(), clientv3.WithRev(start+1),
		clientv3.WithPrevKV(), clientv3.WithProgressNotify())
	update("cm/w/x", "2", start)
	create("cm/w/y", "1", 0)
	remove("cm/w/x", modRev("cm/w/x"))
	if _, err := client.Txn(ctx).Then(clientv3.OpPut(key("cm/w/p"), "a"), clientv3.OpPut(key("cm/w/q"), "b")).Commit(); err != nil {
		emit("txn two puts", map[string]interface{}{"err": errText(err)})
	}
	evs, err := collect(ch, 5, 20*time.Second)
	emit("watch from RV+1", map[string]interface{}{"events": evsOut(evs), "err": errText(err)})

	// A progress request on the stream answers the current revision once
	// the watch has caught up.
	if err := client.RequestProgress(wctx); err != nil {
		emit("progress", map[string]interface{}{"err": errText(err)})
	} else {
		var got string
		deadline := time.After(20 * time.Second)
	wait:
		for {
			select {
			case wr := <-ch:
				if wr.IsProgressNotify() {
					got = strconv.FormatInt(rel(wr.Header.Revision), 10)
					break wait
				}
			case <-deadline:
				got = "timed out"
				break wait
			}
		}
		emit("progress", map[string]interface{}{"rev": got})
	}

	// Watching from the start again replays the same events.
	ch2 := client.Watch(wctx, key("cm/w/"), clientv3.WithPrefix(), clientv3.WithRev(start+1),
		clientv3.WithPrevKV())
	evs2, err := collect(ch2, 5, 20*time.Second)
	emit("watch replay", map[string]interface{}{"events": evsOut(evs2), "err": errText(err)})
}

func sectionLease() {
	lease, err := client.Grant(ctx, 2)
	if err != nil {
		emit("grant", map[string]interface{}{"err": errText(err)})
		return
	}
	emit("grant", map[string]interface{}{"ttl": lease.TTL, "err": lease.Error})
	start := create("events/ns1/e1", "event", lease.ID)
	create("events/ns1/e2", "event", lease.ID)
	ttl, err := client.TimeToLive(ctx, lease.ID, clientv3.WithAttachedKeys())
	if err != nil {
		emit("timetolive", map[string]interface{}{"err": errText(err)})
	} else {
		keys := []string{}
		for _, k := range ttl.Keys {
			keys = append(keys, strings.TrimPrefix(string(k), prefix))
		}
		sort.Strings(keys)
		emit("timetolive", map[string]interface{}{"granted": ttl.GrantedTTL,
			"ttl_in_range": ttl.TTL > 0 && ttl.TTL <= 2, "keys": keys})
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := client.Watch(wctx, key("events/"), clientv3.WithPrefix(), clientv3.WithRev(start+1))
	evs, err := collect(ch, 3, 30*time.Second) // e2's put, then both deletes at expiry
	out := evsOut(evs)
	sameRev := len(evs) == 3 && evs[1].Kv.ModRevision == evs[2].Kv.ModRevision
	emit("expiry", map[string]interface{}{"types": func() []string {
		t := []string{}
		for _, e := range out {
			t = append(t, e.Type+" "+e.Key)
		}
		return t
	}(), "deletes_in_one_revision": sameRev, "err": errText(err)})
	get("get expired", "events/ns1/e1")
	_, err = client.Revoke(ctx, lease.ID)
	emit("revoke expired lease", map[string]interface{}{"err": errText(err)})
	_, err = client.Revoke(ctx, 0x7fff0000deadbeef)
	emit("revoke unknown lease", map[string]interface{}{"err": errText(err)})
}

func sectionCompact() {
	// kube-apiserver's compactor: a CAS on compact_rev_key's Version, then
	// Compact at the revision it wrote.
	ckey := "compact_rev_key"
	resp, err := client.Get(ctx, ckey)
	if err != nil {
		emit("compact get key", map[string]interface{}{"err": errText(err)})
		return
	}
	var version int64
	if len(resp.Kvs) > 0 {
		version = resp.Kvs[0].Version
	}
	old := modRev("pods/ns1/a")
	rev := resp.Header.Revision
	// kube 1.34 watches the key (kubernetes#132876) and 1.35 reads the
	// compacted revision from the value each event carries; the watch asks
	// for a leader, as kube-apiserver's watches do.
	kctx, kcancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer kcancel()
	kch := client.Watch(kctx, ckey, clientv3.WithRev(rev+1))
	txn, err := client.Txn(ctx).If(clientv3.Compare(clientv3.Version(ckey), "=", version)).
		Then(clientv3.OpPut(ckey, strconv.FormatInt(rev, 10))).Else(clientv3.OpGet(ckey)).Commit()
	if err != nil {
		emit("compact cas", map[string]interface{}{"err": errText(err)})
		return
	}
	emit("compact cas", map[string]interface{}{"ok": txn.Succeeded})
	// A second CAS with the old version loses, as a second apiserver's would.
	txn2, err := client.Txn(ctx).If(clientv3.Compare(clientv3.Version(ckey), "=", version)).
		Then(clientv3.OpPut(ckey, "x")).Else(clientv3.OpGet(ckey)).Commit()
	if err == nil {
		emit("compact cas again", map[string]interface{}{"ok": txn2.Succeeded,
			"version": txn2.Responses[0].GetResponseRange().Kvs[0].Version - version})
	}
	if evs, err := collect(kch, 1, 20*time.Second); err != nil {
		emit("compact key watched", map[string]interface{}{"err": errText(err)})
	} else {
		parsed, perr := strconv.ParseInt(string(evs[0].Kv.Value), 10, 64)
		emit("compact key watched", map[string]interface{}{"type": evs[0].Type.String(),
			"mod": rel(evs[0].Kv.ModRevision), "version": evs[0].Kv.Version - version,
			"compact_rev": rel(parsed), "parse_err": errText(perr)})
	}
	_, err = client.Compact(ctx, rev, clientv3.WithCompactPhysical())
	emit("compact", map[string]interface{}{"err": errText(err)})
	get("get below the compaction", "pods/ns1/a", clientv3.WithRev(old-1))
	get("get at the compaction", "pods/ns1/a", clientv3.WithRev(rev))
	_, err = client.Compact(ctx, rev-1)
	emit("compact again lower", map[string]interface{}{"err": errText(err)})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := client.Watch(wctx, key("pods/"), clientv3.WithPrefix(), clientv3.WithRev(old-1))
	select {
	case wr := <-ch:
		emit("watch below the compaction", map[string]interface{}{
			"compact_rev": rel(wr.CompactRevision), "canceled": wr.Canceled, "err": errText(wr.Err())})
	case <-time.After(20 * time.Second):
		emit("watch below the compaction", map[string]interface{}{"err": "timed out"})
	}
}

// batchOp is one concurrent write's answer.
type batchOp struct {
	del     bool
	rev     int64 // header revision
	deleted int64
	prev    *mvccpb.KeyValue
	value   string
}

// inParallel runs f(0..n-1) at once and returns their answers.
func inParallel(n int, f func(i int) (batchOp, error)) ([]batchOp, error) {
	ops := make([]batchOp, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			var err error
			ops[i], err = f(i)
			errs <- err
		}(i)
	}
	var first error
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return ops, first
}

// serial checks ops against a serial run from an absent key: the writes
// that took a revision took consecutive ones, each put's and delete's
// prev_kv is exactly the version the write before it left, and a delete
// that deleted nothing saw the key absent at its revision. It returns the
// final version (nil: absent) and the first violation ("" if none).
func serial(ops []batchOp) (*mvccpb.KeyValue, string) {
	sort.SliceStable(ops, func(a, b int) bool { return ops[a].rev < ops[b].rev })
	var cur *mvccpb.KeyValue
	var last int64
	absent := map[int64]bool{} // the key's state after each revision taken
	for _, op := range ops {
		if op.del && op.deleted == 0 {
			continue
		}
		if last != 0 && op.rev != last+1 {
			return cur, fmt.Sprintf("revision %d after %d", rel(op.rev), rel(last))
		}
		last = op.rev
		same := (cur == nil && op.prev == nil) || (cur != nil && op.prev != nil &&
			cur.ModRevision == op.prev.ModRevision && cur.CreateRevision == op.prev.CreateRevision &&
			cur.Version == op.prev.Version && string(cur.Value) == string(op.prev.Value))
		if !same {
			return cur, fmt.Sprintf("prev_kv at revision %d is not the version before it", rel(op.rev))
		}
		absent[op.rev] = op.del
		if op.del {
			cur = nil
			continue
		}
		next := &mvccpb.KeyValue{ModRevision: op.rev, CreateRevision: op.rev, Version: 1,
			Value: []byte(op.value)}
		if cur != nil {
			next.CreateRevision, next.Version = cur.CreateRevision, cur.Version+1
		}
		cur = next
	}
	for _, op := range ops {
		if !op.del || op.deleted != 0 {
			continue
		}
		gone := true // before the first write the key is absent
		for _, w := range ops {
			if (!w.del || w.deleted != 0) && w.rev <= op.rev {
				gone = absent[w.rev]
			}
		}
		if !gone {
			return cur, fmt.Sprintf("a delete at revision %d found nothing to delete", rel(op.rev))
		}
	}
	return cur, ""
}

func sectionBatch() {
	const n = 32
	ops, err := inParallel(n, func(i int) (batchOp, error) {
		v := fmt.Sprintf("v%d", i)
		r, err := client.Put(ctx, key("batch/puts"), v, clientv3.WithPrevKV())
		if err != nil {
			return batchOp{}, err
		}
		return batchOp{rev: r.Header.Revision, prev: r.PrevKv, value: v}, nil
	})
	if err != nil {
		emit("batch puts one key", map[string]interface{}{"err": errText(err)})
	} else {
		cur, bad := serial(ops)
		got, err := client.Get(ctx, key("batch/puts"))
		same := err == nil && cur != nil && len(got.Kvs) == 1 && got.Kvs[0].ModRevision == cur.ModRevision &&
			got.Kvs[0].CreateRevision == cur.CreateRevision && got.Kvs[0].Version == n &&
			string(got.Kvs[0].Value) == string(cur.Value)
		emit("batch puts one key", map[string]interface{}{"violation": bad, "final_as_serial": same})
	}

	ops, err = inParallel(n, func(i int) (batchOp, error) {
		if i%2 == 1 {
			r, err := client.Delete(ctx, key("batch/mixed"), clientv3.WithPrevKV())
			if err != nil {
				return batchOp{}, err
			}
			op := batchOp{del: true, rev: r.Header.Revision, deleted: r.Deleted}
			if len(r.PrevKvs) > 0 {
				op.prev = r.PrevKvs[0]
			}
			return op, nil
		}
		v := fmt.Sprintf("v%d", i)
		r, err := client.Put(ctx, key("batch/mixed"), v, clientv3.WithPrevKV())
		if err != nil {
			return batchOp{}, err
		}
		return batchOp{rev: r.Header.Revision, prev: r.PrevKv, value: v}, nil
	})
	if err != nil {
		emit("batch puts and deletes one key", map[string]interface{}{"err": errText(err)})
	} else {
		cur, bad := serial(ops)
		got, err := client.Get(ctx, key("batch/mixed"))
		same := err == nil && ((cur == nil && len(got.Kvs) == 0) || (cur != nil &&
			len(got.Kvs) == 1 && got.Kvs[0].ModRevision == cur.ModRevision &&
			got.Kvs[0].Version == cur.Version && got.Kvs[0].CreateRevision == cur.CreateRevision))
		emit("batch puts and deletes one key", map[string]interface{}{"violation": bad,
			"final_as_serial": same})
	}

	// GuaranteedUpdate: read, CAS on the mod revision, on failure take the
	// current version from the Else Get and try again.
	ck := key("batch/counter")
	if _, err := client.Put(ctx, ck, "0"); err != nil {
		emit("batch cas increments", map[string]interface{}{"err": errText(err)})
		return
	}
	var mu sync.Mutex
	bad := ""
	ops, err = inParallel(n, func(i int) (batchOp, error) {
		r, err := client.Get(ctx, ck)
		if err != nil {
			return batchOp{}, err
		}
		kv := r.Kvs[0]
		for {
			v, _ := strconv.Atoi(string(kv.Value))
			t, err := client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(ck), "=", kv.ModRevision)).
				Then(clientv3.OpPut(ck, strconv.Itoa(v+1))).Else(clientv3.OpGet(ck)).Commit()
			if err != nil {
				return batchOp{}, err
			}
			if t.Succeeded {
				return batchOp{rev: t.Header.Revision}, nil
			}
			now := t.Responses[0].GetResponseRange().Kvs[0]
			if now.ModRevision <= kv.ModRevision || now.ModRevision > t.Header.Revision {
				mu.Lock()
				bad = fmt.Sprintf("the Else Get saw revision %d after a CAS on %d (header %d)",
					rel(now.ModRevision), rel(kv.ModRevision), rel(t.Header.Revision))
				mu.Unlock()
			}
			kv = now
		}
	})
	if err != nil {
		emit("batch cas increments", map[string]interface{}{"err": errText(err)})
		return
	}
	sort.Slice(ops, func(a, b int) bool { return ops[a].rev < ops[b].rev })
	for i := 1; i < n && bad == ""; i++ {
		if ops[i].rev != ops[i-1].rev+1 {
			bad = fmt.Sprintf("revision %d after %d", rel(ops[i].rev), rel(ops[i-1].rev))
		}
	}
	got, err := client.Get(ctx, ck)
	final := map[string]interface{}{}
	if err == nil && len(got.Kvs) == 1 {
		final["value"] = string(got.Kvs[0].Value)
		final["version"] = got.Kvs[0].Version
		final["mod_is_last"] = got.Kvs[0].ModRevision == ops[n-1].rev
	}
	emit("batch cas increments", map[string]interface{}{"violation": bad, "final": final})
}

// fragmentKeys keys of fragmentValue bytes: deleted in one revision with
// prev_kv, about 4.5 MB of events, over twice etcd's 2 MiB response limit.
const (
	fragmentKeys  = 2200
	fragmentValue = 1000
)

func sectionFragment() {
	dir := key("cm/frag/")
	stream, err := pb.NewWatchClient(client.ActiveConnection()).Watch(ctx)
	if err != nil {
		emit("fragment watch", map[string]interface{}{"err": errText(err)})
		return
	}
	defer stream.CloseSend()
	for id, fragment := range []bool{false, true} {
		create := &pb.WatchCreateRequest{Key: []byte(dir),
			RangeEnd: []byte(clientv3.GetPrefixRangeEnd(dir)), PrevKv: true,
			Fragment: fragment, WatchId: int64(id + 1)}
		if err := stream.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{
			CreateRequest: create}}); err != nil {
			emit("fragment watch", map[string]interface{}{"err": errText(err)})
			return
		}
		if wr, err := stream.Recv(); err != nil || !wr.Created {
			emit("fragment watch created", map[string]interface{}{"err": errText(err)})
			return
		}
	}
	value := strings.Repeat("v", fragmentValue)
	if _, err := inParallel(16, func(w int) (batchOp, error) {
		for i := w; i < fragmentKeys; i += 16 {
			if _, err := client.Put(ctx, fmt.Sprintf("%s%05d", dir, i), value); err != nil {
				return batchOp{}, err
			}
		}
		return batchOp{}, nil
	}); err != nil {
		emit("fragment puts", map[string]interface{}{"err": errText(err)})
		return
	}
	// Both watches take every put before the delete, so that its revision
	// reaches them alone, as a watch that keeps up receives it.
	puts := map[int64]int{}
	deadline := time.Now().Add(60 * time.Second)
	for (puts[1] < fragmentKeys || puts[2] < fragmentKeys) && time.Now().Before(deadline) {
		wr, err := stream.Recv()
		if err != nil {
			emit("fragment recv", map[string]interface{}{"err": errText(err)})
			return
		}
		puts[wr.WatchId] += len(wr.Events)
	}
	del, err := client.Delete(ctx, dir, clientv3.WithPrefix())
	if err != nil {
		emit("fragment delete", map[string]interface{}{"err": errText(err)})
		return
	}
	// Each watch's responses for the delete's revision, in order: events
	// per response and its fragment mark.
	type part struct {
		Events   int  `json:"events"`
		Fragment bool `json:"fragment"`
		Deletes  bool `json:"all_deletes_with_prev"`
	}
	parts := map[int64][]part{}
	got := map[int64]int{}
	deadline = time.Now().Add(60 * time.Second)
	for (got[1] < fragmentKeys || got[2] < fragmentKeys) && time.Now().Before(deadline) {
		wr, err := stream.Recv()
		if err != nil {
			emit("fragment recv", map[string]interface{}{"err": errText(err)})
			return
		}
		if wr.Header.Revision != del.Header.Revision {
			continue
		}
		deletes := true
		for _, ev := range wr.Events {
			deletes = deletes && ev.Type == mvccpb.DELETE && ev.PrevKv != nil &&
				len(ev.PrevKv.Value) == fragmentValue
		}
		parts[wr.WatchId] = append(parts[wr.WatchId], part{len(wr.Events), wr.Fragment, deletes})
		got[wr.WatchId] += len(wr.Events)
	}
	emit("fragment raw watch", map[string]interface{}{"whole": parts[1], "fragmented": parts[2]})

	// clientv3 with WithFragment hands its caller the parts as one response.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := client.Watch(wctx, dir, clientv3.WithPrefix(), clientv3.WithRev(del.Header.Revision),
		clientv3.WithPrevKV(), clientv3.WithFragment())
	select {
	case wr := <-ch:
		emit("fragment clientv3", map[string]interface{}{"events": len(wr.Events),
			"err": errText(wr.Err())})
	case <-time.After(60 * time.Second):
		emit("fragment clientv3", map[string]interface{}{"err": "timed out"})
	}
}

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:2379", "etcd endpoints, comma-separated")
	sections := flag.String("sections", "kv,watch,lease,compact,fragment,batch", "sections to run, in order")
	flag.StringVar(&prefix, "prefix", "/registry/", "key prefix of this run")
	flag.Parse()
	var err error
	client, err = clientv3.New(clientv3.Config{Endpoints: strings.Split(*endpoint, ","),
		DialTimeout: 10 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		os.Exit(2)
	}
	defer client.Close()
	resp, err := client.Get(ctx, "kubeshapes-start")
	if err != nil {
		fmt.Fprintln(os.Stderr, "first read:", err)
		os.Exit(2)
	}
	base = resp.Header.Revision
	for _, s := range strings.Split(*sections, ",") {
		switch s {
		case "kv":
			sectionKV()
		case "watch":
			sectionWatch()
		case "lease":
			sectionLease()
		case "batch":
			sectionBatch()
		case "compact":
			sectionCompact()
		case "fragment":
			sectionFragment()
		default:
			fmt.Fprintln(os.Stderr, "unknown section", s)
			os.Exit(2)
		}
	}
}
