package service_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// mcpOver connects an MCP client to `tollgate ARGS...` run with env.
func mcpOver(t *testing.T, home string, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = testEnv(home, env...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "svc-agent", Version: "1"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
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

// TestMCPOverTheService: `mcp serve` and `mcp proxy` given a URL guard
// through the service, under the name the server authenticated, and the
// proxy forwards only with the service's permit.
func TestMCPOverTheService(t *testing.T) {
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
	seedPolicy(t, db)
	s, err := ledger.Open(context.Background(), db, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPolicy(context.Background(), approvals.Rule{Pattern: "mcp.*", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	sock := filepath.Join(home, "s.sock")
	startServer(t, db, home, "--listen", "unix:"+sock, "--socket-user", me(t))
	url := "unix://" + sock

	cs := mcpOver(t, home, nil, "mcp", "serve", "--url", url)
	args := map[string]any{"key": "refund:mcp-1", "kind": "refund", "target": "acct-7", "body": "40 EUR"}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: args})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "PERMITTED") {
		t.Fatalf("guard through the service: %v %s", err, toolText(res))
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: map[string]any{"key": "refund:mcp-1", "kind": "refund", "target": "acct-7", "body": "41 EUR"}})
	if err != nil || !strings.Contains(toolText(res), "CONFLICT") {
		t.Fatalf("conflict through the service: %v %s", err, toolText(res))
	}
	r := agent(t, home, []string{"TOLLGATE_DB=" + db}, nil, "status", "refund:mcp-1", "--json")
	if m := r.json(t); m["agent"] != me(t) {
		t.Fatalf("recorded under %v, want the socket peer %s", m["agent"], me(t))
	}

	// The proxy in front of an upstream (another ledger's mcp serve).
	upstream := filepath.Join(home, "upstream.db")
	seedPolicy(t, upstream)
	ps := mcpOver(t, home, []string{"TOLLGATE_URL=" + url}, "mcp", "proxy", "--", bin, "--db", upstream, "mcp", "serve")
	pargs := map[string]any{"key": "refund:inner", "kind": "refund", "target": "acct-7", "body": "totals", "idempotency_key": "outer:1"}
	res, err = ps.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: pargs})
	if err != nil || res.IsError {
		t.Fatalf("a call through the proxy: %v %s", err, toolText(res))
	}
	m := agent(t, home, []string{"TOLLGATE_DB=" + db}, nil, "status", "outer:1", "--json").json(t)
	if m["state"] != "succeeded" || m["agent"] != me(t) || m["kind"] != "mcp.guard" {
		t.Fatalf("the proxied call on the served ledger: %v", m)
	}
	// Its repeat is given the stored result, not forwarded.
	res, err = ps.CallTool(context.Background(), &mcp.CallToolParams{Name: "guard", Arguments: pargs})
	if err != nil || !strings.Contains(strings.ToLower(toolText(res)), "replayed") {
		t.Fatalf("the repeat: %v %s", err, toolText(res))
	}
}
