// etcdload drives an etcd v3 endpoint (etcd itself, or sqlkube's etcd face)
// through the real Go clientv3 and prints one JSON line of results, so the
// two can be measured side by side in one run (bench/run_etcd.sh).
//
//	put    -clients N -seconds S -size B: N goroutines put B-byte values to
//	       their own keys back to back over -conns clientv3 clients (gRPC
//	       connections) for S seconds; puts/s and latency percentiles.
//	       With -rate R the puts are paced to R a second in all, handed to
//	       whichever goroutine is free (the load of `etcdctl check perf`),
//	       and the result also names the seconds, from its start (given as
//	       a wall-clock time), in which a put began that took over 200 ms,
//	       and when the slowest of those began: a stall of the whole store
//	       shows as one such second for many puts, to set beside the
//	       server's fdatasync times.
//	watch  -watchers W -streams K -watch-conns C -events E -interval MS -writers N:
//	       W watches on one prefix spread over C clientv3 clients (gRPC
//	       connections) and over K gRPC watch streams (clientv3 shares a
//	       stream between watches of equal context metadata, so each stream
//	       gets its own), then E puts, one every MS ms, issued by N writer
//	       goroutines (one: each put waits for the one before), each
//	       carrying its send time; write-to-event latency percentiles over
//	       every delivery, and the puts' own latency. A watch is complete
//	       when it got all E events, each once, in revision order. After
//	       the watches are created it prints "ready" on stderr and waits
//	       -settle seconds, so the caller can read the server's memory.
//	churn  -writers N -rate R -seconds S -keys K -size B -watchers W -streams K
//	       -watch-conns C [-watch-endpoint E2]: k0smotron's churn load. N
//	       writers, at R operations a second in all, create, update and
//	       delete objects among K keys each (kube-apiserver's shapes: create
//	       as Txn(ModRevision==0 -> Put), update and delete as
//	       Txn(ModRevision==R -> write)), while W watches on the prefix
//	       (spread over C connections and K streams; with -watch-endpoint,
//	       every other connection goes to E2, another instance of the same
//	       store) take every event. Reports write errors (a failed or
//	       refused write: each writer owns its keys, so none should fail),
//	       the events each watch should have got against what it got
//	       (complete: every write, each once, in revision order, with the
//	       right key and type; invented: an event no write made), and the
//	       write-to-event lag over every delivery.
//	rest-churn -url U -cacert F -token T -writers N -rate R -seconds S -keys K
//	       -size B -watchers W [-watch-url U2 -watch-cacert F2]: the churn
//	       load through the Kubernetes REST face over HTTPS (rest.go).
//	bulkput -file F -clients N -conns C: loads the key/value pairs of F
//	       (records of a 4-byte big-endian key length, the key, a 4-byte
//	       value length, the value) as fast as the server takes them: N
//	       goroutines over C connections, each put a Txn of up to 128 puts
//	       (etcd's default --max-txn-ops); keys, bytes, seconds.
//	pages  -prefix P -limit L -reps R: reads every key under P in pages of
//	       L (0: one unpaged Get of the whole prefix, as kube-apiserver
//	       reads a LIST without a limit) as kube-apiserver's etcd3 store
//	       pages a LIST with a limit
//	       (Get(key, WithRange(prefix end), WithLimit(L)), every page after
//	       the first WithRev of the first page's revision, the next from
//	       the last key + "\x00"), R times over one connection made (and
//	       used once) before the clock starts; per pass: seconds, pages,
//	       keys and value bytes.
//	rest-pages -url U -cacert F -cert C -key K -path P -accept A -limit L [-rv R]:
//	       one LIST of P through the Kubernetes REST face over HTTPS with
//	       the client certificate C, paged by L following the continue
//	       tokens (0: unpaged), from resourceVersion R matched Exact when
//	       given (restlist.go); seconds, pages, bytes, the object names
//	       seen and how many distinct.
//
// Built in GOPATH mode (GO111MODULE=off) against Debian's
// golang-etcd-server-dev (clientv3 3.4).
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/clientv3"
	"golang.org/x/time/rate"
	"google.golang.org/grpc/metadata"
)

type result map[string]interface{}

func percentiles(d []time.Duration) (p50, p99, max float64) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	return ms(d[len(d)*50/100]), ms(d[len(d)*99/100]), ms(d[len(d)-1])
}

// pacedTokens hands out perSecond tokens a second in all until deadline,
// then closes the channel; buffer is how many may wait unclaimed. The
// sender stops at the deadline too, so a send never outlives the workers.
func pacedTokens(perSecond float64, buffer int, deadline time.Time) chan struct{} {
	tokens := make(chan struct{}, buffer)
	go func() {
		limiter := rate.NewLimiter(rate.Limit(perSecond), 1)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		for limiter.Wait(ctx) == nil {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
			}
		}
		close(tokens)
	}()
	return tokens
}

// awaitDeliveries gives every watch until 30 s after the last write to
// have counted want events.
func awaitDeliveries(counts []int64, want int) {
	waitUntil := time.Now().Add(30 * time.Second)
	for time.Now().Before(waitUntil) {
		caughtUp := true
		for w := range counts {
			if atomic.LoadInt64(&counts[w]) < int64(want) {
				caughtUp = false
			}
		}
		if caughtUp {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func connect(endpoints string, n int) []*clientv3.Client {
	var cs []*clientv3.Client
	for i := 0; i < n; i++ {
		c, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","),
			DialTimeout: 10 * time.Second, MaxCallSendMsgSize: 4 << 20})
		if err != nil {
			fmt.Fprintln(os.Stderr, "connect:", err)
			os.Exit(2)
		}
		cs = append(cs, c)
	}
	return cs
}

// stallThreshold: a put slower than this marks the second it began in.
const stallThreshold = 200 * time.Millisecond

func put(endpoints string, clients, conns, seconds, size int, perSecond float64) result {
	cs := connect(endpoints, conns)
	value := strings.Repeat("x", size)
	var mu sync.Mutex
	var lat []time.Duration
	stalled := map[int]int{}
	var slowest time.Duration
	var slowestStart time.Time
	var failed int
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	// Paced: one token per put, from a single limiter; otherwise every
	// goroutine goes back to back.
	var tokens chan struct{}
	if perSecond > 0 {
		tokens = pacedTokens(perSecond, clients, deadline)
	}
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c := cs[g%len(cs)]
			var mine []time.Duration
			bad := 0
			for i := 0; time.Now().Before(deadline); i++ {
				if tokens != nil {
					if _, ok := <-tokens; !ok {
						break
					}
				}
				t0 := time.Now()
				_, err := c.Put(context.Background(), fmt.Sprintf("/bench/put/%03d/%08d", g, i), value)
				if err != nil {
					bad++
					continue
				}
				d := time.Since(t0)
				mine = append(mine, d)
				if d > stallThreshold {
					mu.Lock()
					stalled[int(t0.Sub(start).Seconds())]++
					if d > slowest {
						slowest, slowestStart = d, t0
					}
					mu.Unlock()
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			failed += bad
			mu.Unlock()
		}(g)
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	for _, c := range cs {
		c.Close()
	}
	p50, p99, max := percentiles(lat)
	r := result{"mode": "put", "clients": clients, "ok": len(lat), "failed": failed,
		"puts_per_s": float64(len(lat)) / elapsed, "p50_ms": p50, "p99_ms": p99, "max_ms": max}
	if perSecond > 0 {
		marked := []int{}
		for s := range stalled {
			marked = append(marked, s)
		}
		sort.Ints(marked)
		r["rate"] = perSecond
		r["stall_seconds"] = marked
		// wall-clock times, to line these up with other processes' clocks
		r["start_unix_ms"] = start.UnixMilli()
		if !slowestStart.IsZero() {
			r["slowest_stall_start_s"] = slowestStart.Sub(start).Seconds()
		}
	}
	return r
}

func watch(endpoints string, watchers, streams, conns, events, intervalMs, writers, settle int) result {
	cs := connect(endpoints, conns+1)
	watchClients, writer := cs[:conns], cs[conns]
	prefix := fmt.Sprintf("/bench/watch/%d/", time.Now().UnixNano())
	// The revision the watches start after: one put before them.
	first, err := writer.Put(context.Background(), prefix+"start", "0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "put:", err)
		os.Exit(2)
	}
	from := first.Header.Revision + 1
	type got struct {
		lat     []time.Duration
		lastRev int64
		bad     int
	}
	gots := make([]got, watchers)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	created := make(chan struct{}, watchers)
	for w := 0; w < watchers; w++ {
		sctx := metadata.AppendToOutgoingContext(ctx, "sk-stream", strconv.Itoa(w%streams))
		ch := watchClients[w%conns].Watch(clientv3.WithRequireLeader(sctx), prefix, clientv3.WithPrefix(),
			clientv3.WithRev(from), clientv3.WithCreatedNotify())
		wg.Add(1)
		go func(w int, ch clientv3.WatchChan) {
			defer wg.Done()
			g := &gots[w]
			for wr := range ch {
				if wr.Created {
					created <- struct{}{}
					continue
				}
				now := time.Now()
				for _, ev := range wr.Events {
					seq, sent := 0, int64(0)
					fmt.Sscanf(string(ev.Kv.Value), "%d %d", &seq, &sent)
					if ev.Kv.ModRevision <= g.lastRev {
						g.bad++
					}
					g.lastRev = ev.Kv.ModRevision
					g.lat = append(g.lat, now.Sub(time.Unix(0, sent)))
				}
				if len(g.lat) >= events {
					return
				}
			}
		}(w, ch)
	}
	for w := 0; w < watchers; w++ {
		select {
		case <-created:
		case <-time.After(60 * time.Second):
			fmt.Fprintln(os.Stderr, "watches not created in 60 s")
			os.Exit(2)
		}
	}
	fmt.Fprintln(os.Stderr, "ready")
	time.Sleep(time.Duration(settle) * time.Second)
	// The ticker hands each put to a free writer; with every writer busy
	// the tick waits, so the rate falls short rather than the puts pile up.
	putLat := make([]time.Duration, events)
	seqs := make(chan int)
	var wwg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for i := range seqs {
				t0 := time.Now()
				if _, err := writer.Put(context.Background(), fmt.Sprintf("%s%06d", prefix, i),
					fmt.Sprintf("%d %d", i, t0.UnixNano())); err != nil {
					fmt.Fprintln(os.Stderr, "put:", err)
					os.Exit(2)
				}
				putLat[i-1] = time.Since(t0)
			}
		}()
	}
	writeStart := time.Now()
	tick := time.NewTicker(time.Duration(intervalMs) * time.Millisecond)
	for i := 1; i <= events; i++ {
		<-tick.C
		seqs <- i
	}
	close(seqs)
	wwg.Wait()
	writeSeconds := time.Since(writeStart).Seconds()
	tick.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
	}
	cancel()
	<-done // the watch goroutines end with their channels; gots is theirs until then
	var all []time.Duration
	complete, bad := 0, 0
	for _, g := range gots {
		all = append(all, g.lat...)
		if len(g.lat) == events && g.bad == 0 {
			complete++
		}
		bad += g.bad
	}
	p50, p99, max := percentiles(all)
	pp50, pp99, _ := percentiles(putLat)
	for _, c := range cs {
		c.Close()
	}
	return result{"mode": "watch", "watchers": watchers, "streams": streams, "conns": conns,
		"events": events, "writers": writers, "puts_per_s": float64(events) / writeSeconds,
		"deliveries": len(all), "complete_watchers": complete, "out_of_order": bad,
		"p50_ms": p50, "p99_ms": p99, "max_ms": max, "put_p50_ms": pp50, "put_p99_ms": pp99}
}

// churnWrite is one acknowledged write: what every watch must see.
type churnWrite struct {
	rev  int64
	key  string
	del  bool
	sent time.Time
}

func churn(endpoints, watchEndpoint string, writers int, perSecond float64, seconds, keys, size,
	watchers, streams, conns int) result {
	writeClient := connect(endpoints, 1)[0]
	var watchClients []*clientv3.Client
	for i := 0; i < conns; i++ {
		ep := endpoints
		if watchEndpoint != "" && i%2 == 1 {
			ep = watchEndpoint
		}
		watchClients = append(watchClients, connect(ep, 1)[0])
	}
	prefix := fmt.Sprintf("/bench/churn/%d/", time.Now().UnixNano())
	first, err := writeClient.Put(context.Background(), prefix+"!start", "0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "put:", err)
		os.Exit(2)
	}
	from := first.Header.Revision + 1
	type delivery struct {
		rev int64
		key string
		del bool
		at  time.Time
	}
	got := make([][]delivery, watchers)
	counts := make([]int64, watchers) // len(got[w]), read while the watches run
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	created := make(chan struct{}, watchers)
	for w := 0; w < watchers; w++ {
		sctx := metadata.AppendToOutgoingContext(ctx, "sk-stream", strconv.Itoa(w%streams))
		ch := watchClients[w%conns].Watch(clientv3.WithRequireLeader(sctx), prefix,
			clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithCreatedNotify())
		wg.Add(1)
		go func(w int, ch clientv3.WatchChan) {
			defer wg.Done()
			for wr := range ch {
				if wr.Created {
					created <- struct{}{}
					continue
				}
				now := time.Now()
				for _, ev := range wr.Events {
					got[w] = append(got[w], delivery{ev.Kv.ModRevision, string(ev.Kv.Key),
						ev.Type == clientv3.EventTypeDelete, now})
				}
				atomic.AddInt64(&counts[w], int64(len(wr.Events)))
			}
		}(w, ch)
	}
	for w := 0; w < watchers; w++ {
		select {
		case <-created:
		case <-time.After(60 * time.Second):
			fmt.Fprintln(os.Stderr, "watches not created in 60 s")
			os.Exit(2)
		}
	}
	value := strings.Repeat("x", size)
	tokens := pacedTokens(perSecond, writers, time.Now().Add(time.Duration(seconds)*time.Second))
	var mu sync.Mutex
	var writes []churnWrite
	var writeLat []time.Duration
	failed, refused := 0, 0
	var wwg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wwg.Add(1)
		go func(g int) {
			defer wwg.Done()
			mod := make([]int64, keys) // each key's mod revision; 0: absent
			var mine []churnWrite
			var lat []time.Duration
			bad, no := 0, 0
			for i := 0; ; i++ {
				if _, ok := <-tokens; !ok {
					break
				}
				k := (i * 7919) % keys
				key := fmt.Sprintf("%sw%03d/k%05d", prefix, g, k)
				cmp := clientv3.Compare(clientv3.ModRevision(key), "=", mod[k])
				var op clientv3.Op
				del := mod[k] != 0 && i%3 == 2
				if del {
					op = clientv3.OpDelete(key)
				} else {
					op = clientv3.OpPut(key, value)
				}
				t0 := time.Now()
				resp, err := writeClient.Txn(context.Background()).If(cmp).Then(op).Commit()
				if err != nil {
					bad++
					continue
				}
				if !resp.Succeeded {
					no++
					continue
				}
				lat = append(lat, time.Since(t0))
				rev := resp.Header.Revision
				if del {
					mod[k] = 0
				} else {
					mod[k] = rev
				}
				mine = append(mine, churnWrite{rev, key, del, t0})
			}
			mu.Lock()
			writes = append(writes, mine...)
			writeLat = append(writeLat, lat...)
			failed += bad
			refused += no
			mu.Unlock()
		}(g)
	}
	wwg.Wait()
	sort.Slice(writes, func(i, j int) bool { return writes[i].rev < writes[j].rev })
	byRev := map[int64]churnWrite{}
	for _, wr := range writes {
		byRev[wr.rev] = wr
	}
	awaitDeliveries(counts, len(writes))
	cancel()
	wg.Wait()
	var lags []time.Duration
	complete, invented, missing, delivered := 0, 0, 0, 0
	for w := range got {
		ok := len(got[w]) == len(writes)
		delivered += len(got[w])
		for i, d := range got[w] {
			wr, known := byRev[d.rev]
			if !known || wr.key != d.key || wr.del != d.del {
				invented++
				ok = false
				continue
			}
			if i >= len(writes) || writes[i].rev != d.rev {
				ok = false
			}
			lags = append(lags, d.at.Sub(wr.sent))
		}
		if len(got[w]) < len(writes) {
			missing += len(writes) - len(got[w])
		}
		if ok {
			complete++
		}
	}
	p50, p99, max := percentiles(lags)
	wp50, wp99, _ := percentiles(writeLat)
	writeClient.Close()
	for _, c := range watchClients {
		c.Close()
	}
	return result{"mode": "churn", "writers": writers, "rate": perSecond, "watchers": watchers,
		"writes": len(writes), "write_errors": failed, "writes_refused": refused,
		"expected": len(writes) * watchers, "delivered": delivered,
		"complete_watchers": complete, "invented": invented, "missing": missing,
		"lag_p50_ms": p50, "lag_p99_ms": p99, "lag_max_ms": max,
		"write_p50_ms": wp50, "write_p99_ms": wp99}
}

// txnOps is the most puts one Txn may carry under etcd's default
// --max-txn-ops.
const txnOps = 128

func bulkput(endpoints, file string, clients, conns int) result {
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bulkput:", err)
		os.Exit(2)
	}
	defer f.Close()
	in := bufio.NewReaderSize(f, 1<<20)
	readField := func() ([]byte, error) {
		var n uint32
		if err := binary.Read(in, binary.BigEndian, &n); err != nil {
			return nil, err
		}
		b := make([]byte, n)
		_, err := io.ReadFull(in, b)
		return b, err
	}
	var batches [][]clientv3.Op
	var batch []clientv3.Op
	keys, bytes := 0, 0
	for {
		k, err := readField()
		if err == io.EOF {
			break
		}
		v, err2 := readField()
		if err != nil || err2 != nil {
			fmt.Fprintln(os.Stderr, "bulkput: truncated file")
			os.Exit(2)
		}
		batch = append(batch, clientv3.OpPut(string(k), string(v)))
		keys++
		bytes += len(k) + len(v)
		if len(batch) == txnOps {
			batches = append(batches, batch)
			batch = nil
		}
	}
	if len(batch) > 0 {
		batches = append(batches, batch)
	}
	cs := connect(endpoints, conns)
	work := make(chan []clientv3.Op)
	var failed int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func(c *clientv3.Client) {
			defer wg.Done()
			for ops := range work {
				if _, err := c.Txn(context.Background()).Then(ops...).Commit(); err != nil {
					fmt.Fprintln(os.Stderr, "bulkput:", err)
					atomic.AddInt64(&failed, int64(len(ops)))
				}
			}
		}(cs[g%len(cs)])
	}
	for _, b := range batches {
		work <- b
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	for _, c := range cs {
		c.Close()
	}
	return result{"mode": "bulkput", "keys": keys, "bytes": bytes, "failed": failed,
		"seconds": elapsed}
}

func pages(endpoints, prefix string, limit int64, reps int) result {
	c := connect(endpoints, 1)[0]
	defer c.Close()
	end := clientv3.GetPrefixRangeEnd(prefix)
	// The connection is up and used before any pass is timed, as the
	// REST client's keep-alive connection is.
	if _, err := c.Get(context.Background(), prefix, clientv3.WithRange(end),
		clientv3.WithCountOnly()); err != nil {
		fmt.Fprintln(os.Stderr, "pages:", err)
		os.Exit(2)
	}
	var passes []result
	for r := 0; r < reps; r++ {
		opts := []clientv3.OpOption{clientv3.WithRange(end)}
		if limit > 0 {
			opts = append(opts, clientv3.WithLimit(limit))
		}
		key, rev := prefix, int64(0)
		n, bytes, pageCount := 0, 0, 0
		start := time.Now()
		for {
			resp, err := c.Get(context.Background(), key, opts...)
			if err != nil {
				fmt.Fprintln(os.Stderr, "pages:", err)
				os.Exit(2)
			}
			pageCount++
			for _, kv := range resp.Kvs {
				n++
				bytes += len(kv.Value)
			}
			if !resp.More || len(resp.Kvs) == 0 {
				break
			}
			if rev == 0 {
				rev = resp.Header.Revision
				opts = append(opts, clientv3.WithRev(rev))
			}
			key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
		passes = append(passes, result{"seconds": time.Since(start).Seconds(), "pages": pageCount,
			"keys": n, "value_bytes": bytes})
	}
	return result{"mode": "pages", "limit": limit, "passes": passes}
}

func main() {
	endpoints := flag.String("endpoint", "127.0.0.1:2379", "endpoints, comma-separated")
	mode := flag.String("mode", "put", "put, watch, churn, rest-churn, bulkput, pages or rest-pages")
	clients := flag.Int("clients", 32, "put: concurrent writers")
	conns := flag.Int("conns", 8, "put: gRPC connections the writers share")
	seconds := flag.Int("seconds", 10, "put: duration")
	size := flag.Int("size", 1024, "put: value bytes")
	perSecond := flag.Float64("rate", 0, "put: puts a second in all (0: back to back)")
	watchers := flag.Int("watchers", 1000, "watch: watches")
	streams := flag.Int("streams", 1, "watch: gRPC watch streams they are spread over")
	events := flag.Int("events", 200, "watch: puts to deliver")
	interval := flag.Int("interval", 10, "watch: ms between puts")
	settle := flag.Int("settle", 2, "watch: seconds between creating the watches and writing")
	watchConns := flag.Int("watch-conns", 1, "watch: gRPC connections the watches are spread over")
	writers := flag.Int("writers", 1, "watch, churn: goroutines issuing the writes")
	keys := flag.Int("keys", 100, "churn: keys per writer")
	watchEndpoint := flag.String("watch-endpoint", "", "churn: every other watch connection's endpoint")
	file := flag.String("file", "", "bulkput: the key/value records to load")
	prefix := flag.String("prefix", "", "pages: the key prefix to read")
	limit := flag.Int64("limit", 500, "pages: keys per page (0: one unpaged Get)")
	reps := flag.Int("reps", 1, "pages: passes over the prefix")
	restURL := flag.String("url", "", "rest-churn: the Kubernetes API's https:// URL")
	cacert := flag.String("cacert", "", "rest-churn: its CA (PEM)")
	token := flag.String("token", "", "rest-churn: a bearer token")
	watchURL := flag.String("watch-url", "", "rest-churn: every other watch's server")
	watchCA := flag.String("watch-cacert", "", "rest-churn: that server's CA (PEM)")
	certFile := flag.String("cert", "", "rest-pages: the client certificate (PEM)")
	keyFile := flag.String("key", "", "rest-pages: its key (PEM)")
	path := flag.String("path", "", "rest-pages: the list's path")
	accept := flag.String("accept", "application/json", "rest-pages: the Accept header")
	exactRV := flag.String("rv", "", "rest-pages: list at this resourceVersion, matched Exact")
	flag.Parse()
	var r result
	switch *mode {
	case "put":
		r = put(*endpoints, *clients, *conns, *seconds, *size, *perSecond)
	case "watch":
		if *watchConns < 1 || *writers < 1 {
			fmt.Fprintln(os.Stderr, "-watch-conns and -writers must be at least 1")
			os.Exit(2)
		}
		r = watch(*endpoints, *watchers, *streams, *watchConns, *events, *interval, *writers, *settle)
	case "churn":
		if *watchConns < 1 || *writers < 1 || *perSecond <= 0 || *keys < 1 {
			fmt.Fprintln(os.Stderr, "churn needs -watch-conns, -writers, -keys >= 1 and -rate > 0")
			os.Exit(2)
		}
		r = churn(*endpoints, *watchEndpoint, *writers, *perSecond, *seconds, *keys, *size,
			*watchers, *streams, *watchConns)
	case "rest-churn":
		if *restURL == "" || *cacert == "" || *writers < 1 || *perSecond <= 0 || *keys < 1 {
			fmt.Fprintln(os.Stderr, "rest-churn needs -url, -cacert, -writers, -keys >= 1 and -rate > 0")
			os.Exit(2)
		}
		r = restChurn(restTarget{*restURL, *cacert, *token, *watchURL, *watchCA}, *writers,
			*perSecond, *seconds, *keys, *size, *watchers)
	case "bulkput":
		if *file == "" || *clients < 1 || *conns < 1 {
			fmt.Fprintln(os.Stderr, "bulkput needs -file, -clients and -conns >= 1")
			os.Exit(2)
		}
		r = bulkput(*endpoints, *file, *clients, *conns)
	case "pages":
		if *prefix == "" || *limit < 0 || *reps < 1 {
			fmt.Fprintln(os.Stderr, "pages needs -prefix, -limit >= 0 and -reps >= 1")
			os.Exit(2)
		}
		r = pages(*endpoints, *prefix, *limit, *reps)
	case "rest-pages":
		if *restURL == "" || *cacert == "" || *certFile == "" || *keyFile == "" || *path == "" ||
			*limit < 0 {
			fmt.Fprintln(os.Stderr, "rest-pages needs -url, -cacert, -cert, -key, -path and -limit >= 0")
			os.Exit(2)
		}
		r = restPages(restListTarget{*restURL, *cacert, *certFile, *keyFile, *path, *accept,
			*exactRV}, *limit)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", *mode)
		os.Exit(2)
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}
