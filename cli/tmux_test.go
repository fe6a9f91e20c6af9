package cli_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/cli"
)

// tmux drives a real terminal: the console in a detached tmux session.
type tmux struct {
	t      *testing.T
	socket string
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", x.socket}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the terminal shows now.
func (x *tmux) screen() string {
	out, _ := exec.Command("tmux", "-S", x.socket, "capture-pane", "-p", "-t", "tg").CombinedOutput()
	return string(out)
}

func (x *tmux) waitFor(text string) string {
	x.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := x.screen()
		if strings.Contains(s, text) {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("%q not on the terminal within 20s:\n%s", text, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConsoleInTmux: the console in a real terminal (tmux, 100x30, then
// 60x20): it draws the pending key, approves it with a, enter, keeps
// "? help" and "q quit" on screen at 60x20, and quits with q.
func TestConsoleInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the real-terminal check cannot run here")
	}
	db := newDB(t)
	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "approval", "--ttl", "1h"), cli.ExitOK)
	want(t, run(t, db, "", "guard", "refund:tmux-1", "--kind", "refund", "--target", "acct-7", "--body", "40 EUR", "--agent", "refund-bot"), cli.ExitRetry)
	x := &tmux{t: t, socket: filepath.Join(t.TempDir(), "s")}
	x.run("new-session", "-d", "-s", "tg", "-x", "100", "-y", "30",
		"env", "TOLLGATE_DB="+db, "TOLLGATE_OPERATOR=alice", "SSH_AUTH_SOCK=", "TOLLGATE_OPERATORS_FILE=",
		"XDG_CONFIG_HOME="+filepath.Join(homeOf(db), "config"), "XDG_STATE_HOME="+filepath.Join(homeOf(db), "state"), bin, "console")
	t.Cleanup(func() { exec.Command("tmux", "-S", x.socket, "kill-server").Run() })
	x.waitFor("refund:tmux-1")
	x.waitFor("40 EUR")
	x.run("send-keys", "-t", "tg", "a")
	x.waitFor("Approve 1 action?")
	x.run("send-keys", "-t", "tg", "Enter")
	x.waitFor("approve: 1 done")
	x.run("resize-window", "-t", "tg", "-x", "60", "-y", "20")
	s := x.waitFor("q quit")
	if !strings.Contains(s, "? help") {
		t.Fatalf("at 60x20 the hint bar lost ? help:\n%s", s)
	}
	for i, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if n := len([]rune(line)); n > 60 {
			t.Fatalf("line %d is %d cells wide at 60x20:\n%s", i, n, s)
		}
	}
	x.run("send-keys", "-t", "tg", "q")
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command("tmux", "-S", x.socket, "has-session", "-t", "tg").Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("q did not quit:\n%s", x.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := run(t, db, "", "status", "refund:tmux-1", "--json"); r.json(t)["state"] != "approved" {
		t.Fatalf("the approval in the terminal was not stored: %s", r.stdout)
	}
}
