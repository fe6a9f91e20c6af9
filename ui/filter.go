package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// filterBar is the filter (/): its input while it has the keys, and the
// text the lists are filtered by, applied live as it is typed. The root
// reads Value after each Update and reloads the lists when it changed.
type filterBar struct {
	keys  *KeyMap
	in    textinput.Model
	value string
	on    bool
	width int
}

var _ component[*filterBar] = (*filterBar)(nil)

func newFilterBar(km *KeyMap) *filterBar {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "key, agent or kind"
	in.CharLimit = 80
	return &filterBar{keys: km, in: in}
}

// Value is the text the lists are filtered by.
func (f *filterBar) Value() string { return f.value }

// Typing reports whether the filter's input has the keys.
func (f *filterBar) Typing() bool { return f.on }

// Open gives the input the keys, starting from the filter applied.
func (f *filterBar) Open() tea.Cmd {
	f.on = true
	f.in.SetValue(f.value)
	f.in.CursorEnd()
	return f.in.Focus()
}

// Clear drops the filter (esc outside the input).
func (f *filterBar) Clear() {
	f.in.SetValue("")
	f.value = ""
}

// SetSize sets the width of the input line.
func (f *filterBar) SetSize(w, _ int) { f.width = w }

// ShortHelp implements help.KeyMap.
func (f *filterBar) ShortHelp() []key.Binding {
	return []key.Binding{f.keys.Confirm, f.keys.Cancel}
}

// FullHelp implements help.KeyMap.
func (f *filterBar) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

// Update types into the input: enter keeps the filter, esc clears it,
// anything else applies what is typed at once.
func (f *filterBar) Update(msg tea.Msg) (*filterBar, tea.Cmd) {
	if km, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(km, f.keys.Confirm):
			f.on = false
			f.in.Blur()
			return f, nil
		case key.Matches(km, f.keys.Cancel):
			f.on = false
			f.in.Blur()
			f.Clear()
			return f, nil
		}
	}
	var cmd tea.Cmd
	f.in, cmd = f.in.Update(msg)
	disarm(&f.in)
	f.value = strings.TrimSpace(f.in.Value())
	return f, cmd
}

// View is the input line.
func (f *filterBar) View() string { return f.in.View() }
