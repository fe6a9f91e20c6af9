package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/service"
)

// tokens is Credentials for tests: a fixed set of tokens and of names
// each identity may act as. Revoke ends a token.
type tokens struct {
	mu    sync.Mutex
	ids   map[string]service.Identity
	allow map[[2]string]bool
}

func newTokens() *tokens {
	return &tokens{ids: map[string]service.Identity{
		"tok-bot1": {Name: "bot-1", Scope: service.ScopeAgent, TokenID: "t1"},
		"tok-bot2": {Name: "bot-2", Scope: service.ScopeAgent, TokenID: "t2"},
		"tok-ops":  {Name: "alice", Scope: service.ScopeOperator, TokenID: "t3"},
	}, allow: map[[2]string]bool{{"bot-2", "bot-2-helper"}: true}}
}

func (c *tokens) TokenIdentity(_ context.Context, bearer string) (service.Identity, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[bearer]
	if !ok {
		return service.Identity{}, fmt.Errorf("%w: unknown or revoked token", service.ErrUnauthenticated)
	}
	return id, nil
}

func (c *tokens) MayActAs(_ context.Context, who, name string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.allow[[2]string{who, name}], nil
}

func (c *tokens) revoke(token string) {
	c.mu.Lock()
	delete(c.ids, token)
	c.mu.Unlock()
}

// fixture is a server over a fresh SQLite ledger with rules for the
// kinds the tests use: refund auto, email approval, wipe deny.
type fixture struct {
	t     *testing.T
	store *ledger.Store
	srv   *service.Server
	url   string
	creds *tokens
	// seen collects every response, for the OpenAPI test to validate.
	seen *[]seenResponse
}

type seenResponse struct {
	method, route string
	status        int
	contentType   string
	body          []byte
}

func newFixture(t *testing.T, cfg service.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	s, err := ledger.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, r := range []approvals.Rule{{Pattern: "refund", Mode: approvals.Auto}, {Pattern: "email", Mode: approvals.Approval, TTL: time.Hour},
		{Pattern: "wipe", Mode: approvals.Deny}} {
		if _, err := s.SetPolicy(ctx, r, "root"); err != nil {
			t.Fatal(err)
		}
	}
	creds := newTokens()
	cfg.Ledger, cfg.Credentials, cfg.Authority = s, creds, "test authority"
	srv := service.NewServer(cfg)
	f := &fixture{t: t, store: s, srv: srv, creds: creds, seen: new([]seenResponse)}
	hs := httptest.NewServer(f.capture(srv))
	// Every response the server sends validates against the OpenAPI
	// document (cleanups run last in, first out: after the server stops).
	t.Cleanup(func() { validateSeen(t, *f.seen) })
	t.Cleanup(hs.Close)
	f.url = hs.URL
	return f
}

// tee keeps a copy of what a handler sends.
type tee struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *tee) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *tee) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

// capture records every response h sends, for validateSeen.
func (f *fixture) capture(h http.Handler) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &tee{ResponseWriter: w}
		h.ServeHTTP(tw, r)
		mu.Lock()
		*f.seen = append(*f.seen, seenResponse{method: r.Method, route: r.URL.Path, status: tw.status, contentType: w.Header().Get("Content-Type"), body: tw.body.Bytes()})
		mu.Unlock()
	})
}

// call makes one request and returns its status, headers and JSON body.
func (f *fixture) call(method, path, token string, headers map[string]string, body string) (int, http.Header, map[string]any) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		f.t.Fatalf("%s %s: %d: body is not a JSON object: %v\n%s", method, path, resp.StatusCode, err, b)
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode/100 == 2 && ct != "application/json" || resp.StatusCode/100 != 2 && ct != "application/problem+json" {
		f.t.Errorf("%s %s: %d with Content-Type %q", method, path, resp.StatusCode, ct)
	}
	return resp.StatusCode, resp.Header, m
}

func guardBody(kind, target, body string, extra ...string) string {
	p, _ := json.Marshal(ledger.Payload{Kind: kind, Target: target, Body: body})
	return `{"payload":` + string(p) + strings.Join(extra, "") + `}`
}

func (f *fixture) guard(token, key, body string) (int, http.Header, map[string]any) {
	f.t.Helper()
	return f.call("POST", "/v1/guard", token, map[string]string{"Idempotency-Key": key}, body)
}

// TestAnswersByStatus walks one key through each answer of SPEC 12's
// status table and checks the status, the problem type, the exit code
// and that the body is the object `--json` prints.
func TestAnswersByStatus(t *testing.T) {
	f := newFixture(t, service.Config{})
	ctx := context.Background()

	// 200 permitted, exit 0, with the CLI's fields.
	code, _, m := f.guard("tok-bot1", "refund:r1", guardBody("refund", "cust-1", "10 EUR"))
	if code != 200 || m["verdict"] != "permitted" || m["exit_code"] != 0.0 || m["permit_id"] == "" || m["authority"] != "test authority" || m["replayed"] != false {
		t.Fatalf("permitted: %d %v", code, m)
	}
	permit := m["permit_id"].(string)
	d, err := f.store.Status(ctx, "refund:r1")
	if err != nil || d.Agent != "bot-1" {
		t.Fatalf("the key is recorded under the token's name: %q %v", d.Agent, err)
	}

	// The same call again: 409 executing (75), the permit not repeated.
	code, _, m = f.guard("tok-bot1", `"refund:r1"`, guardBody("refund", "cust-1", "10 EUR"))
	if code != 409 || m["type"] != string(service.ProblemExecuting) || m["exit_code"] != 75.0 || m["permit_id"] != nil || m["state"] != "executing" {
		t.Fatalf("executing (quoted key): %d %v", code, m)
	}

	// 422 for the key reused with another payload, naming the fields.
	code, _, m = f.guard("tok-bot1", "refund:r1", guardBody("refund", "cust-2", "99 EUR"))
	if code != 422 || m["type"] != string(service.ProblemKeyReused) || m["exit_code"] != 4.0 || fmt.Sprint(m["differs"]) != "[target body]" || m["stored_sha256"] != d.SHA256 {
		t.Fatalf("conflict: %d %v", code, m)
	}
	if strings.Contains(fmt.Sprint(m), "99 EUR") {
		t.Fatalf("a conflict answer carries the body: %v", m)
	}

	// Report: 200, exit 0; the same report again is replayed.
	rep := fmt.Sprintf(`{"key":"refund:r1","permit":%q,"outcome":"succeeded","ref":"pay-1","latency":"120ms"}`, permit)
	code, _, m = f.call("POST", "/v1/report", "tok-bot1", nil, rep)
	if code != 200 || m["state"] != "succeeded" || m["exit_code"] != 0.0 || m["replayed"] != false {
		t.Fatalf("report: %d %v", code, m)
	}
	code, _, m = f.call("POST", "/v1/report", "tok-bot1", nil, rep)
	if code != 200 || m["replayed"] != true {
		t.Fatalf("report replayed: %d %v", code, m)
	}
	// A different report: 409 differs, exit 4.
	code, _, m = f.call("POST", "/v1/report", "tok-bot1", nil, strings.Replace(rep, "succeeded", "failed", 1))
	if code != 409 || m["type"] != string(service.ProblemDiffers) || m["exit_code"] != 4.0 {
		t.Fatalf("report differs: %d %v", code, m)
	}
	// Settled: 200, exit 10.
	code, _, m = f.guard("tok-bot1", "refund:r1", guardBody("refund", "cust-1", "10 EUR"))
	if code != 200 || m["verdict"] != "settled" || m["exit_code"] != 10.0 {
		t.Fatalf("settled: %d %v", code, m)
	}

	// 202 pending with Retry-After, exit 75.
	code, h, m := f.guard("tok-bot1", "email:e1", guardBody("email", "a@example.com", "hello"))
	if code != 202 || h.Get("Retry-After") == "" || m["state"] != "pending" || m["exit_code"] != 75.0 {
		t.Fatalf("pending: %d %v %v", code, h, m)
	}
	// 403 denied by policy, exit 5, type denied.
	code, _, m = f.guard("tok-bot1", "wipe:w1", guardBody("wipe", "db", "all"))
	if code != 403 || m["type"] != string(service.ProblemDenied) || m["exit_code"] != 5.0 || m["verdict"] != "denied" {
		t.Fatalf("denied: %d %v", code, m)
	}
	// 409 uncertain, exit 6: a permit whose holder reported unknown.
	_, _, m = f.guard("tok-bot1", "refund:r2", guardBody("refund", "cust-3", "5 EUR"))
	f.call("POST", "/v1/report", "tok-bot1", nil, fmt.Sprintf(`{"key":"refund:r2","permit":%q,"outcome":"unknown"}`, m["permit_id"]))
	code, _, m = f.guard("tok-bot1", "refund:r2", guardBody("refund", "cust-3", "5 EUR"))
	if code != 409 || m["type"] != string(service.ProblemUncertain) || m["exit_code"] != 6.0 {
		t.Fatalf("uncertain: %d %v", code, m)
	}
	// 404 for a key never seen, exit 7; 404 for a report on it too.
	code, _, m = f.call("GET", "/v1/actions/refund:none", "tok-bot1", nil, "")
	if code != 404 || m["type"] != string(service.ProblemNotFound) || m["exit_code"] != 7.0 {
		t.Fatalf("not found: %d %v", code, m)
	}
	code, _, m = f.call("POST", "/v1/report", "tok-bot1", nil, `{"key":"refund:none","permit":"p","outcome":"succeeded"}`)
	if code != 404 || m["exit_code"] != 7.0 {
		t.Fatalf("report on no key: %d %v", code, m)
	}
	// Status: 200 with the CLI's fields; an epoch: 200.
	code, _, m = f.call("GET", "/v1/actions/refund:r1", "tok-bot1", nil, "")
	if code != 200 || m["state"] != "succeeded" || m["agent"] != "bot-1" || m["authority"] != "test authority" || m["payload_sha256"] != d.SHA256 {
		t.Fatalf("status: %d %v", code, m)
	}
	code, _, m = f.call("GET", "/v1/epoch", "tok-bot1", nil, "")
	if code != 200 || m["active"] != false {
		t.Fatalf("epoch: %d %v", code, m)
	}
}

// TestIdentity: no token or a revoked one is 401; another agent's name
// or key is 403; an allowed name and an operator's read are not.
func TestIdentity(t *testing.T) {
	f := newFixture(t, service.Config{})
	body := guardBody("refund", "cust-1", "10 EUR")
	f.guard("tok-bot1", "refund:mine", body)

	for _, c := range []struct {
		name, method, path, token, key, body string
		status                               int
		typ                                  service.ProblemType
	}{
		{"no token", "POST", "/v1/guard", "", "refund:x1", body, 401, service.ProblemUnauthenticated},
		{"unknown token", "POST", "/v1/guard", "tok-nobody", "refund:x1", body, 401, service.ProblemUnauthenticated},
		{"no token to read", "GET", "/v1/actions/refund:mine", "", "", "", 401, service.ProblemUnauthenticated},
		{"acting as another agent", "POST", "/v1/guard", "tok-bot1", "refund:x2", guardBody("refund", "c", "b", `,"agent":"bot-2"`), 403, service.ProblemNotPermitted},
		{"acting as another agent, case folded", "POST", "/v1/guard", "tok-bot1", "refund:x3", guardBody("refund", "c", "b", `,"agent":"BOT-2"`), 403, service.ProblemNotPermitted},
		{"reading another agent's key", "GET", "/v1/actions/refund:mine", "tok-bot2", "", "", 403, service.ProblemNotPermitted},
		{"reporting on another agent's key", "POST", "/v1/report", "tok-bot2", "", `{"key":"refund:mine","permit":"x","outcome":"succeeded"}`, 403, service.ProblemNotPermitted},
		{"guarding another agent's key with its payload", "POST", "/v1/guard", "tok-bot2", "refund:mine", body, 403, service.ProblemNotPermitted},
		{"an operator guarding an agent's key", "POST", "/v1/guard", "tok-ops", "refund:mine", body, 403, service.ProblemNotPermitted},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{}
			if c.key != "" {
				h["Idempotency-Key"] = c.key
			}
			code, hdr, m := f.call(c.method, c.path, c.token, h, c.body)
			if code != c.status || m["type"] != string(c.typ) || m["exit_code"] != 77.0 {
				t.Fatalf("%d %v", code, m)
			}
			if code == 401 && hdr.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
			if c.key != "" && c.key != "refund:mine" {
				if _, err := f.store.Status(context.Background(), c.key); err == nil {
					t.Fatalf("a refused guard recorded %s", c.key)
				}
			}
		})
	}
	// Allowed: bot-2 as bot-2-helper; its own name spelt otherwise.
	if code, _, m := f.guard("tok-bot2", "refund:helper", guardBody("refund", "c", "b", `,"agent":"bot-2-helper"`)); code != 200 {
		t.Fatalf("allowed name: %d %v", code, m)
	}
	if d, _ := f.store.Status(context.Background(), "refund:helper"); d.Agent != "bot-2-helper" {
		t.Fatalf("recorded under %q", d.Agent)
	}
	if code, _, m := f.guard("tok-bot2", "refund:own", guardBody("refund", "c", "b", `,"agent":"Bot-2"`)); code != 200 {
		t.Fatalf("own name in another case: %d %v", code, m)
	}
	// An operator's token reads every key.
	if code, _, m := f.call("GET", "/v1/actions/refund:mine", "tok-ops", nil, ""); code != 200 || m["agent"] != "bot-1" {
		t.Fatalf("operator read: %d %v", code, m)
	}
	// A revoked token is refused on its next call.
	f.creds.revoke("tok-bot1")
	if code, _, _ := f.call("GET", "/v1/actions/refund:mine", "tok-bot1", nil, ""); code != 401 {
		t.Fatalf("revoked token: %d", code)
	}
}

// TestGuardRefusesOthersApprovedKey: a key an operator approved for
// one agent is not another's to take, even with its payload: the other
// is refused (403, exit 77) before the ledger takes any step or logs
// anything, with the key's payload or another, and the agent it was
// approved for still gets its permit. The refusal comes from the guard
// itself (GuardOptions.Caller), in the reads it makes anyway.
func TestGuardRefusesOthersApprovedKey(t *testing.T) {
	f := newFixture(t, service.Config{})
	ctx := context.Background()
	body := guardBody("email", "cust-1", "hello")
	if code, _, m := f.guard("tok-bot1", "email:ask", body); code != 202 {
		t.Fatalf("first guard: %d %v", code, m)
	}
	if _, err := f.store.Approve(ctx, "email:ask", "alice", "ok"); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{body, guardBody("email", "cust-1", "another body")} {
		code, _, m := f.guard("tok-bot2", "email:ask", b)
		if code != 403 || m["type"] != string(service.ProblemNotPermitted) || m["exit_code"] != 77.0 || m["permit_id"] != nil {
			t.Fatalf("another agent guarding an approved key: %d %v", code, m)
		}
		if d, err := f.store.Status(ctx, "email:ask"); err != nil || d.State != ledger.StateApproved {
			t.Fatalf("after the refusal the key is %q (%v), not still approved", d.State, err)
		}
	}
	if c, err := f.store.Conflicts(ctx, true, "", 0, 0); err != nil || len(c) != 0 {
		t.Fatalf("a refused guard logged conflicts: %v %v", c, err)
	}
	if code, _, m := f.guard("tok-bot1", "email:ask", body); code != 200 || m["permit_id"] == nil {
		t.Fatalf("the agent it was approved for: %d %v", code, m)
	}
}

// TestBadInput: each malformed request is a 400 naming its rule, and
// nothing is stored.
func TestBadInput(t *testing.T) {
	f := newFixture(t, service.Config{})
	// Nothing a refused request sends is stored: the ledger's chain head
	// is the same after all of them (a conflict or any event would move
	// it), whatever the request's key.
	before, err := f.store.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if after, err := f.store.Head(context.Background()); err != nil || after.Seq != before.Seq || after.Hash != before.Hash {
			t.Errorf("refused requests moved the ledger's head from %d to %d (%v)", before.Seq, after.Seq, err)
		}
	}()
	good := guardBody("refund", "c", "b")
	big := guardBody("refund", "c", strings.Repeat("\U0001F600", 4000)+strings.Repeat(" ", 300000))
	for _, c := range []struct {
		name, key, ct, body, rule string
	}{
		{"missing Idempotency-Key", "", "", good, "Idempotency-Key header is required"},
		{"bad key", "Refund:X", "", good, "key"},
		{"key with a slash", "refund/../x", "", good, "key"},
		{"malformed JSON", "refund:m1", "", `{"payload":`, "not the JSON object"},
		{"unknown field", "refund:m2", "", guardBody("refund", "c", "b", `,"agent_name":"x"`), "unknown field"},
		{"unknown payload field", "refund:m3", "", `{"payload":{"kind":"refund","target":"c","body":"b","extra":"x"}}`, "payload"},
		{"two objects", "refund:m4", "", good + good, "after its JSON object"},
		{"no payload", "refund:m5", "", `{}`, "needs a payload"},
		{"lone surrogate", "refund:m6", "", `{"payload":{"kind":"refund","target":"c","body":"\ud800"}}`, "surrogate"},
		{"oversized", "refund:m7", "", big, "larger than"},
		{"bad lease", "refund:m8", "", guardBody("refund", "c", "b", `,"lease":"forever"`), "lease"},
		{"lease out of bounds", "refund:m9", "", guardBody("refund", "c", "b", `,"lease":"200h"`), "lease"},
		{"not JSON", "refund:m10", "text/plain", good, "application/json"},
		{"bad context", "refund:m11", "", guardBody("refund", "c", "b", `,"context":{"a":{"b":{"c":{}}}}`), "context"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{}
			if c.key != "" {
				h["Idempotency-Key"] = c.key
			}
			if c.ct != "" {
				h["Content-Type"] = c.ct
			}
			code, _, m := f.call("POST", "/v1/guard", "tok-bot1", h, c.body)
			if code != 400 || m["type"] != string(service.ProblemInvalid) || m["exit_code"] != 3.0 || !strings.Contains(strings.ToLower(fmt.Sprint(m["error"])), strings.ToLower(c.rule)) {
				t.Fatalf("%d %v", code, m)
			}
			if c.key != "" {
				if _, err := f.store.Status(context.Background(), c.key); err == nil {
					t.Fatalf("a refused guard recorded %s", c.key)
				}
			}
		})
	}
	for _, c := range []struct{ name, body, rule string }{
		{"report without permit", `{"key":"refund:r","outcome":"succeeded"}`, "permit"},
		{"report with a bad outcome", `{"key":"refund:r","permit":"p","outcome":"done"}`, "outcome"},
		{"report with a bad key", `{"key":"R","permit":"p","outcome":"succeeded"}`, "key"},
		{"report with an unknown field", `{"key":"refund:r","permit":"p","outcome":"succeeded","body":"x"}`, "unknown field"},
		{"report of malformed JSON", `{"key":"refund:r",`, "not the JSON object"},
		{"report oversized", `{"key":"refund:r","permit":"p","outcome":"succeeded","ref":"` + strings.Repeat("x", 1<<20) + `"}`, "larger than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, m := f.call("POST", "/v1/report", "tok-bot1", nil, c.body)
			if code != 400 || m["exit_code"] != 3.0 || !strings.Contains(fmt.Sprint(m["error"]), c.rule) {
				t.Fatalf("%d %v", code, m)
			}
		})
	}
	if code, _, m := f.call("GET", "/v1/actions/Bad%20Key", "tok-bot1", nil, ""); code != 400 || m["exit_code"] != 3.0 {
		t.Fatalf("status of a bad key: %d %v", code, m)
	}
	if code, hdr, m := f.call("GET", "/v1/guard", "tok-bot1", nil, ""); code != 405 || hdr.Get("Allow") != "POST" {
		t.Fatalf("GET /v1/guard: %d %v", code, m)
	}
	if code, _, _ := f.call("GET", "/v2/anything", "tok-bot1", nil, ""); code != 404 {
		t.Fatalf("unknown route: %d", code)
	}
}

// TestRateLimit: past its burst an identity gets 429 with Retry-After;
// another identity is not slowed by it.
func TestRateLimit(t *testing.T) {
	f := newFixture(t, service.Config{Rate: 1, Burst: 3})
	for i := range 3 {
		if code, _, m := f.call("GET", "/v1/epoch", "tok-bot1", nil, ""); code != 200 {
			t.Fatalf("request %d within the burst: %d %v", i, code, m)
		}
	}
	code, h, m := f.call("GET", "/v1/epoch", "tok-bot1", nil, "")
	if code != 429 || h.Get("Retry-After") == "" || m["type"] != string(service.ProblemRateLimited) || m["safe_to_repeat"] != true {
		t.Fatalf("past the burst: %d %v %v", code, h, m)
	}
	if code, _, _ := f.call("GET", "/v1/epoch", "tok-bot2", nil, ""); code != 200 {
		t.Fatalf("another identity: %d", code)
	}
}

// TestConcurrentGuardsOnePermit: many callers racing on the same keys
// through one server get exactly one permit per key.
func TestConcurrentGuardsOnePermit(t *testing.T) {
	f := newFixture(t, service.Config{})
	var mu sync.Mutex
	permits := map[string]int{}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 8 {
				key := fmt.Sprintf("refund:c%d", k)
				req, _ := http.NewRequest("POST", f.url+"/v1/guard", bytes.NewReader([]byte(guardBody("refund", "c", fmt.Sprint(k)))))
				req.Header.Set("Idempotency-Key", key)
				req.Header.Set("Authorization", "Bearer tok-bot1")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				var m map[string]any
				json.NewDecoder(resp.Body).Decode(&m)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					mu.Lock()
					permits[key]++
					mu.Unlock()
				} else if resp.StatusCode != 409 {
					t.Errorf("worker %d key %s: %d %v", w, key, resp.StatusCode, m)
				}
			}
		}()
	}
	wg.Wait()
	if len(permits) != 8 {
		t.Fatalf("permits for %d keys, want 8: %v", len(permits), permits)
	}
	for k, n := range permits {
		if n != 1 {
			t.Fatalf("%s: %d permits", k, n)
		}
	}
}

// failing is a ledger whose every call fails as an unreachable database
// does.
type failing struct{ service.Ledger }

func (failing) Epoch(context.Context) (ledger.EpochInfo, error) {
	return ledger.EpochInfo{}, fmt.Errorf("%w: connection refused", ledger.ErrUnavailable)
}

func (failing) Status(_ context.Context, key string) (ledger.Detail, error) {
	return ledger.Detail{}, fmt.Errorf("%w: %s", ledger.ErrNotFound, key)
}

func (failing) Guard(context.Context, string, ledger.Payload, ledger.GuardOptions) (ledger.Answer, error) {
	return ledger.Answer{}, fmt.Errorf("%w: the commit's answer was lost", ledger.ErrCommitUnknown)
}

// TestHealthAndMetrics: /healthz answers, /readyz follows the ledger,
// /metrics counts requests, answers by verdict, latencies and ledger
// errors in the Prometheus text format, and a ledger failure maps to 503
// with its type.
func TestHealthAndMetrics(t *testing.T) {
	f := newFixture(t, service.Config{})
	if code, _, m := f.call("GET", "/healthz", "", nil, ""); code != 200 || m["status"] != "ok" {
		t.Fatalf("healthz: %d %v", code, m)
	}
	if code, _, m := f.call("GET", "/readyz", "", nil, ""); code != 200 || m["status"] != "ready" {
		t.Fatalf("readyz: %d %v", code, m)
	}
	f.guard("tok-bot1", "refund:m1", guardBody("refund", "c", "b"))
	f.guard("tok-bot1", "refund:m1", guardBody("refund", "c", "b"))
	f.guard("tok-bot1", "refund:m1", guardBody("refund", "c", "other"))
	resp, err := http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	for _, want := range []string{
		`tollgate_http_requests_total{route="POST /v1/guard",status="200"} 1`,
		`tollgate_http_requests_total{route="POST /v1/guard",status="409"} 1`,
		`tollgate_http_requests_total{route="POST /v1/guard",status="422"} 1`,
		`tollgate_answers_total{answer="permitted"} 1`,
		`tollgate_answers_total{answer="retry-later"} 1`,
		`tollgate_answers_total{answer="key-reused"} 1`,
		`tollgate_http_request_duration_seconds_bucket{route="POST /v1/guard",le="+Inf"} 3`,
		`tollgate_http_request_duration_seconds_count{route="POST /v1/guard"} 3`,
		"# TYPE tollgate_group_commit_size histogram",
		"# TYPE tollgate_ledger_errors_total counter",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("metrics Content-Type %q", resp.Header.Get("Content-Type"))
	}

	// A ledger that does not answer: readyz 503, a guard 503 commit-unknown.
	bad := service.NewServer(service.Config{Ledger: failing{}, Credentials: newTokens()})
	g := &fixture{t: t, seen: new([]seenResponse)}
	hs := httptest.NewServer(g.capture(bad))
	defer hs.Close()
	g.url = hs.URL
	t.Cleanup(func() { validateSeen(t, *g.seen) })
	if code, h, m := g.call("GET", "/readyz", "", nil, ""); code != 503 || h.Get("Retry-After") == "" || m["type"] != string(service.ProblemUnavailable) {
		t.Fatalf("readyz on a failing ledger: %d %v", code, m)
	}
	if code, _, m := g.call("GET", "/v1/epoch", "tok-bot1", nil, ""); code != 503 || m["safe_to_repeat"] != true || m["exit_code"] != 75.0 {
		t.Fatalf("epoch on a failing ledger: %d %v", code, m)
	}
	if code, _, m := g.guard("tok-bot1", "refund:z", guardBody("refund", "c", "b")); code != 503 || m["type"] != string(service.ProblemCommitUnknown) || m["committed"] != "unknown" || m["exit_code"] != 74.0 {
		t.Fatalf("guard on a failing ledger: %d %v", code, m)
	}
	resp, _ = http.Get(hs.URL + "/metrics")
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `tollgate_ledger_errors_total{exit_code="74"} 1`) || !strings.Contains(string(b), `tollgate_ledger_errors_total{exit_code="75"} 2`) {
		t.Errorf("ledger errors not counted:\n%s", b)
	}
}

// TestMetricsGroupCommitSizes: guards fired at once through the server
// share commits, and /metrics shows it: the group commit histogram
// counts every batch the ledger committed, some of them holding more
// than one call. Its counts come from the ledger's batches (the hook on
// the store), not from the requests: a server that did not wire the hook
// shows an empty histogram and fails here.
func TestMetricsGroupCommitSizes(t *testing.T) {
	f := newFixture(t, service.Config{})
	const callers, each = 32, 4
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := range each {
				req, _ := http.NewRequest("POST", f.url+"/v1/guard", strings.NewReader(guardBody("refund", "c", fmt.Sprint(w, k))))
				req.Header.Set("Idempotency-Key", fmt.Sprintf("refund:g%d-%d", w, k))
				req.Header.Set("Authorization", "Bearer tok-bot1")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("guard %d/%d: %d", w, k, resp.StatusCode)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	resp, err := http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(name, "tollgate_group_commit_size") {
			continue
		}
		var n float64
		fmt.Sscan(v, &n)
		h[name] = n
	}
	batches, ones, calls := h["tollgate_group_commit_size_count"], h[`tollgate_group_commit_size_bucket{le="1"}`], h["tollgate_group_commit_size_sum"]
	// Every guard of a new key is one write: the batches' sizes add up to
	// at least the guards (a guard that lost a race writes again).
	if calls < callers*each {
		t.Fatalf("the batches hold %v calls, fewer than the %d guards:\n%s", calls, callers*each, b)
	}
	if batches-ones < 1 {
		t.Fatalf("%v batches, %v of them of one call: %d concurrent callers never shared a commit:\n%s", batches, ones, callers, b)
	}
	if h[`tollgate_group_commit_size_bucket{le="+Inf"}`] != batches {
		t.Fatalf("the +Inf bucket is not the count:\n%s", b)
	}
	t.Logf("%v calls in %v batches (%v alone)", calls, batches, ones)
}
