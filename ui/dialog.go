package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// dialogKind is the decision a dialog confirms.
type dialogKind int

const (
	dlgApprove dialogKind = iota
	dlgReject
	dlgReconcile
	dlgReview
)

var dialogVerbs = map[dialogKind]string{dlgApprove: "Approve", dlgReject: "Reject", dlgReconcile: "Reconcile", dlgReview: "Mark reviewed"}

// target is one key a dialog acts on, with the digest the operator is
// deciding about.
type target struct {
	Key    string
	Digest string
	// Kind and Subject are the payload's kind and target: what the action
	// is, beside the digest that binds it.
	Kind    string
	Subject string
	// Attempt is, for a conflict, the retry's payload (the stored one is
	// Digest, Kind and Subject): the review shows both, side by side.
	Attempt *attempt
	ID      int64 // conflict or fenced id for reviews
	View    viewID
}

// attempt is a conflicting retry's payload as the review dialog shows it.
type attempt struct {
	Digest, Kind, Subject string
	// Withheld: the attempted body was redacted or not kept.
	Withheld bool
}

// dialog asks for confirmation of one decision, naming every key and its
// payload digest, and collects the reason or note the decision needs.
type dialog struct {
	kind    dialogKind
	targets []target
	input   textinput.Model
	result  int // reconcile: -1 none chosen yet, else an index of results
	problem string
	styles  *Styles
	keys    *KeyMap
	width   int
	height  int
	// offset is the first key shown when the list does not fit.
	offset int
	// lineOff is the first line of the shown key's kind and target when
	// that key alone does not fit: ↑/↓ scroll through it before moving
	// to another key, and its key and digest stay on screen meanwhile.
	lineOff int
	// changed says what changed under the open dialog (keys decided,
	// expired or settled elsewhere, which left it); askAgain holds the
	// next enter, which only acknowledges the change.
	changed  []string
	askAgain bool
}

// dialogDoneMsg carries a confirmed or cancelled dialog back to the root.
type dialogDoneMsg struct {
	confirmed bool
	kind      dialogKind
	targets   []target
	text      string
	result    ledger.Result
}

// results are the reconciliation results tab cycles through, in the
// ledger's own vocabulary.
var results = []ledger.Result{ledger.ResultExecuted, ledger.ResultNotExecuted}

func newDialog(kind dialogKind, targets []target, st *Styles, km *KeyMap) *dialog {
	in := textinput.New()
	in.CharLimit = 500
	switch kind {
	case dlgReject:
		in.Placeholder = "reason (required)"
	case dlgReconcile:
		in.Placeholder = "note: what you checked (required)"
	default:
		in.Placeholder = "note (optional)"
	}
	in.Focus()
	return &dialog{kind: kind, targets: targets, input: in, styles: st, keys: km, result: -1}
}

// wantState is the state a decision applies to ("" for a review, which
// applies to log entries).
func wantState(kind dialogKind) ledger.State {
	switch kind {
	case dlgApprove, dlgReject:
		return ledger.StatePending
	case dlgReconcile:
		return ledger.StateUncertain
	}
	return ""
}

// recheck compares the dialog's keys with a reload of view: a key that
// left the view, or whose state is no longer the one the decision
// applies to, leaves the dialog, which then says what changed and asks
// again. A key not in a window that has more rows is left as it is. It
// returns the changes, one line each, already escaped.
func (d *dialog) recheck(v viewID, items []item, more bool) []string {
	var keep []target
	var changed []string
	want := wantState(d.kind)
	for _, t := range d.targets {
		i := slices.IndexFunc(items, func(it item) bool { return it.Key == t.Key && it.ID == t.ID })
		key := shownKey(t.Key)
		switch {
		case t.View != v || i < 0 && more:
			keep = append(keep, t)
		case i < 0:
			changed = append(changed, key+" left "+viewTitles[v]+": decided or settled elsewhere")
		case want != "" && items[i].State != want:
			changed = append(changed, fmt.Sprintf("%s is now %s", key, items[i].State))
		default:
			keep = append(keep, t)
		}
	}
	if len(changed) > 0 {
		d.targets, d.askAgain = keep, true
		d.offset = min(d.offset, max(len(keep)-1, 0))
		d.lineOff = 0
		d.changed = append(d.changed, changed...)
	}
	return changed
}

// Init starts the input's cursor blinking.
func (d *dialog) Init() tea.Cmd { return textinput.Blink }

// setDigests fills in what was loaded for the dialog's keys: digest,
// kind and target.
func (d *dialog) setDigests(ts []target) {
	if len(d.targets) != len(ts) {
		return
	}
	for i := range ts {
		if d.targets[i].Key == ts[i].Key {
			d.targets[i] = ts[i]
		}
	}
}

// SetSize sets the room the dialog may use; its keys scroll within it,
// and the note field and the confirm line always stay on screen.
func (d *dialog) SetSize(w, h int) {
	d.width, d.height = w, h
	d.input.Width = max(w-8, 10)
}

// ShortHelp implements help.KeyMap.
func (d *dialog) ShortHelp() []key.Binding {
	if d.kind == dlgReconcile {
		return []key.Binding{d.keys.Confirm, d.keys.Toggle, d.keys.Cancel}
	}
	return []key.Binding{d.keys.Confirm, d.keys.Cancel}
}

// FullHelp implements help.KeyMap.
func (d *dialog) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }

func (d *dialog) textRequired() bool { return d.kind == dlgReject || d.kind == dlgReconcile }

// Update handles typing, confirming and cancelling.
func (d *dialog) Update(msg tea.Msg) (*dialog, tea.Cmd) {
	if km, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(km, d.keys.Cancel):
			return d, func() tea.Msg { return dialogDoneMsg{kind: d.kind, targets: d.targets} }
		case key.Matches(km, d.keys.Confirm) && len(d.targets) == 0:
			return d, func() tea.Msg { return dialogDoneMsg{kind: d.kind} }
		case key.Matches(km, d.keys.Confirm) && d.askAgain:
			d.askAgain = false // seen: the next enter decides what is listed
			return d, nil
		case key.Matches(km, d.keys.Confirm):
			text := strings.TrimSpace(d.input.Value())
			if d.kind == dlgReconcile && d.result < 0 {
				// No default: executed or not-executed is the operator's
				// finding, never a preselected answer.
				d.problem = resultProblem
				return d, nil
			}
			if d.textRequired() && text == "" {
				d.problem = d.textProblem()
				return d, nil
			}
			done := dialogDoneMsg{confirmed: true, kind: d.kind, targets: d.targets, text: text}
			if d.kind == dlgReconcile {
				done.result = results[d.result]
			}
			return d, func() tea.Msg { return done }
		case key.Matches(km, d.keys.Toggle) && d.kind == dlgReconcile:
			d.result = (d.result + 1) % len(results)
			if d.problem == resultProblem {
				d.problem = "" // answered: a stale problem would read as a refusal
			}
			return d, nil
		case key.Matches(km, d.keys.ScrollUp):
			if d.lineOff = min(d.lineOff, d.hidden()); d.lineOff > 0 {
				d.lineOff--
				return d, nil
			}
			d.offset = max(d.offset-1, 0)
			return d, nil
		case key.Matches(km, d.keys.ScrollDown):
			if d.lineOff < d.hidden() {
				d.lineOff++
				return d, nil
			}
			if next := min(d.offset+1, max(len(d.targets)-1, 0)); next != d.offset {
				d.offset, d.lineOff = next, 0
			}
			return d, nil
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	disarm(&d.input)
	if d.problem == d.textProblem() && strings.TrimSpace(d.input.Value()) != "" {
		d.problem = "" // typed: the text is no longer missing
	}
	return d, cmd
}

// resultProblem is what the reconcile dialog says to enter with no
// result chosen.
var resultProblem = fmt.Sprintf("choose the result first: tab switches between %s and %s", ledger.ResultExecuted, ledger.ResultNotExecuted)

// textProblem is what the dialog says to enter with no reason or note
// where one is required.
func (d *dialog) textProblem() string { return "a " + d.needs() + " is required" }

// needs names the text a decision requires.
func (d *dialog) needs() string {
	if d.kind == dlgReject {
		return "reason"
	}
	return "note"
}

// disarm shows a control or format character typed or pasted into an
// input as its escape (safetext.Disarm), in what is shown and what is
// stored: a note never carries a bidi override into the ledger unseen.
func disarm(in *textinput.Model) {
	if v := in.Value(); safetext.Disarm(v) != v {
		in.SetValue(safetext.Disarm(v))
		in.CursorEnd()
	}
}

// View renders the dialog box within the height SetSize gave: the title,
// as many keys as fit (each with its kind, target and digest, wrapped,
// never cut), a position line when they do not all fit, then the result
// choice, the note field, any problem and the confirm line, which always
// stay on screen. A key too long to fit alone keeps its name and digest
// on screen and scrolls its kind and target between them.
func (d *dialog) View() string {
	st := d.styles
	inner, tail, room := d.layout()
	n := len(d.targets)
	// A review marks a log entry, not an action, whose key keeps its
	// own state: the title says which entry.
	noun := "action"
	switch {
	case d.kind == dlgReview && n > 0 && d.targets[0].View == viewFenced:
		noun = "fenced call"
	case d.kind == dlgReview:
		noun = "conflict"
	}
	title := fmt.Sprintf("%s %d %s", dialogVerbs[d.kind], n, noun)
	if n != 1 {
		title += "s"
	}
	blocks := make([]string, n)
	for i, t := range d.targets {
		blocks[i] = d.block(t, inner, -1)
	}
	if n > 0 && lineCount(blocks[min(d.offset, n-1):min(d.offset, n-1)+1]) > room {
		i := min(d.offset, n-1)
		if d.hidden() > 0 {
			blocks[i] = d.block(d.targets[i], inner, room)
		} else {
			// Not even its name and digest fit (40x12): it is cut after
			// its name, never what to press. The name is the logical key
			// on one line, as the list shows it: the first line of the
			// full key is its epoch, which names no key at all.
			t := d.targets[i]
			head, what, digest := d.parts(t, inner)
			lines := slices.Concat([]string{"• " + cutMiddle(safetext.Escape(logical(t.Key)), inner-2)}, what, digest)
			if len(head) == 1 {
				lines[0] = head[0] // the whole key fits on its line
			}
			blocks[i] = strings.Join(append(lines[:max(room-1, 1)], st.Muted.Render("  …")), "\n")
		}
	}
	first := min(d.offset, max(n-1, 0))
	last, used := first, 0
	for last < n && (last == first || used+lineCount([]string{blocks[last]}) <= room) {
		used += lineCount([]string{blocks[last]})
		last++
	}
	parts := []string{st.DialogTitle.Render(title + "?")}
	parts = append(parts, blocks[first:last]...)
	if first > 0 || last < n {
		parts = append(parts, st.Muted.Render(fmt.Sprintf("keys %d-%d of %d", first+1, last, n)))
	}
	parts = append(parts, tail...)
	return st.Dialog.Width(max(d.width-4, 20)).Render(strings.Join(parts, "\n"))
}

// layout is the dialog's inner width, the lines that always stay at its
// foot (result choice, note, problem, changes, what to press) and the
// lines left for the keys.
func (d *dialog) layout() (inner int, tail []string, room int) {
	st := d.styles
	inner = max(d.width-6, 14) // the style's width less its padding
	n := len(d.targets)
	if d.kind == dlgReconcile {
		opts := make([]string, len(results))
		for i, r := range results {
			if i == d.result {
				opts[i] = st.ActiveTab.Render("[" + string(r) + "]")
			} else {
				opts[i] = st.Tab.Render(" " + string(r) + " ")
			}
		}
		tail = append(tail, "result: "+strings.Join(opts, " "))
	}
	tail = append(tail, d.input.View())
	if d.problem != "" {
		tail = append(tail, wrap(st.StatusError.Render(d.problem), inner))
	}
	changes := d.changes(inner, maxChanges)
	if lineCount(append(tail, changes...))+4 > d.height {
		changes = d.changes(inner, 1) // a small screen: the latest only
	}
	tail = append(tail, changes...)
	hint := "enter confirm · esc cancel"
	switch {
	case n == 0:
		hint = "nothing left to decide · enter or esc closes"
	case d.askAgain:
		hint = "changed while open: enter to go on with the keys listed · esc cancel"
	}
	if d.kind == dlgReconcile && n > 0 {
		hint += " · tab switch result"
	}
	if n > 1 {
		hint += " · ↑/↓ scroll keys"
	}
	tail = append(tail, st.Muted.Render(wrap(hint, inner)))
	// Lines left for the keys: the height less the border, the title,
	// the tail and one line for the position.
	room = d.height - 2 - 1 - lineCount(tail) - 1
	return inner, tail, room
}

// hidden is how many lines of the shown key's kind and target are off
// screen when that key alone does not fit, with its name, its digest and
// a position line kept; 0 when it fits, or when not even those fit.
func (d *dialog) hidden() int {
	if len(d.targets) == 0 {
		return 0
	}
	t := d.targets[min(d.offset, len(d.targets)-1)]
	if t.Attempt != nil {
		return 0
	}
	inner, _, room := d.layout()
	head, what, digest := d.parts(t, inner)
	avail := room - len(head) - len(digest) - 1
	if avail < 1 || len(head)+len(what)+len(digest) <= room {
		return 0
	}
	return max(len(what)-avail, 0)
}

// maxChanges is how many changes the dialog lists; the message log has
// every one.
const maxChanges = 3

// changes are the lines saying what changed under the dialog, the most
// recent, loud until acknowledged, then muted.
func (d *dialog) changes(width, most int) []string {
	if len(d.changed) == 0 {
		return nil
	}
	style := d.styles.Muted
	if d.askAgain {
		style = d.styles.StatusError
	}
	shown := d.changed[max(len(d.changed)-most, 0):]
	out := make([]string, 0, len(shown)+1)
	for _, c := range shown {
		out = append(out, style.Render(wrap("changed: "+c, width)))
	}
	if n := len(d.changed) - len(shown); n > 0 {
		out = append(out, style.Render(fmt.Sprintf("and %d more changes (L lists them)", n)))
	}
	return out
}

// block is one key as the dialog lists it: the full key, then what the
// action is (kind and target) and its digest, each wrapped to width.
// With room >= 0 the block is fitted into room lines: the key and digest
// whole, and the window of kind and target from d.lineOff with its
// position between them.
func (d *dialog) block(t target, width, room int) string {
	head, what, digest := d.parts(t, width)
	if t.Attempt != nil {
		return head[0] + "\n" + d.sides(t, width)
	}
	if room >= 0 {
		avail := max(room-len(head)-len(digest)-1, 1)
		from := min(d.lineOff, max(len(what)-avail, 0))
		to := min(from+avail, len(what))
		pos := d.styles.Muted.Render(fmt.Sprintf("  kind and target: lines %d-%d of %d · ↑/↓ scroll", from+1, to, len(what)))
		what = append(what[from:to:to], pos)
	}
	return strings.Join(slices.Concat(head, what, digest), "\n")
}

// parts are a key's lines in the dialog: its name, what the action is
// (kind and target, indented under it) and its digest, each wrapped to
// width. The indent is added after wrapping, so a kind longer than a line
// starts beside it rather than under an empty line.
func (d *dialog) parts(t target, width int) (head, what, digest []string) {
	head = strings.Split(wrap("• "+safetext.Escape(t.Key), width), "\n")
	w := safetext.Escape(t.Kind)
	if t.Subject != "" {
		w += " · target " + safetext.Escape(t.Subject)
	}
	if w != "" {
		for _, l := range strings.Split(wrap(w, width-2), "\n") {
			what = append(what, "  "+l)
		}
	}
	sum := "loading..."
	if t.Digest != "" {
		sum = t.Digest
	}
	digest = strings.Split(wrap(d.styles.Digest.Render("  sha256 "+sum), width), "\n")
	return head, what, digest
}

// lineCount counts the terminal lines of rendered parts.
func lineCount(parts []string) int {
	n := 0
	for _, p := range parts {
		n += strings.Count(p, "\n") + 1
	}
	return n
}

// sides shows a conflict's stored payload and the attempt beside it, each
// complete: kind, target and digest, wrapped within its column.
func (d *dialog) sides(t target, width int) string {
	st := d.styles
	colW := max((width-5)/2, 10)
	side := func(title, kind, subject, digest string, withheld bool) string {
		if digest == "" {
			digest = "loading..."
		}
		lines := []string{st.Header.Render(title), "kind " + orDash(kind), "target " + orDash(subject)}
		if withheld {
			lines = append(lines, st.Muted.Render("(body withheld)"))
		}
		lines = append(lines, st.Label.Render("sha256"), st.Digest.Render(digest))
		return ansi.Wrap(strings.Join(lines, "\n"), colW, "")
	}
	a := t.Attempt
	stored := side("stored", t.Kind, t.Subject, t.Digest, false)
	attempted := side("attempted", a.Kind, a.Subject, a.Digest, a.Withheld)
	return indent(columns(st, colW, stored, attempted), "  ")
}

// indent puts prefix before every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
