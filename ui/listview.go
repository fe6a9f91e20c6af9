package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// listView is one tab: a page of rows from the ledger, a cursor that stays
// on the same key across refreshes, and a selection for batch decisions.
type listView struct {
	id viewID
	// filter is the text the rows were loaded with, for the empty state.
	filter   string
	styles   *Styles
	keys     *KeyMap
	items    []item
	cursor   int
	offset   int
	more     bool
	loaded   bool
	selected map[string]bool
	width    int
	height   int
	// now is the ledger's clock, for relative times ("in 14m").
	now func() time.Time
	// sort indexes the view's orders (sortable); the first is its default.
	sort int
}

// sortable are the orders s cycles through in each view. Pending waits
// on deadlines, so the soonest is first; conflicts and fenced calls are
// a log, newest first only.
var sortable = [viewCount][]ledger.Order{
	viewPending:   {ledger.SoonestDeadline, ledger.NewestFirst, ledger.OldestFirst},
	viewConflicts: {ledger.NewestFirst},
	viewUncertain: {ledger.NewestFirst, ledger.OldestFirst, ledger.SoonestDeadline},
	viewFenced:    {ledger.NewestFirst},
	viewAll:       {ledger.NewestFirst, ledger.OldestFirst, ledger.SoonestDeadline},
}

func newListView(id viewID, st *Styles, km *KeyMap, now func() time.Time) *listView {
	return &listView{id: id, styles: st, keys: km, selected: map[string]bool{}, now: now}
}

// order is the list's order.
func (l *listView) order() ledger.Order { return sortable[l.id][l.sort] }

// cycleOrder moves to the view's next order; false when it has one only.
// The rows stay until the reload in the new order replaces them, so the
// cursor keeps its key when the key is still in the reloaded window.
func (l *listView) cycleOrder() bool {
	if len(sortable[l.id]) < 2 {
		return false
	}
	l.sort = (l.sort + 1) % len(sortable[l.id])
	l.more = false // no page in the old order may be appended
	return true
}

// SetSize sets the rows and columns the list may use.
func (l *listView) SetSize(w, h int) {
	l.width, l.height = w, h
	l.clamp()
}

// ShortHelp implements help.KeyMap.
func (l *listView) ShortHelp() []key.Binding {
	km := l.keys
	switch l.id {
	case viewPending:
		return []key.Binding{km.Select, km.Approve, km.Reject}
	case viewUncertain:
		return []key.Binding{km.Reconcile}
	case viewConflicts, viewFenced:
		return []key.Binding{km.Review}
	}
	return []key.Binding{km.Approve, km.Reject, km.Reconcile}
}

// FullHelp implements help.KeyMap.
func (l *listView) FullHelp() [][]key.Binding { return [][]key.Binding{l.ShortHelp()} }

// current returns the row under the cursor.
func (l *listView) current() (item, bool) {
	if l.cursor < 0 || l.cursor >= len(l.items) {
		return item{}, false
	}
	return l.items[l.cursor], true
}

// setItems replaces the rows, keeping the cursor on the same key when it
// is still listed, and dropping selections that left the view.
func (l *listView) setItems(items []item, more bool) {
	present := map[string]bool{}
	for _, it := range items {
		present[it.Key] = true
	}
	cur, had := l.current()
	l.items, l.more, l.loaded = items, more, true
	if had {
		for i, it := range items {
			if it.Key == cur.Key && it.ID == cur.ID {
				l.cursor = i
				break
			}
		}
	}
	for k := range l.selected {
		if !present[k] {
			delete(l.selected, k)
		}
	}
	l.clamp()
}

func (l *listView) appendItems(items []item, more bool) {
	l.items = append(l.items, items...)
	l.more = more
}

func (l *listView) clamp() {
	if l.cursor >= len(l.items) {
		l.cursor = len(l.items) - 1
	}
	if l.cursor < 0 {
		l.cursor = 0
	}
	rows := l.rows()
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if rows > 0 && l.cursor >= l.offset+rows {
		l.offset = l.cursor - rows + 1
	}
	if l.offset < 0 {
		l.offset = 0
	}
}

// rows is how many item lines fit under the header.
func (l *listView) rows() int { return max(l.height-1, 1) }

// last is the last loaded row, the cursor for the next page.
func (l *listView) last() *item {
	if len(l.items) == 0 {
		return nil
	}
	it := l.items[len(l.items)-1]
	return &it
}

// takeMoreRequest reports whether the cursor is close enough to the end of
// the loaded rows that the next page should be fetched, once: until the
// page arrives (appendItems), it answers false, so one page is requested
// at a time.
func (l *listView) takeMoreRequest() bool {
	if !l.more || l.cursor < len(l.items)-l.rows() {
		return false
	}
	l.more = false
	return true
}

// reset forgets the loaded rows and the cursor for a new filter.
func (l *listView) reset(filter string) {
	l.items, l.loaded, l.cursor, l.offset, l.filter = nil, false, 0, 0, filter
}

// clearSelection drops every mark, after a batch was acted on.
func (l *listView) clearSelection() { l.selected = map[string]bool{} }

// selectedCount is how many rows are marked.
func (l *listView) selectedCount() int { return len(l.selected) }

// toggleAll marks every loaded row of the Pending view, or, when some are
// marked, clears the marks.
func (l *listView) toggleAll() {
	if len(l.selected) > 0 || l.id != viewPending {
		l.clearSelection()
		return
	}
	for _, it := range l.items {
		l.selected[it.Key] = true
	}
}

// loadedCount is how many rows are loaded, so a refresh reloads as many.
func (l *listView) loadedCount() int { return len(l.items) }

// Height is the rows the list was given.
func (l *listView) Height() int { return l.height }

// Update moves the cursor and toggles selections; decisions are routed
// by the root model.
func (l *listView) Update(msg tea.Msg) (*listView, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return l, nil
	}
	switch {
	case key.Matches(km, l.keys.Up):
		l.cursor--
	case key.Matches(km, l.keys.Down):
		l.cursor++
	case key.Matches(km, l.keys.PageUp):
		l.cursor -= l.rows()
	case key.Matches(km, l.keys.PageDown):
		l.cursor += l.rows()
	case key.Matches(km, l.keys.Top):
		l.cursor = 0
	case key.Matches(km, l.keys.Bottom):
		l.cursor = len(l.items) - 1
	case key.Matches(km, l.keys.Select) && l.id == viewPending:
		if it, ok := l.current(); ok {
			if l.selected[it.Key] {
				delete(l.selected, it.Key)
			} else {
				l.selected[it.Key] = true
			}
			l.cursor++
		}
	}
	l.clamp()
	return l, nil
}

// chosen returns the selected rows, or the row under the cursor.
func (l *listView) chosen() []item {
	var out []item
	for _, it := range l.items {
		if l.selected[it.Key] {
			out = append(out, it)
		}
	}
	if len(out) == 0 {
		if it, ok := l.current(); ok {
			out = append(out, it)
		}
	}
	return out
}

var emptyText = [viewCount]string{
	"No pending approvals. Agents that guard an action with an approval policy appear here; press tab for other views.",
	"No conflicts to review. A retry that reuses a key with a different payload appears here.",
	"No uncertain outcomes. A permit whose lease ran out without a report appears here for reconciling.",
	"No fenced calls. Calls under a stale operator epoch appear here.",
	"The ledger is empty. Agents record actions with `tollgate guard KEY ...`; try `tollgate demo`.",
}

// View renders the header and the visible rows. Every untrusted field is
// escaped before it is measured or cut.
func (l *listView) View() string {
	st := l.styles
	w := max(l.width, 20)
	stateW, kindW, timeW := 10, 14, 11
	keyW := max(w-stateW-kindW-timeW-16, 12)
	agentW := max(w-keyW-stateW-kindW-timeW-7, 6)
	switch {
	case w >= 100:
		// Wide: the agent's name whole too, not only a longer key.
		agentW = min(w/6, 24)
		keyW = w - stateW - kindW - timeW - agentW - 7
	case w < 80:
		// Narrow: the key is what tells rows apart; the agent is in the
		// detail pane.
		kindW, agentW = 8, 0
		keyW = max(w-stateW-kindW-timeW-5, 12)
	}
	line := func(sel, key, state, kind, when, agent string) string {
		out := sel + pad(key, keyW) + " " + pad(state, stateW) + " " + pad(kind, kindW) + " " + when
		if agentW > 0 {
			out += " " + pad(agent, agentW)
		}
		return out
	}
	var b strings.Builder
	first, third, fourth := "key", "kind", "due"
	switch {
	case l.id == viewConflicts || l.id == viewFenced:
		third, fourth = "detail", "logged"
	case l.order() == ledger.SoonestDeadline:
		fourth = "due ▲" // soonest first
	case l.order() == ledger.OldestFirst:
		first = "key (oldest first)"
	}
	b.WriteString(st.Header.Render(ansi.Truncate(line("  ", first, "state", third, pad(fourth, timeW), "agent"), w, "")))
	if len(l.items) == 0 {
		b.WriteString("\n")
		if !l.loaded {
			b.WriteString(st.Empty.Render("loading..."))
		} else if l.filter != "" {
			b.WriteString(st.Empty.Render(wrap("Nothing here matches the filter \""+safetext.Escape(l.filter)+"\" (esc clears it).", w)))
		} else {
			b.WriteString(st.Empty.Render(wrap(emptyText[l.id], w)))
		}
		return b.String()
	}
	now := l.now()
	end := min(l.offset+l.rows(), len(l.items))
	for i := l.offset; i < end; i++ {
		it := l.items[i]
		// The cursor and the marks are characters, not only colour, so a
		// terminal with NO_COLOR (or none) still shows them.
		mark := []rune("  ")
		if i == l.cursor {
			mark[0] = '›'
		}
		if l.selected[it.Key] {
			mark[1] = '●'
		}
		third, when := it.Kind, pad(relative(it.Deadline, now), timeW)
		if it.Conflict != nil || it.Fenced != nil {
			third, when = it.Note, pad(relative(it.At, now), timeW)
		} else if left := it.Deadline.Sub(now); i != l.cursor && !it.Deadline.IsZero() && left > 0 && left <= 10*time.Minute {
			when = st.Soon.Render(when) // due within ten minutes
		}
		state := pad(string(it.State), stateW)
		if i != l.cursor {
			state = st.StateStyle(it.State).Render(state) // the word is always there; colour adds to it
		}
		text := line(string(mark), cutMiddle(safetext.Escape(it.Logical), keyW), state, safetext.Escape(third), when, safetext.Escape(it.Agent))
		text = ansi.Truncate(text, w, "…")
		b.WriteString("\n")
		switch {
		case i == l.cursor:
			b.WriteString(st.Cursor.Render(pad(text, w)))
		case l.selected[it.Key]:
			b.WriteString(st.Selected.Render(text))
		default:
			b.WriteString(st.Row.Render(text))
		}
	}
	if l.more && end == len(l.items) {
		b.WriteString("\n" + st.Muted.Render("loading more..."))
	}
	return b.String()
}

// cutMiddle fits s in w cells by cutting its middle, so that keys that
// differ only at their ends (refund:customer-4411-2026-12-01-a and -b)
// still look different; s must be escaped text.
func cutMiddle(s string, w int) string {
	n := ansi.StringWidth(s)
	if n <= w {
		return s
	}
	if w < 3 {
		return ansi.Truncate(s, w, "")
	}
	head := (w - 1) / 2
	tail := w - 1 - head
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, n-tail, "")
}

// pad cuts or fills s to exactly w cells.
func pad(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// wrap breaks plain text into lines of at most w cells.
func wrap(s string, w int) string {
	return ansi.Wrap(s, max(w, 10), " ")
}

// relative is a time as lists show it, against the ledger's clock: "in
// 14m", "now", "3m ago", "-" for none.
func relative(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	switch d := t.Sub(now); {
	case d > 0:
		return "in " + short(d)
	case d == 0:
		return "now"
	}
	return short(now.Sub(t)) + " ago"
}

// short is a duration in its largest unit or two: 45s, 14m, 3h05m, 2d.
func short(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
