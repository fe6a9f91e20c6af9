package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// KeyMap is every binding of the console, in one place: the views match
// with key.Matches and the help view reads the same bindings.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextTab, PrevTab                        key.Binding
	Select, Approve, Reject, Reconcile      key.Binding
	Review, Focus, Filter, Help, Quit       key.Binding
	Confirm, Cancel, Toggle                 key.Binding
	// ScrollUp and ScrollDown move a dialog's list of keys; arrows only,
	// so that j and k can be typed into its note.
	ScrollUp, ScrollDown key.Binding
	// Views jump to a view by its number, 1 to 5.
	Views key.Binding
	// Log opens the message log.
	Log key.Binding
	// SelectAll selects every loaded pending row, or clears the selection.
	SelectAll key.Binding
	// Sort moves the order to the view's next column (Pending starts
	// with the soonest deadline); SortDir reverses its direction.
	Sort, SortDir key.Binding
	// Jump opens the prompt that moves the cursor to a key as it is
	// typed; NextMatch and PrevMatch step through its matches (or, with
	// none, through the filter's).
	Jump, NextMatch, PrevMatch key.Binding
	// CopyKey and CopyDigest put the selected row's full key or payload
	// digest on the clipboard with OSC 52, which works over SSH.
	CopyKey, CopyDigest key.Binding
	// Full opens the full view of the selected key: the whole key and
	// every field, wrapped and scrollable.
	Full key.Binding
	// StopWaiting stops waiting for a decision in flight (the ledger
	// locked by another writer, a key waiting for its touch).
	StopWaiting key.Binding
	// ForceQuit (ctrl+c) quits from any input or dialog too.
	ForceQuit key.Binding
	// TabKey and ShiftTab switch views even while the detail pane has
	// the keys, where h and l (the other keys of NextTab and PrevTab)
	// are its own.
	TabKey, ShiftTab key.Binding
	// pages, ends, match, sort and copy name two bindings each on the
	// help page, which must fit 60x20; no key is matched against them.
	pages, ends, match, sort, copy key.Binding
}

// DefaultKeyMap returns the console's bindings: vim and arrow keys move.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:      key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown:    key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:         key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Bottom:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "bottom")),
		NextTab:     key.NewBinding(key.WithKeys("tab", "right", "l"), key.WithHelp("tab", "next view")),
		PrevTab:     key.NewBinding(key.WithKeys("shift+tab", "left", "h"), key.WithHelp("shift+tab", "previous view")),
		Select:      key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "select")),
		Approve:     key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "approve")),
		Reject:      key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reject")),
		Reconcile:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "reconcile")),
		Review:      key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "mark reviewed")),
		Focus:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "scroll details")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:        key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Confirm:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm")),
		Cancel:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Toggle:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "switch result")),
		ScrollUp:    key.NewBinding(key.WithKeys("up", "pgup"), key.WithHelp("↑", "scroll keys up")),
		ScrollDown:  key.NewBinding(key.WithKeys("down", "pgdown"), key.WithHelp("↓", "scroll keys down")),
		Views:       key.NewBinding(key.WithKeys("1", "2", "3", "4", "5"), key.WithHelp("1-5", "jump to view")),
		Log:         key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "message log")),
		SelectAll:   key.NewBinding(key.WithKeys("*"), key.WithHelp("*", "select all / none")),
		Sort:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort: next column")),
		SortDir:     key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "sort: reverse")),
		Jump:        key.NewBinding(key.WithKeys("'"), key.WithHelp("'", "jump to key")),
		NextMatch:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next match")),
		PrevMatch:   key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous match")),
		CopyKey:     key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy key")),
		CopyDigest:  key.NewBinding(key.WithKeys("Y"), key.WithHelp("Y", "copy digest")),
		Full:        key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "full key & fields")),
		StopWaiting: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stop waiting")),
		ForceQuit:   key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		TabKey:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next view")),
		ShiftTab:    key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous view")),
		pages:       key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/dn", "page up/down")),
		ends:        key.NewBinding(key.WithKeys("g", "G"), key.WithHelp("g/G", "top/bottom")),
		match:       key.NewBinding(key.WithKeys("n", "N"), key.WithHelp("n/N", "next/prev match")),
		sort:        key.NewBinding(key.WithKeys("s", "S"), key.WithHelp("s/S", "sort column/reverse")),
		copy:        key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y/Y", "copy key/digest")),
	}
}

// ShortHelp is the one-line help.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NextTab, k.Approve, k.Reject, k.Reconcile, k.Filter, k.Help, k.Quit}
}

// FullHelp is the help page shown by ?.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.pages, k.ends},
		{k.NextTab, k.PrevTab, k.Views, k.Focus, k.Full, k.Log, k.Help, k.Quit},
		{k.Filter, k.Jump, k.match, k.sort, k.copy, k.StopWaiting},
		{k.Select, k.SelectAll, k.Approve, k.Reject, k.Reconcile, k.Review},
	}
}

// SetReadOnly disables every decision binding.
func (k *KeyMap) SetReadOnly(ro bool) {
	for _, b := range []*key.Binding{&k.Select, &k.SelectAll, &k.Approve, &k.Reject, &k.Reconcile, &k.Review} {
		b.SetEnabled(!ro)
	}
}

// matchesDecision reports whether msg is one of the decision keys (as
// they are when enabled).
func (k KeyMap) matchesDecision(msg tea.KeyMsg) bool {
	return key.Matches(msg, k.Select, k.SelectAll, k.Approve, k.Reject, k.Reconcile, k.Review)
}

// move is where a movement key takes a position: one up or down, a page
// of page lines, the top, or last; ok is false for any other key.
func (k KeyMap) move(msg tea.KeyMsg, pos, page, last int) (to int, ok bool) {
	switch {
	case key.Matches(msg, k.Up):
		return pos - 1, true
	case key.Matches(msg, k.Down):
		return pos + 1, true
	case key.Matches(msg, k.PageUp):
		return pos - page, true
	case key.Matches(msg, k.PageDown):
		return pos + page, true
	case key.Matches(msg, k.Top):
		return 0, true
	case key.Matches(msg, k.Bottom):
		return last, true
	}
	return pos, false
}
