package cli

import (
	"context"
	"io"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// Ledger is what the commands ask of a ledger. It is declared here, by
// its user, so that a test can hand the CLI a fake through Env.Open (an
// error of any shape from any call) while every engine behind
// *ledger.Store serves it unchanged.
type Ledger interface {
	Path() string
	Now() time.Time
	Close() error
	Record(ctx context.Context, key string, p ledger.Payload, opt ledger.RecordOptions) (ledger.Intent, error)
	Guard(ctx context.Context, key string, p ledger.Payload, opt ledger.GuardOptions) (ledger.Answer, error)
	Report(ctx context.Context, key, permitID string, outcome ledger.Outcome, opt ledger.ReportOptions) (ledger.ReportAnswer, error)
	Status(ctx context.Context, key string) (ledger.Detail, error)
	List(ctx context.Context, f ledger.Filter) ([]ledger.Row, error)
	Conflicts(ctx context.Context, all bool, text string, beforeID int64, limit int) ([]ledger.ConflictRow, error)
	Fenced(ctx context.Context, all bool, text string, beforeID int64, limit int) ([]ledger.FencedRow, error)
	Approve(ctx context.Context, key, operator, reason string) (ledger.Decision, error)
	Reject(ctx context.Context, key, operator, reason string) (ledger.Decision, error)
	Reconcile(ctx context.Context, key string, result ledger.Result, operator, note string) (ledger.Reconciliation, error)
	SetPolicy(ctx context.Context, r approvals.Rule, operator string) (approvals.Rule, error)
	PolicyStandings(ctx context.Context) ([]ledger.PolicyRule, error)
	PolicyTest(ctx context.Context, f approvals.Facts) (approvals.Rule, approvals.Explain, error)
	ActivateEpoch(ctx context.Context, epoch, operator string) (ledger.EpochInfo, error)
	Epoch(ctx context.Context) (ledger.EpochInfo, error)
	Operators(ctx context.Context) (ledger.OperatorSet, error)
	AddOperator(ctx context.Context, name, publicKey string) (ledger.Operator, error)
	RemoveOperator(ctx context.Context, name string) (ledger.Operator, error)
	Head(ctx context.Context) (ledger.Head, error)
	Verify(ctx context.Context, witnessed ...ledger.Head) (ledger.VerifyReport, error)
	VerifyWith(ctx context.Context, step func(n int, name string), witnessed ...ledger.Head) (ledger.VerifyReport, error)
	ExportWith(ctx context.Context, w io.Writer, progress func(actions int)) (ledger.ExportEnd, error)
	Backup(ctx context.Context, dest string) (ledger.Head, error)
	Watch(ctx context.Context) (ledger.Watch, error)
}

var _ Ledger = (*ledger.Store)(nil)

// openLedger is ledger.Open as a Ledger: Env.Open's default.
func openLedger(ctx context.Context, path string, opt ledger.Options) (Ledger, error) {
	s, err := ledger.Open(ctx, path, opt)
	if err != nil {
		return nil, err // not a typed nil inside the interface
	}
	return s, nil
}
