package ui

import (
	"github.com/charmbracelet/lipgloss"

	"github.com/tollgate-dev/tollgate/ledger"
)

// Styles are every style the console uses, built once from one renderer
// so that tests can pin the color profile and views never build their own.
type Styles struct {
	App       lipgloss.Style
	Tab       lipgloss.Style
	ActiveTab lipgloss.Style
	// CurrentTab is the active view in the tab bar, whose label is also
	// bracketed, so that it is marked without colour (NO_COLOR).
	CurrentTab  lipgloss.Style
	TabGap      lipgloss.Style
	Header      lipgloss.Style
	Row         lipgloss.Style
	Cursor      lipgloss.Style
	Selected    lipgloss.Style
	Muted       lipgloss.Style
	Pane        lipgloss.Style
	FocusedPane lipgloss.Style
	Label       lipgloss.Style
	Value       lipgloss.Style
	Digest      lipgloss.Style
	Differs     lipgloss.Style
	StatusBar   lipgloss.Style
	StatusError lipgloss.Style
	StatusOK    lipgloss.Style
	Dialog      lipgloss.Style
	DialogTitle lipgloss.Style
	Empty       lipgloss.Style
	Column      lipgloss.Style
	State       map[ledger.State]lipgloss.Style
	HelpKey     lipgloss.Style
	HelpDesc    lipgloss.Style
	// Soon marks a deadline within ten minutes.
	Soon lipgloss.Style
	// Spinner turns while a decision is in flight.
	Spinner lipgloss.Style
	// Banner is the loud line over the console while the ledger file is
	// not the one opened.
	Banner lipgloss.Style
}

// NewStyles builds the theme for one renderer (one terminal).
func NewStyles(r *lipgloss.Renderer) Styles {
	accent := lipgloss.AdaptiveColor{Light: "#5A4FCF", Dark: "#A49BFF"}
	muted := lipgloss.AdaptiveColor{Light: "#6C6C6C", Dark: "#8A8A8A"}
	warn := lipgloss.AdaptiveColor{Light: "#B25B00", Dark: "#FFB454"}
	bad := lipgloss.AdaptiveColor{Light: "#C0262D", Dark: "#FF6B6B"}
	good := lipgloss.AdaptiveColor{Light: "#1F7A3A", Dark: "#6BD88A"}
	s := Styles{
		App:         r.NewStyle(),
		Tab:         r.NewStyle().Padding(0, 1).Foreground(muted),
		ActiveTab:   r.NewStyle().Padding(0, 1).Bold(true).Underline(true).Foreground(accent),
		CurrentTab:  r.NewStyle().Bold(true).Underline(true).Foreground(accent),
		TabGap:      r.NewStyle().Foreground(muted),
		Header:      r.NewStyle().Bold(true).Foreground(muted),
		Row:         r.NewStyle(),
		Cursor:      r.NewStyle().Bold(true).Reverse(true),
		Selected:    r.NewStyle().Foreground(accent).Bold(true),
		Muted:       r.NewStyle().Foreground(muted),
		Pane:        r.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(muted).Padding(0, 1),
		FocusedPane: r.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(accent).Padding(0, 1),
		Label:       r.NewStyle().Foreground(muted),
		Value:       r.NewStyle(),
		Digest:      r.NewStyle().Foreground(accent),
		Differs:     r.NewStyle().Foreground(bad).Bold(true),
		StatusBar:   r.NewStyle().Foreground(muted),
		StatusError: r.NewStyle().Foreground(bad).Bold(true),
		StatusOK:    r.NewStyle().Foreground(good),
		Soon:        r.NewStyle().Foreground(warn).Bold(true),
		Spinner:     r.NewStyle().Foreground(accent),
		Banner:      r.NewStyle().Foreground(bad).Bold(true).Reverse(true),
		Dialog:      r.NewStyle().Border(lipgloss.DoubleBorder()).BorderForeground(warn).Padding(0, 1),
		DialogTitle: r.NewStyle().Bold(true).Foreground(warn),
		Empty:       r.NewStyle().Foreground(muted).Italic(true),
		Column:      r.NewStyle(),
		HelpKey:     r.NewStyle().Foreground(accent),
		HelpDesc:    r.NewStyle().Foreground(muted),
	}
	s.State = map[ledger.State]lipgloss.Style{
		ledger.StatePending:    r.NewStyle().Foreground(warn),
		ledger.StateApproved:   r.NewStyle().Foreground(good),
		ledger.StateExecuting:  r.NewStyle().Foreground(accent),
		ledger.StateUncertain:  r.NewStyle().Foreground(bad).Bold(true),
		ledger.StateRejected:   r.NewStyle().Foreground(bad),
		ledger.StateExpired:    r.NewStyle().Foreground(muted),
		ledger.StateDenied:     r.NewStyle().Foreground(bad),
		ledger.StateSucceeded:  r.NewStyle().Foreground(good),
		ledger.StateFailed:     r.NewStyle().Foreground(bad),
		ledger.StateReconciled: r.NewStyle().Foreground(good),
		ledger.StateRecorded:   r.NewStyle().Foreground(muted),
		stateConflict:          r.NewStyle().Foreground(bad),
		stateFenced:            r.NewStyle().Foreground(bad),
	}
	return s
}

// StateStyle returns the style for a state name.
func (s Styles) StateStyle(state ledger.State) lipgloss.Style {
	if st, ok := s.State[state]; ok {
		return st
	}
	return s.Value
}

// ProofStyle returns the style for a decision's proof: signed is good,
// INVALID is loud, unsigned is muted (a ledger that was never signed).
func (s Styles) ProofStyle(status string) lipgloss.Style {
	switch status {
	case proofSigned:
		return s.StatusOK
	case proofInvalid:
		return s.Differs
	}
	return s.Empty
}
