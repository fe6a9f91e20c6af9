package mcpgate

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// TestServeSchemaStatesRealDefaults: guard's schema states the lease's
// bounds and default as the ledger's constants have them, and a guard
// without lease_seconds gets exactly that default.
func TestServeSchemaStatesRealDefaults(t *testing.T) {
	e := newEnv(t)
	e.policy("refund", approvals.Auto)
	cs := connect(t, NewServer(e.store, ServeOptions{}))
	var lease map[string]any
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "guard" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var s struct{ Properties map[string]map[string]any }
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		lease = s.Properties["lease_seconds"]
	}
	def := int64(ledger.DefaultLease / time.Second)
	desc, _ := lease["description"].(string)
	for _, want := range []string{
		fmt.Sprintf("default %d", def),
		fmt.Sprintf("(%d to %d)", int64(ledger.MinLease/time.Second), int64(ledger.MaxLease/time.Second)),
	} {
		if !strings.Contains(desc, want) {
			t.Fatalf("lease_seconds says %q, want it to contain %q", desc, want)
		}
	}
	if lease["default"] != float64(def) {
		t.Fatalf("lease_seconds' default %v, want %d", lease["default"], def)
	}
	before := time.Now()
	res := call(t, cs, "guard", map[string]any{"key": "refund:lease-default", "kind": "refund", "target": "a", "body": "b"})
	a := structured(t, res)
	until, err := time.Parse(time.RFC3339Nano, fmt.Sprint(a["lease_until"]))
	if err != nil || a["verdict"] != "permitted" {
		t.Fatalf("guard: %v %v", a, err)
	}
	if got := until.Sub(before); got < ledger.DefaultLease-time.Minute || got > ledger.DefaultLease+time.Minute {
		t.Fatalf("the lease granted is %v, the schema says %v", got, ledger.DefaultLease)
	}
}

// rawSession drives a server over the package's stdio transport with
// lines written by hand: what an SDK client cannot send (invalid UTF-8,
// a call before initialize) is sent as bytes.
type rawSession struct {
	t  *testing.T
	in io.WriteCloser
	sc *bufio.Scanner
}

func rawServe(t *testing.T, srv *mcp.Server) *rawSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Run(ctx, Stdio(inR, outW))
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); outR.Close(); <-done })
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &rawSession{t: t, in: inW, sc: sc}
}

// send writes one line and returns the next answer, decoded.
func (r *rawSession) send(line string) map[string]any {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
	if strings.Contains(line, `"method":"notifications/`) {
		return nil
	}
	if !r.sc.Scan() {
		r.t.Fatalf("no answer to %s: %v", line, r.sc.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(r.sc.Bytes(), &m); err != nil {
		r.t.Fatalf("not JSON: %s", r.sc.Bytes())
	}
	return m
}

const initLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func (r *rawSession) initialize() {
	r.t.Helper()
	if m := r.send(initLine); m["result"] == nil {
		r.t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// guardLine is a tools/call of guard with body written as raw JSON
// string content (escapes and bytes as given).
func guardLine(id int, key, rawBody string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"guard","arguments":{"key":%q,"kind":"refund","target":"acct-7","body":"%s"}}}`, id, key, rawBody)
}

// TestServeRefusesBadText: a body with invalid UTF-8 or an unpaired
// surrogate escape is refused with the field named and records nothing,
// where the SDK's decoder would have replaced it with U+FFFD; a paired
// escape (an emoji) is text and is accepted.
func TestServeRefusesBadText(t *testing.T) {
	e := newEnv(t)
	e.policy("refund", approvals.Auto)
	r := rawServe(t, NewServer(e.store, ServeOptions{}))
	r.initialize()
	for i, body := range []string{"40 EUR\xff", `40 EUR \ud800`, `\udc00 40 EUR`, `40 EUR \ud83d`, "\xc3"} {
		key := fmt.Sprintf("refund:bad-text-%d", i)
		m := r.send(guardLine(i+1, key, body))
		res, _ := m["result"].(map[string]any)
		out, _ := json.Marshal(res)
		if res == nil || res["isError"] != true || !strings.Contains(string(out), `REFUSED: the argument \"body\" is not valid text`) {
			t.Fatalf("body %q: %s", body, out)
		}
		if _, err := e.store.Status(ctx, key); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("body %q: recorded (%v)", body, err)
		}
	}
	m := r.send(guardLine(9, "refund:emoji", `40 EUR \ud83d\ude00 \u00e9`))
	if res, _ := m["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Fatalf("a paired surrogate escape was refused: %v", m)
	}
	if d, err := e.store.Status(ctx, "refund:emoji"); err != nil || d.Payload == nil || d.Payload.Body != "40 EUR \U0001F600 é" {
		t.Fatalf("the emoji body: %+v %v", d.Payload, err)
	}
}

// TestCheckText: names the top-level argument at any depth, and a bad
// name is named too.
func TestCheckText(t *testing.T) {
	for raw, field := range map[string]string{
		`{"a":"ok","b":{"c":["x","\udfff"]}}`: "b",
		"{\"a\xff\":1}":                       "a\ufffd",
		`{"a":"\\ud800"}`:                     "",
		`{"a":"\ud800\\"}`:                    "a",
		`{"a":"\"\ud800"}`:                    "a",
		`"\ud800"`:                            "arguments",
		`{"a":"é😀\u00e9","b":[1,{"c":null}]}`: "",
	} {
		err := checkText(json.RawMessage(raw))
		var be *badTextError
		switch {
		case field == "" && err != nil:
			t.Fatalf("%s: refused: %v", raw, err)
		case field != "" && (!errors.As(err, &be) || be.field != field):
			t.Fatalf("%s: %v, want the field %q named", raw, err, field)
		}
	}
}

// errorCode is a JSON-RPC answer's error code, or nil for a result.
func errorCode(m map[string]any) any {
	if e, ok := m["error"].(map[string]any); ok {
		return e["code"]
	}
	return nil
}

// TestCallBeforeInitializeIsInvalidRequest: a request before initialize
// is answered with -32600 (the SDK said code 0, which is no JSON-RPC
// code) and its id; ping is answered; after initialize the same call
// works. Where the SDK's own gate still answers (an initialize it
// refused), the code is -32600 too.
func TestCallBeforeInitializeIsInvalidRequest(t *testing.T) {
	e := newEnv(t)
	e.policy("refund", approvals.Auto)
	r := rawServe(t, NewServer(e.store, ServeOptions{}))
	for id, line := range map[int]string{
		1: guardLine(1, "refund:early", "b"),
		2: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	} {
		m := r.send(line)
		if errorCode(m) != float64(-32600) || m["id"] != float64(id) {
			t.Fatalf("before initialize: %v", m)
		}
	}
	if m := r.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); m["result"] == nil {
		t.Fatalf("ping before initialize: %v", m)
	}
	if _, err := e.store.Status(ctx, "refund:early"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("a call before initialize was recorded: %v", err)
	}
	// An initialize the SDK refuses leaves its own gate closed.
	if m := r.send(`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"capabilities":7}}`); errorCode(m) == nil {
		t.Fatalf("a malformed initialize: %v", m)
	}
	if m := r.send(guardLine(5, "refund:early", "b")); errorCode(m) != float64(-32600) {
		t.Fatalf("after a refused initialize: %v", m)
	}
	r.initialize()
	if m := r.send(guardLine(6, "refund:early", "b")); m["result"] == nil {
		t.Fatalf("after initialize: %v", m)
	}
}

// TestServeGuardPassesContext: the guard tool's context reaches policy,
// a changed context under the same key is a conflict, and a bad one is
// refused naming the field.
func TestServeGuardPassesContext(t *testing.T) {
	e := newEnv(t)
	e.policy("refund", approvals.Approval)
	if _, err := e.store.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Auto, Condition: "context.amount <= 50"}, "alice"); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, NewServer(e.store, ServeOptions{}))
	args := func(key string, c map[string]any) map[string]any {
		return map[string]any{"key": key, "kind": "refund", "target": "a", "body": "b", "context": c}
	}
	if a := structured(t, call(t, cs, "guard", args("refund:small", map[string]any{"amount": 40}))); a["verdict"] != "permitted" {
		t.Fatalf("a small refund with context: %v", a)
	}
	if a := structured(t, call(t, cs, "guard", args("refund:large", map[string]any{"amount": 400}))); a["verdict"] != "retry-later" {
		t.Fatalf("a large refund with context: %v", a)
	}
	res := call(t, cs, "guard", args("refund:large", map[string]any{"amount": 4}))
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"differs":["context.amount"]`) {
		t.Fatalf("a changed context: %s", b)
	}
	res = call(t, cs, "guard", args("refund:bad", map[string]any{"Amount": 4}))
	if b, _ := json.Marshal(res.Content); !res.IsError || !strings.Contains(string(b), "Amount") {
		t.Fatalf("a bad context: %s", b)
	}
}
