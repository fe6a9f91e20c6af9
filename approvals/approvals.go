// Package approvals holds the rules that decide what an action needs before
// it may run: which policy applies to its kind, and whether an operator's
// decision on a request is allowed. It is pure logic with no storage, so
// the ledger can apply it inside the same transaction that records the
// result, and the rules can be tested without a database.
package approvals

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Mode is what a policy rule requires of an action.
type Mode string

// The three policy modes.
const (
	// Auto permits without approval.
	Auto Mode = "auto"
	// Approval waits for an operator's decision, within a TTL.
	Approval Mode = "approval"
	// Deny refuses the action.
	Deny Mode = "deny"
)

// DefaultTTL is how long an approval request waits when a rule names no TTL.
const DefaultTTL = 24 * time.Hour

// ParseMode checks a mode name given by a user.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Auto, Approval, Deny:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown policy mode %q: use auto, approval or deny", s)
}

// Rule maps a kind pattern to a mode. Pattern is an exact kind or a glob
// where * matches any run of characters and ? any one character.
type Rule struct {
	ID      int64
	Pattern string
	Mode    Mode
	// TTL is the approval deadline for Approval rules.
	TTL time.Duration
	// Approvers is the quorum for Approval rules: how many distinct
	// operators must approve (1 to MaxApprovers).
	Approvers int
	// Condition, when set, is a CEL expression the action must meet for
	// the rule to apply (condition.go); a rule is identified by its
	// pattern and condition, and setting the same pair again replaces it.
	Condition string
	// Priority orders rules before specificity: higher first (Decide).
	Priority int
}

// MaxPriority bounds a rule's priority either way.
const MaxPriority = 1000

// MaxApprovers bounds a quorum.
const MaxApprovers = 9

// DefaultRule is the rule applied when no rule matches: ask a human. It
// is a function so that no caller can change it for everyone.
func DefaultRule() Rule {
	return Rule{Pattern: "(no rule matches)", Mode: Approval, TTL: DefaultTTL, Approvers: 1}
}

// ValidatePattern checks a rule pattern.
func ValidatePattern(p string) error {
	if p == "" || len(p) > 200 {
		return errors.New("a policy pattern is 1 to 200 characters")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return errors.New("a policy pattern has no control characters")
		}
	}
	return nil
}

// IsGlob reports whether a pattern has wildcards.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?") }

// Match picks the rule for kind: an exact pattern wins; otherwise the
// matching glob with the most literal characters (the most specific);
// among equals the later rule. No match gives DefaultRule.
func Match(rules []Rule, kind string) Rule {
	best, bestScore := DefaultRule(), -1
	for _, r := range rules {
		score := -1
		switch {
		case r.Pattern == kind:
			score = 1 << 20
		case IsGlob(r.Pattern) && glob(r.Pattern, kind):
			score = len(r.Pattern) - strings.Count(r.Pattern, "*") - strings.Count(r.Pattern, "?")
		}
		if score >= 0 && score >= bestScore {
			best, bestScore = r, score
		}
	}
	if best.Mode == Approval && best.TTL <= 0 {
		best.TTL = DefaultTTL
	}
	if best.Approvers < 1 {
		best.Approvers = 1
	}
	return best
}

// glob matches s against a pattern of literals, * and ?.
func glob(pattern, s string) bool {
	p, str := []rune(pattern), []rune(s)
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(str) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == str[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Decision refusals, matched with errors.Is.
var (
	// ErrNoRequest means the key has no approval request to decide.
	ErrNoRequest = errors.New("no approval request for this key")
	// ErrAlreadyDecided means the request already has its one decision.
	ErrAlreadyDecided = errors.New("already decided")
	// ErrExpired means the request's deadline passed before the decision.
	ErrExpired = errors.New("approval request expired")
	// ErrSelfApproval means the operator is the agent that asked.
	ErrSelfApproval = errors.New("an operator may not approve their own request")
	// ErrReasonRequired means a rejection came without a reason.
	ErrReasonRequired = errors.New("a rejection needs a reason")
)

// Request is what a decision is checked against.
type Request struct {
	Exists  bool
	Agent   string
	Expires time.Time
	Decided string // "", "approved" or "rejected"
	// Voted are the operators who already decided it (toward a quorum).
	Voted []string
}

// CheckDecision applies the decision rules: one decision per request, none
// after the deadline, no self-approval, and a reason for every rejection.
func CheckDecision(req Request, operator string, approve bool, reason string, now time.Time) error {
	switch {
	case !req.Exists:
		return ErrNoRequest
	case req.Decided != "":
		return fmt.Errorf("%w (%s)", ErrAlreadyDecided, req.Decided)
	case slices.ContainsFunc(req.Voted, func(v string) bool { return SameName(v, operator) }):
		return fmt.Errorf("%w: operator %q already decided this request; a quorum needs distinct operators", ErrAlreadyDecided, operator)
	case !now.Before(req.Expires):
		return fmt.Errorf("%w at %s", ErrExpired, req.Expires.UTC().Format(time.RFC3339))
	case approve && SameName(operator, req.Agent):
		return fmt.Errorf("%w (operator %q and agent %q are the same name, %q)", ErrSelfApproval, operator, req.Agent, NameKey(operator))
	case !approve && strings.TrimSpace(reason) == "":
		return ErrReasonRequired
	}
	return nil
}
