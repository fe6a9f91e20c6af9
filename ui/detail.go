package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// detailView is the pane that shows everything about the selected row:
// keys, digest, policy, deadlines, permit, reports, the event timeline and
// the payload, wrapped and scrollable.
type detailView struct {
	styles  *Styles
	keys    *KeyMap
	vp      viewport.Model
	focused bool
	key     string
	id      int64
	width   int
	height  int
	item    item
	detail  *ledger.Detail
	err     error
	// head is the key, state and digest: they stay on top while the rest
	// scrolls, so what is being looked at is never scrolled away.
	head string
	// auth is who may decide now: a vote it does not honour is marked,
	// and not counted toward the quorum.
	auth authority
	// active is the ledger's active epoch, once read.
	active *string
	// full shows the whole key and every field, all of it scrolling (the
	// full-key view); the pane shows the logical key under a fixed head.
	full bool
}

func newDetailView(st *Styles, km *KeyMap) *detailView {
	return &detailView{styles: st, keys: km, vp: viewport.New(0, 0)}
}

// setAuthority re-draws the pane under who may decide now.
func (d *detailView) setAuthority(a authority) {
	d.auth = a
	d.render()
}

// setActiveEpoch tells the pane the ledger's active epoch, so that it
// says when a pending key's epoch is stale.
func (d *detailView) setActiveEpoch(e string) {
	if d.active == nil || *d.active != e {
		d.active = &e
		d.render()
	}
}

// Focused reports whether the pane has the keys (to scroll).
func (d *detailView) Focused() bool { return d.focused }

// SetFocus gives the pane the keys or takes them back.
func (d *detailView) SetFocus(on bool) { d.focused = on }

// digestOf returns the shown key's payload digest, if it is loaded.
func (d *detailView) digestOf(key string) (string, bool) {
	if d.detail == nil || d.key != key {
		return "", false
	}
	return d.detail.SHA256, true
}

// SetSize sets the pane's outer size, border included.
func (d *detailView) SetSize(w, h int) {
	d.width, d.height = w, h
	d.vp.Width, d.vp.Height = max(w-4, 10), max(h-2, 1)
	d.render()
}

// ShortHelp implements help.KeyMap.
func (d *detailView) ShortHelp() []key.Binding {
	return []key.Binding{d.keys.Up, d.keys.Down, d.keys.Cancel}
}

// FullHelp implements help.KeyMap.
func (d *detailView) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }

// show points the pane at a row; the content arrives with a detailMsg.
func (d *detailView) show(it item, ok bool) {
	if !ok {
		d.key, d.id, d.detail, d.err = "", 0, nil, nil
		d.render()
		return
	}
	changed := it.Key != d.key || it.ID != d.id
	d.key, d.id, d.item = it.Key, it.ID, it
	if changed {
		d.vp.GotoTop()
		d.detail, d.err = nil, nil
		d.render() // "loading <key>" until the detail arrives
	}
}

// setDetail stores a loaded detail when it still matches the selection.
// setDetail stores a loaded detail when it still matches the selection,
// and returns what changed under the operator's eyes: a pending key
// decided meanwhile (by another console or operator), else "".
func (d *detailView) setDetail(msg detailMsg) string {
	if msg.key != d.key || msg.id != d.id {
		return ""
	}
	prev := d.detail
	d.err, d.detail = msg.err, nil
	if msg.err == nil && !msg.missing {
		dt := msg.detail
		d.detail = &dt
	}
	d.render()
	return d.decidedElsewhere(prev, d.detail)
}

// Update scrolls the pane when it has the focus.
func (d *detailView) Update(msg tea.Msg) (*detailView, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok || !d.focused {
		return d, nil
	}
	scroll(&d.vp, d.keys, km)
	return d, nil
}

// scroll moves a pane's viewport by the navigation keys; the detail pane
// and the message log share it.
func scroll(vp *viewport.Model, k *KeyMap, km tea.KeyMsg) {
	switch {
	case key.Matches(km, k.Up):
		vp.ScrollUp(1)
	case key.Matches(km, k.Down):
		vp.ScrollDown(1)
	case key.Matches(km, k.PageUp):
		vp.HalfPageUp()
	case key.Matches(km, k.PageDown):
		vp.HalfPageDown()
	case key.Matches(km, k.Top):
		vp.GotoTop()
	case key.Matches(km, k.Bottom):
		vp.GotoBottom()
	}
}

// View renders the pane with its border: the fixed head, the scrolling
// rest and, when the rest does not fit, where it is.
func (d *detailView) View() string {
	style := d.styles.Pane
	if d.focused {
		style = d.styles.FocusedPane
	}
	var parts []string
	if d.head != "" {
		parts = append(parts, d.head)
	}
	parts = append(parts, d.vp.View())
	if total := d.vp.TotalLineCount(); total > d.vp.Height {
		first := d.vp.YOffset + 1
		last := min(d.vp.YOffset+d.vp.Height, total)
		hint := "enter scrolls"
		if d.focused {
			hint = "↑/↓ pgup/pgdn g/G · esc"
		}
		parts = append(parts, d.styles.Muted.Render(ansi.Truncate(fmt.Sprintf("lines %d-%d of %d · %s", first, last, total, hint), d.vp.Width, "…")))
	}
	return style.Width(max(d.width-2, 10)).Height(max(d.height-2, 1)).MaxHeight(max(d.height, 3)).Render(strings.Join(parts, "\n"))
}

// render lays the content out: every line wrapped to the pane (a digest
// or a long target is never cut), the head fixed, the rest in the
// viewport with a line kept for its position when it does not fit.
func (d *detailView) render() {
	content, split := d.content()
	w := max(d.vp.Width, 10)
	head, body := content[:split], content[split:]
	d.head = wrapLines(strings.TrimRight(head, "\n"), w)
	body = wrapLines(strings.TrimRight(body, "\n"), w)
	inner := max(d.height-2, 1)
	room := d.bodyRoom(inner, body)
	if d.head != "" && room < 2 {
		// A head that leaves the rest one line (a narrow pane, a key
		// under an epoch) scrolls with it: a timeline read one line at a
		// time cannot be read, and the head is back on top at g.
		body, d.head = d.head+"\n"+body, ""
		room = d.bodyRoom(inner, body)
	}
	d.vp.Height = room
	d.vp.SetContent(body)
}

// bodyRoom is how many lines of body fit under the head in inner lines,
// one kept for the position line when the body does not fit.
func (d *detailView) bodyRoom(inner int, body string) int {
	room := inner
	if d.head != "" {
		room = max(room-strings.Count(d.head, "\n")-1, 1)
	}
	if strings.Count(body, "\n")+1 > room {
		room = max(room-1, 1)
	}
	return room
}

// wrapLines wraps each line of s to w cells, styles kept.
func wrapLines(s string, w int) string {
	if s == "" {
		return ""
	}
	return ansi.Wrap(s, w, "")
}

// field renders one "label value" line; value must already be escaped.
func (d *detailView) field(b *strings.Builder, label, value string) {
	b.WriteString(d.styles.Label.Render(fmt.Sprintf("%-10s", label)) + " " + value + "\n")
}

// digestField renders the digest's line cut at the pane's width, not at
// word boundaries: a word wrap would put the 64 digits on lines of their
// own below the label, which costs the fixed head a line that a 60-column
// pane needs for the timeline under it.
func (d *detailView) digestField(b *strings.Builder, sha string) {
	line := d.styles.Label.Render(fmt.Sprintf("%-10s", "digest")) + " " + d.styles.Digest.Render(sha)
	b.WriteString(ansi.Hardwrap(line, max(d.vp.Width, 10), true) + "\n")
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// content is the pane's text and the byte offset where its fixed head
// ends (0: no head).
func (d *detailView) content() (string, int) {
	st := d.styles
	w := d.vp.Width
	var b strings.Builder
	switch {
	case d.key == "":
		return st.Empty.Render("Nothing selected."), 0
	case d.err != nil:
		return st.StatusError.Render("could not load " + safetext.Escape(d.key) + ": " + safetext.Escape(d.err.Error())), 0
	}
	if d.full {
		b.WriteString(st.DialogTitle.Render("Full view · every field, wrapped · f or esc closes") + "\n")
	}
	if f := d.item.Fenced; f != nil {
		d.field(&b, "fenced", safetext.Escape(f.Key))
		d.field(&b, "key epoch", orDash(f.KeyEpoch))
		d.field(&b, "active", orDash(f.ActiveEpoch))
		d.field(&b, "agent", safetext.Escape(f.Agent))
		d.digestField(&b, f.SHA256)
		d.field(&b, "at", when(f.At))
		d.field(&b, "reason", safetext.Escape(f.Reason))
		if d.detail == nil {
			b.WriteString(st.Muted.Render("The key was never admitted: nothing else is stored for it.") + "\n")
			return b.String(), 0
		}
		b.WriteString("\n")
	}
	dt := d.detail
	if dt == nil {
		return b.String() + st.Muted.Render("loading "+safetext.Escape(d.key)+"..."), 0
	}
	fixed := b.Len() == 0 && !d.full // a fenced call keeps its own lines above
	// Compact header: the payload should be visible at 80x24 without scrolling.
	if d.full && dt.Key != dt.Logical {
		d.field(&b, "full key", safetext.Escape(dt.Key))
	}
	d.field(&b, "key", safetext.Escape(dt.Logical))
	if dt.Epoch != "" {
		d.field(&b, "epoch", safetext.Escape(dt.Epoch))
	}
	state := st.StateStyle(dt.State).Render(string(dt.State)) + " · agent " + orDash(dt.Agent)
	if dt.Policy != "" {
		state += " · policy " + dt.Policy + " " + policySource(dt.PolicyPat)
	}
	label := "state"
	if d.item.Conflict != nil || d.item.Fenced != nil {
		label = "key state" // the row is a log entry; this is its key's (see header)
	}
	d.field(&b, label, state)
	if staleEpoch(dt.State, dt.Epoch, d.active) {
		act := *d.active
		if act == "" {
			act = "none"
		}
		d.field(&b, "stale", "epoch "+orDash(safetext.Escape(dt.Epoch))+", active "+act+": never approved (also under Fenced); r rejects it")
	}
	if r := dt.Rule; r != nil && (r.Condition != "" || r.Error != "") {
		d.field(&b, "rule", ruleLine(r))
	}
	if len(dt.Context) > 0 {
		d.field(&b, "context", safetext.Escape(string(dt.Context)))
	}
	if len(dt.CallerAsserted) > 0 {
		d.field(&b, "caller's", safetext.Escape(strings.Join(dt.CallerAsserted, ", "))+": asserted by the caller, not derived from what executes")
	}
	for _, f := range dt.Forged {
		d.field(&b, "FORGED", st.Differs.Render(safetext.Escape(f)))
	}
	if dt.Archive != 0 {
		d.field(&b, "archived", "to "+safetext.Escape(dt.ArchiveFile)+": its facts and events are there")
	}
	if dt.State == ledger.StateApproved && d.honoured(dt) < max(dt.Approvers, 1) {
		// Approved on file, but not under who may decide now: guard
		// refuses the permit, so the console must not call it done.
		b.WriteString(st.Differs.Render("NOT HONOURED: the approvals on file do not reach the quorum under the current operators; guard refuses the permit") + "\n")
	}
	d.digestField(&b, dt.SHA256)
	split := 0
	if fixed {
		split = b.Len()
	}
	if d.full {
		if dt.Payload == nil {
			d.field(&b, "kind", orDash(dt.Kind)) // else the payload's own line says it
		}
		d.field(&b, "recorded", when(dt.Recorded))
		d.field(&b, "requested", when(dt.Requested))
		d.field(&b, "conflicts", fmt.Sprint(dt.Conflicts))
	}
	if !dt.Expires.IsZero() {
		d.field(&b, "deadline", when(dt.Expires))
		if dt.Approvers > 1 {
			d.field(&b, "approvals", d.approvalsLine(*dt))
		}
	}
	for _, v := range dt.Votes {
		d.field(&b, string(v.Decision), fmt.Sprintf("by %s at %s", safetext.Escape(v.Operator), when(v.At)))
		d.field(&b, "proof", st.ProofStyle(v.Proof.Status).Render(safetext.Escape(v.Proof.String())))
		if ok, why := d.auth.honours(v.Proof); !ok {
			d.field(&b, "", st.Differs.Render("NOT HONOURED: "+why+"; guard does not count this vote"))
		}
		if v.Reason != "" {
			d.field(&b, "reason", safetext.Escape(v.Reason))
		}
	}
	if dt.PermitID != "" {
		d.field(&b, "permit", dt.PermitID)
		d.field(&b, "lease", "until "+when(dt.Lease)+" (holder "+safetext.Escape(dt.Holder)+")")
	}
	for _, r := range dt.Reports {
		d.field(&b, "report", fmt.Sprintf("%s (%s) ref %s, %dms, at %s", r.Outcome, r.Kind, safetext.Escape(r.Ref), r.Latency, when(r.At)))
	}
	if dt.Reconcile != nil {
		d.field(&b, "reconciled", fmt.Sprintf("%s by %s: %s", dt.Reconcile.Result, safetext.Escape(dt.Reconcile.Operator), safetext.Escape(dt.Reconcile.Note)))
		d.field(&b, "proof", st.ProofStyle(dt.Reconcile.Proof.Status).Render(safetext.Escape(dt.Reconcile.Proof.String())))
	}
	if dt.Disagrees {
		b.WriteString(st.Differs.Render("FLAGGED: a report disagrees with the reconciliation") + "\n")
	}
	if c := d.item.Conflict; c != nil {
		b.WriteString("\n" + st.DialogTitle.Render(fmt.Sprintf("Conflict %d by %s at %s", c.ID, safetext.Escape(c.Agent), when(c.At))) + "\n")
		d.field(&b, "stored", st.Digest.Render(c.StoredSHA256))
		d.field(&b, "attempted", st.Digest.Render(c.AttemptSHA))
		b.WriteString(d.sideBySide(dt.Payload, c, w))
	} else {
		b.WriteString(d.payload(dt, w))
	}
	b.WriteString("\n" + st.Label.Render("timeline") + "\n")
	ranOut, derived := leaseRanOut(dt)
	for _, e := range dt.Events {
		if derived && e.At.After(ranOut) {
			b.WriteString(st.Muted.Render(leaseLine(ranOut)) + "\n")
			derived = false
		}
		b.WriteString(fmt.Sprintf("%s  %-20s %s\n", when(e.At), e.Type, safetext.Escape(e.Actor)))
	}
	if derived {
		b.WriteString(st.Muted.Render(leaseLine(ranOut)) + "\n")
	}
	return b.String(), split
}

// leaseRanOut is when the permit's lease ran out with no report by then,
// the usual reason a key is uncertain (or was, once reconciled). No event
// is stored when a lease ends, so the timeline alone would not say why the
// key is uncertain; the ledger derives the state from the lease and the
// reports, and so does this. A key made uncertain by a report of an
// unknown outcome has that report, and no such line.
func leaseRanOut(dt *ledger.Detail) (time.Time, bool) {
	if dt.Lease.IsZero() || dt.State != ledger.StateUncertain && dt.State != ledger.StateReconciled {
		return time.Time{}, false
	}
	for _, r := range dt.Reports {
		if !r.At.After(dt.Lease) {
			return time.Time{}, false
		}
	}
	return dt.Lease, true
}

// leaseLine is the timeline's derived line, marked so that it is not
// read as a stored (and chained) event.
func leaseLine(at time.Time) string {
	return fmt.Sprintf("%s  %-20s %s", when(at), "lease ran out", "(derived, not a stored event) no outcome reported by then")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return safetext.Escape(s)
}

// payload renders the retained payload, or says why there is none.
func (d *detailView) payload(dt *ledger.Detail, w int) string {
	st := d.styles
	switch {
	case !dt.Retained:
		return st.Muted.Render("body not retained (recorded outside tollgate; only its hash is known)") + "\n"
	case dt.Redacted:
		return st.Muted.Render("body withheld (redacted: only the hash is kept)") + "\n"
	case dt.Payload == nil:
		return st.StatusError.Render("payload unreadable") + "\n"
	}
	p := dt.Payload
	var b strings.Builder
	d.field(&b, "kind", safetext.Escape(p.Kind)+st.Label.Render(" · target ")+safetext.Escape(p.Target))
	b.WriteString(ansi.Wrap(safetext.EscapeMultiline(p.Body), max(w, 10), "") + "\n")
	return b.String()
}

// sideBySide shows the stored and attempted payloads in two columns, with
// the differing fields marked.
func (d *detailView) sideBySide(stored *ledger.Payload, c *ledger.ConflictRow, w int) string {
	st := d.styles
	colW := max((w-3)/2, 10)
	col := func(title string, p *ledger.Payload, redacted bool) string {
		var b strings.Builder
		b.WriteString(st.Header.Render(title) + "\n")
		if p == nil {
			if redacted {
				b.WriteString(st.Muted.Render("body withheld"))
			} else {
				b.WriteString(st.Muted.Render("not retained"))
			}
			return b.String()
		}
		for _, f := range []struct{ name, v string }{{"kind", p.Kind}, {"target", p.Target}, {"body", p.Body}} {
			label := st.Label.Render(f.name)
			if strings.Contains(c.Differs, f.name) {
				label = st.Differs.Render("≠ " + f.name)
			}
			b.WriteString(label + "\n" + ansi.Wrap(safetext.EscapeMultiline(f.v), colW, "") + "\n")
		}
		return b.String()
	}
	return columns(st, colW, col("stored", stored, stored == nil), col("attempted", c.Attempted, c.Redacted)) + "\n"
}

// columns sets two texts side by side, each colW cells wide (wrapped,
// never cut), with a rule between them.
func columns(st *Styles, colW int, left, right string) string {
	l := st.Column.Width(colW).Render(left)
	r := st.Column.Width(colW).Render(right)
	rule := strings.TrimSuffix(strings.Repeat(" │ \n", max(lipgloss.Height(l), lipgloss.Height(r))), "\n")
	return lipgloss.JoinHorizontal(lipgloss.Top, l, rule, r)
}

// honoured counts the approvals on file that count under who may decide
// now.
func (d *detailView) honoured(dt *ledger.Detail) int {
	n := 0
	for _, v := range dt.Votes {
		if ok, _ := d.auth.honours(v.Proof); ok && v.Decision == ledger.DecisionApproved {
			n++
		}
	}
	return n
}

// approvalsLine is "1 of 2 approvals (alice)": how far the quorum is,
// counting only votes the current operators honour.
func (d *detailView) approvalsLine(dt ledger.Detail) string {
	var who []string
	for _, v := range dt.Votes {
		if ok, _ := d.auth.honours(v.Proof); ok && v.Decision == ledger.DecisionApproved {
			who = append(who, safetext.Escape(v.Operator))
		}
	}
	line := fmt.Sprintf("%d of %d approvals", d.honoured(&dt), max(dt.Approvers, 1))
	if len(who) > 0 {
		line += " (" + strings.Join(who, ", ") + ")"
	}
	return line
}

// policySource says which rule decided a key's policy: "(rule refund)",
// or "(default: no rule matches)" for the default.
func policySource(pattern string) string {
	if pattern == approvals.DefaultRule().Pattern {
		return "(default: no rule matches)"
	}
	return "(rule " + safetext.Escape(pattern) + ")"
}

// ruleLine names the rule that decided a key's policy by its version
// (a rule's id: each set is a new row), its condition and the values the
// condition read, or the error that sent the key to approval (SPEC 10).
func ruleLine(r *approvals.Explain) string {
	line := fmt.Sprintf("#%d %s", r.RuleID, r.Pattern)
	if r.Condition != "" {
		line += " if " + r.Condition
	}
	if len(r.Read) > 0 {
		keys := make([]string, 0, len(r.Read))
		for k := range r.Read {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var read []string
		for _, k := range keys {
			read = append(read, fmt.Sprintf("%s=%v", k, r.Read[k]))
		}
		line += " · read " + strings.Join(read, ", ")
	}
	if r.Error != "" {
		line += " · error: " + r.Error
	}
	return safetext.Escape(line)
}

// decidedElsewhere returns what a newly loaded detail says was decided
// since the pane last showed the same key pending: who and when, or, for
// one vote of a quorum, how far it is (the action is still pending).
func (d *detailView) decidedElsewhere(prev, next *ledger.Detail) string {
	if prev == nil || next == nil || prev.Key != next.Key || prev.State != ledger.StatePending {
		return ""
	}
	if next.State == ledger.StatePending {
		if n := d.honoured(next); n > d.honoured(prev) {
			return fmt.Sprintf("%s: %s; waiting for %s", safetext.Escape(next.Key), d.approvalsLine(*next), more(max(next.Approvers, 1)-n))
		}
		return ""
	}
	if next.Decision == nil {
		return ""
	}
	dec := next.Decision
	return fmt.Sprintf("%s was %s by %s at %s", safetext.Escape(next.Key), dec.Decision, safetext.Escape(dec.Operator), when(dec.At))
}
