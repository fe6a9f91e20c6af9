package cli

import (
	"errors"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// refusal is what a command prints when it does not succeed: its exit
// code and its JSON object. A conflict and a fence are answers an agent
// acts on (the stored hash and the differing fields; the epochs), so they
// carry their facts; every other refusal is {"error", "exit_code"}. This
// is the one place an error becomes an exit code and an object, by type,
// never by message.
func refusal(err error) (int, map[string]any) {
	var ue usageError
	var ce *ledger.ConflictError
	var fe *ledger.FencedError
	switch {
	case errors.As(err, &ue):
		return ExitUsage, errorObject(err, ExitUsage)
	case errors.As(err, &ce):
		return ExitConflict, withExit(ce.Answer(), ExitConflict)
	case errors.As(err, &fe):
		return ExitDenied, withExit(fe.Answer(), ExitDenied)
	}
	code := exitCode(err)
	obj := errorObject(err, code)
	switch code {
	case ExitTempFail:
		obj["safe_to_repeat"] = true
	case ExitCommitUnknown:
		obj["committed"] = "unknown"
	}
	return code, obj
}

func withExit(obj map[string]any, code int) map[string]any {
	obj["exit_code"] = code
	return obj
}

func errorObject(err error, code int) map[string]any {
	return map[string]any{"error": err.Error(), "exit_code": code}
}

// exitCode maps every other error to its exit code.
func exitCode(err error) int {
	switch {
	case errors.Is(err, ledger.ErrNotPermitted):
		return ExitNotPermitted
	case errors.Is(err, ledger.ErrInvalidInput), errors.Is(err, approvals.ErrReasonRequired), errors.Is(err, opkeys.ErrKey),
		errors.Is(err, ledger.ErrNotLedger), errors.Is(err, ledger.ErrNewerSchema), errors.Is(err, ledger.ErrNeedsMigration):
		return ExitInvalid
	case errors.Is(err, ledger.ErrNotFound), errors.Is(err, ledger.ErrNoPermit), errors.Is(err, approvals.ErrNoRequest),
		errors.Is(err, ledger.ErrNoLedger):
		return ExitNotFound
	case errors.Is(err, approvals.ErrAlreadyDecided), errors.Is(err, ledger.ErrReportDiffers),
		errors.Is(err, ledger.ErrWrongPermit), errors.Is(err, ledger.ErrNotUncertain),
		errors.Is(err, ledger.ErrAlreadyReviewed):
		return ExitConflict
	case errors.Is(err, approvals.ErrExpired), errors.Is(err, approvals.ErrSelfApproval):
		return ExitDenied
	case errors.Is(err, ledger.ErrCommitUnknown):
		return ExitCommitUnknown
	case errors.Is(err, ledger.ErrUnavailable), errors.Is(err, ledger.ErrBusy):
		return ExitTempFail
	}
	return ExitError
}
