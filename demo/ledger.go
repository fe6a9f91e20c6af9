package demo

import (
	"context"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// Ledger is what the demo's seeding and simulated agents ask of a ledger:
// the agents' guard and report, and the operator's setup. Declared here,
// by its user; *ledger.Store implements it on either engine.
type Ledger interface {
	Guard(ctx context.Context, key string, p ledger.Payload, opt ledger.GuardOptions) (ledger.Answer, error)
	Report(ctx context.Context, key, permitID string, outcome ledger.Outcome, opt ledger.ReportOptions) (ledger.ReportAnswer, error)
	SetPolicy(ctx context.Context, r approvals.Rule, operator string) (approvals.Rule, error)
	ActivateEpoch(ctx context.Context, epoch, operator string) (ledger.EpochInfo, error)
	Epoch(ctx context.Context) (ledger.EpochInfo, error)
	AddOperator(ctx context.Context, name, publicKey string) (ledger.Operator, error)
	Operators(ctx context.Context) (ledger.OperatorSet, error)
}

var _ Ledger = (*ledger.Store)(nil)
