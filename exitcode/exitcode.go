// Package exitcode is the one mapping from a ledger's answers and errors
// to the exit codes of SPEC 5 and the JSON object an agent reads. The
// command line prints it and the HTTP service sends it (the status code
// is chosen from the exit code), so the two transports cannot disagree
// about what an error means.
package exitcode

import (
	"errors"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// Exit codes (SPEC 5). Scripts depend on these numbers.
const (
	OK        = 0
	Error     = 1
	Usage     = 2
	Invalid   = 3
	Conflict  = 4
	Denied    = 5
	Uncertain = 6
	NotFound  = 7
	Settled   = 10
	Retry     = 75
	// NotPermitted: this identity may not do that (no valid operator
	// signature, a database role without the right).
	NotPermitted = 77
	// TempFail (sysexits' EX_TEMPFAIL, the number retry-later has): the
	// ledger could not be reached, or stayed locked, for as long as the
	// call retried; nothing was recorded and repeating is safe.
	TempFail = 75
	// CommitUnknown (sysexits' EX_IOERR): the last attempt was lost while
	// committing; ask for the key's status before acting on it.
	CommitUnknown = 74
)

// Answered is a refusal that already carries its exit code and its
// object: one a service sent, which its client hands back unchanged so
// that the command prints what the server answered.
type Answered interface {
	error
	// ExitCode is the refusal's exit code.
	ExitCode() int
	// Object is the refusal's JSON object, exit_code among its members.
	Object() map[string]any
}

// OfVerdict is the exit code of a guard's verdict.
func OfVerdict(v ledger.Verdict) int {
	switch v {
	case ledger.Permitted:
		return OK
	case ledger.RetryLater:
		return Retry
	case ledger.Denied:
		return Denied
	case ledger.Uncertain:
		return Uncertain
	case ledger.Settled:
		return Settled
	}
	return Error
}

// Refusal is what a call that did not succeed answers: its exit code and
// its JSON object. A conflict and a fence are answers an agent acts on
// (the stored hash and the differing fields; the epochs), so they carry
// their facts; every other refusal is {"error", "exit_code"}, with
// "safe_to_repeat" when nothing was recorded and "committed": "unknown"
// when the commit may have happened. By type, never by message.
func Refusal(err error) (int, map[string]any) {
	var an Answered
	if errors.As(err, &an) {
		return an.ExitCode(), an.Object()
	}
	var ce *ledger.ConflictError
	var fe *ledger.FencedError
	switch {
	case errors.As(err, &ce):
		return Conflict, with(ce.Answer(), Conflict)
	case errors.As(err, &fe):
		return Denied, with(fe.Answer(), Denied)
	}
	code := Of(err)
	obj := map[string]any{"error": err.Error(), "exit_code": code}
	switch code {
	case TempFail:
		obj["safe_to_repeat"] = true
	case CommitUnknown:
		obj["committed"] = "unknown"
	}
	return code, obj
}

func with(obj map[string]any, code int) map[string]any {
	obj["exit_code"] = code
	return obj
}

// Of maps an error to its exit code.
func Of(err error) int {
	var an Answered
	var ce *ledger.ConflictError
	var fe *ledger.FencedError
	switch {
	case errors.As(err, &an):
		return an.ExitCode()
	case errors.As(err, &ce):
		return Conflict
	case errors.As(err, &fe):
		return Denied
	case errors.Is(err, ledger.ErrNotPermitted):
		return NotPermitted
	case errors.Is(err, ledger.ErrInvalidInput), errors.Is(err, approvals.ErrReasonRequired), errors.Is(err, opkeys.ErrKey),
		errors.Is(err, ledger.ErrNotLedger), errors.Is(err, ledger.ErrNewerSchema), errors.Is(err, ledger.ErrNeedsMigration),
		errors.Is(err, ledger.ErrDevelopmentSchema):
		return Invalid
	case errors.Is(err, ledger.ErrNotFound), errors.Is(err, ledger.ErrNoPermit), errors.Is(err, approvals.ErrNoRequest),
		errors.Is(err, ledger.ErrNoLedger):
		return NotFound
	case errors.Is(err, approvals.ErrAlreadyDecided), errors.Is(err, ledger.ErrReportDiffers),
		errors.Is(err, ledger.ErrWrongPermit), errors.Is(err, ledger.ErrNotUncertain),
		errors.Is(err, ledger.ErrAlreadyReviewed):
		return Conflict
	case errors.Is(err, approvals.ErrExpired), errors.Is(err, approvals.ErrSelfApproval):
		return Denied
	case errors.Is(err, ledger.ErrCommitUnknown):
		return CommitUnknown
	case errors.Is(err, ledger.ErrUnavailable), errors.Is(err, ledger.ErrBusy):
		return TempFail
	}
	return Error
}

// OfReport is the exit code of a report's answer: 10 when the key was
// already reconciled, 6 when the report came late (kept as evidence, an
// operator reconciles), 0 otherwise.
func OfReport(r ledger.ReportAnswer) int {
	switch {
	case r.State == ledger.StateReconciled:
		return Settled
	case r.Late:
		return Uncertain
	}
	return OK
}
