package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is virtual time: After advances it by d and fires at once, so
// a delivery that backs off for minutes runs in microseconds and the waits
// it asked for are recorded.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waits = append(c.waits, d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// memSource holds a ledger's events in memory.
type memSource struct {
	mu     sync.Mutex
	events []Event
}

func (s *memSource) add(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Seq = int64(len(s.events) + 1)
	s.events = append(s.events, e)
}

func (s *memSource) After(_ context.Context, pos int64, limit int) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for _, e := range s.events {
		if e.Seq > pos && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

// memCursor is the shared cursor with leases judged on the given clock.
type memCursor struct {
	mu    sync.Mutex
	clock Clock
	rows  map[string]*cursorRow
}

type cursorRow struct {
	pos    int64
	holder string
	until  time.Time
}

func newCursor(c Clock) *memCursor { return &memCursor{clock: c, rows: map[string]*cursorRow{}} }

func (c *memCursor) Claim(_ context.Context, dest, holder string, until time.Time) (int64, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rows[dest]
	if r == nil {
		r = &cursorRow{}
		c.rows[dest] = r
	}
	if r.holder != "" && r.holder != holder && c.clock.Now().Before(r.until) {
		return 0, false, nil
	}
	r.holder, r.until = holder, until
	return r.pos, true, nil
}

func (c *memCursor) Advance(_ context.Context, dest, holder string, pos int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rows[dest]
	if r == nil || r.holder != holder {
		return ErrLeaseLost
	}
	r.pos = pos
	return nil
}

func (c *memCursor) pos(dest string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.rows[dest]; r != nil {
		return r.pos
	}
	return 0
}

var secret = []byte("0123456789abcdef0123456789abcdef-test")

// receiver records the deliveries it accepts, checking each one's
// signature, and refuses the first `fail` attempts with 503.
type receiver struct {
	t        *testing.T
	mu       sync.Mutex
	fail     int
	down     bool     // drop every connection unanswered, as a host that is down
	attempts []string // delivery ids of every attempt, accepted or not
	accepted []wireEvent
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	down := r.down
	r.mu.Unlock()
	if down {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	body, _ := io.ReadAll(req.Body)
	if err := Verify(secret, req.Header.Get(SignatureHeader), body, time.Now(), 24*time.Hour*365*5); err != nil {
		r.t.Errorf("delivery %s: %v", req.Header.Get(DeliveryHeader), err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var e wireEvent
	if err := json.Unmarshal(body, &e); err != nil {
		r.t.Errorf("delivery body: %v", err)
	}
	if e.Delivery != req.Header.Get(DeliveryHeader) {
		r.t.Errorf("delivery id %q in the body, %q in the header", e.Delivery, req.Header.Get(DeliveryHeader))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, e.Delivery)
	if r.fail > 0 {
		r.fail--
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	r.accepted = append(r.accepted, e)
}

func (r *receiver) setDown(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

func (r *receiver) keys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ks []string
	for _, e := range r.accepted {
		ks = append(ks, string(e.Event)+" "+e.Key)
	}
	return ks
}

// runUntil runs d until cond holds (or fails the test after a while).
func runUntil(t *testing.T, d *Deliverer, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatal("the deliveries did not arrive")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
}

func testDeliverer(url, holder string, src Source, cur Cursor, clock *fakeClock) *Deliverer {
	d := NewDeliverer(Destination{URL: url, Format: JSON}, "ledger-1", holder, secret, src, cur)
	d.Clock = clock
	d.rand = func() float64 { return 0.5 } // no jitter: the waits are exact
	return d
}

func events() *memSource {
	src := &memSource{}
	src.add(Event{Kind: Pending, Key: "refund:1", ActionKind: "refund.card", Agent: "bot1", Digest: "ab12", Target: "IBAN DE00", Deadline: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)})
	src.add(Event{Kind: Conflict, Key: "refund:2", ID: 1})
	src.add(Event{Kind: Uncertain, Key: "refund:1"})
	src.add(Event{Kind: Fenced, Key: "job:9", ID: 3})
	return src
}

// TestDeliveryRetriesUntilAccepted: a receiver that refuses the first three
// attempts gets the first event a fourth time, with the same delivery id
// and a valid signature each time, after waits that back off (and honour
// its Retry-After), then every event in commit order.
func TestDeliveryRetriesUntilAccepted(t *testing.T) {
	rcv := &receiver{t: t, fail: 3}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	clock := newClock()
	src := events()
	cur := newCursor(clock)
	d := testDeliverer(srv.URL, "server-a", src, cur, clock)
	runUntil(t, d, func() bool { return cur.pos(d.Dest.Name()) == 4 })

	want := []string{"pending refund:1", "conflict refund:2", "uncertain refund:1", "fenced job:9"}
	if got := rcv.keys(); !slices.Equal(got, want) {
		t.Fatalf("accepted %q, want %q in commit order", got, want)
	}
	if got := rcv.attempts[:4]; !slices.Equal(got, []string{"ledger-1:1", "ledger-1:1", "ledger-1:1", "ledger-1:1"}) {
		t.Fatalf("attempts %q: the refused event must be retried under one delivery id before the next", got)
	}
	// 0.5s, 1s, then 2s: Retry-After (2s) raises the first two.
	if got := clock.waits[:3]; !slices.Equal(got, []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second}) {
		t.Fatalf("waits %v, want the backoff raised to Retry-After's 2s", got)
	}
	if got := cur.pos(d.Dest.Name()); got != 4 {
		t.Fatalf("cursor at %d after four accepted events, want 4", got)
	}
	e := rcv.accepted[0]
	if e.Target != "" {
		t.Fatalf("the target was sent (%q) without the operator opting in", e.Target)
	}
	if e.Digest != "ab12" || e.Agent != "bot1" || e.Kind != "refund.card" || e.Deadline.IsZero() || !strings.Contains(e.Hint, "tollgate approve") {
		t.Fatalf("pending event %+v lacks the digest, agent, kind, deadline or hint", e)
	}
}

// TestBackoffGrowsToItsMaximum: the waits double from Base up to Max and
// jitter stays within its bounds.
func TestBackoffGrowsToItsMaximum(t *testing.T) {
	b := Backoff{Base: 500 * time.Millisecond, Max: 8 * time.Second, Jitter: 0.2}
	mid := func() float64 { return 0.5 }
	var got []time.Duration
	for a := 1; a <= 7; a++ {
		got = append(got, b.Delay(a, mid))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("delays %v, want %v", got, want)
	}
	if lo, hi := b.Delay(3, func() float64 { return 0 }), b.Delay(3, func() float64 { return 0.999999 }); lo != 1600*time.Millisecond || hi < 2390*time.Millisecond || hi > 2400*time.Millisecond {
		t.Fatalf("jitter bounds of a 2s wait: %v to %v, want 1.6s to 2.4s", lo, hi)
	}
}

// TestDeliveryResumesAfterRestart: a server stopped while its receiver is
// down leaves the cursor at the last accepted event; another server, once
// the lease has run out, sends from there. Nothing is lost; the event in
// flight may come twice (at least once), never out of order.
func TestDeliveryResumesAfterRestart(t *testing.T) {
	rcv := &receiver{t: t}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	clock := newClock()
	src := events()
	cur := newCursor(clock)
	a := testDeliverer(srv.URL, "server-a", src, cur, clock)
	runUntil(t, a, func() bool { return cur.pos(a.Dest.Name()) == 4 })

	// The receiver goes down; two more events are committed; server a
	// keeps failing to deliver the first of them, then stops.
	rcv.setDown(true)
	src.add(Event{Kind: Pending, Key: "refund:3"})
	src.add(Event{Kind: Pending, Key: "refund:4"})
	failed := make(chan struct{}, 16)
	a.OnAttempt = func(e Event, _ int, err error) {
		if err != nil {
			failed <- struct{}{}
		}
	}
	runUntil(t, a, func() bool { return len(failed) >= 3 })
	if got := cur.pos(a.Dest.Name()); got != 4 {
		t.Fatalf("cursor at %d while the receiver is down, want 4", got)
	}

	// The receiver comes back; server b takes over.
	rcv.setDown(false)
	url := srv.URL
	b := testDeliverer(url, "server-b", src, cur, clock)
	runUntil(t, b, func() bool { return len(rcv.keys()) == 6 })
	want := []string{"pending refund:1", "conflict refund:2", "uncertain refund:1", "fenced job:9", "pending refund:3", "pending refund:4"}
	if got := rcv.keys(); !slices.Equal(got, want) {
		t.Fatalf("accepted %q, want %q", got, want)
	}
}

// TestOneServerDeliversAtATime: two servers over one cursor deliver each
// event once between them while the receiver accepts everything.
func TestOneServerDeliversAtATime(t *testing.T) {
	rcv := &receiver{t: t}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	clock := newClock()
	src := &memSource{}
	for i := range 50 {
		src.add(Event{Kind: Pending, Key: "job:" + string(rune('a'+i%26)) + "x"})
	}
	cur := newCursor(clock)
	a := testDeliverer(srv.URL, "server-a", src, cur, clock)
	b := testDeliverer(srv.URL, "server-b", src, cur, clock)
	// Virtual time only moves when a deliverer waits; give each a long
	// lease so neither's runs out while the other polls.
	a.Lease, b.Lease = time.Hour, time.Hour
	a.Poll, b.Poll = time.Millisecond, time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, d := range []*Deliverer{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = d.Run(ctx) }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(rcv.keys()) < 50 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a duplicate, if any, would arrive now
	cancel()
	wg.Wait()
	seen := map[string]int{}
	for _, id := range rcv.attempts {
		seen[id]++
	}
	if len(seen) != 50 {
		t.Fatalf("%d distinct deliveries, want 50", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("delivery %s sent %d times by two servers sharing one cursor", id, n)
		}
	}
}

// TestSlackMessageIsInert: an agent's key, kind and name cannot mention a
// channel, link, format or break the message in Slack.
func TestSlackMessageIsInert(t *testing.T) {
	e := Event{Seq: 1, Kind: Pending, Key: "refund:1", ActionKind: "<!channel> *urgent*", Agent: "bot<https://evil.example|click>\x1b[2J", Target: "a&b"}
	body, err := Encode("L", e, Destination{Format: Slack, Target: true})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	text, _ := m["text"].(string)
	if m["mrkdwn"] != false {
		t.Fatalf("mrkdwn %v: Slack would format an agent's text", m["mrkdwn"])
	}
	for _, bad := range []string{"<", ">", "\x1b", "a&b"} {
		if strings.Contains(text, bad) {
			t.Fatalf("the Slack text %q carries %q unescaped", text, bad)
		}
	}
	for _, want := range []string{"&lt;!channel&gt;", "&lt;https://evil.example|click&gt;", `\x1b`, "a&amp;b", "Approval requested: refund:1"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the Slack text %q lacks %q", text, want)
		}
	}
}

// TestVerifyRefusesForgeries: a wrong secret, an edited body, an old
// signature and a malformed header are each refused.
func TestVerifyRefusesForgeries(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"event":"pending","key":"refund:1"}`)
	h := Sign(secret, now, body)
	if err := Verify(secret, h, body, now.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatalf("a genuine delivery: %v", err)
	}
	cases := map[string]error{
		"other secret": Verify([]byte("another-secret-of-thirty-two-bytes!!"), h, body, now, 5*time.Minute),
		"edited body":  Verify(secret, h, []byte(`{"event":"pending","key":"refund:2"}`), now, 5*time.Minute),
		"replayed":     Verify(secret, h, body, now.Add(time.Hour), 5*time.Minute),
		"malformed":    Verify(secret, "v1=00", body, now, 5*time.Minute),
	}
	for name, err := range cases {
		if !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", name, err)
		}
	}
}

// TestReadSecretRefusesWeakFiles: a secret others can read, or too short
// to be a key, is refused with what to do.
func TestReadSecretRefusesWeakFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := ReadSecret(write("open", string(secret), 0o644)); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable secret: %v", err)
	}
	if _, err := ReadSecret(write("short", "hunter2\n", 0o600)); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("a short secret: %v", err)
	}
	got, err := ReadSecret(write("good", string(secret)+"\n", 0o600))
	if err != nil || string(got) != string(secret) {
		t.Fatalf("a good secret: %q, %v", got, err)
	}
}

// TestDestinationNameHidesTheSecret: a webhook's secret path or query
// never reaches the cursor or the log.
func TestDestinationNameHidesTheSecret(t *testing.T) {
	a := Destination{URL: "https://hooks.slack.com/services/T0/B0/sekrit?token=x", Format: Slack}
	b := Destination{URL: "https://hooks.slack.com/services/T0/B0/other", Format: Slack}
	if n := a.Name(); strings.Contains(n, "sekrit") || strings.Contains(n, "token") || !strings.HasPrefix(n, "slack https://hooks.slack.com #") {
		t.Fatalf("name %q", n)
	}
	if a.Name() == b.Name() {
		t.Fatal("two webhooks on one host share a cursor name")
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "json or slack") {
		t.Fatalf("ParseFormat(xml): %v", err)
	}
}
