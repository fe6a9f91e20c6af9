package ui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	osc52 "github.com/aymanbagabas/go-osc52/v2"
	tea "github.com/charmbracelet/bubbletea"
)

// Copying a row's key or digest to the terminal's clipboard (OSC 52).

// copySelected puts the row's full key, or its payload digest, on the
// clipboard with OSC 52 (wrapped for tmux and screen), in a command: the
// write goes to the terminal, never through the ledger.
func (m *Model) copySelected(digest bool) tea.Cmd {
	it, ok := m.list().current()
	if !ok {
		m.say(sevInfo, m.nothingText("nothing to copy"))
		return nil
	}
	what, text := "key", it.Key
	if digest {
		what = "digest"
		switch {
		case it.Conflict != nil:
			text = it.Conflict.AttemptSHA
		case it.Fenced != nil:
			text = it.Fenced.SHA256
		default:
			text, ok = m.detail.digestOf(it.Key)
			if !ok || text == "" {
				m.say(sevInfo, "the digest is still loading: press Y again")
				return nil
			}
		}
	}
	w, ctx, inTmux := m.opt.Clipboard, m.opt.Context, os.Getenv("TMUX") != ""
	screen := strings.HasPrefix(os.Getenv("TERM"), "screen")
	said := fmt.Sprintf("copied the %s of %s to the clipboard (OSC 52; the terminal must allow it)", what, shownKey(it.Key))
	return func() tea.Msg {
		seq, sev := osc52.New(text), sevInfo
		switch {
		case inTmux:
			var advice string
			if seq, advice = throughTmux(ctx, seq); advice != "" {
				said, sev = "the "+what+" of "+shownKey(it.Key)+" was sent, but "+advice, sevError
			}
		case screen:
			seq = seq.Screen()
		}
		seq.WriteTo(w)
		return noticeMsg{sev, said}
	}
}

// throughTmux picks how OSC 52 reaches the clipboard from inside tmux,
// which drops what it is not told to pass: with set-clipboard on, tmux
// takes the plain sequence itself (and sets the outer terminal's
// clipboard); with allow-passthrough on, or a tmux older than 3.3 (no
// such option, passthrough always allowed), the sequence wrapped for
// passthrough gets through. Otherwise (tmux 3.3's defaults) nothing
// would: advice says what to set. It asks the tmux server, so it runs in
// a command, never in Update.
func throughTmux(ctx context.Context, seq osc52.Sequence) (osc52.Sequence, string) {
	option := func(args ...string) (string, bool) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "tmux", append([]string{"show-options"}, args...)...).Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	if v, _ := option("-sv", "set-clipboard"); v == "on" {
		return seq, ""
	}
	switch v, ok := option("-gwv", "allow-passthrough"); {
	case !ok, v == "on", v == "all":
		return seq.Tmux(), ""
	}
	return seq.Tmux(), "tmux drops it: run `tmux set -s set-clipboard on` (or `tmux set -g allow-passthrough on`) and press again"
}
