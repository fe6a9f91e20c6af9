package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// News: what changed without this console doing it, said on the message
// line in whatever view is shown (keys decided elsewhere, the cursor's
// row leaving the view) and rung on the bell (an action turned uncertain).

// decidedMsg says pending keys were decided by someone else.
type decidedMsg []decided

// decided is one key decided elsewhere and the line that says so.
type decided struct{ key, text string }

// leftPending takes the keys pending now and returns those that were
// pending at the last snapshot and are no longer, once each.
func (m *Model) leftPending(keys []string) []string {
	now := make(map[string]bool, len(keys))
	for _, k := range keys {
		now[k] = true
	}
	var gone []string
	for k := range m.pending {
		if !now[k] && !m.told[k] && m.news(k) {
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)
	m.pending = now
	return gone
}

// news reports whether a change of key is news to this console: it did
// not decide it, though it may have cast a vote short of the quorum,
// which another operator's vote then completed.
func (m *Model) news(key string) bool {
	_, voted := m.voted[key]
	return !m.acted[key] || voted
}

// announceVotes says each vote another operator cast since the last
// snapshot on a key still pending, as its rejections and decisions are
// (a vote that decided its key is said by whyGone, with the decision),
// and learns where the next snapshot starts.
func (m *Model) announceVotes(msg snapshotMsg, gone []string) {
	first := m.votesSeen < 0
	m.votesSeen = max(m.votesSeen, msg.newestVote)
	if first {
		return
	}
	var said []string
	for _, v := range msg.votes {
		mine := approvals.SameName(v.Operator, m.opt.Operator) || approvals.SameName(v.Operator, m.voted[v.Key])
		if mine || slices.Contains(gone, v.Key) || m.told[v.Key] || !m.pending[v.Key] {
			continue
		}
		text := fmt.Sprintf("%s: %s by %s at %s; still pending", shownKey(v.Key), voteWord(v.Decision), safetext.Escape(v.Operator), when(v.At))
		m.log.add(m.opt.Now(), sevInfo, text)
		said = append(said, text)
	}
	if len(said) > 0 {
		line := said[0]
		if len(said) > 1 {
			line += fmt.Sprintf(" (and %d more: L)", len(said)-1)
		}
		m.notice, m.lastErr = line, ""
	}
}

// voteWord names a vote: "an approval" or "a rejection".
func voteWord(d ledger.DecisionKind) string {
	if d == ledger.DecisionRejected {
		return "a rejection"
	}
	return "an approval"
}

// whyGone looks up keys that left Pending without this console acting on
// them, whatever the view, and says who decided them and when.
func (m *Model) whyGone(keys []string) tea.Cmd {
	var ask []string
	for _, k := range keys {
		if m.news(k) && len(ask) < 20 {
			ask = append(ask, k)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	s, ctx, voted := m.store, m.opt.Context, maps.Clone(m.voted)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var out decidedMsg
		for _, k := range ask {
			d, err := s.Status(ctx, k)
			if err == nil && d.Decision != nil && !approvals.SameName(d.Decision.Operator, voted[k]) {
				out = append(out, decided{k, fmt.Sprintf("%s was %s by %s at %s", shownKey(k), d.Decision.Decision, safetext.Escape(d.Decision.Operator), when(d.Decision.At))})
			}
		}
		return out
	}
}

// ring sounds the terminal bell (when the console has one) as the count
// of uncertain actions rises: an action whose outcome nobody knows needs
// an operator, who may be looking at another window.
func (m *Model) ring(next ledger.Counts) tea.Cmd {
	w := m.opt.Bell
	if w == nil || m.refresh.IsZero() || next.Uncertain <= m.counts.Uncertain {
		return nil
	}
	m.log.add(m.opt.Now(), sevError, fmt.Sprintf("bell: %d more uncertain (%d now)", next.Uncertain-m.counts.Uncertain, next.Uncertain))
	return func() tea.Msg {
		io.WriteString(w, "\a")
		return nil
	}
}

// viewState is the state of every action a view lists, where it has one.
var viewState = map[viewID]ledger.State{viewPending: ledger.StatePending, viewUncertain: ledger.StateUncertain}

// cursorLeft says that the row the cursor was on left the view (nil:
// it did not), and where the cursor is now, instead of moving it
// silently: filtered out, or, looked up in a command, what the key is
// now. A key this console decided is already said by its report.
func (m *Model) cursorLeft(lost *item, why string) tea.Cmd {
	if lost == nil || m.acted[lost.Key] {
		return nil
	}
	now := "the list is empty"
	if it, ok := m.list().current(); ok {
		now = "the cursor is on " + shownKey(it.Key)
	}
	key, title := shownKey(lost.Key), viewTitles[m.active]
	if why == "filtered out" {
		return notice(sevInfo, fmt.Sprintf("%s is filtered out of %s (esc clears the filter); %s", key, title, now))
	}
	if lost.Conflict != nil || lost.Fenced != nil {
		return notice(sevInfo, fmt.Sprintf("%s left %s: reviewed, or archived; %s", key, title, now))
	}
	s, ctx, k, view := m.store, m.opt.Context, lost.Key, m.active
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		d, err := s.Status(ctx, k)
		var what string
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			what = "no longer in the ledger (archived?)"
		case err != nil:
			what = "left the view (" + why + ")"
		case d.Decision != nil && d.State != ledger.StatePending:
			what = fmt.Sprintf("now %s (%s by %s)", d.State, d.Decision.Decision, safetext.Escape(d.Decision.Operator))
		case view == viewAll || d.State == viewState[view]:
			// Still in the view, further down than the rows reloaded
			// (a new order, many rows added above it).
			return noticeMsg{sevInfo, fmt.Sprintf("%s is past the rows loaded in this order (' or / finds it); %s", key, now)}
		default:
			what = "now " + string(d.State)
		}
		return noticeMsg{sevInfo, fmt.Sprintf("%s left %s: %s; %s", key, title, what, now)}
	}
}
