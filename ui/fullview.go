package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// fullView shows one key whole: the full key, every field, every vote
// with its proof, the payload and the timeline, wrapped and scrollable,
// over the whole body. It is the detail pane in full mode, with its own
// keys: it scrolls at once (no enter first), and f or esc closes it.
type fullView struct {
	pane *detailView
	keys *KeyMap
}

var _ component[*fullView] = (*fullView)(nil)

// fullClosedMsg says the operator closed the full view.
type fullClosedMsg struct{}

func newFullView(it item, st *Styles, km *KeyMap, auth authority) *fullView {
	p := newDetailView(st, km)
	p.full, p.auth = true, auth
	p.SetFocus(true)
	p.show(it, true)
	return &fullView{pane: p, keys: km}
}

// SetSize sets the view's outer size.
func (f *fullView) SetSize(w, h int) { f.pane.SetSize(w, h) }

// ShortHelp implements help.KeyMap.
func (f *fullView) ShortHelp() []key.Binding {
	return []key.Binding{f.keys.Up, f.keys.Down, f.keys.PageDown, f.keys.Full, f.keys.Cancel}
}

// FullHelp implements help.KeyMap.
func (f *fullView) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

// Update takes the key's detail when it arrives (tagged with the key, so
// a late answer for another is dropped), scrolls, and closes on f or esc.
func (f *fullView) Update(msg tea.Msg) (*fullView, tea.Cmd) {
	switch msg := msg.(type) {
	case detailMsg:
		f.pane.setDetail(msg)
		return f, nil
	case tea.KeyMsg:
		if key.Matches(msg, f.keys.Full, f.keys.Cancel) {
			return f, func() tea.Msg { return fullClosedMsg{} }
		}
	}
	var cmd tea.Cmd
	f.pane, cmd = f.pane.Update(msg)
	return f, cmd
}

// setAuthority re-draws the view under who may decide now.
func (f *fullView) setAuthority(a authority) { f.pane.setAuthority(a) }

// View draws the pane with its title.
func (f *fullView) View() string { return f.pane.View() }
