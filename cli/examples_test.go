package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/cli"
)

// The examples under examples/, each run as a user would run it, on a
// scratch ledger, with the freshly built binary first on PATH.

func examplePath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "examples", rel))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("example %s: %v", rel, err)
	}
	return p
}

// exampleEnv is the environment runBin gives tollgate, plus PATH with the
// built binary first and TOLLGATE_BIN for the Python client.
func exampleEnv(db string, extra ...string) []string {
	return append(append(os.Environ(), "TOLLGATE_DB="+db, "TOLLGATE_BIN="+bin, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"),
		"TOLLGATE_OPERATOR=", "SSH_AUTH_SOCK=", "TOLLGATE_OPERATOR_KEY=", "TOLLGATE_OPERATORS_FILE=",
		"XDG_STATE_HOME="+filepath.Join(homeOf(db), "state"), "XDG_CONFIG_HOME="+filepath.Join(homeOf(db), "config"),
		"PYTHONDONTWRITEBYTECODE=1"), extra...)
}

// runExample runs an example to its end and returns its exit code and
// its output (stdout and stderr together).
func runExample(t *testing.T, db string, env []string, argv ...string) (int, string) {
	t.Helper()
	code, out, err := execExample(db, env, argv...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	return code, out
}

// execExample is runExample for another goroutine than the test's: it
// returns the error that runExample fails the test with.
func execExample(db string, env []string, argv ...string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = exampleEnv(db, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out), nil
	}
	return 0, string(out), err
}

// needTool finds a program an example needs: a test skips without it on
// a developer's machine, and fails in CI, where TOLLGATE_REQUIRE_PYTHON
// (python3) or TOLLGATE_REQUIRE_EXAMPLES (everything else) is set.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	why := name + " is not installed: the example that uses it cannot run here"
	if os.Getenv("TOLLGATE_REQUIRE_EXAMPLES") != "" || name == "python3" && os.Getenv("TOLLGATE_REQUIRE_PYTHON") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

func lines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
}

// awaitState polls status until key is in state.
func awaitState(t *testing.T, db, key, state string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := run(t, db, "", "status", key, "--json")
		if r.code == 0 && r.json(t)["state"] == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became %s: %s %s", key, state, r.stdout, r.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestExampleShellAgent: examples/shell-agent/agent.sh waits while the
// refund is pending (sleeping between tries), acts exactly once after
// the approval and reports, then does nothing; a rejected refund stops
// with 5, a changed amount under the same key with 4, and an epoch makes
// it use the epoch-qualified key.
func TestExampleShellAgent(t *testing.T) {
	db := newDB(t)
	agent := examplePath(t, "shell-agent/agent.sh")
	refunds := filepath.Join(t.TempDir(), "refunds")
	env := []string{"REFUND_LOG=" + refunds, "RETRY_EVERY=1", "RETRY_FOR=30"}
	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "approval"), cli.ExitOK)

	type done struct {
		code int
		out  string
		err  error
	}
	finished := make(chan done, 1)
	go func() {
		code, out, err := execExample(db, env, "sh", agent, "42", "4000")
		finished <- done{code, out, err}
	}()
	awaitState(t, db, "refund:order-42", "pending")
	time.Sleep(1500 * time.Millisecond) // at least one retry while pending
	if len(lines(t, refunds)) != 0 {
		t.Fatal("the agent acted before the approval")
	}
	want(t, run(t, db, "", "approve", "refund:order-42", "--operator", "alice"), cli.ExitOK)
	d := <-finished
	if d.err != nil || d.code != 0 || !strings.Contains(d.out, "retrying in 1s") || !strings.Contains(d.out, "refund refund:order-42: succeeded") {
		t.Fatalf("the approved run: exit %d %v\n%s", d.code, d.err, d.out)
	}
	if got := lines(t, refunds); len(got) != 1 || !strings.Contains(got[0], "idempotency_key=refund:order-42") {
		t.Fatalf("refunds issued: %q", got)
	}
	awaitState(t, db, "refund:order-42", "succeeded")
	if code, out := runExample(t, db, env, "sh", agent, "42", "4000"); code != 0 || !strings.Contains(out, "already done") {
		t.Fatalf("the run after: %d %s", code, out)
	}
	if code, out := runExample(t, db, env, "sh", agent, "42", "9999"); code != cli.ExitConflict {
		t.Fatalf("another amount under the same key: %d %s", code, out)
	}
	once := []string{"REFUND_LOG=" + refunds, "RETRY_EVERY=1", "RETRY_FOR=0"}
	if code, out := runExample(t, db, once, "sh", agent, "43", "100"); code != cli.ExitRetry || !strings.Contains(out, "the next run retries") {
		t.Fatalf("a cron run that does not wait: %d %s", code, out)
	}
	want(t, run(t, db, "", "reject", "refund:order-43", "--reason", "duplicate", "--operator", "alice"), cli.ExitOK)
	if code, out := runExample(t, db, once, "sh", agent, "43", "100"); code != cli.ExitDenied || !strings.Contains(out, "new key") {
		t.Fatalf("a rejected refund: %d %s", code, out)
	}
	if got := lines(t, refunds); len(got) != 1 {
		t.Fatalf("refunds issued: %q", got)
	}
	r := run(t, db, "", "epoch", "activate", "--json", "--operator", "root")
	want(t, r, cli.ExitOK)
	if code, out := runExample(t, db, once, "sh", agent, "44", "100"); code != cli.ExitRetry {
		t.Fatalf("under an epoch: %d %s", code, out)
	}
	awaitState(t, db, "hsr1:"+r.json(t)["epoch"].(string)+":refund:order-44", "pending")
}

// TestExamplePythonAgent: examples/python-agent/agent.py with the shipped
// client: pending, then exactly one refund after the approval, then
// nothing; a provider's refusal is reported failed.
func TestExamplePythonAgent(t *testing.T) {
	py := needTool(t, "python3")
	db := newDB(t)
	agent := examplePath(t, "python-agent/agent.py")
	src, _ := filepath.Abs("../clients/python/src")
	refunds := filepath.Join(t.TempDir(), "refunds")
	env := []string{"REFUND_LOG=" + refunds, "PYTHONPATH=" + src}
	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "approval"), cli.ExitOK)
	if code, out := runExample(t, db, env, py, agent, "7", "1250"); code != cli.ExitRetry || !strings.Contains(out, "pending approval until") {
		t.Fatalf("first run: %d %s", code, out)
	}
	want(t, run(t, db, "", "approve", "refund:order-7", "--operator", "alice"), cli.ExitOK)
	if code, out := runExample(t, db, env, py, agent, "7", "1250"); code != 0 || !strings.Contains(out, "succeeded") {
		t.Fatalf("approved run: %d %s", code, out)
	}
	if code, out := runExample(t, db, env, py, agent, "7", "1250"); code != 0 || !strings.Contains(out, "already done") {
		t.Fatalf("run after: %d %s", code, out)
	}
	if got := lines(t, refunds); len(got) != 1 || !strings.Contains(got[0], "cents=1250") {
		t.Fatalf("refunds issued: %q", got)
	}
	r := run(t, db, "", "status", "refund:order-7", "--json")
	if m := r.json(t); m["state"] != "succeeded" || m["agent"] != "refund-agent" {
		t.Fatalf("status: %s", r.stdout)
	}

	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "auto"), cli.ExitOK)
	declined := append(env, "PROVIDER_DECLINES=1")
	if code, out := runExample(t, db, declined, py, agent, "8", "500"); code != 1 || !strings.Contains(out, "card expired") {
		t.Fatalf("a declined refund: %d %s", code, out)
	}
	if r := run(t, db, "", "status", "refund:order-8", "--json"); r.json(t)["state"] != "failed" {
		t.Fatalf("a declined refund is not reported failed: %s", r.stdout)
	}
	if code, out := runExample(t, db, env, py, agent, "8", "999"); code != cli.ExitConflict || !strings.Contains(out, "body") {
		t.Fatalf("another amount under the same key: %d %s", code, out)
	}
}

// TestExampleMCPProxy: examples/mcp-proxy/call.py starts `tollgate mcp
// proxy` in front of the example notes server and makes one call: it is
// forwarded once, recorded as the proxy's action and reported; the same
// call again is not forwarded: it is given the stored result, replayed.
func TestExampleMCPProxy(t *testing.T) {
	py := needTool(t, "python3")
	db := newDB(t)
	call := examplePath(t, "mcp-proxy/call.py")
	notes := filepath.Join(t.TempDir(), "notes")
	env := []string{"NOTES_FILE=" + notes}
	if code, out := runExample(t, db, env, py, call, "buy milk", "note:milk"); code != cli.ExitRetry || !strings.Contains(out, "tollgate approve note:milk") {
		t.Fatalf("with no rule the call must wait for an operator: %d %s", code, out)
	}
	want(t, run(t, db, "", "approve", "note:milk", "--operator", "alice"), cli.ExitOK)
	code, out := runExample(t, db, env, py, call, "buy milk", "note:milk")
	if code != 0 || !strings.Contains(out, "tools: add_note, list_notes") || !strings.Contains(out, "result: noted") {
		t.Fatalf("the approved call: %d %s", code, out)
	}
	if code, out := runExample(t, db, env, py, call, "buy milk", "note:milk"); code != cli.ExitSettled || !strings.Contains(out, "replayed: noted REPLAYED by tollgate") {
		t.Fatalf("the same call again: %d %s", code, out)
	}
	if got := lines(t, notes); len(got) != 1 || got[0] != "buy_milk" {
		t.Fatalf("notes written: %q", got)
	}
	r := run(t, db, "", "status", "note:milk", "--json")
	if m := r.json(t); m["state"] != "succeeded" || m["kind"] != "mcp.add_note" || m["agent"] != "notes-bot" {
		t.Fatalf("the proxy's record: %s", r.stdout)
	}
}

// TestExampleWatchWebhook: `tollgate watch --exec examples/watch-webhook/
// post.sh` posts a new pending request to the webhook (a local receiver
// here) as JSON naming the event and the key.
func TestExampleWatchWebhook(t *testing.T) {
	needTool(t, "curl")
	db := newDB(t)
	hook := examplePath(t, "watch-webhook/post.sh")
	posts := make(chan map[string]any, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if r.Method != http.MethodPost || r.URL.Path != "/hooks/tollgate" || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &m) != nil {
			t.Errorf("the webhook got %s %s %q: %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"), b)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		posts <- m
	}))
	defer srv.Close()
	want(t, run(t, db, "", "migrate"), cli.ExitOK)
	watch := exec.Command(bin, "watch", "--interval", "100ms", "--exec", hook)
	watch.Env = exampleEnv(db, "WEBHOOK_URL="+srv.URL+"/hooks/tollgate")
	watch.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdout, _ := watch.StdoutPipe()
	stderr, _ := watch.StderrPipe()
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer watch.Process.Kill()
	said := make(chan string, 100)
	for _, p := range []io.Reader{stdout, stderr} {
		go func() {
			for sc := bufio.NewScanner(p); sc.Scan(); {
				said <- sc.Text()
			}
		}()
	}
	want(t, run(t, db, "", "guard", "refund:hook-1", "--kind", "refund", "--target", "acct-7", "--body", "40 EUR", "--agent", "bot"), cli.ExitRetry)
	select {
	case m := <-posts:
		e, _ := m["event"].(map[string]any)
		if !strings.Contains(m["text"].(string), "pending") || e["event"] != "pending" || e["key"] != "refund:hook-1" || e["agent"] != "bot" {
			t.Fatalf("the webhook got %v", m)
		}
	case <-time.After(15 * time.Second):
		var out []string
		for len(said) > 0 {
			out = append(out, <-said)
		}
		t.Fatalf("no POST reached the webhook; watch said:\n%s", strings.Join(out, "\n"))
	}
	watch.Process.Signal(os.Interrupt)
	if err := watch.Wait(); err != nil {
		t.Fatalf("watch did not end cleanly on SIGINT: %v", err)
	}
}

// TestExampleCIVerifyBackup: examples/ci/verify-backup.sh backs a live
// ledger up and verifies the copy; it fails the job when there is no
// ledger to back up.
func TestExampleCIVerifyBackup(t *testing.T) {
	sqliteOnly(t) // backup is VACUUM INTO; PostgreSQL uses pg_dump
	db := newDB(t)
	job := examplePath(t, "ci/verify-backup.sh")
	want(t, run(t, db, "", "policy", "set", "report.*", "--mode", "auto"), cli.ExitOK)
	for _, k := range []string{"report:1", "report:2"} {
		want(t, run(t, db, "", "guard", k, "--kind", "report.daily", "--target", "t", "--body", "b"), cli.ExitOK)
	}
	backups := filepath.Join(t.TempDir(), "backups")
	code, out := runExample(t, db, nil, "sh", job, backups)
	if code != 0 || !strings.Contains(out, "backup written to") || !strings.Contains(out, "integrity_check: ok") || !strings.Contains(out, "backup verified: ") {
		t.Fatalf("the job: %d\n%s", code, out)
	}
	files, _ := filepath.Glob(filepath.Join(backups, "ledger-*.db"))
	if len(files) != 1 {
		t.Fatalf("backups: %v", files)
	}
	if r := run(t, files[0], "", "status", "report:2", "--json"); r.code != 0 || r.json(t)["state"] != "executing" {
		t.Fatalf("the backup lacks the ledger's actions: %s %s", r.stdout, r.stderr)
	}
	missing := filepath.Join(t.TempDir(), "no-such-ledger.db")
	if code, out := runExample(t, missing, nil, "sh", job, backups); code == 0 || strings.Contains(out, "backup verified") {
		t.Fatalf("the job passed with no ledger: %d\n%s", code, out)
	}
}

// TestExamplesFirstRun: the shell and Python agents' first run, on a
// ledger that does not exist yet (a newcomer's), asks for approval and
// says so, with no "no ledger" error (or traceback) from reading the
// epoch on the way.
func TestExamplesFirstRun(t *testing.T) {
	sqliteOnly(t)
	src, _ := filepath.Abs("../clients/python/src")
	for _, c := range []struct{ tool, example string }{{"sh", "shell-agent/agent.sh"}, {"python3", "python-agent/agent.py"}} {
		t.Run(c.tool, func(t *testing.T) {
			tool := needTool(t, c.tool)
			db := newDB(t) // not created: the first guard creates it
			env := []string{"RETRY_FOR=0", "RETRY_EVERY=1", "PYTHONPATH=" + src}
			code, out := runExample(t, db, env, tool, examplePath(t, c.example), "7", "100")
			if code != cli.ExitRetry || !strings.Contains(out, "pending") || strings.Contains(out, "no ledger") {
				t.Fatalf("first run: exit %d\n%s", code, out)
			}
		})
	}
}
