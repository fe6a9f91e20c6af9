package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// holderEvery is how often a decision in flight asks who holds the
// ledger's write lock; the first look waits holderFirst, so that a write
// that goes through at once never looks.
const (
	holderFirst = 250 * time.Millisecond
	holderEvery = time.Second
)

// Both messages name the flight they are for: a late one for a decision
// that has landed is dropped.
type (
	holderTickMsg struct{ f *flight }
	// holderMsg names who holds the ledger's write lock ("" when nobody
	// else does, or it cannot be told).
	holderMsg struct {
		f      *flight
		holder string
	}
)

func holderTick(f *flight, d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return holderTickMsg{f} })
}

// lookupHolder asks, in a command, which other process holds the write
// lock of the ledger file (see lockHolder).
func lookupHolder(f *flight) tea.Cmd {
	file := f.file
	return func() tea.Msg { return holderMsg{f: f, holder: lockHolder(file)} }
}
