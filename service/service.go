// Package service is tollgate over HTTP: the server behind `tollgate
// serve`, whose handlers call the same small ledger interface the command
// line and the MCP gate call, and the Client that implements that
// interface over HTTP, so that a caller never knows which one it holds.
// No rule lives here: every verdict comes from the ledger, and the server
// only maps answers and errors to HTTP (statuses, problem documents).
package service

import (
	"context"
	"errors"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
)

// Ledger is what the handlers ask of a ledger: an agent's three calls,
// the active epoch and the ledger's clock. *ledger.Store implements it on
// either engine, and so does Client.
type Ledger interface {
	Guard(ctx context.Context, key string, p ledger.Payload, opt ledger.GuardOptions) (ledger.Answer, error)
	Report(ctx context.Context, key, permitID string, outcome ledger.Outcome, opt ledger.ReportOptions) (ledger.ReportAnswer, error)
	Status(ctx context.Context, key string) (ledger.Detail, error)
	Epoch(ctx context.Context) (ledger.EpochInfo, error)
	// Now is the clock the ledger's record times are read against.
	Now() time.Time
}

var _ Ledger = (*ledger.Store)(nil)

// Scope is what an authenticated caller may do.
type Scope string

const (
	// ScopeAgent guards, reports and reads the caller's own keys.
	ScopeAgent Scope = "agent"
	// ScopeOperator also reads every key.
	ScopeOperator Scope = "operator"
)

// Identity is who a request comes from, as authenticated: the peer's
// login user on the socket, a token's holder over TCP. Never what the
// request says about itself.
type Identity struct {
	// Name is the agent name the caller acts under by default.
	Name string
	// Scope is what the caller may do.
	Scope Scope
	// TokenID names the token that authenticated the caller; empty for
	// a socket peer without one.
	TokenID string
}

// Credentials is what the server asks of the token store: who holds a
// bearer token, and whether a caller may act under another agent name
// (an operator's `agents allow WHO NAME`).
type Credentials interface {
	// TokenIdentity is the identity a bearer token was made for. An
	// unknown, malformed or revoked token is ErrUnauthenticated.
	TokenIdentity(ctx context.Context, bearer string) (Identity, error)
	// MayActAs reports whether who may act under the agent name name.
	MayActAs(ctx context.Context, who, name string) (bool, error)
}

// ErrUnauthenticated means the request carries no credential the server
// accepts (no token, an unknown or revoked one): HTTP 401.
var ErrUnauthenticated = errors.New("unauthenticated")

// ErrForbidden means the authenticated caller may not do what it asked
// (act under another name, read another agent's key): HTTP 403, exit 77.
var ErrForbidden = errors.New("not permitted")

// Header names the API uses.
const (
	// HeaderIdempotencyKey carries a guard's key (IETF
	// draft-ietf-httpapi-idempotency-key-header), bare or quoted.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderAttempt carries the client's attempt id: random, the same on
	// every retry of one call, so that a lost answer can be given again
	// to the caller that made the attempt.
	HeaderAttempt = "Tollgate-Attempt"
)
