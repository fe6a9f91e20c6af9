package ui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/ledger"
)

// sortCol is a list column the operator can sort by (s cycles them, S
// reverses the direction). Age has no column of its own: it is the order
// rows were recorded in, shown in the key's header.
type sortCol int

// The sortable columns.
const (
	colDue sortCol = iota
	colAge
	colKey
	colState
	colKind
	colAgent
)

var columnNames = [...]string{colDue: "due", colAge: "age", colKey: "key", colState: "state", colKind: "kind", colAgent: "agent"}

// String names the column as the header does.
func (c sortCol) String() string { return columnNames[c] }

// sortColumns are the columns s cycles through in each view, its default
// first: Pending waits on deadlines, so the soonest is first; the others
// list newest first. Conflicts and fenced calls have no deadline, state
// or kind.
var sortColumns = [viewCount][]sortCol{
	viewPending:   {colDue, colAge, colKey, colKind, colAgent},
	viewConflicts: {colAge, colKey, colAgent},
	viewUncertain: {colAge, colDue, colKey, colKind, colAgent},
	viewFenced:    {colAge, colKey, colAgent},
	viewAll:       {colAge, colDue, colKey, colState, colKind, colAgent},
}

// sortSpec is a list's order: a column and a direction.
type sortSpec struct {
	col  sortCol
	desc bool
}

// defaultSort is the direction a column starts in: age newest first,
// every other ascending (the soonest deadline, a to z).
func defaultSort(c sortCol) sortSpec { return sortSpec{col: c, desc: c == colAge} }

// server is the order the ledger lists the rows in for s; local reports
// whether the console must sort the loaded rows itself, because the
// ledger's keyset paging only orders by age and by deadline ascending.
func (s sortSpec) server(v viewID) (o ledger.Order, local bool) {
	logView := v == viewConflicts || v == viewFenced
	switch {
	case s.col == colAge && s.desc:
		return ledger.NewestFirst, false
	case s.col == colAge && !logView:
		return ledger.OldestFirst, false
	case s.col == colDue && !s.desc:
		return ledger.SoonestDeadline, false
	}
	return ledger.NewestFirst, true
}

// arrow is the header's mark of the direction.
func (s sortSpec) arrow() string {
	if s.desc {
		return "▼"
	}
	return "▲"
}

// describe says the order in words, for the message line.
func (s sortSpec) describe() string {
	switch {
	case s.col == colAge && s.desc:
		return "newest first"
	case s.col == colAge:
		return "oldest first"
	case s.col == colDue && !s.desc:
		return "soonest deadline"
	case s.col == colDue:
		return "latest deadline"
	}
	return s.col.String() + " " + s.arrow()
}

// sortItems orders loaded rows by s, stably, ties newest first.
func sortItems(items []item, s sortSpec) {
	slices.SortStableFunc(items, func(a, b item) int {
		var c int
		switch s.col {
		case colDue:
			// No deadline sorts last whichever the direction.
			switch {
			case a.Deadline.IsZero() && b.Deadline.IsZero():
			case a.Deadline.IsZero():
				return 1
			case b.Deadline.IsZero():
				return -1
			default:
				c = a.Deadline.Compare(b.Deadline)
			}
		case colAge:
			c = cmp.Compare(a.ID, b.ID)
		case colKey:
			c = strings.Compare(a.Logical, b.Logical)
		case colState:
			c = strings.Compare(string(a.State), string(b.State))
		case colKind:
			c = strings.Compare(a.Kind, b.Kind)
		case colAgent:
			c = strings.Compare(a.Agent, b.Agent)
		}
		if s.desc {
			c = -c
		}
		if c == 0 {
			c = cmp.Compare(b.ID, a.ID)
		}
		return c
	})
}
