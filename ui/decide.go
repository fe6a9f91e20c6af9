package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// The decisions: the dialog opened for the rows chosen, the confirmed
// decision run in a command, and its report.

// openDecision opens the confirmation dialog for the chosen rows, after
// checking that the decision applies to them.
func (m *Model) openDecision(kind dialogKind) tea.Cmd {
	if m.deciding != nil {
		m.say(sevError, "one decision at a time: "+m.deciding.what()+" is still waiting for the ledger (esc stops waiting)")
		return nil
	}
	if m.ident.problem != "" {
		m.say(sevError, "decisions refused: "+m.ident.problem)
		return nil
	}
	rows := m.list().chosen()
	if len(rows) == 0 {
		m.say(sevInfo, m.nothingText("nothing selected"))
		return nil
	}
	if m.sign.Signed && m.sign.Problem != "" {
		// The ledger would refuse every decision unsigned: say so now,
		// with how to load a key, not after a reason is typed and
		// confirmed. The status bar has said "no key" since the read.
		m.say(sevError, noKeyText+safetext.Escape(m.sign.Problem))
		return nil
	}
	if m.stillLocked() {
		// The decision would be refused unsigned: ask first, then open it.
		m.after = &kind
		return m.askPassphrase()
	}
	if kind != dlgApprove && kind != dlgReject {
		rows = rows[:1] // reconcile and review act on the row under the cursor
	}
	if kind == dlgApprove {
		var left []string
		rows = slices.DeleteFunc(rows, func(it item) bool {
			if m.list().stale(it) {
				left = append(left, shownKey(it.Key))
				return true
			}
			return false
		})
		if len(left) > 0 {
			text := strings.Join(left, ", ") + " " + staleWhy
			if len(rows) == 0 {
				m.say(sevError, text)
				return nil
			}
			m.say(sevInfo, "left out of the approval: "+text)
		}
	}
	var targets []target
	for _, it := range rows {
		want := wantState(kind)
		switch {
		case kind == dlgReview && it.Conflict == nil && it.Fenced == nil:
			m.say(sevError, "mark reviewed applies to conflicts and fenced calls")
			return nil
		case kind != dlgReview && (it.Conflict != nil || it.Fenced != nil):
			// Not "is conflict": the row is a log entry, and its key is
			// in a state of its own (often pending), as the pane says.
			m.say(sevError, logEntryText(it, kind))
			return nil
		case kind != dlgReview && it.State != want:
			m.say(sevError, fmt.Sprintf("%s is %s: %s applies to %s actions", shownKey(it.Key), it.State, strings.ToLower(dialogVerbs[kind]), want))
			return nil
		}
		t := target{Key: it.Key, ID: it.ID, View: m.active, Kind: it.Kind}
		switch {
		case it.Conflict != nil:
			// The stored payload is the key's (its kind and target load
			// below); the attempt is the retry's, shown beside it.
			c := it.Conflict
			t.Digest = c.StoredSHA256
			t.Attempt = &attempt{Digest: c.AttemptSHA, Withheld: c.Attempted == nil}
			if c.Attempted != nil {
				t.Attempt.Kind, t.Attempt.Subject = c.Attempted.Kind, c.Attempted.Target
			}
		case it.Fenced != nil:
			t.Digest = it.Fenced.SHA256
		default:
			t.Digest, _ = m.detail.digestOf(it.Key) // else loaded below
		}
		targets = append(targets, t)
	}
	m.lastErr = ""
	// The help page is drawn over a dialog: left open, it would hide the
	// confirmation (keys, digests) that the next enter decides.
	m.showHelp, m.showLog = false, false
	m.dialog = newDialog(kind, targets, m.styles, m.keys)
	m.layout()
	return tea.Batch(m.digests(targets), m.dialog.Init())
}

// noKeyText leads the refusal of a decision on a signed ledger by a
// console that has no registered operator key: the message line cuts it
// at the terminal's width, so what to do comes first and the ledger's own
// rule (every way to load a key) follows, whole in the log.
const noKeyText = "decisions need a registered operator key: reopen with --key FILE · ledger: "

// logEntryText is why a decision other than review does not apply to a
// Conflicts or Fenced row, and where the key is decided. What to do
// leads, and the key is named as the row shows it (its logical key): the
// message line is cut at the terminal's width, and a full key's epoch
// alone would fill half of 80 columns.
func logEntryText(it item, kind dialogKind) string {
	verb, key := strings.ToLower(dialogVerbs[kind]), safetext.Escape(it.Logical)
	if it.Fenced != nil {
		return "this row is a logged fenced call, never admitted: v marks it reviewed; there is no action to " + verb + " (" + key + ")"
	}
	view := viewPending
	if kind == dlgReconcile {
		view = viewUncertain
	}
	return fmt.Sprintf("this row is a logged conflict, not the action: v marks it reviewed; to %s %s, find it in %s (%d, then ' and its name)",
		verb, key, viewTitles[view], view+1)
}

// staleWhy is why a stale-epoch key is not approved.
const staleWhy = "is under a stale epoch (not the active one): the ledger never approves it (it is listed under Fenced too); r rejects it"

// digests fills in the digests of targets not yet loaded, so that the
// dialog always shows what is being decided.
func (m *Model) digests(ts []target) tea.Cmd {
	s, ctx := m.store, m.opt.Context
	ts = append([]target(nil), ts...)
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = t.Key
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		briefs, err := s.Briefs(ctx, keys)
		if err != nil {
			return digestsMsg(ts) // shown as loading; the decision still names each key
		}
		byKey := make(map[string]ledger.Brief, len(briefs))
		for _, b := range briefs {
			byKey[b.Key] = b
		}
		for i := range ts {
			b, ok := byKey[ts[i].Key] // a fenced call's key may have no intent
			if !ok {
				continue
			}
			if ts[i].Digest == "" {
				ts[i].Digest = b.SHA256
			}
			ts[i].Kind, ts[i].Subject = b.Kind, b.Target
		}
		return digestsMsg(ts)
	}
}

type digestsMsg []target

// act runs a confirmed decision in a command and reports every refusal.
// The keys are decided at once, each its own call with its own answer: a
// store opened with GroupCommit (the console's) commits those that arrive
// together in one transaction, so a batch of fifty costs a few fsyncs,
// not fifty.
// It runs under actx, which esc cancels (cancel is called once it ends).
func (m *Model) act(actx context.Context, cancel context.CancelFunc, d dialogDoneMsg) tea.Cmd {
	s, op := m.store, m.opt.Operator
	return func() tea.Msg {
		defer cancel()
		ctx, stop := context.WithTimeout(actx, 30*time.Second)
		defer stop()
		n := len(d.targets)
		out := actionMsg{action: strings.ToLower(dialogVerbs[d.kind]), keys: make([]string, n), errs: make([]error, n), decisions: make([]ledger.Decision, n)}
		var wg sync.WaitGroup
		for i, t := range d.targets {
			out.keys[i] = t.Key
			wg.Add(1)
			go func() {
				defer wg.Done()
				out.decisions[i], out.errs[i] = decide(ctx, s, d, t, op)
			}()
		}
		wg.Wait()
		return out
	}
}

// decide makes one confirmed decision on one target; an approval or a
// rejection returns the decision, with the quorum it reached.
func decide(ctx context.Context, s Ledger, d dialogDoneMsg, t target, op string) (ledger.Decision, error) {
	switch d.kind {
	case dlgApprove:
		return s.Approve(ctx, t.Key, op, d.text)
	case dlgReject:
		return s.Reject(ctx, t.Key, op, d.text)
	case dlgReconcile:
		_, err := s.Reconcile(ctx, t.Key, d.result, op, d.text)
		return ledger.Decision{}, err
	case dlgReview:
		if t.View == viewFenced {
			return ledger.Decision{}, s.ReviewFenced(ctx, t.ID, op, d.text)
		}
		return ledger.Decision{}, s.ReviewConflict(ctx, t.ID, op, d.text)
	}
	return ledger.Decision{}, nil
}

// refusalText is what the status bar says of a refused action: the rule
// for a decision the approvals package refused (the key is already shown
// beside it), else the whole error. Any error at all may arrive here (a
// fence, a context deadline, a driver error), so nothing is assumed of
// its shape.
func refusalText(err error) string {
	var de *ledger.DecisionError
	if errors.As(err, &de) && de.Err != nil {
		return de.Err.Error()
	}
	return err.Error()
}

// quorumText is how far one approval brought its quorum: "1 of 2
// approvals (bob); waiting for one more". The decision names only its own
// operator; earlier approvers are counted.
func quorumText(d ledger.Decision) string {
	who := safetext.Escape(d.Operator)
	if n := d.Approvals - 1; n == 1 {
		who += " and 1 other"
	} else if n > 1 {
		who += fmt.Sprintf(" and %d others", n)
	}
	return fmt.Sprintf("%d of %d approvals (%s); waiting for %s", d.Approvals, d.Approvers, who, more(d.Approvers-d.Approvals))
}

// more is "one more" or "3 more".
func more(n int) string {
	if n == 1 {
		return "one more"
	}
	return fmt.Sprintf("%d more", n)
}

// reportAction says what became of each key of a decision: done, a vote
// short of its quorum (the action still pending), not recorded because
// the operator stopped waiting, or refused.
func (m *Model) reportAction(a actionMsg) {
	var refused, done, votes, stopped, noticeKeys []string
	now := m.opt.Now()
	for i, err := range a.errs {
		m.acted[a.keys[i]] = true
		key := safetext.Escape(a.keys[i])
		var d ledger.Decision
		if i < len(a.decisions) {
			d = a.decisions[i]
		}
		switch {
		case err != nil && a.stopped:
			stopped = append(stopped, key)
			m.log.add(now, sevError, a.action+" not recorded for "+key+": you stopped waiting for the ledger ("+safetext.Escape(err.Error())+")")
		case err != nil:
			why := safetext.Escape(refusalText(err))
			refused = append(refused, key+": "+why)
			m.log.add(now, sevError, a.action+" refused for "+key+": "+safetext.Escape(err.Error()))
		case d.Decision == ledger.DecisionApproved && d.State == ledger.StatePending:
			// One vote of a quorum: the action is still pending, and the
			// vote that completes it, another operator's, is news.
			m.voted[a.keys[i]] = d.Operator
			noticeKeys = append(noticeKeys, a.keys[i])
			text := key + ": " + quorumText(d)
			votes = append(votes, text)
			m.log.add(now, sevInfo, a.action+" vote recorded for "+text)
		default:
			done = append(done, key)
			m.log.add(now, sevInfo, a.action+" done for "+key)
		}
	}
	m.list().clearSelection()
	var parts []string
	if len(done) > 0 || len(votes) == 0 && len(stopped) == 0 {
		part := fmt.Sprintf("%s: %d done", a.action, len(done))
		if len(done) > 0 {
			part += " (" + strings.Join(done, ", ") + ")"
		}
		parts = append(parts, part)
	}
	parts = append(parts, votes...)
	if len(stopped) > 0 {
		parts = append(parts, fmt.Sprintf("stopped waiting: %s %s not recorded", a.action, strings.Join(stopped, ", ")))
	}
	m.notice, m.noticeKeys = strings.Join(parts, " · "), noticeKeys
	m.noticeText = m.notice
	m.lastErr = ""
	if len(refused) > 0 {
		m.lastErr = fmt.Sprintf("%d refused: %s · L shows the full text", len(refused), strings.Join(refused, "; "))
	}
}
