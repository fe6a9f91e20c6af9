package mcpgate

import (
	"context"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
)

// Ledger is what the MCP server and proxy ask of a ledger: an agent's
// three calls, the active epoch and the ledger's clock, nothing an
// operator does. Declared
// here, by its user; *ledger.Store implements it on either engine.
type Ledger interface {
	Guard(ctx context.Context, key string, p ledger.Payload, opt ledger.GuardOptions) (ledger.Answer, error)
	Report(ctx context.Context, key, permitID string, outcome ledger.Outcome, opt ledger.ReportOptions) (ledger.ReportAnswer, error)
	Status(ctx context.Context, key string) (ledger.Detail, error)
	Epoch(ctx context.Context) (ledger.EpochInfo, error)
	// Now is the clock the ledger's record times are read against.
	Now() time.Time
}

var _ Ledger = (*ledger.Store)(nil)
