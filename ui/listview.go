package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// listView is one tab: a page of rows from the ledger, a cursor that stays
// on the same key across refreshes, a selection for batch decisions, its
// order (s, S), and the jump prompt (') with n and N through its matches.
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
	// sort indexes the view's columns (sortColumns); spec is the order.
	sort int
	spec sortSpec
	// jump is the prompt of ' (jumping while it has the keys); find is
	// the text n and N look for; jumpFrom is the row to return to on esc.
	jump     textinput.Model
	jumping  bool
	find     string
	jumpFrom int
	// want is the row under the cursor before the rows were dropped (a
	// new filter): the next load puts the cursor back on it, or says it
	// is gone; wantWhy says why it would be.
	want    *item
	wantWhy string
	// active is the ledger's active epoch, once a load has read it.
	active *string
	// scan reads a filter of All in windows of ids (scanning); gen
	// numbers the scans started, so a dropped one's windows are told.
	scan *scanState
	gen  int
}

// setActiveEpoch tells the list the ledger's active epoch, so that it
// marks the pending keys of another (stale: they can only be rejected).
func (l *listView) setActiveEpoch(e string) { l.active = &e }

// stale reports whether it is a pending key under another epoch than
// the active one: the ledger refuses to approve it (and lists it under
// Fenced too); it can only be rejected or left to expire.
func (l *listView) stale(it item) bool {
	return staleEpoch(it.State, it.Epoch, l.active)
}

// staleEpoch is stale for a state, a key's epoch and the active epoch
// (nil: not read yet, nothing is called stale).
func staleEpoch(state ledger.State, epoch string, active *string) bool {
	return active != nil && state == ledger.StatePending && epoch != *active
}

// staleMark follows "pending" in the state column of a stale key.
const staleMark = " ⊘"

// noticeMsg is a line for the message line (and the log) from a
// component, which never writes the root's state.
type noticeMsg struct {
	sev  severity
	text string
}

// notice returns the command that says text.
func notice(sev severity, text string) tea.Cmd {
	return func() tea.Msg { return noticeMsg{sev, text} }
}

// reloadMsg asks the root to reload a list (its order changed).
type reloadMsg struct{ view viewID }

func newListView(id viewID, st *Styles, km *KeyMap, now func() time.Time) *listView {
	in := textinput.New()
	in.Prompt = "'"
	in.Placeholder = "jump to key"
	in.CharLimit = 200
	return &listView{id: id, styles: st, keys: km, selected: map[string]bool{}, now: now,
		spec: defaultSort(sortColumns[id][0]), jump: in}
}

// order is the order the ledger lists the view's rows in.
func (l *listView) order() ledger.Order {
	o, _ := l.spec.server(l.id)
	return o
}

// local reports whether the loaded rows are sorted here, not by the
// ledger (a column its paging does not order by).
func (l *listView) local() bool {
	_, loc := l.spec.server(l.id)
	return loc
}

// Typing reports whether the jump prompt has the keys.
func (l *listView) Typing() bool { return l.jumping }

// Prompt is the jump prompt's line, drawn by the root where the hints go.
func (l *listView) Prompt() string { return l.jump.View() }

// setSort moves to the view's next column (next) or reverses the
// direction, and says so; the rows stay until the reload in the new
// order replaces them, so the cursor keeps its key.
func (l *listView) setSort(next bool) tea.Cmd {
	cols := sortColumns[l.id]
	switch {
	case next && len(cols) < 2:
		return notice(sevInfo, "one column only here (s)")
	case next:
		l.sort = (l.sort + 1) % len(cols)
		l.spec = defaultSort(cols[l.sort])
	default:
		l.spec.desc = !l.spec.desc
	}
	l.more = false // no page in the old order may be appended
	text := "sorted by " + l.spec.describe() + " (s next column, S reverses)"
	if l.local() {
		cur, had := l.current()
		sortItems(l.items, l.spec)
		l.keep(cur, had)
		text += "; the ledger pages by age and deadline only: the loaded rows are sorted as they load"
	}
	return tea.Batch(notice(sevInfo, text), func() tea.Msg { return reloadMsg{l.id} })
}

// keep puts the cursor back on it after the rows were reordered.
func (l *listView) keep(it item, had bool) {
	for i, x := range l.items {
		if had && x.Key == it.Key && x.ID == it.ID {
			l.cursor = i
		}
	}
	l.clamp()
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
func (l *listView) FullHelp() [][]key.Binding {
	km := l.keys
	return [][]key.Binding{l.ShortHelp(), {km.Up, km.Down, km.PageUp, km.PageDown, km.Top, km.Bottom,
		km.Sort, km.SortDir, km.Jump, km.NextMatch, km.PrevMatch, km.SelectAll}}
}

// current returns the row under the cursor.
func (l *listView) current() (item, bool) {
	if l.cursor < 0 || l.cursor >= len(l.items) {
		return item{}, false
	}
	return l.items[l.cursor], true
}

// setItems replaces the rows, keeping the cursor on the same key when it
// is still listed, and dropping selections that left the view. It
// returns the row the cursor was on when that row is no longer listed,
// and why it might have left, so that the console says so rather than
// move the cursor silently.
func (l *listView) setItems(items []item, more bool) (lost *item, why string) {
	present := map[string]bool{}
	for _, it := range items {
		present[it.Key] = true
	}
	cur, had := l.current()
	why = "decided, expired, settled or archived"
	if !had && l.want != nil {
		cur, had, why = *l.want, true, l.wantWhy
	}
	l.want = nil
	if l.local() {
		sortItems(items, l.spec)
	}
	l.items, l.more, l.loaded = items, more, true
	if had {
		found := false
		for i, it := range items {
			if it.Key == cur.Key && it.ID == cur.ID {
				l.cursor, found = i, true
				break
			}
		}
		if !found {
			lost = &cur
		}
	}
	for k := range l.selected {
		if !present[k] {
			delete(l.selected, k)
		}
	}
	l.clamp()
	return lost, why
}

func (l *listView) appendItems(items []item, more bool) {
	cur, had := l.current()
	l.items = append(l.items, items...)
	l.more = more
	if l.local() {
		sortItems(l.items, l.spec)
		l.keep(cur, had)
	}
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

// last is the last loaded row in the ledger's order, the cursor for the
// next page: the last row shown, or, when the rows are sorted here, the
// oldest (the ledger lists them newest first).
func (l *listView) last() *item {
	if len(l.items) == 0 {
		return nil
	}
	it := l.items[len(l.items)-1]
	if l.local() {
		for _, x := range l.items {
			if x.ID < it.ID {
				it = x
			}
		}
	}
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

// reset forgets the loaded rows and the cursor for a new filter; the
// next load puts the cursor back on its row, or says it was filtered out.
func (l *listView) reset(filter string) {
	if it, ok := l.current(); ok {
		l.want, l.wantWhy = &it, "filtered out"
	}
	l.items, l.loaded, l.cursor, l.offset, l.filter, l.scan = nil, false, 0, 0, filter, nil
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

// Update moves the cursor, toggles selections, sorts, and runs the jump
// prompt and n / N; decisions are the root's, which opens their dialog.
func (l *listView) Update(msg tea.Msg) (*listView, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return l, nil
	}
	if l.jumping {
		return l, l.jumpKey(km)
	}
	var cmd tea.Cmd
	to, moved := l.keys.move(km, l.cursor, l.rows(), len(l.items)-1)
	switch {
	case moved:
		l.cursor = to
	case key.Matches(km, l.keys.Select) && l.id == viewPending:
		if it, ok := l.current(); ok {
			if l.selected[it.Key] {
				delete(l.selected, it.Key)
			} else {
				l.selected[it.Key] = true
			}
			l.cursor++
		}
	case key.Matches(km, l.keys.SelectAll):
		l.toggleAll()
	case key.Matches(km, l.keys.Sort, l.keys.SortDir):
		cmd = l.setSort(key.Matches(km, l.keys.Sort))
	case key.Matches(km, l.keys.Jump):
		l.jumping, l.jumpFrom = true, l.cursor
		l.jump.SetValue("")
		cmd = l.jump.Focus()
	case key.Matches(km, l.keys.NextMatch, l.keys.PrevMatch):
		cmd = l.step(key.Matches(km, l.keys.PrevMatch))
	}
	l.clamp()
	return l, cmd
}

// jumpKey is one key in the jump prompt: the cursor moves to the first
// loaded row whose key starts with what is typed (else contains it) as
// it is typed; enter keeps it, esc goes back.
func (l *listView) jumpKey(km tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(km, l.keys.Confirm):
		l.jumping = false
		l.jump.Blur()
		l.find = strings.TrimSpace(l.jump.Value())
		if l.find == "" {
			return nil
		}
		return notice(sevInfo, l.matchText("jumped to"))
	case key.Matches(km, l.keys.Cancel):
		l.jumping = false
		l.jump.Blur()
		l.cursor = l.jumpFrom
		l.clamp()
		return nil
	}
	var cmd tea.Cmd
	l.jump, cmd = l.jump.Update(km)
	disarm(&l.jump)
	text := strings.ToLower(strings.TrimSpace(l.jump.Value()))
	if text == "" {
		return cmd
	}
	best := -1
	for i, it := range l.items {
		if strings.HasPrefix(strings.ToLower(it.Logical), text) || strings.HasPrefix(strings.ToLower(it.Key), text) {
			best = i
			break
		}
		if best < 0 && strings.Contains(strings.ToLower(it.Key), text) {
			best = i
		}
	}
	if best < 0 {
		return tea.Batch(cmd, notice(sevError, fmt.Sprintf("no loaded key matches %q (%d rows loaded; / filters the whole ledger)",
			safetext.Escape(l.jump.Value()), len(l.items))))
	}
	l.cursor = best
	l.clamp()
	return cmd
}

// matches are the loaded rows n and N step through: those whose key
// contains the jump text, or, with none, every row the filter shows.
func (l *listView) matches() []int {
	var out []int
	text := strings.ToLower(l.find)
	for i, it := range l.items {
		if text == "" || strings.Contains(strings.ToLower(it.Key), text) {
			out = append(out, i)
		}
	}
	return out
}

// step moves to the next (or previous) match, wrapping, and says which
// of how many it is.
func (l *listView) step(back bool) tea.Cmd {
	if l.find == "" && l.filter == "" {
		return notice(sevInfo, "n / N step through matches: ' jumps to a key, / filters")
	}
	ms := l.matches()
	if len(ms) == 0 {
		return notice(sevError, "no loaded row matches "+l.what())
	}
	next := -1
	if back {
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i] < l.cursor {
				next = ms[i]
				break
			}
		}
		if next < 0 {
			next = ms[len(ms)-1]
		}
	} else {
		for _, i := range ms {
			if i > l.cursor {
				next = i
				break
			}
		}
		if next < 0 {
			next = ms[0]
		}
	}
	l.cursor = next
	l.clamp()
	return notice(sevInfo, l.matchText("match"))
}

// what names what n and N look for.
func (l *listView) what() string {
	if l.find != "" {
		return fmt.Sprintf("%q", safetext.Escape(l.find))
	}
	return fmt.Sprintf("the filter %q", safetext.Escape(l.filter))
}

// matchText says where the cursor is among the matches: "match 2 of 5".
func (l *listView) matchText(verb string) string {
	ms := l.matches()
	of := fmt.Sprintf("%d", len(ms))
	if l.more {
		of += "+"
	}
	for n, i := range ms {
		if i == l.cursor {
			return fmt.Sprintf("%s %d of %s for %s (n next, N previous)", verb, n+1, of, l.what())
		}
	}
	return fmt.Sprintf("%s: %s loaded rows match %s", verb, of, l.what())
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
	first, state, third, fourth, agent := l.header(agentW > 0)
	b.WriteString(st.Header.Render(ansi.Truncate(line("  ", first, state, third, pad(fourth, timeW), agent), w, "")))
	if len(l.items) == 0 {
		b.WriteString("\n")
		scan := l.scanText()
		if !l.loaded {
			b.WriteString(st.Empty.Render("loading..."))
		} else if l.scan != nil && l.scan.running {
			b.WriteString(st.Empty.Render(wrap(scan, w)))
		} else if l.filter != "" {
			if scan != "" {
				scan = "; " + scan
			}
			b.WriteString(st.Empty.Render(wrap("Nothing here matches the filter \""+safetext.Escape(l.filter)+"\" (esc clears it"+scan+").", w)))
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
		st8 := string(it.State)
		if l.stale(it) {
			st8 += staleMark // can only be rejected; the detail pane says why
		}
		state := pad(st8, stateW)
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
	switch {
	case end < len(l.items):
	case l.scan != nil && l.scan.running:
		b.WriteString("\n" + st.Muted.Render(ansi.Truncate(l.scanText(), w, "…")))
	case l.more:
		b.WriteString("\n" + st.Muted.Render("loading more..."))
	}
	return b.String()
}

// header names the columns, the one sorted by marked with its direction
// (age, which has no column in Pending, Uncertain and All, is said in the
// key's; so is the agent where its column does not fit).
func (l *listView) header(agentShown bool) (first, state, third, fourth, agent string) {
	first, state, third, fourth, agent = "key", "state", "kind", "due", "agent"
	logView := l.id == viewConflicts || l.id == viewFenced
	if logView {
		// The rows are log entries (a retry that sent another payload, a
		// call under a stale epoch), not actions: the column says which,
		// and is not headed "state", since the key itself is in another
		// state (pending, say), which the detail pane gives as "key
		// state". An operator at 3 a.m. must not read "conflict" as the
		// key's state, and still sees at a glance that every row is a
		// conflict to review. Showing the key's state in this column
		// would need the ledger's ConflictRow to carry it (one join), not
		// one Status per row on every refresh.
		state, third, fourth = "entry", "detail", "logged"
	}
	a := " " + l.spec.arrow()
	switch l.spec.col {
	case colDue:
		fourth += a
	case colAge:
		switch {
		case logView:
			fourth += a
		case l.spec.desc:
			first = "key (newest first)"
		default:
			first = "key (oldest first)"
		}
	case colKey:
		first += a
	case colState:
		state += a
	case colKind:
		third += a
	case colAgent:
		agent += a
		if !agentShown {
			first = "key (by agent" + a + ")"
		}
	}
	return first, state, third, fourth, agent
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
