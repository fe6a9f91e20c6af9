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

// evidence says where the key's outcome and proof are read: through
// Serve the agent has the status tool; through Proxy it has only the
// upstream's tools, so the line is for the operator it reports to.
func (r retryHow) evidence(key string) string {
	if r == retryGuard {
		return "call status with key " + key + " for its outcome and evidence"
	}
	return "`tollgate status " + key + "` shows its outcome and evidence"
}

// advice is what an answer tells the agent to do, in one line it can
// follow without knowing tollgate: the state, then the instruction, and
// for a state only an operator can move, the operator's exact command, so
// that no one has to dig the key out of a list.
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
		return fmt.Sprintf("PENDING APPROVAL: %s waits for an operator until %s%s; do not execute and do not use a new key. "+
			"An operator approves it with `tollgate approve %s` (or refuses it with `tollgate reject %s --reason ...`). "+
			"Later, %s: the answer will be approved, rejected, expired or still pending.",
			key, stamp(a.ExpiresAt), quorum, key, key, retry)
	case ledger.Denied:
		why := ""
		if a.Reason != "" {
			why = " (" + safetext.Escape(a.Reason) + ")"
		}
		next := "do not retry it; tell whoever asked for it that it was refused, and why."
		if a.SafeNewKey {
			next = "do not retry it as it is; a different, reviewed operation needs a new key."
		}
		return fmt.Sprintf("DENIED: %s is %s%s; do not execute; %s %s.", key, a.State, why, next, capitalize(retry.evidence(key)))
	case ledger.Uncertain:
		return fmt.Sprintf("UNCERTAIN: %s was permitted earlier and its outcome is not confirmed; do not execute it again, under this key or a new one. "+
			"Check whether it took effect at its destination and tell an operator, who settles it with `tollgate reconcile %s --result executed|not-executed --note ...`.",
			key, key)
	case ledger.Settled:
		next := ""
		if a.SafeNewKey {
			next = " Doing it again on purpose is a new action: give it a new key."
		}
		return fmt.Sprintf("SETTLED: %s already ended %s; do not execute it again.%s %s.", key, a.State, next, capitalize(retry.evidence(key)))
	}
	return fmt.Sprintf("%s: %s (%s); do not execute.", key, a.State, a.Verdict)
}

// capitalize starts a sentence made of a clause.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
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
