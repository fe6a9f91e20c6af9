package ui

import (
	"encoding/base64"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyInsideTmux drives a real tmux server: with tmux 3.3's
// defaults (set-clipboard external, allow-passthrough off) y still sends
// the passthrough but says what to set, since tmux drops it; with
// set-clipboard on it sends plain OSC 52, which tmux takes itself; with
// allow-passthrough on, the passthrough, and no advice.
func TestCopyInsideTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	sock := filepath.Join(t.TempDir(), "s")
	tmux := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("tmux %v: %v %s", args, err, out)
		}
	}
	tmux("new-session", "-d", "-s", "t", "sleep 120")
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	tmux("set", "-s", "set-clipboard", "external")
	tmux("set", "-g", "allow-passthrough", "off")
	t.Setenv("TMUX", sock+",1,0")
	t.Setenv("TERM", "screen-256color")
	f := newFixture(t)
	f.guard("refund:tmux-1", "refund", "x", "bot")
	clip := &syncBuffer{}
	m := f.model(80, 24, clip)
	plain := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte("refund:tmux-1")) + "\a"
	wrapped := "\x1bPtmux;\x1b" + plain + "\x1b\\"

	step(m, press("y"))
	if clip.String() != wrapped || !strings.Contains(m.lastErr, "tmux drops it: run `tmux set -s set-clipboard on`") {
		t.Fatalf("defaults: wrote %q, said %q / %q", clip.String(), m.notice, m.lastErr)
	}
	tmux("set", "-s", "set-clipboard", "on")
	step(m, press("y"))
	if got := strings.TrimPrefix(clip.String(), wrapped); got != plain || !strings.Contains(m.notice, "copied the key of refund:tmux-1") {
		t.Fatalf("set-clipboard on: wrote %q, said %q / %q", got, m.notice, m.lastErr)
	}
	tmux("set", "-s", "set-clipboard", "external")
	tmux("set", "-g", "allow-passthrough", "on")
	step(m, press("y"))
	if got := strings.TrimPrefix(clip.String(), wrapped+plain); got != wrapped || m.lastErr != "" {
		t.Fatalf("allow-passthrough on: wrote %q, said %q / %q", got, m.notice, m.lastErr)
	}
}
