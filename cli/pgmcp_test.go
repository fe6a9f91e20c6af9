package cli_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// mcpClientEnv is mcpClient with env added to the server's environment.
func mcpClientEnv(t *testing.T, db string, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--db", db}, args...)...)
	cmd.Env = append(append(os.Environ(), "TOLLGATE_OPERATOR=", "SSH_AUTH_SOCK=", "TOLLGATE_OPERATORS_FILE=",
		"XDG_STATE_HOME="+filepath.Join(homeOf(db), "state"), "XDG_CONFIG_HOME="+filepath.Join(homeOf(db), "config")), env...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("tollgate %s: stderr:\n%s", strings.Join(args, " "), stderr.String())
		}
	})
	return cs
}

// syncBuffer is a bytes.Buffer a process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// callTool calls a tool with a deadline and returns its text and
// structured answer; a protocol error fails the test.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	m, _ := res.StructuredContent.(map[string]any)
	return res, toolText(res), m
}

// terminator ends every server session of role with pg_terminate_backend
// every period until stopped, counting them.
func terminator(t *testing.T, role string, period time.Duration) (stop func() int) {
	t.Helper()
	db, err := sql.Open("pgx", pgtest.Admin(t))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(period):
			}
			var k int64
			if db.QueryRow("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = $1", role).Scan(&k) == nil {
				n.Add(k)
			}
		}
	}()
	return func() int {
		close(done)
		wg.Wait()
		db.Close()
		return int(n.Load())
	}
}

// TestPostgresMCPRidesOutFaults: `tollgate mcp serve` and `tollgate mcp
// proxy` (processes, on a PostgreSQL ledger, direct or through
// pgbouncer) whose server sessions are terminated every 200 ms during
// their calls: every guard, report and proxied call is answered as if
// nothing happened (the server retries within --retry-for). With the
// chain head locked by another session past --retry-for, each attempt
// abandoned after --attempt-timeout, the tools answer UNAVAILABLE with
// "safe_to_repeat" (the proxy: not forwarded) in bounded time, and
// nothing was recorded.
func TestPostgresMCPRidesOutFaults(t *testing.T) {
	if !onPostgres {
		t.Skip("runs with TOLLGATE_TEST_BACKEND=postgres, direct and through pgbouncer")
	}
	owner := pgtest.DB(t)
	agent := agentLedger(t, owner, pgtest.Role, "mcpbot", "job", "mcp.*")
	role := mustURL(t, agent).User.Username()
	upstream := filepath.Join(t.TempDir(), "upstream.db")
	want(t, run(t, upstream, "", "policy", "set", "job", "--mode", "auto"), cli.ExitOK)

	env := []string{"TOLLGATE_RETRY_FOR=30s", "TOLLGATE_ATTEMPT_TIMEOUT=2s"}
	serve := mcpClientEnv(t, agent, env, "mcp", "serve")
	proxy := mcpClientEnv(t, agent, env, "mcp", "proxy", "--", bin, "--db", upstream, "mcp", "serve")
	stop := terminator(t, role, 200*time.Millisecond)
	t0 := time.Now()
	const n = 15
	for i := range n {
		key := fmt.Sprintf("job:mcp-%d", i)
		res, text, m := callTool(t, serve, "guard", map[string]any{"key": key, "kind": "job", "target": "acct", "body": key})
		if res.IsError || !strings.HasPrefix(text, "PERMITTED") {
			t.Fatalf("guard %s while sessions are terminated: %s", key, text)
		}
		res, text, _ = callTool(t, serve, "report", map[string]any{"key": key, "permit_id": m["permit_id"], "outcome": "succeeded"})
		if res.IsError || !strings.HasPrefix(text, "REPORTED") {
			t.Fatalf("report %s while sessions are terminated: %s", key, text)
		}
		res, text, _ = callTool(t, proxy, "guard", map[string]any{"key": key, "kind": "job", "target": "acct", "body": key, "idempotency_key": "proxied:" + key})
		if res.IsError || !strings.HasPrefix(text, "PERMITTED") {
			t.Fatalf("proxied call %s while sessions are terminated: %s", key, text)
		}
	}
	terminated := stop()
	t.Logf("%d keys through mcp serve and mcp proxy in %s, %d sessions terminated", n, time.Since(t0).Round(time.Millisecond), terminated)
	if terminated == 0 {
		t.Fatal("no session was terminated: the test did not exercise the fault")
	}
	for i := range n {
		for _, key := range []string{fmt.Sprintf("job:mcp-%d", i), fmt.Sprintf("proxied:job:mcp-%d", i)} {
			if s := run(t, agent, "", "status", key, "--json").json(t); s["state"] != "succeeded" {
				t.Fatalf("%s: %v", key, s)
			}
		}
	}

	// The head and the calls' keys locked past the retry budget: answered
	// in bounded time. (The head alone no longer holds up a guard: from
	// schema 20 mcp serve guards each key in one call, whose events wait
	// pending when the head is taken.)
	short := []string{"TOLLGATE_RETRY_FOR=3s", "TOLLGATE_ATTEMPT_TIMEOUT=1s"}
	serve = mcpClientEnv(t, agent, short, "mcp", "serve")
	proxy = mcpClientEnv(t, agent, short, "mcp", "proxy", "--", bin, "--db", upstream, "mcp", "serve")
	release := holdHeadLock(t, owner, "job:locked", "proxied:locked")
	for _, c := range []struct {
		what string
		cs   *mcp.ClientSession
		args map[string]any
		says string
	}{
		{"guard", serve, map[string]any{"key": "job:locked", "kind": "job", "target": "acct", "body": "b"}, "call guard again"},
		{"proxied call", proxy, map[string]any{"key": "job:locked", "kind": "job", "target": "acct", "body": "b", "idempotency_key": "proxied:locked"}, "nothing was recorded or forwarded"},
	} {
		t0 := time.Now()
		res, text, m := callTool(t, c.cs, "guard", c.args)
		took := time.Since(t0)
		if !res.IsError || !strings.HasPrefix(text, "UNAVAILABLE") || !strings.Contains(text, c.says) || !strings.Contains(text, "safe to repeat") {
			t.Fatalf("%s while the head is locked: %s", c.what, text)
		}
		if c.cs == serve && m["safe_to_repeat"] != true {
			t.Fatalf("%s: structured answer %v", c.what, m)
		}
		if took > 8*time.Second {
			t.Fatalf("%s answered after %s; --retry-for is 3s", c.what, took)
		}
		t.Logf("%s after %s: %s", c.what, took.Round(time.Millisecond), text)
	}
	release()
	for _, key := range []string{"job:locked", "proxied:locked"} {
		want(t, run(t, agent, "", "status", key), cli.ExitNotFound)
	}
}

// TestPostgresMCPCommitUnknown: a guard tool call and a proxied call
// whose COMMIT gets no answer (the server waits for a synchronous standby
// that is gone) are answered, once --retry-for ends, COMMIT UNKNOWN with
// "committed": "unknown" and the instruction to ask status first (the
// proxy: not forwarded, and how an operator settles it), never a plain
// refusal or a hang. Afterwards the key is executing under the permit the
// lost attempt recorded: the status tool says so, and the proxied call's
// upstream never ran.
func TestPostgresMCPCommitUnknown(t *testing.T) {
	if testing.Short() || !onPostgres || !pgtest.Direct() {
		t.Skip("on a PostgreSQL cluster of its own: runs once, in the direct TOLLGATE_TEST_BACKEND=postgres run, not under -short")
	}
	c := pgtest.NewCluster(t)
	owner := c.DB(t)
	agent := agentLedger(t, owner, c.Role, "bot", "job", "mcp.*")
	upstream := filepath.Join(t.TempDir(), "upstream.db")
	want(t, run(t, upstream, "", "policy", "set", "job", "--mode", "auto"), cli.ExitOK)
	short := []string{"TOLLGATE_RETRY_FOR=3s", "TOLLGATE_ATTEMPT_TIMEOUT=1s"}
	serve := mcpClientEnv(t, agent, short, "mcp", "serve")
	proxy := mcpClientEnv(t, agent, short, "mcp", "proxy", "--", bin, "--db", upstream, "mcp", "serve")
	// Each server's connections are open before commits stall.
	callTool(t, serve, "status", map[string]any{"key": "job:warm"})
	callTool(t, proxy, "guard", map[string]any{"key": "job:warm", "kind": "job", "target": "acct", "body": "b", "idempotency_key": "proxied:warm"})

	for _, tc := range []struct {
		what string
		cs   *mcp.ClientSession
		args map[string]any
		says string
	}{
		{"guard", serve, map[string]any{"key": "job:lost", "kind": "job", "target": "acct", "body": "b"}, "Call status with key job:lost first"},
		{"proxied call", proxy, map[string]any{"key": "job:lost", "kind": "job", "target": "acct", "body": "b", "idempotency_key": "proxied:lost"}, "the call was not forwarded"},
	} {
		var res *mcp.CallToolResult
		var text string
		var m map[string]any
		var took time.Duration
		stallCommits(t, c, func() {
			t0 := time.Now()
			res, text, m = callTool(t, tc.cs, "guard", tc.args)
			took = time.Since(t0)
		})
		if !res.IsError || !strings.HasPrefix(text, "COMMIT UNKNOWN") || !strings.Contains(text, tc.says) {
			t.Fatalf("%s whose COMMIT never answers: %s", tc.what, text)
		}
		if tc.cs == serve && m["committed"] != "unknown" {
			t.Fatalf("%s: structured answer %v", tc.what, m)
		}
		if took > 8*time.Second {
			t.Fatalf("%s answered after %s; --retry-for is 3s", tc.what, took)
		}
		t.Logf("%s after %s: %s", tc.what, took.Round(time.Millisecond), text)
	}
	_, text, m := callTool(t, serve, "status", map[string]any{"key": "job:lost"})
	if m["state"] != "executing" {
		t.Fatalf("status after the lost commit: %s", text)
	}
	if s := run(t, agent, "", "status", "proxied:lost", "--json").json(t); s["state"] != "executing" {
		t.Fatalf("the proxied call's key after its lost commit: %v", s)
	}
	want(t, run(t, upstream, "", "status", "job:lost"), cli.ExitNotFound)
}
