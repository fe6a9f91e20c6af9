package ui

import (
	"fmt"
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
	// top is the first line shown when the page is taller than the pane.
	top int
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

// ShortHelp implements help.KeyMap: what the hint line says while the
// page is open, how to close it among them (esc's own description, "stop
// waiting", is about decisions).
func (h *helpView) ShortHelp() []key.Binding {
	return []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close help")), h.keys.Up, h.keys.Down}
}

// FullHelp implements help.KeyMap.
func (h *helpView) FullHelp() [][]key.Binding { return h.keys.FullHelp() }

// Update scrolls a page taller than the pane (40x12); ? and esc, which
// close it, are the root's.
func (h *helpView) Update(msg tea.Msg) (*helpView, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return h, nil
	}
	if to, ok := h.keys.move(km, h.top, max(h.height-3, 1), 1<<30); ok {
		h.top = to
	}
	h.top = max(h.top, 0) // View caps it at the page's end
	return h, nil
}

// View is the page in its pane, the whole body; a page taller than the
// pane scrolls, and its last line says which lines are shown.
func (h *helpView) View() string {
	w, ht := h.width-4, h.height-2
	page := h.page(w, ht)
	lines := strings.Split(page, "\n")
	if len(lines) > ht && ht > 1 {
		room := ht - 1
		top := min(h.top, len(lines)-room)
		page = strings.Join(lines[top:top+room], "\n") + "\n" +
			h.styles.Muted.Render(fmt.Sprintf("lines %d-%d of %d · j/k scroll", top+1, top+room, len(lines)))
	}
	return h.styles.Pane.Width(h.width - 2).Render(page)
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
	// As few lines as the width allows: columns ht lines high while they
	// fit, else as many columns as fit side by side, and the page scrolls.
	var page string
	for per := max(ht, 1); per <= len(all)+max(ht, 1); per += max(ht, 1) {
		var cols []string
		for start := 0; start < len(all); start += per {
			cols = append(cols, h.model.FullHelpView([][]key.Binding{all[start:min(start+per, len(all))]})+"   ")
		}
		page = lipgloss.JoinHorizontal(lipgloss.Top, cols...)
		if lipgloss.Width(page)-3 <= w || len(cols) == 1 { // the last column's gap may overhang
			break
		}
	}
	return page
}
