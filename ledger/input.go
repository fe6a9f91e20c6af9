package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// The bounds on durations a caller gives. A zero lease or TTL is not
// "the default": the command line passes its default explicitly, so an
// explicit 0 is a mistake to name, not to guess at.
const (
	MinLease = time.Second
	MaxLease = 7 * 24 * time.Hour
	MinTTL   = time.Second
	MaxTTL   = 365 * 24 * time.Hour
)

// The Check functions apply every rule an operation's input must meet,
// without a ledger, so that the command line refuses bad input before it
// opens (or creates) one. The Store methods call the same functions.

// CheckRecordInput checks a Record call's input.
func CheckRecordInput(key string, p Payload, opt RecordOptions) (Key, error) {
	k, err := ParseKey(key)
	if err != nil {
		return k, err
	}
	if err := p.Validate(); err != nil {
		return k, err
	}
	return k, checkName("agent", opt.Agent)
}

// CheckGuardInput checks a Guard call's input; a zero lease means
// DefaultLease (the library's zero value), any other lease must lie
// between MinLease and MaxLease.
func CheckGuardInput(key string, p Payload, opt GuardOptions) (Key, error) {
	k, err := CheckRecordInput(key, p, RecordOptions{Agent: opt.Agent})
	if err != nil {
		return k, err
	}
	if opt.Lease != 0 && (opt.Lease < MinLease || opt.Lease > MaxLease) {
		return k, fmt.Errorf("%w: a lease is between %s and %s (got %s)", ErrInvalidInput, MinLease, MaxLease, opt.Lease)
	}
	return k, CheckAttempt(opt.Attempt)
}

// CheckReportInput checks a Report call's input.
func CheckReportInput(key string, outcome Outcome, opt ReportOptions) error {
	if _, err := ParseKey(key); err != nil {
		return err
	}
	if _, err := ParseOutcome(string(outcome)); err != nil {
		return err
	}
	if err := checkText("ref", opt.Ref); err != nil {
		return err
	}
	if len(opt.Result) > MaxResultLen {
		return fmt.Errorf("%w: a result is at most %d bytes (got %d)", ErrInvalidInput, MaxResultLen, len(opt.Result))
	}
	if !validUTF8(opt.Result) {
		return fmt.Errorf("%w: result must be valid UTF-8", ErrInvalidInput)
	}
	if opt.Latency < 0 || opt.Latency > MaxLease {
		return fmt.Errorf("%w: a latency is between 0 and %s (got %s)", ErrInvalidInput, MaxLease, opt.Latency)
	}
	return nil
}

// CheckPolicyInput checks a rule; for an approval rule a zero TTL means
// approvals.DefaultTTL, any other must lie between MinTTL and MaxTTL, and
// a zero quorum means one approver.
func CheckPolicyInput(r approvals.Rule, operator string) error {
	if err := approvals.ValidatePattern(r.Pattern); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	if _, err := approvals.ParseMode(string(r.Mode)); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	if r.TTL != 0 && (r.TTL < MinTTL || r.TTL > MaxTTL) {
		return fmt.Errorf("%w: a TTL is between %s and %s (got %s)", ErrInvalidInput, MinTTL, MaxTTL, r.TTL)
	}
	if r.Approvers < 0 || r.Approvers > approvals.MaxApprovers {
		return fmt.Errorf("%w: --approvers is between 1 and %d (got %d)", ErrInvalidInput, approvals.MaxApprovers, r.Approvers)
	}
	if r.Approvers > 1 && r.Mode != approvals.Approval {
		return fmt.Errorf("%w: --approvers applies to --mode approval only", ErrInvalidInput)
	}
	if r.Priority < -approvals.MaxPriority || r.Priority > approvals.MaxPriority {
		return fmt.Errorf("%w: --priority is between %d and %d (got %d)", ErrInvalidInput, -approvals.MaxPriority, approvals.MaxPriority, r.Priority)
	}
	if r.Condition != "" {
		// Compiled and type-checked now, so that a rule that cannot be
		// evaluated is never stored; the error names its position.
		c, err := approvals.CompileCondition(r.Condition)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidInput, err)
		}
		if local := c.LocalZones(); len(local) > 0 {
			return fmt.Errorf("%w: %w: %s: %v", ErrInvalidInput, approvals.ErrCondition, strings.Join(local, ", "), approvals.ErrLocalZone)
		}
	}
	return checkOperator(operator)
}

// CheckEpochInput checks an epoch activation: epoch empty (a random one
// is made) or a lowercase canonical UUID.
func CheckEpochInput(epoch, operator string) error {
	if epoch != "" {
		if _, err := ParseEpoch(epoch); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidInput, err)
		}
	}
	return checkOperator(operator)
}

// CheckReviewInput checks a review's operator and note.
func CheckReviewInput(operator, note string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return checkText("note", note)
}
