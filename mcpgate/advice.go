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

// faultCall names the tool call a fault interrupted, for faultAdvice.
type faultCall string

const (
	callGuard  faultCall = "guard"
	callReport faultCall = "report"
	callStatus faultCall = "status"
	// callProxied is a proxied tool call: its guard failed, so it was not
	// forwarded.
	callProxied faultCall = "proxied"
)

// faultAdvice is the instruction for a call the ledger could not complete
// because a transient fault (a database restarting or failing over, lost
// connections, a lock held, a server that stopped answering) outlasted
// the server's own retries (--retry-for, each attempt bounded by
// --attempt-timeout). It tells the model the one thing it must know: the
// call is safe to repeat (nothing was recorded), or its commit is unknown
// and the ledger must be asked first. ok is false for any other error.
func faultAdvice(err error, key string, c faultCall) (text string, obj map[string]any, ok bool) {
	if err == nil {
		return "", nil, false
	}
	k := safetext.Escape(key)
	why := safetext.Escape(err.Error())
	switch {
	case errors.Is(err, ledger.ErrCommitUnknown):
		obj = map[string]any{"error": err.Error(), "committed": "unknown", "key": key}
		switch c {
		case callGuard:
			text = fmt.Sprintf("COMMIT UNKNOWN: the ledger did not confirm whether this guard of %s was recorded (%s); do not execute. "+
				"Call status with key %s first: a permit you were not given means the lost attempt recorded one, and the key turns uncertain when its lease ends; "+
				"calling guard again with the same key and payload is also safe (it answers what is stored).", k, why, k)
		case callReport:
			text = fmt.Sprintf("COMMIT UNKNOWN: the ledger did not confirm whether this report of %s was recorded (%s). "+
				"Call status with key %s first: if it does not show your outcome, call report again with the same arguments (a repeated report is a no-op).", k, why, k)
		case callProxied:
			text = fmt.Sprintf("COMMIT UNKNOWN: the call was not forwarded, but the ledger did not confirm whether a permit for %s was recorded (%s). "+
				"Repeat this exact call: if it answers IN PROGRESS or UNCERTAIN, the lost permit holds the key and an operator settles it with "+
				"`tollgate reconcile %s --result not-executed --note ...`; do not use a new key.", k, why, k)
		default:
			text = fmt.Sprintf("COMMIT UNKNOWN: %s (%s). Repeat this call.", k, why)
		}
	case errors.Is(err, ledger.ErrUnavailable), errors.Is(err, ledger.ErrBusy):
		obj = map[string]any{"error": err.Error(), "safe_to_repeat": true, "key": key}
		again := map[faultCall]string{callGuard: "call guard again with the same key and payload", callReport: "call report again with the same arguments",
			callStatus: "call status again", callProxied: "repeat this exact call"}[c]
		done := "nothing was recorded"
		if c == callProxied {
			done = "nothing was recorded or forwarded"
		} else if c == callGuard {
			done = "nothing was recorded; do not execute"
		}
		text = fmt.Sprintf("UNAVAILABLE: the ledger did not answer for %s for as long as this server retries (%s); %s. It is safe to repeat: %s in a little while.",
			k, why, done, again)
	default:
		return "", nil, false
	}
	return text, obj, true
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
