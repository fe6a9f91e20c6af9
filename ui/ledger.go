package ui

import (
	"context"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
)

// Ledger is what the console asks of a ledger: its lists, counts and
// details to read, and the operator's decisions to write. It is declared
// here, by its one user, so that a test can hand the console a fake (an
// error of any shape, a slow query) and any engine behind *ledger.Store
// serves it unchanged.
//
// *ledger.Store implements it.
type Ledger interface {
	List(ctx context.Context, f ledger.Filter) ([]ledger.Row, error)
	Conflicts(ctx context.Context, all bool, text string, beforeID int64, limit int) ([]ledger.ConflictRow, error)
	Fenced(ctx context.Context, all bool, text string, beforeID int64, limit int) ([]ledger.FencedRow, error)
	Counts(ctx context.Context) (ledger.Counts, error)
	Epoch(ctx context.Context) (ledger.EpochInfo, error)
	Signing(ctx context.Context, claimed string) (ledger.Signing, error)
	// Operators is the registered operator set, re-read every second so
	// that a vote whose key no longer counts is not shown as done.
	Operators(ctx context.Context) (ledger.OperatorSet, error)
	// Head is the chain's head, whose ledger id the console checks every
	// second: a store that now reads another ledger is said at once.
	Head(ctx context.Context) (ledger.Head, error)
	Status(ctx context.Context, key string) (ledger.Detail, error)
	VotesAfter(ctx context.Context, after int64, limit int) ([]ledger.VoteNews, int64, error)
	Briefs(ctx context.Context, keys []string) ([]ledger.Brief, error)
	Approve(ctx context.Context, key, operator, reason string) (ledger.Decision, error)
	Reject(ctx context.Context, key, operator, reason string) (ledger.Decision, error)
	Reconcile(ctx context.Context, key string, result ledger.Result, operator, note string) (ledger.Reconciliation, error)
	ReviewFenced(ctx context.Context, fencedID int64, operator, note string) error
	ReviewConflict(ctx context.Context, conflictID int64, operator, note string) error
	Watch(ctx context.Context) (ledger.Watch, error)
	// Now is the ledger's clock, which deadlines are compared with.
	Now() time.Time
	// Path names the ledger in the status bar.
	Path() string
}

var _ Ledger = (*ledger.Store)(nil)
