// rest-pages mode (see main.go's list of modes): one LIST of ConfigMaps
// through the Kubernetes REST face over HTTPS, paged as kube's clients page
// (?limit=L, then the continue token of each reply) or unpaged, as
// bench/paged_lists.py compares it with etcd's Range (pages mode) driven by
// the Go clientv3: a Go client on both sides, so neither figure is a
// Python client's speed. The connection (TLS with the admin's client
// certificate) is made and used before the clock starts. Each reply is
// streamed through one 1 MiB buffer, as a client decoding it as it arrives
// would: the continue token is read from its head (the list's metadata
// comes before the items), and every object's name is picked out as the
// bytes pass (writebench's names, c<k>-<client>-<seq>: in JSON the
// "name" member, in protobuf ObjectMeta's field 1, its length checked; the
// data values are letters only), so memory stays one buffer however large
// the list. After the clock: every name once.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

// restListTarget: the server and the list to read.
type restListTarget struct {
	url, cacert, cert, key, path, accept, exactRV string
}

const (
	readBuf   = 1 << 20
	nameSpan  = 64   // longer than any name with what marks it
	headBytes = 4096 // the list's metadata comes first, within this
)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// nameLen: the length of a writebench name at the start of b (c, digits,
// -, digits, -, digits), or 0.
func nameLen(b []byte) int {
	if len(b) == 0 || b[0] != 'c' {
		return 0
	}
	i, groups := 1, 0
	for groups < 3 {
		j := i
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		if j == i {
			return 0
		}
		i, groups = j, groups+1
		if groups < 3 {
			if i >= len(b) || b[i] != '-' {
				return 0
			}
			i++
		}
	}
	return i
}

var jsonName = []byte(`"name":"`)

// scanNames appends the names in b that start before limit.
func scanNames(b []byte, limit int, protobuf bool, names []string) []string {
	for i := 0; i < limit; {
		var at, n int
		if protobuf {
			j := bytes.IndexByte(b[i:limit], '\n')
			if j < 0 {
				break
			}
			at = i + j + 2
			i = i + j + 1
			if at >= len(b) {
				continue
			}
			want := int(b[at-1])
			if n = nameLen(b[at:]); n == 0 || n != want {
				continue
			}
		} else {
			j := bytes.Index(b[i:], jsonName)
			if j < 0 || i+j >= limit {
				break
			}
			at = i + j + len(jsonName)
			i = at
			if n = nameLen(b[at:]); n == 0 || at+n >= len(b) || b[at+n] != '"' {
				continue
			}
		}
		names = append(names, string(b[at:at+n]))
	}
	return names
}

// pbField finds field num (length-delimited) in protobuf message b.
func pbField(b []byte, num uint64) ([]byte, bool) {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, false
		}
		b = b[n:]
		var size uint64
		switch tag & 7 {
		case 0:
			_, n = binary.Uvarint(b)
			size = 0
		case 2:
			size, n = binary.Uvarint(b)
		default:
			return nil, false
		}
		if n <= 0 || uint64(len(b)-n) < size {
			if tag>>3 == num && tag&7 == 2 && n > 0 {
				return b[n:], true // cut off at the head's end: the field's start
			}
			return nil, false
		}
		if tag>>3 == num && tag&7 == 2 {
			return b[n : n+int(size)], true
		}
		b = b[n+int(size):]
	}
	return nil, false
}

var continueJSON = []byte(`"continue":"`)

// continueToken reads the token from a reply's head.
func continueToken(head []byte, protobuf bool) string {
	if !protobuf {
		i := bytes.Index(head, continueJSON)
		if i < 0 {
			return ""
		}
		rest := head[i+len(continueJSON):]
		j := bytes.IndexByte(rest, '"')
		if j < 0 {
			restFail("rest-pages: a continue token past the reply's head")
		}
		return string(rest[:j])
	}
	if !bytes.HasPrefix(head, []byte("k8s\x00")) {
		restFail("rest-pages: not a protobuf envelope")
	}
	raw, ok := pbField(head[4:], 2) // runtime.Unknown.raw
	if !ok {
		return ""
	}
	if len(raw) == 0 || raw[0] != 0x0a { // the list's metadata comes first
		return ""
	}
	meta, ok := pbField(raw, 1)
	if !ok {
		return ""
	}
	token, ok := pbField(meta, 3)
	if !ok {
		return ""
	}
	return string(token)
}

func restPages(t restListTarget, limit int64) result {
	pem, err := os.ReadFile(t.cacert)
	if err != nil {
		restFail("rest-pages: cacert: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cert, err := tls.LoadX509KeyPair(t.cert, t.key)
	if err != nil {
		restFail("rest-pages: client certificate: %v", err)
	}
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
		MaxIdleConnsPerHost: 1, DisableCompression: true}}
	protobuf := t.accept != "application/json"
	buf := make([]byte, readBuf)
	// get reads one reply through buf: its head, bytes and names.
	get := func(q url.Values, names []string) ([]byte, int, []string) {
		u := t.url + t.path
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Accept", t.accept)
		resp, err := client.Do(req)
		if err != nil {
			restFail("rest-pages: %v", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
			restFail("rest-pages: GET %s: HTTP %d %s", u, resp.StatusCode, b)
		}
		var head []byte
		total, tail := 0, 0
		for {
			n, err := io.ReadFull(resp.Body, buf[tail:])
			end := tail + n
			total += n
			if len(head) < headBytes {
				k := headBytes - len(head)
				if k > n {
					k = n
				}
				head = append(head, buf[tail:tail+k]...)
			}
			done := err == io.EOF || err == io.ErrUnexpectedEOF
			if err != nil && !done {
				restFail("rest-pages: reading: %v", err)
			}
			limit := end - nameSpan
			if done {
				limit = end
			}
			names = scanNames(buf[:end], limit, protobuf, names)
			if done {
				return head, total, names
			}
			tail = copy(buf, buf[end-nameSpan:end])
		}
	}
	get(url.Values{"limit": {"1"}}, nil) // the connection, before the clock
	var names []string
	pages, bytesRead := 0, 0
	token := ""
	start := time.Now()
	for {
		q := url.Values{}
		if limit > 0 {
			q.Set("limit", strconv.FormatInt(limit, 10))
		}
		if token != "" {
			q.Set("continue", token)
		} else if t.exactRV != "" {
			q.Set("resourceVersion", t.exactRV)
			q.Set("resourceVersionMatch", "Exact")
		}
		var head []byte
		var n int
		head, n, names = get(q, names)
		pages++
		bytesRead += n
		if limit == 0 {
			break
		}
		if token = continueToken(head, protobuf); token == "" {
			break
		}
	}
	elapsed := time.Since(start).Seconds()
	distinct := map[string]bool{}
	for _, n := range names {
		distinct[n] = true
	}
	return result{"mode": "rest-pages", "seconds": elapsed, "pages": pages, "bytes": bytesRead,
		"keys": len(names), "distinct": len(distinct)}
}
