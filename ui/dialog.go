package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

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
	ID     int64 // conflict or fenced id for reviews
	View   viewID
}

// dialog asks for confirmation of one decision, naming every key and its
// payload digest, and collects the reason or note the decision needs.
type dialog struct {
	kind    dialogKind
	targets []target
	input   textinput.Model
	result  int // reconcile: 0 executed, 1 not-executed
	problem string
	styles  *Styles
	keys    *KeyMap
	width   int
}

// dialogDoneMsg carries a confirmed or cancelled dialog back to the root.
type dialogDoneMsg struct {
	confirmed bool
	kind      dialogKind
	targets   []target
	text      string
	result    string
}

var results = []string{"executed", "not-executed"}

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
	return &dialog{kind: kind, targets: targets, input: in, styles: st, keys: km}
}

// Init starts the input's cursor blinking.
func (d *dialog) Init() tea.Cmd { return textinput.Blink }

// setDigests fills in the digests loaded for the dialog's keys.
func (d *dialog) setDigests(ts []target) {
	if len(d.targets) != len(ts) {
		return
	}
	for i := range ts {
		if d.targets[i].Key == ts[i].Key {
			d.targets[i].Digest = ts[i].Digest
		}
	}
}

// SetSize sets the width the dialog may use.
func (d *dialog) SetSize(w, _ int) {
	d.width = w
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
		case key.Matches(km, d.keys.Confirm):
			text := strings.TrimSpace(d.input.Value())
			if d.textRequired() && text == "" {
				d.problem = "a " + strings.Fields(d.input.Placeholder)[0] + " is required"
				return d, nil
			}
			done := dialogDoneMsg{confirmed: true, kind: d.kind, targets: d.targets, text: text, result: results[d.result]}
			return d, func() tea.Msg { return done }
		case key.Matches(km, d.keys.Toggle) && d.kind == dlgReconcile:
			d.result = 1 - d.result
			return d, nil
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return d, cmd
}

// View renders the dialog box.
func (d *dialog) View() string {
	st := d.styles
	var b strings.Builder
	n := len(d.targets)
	title := fmt.Sprintf("%s %d action", dialogVerbs[d.kind], n)
	if n != 1 {
		title += "s"
	}
	b.WriteString(st.DialogTitle.Render(title+"?") + "\n")
	const shown = 8
	for i, t := range d.targets {
		if i == shown {
			b.WriteString(st.Muted.Render(fmt.Sprintf("... and %d more", n-shown)) + "\n")
			break
		}
		b.WriteString("• " + safetext.Escape(t.Key) + "\n" + st.Digest.Render("sha256 "+t.Digest) + "\n")
	}
	if d.kind == dlgReconcile {
		opts := make([]string, len(results))
		for i, r := range results {
			if i == d.result {
				opts[i] = st.ActiveTab.Render("[" + r + "]")
			} else {
				opts[i] = st.Tab.Render(" " + r + " ")
			}
		}
		b.WriteString("result: " + strings.Join(opts, " ") + "\n")
	}
	b.WriteString(d.input.View() + "\n")
	if d.problem != "" {
		b.WriteString(st.StatusError.Render(d.problem) + "\n")
	}
	b.WriteString(st.Muted.Render("enter confirm · esc cancel"))
	if d.kind == dlgReconcile {
		b.WriteString(st.Muted.Render(" · tab switch result"))
	}
	return st.Dialog.Width(max(d.width-4, 20)).Render(b.String())
}
