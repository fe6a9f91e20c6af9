package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/cli"
)

// mcpClient connects to `tollgate ARGS...` as an MCP client over stdio.
func mcpClient(t *testing.T, db string, args ...string) *mcp.ClientSession {
	t.Helper()
	return mcpClientEnv(t, db, nil, args...)
}

func toolText(res *mcp.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// TestMCPServeOverStdio: `tollgate mcp serve` as a subprocess answers a
// pending guard at once, naming the operator's command; the operator runs
// that command as written; the same call is then permitted.
func TestMCPServeOverStdio(t *testing.T) {
	db := newDB(t)
	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "approval", "--ttl", "1h"), cli.ExitOK)
	cs := mcpClient(t, db, "mcp", "serve")
	args := map[string]any{"key": "refund:stdio-1", "kind": "refund", "target": "acct-7", "body": "40 EUR"}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: args})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "PENDING APPROVAL") {
		t.Fatalf("guard over stdio: %v %s", err, toolText(res))
	}
	_, command, _ := strings.Cut(toolText(res), "approves it with `")
	command, _, _ = strings.Cut(command, "`")
	if words := strings.Fields(command); len(words) != 3 || words[0] != "tollgate" {
		t.Fatalf("no command to run in: %s", toolText(res))
	} else {
		want(t, run(t, db, "", append(words[1:], "--operator", "alice")...), cli.ExitOK)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: args})
	if err != nil || !strings.Contains(toolText(res), "PERMITTED") {
		t.Fatalf("guard after approval: %v %s", err, toolText(res))
	}
	// The MCP client's name, or on PostgreSQL the login role's, the one
	// name the database lets the role use (schema 28).
	agent := "mcp:stdio-agent"
	if onPostgres {
		agent = loginRole(t, db)
	}
	if r := run(t, db, "", "status", "refund:stdio-1", "--json"); !strings.Contains(r.stdout, `"agent":"`+agent+`"`) {
		t.Fatalf("the agent is not %s: %s", agent, r.stdout)
	}
}

// TestMCPProxyOverStdio: `tollgate mcp proxy -- CMD ARGS...` keeps the
// upstream's own flags after "--" (here the upstream is another ledger's
// `tollgate mcp serve`) and guards each call in its own ledger; the
// repeat is given the first call's result, not forwarded.
func TestMCPProxyOverStdio(t *testing.T) {
	db, upstreamDB := newDB(t), newDB(t)
	want(t, run(t, db, "", "policy", "set", "mcp.*", "--mode", "auto"), cli.ExitOK)
	want(t, run(t, upstreamDB, "", "policy", "set", "report.*", "--mode", "auto"), cli.ExitOK)
	cs := mcpClient(t, db, "mcp", "proxy", "--agent", "proxied-bot", "--", bin, "--db", upstreamDB, "mcp", "serve")
	args := map[string]any{"key": "report:inner", "kind": "report.daily", "target": "acct-7", "body": "totals", "idempotency_key": "outer:1"}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: args})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "PERMITTED") {
		t.Fatalf("a call through the proxy: %v %s", err, toolText(res))
	}
	first := toolText(res)
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: args})
	if res.IsError || !strings.HasPrefix(toolText(res), first) || !strings.Contains(toolText(res), "REPLAYED by tollgate") {
		t.Fatalf("the repeat was not given the first result: %s", toolText(res))
	}
	r := run(t, db, "", "status", "outer:1", "--json")
	if m := r.json(t); m["state"] != "succeeded" || m["kind"] != "mcp.guard" || m["agent"] != "proxied-bot" {
		t.Fatalf("the proxy's own ledger: %s", r.stdout)
	}
	if r := run(t, upstreamDB, "", "status", "report:inner", "--json"); r.json(t)["state"] != "executing" {
		t.Fatalf("the upstream ran the call other than once: %s", r.stdout)
	}
}

// TestMCPBadInput: lines that are not JSON-RPC get a parse error and the
// server goes on; a missing upstream command is a usage error naming it.
func TestMCPBadInput(t *testing.T) {
	db := newDB(t)
	want(t, run(t, db, "", "migrate"), cli.ExitOK)
	cmd := exec.Command(bin, "--db", db, "mcp", "serve")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	in.Write([]byte("not json\n42\n{\"foo\":1}\n" +
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n"))
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var codes []float64
	for len(codes) < 4 && sc.Scan() {
		var m struct {
			ID    any
			Error *struct{ Code float64 }
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON-RPC: %s", sc.Bytes())
		}
		if m.Error != nil {
			codes = append(codes, m.Error.Code)
		} else if m.ID == float64(1) {
			codes = append(codes, 0)
		}
	}
	if len(codes) != 4 || codes[0] != -32700 || codes[1] != -32700 || codes[2] != -32700 || codes[3] != 0 {
		t.Fatalf("answers %v, want three parse errors then the initialize result", codes)
	}
	in.Close()

	r := run(t, db, "", "mcp", "proxy", "--", "/nonexistent/upstream-mcp")
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "/nonexistent/upstream-mcp") {
		t.Fatalf("missing upstream: %d %q", r.code, r.stderr)
	}
	if r := run(t, db, "", "mcp", "proxy"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "after --") {
		t.Fatalf("no upstream: %d %q", r.code, r.stderr)
	}
}

// TestMCPProxyReadsAndKeyArg: through the binary, the upstream's
// read-only tool (here `mcp serve`'s status) passes unguarded and
// unrecorded, --guard-reads guards it, and --key-arg key hands the
// action's key to the upstream as its own key argument.
func TestMCPProxyReadsAndKeyArg(t *testing.T) {
	db, upstreamDB := newDB(t), newDB(t)
	want(t, run(t, db, "", "policy", "set", "mcp.guard", "--mode", "auto"), cli.ExitOK)
	want(t, run(t, upstreamDB, "", "policy", "set", "report.*", "--mode", "auto"), cli.ExitOK)
	cs := mcpClient(t, db, "mcp", "proxy", "--key-arg", "key", "--", bin, "--db", upstreamDB, "mcp", "serve")
	args := map[string]any{"kind": "report.daily", "target": "acct-7", "body": "totals", "idempotency_key": "outer:2"}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: args})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "PERMITTED: outer:2") {
		t.Fatalf("guard through the proxy with --key-arg key: %v %s", err, toolText(res))
	}
	for i := 0; i < 2; i++ {
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "status", Arguments: map[string]any{"key": "outer:2"}})
		if err != nil || res.IsError || !strings.Contains(toolText(res), "outer:2 is executing") {
			t.Fatalf("read %d through the proxy: %v %s", i, err, toolText(res))
		}
	}
	if r := run(t, db, "", "list", "--kind", "mcp.status", "--json"); strings.Contains(r.stdout, "mcp.status") {
		t.Fatalf("a read was recorded: %s", r.stdout)
	}

	guarded := mcpClient(t, db, "mcp", "proxy", "--guard-reads", "--", bin, "--db", upstreamDB, "mcp", "serve")
	res, err = guarded.CallTool(context.Background(), &mcp.CallToolParams{Name: "status", Arguments: map[string]any{"key": "outer:2"}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "PENDING APPROVAL") {
		t.Fatalf("a read under --guard-reads with no rule: %v %s", err, toolText(res))
	}
}

// TestMCPProxyRedact: --redact reaches the proxy (the call's arguments
// are kept as digests only, and no result is stored, so the repeat is
// answered SETTLED, saying why), and a negative --repeat-window is a
// usage error.
func TestMCPProxyRedact(t *testing.T) {
	db, upstreamDB := newDB(t), newDB(t)
	want(t, run(t, db, "", "policy", "set", "mcp.*", "--mode", "auto"), cli.ExitOK)
	want(t, run(t, upstreamDB, "", "policy", "set", "report.*", "--mode", "auto"), cli.ExitOK)
	want(t, run(t, db, "", "mcp", "proxy", "--repeat-window", "-1h", "--", bin), cli.ExitUsage)
	cs := mcpClient(t, db, "mcp", "proxy", "--redact", "--repeat-window", "0", "--", bin, "--db", upstreamDB, "mcp", "serve")
	args := map[string]any{"key": "report:secret", "kind": "report.daily", "target": "acct-7", "body": "totals", "idempotency_key": "outer:redacted"}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: args}); err != nil || res.IsError {
		t.Fatalf("a call through the proxy: %v", err)
	}
	if m := run(t, db, "", "status", "outer:redacted", "--json").json(t); m["redacted"] != true || m["state"] != "succeeded" {
		t.Fatalf("under --redact: %v", m)
	}
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: args})
	if !res.IsError || !strings.Contains(toolText(res), "SETTLED") || !strings.Contains(toolText(res), "redacted") {
		t.Fatalf("the repeat under --redact: %s", toolText(res))
	}
}
