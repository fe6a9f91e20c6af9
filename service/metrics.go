package service

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// metrics are the server's counters, written in the Prometheus text
// exposition format by hand: a few counters and histograms do not need a
// client library.
type metrics struct {
	mu       sync.Mutex
	requests map[[2]string]uint64 // route, status
	answers  map[string]uint64    // verdict or problem
	errors   map[int]uint64       // exit code of a ledger failure
	latency  map[string]*histogram
	batches  *histogram // group commit sizes, when the ledger reports them
	inFlight int64
}

// latencyBuckets are the request latency histogram's upper bounds, in
// seconds.
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// batchBuckets are the group commit size histogram's upper bounds.
var batchBuckets = []float64{1, 2, 4, 8, 16, 32, 64}

type histogram struct {
	bounds []float64
	counts []uint64 // per bound, not cumulative; one more for +Inf
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v)
	h.counts[i]++
	h.sum += v
	h.n++
}

func (h *histogram) write(w io.Writer, name, labels string) {
	var cum uint64
	sep := ""
	if labels != "" {
		sep = ","
	}
	for i, b := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(w, "%s_bucket{%s%sle=%q} %d\n", name, labels, sep, strconv.FormatFloat(b, 'g', -1, 64), cum)
	}
	cum += h.counts[len(h.bounds)]
	fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n", name, labels, sep, cum)
	if labels != "" {
		labels = "{" + labels + "}"
	}
	fmt.Fprintf(w, "%s_sum%s %s\n%s_count%s %d\n", name, labels, strconv.FormatFloat(h.sum, 'g', -1, 64), name, labels, h.n)
}

func newMetrics() *metrics {
	return &metrics{requests: map[[2]string]uint64{}, answers: map[string]uint64{}, errors: map[int]uint64{},
		latency: map[string]*histogram{}, batches: newHistogram(batchBuckets)}
}

// statusWriter remembers the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the status and sends it.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200 and sends b.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// instrument counts a route's requests by status and times them.
func (m *metrics) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.mu.Lock()
		m.inFlight++
		m.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			d := time.Since(start).Seconds()
			m.mu.Lock()
			defer m.mu.Unlock()
			m.inFlight--
			m.requests[[2]string{route, strconv.Itoa(sw.status)}]++
			h, ok := m.latency[route]
			if !ok {
				h = newHistogram(latencyBuckets)
				m.latency[route] = h
			}
			h.observe(d)
		}()
		h.ServeHTTP(sw, r)
	})
}

// answer counts an answer by its verdict or problem.
func (m *metrics) answer(what string) {
	what = strings.TrimPrefix(what, "urn:tollgate:problem:")
	m.mu.Lock()
	m.answers[what]++
	m.mu.Unlock()
}

// ledgerError counts a call the ledger failed, by exit code.
func (m *metrics) ledgerError(code int) {
	m.mu.Lock()
	m.errors[code]++
	m.mu.Unlock()
}

// batch counts a group commit of n calls.
func (m *metrics) batch(n int) {
	m.mu.Lock()
	m.batches.observe(float64(n))
	m.mu.Unlock()
}

// BatchObserver is what a ledger offers when it can say how many calls
// each group commit held; the server feeds them to /metrics.
type BatchObserver interface {
	ObserveBatches(func(size int))
}

func (s *Server) handleMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.metrics.write(w)
}

func (m *metrics) write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintln(w, "# HELP tollgate_http_requests_total Requests served, by route and status.")
	fmt.Fprintln(w, "# TYPE tollgate_http_requests_total counter")
	reqs := slices.SortedFunc(maps.Keys(m.requests), func(a, b [2]string) int { return strings.Compare(a[0]+" "+a[1], b[0]+" "+b[1]) })
	for _, k := range reqs {
		fmt.Fprintf(w, "tollgate_http_requests_total{route=%q,status=%q} %d\n", k[0], k[1], m.requests[k])
	}
	fmt.Fprintln(w, "# HELP tollgate_http_in_flight Requests being served now.")
	fmt.Fprintln(w, "# TYPE tollgate_http_in_flight gauge")
	fmt.Fprintf(w, "tollgate_http_in_flight %d\n", m.inFlight)
	fmt.Fprintln(w, "# HELP tollgate_answers_total Answers, by verdict (guard), outcome reported, or problem.")
	fmt.Fprintln(w, "# TYPE tollgate_answers_total counter")
	for _, k := range slices.Sorted(maps.Keys(m.answers)) {
		fmt.Fprintf(w, "tollgate_answers_total{answer=%q} %d\n", k, m.answers[k])
	}
	fmt.Fprintln(w, "# HELP tollgate_ledger_errors_total Calls the ledger failed (unavailable, commit unknown, other), by exit code.")
	fmt.Fprintln(w, "# TYPE tollgate_ledger_errors_total counter")
	for _, k := range slices.Sorted(maps.Keys(m.errors)) {
		fmt.Fprintf(w, "tollgate_ledger_errors_total{exit_code=\"%d\"} %d\n", k, m.errors[k])
	}
	fmt.Fprintln(w, "# HELP tollgate_http_request_duration_seconds Time to answer a request, by route.")
	fmt.Fprintln(w, "# TYPE tollgate_http_request_duration_seconds histogram")
	for _, k := range slices.Sorted(maps.Keys(m.latency)) {
		m.latency[k].write(w, "tollgate_http_request_duration_seconds", fmt.Sprintf("route=%q", k))
	}
	fmt.Fprintln(w, "# HELP tollgate_group_commit_size Calls committed together in one transaction.")
	fmt.Fprintln(w, "# TYPE tollgate_group_commit_size histogram")
	m.batches.write(w, "tollgate_group_commit_size", "")
}
