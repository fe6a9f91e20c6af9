// Package mcpgate brings tollgate to agents that act through Model
// Context Protocol tools: Serve offers the agent's own calls (guard,
// report, status; never a decision), and Proxy puts guard in front of
// every tool of an upstream MCP server.
//
// It is a package of its own because it owns a second wire protocol and
// its SDK; the state machine stays in ledger, and what an answer tells an
// agent to do is written once here for both.
package mcpgate

import (
	"errors"
	"fmt"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// retryHow says how a tool's caller retries: through Serve, the guard
// tool again; through Proxy, the same tool call again.
type retryHow string

const (
	retryGuard retryHow = "call guard again with the same key and payload"
	retryCall  retryHow = "repeat this exact tool call (same arguments, same idempotency_key if you gave one)"
)

// advice is what an answer tells the agent to do, in one line it can
// follow without knowing tollgate: the state, then the instruction.
func advice(a ledger.Answer, retry retryHow) string {
	key := safetext.Escape(a.Key)
	switch a.Verdict {
	case ledger.Permitted:
		return fmt.Sprintf("PERMITTED: %s may execute now, exactly once, before %s; then report its outcome (succeeded, failed or unknown) with permit_id %s.",
			key, stamp(a.LeaseUntil), a.PermitID)
	case ledger.RetryLater:
		if a.State == ledger.StateExecuting {
			return fmt.Sprintf("IN PROGRESS: another call holds the permit for %s; do not execute. Later, %s to learn its outcome.", key, retry)
		}
		quorum := ""
		if a.Approvers > 1 {
			quorum = fmt.Sprintf(" (%d operators must approve)", a.Approvers)
		}
		return fmt.Sprintf("PENDING APPROVAL: %s waits for an operator until %s%s; do not execute and do not use a new key. Later, %s: the answer will be approved, rejected, expired or still pending.",
			key, stamp(a.ExpiresAt), quorum, retry)
	case ledger.Denied:
		why := ""
		if a.Reason != "" {
			why = " (" + safetext.Escape(a.Reason) + ")"
		}
		next := "do not retry it."
		if a.SafeNewKey {
			next = "a different, reviewed operation needs a new key."
		}
		return fmt.Sprintf("DENIED: %s is %s%s; do not execute; %s", key, a.State, why, next)
	case ledger.Uncertain:
		return fmt.Sprintf("UNCERTAIN: %s was permitted earlier and its outcome is not confirmed; do not execute it again, under this key or a new one. An operator reconciles it.", key)
	case ledger.Settled:
		return fmt.Sprintf("SETTLED: %s already ended %s; do not execute it again.", key, a.State)
	}
	return fmt.Sprintf("%s: %s (%s); do not execute.", key, a.State, a.Verdict)
}

// refusalAdvice is the instruction for an error from Guard: a conflict
// and a fence are answers with their own facts; anything else is a
// refusal whose message names the rule (and the key, never a body).
func refusalAdvice(err error) (string, map[string]any) {
	var ce *ledger.ConflictError
	var fe *ledger.FencedError
	switch {
	case errors.As(err, &ce):
		return fmt.Sprintf("CONFLICT: %s is bound to a different payload (sha256 %s; this call differs in %v); do not execute. Repeat the original call, or use a new key for a different action.",
			safetext.Escape(ce.Key), ce.StoredSHA256, ce.Differs), ce.Answer()
	case errors.As(err, &fe):
		return fmt.Sprintf("FENCED: %s; do not execute. %s.", safetext.Escape(fe.Key), safetext.Escape(fe.Reason)), fe.Answer()
	}
	return "REFUSED: " + safetext.Escape(err.Error()) + "; nothing was executed.", map[string]any{"error": err.Error()}
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
