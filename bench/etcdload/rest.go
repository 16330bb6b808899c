// rest-churn mode (see main.go's list of modes): k0smotron's churn load
// through the Kubernetes REST face (issue 39, item 3), as churn drives the
// etcd face, with Go's standard library for HTTPS and JSON.
//
// The writers create, update and delete ConfigMaps among their own names in
// namespace "churn", with kube's preconditions (an update carries the
// resourceVersion it read; a delete, preconditions.resourceVersion); every
// update changes the data, since kube answers an update that changes
// nothing with the same resourceVersion and no event. The watches (each on
// its own HTTPS connection, from the namespace's list resourceVersion; with
// a watch URL, every other one on that server, a second instance on the
// same database) take every event. A delete's answer is a Status without
// the deletion's resourceVersion, so events are matched to writes per name
// and in order: a name's events must be exactly its writes (ADDED for a
// create, MODIFIED for an update with the resourceVersion it answered,
// DELETED for a delete), and resourceVersions must grow along each watch.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const restNS = "churn"

type restWrite struct {
	kind string // ADDED, MODIFIED, DELETED
	rv   string // "" for a delete
	sent time.Time
}

type restEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

type restDelivery struct {
	kind, name, rv string
	at             time.Time
}

var (
	restBase  string
	restToken string
)

func restRequest(c *http.Client, method, path string, body interface{}) (int, map[string]interface{}, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, restBase+path, rd)
	req.Header.Set("Authorization", "Bearer "+restToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]interface{}
	err = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, err
}

func rvOf(obj map[string]interface{}) string {
	md, _ := obj["metadata"].(map[string]interface{})
	rv, _ := md["resourceVersion"].(string)
	return rv
}

func restFail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(2)
}

// restTarget: the REST API the writes and every even watch go to, and
// optionally another instance for every odd watch.
type restTarget struct {
	url, cacert, token, watchURL, watchCA string
}

func restChurn(t restTarget, writers int, perSecond float64, seconds, keys, size, watchers int) result {
	restBase, restToken = t.url, t.token
	tlsFor := func(path string) *tls.Config {
		pem, err := os.ReadFile(path)
		if err != nil {
			restFail("cacert: %v", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		return &tls.Config{RootCAs: pool}
	}
	tr := &http.Transport{TLSClientConfig: tlsFor(t.cacert), MaxIdleConnsPerHost: writers * 2}
	watchTLS, watchBase := tr.TLSClientConfig, restBase
	if t.watchURL != "" {
		watchTLS, watchBase = tlsFor(t.watchCA), t.watchURL
	}
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}

	// the server may still be starting: its namespace is the first write
	var code int
	var err error
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		code, _, err = restRequest(client, "POST", "/api/v1/namespaces",
			map[string]interface{}{"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]string{"name": restNS}})
		if err == nil && (code == 201 || code == 409) {
			break
		}
		if time.Since(start) > 60*time.Second {
			restFail("namespace: %d %v", code, err)
		}
	}
	code, list, err := restRequest(client, "GET", "/api/v1/namespaces/"+restNS+"/configmaps?limit=1", nil)
	if err != nil || code != 200 {
		restFail("list: %d %v", code, err)
	}
	from := rvOf(list)

	got := make([][]restDelivery, watchers)
	counts := make([]int64, watchers)
	var wg sync.WaitGroup
	started := make(chan error, watchers)
	var bodies []io.Closer
	var bodiesMu sync.Mutex
	for w := 0; w < watchers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// a transport of its own: one connection per watch, as informers
			// in different processes have
			cfg, server := tr.TLSClientConfig, restBase
			if w%2 == 1 {
				cfg, server = watchTLS, watchBase
			}
			wc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
			req, _ := http.NewRequest("GET", fmt.Sprintf(
				"%s/api/v1/namespaces/%s/configmaps?watch=1&resourceVersion=%s", server, restNS, from), nil)
			req.Header.Set("Authorization", "Bearer "+restToken)
			resp, err := wc.Do(req)
			if err == nil && resp.StatusCode != 200 {
				err = fmt.Errorf("watch: HTTP %d", resp.StatusCode)
			}
			started <- err
			if err != nil {
				return
			}
			bodiesMu.Lock()
			bodies = append(bodies, resp.Body)
			bodiesMu.Unlock()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				now := time.Now()
				var ev restEvent
				if json.Unmarshal(sc.Bytes(), &ev) != nil {
					continue
				}
				got[w] = append(got[w], restDelivery{ev.Type, ev.Object.Metadata.Name,
					ev.Object.Metadata.ResourceVersion, now})
				atomic.AddInt64(&counts[w], 1)
			}
		}(w)
	}
	for w := 0; w < watchers; w++ {
		if err := <-started; err != nil {
			restFail("%v", err)
		}
	}

	value := strings.Repeat("x", size)
	run := time.Now().UnixNano() % 1000000000 // names of this run's own
	tokens := pacedTokens(perSecond, writers, time.Now().Add(time.Duration(seconds)*time.Second))
	var mu sync.Mutex
	writes := map[string][]restWrite{}
	var writeLat []time.Duration
	failed, total := 0, 0
	var wwg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wwg.Add(1)
		go func(g int) {
			defer wwg.Done()
			rv := make([]string, keys) // each name's resourceVersion; "": absent
			mine := map[string][]restWrite{}
			var lat []time.Duration
			bad, n := 0, 0
			for i := 0; ; i++ {
				if _, ok := <-tokens; !ok {
					break
				}
				k := (i * 7919) % keys
				name := fmt.Sprintf("r%d-w%03d-k%05d", run, g, k)
				path := "/api/v1/namespaces/" + restNS + "/configmaps"
				cm := map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]interface{}{"name": name},
					// n changes every write: an update that changes nothing is no
					// write at all in kube (same resourceVersion, no event)
					"data": map[string]string{"v": value, "n": fmt.Sprint(i)}}
				var code, want int
				var out map[string]interface{}
				var err error
				var kind string
				t0 := time.Now()
				switch {
				case rv[k] == "":
					kind, want = "ADDED", 201
					code, out, err = restRequest(client, "POST", path, cm)
				case i%3 == 2:
					kind, want = "DELETED", 200
					code, out, err = restRequest(client, "DELETE", path+"/"+name,
						map[string]interface{}{"preconditions": map[string]string{
							"resourceVersion": rv[k]}})
				default:
					kind, want = "MODIFIED", 200
					cm["metadata"].(map[string]interface{})["resourceVersion"] = rv[k]
					code, out, err = restRequest(client, "PUT", path+"/"+name, cm)
				}
				if err != nil || code != want {
					bad++
					continue
				}
				lat = append(lat, time.Since(t0))
				n++
				w := restWrite{kind, "", t0}
				if kind == "DELETED" {
					rv[k] = ""
				} else {
					rv[k] = rvOf(out)
					w.rv = rv[k]
				}
				mine[name] = append(mine[name], w)
			}
			mu.Lock()
			for name, ws := range mine {
				writes[name] = ws
			}
			writeLat = append(writeLat, lat...)
			failed += bad
			total += n
			mu.Unlock()
		}(g)
	}
	wwg.Wait()
	awaitDeliveries(counts, total)
	bodiesMu.Lock()
	for _, b := range bodies {
		b.Close()
	}
	bodiesMu.Unlock()
	wg.Wait()

	var lags []time.Duration
	complete, invented, delivered := 0, 0, 0
	for w := range got {
		ok := len(got[w]) == total
		delivered += len(got[w])
		next := map[string]int{}
		last := int64(-1)
		for _, d := range got[w] {
			var rv int64
			fmt.Sscan(d.rv, &rv)
			if rv <= last {
				ok = false
			}
			last = rv
			ws := writes[d.name]
			i := next[d.name]
			if i >= len(ws) || ws[i].kind != d.kind || (ws[i].rv != "" && ws[i].rv != d.rv) {
				invented++
				ok = false
				continue
			}
			next[d.name] = i + 1
			lags = append(lags, d.at.Sub(ws[i].sent))
		}
		if ok {
			complete++
		}
	}
	p50, p99, max := percentiles(lags)
	wp50, wp99, _ := percentiles(writeLat)
	return result{"mode": "rest-churn", "writers": writers,
		"rate": perSecond, "watchers": watchers, "writes": total, "write_errors": failed,
		"expected": total * watchers, "delivered": delivered, "complete_watchers": complete,
		"invented": invented, "lag_p50_ms": p50, "lag_p99_ms": p99, "lag_max_ms": max,
		"write_p50_ms": wp50, "write_p99_ms": wp99}
}
