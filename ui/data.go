package ui

import (
	"context"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// viewID names one tab of the console.
type viewID int

// The console's views, in tab order.
const (
	viewPending viewID = iota
	viewConflicts
	viewUncertain
	viewFenced
	viewAll
	viewCount
)

var viewTitles = [viewCount]string{"Pending approvals", "Conflicts", "Uncertain outcomes", "Fenced calls", "All actions"}

// item is one row of any view, flattened so that one list component can
// show actions, conflicts and fenced calls alike.
type item struct {
	ID      int64
	Key     string
	Logical string // shown in lists; the epoch is in the detail pane
	// Epoch is the epoch the action's key was admitted under ("" for a
	// plain key): a pending key under another than the active one can
	// never be approved.
	Epoch string
	State ledger.State
	Kind  string
	Agent string
	Note  string // conflicts and fenced calls: differing fields, reason
	// Deadline is a pending request's expiry or a permit's lease end
	// (still running, or run out: uncertain); At
	// is when a conflict or fenced call was logged.
	Deadline time.Time
	At       time.Time
	// stored is the row's stored deadline, whatever its state: the
	// keyset cursor of a list sorted by deadline.
	stored   time.Time
	Conflict *ledger.ConflictRow
	Fenced   *ledger.FencedRow
}

// The Conflicts and Fenced views list log entries, not actions: their
// entry column (headed "entry", not "state") names the log. Every other
// state is the ledger's own.
const (
	stateConflict ledger.State = "conflict"
	stateFenced   ledger.State = "fenced"
)

// pageSize is how many rows one page query loads; lists page through the
// database and never load every row.
const pageSize = 200

// Messages. Each carries the view and key it belongs to, so that a late
// answer for a view or key no longer shown is recognised and dropped.
type (
	tickMsg    struct{}
	checkedMsg struct {
		changed bool
		err     error
	}
	snapshotMsg struct {
		query
		items []item
		more  bool
		// above is the scan's top the rows were read above, and newest
		// the ledger's newest id, where a scan starts (scanning).
		above, newest int64
		counts        ledger.Counts
		epoch         string
		sign          ledger.Signing
		// pending are the keys pending now (the first pendingWatch by
		// deadline), whatever the view: a key that leaves them without
		// this console deciding it is announced in every view.
		pending []string
		// votes are the votes cast since the last snapshot's newestVote
		// (none on the first, which only learns where to start).
		votes      []ledger.VoteNews
		newestVote int64
		err        error
	}
	pageMsg struct {
		query
		items []item
		more  bool
		err   error
	}
	detailMsg struct {
		view    viewID
		key     string
		id      int64
		detail  ledger.Detail
		missing bool // a fenced key that was never admitted
		full    bool // for the full view, not the detail pane
		err     error
	}
	actionMsg struct {
		action string
		keys   []string
		errs   []error
		// decisions are the approvals' and rejections' answers, with the
		// quorum each reached.
		decisions []ledger.Decision
		// stopped: the operator stopped waiting (esc) before the answer.
		stopped bool
	}
)

// query is what a list shows: the view, the filter and the order. A
// late answer to another query than the one on screen is dropped.
type query struct {
	view   viewID
	filter string
	order  ledger.Order
}

// loadPage queries one page of a view, after the row after (nil: from
// the top). It captures only plain values.
func loadPage(ctx context.Context, s Ledger, q query, after *item, limit int) ([]item, bool, error) {
	var out []item
	v, filter := q.view, q.filter
	var before int64
	if after != nil {
		before = after.ID
	}
	switch v {
	case viewConflicts:
		rows, err := s.Conflicts(ctx, false, filter, before, limit+1)
		if err != nil {
			return nil, false, err
		}
		for i := range rows {
			c := rows[i]
			out = append(out, item{ID: c.ID, Key: c.Key, Logical: logical(c.Key), State: stateConflict, Agent: c.Agent, Note: "differs: " + c.Differs, At: c.At, Conflict: &c})
		}
	case viewFenced:
		rows, err := s.Fenced(ctx, false, filter, before, limit+1)
		if err != nil {
			return nil, false, err
		}
		for i := range rows {
			f := rows[i]
			out = append(out, item{ID: f.ID, Key: f.Key, Logical: logical(f.Key), State: stateFenced, Agent: f.Agent, Note: f.Reason, At: f.At, Fenced: &f})
		}
	default:
		f := ledger.Filter{Text: filter, Order: q.order, Limit: limit + 1}
		if after != nil {
			f.After = &ledger.Row{ID: after.ID, Deadline: after.stored}
		}
		switch v {
		case viewPending:
			f.State = ledger.StatePending
		case viewUncertain:
			f.State = ledger.StateUncertain
		}
		rows, err := s.List(ctx, f)
		if err != nil {
			return nil, false, err
		}
		for _, r := range rows {
			out = append(out, rowItem(r))
		}
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// rowItem is an action's row as the lists show it.
func rowItem(r ledger.Row) item {
	it := item{ID: r.ID, Key: r.Key, Logical: r.Logical, Epoch: r.Epoch, State: r.State, Kind: r.Kind, Agent: r.Agent, stored: r.Deadline}
	switch r.State {
	case ledger.StatePending, ledger.StateExecuting, ledger.StateUncertain:
		// An uncertain key's is when its report was due (the lease's
		// end): how long it has waited for someone to find out what
		// happened, and the order the ledger lists Uncertain in by due.
		it.Deadline = r.Deadline
	}
	return it
}

// snapshotCmd reloads the counts, the epoch and the visible page of the
// active view in one go. A scanned list (scanning) is not re-read: its
// scan starts once the counts say how far it goes, and a refresh reads
// only the rows above its top (above; 0 before it started).
func snapshotCmd(pctx context.Context, s Ledger, q query, operator string, limit int, above, votesAfter int64) func() snapshotMsg {
	return func() snapshotMsg {
		ctx, cancel := context.WithTimeout(pctx, 10*time.Second)
		defer cancel()
		msg := snapshotMsg{query: q}
		if msg.counts, msg.err = s.Counts(ctx); msg.err != nil {
			return msg
		}
		e, err := s.Epoch(ctx)
		if err != nil {
			msg.err = err
			return msg
		}
		msg.epoch = e.Epoch
		if msg.sign, msg.err = s.Signing(ctx, operator); msg.err != nil {
			return msg
		}
		switch {
		case scanning(q):
			msg.above = above
			if msg.newest, msg.err = newestID(ctx, s); msg.err == nil && above > 0 {
				msg.items, msg.err = rowsAbove(ctx, s, q.filter, above)
			}
		default:
			msg.items, msg.more, msg.err = loadPage(ctx, s, q, nil, limit)
		}
		if msg.err != nil {
			return msg
		}
		if msg.pending, msg.err = pendingKeys(ctx, s, q, msg.items); msg.err != nil {
			return msg
		}
		msg.votes, msg.newestVote, msg.err = s.VotesAfter(ctx, votesAfter, pendingWatch)
		return msg
	}
}

// pendingWatch is how many pending keys (the soonest due) the console
// watches for decisions made elsewhere.
const pendingWatch = 200

// pendingKeys are the keys pending now, the soonest due first: the
// Pending view's rows when they are what it shows unfiltered, else one
// more query.
func pendingKeys(ctx context.Context, s Ledger, q query, items []item) ([]string, error) {
	if q.view == viewPending && q.filter == "" && q.order == ledger.SoonestDeadline {
		keys := make([]string, 0, min(len(items), pendingWatch))
		for _, it := range items[:min(len(items), pendingWatch)] {
			keys = append(keys, it.Key)
		}
		return keys, nil
	}
	rows, err := s.List(ctx, ledger.Filter{State: ledger.StatePending, Order: ledger.SoonestDeadline, Limit: pendingWatch})
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	return keys, err
}

// shownKey is a key as a message line names it: its logical part,
// escaped. An epoch's prefix (hsr1: and a UUID, 42 characters) would
// leave an 80-column line little room for the key's own name; the row
// and the detail pane beside the message show the full key.
func shownKey(key string) string { return safetext.Escape(logical(key)) }

// logical returns the logical part of an authority key.
func logical(key string) string {
	if k, err := ledger.ParseKey(key); err == nil {
		return k.Logical
	}
	return key
}
