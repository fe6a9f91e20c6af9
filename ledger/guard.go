package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// DefaultLease is how long a permit holder has to report before the action
// becomes uncertain.
const DefaultLease = 15 * time.Minute

// Verdict is what a guard answer tells the caller to do.
type Verdict string

// The verdicts, each with the CLI exit code it maps to.
const (
	// Permitted: a permit was issued to this call now; execute, then report (0).
	Permitted Verdict = "permitted"
	// RetryLater: pending approval or another holder is executing (75).
	RetryLater Verdict = "retry-later"
	// Denied: rejected, expired, denied by policy or fenced (5).
	Denied Verdict = "denied"
	// Uncertain: an operator must reconcile; do not re-execute (6).
	Uncertain Verdict = "uncertain"
	// Settled: the outcome is known; do not execute (10).
	Settled Verdict = "settled"
)

// GuardOptions qualifies a Guard call.
type GuardOptions struct {
	Agent  string
	Redact bool
	// Lease is the permit's lease; zero means DefaultLease.
	Lease time.Duration
}

// Answer is the result of Guard: the key's state and what to do next.
type Answer struct {
	Key     string  `json:"key"`
	Logical string  `json:"logical_key"`
	Epoch   string  `json:"epoch"`
	SHA256  string  `json:"payload_sha256"`
	State   State   `json:"state"`
	Verdict Verdict `json:"verdict"`
	// Replayed is true when this call created nothing: an earlier call
	// already stored the intent, request or permit it reports.
	Replayed bool `json:"replayed"`
	// SafeNewKey is true when the key has ended without executing (or
	// after a failure): a new reviewed operation under a new key is the way on.
	SafeNewKey bool `json:"safe_new_key"`
	// Policy is the mode applied, present on the call that evaluated it.
	Policy approvals.Mode `json:"policy,omitempty"`
	// PermitID is set only on the call that was issued the permit.
	PermitID   string    `json:"permit_id,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	ExpiresAt  time.Time `json:"approval_expires_at,omitzero"`
	Reason     string    `json:"reason,omitempty"`
}

// Guard is the agent's one call before acting. It records the intent if
// new (with Record's conflict rules), evaluates policy once per key,
// requests approval once, issues at most one permit, and answers with the
// key's state. Every step it takes is its own row, in one transaction.
func (s *Store) Guard(ctx context.Context, key string, p Payload, opt GuardOptions) (Answer, error) {
	k, err := CheckGuardInput(key, p, opt)
	if err != nil {
		return Answer{}, err
	}
	if opt.Lease == 0 {
		opt.Lease = DefaultLease
	}
	// An identical retry of a key that needs no new step is answered from
	// one index read. The projection grants nothing: only answers that
	// tell the caller to wait or stop are read from it; rejected and
	// reconciled keys need their reason, and recorded and approved keys a
	// write, so they take the full path, which reads the facts.
	digest := p.Digest()
	if ix, ok := s.fastLookup(ctx, k.String(), p.Kind, digest); ok {
		switch ix.Stage {
		case StatePending, StateExecuting, StateUncertain, StateSucceeded, StateFailed, StateDenied:
			a := Answer{Key: k.String(), Logical: k.Logical, Epoch: k.Epoch, SHA256: ix.SHA256, Replayed: true}
			return answerFor(a, keyFacts{Stage: ix.Stage, Deadline: ix.Deadline}, ms(s.now())), nil
		}
	}
	var ans Answer
	var conflict *ConflictError
	var fence *FencedError
	err = s.write(ctx, func(tx *Tx) error {
		conflict, fence = nil, nil
		now := ms(s.now())
		in, ce, fe, err := recordTx(ctx, tx, k, p, digest, RecordOptions{Agent: opt.Agent, Redact: opt.Redact}, now)
		if err != nil || ce != nil || fe != nil {
			conflict, fence = ce, fe
			return err
		}
		ans, fence, err = guardTx(ctx, tx, k, in, opt, now)
		return err
	})
	switch {
	case err != nil:
		return Answer{}, err
	case conflict != nil:
		return Answer{Key: k.String(), Logical: k.Logical, Epoch: k.Epoch, SHA256: conflict.StoredSHA256, State: conflict.State}, conflict
	case fence != nil:
		return Answer{Key: k.String(), Logical: k.Logical, Epoch: k.Epoch, Verdict: Denied, Reason: fence.Reason}, fence
	}
	return ans, nil
}

// guardTx takes the key's next step from its facts (in.facts, read in
// this transaction): evaluate policy, request approval, or issue the
// permit an approval or an auto rule allows.
func guardTx(ctx context.Context, tx *Tx, k Key, in Intent, opt GuardOptions, now int64) (Answer, *FencedError, error) {
	key := k.String()
	a := Answer{Key: key, Logical: k.Logical, Epoch: k.Epoch, SHA256: in.SHA256, Replayed: !in.Created}
	f := in.facts
	switch f.Stage {
	case StateRecorded, StateApproved:
		// Both lead to a new permit (or a request); a key admitted under an
		// older epoch gets neither.
		if !in.Created {
			act, err := activeEpoch(ctx, tx)
			if err != nil {
				return a, nil, err
			}
			if act.Epoch != "" && k.Epoch != act.Epoch {
				fe, err := logFence(ctx, tx, k, act.Epoch, in.SHA256, opt.Agent,
					fmt.Sprintf("admitted under epoch %q, not the active epoch %s: no new permit", k.Epoch, act.Epoch), now)
				return a, fe, err
			}
		}
		if f.Stage == StateApproved {
			return issuePermit(ctx, tx, a, opt, now)
		}
		rule, err := evaluatePolicy(ctx, tx, key, in.Kind, opt, now)
		if err != nil {
			return a, nil, err
		}
		a.Policy, a.Replayed = rule.Mode, false
		switch rule.Mode {
		case approvals.Deny:
			a.State, a.Verdict, a.Reason = StateDenied, Denied, "denied by policy "+rule.Pattern
			return a, nil, setStage(ctx, tx, key, StateDenied, 0, now)
		case approvals.Auto:
			return issuePermit(ctx, tx, a, opt, now)
		}
		exp := now + rule.TTL.Milliseconds()
		ref, err := insertFact(ctx, tx, "approval_requests", "action_key, agent, requested_ms, expires_ms", key, opt.Agent, now, exp)
		if err != nil {
			return a, nil, err
		}
		if err := appendEvent(ctx, tx, key, evApprovalRequested, opt.Agent, map[string]any{"expires_ms": exp}, now, &ref); err != nil {
			return a, nil, err
		}
		a.State, a.Verdict, a.ExpiresAt = StatePending, RetryLater, fromMS(exp)
		return a, nil, setStage(ctx, tx, key, StatePending, exp, now)
	}
	return answerFor(a, f, now), nil, nil
}

// answerFor is the answer for a key that needs no new step.
func answerFor(a Answer, f keyFacts, now int64) Answer {
	a.State = stateFrom(f.Stage, f.Deadline, now)
	a.SafeNewKey = safeNewKey(a.State, f.Result)
	switch a.State {
	case StatePending:
		a.Verdict, a.ExpiresAt, a.Reason = RetryLater, fromMS(f.Deadline), "waiting for an operator's approval"
	case StateExpired:
		a.Verdict, a.Reason = Denied, "the approval request expired"
	case StateDenied:
		a.Verdict, a.Reason = Denied, "denied by policy"
	case StateRejected:
		a.Verdict, a.Reason = Denied, "rejected: "+f.Reason
	case StateExecuting:
		a.Verdict, a.LeaseUntil, a.Reason = RetryLater, fromMS(f.Deadline), "a permit was issued earlier and its lease is running"
	case StateUncertain:
		a.Verdict, a.Reason = Uncertain, "permit issued with no confirmed outcome: an operator must reconcile; do not re-execute"
	case StateSucceeded, StateFailed:
		a.Verdict = Settled
	case StateReconciled:
		a.Verdict, a.Reason = Settled, "reconciled: "+string(f.Result)
	default:
		// recorded or approved with no step taken: only a caller that
		// could not write (the fast path never gets here) sees this.
		a.Verdict, a.Reason = RetryLater, "no step taken yet"
	}
	return a
}

func issuePermit(ctx context.Context, tx *Tx, a Answer, opt GuardOptions, now int64) (Answer, *FencedError, error) {
	id := newUUID()
	lease := now + opt.Lease.Milliseconds()
	ref, err := insertFact(ctx, tx, "permits", "action_key, permit_id, agent, issued_ms, lease_ms", a.Key, id, opt.Agent, now, lease)
	if err != nil {
		return a, nil, err
	}
	if err := appendEvent(ctx, tx, a.Key, evPermitIssued, opt.Agent, map[string]any{"permit_id": id, "lease_ms": lease}, now, &ref); err != nil {
		return a, nil, err
	}
	a.State, a.Verdict, a.PermitID, a.LeaseUntil, a.Replayed = StateExecuting, Permitted, id, fromMS(lease), false
	return a, nil, setStage(ctx, tx, a.Key, StateExecuting, lease, now)
}

func currentRules(ctx context.Context, tx *Tx) ([]approvals.Rule, error) {
	return queryRows(ctx, tx, `SELECT id, pattern, mode, ttl_ms FROM policy_rules
		WHERE id IN (SELECT max(id) FROM policy_rules GROUP BY pattern) ORDER BY id`, nil, func(rows *sql.Rows, r *approvals.Rule) error {
		var ttl int64
		err := rows.Scan(&r.ID, &r.Pattern, &r.Mode, &ttl)
		r.TTL = time.Duration(ttl) * time.Millisecond
		return err
	})
}

// evaluatePolicy applies the rules once per key and stores the result.
func evaluatePolicy(ctx context.Context, tx *Tx, key, kind string, opt GuardOptions, now int64) (approvals.Rule, error) {
	rules, err := currentRules(ctx, tx)
	if err != nil {
		return approvals.Rule{}, err
	}
	r := approvals.Match(rules, kind)
	var ruleID any
	if r.ID != 0 {
		ruleID = r.ID
	}
	ref, err := insertFact(ctx, tx, "policy_evals", "action_key, mode, ttl_ms, rule_id, pattern, at_ms",
		key, string(r.Mode), r.TTL.Milliseconds(), ruleID, r.Pattern, now)
	if err != nil {
		return r, err
	}
	return r, appendEvent(ctx, tx, key, evPolicyEvaluated, opt.Agent, map[string]any{"mode": r.Mode, "pattern": r.Pattern, "ttl_ms": r.TTL.Milliseconds()}, now, &ref)
}

// SetPolicy adds a rule for a kind pattern; a later rule for the same
// pattern replaces the earlier one for keys evaluated from now on.
func (s *Store) SetPolicy(ctx context.Context, pattern string, mode approvals.Mode, ttl time.Duration, operator string) (approvals.Rule, error) {
	if err := CheckPolicyInput(pattern, mode, ttl, operator); err != nil {
		return approvals.Rule{}, err
	}
	switch {
	case mode != approvals.Approval:
		ttl = 0
	case ttl == 0:
		ttl = approvals.DefaultTTL
	}
	r := approvals.Rule{Pattern: pattern, Mode: mode, TTL: ttl}
	err := s.write(ctx, func(tx *Tx) error {
		now := ms(s.now())
		ref, err := insertFact(ctx, tx, "policy_rules", "pattern, mode, ttl_ms, operator, set_ms",
			pattern, string(mode), ttl.Milliseconds(), operator, now)
		if err != nil {
			return err
		}
		r.ID = ref.rowID()
		return appendEvent(ctx, tx, "", evPolicySet, operator, map[string]any{"rule_id": r.ID, "pattern": pattern, "mode": mode, "ttl_ms": ttl.Milliseconds()}, now, &ref)
	})
	return r, err
}

// Policies returns the rules in force, oldest first.
func (s *Store) Policies(ctx context.Context) ([]approvals.Rule, error) {
	var out []approvals.Rule
	err := s.read(ctx, func(tx *Tx) error {
		var err error
		out, err = currentRules(ctx, tx)
		return err
	})
	return out, err
}

// Decision is an operator's recorded decision on an approval request.
type Decision struct {
	Key      string       `json:"key"`
	Decision DecisionKind `json:"decision"`
	Operator string       `json:"operator"`
	Reason   string       `json:"reason"`
	At       time.Time    `json:"at"`
}

// Approve records an approval. The next Guard under the key gets the permit.
func (s *Store) Approve(ctx context.Context, key, operator, reason string) (Decision, error) {
	return s.decide(ctx, key, operator, DecisionApproved, reason)
}

// Reject records a rejection; a reason is required.
func (s *Store) Reject(ctx context.Context, key, operator, reason string) (Decision, error) {
	return s.decide(ctx, key, operator, DecisionRejected, reason)
}

// CheckDecisionInput applies the rules a decision's input must meet
// before any ledger is opened: the key grammar, the operator's name and
// the reason's bounds.
func CheckDecisionInput(key, operator string, decision DecisionKind, reason string) error {
	if _, err := ParseKey(key); err != nil {
		return err
	}
	if err := checkOperator(operator); err != nil {
		return err
	}
	if decision == DecisionRejected && strings.TrimSpace(reason) == "" {
		return fmt.Errorf("%w: %v", ErrInvalidInput, approvals.ErrReasonRequired)
	}
	return checkText("reason", reason)
}

func (s *Store) decide(ctx context.Context, key, operator string, decision DecisionKind, reason string) (Decision, error) {
	if err := CheckDecisionInput(key, operator, decision, reason); err != nil {
		return Decision{}, err
	}
	k, _ := ParseKey(key)
	d := Decision{Key: key, Decision: decision, Operator: operator, Reason: reason}
	var fence *FencedError
	err := s.write(ctx, func(tx *Tx) error {
		fence = nil
		now := ms(s.now())
		var req approvals.Request
		var exp int64
		err := tx.QueryRowContext(ctx, `SELECT r.agent, r.expires_ms, coalesce(d.decision, '') FROM approval_requests r
			LEFT JOIN decisions d ON d.action_key = r.action_key WHERE r.action_key = ?`, key).Scan(&req.Agent, &exp, &req.Decided)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		req.Exists, req.Expires = err == nil, fromMS(exp)
		if err := approvals.CheckDecision(req, operator, decision == DecisionApproved, reason, fromMS(now)); err != nil {
			return &DecisionError{Key: key, Err: err}
		}
		// A key admitted under an older epoch can never get a permit, so
		// approving it would record an approval that means nothing; a
		// rejection, which closes the key, stays allowed.
		act, err := activeEpoch(ctx, tx)
		if err != nil {
			return err
		}
		if decision == DecisionApproved && act.Epoch != "" && k.Epoch != act.Epoch {
			digest := ""
			if err := tx.QueryRowContext(ctx, "SELECT payload_sha256 FROM intents WHERE action_key = ?", key).Scan(&digest); err != nil {
				return err
			}
			fence, err = logFence(ctx, tx, k, act.Epoch, digest, operator,
				fmt.Sprintf("admitted under epoch %q, not the active epoch %s: it can get no permit, so it cannot be decided", k.Epoch, act.Epoch), now)
			return err
		}
		ref, err := insertFact(ctx, tx, "decisions", "action_key, decision, operator, reason, at_ms", key, string(decision), operator, reason, now)
		if err != nil {
			return err
		}
		d.At = fromMS(now)
		if err := appendEvent(ctx, tx, key, string(decision), operator, map[string]any{"reason": reason}, now, &ref); err != nil {
			return err
		}
		return setStage(ctx, tx, key, State(decision), 0, now)
	})
	if err == nil && fence != nil {
		return Decision{}, fence
	}
	return d, err
}

// DecisionError reports a refused decision; it unwraps to one of the
// approvals package's sentinels (ErrAlreadyDecided, ErrExpired, ...).
type DecisionError struct {
	Key string
	Err error
}

// Error implements error.
func (e *DecisionError) Error() string { return fmt.Sprintf("key %s: %v", e.Key, e.Err) }

// Unwrap exposes the rule that refused the decision.
func (e *DecisionError) Unwrap() error { return e.Err }

// checkText bounds free text from operators and agents (reasons, notes,
// references). It is stored as given and escaped only when displayed.
func checkText(what, s string) error {
	if len(s) > 4000 {
		return fmt.Errorf("%w: %s must be at most 4000 bytes", ErrInvalidInput, what)
	}
	if !validUTF8(s) {
		return fmt.Errorf("%w: %s must be valid UTF-8", ErrInvalidInput, what)
	}
	return nil
}
