package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/tollgate-dev/tollgate/safetext"
)

// quitWindow is how soon a second q must follow the first to quit while
// a decision is in flight.
const quitWindow = time.Second

// flight is a confirmed decision sent to the ledger and not yet
// answered: it may be waiting for another writer's lock, or for a
// hardware key's touch. While it is in flight the console says so with a
// spinner and the time waited, refuses a second decision, lets esc stop
// waiting, and does not quit on one q: the operator must know whether the
// decision was recorded.
type flight struct {
	styles *Styles
	keys   *KeyMap
	spin   spinner.Model
	// action is the decision's verb ("approve"), keys what it acts on.
	action  string
	targets []string
	// signer is the operator the decision is signed as ("" unsigned).
	signer  string
	now     func() time.Time
	started time.Time
	elapsed time.Duration
	cancel  context.CancelFunc
	// stopped: the operator pressed esc; the answer is still awaited (the
	// call ends with the cancellation) and says what was recorded.
	stopped bool
	// quitAt is when q was first pressed while in flight.
	quitAt time.Time
	width  int
	// file is the ledger file, whose lock holder is looked up; holder is
	// who holds the write lock, as last looked up ("" none or unknown).
	file, holder string
}

var _ component[*flight] = (*flight)(nil)

// flightQuitMsg says the operator quit with the decision unanswered.
type flightQuitMsg struct{ unconfirmed string }

func newFlight(action string, targets []string, signer, file string, cancel context.CancelFunc, st *Styles, km *KeyMap, now func() time.Time) *flight {
	sp := spinner.New(spinner.WithSpinner(spinner.Dot), spinner.WithStyle(st.Spinner))
	return &flight{styles: st, keys: km, spin: sp, action: action, targets: targets, signer: signer, file: file, cancel: cancel, now: now, started: now()}
}

// Init starts the spinner and, unless the decision lands first, the
// look-ups of who holds the ledger.
func (f *flight) Init() tea.Cmd { return tea.Batch(f.spin.Tick, holderTick(f, holderFirst)) }

// SetSize sets the width of the message line the flight is shown on.
func (f *flight) SetSize(w, _ int) { f.width = w }

// ShortHelp implements help.KeyMap: esc stops waiting (q, which the hint
// bar always shows, quits on a second press).
func (f *flight) ShortHelp() []key.Binding { return []key.Binding{f.keys.StopWaiting} }

// FullHelp implements help.KeyMap.
func (f *flight) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

// what names the decision: "approve refund:x" or "approve 3 keys".
func (f *flight) what() string { return f.whatIn(0) }

// whatIn is what with the key cut in its middle to w cells (0: whole).
func (f *flight) whatIn(w int) string {
	if len(f.targets) != 1 {
		return fmt.Sprintf("%s %d keys", f.action, len(f.targets))
	}
	k := safetext.Escape(f.targets[0])
	if w > 0 {
		k = cutMiddle(k, w)
	}
	return f.action + " " + k
}

// Update turns the spinner, stops waiting on esc, and quits on a second
// q (or ctrl+c) within quitWindow of the first, saying what was not
// confirmed.
func (f *flight) Update(msg tea.Msg) (*flight, tea.Cmd) {
	switch msg := msg.(type) {
	case spinner.TickMsg:
		var cmd tea.Cmd
		f.spin, cmd = f.spin.Update(msg)
		f.elapsed = f.now().Sub(f.started)
		return f, cmd
	case holderTickMsg:
		if msg.f != f {
			return f, nil
		}
		return f, lookupHolder(f)
	case holderMsg:
		if msg.f != f {
			return f, nil
		}
		f.holder = msg.holder
		return f, holderTick(f, holderEvery)
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, f.keys.StopWaiting) && !f.stopped:
			f.stopped = true
			f.cancel()
		case key.Matches(msg, f.keys.Quit):
			now := f.now()
			if !f.quitAt.IsZero() && now.Sub(f.quitAt) <= quitWindow {
				f.cancel()
				text := f.unconfirmed()
				return f, func() tea.Msg { return flightQuitMsg{unconfirmed: text} }
			}
			f.quitAt = now
		}
	}
	return f, nil
}

// unconfirmed says what quitting now leaves unknown, and how to find out.
func (f *flight) unconfirmed() string {
	check := "tollgate status KEY"
	if len(f.targets) == 1 {
		check = "tollgate status " + safetext.Escape(f.targets[0])
	}
	return fmt.Sprintf("quit before the ledger confirmed: %s (%s) was not confirmed and may not be recorded; check with `%s`",
		f.what(), strings.Join(escapeAll(f.targets), ", "), check)
}

func escapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = safetext.Escape(s)
	}
	return out
}

// Spinner is the spinner's frame, for a message shown beside it.
func (f *flight) Spinner() string { return f.spin.View() }

// View is the message line while the decision is in flight: what is
// waited for, for how long, and the keys that act.
func (f *flight) View() string {
	line := f.line(0, false)
	// The key gives way first, then the words: what to press must stay
	// on the line.
	fits := func(l string) bool { return f.width <= 0 || ansi.StringWidth(l)+2 <= f.width }
	if len(f.targets) == 1 {
		full := ansi.StringWidth(safetext.Escape(f.targets[0]))
		for _, compact := range []bool{false, true} {
			if line = f.line(0, compact); fits(line) {
				break
			}
			over := ansi.StringWidth(line) + 2 - f.width
			if line = f.line(max(full-over, 8), compact); fits(line) {
				break
			}
		}
	}
	return f.Spinner() + f.styles.Soon.Render(line)
}

// line is the message, the key cut to keyW cells (0: whole); compact
// says "waiting" for "waiting for the ledger", for narrow screens.
func (f *flight) line(keyW int, compact bool) string {
	secs := fmt.Sprintf("%ds", int(f.elapsed.Seconds()))
	what := f.whatIn(keyW)
	var parts []string
	switch {
	case f.stopped:
		parts = []string{"stopping the wait: " + what + " · " + secs}
	case !f.quitAt.IsZero():
		parts = []string{"not yet confirmed: " + what, "q again quits", "esc stops waiting", "waiting for the ledger " + f.heldBy() + secs}
	case compact:
		parts = []string{"waiting " + f.heldBy() + secs + ": " + what, "esc stops waiting"}
	default:
		parts = []string{"waiting for the ledger " + f.heldBy() + secs + ": " + what, "esc stops waiting"}
		if f.signer != "" {
			parts = append(parts, "signing as "+safetext.Escape(f.signer)+": touch your key if it asks")
		}
	}
	return strings.Join(parts, " · ")
}

// heldBy is "(held by pid 4242 (tollgate guard)) " while another process
// holds the ledger's write lock, else "".
func (f *flight) heldBy() string {
	if f.holder == "" {
		return ""
	}
	return "(held by " + f.holder + ") "
}
