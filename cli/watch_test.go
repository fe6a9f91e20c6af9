package cli_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/cli"
)

// TestWatchFollowsLiveWriters runs watch as its own process while other
// processes write: each kind of event is printed once, the --exec hook
// gets every event as JSON on stdin and never runs text an agent wrote,
// and SIGINT ends it with exit 0.
func TestWatchFollowsLiveWriters(t *testing.T) {
	db := newDB(t)
	dir := t.TempDir()
	hookOut := filepath.Join(dir, "hook.jsonl")
	pwned := filepath.Join(dir, "PWNED")
	want(t, run(t, db, "", "migrate"), cli.ExitOK)
	want(t, run(t, db, "", "policy", "set", "report.*", "--mode", "auto"), cli.ExitOK)
	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "approval", "--ttl", "5m"), cli.ExitOK)
	// Already open when watch starts: said once at start.
	want(t, run(t, db, "", "guard", "refund:w-0", "--kind", "refund", "--target", "t", "--body", "b", "--agent", "bot"), cli.ExitRetry)

	cmd := exec.Command(bin, "watch", "--json", "--warn", "10m", "--interval", "100ms", "--exec", "cat >> '"+hookOut+"'")
	cmd.Env = append(os.Environ(), "TOLLGATE_DB="+db, "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+dir, "TOLLGATE_OPERATORS_FILE=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				events <- e
			}
		}
		close(events)
	}()
	seen := map[string]int{}
	await := func(event, key string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for seen[event+" "+key] == 0 {
			select {
			case e := <-events:
				seen[e["event"].(string)+" "+e["key"].(string)]++
			case <-deadline:
				t.Fatalf("watch did not say %s %s; it said %v", event, key, seen)
			}
		}
	}
	await("pending", "refund:w-0")
	await("expiring", "refund:w-0") // 5 minutes left, warned at 10

	// Live writers, each its own process.
	want(t, run(t, db, "", "guard", "refund:w-1", "--kind", "refund", "--target", "t", "--body", "b", "--agent", "bot$(touch "+pwned+")"), cli.ExitRetry)
	await("pending", "refund:w-1")
	want(t, run(t, db, "", "guard", "refund:w-1", "--kind", "refund", "--target", "t", "--body", "changed", "--agent", "bot"), cli.ExitConflict)
	await("conflict", "refund:w-1")
	r := run(t, db, "", "guard", "report:w-2", "--kind", "report.daily", "--target", "t", "--body", "b", "--json")
	var permit struct {
		PermitID string `json:"permit_id"`
	}
	json.Unmarshal([]byte(r.stdout), &permit)
	want(t, run(t, db, "", "report", "report:w-2", "--permit", permit.PermitID, "--outcome", "unknown"), cli.ExitOK)
	await("uncertain", "report:w-2")
	want(t, run(t, db, "", "guard", "hsr1:00000000-0000-4000-8000-000000000009:x", "--kind", "refund", "--target", "t", "--body", "b"), cli.ExitDenied)
	await("fenced", "hsr1:00000000-0000-4000-8000-000000000009:x")

	time.Sleep(300 * time.Millisecond) // a few more polls: nothing is said twice
	cmd.Process.Signal(os.Interrupt)
	for e := range events {
		seen[e["event"].(string)+" "+e["key"].(string)]++
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("watch after SIGINT: %v", err)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s said %d times", k, n)
		}
	}
	hook, _ := os.ReadFile(hookOut)
	if lines := strings.Count(string(hook), "\n"); lines != len(seen) {
		t.Errorf("the hook ran %d times for %d events:\n%s", lines, len(seen), hook)
	}
	if !strings.Contains(string(hook), `"agent":"bot$(touch `) {
		t.Errorf("the hook's stdin lacks the agent name as data:\n%s", hook)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("text from an agent name was run by the shell")
	}
}
