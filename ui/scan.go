package ui

import (
	"context"
	"fmt"
	"strconv"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/ledger"
)

// defaultScanWindow is how many ids one step of a scan reads. Since
// schema 12 the projection indexes only open work, so a filter of the All
// view reads every row until it has a page: read in windows of ids, one
// command each, the screen shows how far it has come between them and a
// new filter or esc drops the rest.
const defaultScanWindow = 20_000

// scanning reports whether q is read by a scan in windows: a filter of
// All, newest first. Open-work views are indexed, the unfiltered All view
// stops at its first page, and the other orders keep their one query.
func scanning(q query) bool {
	return q.view == viewAll && q.filter != "" && q.order == ledger.NewestFirst
}

// scanState is a list's scan of settled history, newest first.
type scanState struct {
	// gen tells this scan's windows from those of a scan dropped since.
	gen int
	// top is the highest id when the scan started; a refresh adds the
	// matching rows written above it.
	top int64
	// next is the id the next window ends below; 1 or less: every id down
	// to 1 has been read.
	next int64
	// want is how many rows to find before the scan pauses (a page more
	// when the cursor nears the end).
	want    int
	running bool
}

// scanReq is one window to read: ids below before, up to need rows.
type scanReq struct {
	gen    int
	before int64
	need   int
}

// scanMsg is one window's rows, for the view and the scan that asked.
type scanMsg struct {
	view   viewID
	gen    int
	before int64
	items  []item
	// next is where the following window ends: the window's lowest id, or
	// the last row found when the window held more than was needed.
	next int64
	err  error
}

// scanCmd reads one window of ids with the filter, newest first.
func scanCmd(pctx context.Context, s Ledger, v viewID, filter string, window int64, r scanReq) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(pctx, 10*time.Second)
		defer cancel()
		low := max(r.before-window, 1)
		limit := min(max(r.need, 1), maxReload)
		rows, err := s.List(ctx, ledger.Filter{Text: filter, BeforeID: r.before, MinID: low, Limit: limit})
		msg := scanMsg{view: v, gen: r.gen, before: r.before, next: low, err: err}
		for _, row := range rows {
			msg.items = append(msg.items, rowItem(row))
		}
		if len(rows) == limit {
			msg.next = rows[len(rows)-1].ID // the rest of the window is read next
		}
		return msg
	}
}

// rowsAbove are the filter's rows with an id above top, written since a
// scan started: a refresh of a scanned list adds them, not re-scanning.
func rowsAbove(ctx context.Context, s Ledger, filter string, top int64) ([]item, error) {
	rows, err := s.List(ctx, ledger.Filter{Text: filter, MinID: top + 1, Limit: maxReload})
	out := make([]item, 0, len(rows))
	for _, r := range rows {
		out = append(out, rowItem(r))
	}
	return out, err
}

// newestID is the newest action's id (0 for none), where a scan starts:
// ids may have gaps (archived actions, a PostgreSQL sequence), so the
// count of actions is not it.
func newestID(ctx context.Context, s Ledger) (int64, error) {
	rows, err := s.List(ctx, ledger.Filter{Limit: 1})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return rows[0].ID, nil
}

// startScan drops the rows and starts a scan of the ids up to top.
func (l *listView) startScan(top int64) scanReq {
	l.gen++
	l.scan = &scanState{gen: l.gen, top: top, next: top + 1, want: pageSize, running: true}
	l.items, l.loaded, l.more, l.cursor, l.offset, l.want = nil, true, false, 0, 0, nil
	return scanReq{gen: l.gen, before: l.scan.next, need: pageSize}
}

// ofScan reports whether msg answers the window the scan waits for; a
// window of a dropped scan (a new filter, esc) is stale.
func (l *listView) ofScan(msg scanMsg) bool {
	return l.scan != nil && l.scan.running && msg.gen == l.scan.gen && msg.before == l.scan.next
}

// scanned adds a window's rows and returns the next window to read, or
// false when the scan pauses (a page found) or ends (id 1 read).
func (l *listView) scanned(msg scanMsg) (scanReq, bool) {
	sc := l.scan
	l.appendItems(msg.items, false)
	sc.next = msg.next
	if sc.next <= 1 || len(l.items) >= sc.want {
		sc.running = false
		l.more = sc.next > 1
		return scanReq{}, false
	}
	return scanReq{gen: sc.gen, before: sc.next, need: sc.want - len(l.items)}, true
}

// resumeScan continues a paused scan for a page more.
func (l *listView) resumeScan() (scanReq, bool) {
	sc := l.scan
	if sc == nil || sc.running || sc.next <= 1 {
		return scanReq{}, false
	}
	sc.want, sc.running = len(l.items)+pageSize, true
	return scanReq{gen: sc.gen, before: sc.next, need: pageSize}, true
}

// stopScan drops a scan still running (its view left, a window failed):
// the next load starts it again.
func (l *listView) stopScan() {
	if l.scan != nil && l.scan.running {
		l.scan, l.items, l.loaded, l.more = nil, nil, false, false
	}
}

// addAbove puts the rows written above the scan's top first, the cursor
// staying on its row, and raises the top to the ledger's newest id.
func (l *listView) addAbove(items []item, newest int64) {
	cur, had := l.current()
	l.items = append(items, l.items...)
	for _, it := range items {
		newest = max(newest, it.ID)
	}
	l.scan.top = max(l.scan.top, newest)
	if l.local() {
		sortItems(l.items, l.spec)
	}
	l.keep(cur, had)
}

// scanText says how far a running scan has come, or, when it read every
// id, how many it read; "" without a scan. Ids stand for actions: they
// are as many but for gaps.
func (l *listView) scanText() string {
	sc := l.scan
	switch {
	case sc == nil:
		return ""
	case sc.running:
		return fmt.Sprintf("%s actions… %d found (esc clears the filter)", l.scanProgress(), len(l.items))
	case sc.next <= 1:
		return "all " + thousands(sc.top) + " actions scanned"
	}
	return ""
}

// scanProgress is how far a running scan has come: "scanning 2,000 of 30,000".
func (l *listView) scanProgress() string {
	return "scanning " + thousands(l.scan.top-l.scan.next+1) + " of " + thousands(l.scan.top)
}

// thousands writes n with comma separators: 1,000,000.
func thousands(n int64) string {
	s := strconv.FormatInt(max(n, 0), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
