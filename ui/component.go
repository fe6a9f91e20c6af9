package ui

import (
	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

// component is one part of the console that owns its state, as in
// soft-serve's common.Component: Update returns the component itself (so
// the root keeps what it returns), View draws it at the size SetSize gave,
// and its key bindings are its help. The root model routes messages and
// calls these and the component's own methods; it never writes a
// component's fields.
type component[T any] interface {
	Update(tea.Msg) (T, tea.Cmd)
	View() string
	SetSize(width, height int)
	help.KeyMap
}

// The console's components.
var (
	_ component[*listView]   = (*listView)(nil)
	_ component[*detailView] = (*detailView)(nil)
	_ component[*dialog]     = (*dialog)(nil)
	_ component[*unlockView] = (*unlockView)(nil)
)
