package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// helpView is the help page (?), every binding of the console, and the
// one-line hints under every screen. It draws what the components' key
// maps say, so the help cannot miss a binding a component has.
type helpView struct {
	styles *Styles
	keys   *KeyMap
	model  help.Model
	width  int
	height int
}

var _ component[*helpView] = (*helpView)(nil)

func newHelpView(st *Styles, km *KeyMap) *helpView {
	h := &helpView{styles: st, keys: km, model: help.New()}
	h.model.Styles.ShortKey, h.model.Styles.FullKey = st.HelpKey, st.HelpKey
	h.model.Styles.ShortDesc, h.model.Styles.FullDesc = st.HelpDesc, st.HelpDesc
	return h
}

// SetSize sets the page's outer size, border included.
func (h *helpView) SetSize(w, ht int) {
	h.width, h.height = w, ht
	h.model.Width = w
}

// ShortHelp implements help.KeyMap.
func (h *helpView) ShortHelp() []key.Binding { return []key.Binding{h.keys.Help, h.keys.Cancel} }

// FullHelp implements help.KeyMap.
func (h *helpView) FullHelp() [][]key.Binding { return h.keys.FullHelp() }

// Update does nothing: ? and esc, which close the page, are the root's.
func (h *helpView) Update(tea.Msg) (*helpView, tea.Cmd) { return h, nil }

// View is the page in its pane, the whole body.
func (h *helpView) View() string {
	return h.styles.Pane.Width(h.width - 2).Render(h.page(h.width-4, h.height-2))
}

// hints is the one-line help: what fits of bs, then "? help" and "q
// quit", which are never cut off; loose (a dialog, the passphrase) shows
// bs alone, as bubbles cuts them.
func (h *helpView) hints(bs []key.Binding, w int, loose bool) string {
	if loose {
		return h.model.ShortHelpView(bs)
	}
	tail := h.model.ShortHelpView([]key.Binding{h.keys.Help, h.keys.Quit})
	sep := h.model.Styles.ShortSeparator.Render(" • ")
	room := w - lipgloss.Width(tail) - lipgloss.Width(sep)
	// Bindings one by one while they fit, with room kept for "…" (bubbles'
	// own cut keeps adding items once its ellipsis no longer fits).
	var parts []string
	used := 0
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		item := h.model.Styles.ShortKey.Render(b.Help().Key) + " " + h.model.Styles.ShortDesc.Render(b.Help().Desc)
		iw := lipgloss.Width(item) + lipgloss.Width(sep)
		if used+iw > room-2 {
			parts = append(parts, h.model.Styles.Ellipsis.Render("…"))
			break
		}
		parts, used = append(parts, item), used+iw
	}
	return strings.Join(append(parts, tail), sep)
}

// page shows every binding in w cells and ht lines: its groups side by
// side while they fit the width, the rest on further rows; when that is
// too tall (60x20), every binding in columns ht lines high, so nothing
// is dropped.
func (h *helpView) page(w, ht int) string {
	var rows []string
	var row []string
	rowW := 0
	for _, col := range h.keys.FullHelp() {
		view := h.model.FullHelpView([][]key.Binding{col})
		cw := lipgloss.Width(view) + 4
		if len(row) > 0 && rowW+cw > w {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, rowW = nil, 0
		}
		row, rowW = append(row, view+"    "), rowW+cw
	}
	rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	grouped := strings.Join(rows, "\n\n")
	if lipgloss.Height(grouped) <= ht {
		return grouped
	}
	var all []key.Binding
	for _, col := range h.keys.FullHelp() {
		all = append(all, col...)
	}
	var cols []string
	for start := 0; start < len(all); start += max(ht, 1) {
		cols = append(cols, h.model.FullHelpView([][]key.Binding{all[start:min(start+max(ht, 1), len(all))]})+"   ")
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, cols...)
}
