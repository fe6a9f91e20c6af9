package service_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/exitcode"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/service"
)

// TestClientIsTheLedger: the client returns what the ledger returns, typed
// as the ledger types it: answers as answers (pending, executing,
// uncertain included), a conflict as *ledger.ConflictError, a missing key
// as ledger.ErrNotFound; and the refusal's object is the one the CLI
// prints on the ledger itself.
func TestClientIsTheLedger(t *testing.T) {
	f := newFixture(t, service.Config{})
	c, err := service.NewClient(f.url, service.ClientOptions{Token: "tok-bot1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	p := ledger.Payload{Kind: "refund", Target: "cust-1", Body: "10 EUR"}
	cx, err := ledger.ParseContext([]byte(`{"amount": 10}`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Guard(ctx, "refund:c1", p, ledger.GuardOptions{Lease: time.Minute, Context: cx})
	if err != nil || a.Verdict != ledger.Permitted || a.PermitID == "" || c.Authority() != "test authority" {
		t.Fatalf("guard: %+v %v", a, err)
	}
	d, err := f.store.Status(ctx, "refund:c1")
	if err != nil || d.PermitID != a.PermitID || d.Agent != "bot-1" || string(d.Context) != `{"amount":10}` || !d.Lease.Equal(a.LeaseUntil) {
		t.Fatalf("stored: %+v %v", d, err)
	}
	// Executing elsewhere is an answer, not an error.
	a2, err := c.Guard(ctx, "refund:c1", p, ledger.GuardOptions{Lease: time.Minute, Context: cx})
	if err != nil || a2.Verdict != ledger.RetryLater || a2.State != ledger.StateExecuting || a2.PermitID != "" {
		t.Fatalf("executing: %+v %v", a2, err)
	}
	// A conflict is the ledger's typed error, with the same object.
	_, err = c.Guard(ctx, "refund:c1", ledger.Payload{Kind: "refund", Target: "cust-1", Body: "11 EUR"}, ledger.GuardOptions{Context: cx})
	var ce *ledger.ConflictError
	if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Differs, []string{"body"}) || ce.StoredSHA256 != d.SHA256 {
		t.Fatalf("conflict: %#v", err)
	}
	_, direct := f.store.Guard(ctx, "refund:c1", ledger.Payload{Kind: "refund", Target: "cust-1", Body: "11 EUR"}, ledger.GuardOptions{Context: cx})
	rc, ro := exitcode.Refusal(err)
	dc, do := exitcode.Refusal(direct)
	delete(ro, "conflict_id")
	delete(do, "conflict_id")
	if rc != dc || fmt.Sprint(ro) != fmt.Sprint(do) {
		t.Fatalf("conflict through the client %d %v, on the ledger %d %v", rc, ro, dc, do)
	}
	// Not found and invalid input match the ledger's sentinels.
	if _, err := c.Status(ctx, "refund:nothing"); !errors.Is(err, ledger.ErrNotFound) || exitcode.Of(err) != exitcode.NotFound {
		t.Fatalf("status of no key: %v", err)
	}
	if _, err := c.Report(ctx, "refund:c1", "not-the-permit", ledger.Succeeded, ledger.ReportOptions{}); exitcode.Of(err) != exitcode.Conflict {
		t.Fatalf("wrong permit: %v (exit %d)", err, exitcode.Of(err))
	}
	r, err := c.Report(ctx, "refund:c1", a.PermitID, ledger.Succeeded, ledger.ReportOptions{Ref: "pay-1", Latency: 1500 * time.Millisecond, Result: "ok"})
	if err != nil || r.State != ledger.StateSucceeded {
		t.Fatalf("report: %+v %v", r, err)
	}
	st, err := c.Status(ctx, "refund:c1")
	if err != nil || st.State != ledger.StateSucceeded || len(st.Reports) != 1 || st.Reports[0].Latency != 1500 || st.Reports[0].Result != "ok" {
		t.Fatalf("status: %+v %v", st, err)
	}
	if e, err := c.Epoch(ctx); err != nil || e.Epoch != "" {
		t.Fatalf("epoch: %+v %v", e, err)
	}
	who, err := c.Identify(ctx)
	if err != nil || who.Name != "bot-1" || who.Scope != service.ScopeAgent || c.DefaultAgent() != "bot-1" {
		t.Fatalf("identify: %+v %v", who, err)
	}
	// Input the ledger refuses is refused before anything is sent.
	if _, err := c.Guard(ctx, "refund:c2", ledger.Payload{Kind: "refund", Target: "t", Body: "\xff"}, ledger.GuardOptions{}); !errors.Is(err, ledger.ErrInvalidInput) {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	// A bad token is a refusal with 77.
	bad, _ := service.NewClient(f.url, service.ClientOptions{Token: "nope"})
	if _, err := bad.Epoch(ctx); !errors.Is(err, service.ErrUnauthenticated) || exitcode.Of(err) != exitcode.NotPermitted {
		t.Fatalf("bad token: %v", err)
	}
}

// TestClientRetries: 503 and 429 are retried within RetryFor with the
// same attempt id, honouring Retry-After; past the budget the last
// refusal is the answer; a refused connection is unavailable (75).
func TestClientRetries(t *testing.T) {
	f := newFixture(t, service.Config{})
	var calls atomic.Int32
	var mu sync.Mutex
	attempts := map[string]bool{}
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		attempts[r.Header.Get(service.HeaderAttempt)] = true
		mu.Unlock()
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(503)
			w.Write([]byte(`{"type":"urn:tollgate:problem:unavailable","title":"Ledger unavailable","status":503,"error":"busy","exit_code":75,"safe_to_repeat":true}`))
		case 2:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(429)
			w.Write([]byte(`{"type":"urn:tollgate:problem:rate-limited","title":"Too many requests","status":429,"error":"rate","exit_code":75}`))
		default:
			// Through to the real server.
			req, _ := http.NewRequest(r.Method, f.url+r.URL.Path, r.Body)
			req.Header = r.Header.Clone()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			var buf [1 << 16]byte
			n, _ := resp.Body.Read(buf[:])
			w.Write(buf[:n])
		}
	}))
	defer flaky.Close()
	c, _ := service.NewClient(flaky.URL, service.ClientOptions{Token: "tok-bot1", RetryFor: 10 * time.Second})
	a, err := c.Guard(context.Background(), "refund:retry", ledger.Payload{Kind: "refund", Target: "t", Body: "b"}, ledger.GuardOptions{})
	if err != nil || a.Verdict != ledger.Permitted {
		t.Fatalf("after a 503 and a 429: %+v %v", a, err)
	}
	if calls.Load() != 3 || len(attempts) != 1 {
		t.Fatalf("%d calls with %d attempt ids, want 3 with 1", calls.Load(), len(attempts))
	}
	// Without a budget the 503 is the answer: exit 75, safe to repeat.
	calls.Store(0)
	c0, _ := service.NewClient(flaky.URL, service.ClientOptions{Token: "tok-bot1"})
	_, err = c0.Epoch(context.Background())
	if code, obj := exitcode.Refusal(err); code != 75 || obj["safe_to_repeat"] != true || !errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("503 without retries: %d %v", code, obj)
	}
	// Nothing listening: unavailable, retried until the budget ends.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cr, _ := service.NewClient("http://"+addr, service.ClientOptions{RetryFor: 600 * time.Millisecond})
	start := time.Now()
	_, err = cr.Epoch(context.Background())
	if !errors.Is(err, ledger.ErrUnavailable) || time.Since(start) < 500*time.Millisecond {
		t.Fatalf("refused: %v after %s", err, time.Since(start))
	}
	// Plain HTTP off loopback is refused before any request.
	if _, err := service.NewClient("http://192.0.2.1:8080", service.ClientOptions{}); !errors.Is(err, ledger.ErrInvalidInput) {
		t.Fatalf("plain http off loopback: %v", err)
	}
}

// TestTokenOnTheSocket: on the socket the peer is known without a token;
// a token sent there must name the peer or a name the peer may act as.
func TestTokenOnTheSocket(t *testing.T) {
	f := newFixture(t, service.Config{})
	creds := newTokens()
	srv := service.NewServer(service.Config{Ledger: f.store, Credentials: creds, Socket: service.SocketPolicy{Users: []string{me(t)}}})
	sock := t.TempDir() + "/s.sock"
	ln, err := service.Listen("unix:"+sock, service.SocketPolicy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, time.Second, ln) }()
	defer func() { cancel(); <-served }()

	peer, _ := service.NewClient("unix://"+sock, service.ClientOptions{})
	if who, err := peer.Identify(context.Background()); err != nil || who.Name != me(t) || who.Scope != service.ScopeAgent {
		t.Fatalf("the peer without a token: %+v %v", who, err)
	}
	borrowed, _ := service.NewClient("unix://"+sock, service.ClientOptions{Token: "tok-bot1"})
	if _, err := borrowed.Identify(context.Background()); exitcode.Of(err) != exitcode.NotPermitted || !errors.Is(err, service.ErrForbidden) {
		t.Fatalf("another agent's token on the socket: %v", err)
	}
	creds.mu.Lock()
	creds.allow[[2]string{me(t), "bot-1"}] = true
	creds.mu.Unlock()
	if who, err := borrowed.Identify(context.Background()); err != nil || who.Name != "bot-1" {
		t.Fatalf("a token naming a name the peer may use: %+v %v", who, err)
	}
}
