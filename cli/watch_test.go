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

// TestWatchHooksRunBeside: a slow hook delays no alert and no other
// key's hook (two hooks of different keys run at once: each waits for
// the other to start), one key's hooks run in the order watch said them,
// each hook gets the event's own time, and a write wakes watch well
// before its --interval (it follows the engine's change signal).
func TestWatchHooksRunBeside(t *testing.T) {
	db := newDB(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "hooks.log")
	want(t, run(t, db, "", "migrate"), cli.ExitOK)
	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "approval", "--ttl", "5m"), cli.ExitOK)
	// Each hook logs its start, then waits until two hooks have started:
	// run one at a time, the first would wait for ever (the test's 20 s).
	hook := `e=$(cat); echo "start $TOLLGATE_EVENT $(printf %s "$e" | sed -n 's/.*"key":"\([^"]*\)".*"at":"\([^"]*\)".*/\1 \2/p')" >> '` + log + `';` +
		` i=0; while [ "$(grep -c '^start' '` + log + `')" -lt 2 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`
	cmd := exec.Command(bin, "watch", "--json", "--warn", "10m", "--interval", "1h", "--exec", hook)
	cmd.Env = append(os.Environ(), "TOLLGATE_DB="+db, "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+dir, "TOLLGATE_OPERATORS_FILE=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// Written after watch started, with --interval 1h: only the change
	// signal can wake it.
	time.Sleep(300 * time.Millisecond)
	want(t, run(t, db, "", "guard", "refund:h-1", "--kind", "refund", "--target", "t", "--body", "b", "--agent", "bot"), cli.ExitRetry)
	want(t, run(t, db, "", "guard", "refund:h-2", "--kind", "refund", "--target", "t", "--body", "b", "--agent", "bot"), cli.ExitRetry)
	said := map[string]bool{}
	deadline := time.After(20 * time.Second)
	for len(said) < 4 {
		select {
		case l := <-lines:
			var e struct{ Event, Key string }
			json.Unmarshal([]byte(l), &e)
			said[e.Event+" "+e.Key] = true
		case <-deadline:
			t.Fatalf("watch woke for %v only (its interval is an hour)", said)
		}
	}
	// Four hooks: pending and expiring for each key, each key's in order.
	var got []string
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(log)
		if got = strings.Split(strings.TrimSpace(string(b)), "\n"); len(got) == 4 {
			break
		}
	}
	if len(got) != 4 {
		t.Fatalf("hooks: %q (one at a time, the first waits for a second that never starts)", got)
	}
	for _, key := range []string{"refund:h-1", "refund:h-2"} {
		p, e := -1, -1
		for i, l := range got {
			f := strings.Fields(l)
			if len(f) < 4 || f[2] != key {
				continue
			}
			if f[1] == "pending" {
				p = i
				if f[3] < "2026" || f[3] > time.Now().UTC().Format(time.RFC3339) {
					t.Errorf("pending hook's time %q is not the event's", f[3])
				}
			} else if f[1] == "expiring" {
				e = i
			}
		}
		if p < 0 || e < 0 || p > e {
			t.Fatalf("%s: pending hook at %d, expiring at %d: not in order\n%q", key, p, e, got)
		}
	}
}
