package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/safetext"
)

// LockedKey is an operator key that needs its passphrase before it can
// sign (opkeys.Key implements it). The console asks for the passphrase
// itself, without echo, because once it owns the terminal nothing else
// may read from it.
type LockedKey interface {
	// String names the key (its file) in the prompt.
	String() string
	// Locked reports whether the passphrase is still needed.
	Locked() bool
	// Unlock decrypts the key; it may take a moment (the key's KDF), so
	// the console calls it in a command.
	Unlock(passphrase []byte) error
}

// unlockView asks for the passphrase of each locked key in turn. What is
// typed is never drawn (not even as dots: the length is not shown
// either) and is dropped from the input once submitted.
type unlockView struct {
	locked  []LockedKey
	input   textinput.Model
	problem string
	busy    bool
	styles  *Styles
	keys    *KeyMap
	width   int
	height  int
}

// unlockedMsg reports an attempt to unlock a key.
type unlockedMsg struct {
	key LockedKey
	err error
}

// unlockDoneMsg says the operator dismissed the prompt (esc) or every
// key is unlocked.
type unlockDoneMsg struct{ skipped bool }

func newUnlockView(locked []LockedKey, st *Styles, km *KeyMap) *unlockView {
	in := textinput.New()
	in.Prompt = "passphrase: "
	in.EchoMode = textinput.EchoNone
	in.CharLimit = 1024
	in.Focus()
	return &unlockView{locked: locked, input: in, styles: st, keys: km}
}

// current is the first key still locked, nil when none is.
func (u *unlockView) current() LockedKey {
	for _, k := range u.locked {
		if k.Locked() {
			return k
		}
	}
	return nil
}

// Init starts the cursor blinking.
func (u *unlockView) Init() tea.Cmd { return textinput.Blink }

// SetSize sets the room the prompt may use.
func (u *unlockView) SetSize(w, h int) { u.width, u.height = w, h }

// ShortHelp implements help.KeyMap.
func (u *unlockView) ShortHelp() []key.Binding {
	return []key.Binding{u.keys.Confirm, u.keys.Cancel}
}

// FullHelp implements help.KeyMap.
func (u *unlockView) FullHelp() [][]key.Binding { return [][]key.Binding{u.ShortHelp()} }

// Update takes the passphrase; enter tries it in a command, esc leaves
// the key locked (decisions then ask again).
func (u *unlockView) Update(msg tea.Msg) (*unlockView, tea.Cmd) {
	switch msg := msg.(type) {
	case unlockedMsg:
		u.busy = false
		if msg.err != nil {
			u.problem = msg.err.Error()
			return u, nil
		}
		u.problem = ""
		if u.current() == nil {
			return u, func() tea.Msg { return unlockDoneMsg{} }
		}
		return u, nil
	case tea.KeyMsg:
		if u.busy {
			return u, nil
		}
		switch {
		case key.Matches(msg, u.keys.Cancel):
			u.input.Reset()
			return u, func() tea.Msg { return unlockDoneMsg{skipped: true} }
		case key.Matches(msg, u.keys.Confirm):
			k := u.current()
			if k == nil {
				return u, func() tea.Msg { return unlockDoneMsg{} }
			}
			pass := []byte(u.input.Value())
			u.input.Reset()
			u.busy, u.problem = true, ""
			return u, func() tea.Msg { return unlockedMsg{key: k, err: k.Unlock(pass)} }
		}
	}
	var cmd tea.Cmd
	u.input, cmd = u.input.Update(msg)
	return u, cmd
}

// View renders the prompt: which key, the input (which shows nothing of
// what is typed), any problem and the keys that act.
func (u *unlockView) View() string {
	st := u.styles
	inner := max(u.width-6, 14)
	k := u.current()
	if k == nil {
		return st.Dialog.Width(max(u.width-4, 20)).Render(st.DialogTitle.Render("Key unlocked"))
	}
	lines := []string{
		st.DialogTitle.Render("Operator key is passphrase-protected"),
		wrap("key "+safetext.Escape(k.String()), inner),
		wrap(st.Muted.Render("Decisions on this ledger are signed with it. What you type is not shown."), inner),
		u.input.View(),
	}
	switch {
	case u.busy:
		lines = append(lines, st.Muted.Render("checking..."))
	case u.problem != "":
		lines = append(lines, wrap(st.StatusError.Render(safetext.Escape(u.problem)), inner))
	}
	lines = append(lines, st.Muted.Render(fmt.Sprintf("enter unlock · esc %s", "skip (decisions will ask again)")))
	return st.Dialog.Width(max(u.width-4, 20)).Render(strings.Join(lines, "\n"))
}
