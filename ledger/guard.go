package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
	// Reconcile: uncertain; an operator must reconcile, do not re-execute (6).
	Reconcile Verdict = "uncertain"
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
	k, err := ParseKey(key)
	if err != nil {
		return Answer{}, err
	}
	if err := p.Validate(); err != nil {
		return Answer{}, err
	}
	if err := checkName("agent", opt.Agent); err != nil {
		return Answer{}, err
	}
	if opt.Lease == 0 {
		opt.Lease = DefaultLease
	}
	if opt.Lease < time.Second || opt.Lease > 7*24*time.Hour {
		return Answer{}, fmt.Errorf("%w: a lease is between 1s and 168h", ErrInvalidInput)
	}
	// An identical retry of a key that needs no new step is answered from
	// one index read; rejected and reconciled keys need their reason, and
	// recorded and approved keys a write, so they take the full path.
	digest := p.Digest()
	if ix, ok := s.fastLookup(ctx, k.String(), p.Kind, digest); ok {
		switch ix.Stage {
		case "pending", "executing", "uncertain", "succeeded", "failed", "denied":
			a := Answer{Key: k.String(), Logical: k.Logical, Epoch: k.Epoch, SHA256: ix.SHA256, Replayed: true}
			a, _, err := answerFor(ctx, nil, a, ix, ms(s.now()))
			return a, err
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

func guardTx(ctx context.Context, tx *Tx, k Key, in Intent, opt GuardOptions, now int64) (Answer, *FencedError, error) {
	key := k.String()
	a := Answer{Key: key, Logical: k.Logical, Epoch: k.Epoch, SHA256: in.SHA256, Replayed: !in.Created}
	ix := in.ix
	switch ix.Stage {
	case "recorded", "approved":
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
		if ix.Stage == "approved" {
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
			return a, nil, setStage(ctx, tx, key, "denied", 0, now)
		case approvals.Auto:
			return issuePermit(ctx, tx, a, opt, now)
		}
		exp := now + rule.TTL.Milliseconds()
		if _, err := tx.ExecContext(ctx, "INSERT INTO approval_requests(action_key, agent, requested_ms, expires_ms) VALUES (?, ?, ?, ?)",
			key, opt.Agent, now, exp); err != nil {
			return a, nil, err
		}
		if err := appendEvent(ctx, tx, key, "approval_requested", opt.Agent, map[string]any{"expires_ms": exp}, now); err != nil {
			return a, nil, err
		}
		a.State, a.Verdict, a.ExpiresAt = StatePending, RetryLater, fromMS(exp)
		return a, nil, setStage(ctx, tx, key, "pending", exp, now)
	}
	return answerFor(ctx, tx, a, ix, now)
}

// answerFor reads the answer for a key that needs no new step.
func answerFor(ctx context.Context, tx *Tx, a Answer, ix indexRow, now int64) (Answer, *FencedError, error) {
	a.State = stateFrom(ix.Stage, ix.Deadline, now)
	switch a.State {
	case StatePending:
		a.Verdict, a.ExpiresAt, a.Reason = RetryLater, fromMS(ix.Deadline), "waiting for an operator's approval"
	case StateExpired:
		a.Verdict, a.SafeNewKey, a.Reason = Denied, true, "the approval request expired"
	case StateDenied:
		a.Verdict, a.Reason = Denied, "denied by policy"
	case StateRejected:
		var reason string
		tx.QueryRowContext(ctx, "SELECT reason FROM decisions WHERE action_key = ?", a.Key).Scan(&reason)
		a.Verdict, a.SafeNewKey, a.Reason = Denied, true, "rejected: "+reason
	case StateExecuting:
		a.Verdict, a.LeaseUntil, a.Reason = RetryLater, fromMS(ix.Deadline), "a permit was issued earlier and its lease is running"
	case StateUncertain:
		a.Verdict, a.Reason = Reconcile, "permit issued with no confirmed outcome: an operator must reconcile; do not re-execute"
	case StateSucceeded:
		a.Verdict = Settled
	case StateFailed:
		a.Verdict, a.SafeNewKey = Settled, true
	case StateReconciled:
		var result string
		tx.QueryRowContext(ctx, "SELECT result FROM reconciliations WHERE action_key = ?", a.Key).Scan(&result)
		a.Verdict, a.SafeNewKey, a.Reason = Settled, result == "not-executed", "reconciled: "+result
	default:
		return a, nil, fmt.Errorf("key %s: unexpected stage %q", a.Key, ix.Stage)
	}
	return a, nil, nil
}

func issuePermit(ctx context.Context, tx *Tx, a Answer, opt GuardOptions, now int64) (Answer, *FencedError, error) {
	id := newUUID()
	lease := now + opt.Lease.Milliseconds()
	if _, err := tx.ExecContext(ctx, "INSERT INTO permits(action_key, permit_id, agent, issued_ms, lease_ms) VALUES (?, ?, ?, ?, ?)",
		a.Key, id, opt.Agent, now, lease); err != nil {
		return a, nil, err
	}
	if err := appendEvent(ctx, tx, a.Key, "permit_issued", opt.Agent, map[string]any{"permit_id": id, "lease_ms": lease}, now); err != nil {
		return a, nil, err
	}
	a.State, a.Verdict, a.PermitID, a.LeaseUntil, a.Replayed = StateExecuting, Permitted, id, fromMS(lease), false
	return a, nil, setStage(ctx, tx, a.Key, "executing", lease, now)
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
	if _, err := tx.ExecContext(ctx, "INSERT INTO policy_evals(action_key, mode, ttl_ms, rule_id, pattern, at_ms) VALUES (?, ?, ?, ?, ?, ?)",
		key, string(r.Mode), r.TTL.Milliseconds(), ruleID, r.Pattern, now); err != nil {
		return r, err
	}
	return r, appendEvent(ctx, tx, key, "policy_evaluated", opt.Agent, map[string]any{"mode": r.Mode, "pattern": r.Pattern, "ttl_ms": r.TTL.Milliseconds()}, now)
}

// SetPolicy adds a rule for a kind pattern; a later rule for the same
// pattern replaces the earlier one for keys evaluated from now on.
func (s *Store) SetPolicy(ctx context.Context, pattern string, mode approvals.Mode, ttl time.Duration, operator string) (approvals.Rule, error) {
	if err := approvals.ValidatePattern(pattern); err != nil {
		return approvals.Rule{}, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	if _, err := approvals.ParseMode(string(mode)); err != nil {
		return approvals.Rule{}, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	if ttl < 0 || ttl > 365*24*time.Hour {
		return approvals.Rule{}, fmt.Errorf("%w: a TTL is between 0 and 8760h", ErrInvalidInput)
	}
	if mode == approvals.Approval && ttl == 0 {
		ttl = approvals.DefaultTTL
	}
	if err := checkOperator(operator); err != nil {
		return approvals.Rule{}, err
	}
	r := approvals.Rule{Pattern: pattern, Mode: mode, TTL: ttl}
	err := s.write(ctx, func(tx *Tx) error {
		now := ms(s.now())
		res, err := tx.ExecContext(ctx, "INSERT INTO policy_rules(pattern, mode, ttl_ms, operator, set_ms) VALUES (?, ?, ?, ?, ?)",
			pattern, string(mode), ttl.Milliseconds(), operator, now)
		if err != nil {
			return err
		}
		r.ID, _ = res.LastInsertId()
		return appendEvent(ctx, tx, "", "policy_set", operator, map[string]any{"rule_id": r.ID, "pattern": pattern, "mode": mode, "ttl_ms": ttl.Milliseconds()}, now)
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
	Key      string    `json:"key"`
	Decision string    `json:"decision"`
	Operator string    `json:"operator"`
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
}

// Approve records an approval. The next Guard under the key gets the permit.
func (s *Store) Approve(ctx context.Context, key, operator, reason string) (Decision, error) {
	return s.decide(ctx, key, operator, true, reason)
}

// Reject records a rejection; a reason is required.
func (s *Store) Reject(ctx context.Context, key, operator, reason string) (Decision, error) {
	return s.decide(ctx, key, operator, false, reason)
}

func (s *Store) decide(ctx context.Context, key, operator string, approve bool, reason string) (Decision, error) {
	if _, err := ParseKey(key); err != nil {
		return Decision{}, err
	}
	if err := checkOperator(operator); err != nil {
		return Decision{}, err
	}
	if err := checkText("reason", reason); err != nil {
		return Decision{}, err
	}
	d := Decision{Key: key, Decision: "rejected", Operator: operator, Reason: reason}
	if approve {
		d.Decision = "approved"
	}
	err := s.write(ctx, func(tx *Tx) error {
		now := ms(s.now())
		var req approvals.Request
		var exp int64
		err := tx.QueryRowContext(ctx, `SELECT r.agent, r.expires_ms, coalesce(d.decision, '') FROM approval_requests r
			LEFT JOIN decisions d ON d.action_key = r.action_key WHERE r.action_key = ?`, key).Scan(&req.Agent, &exp, &req.Decided)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		req.Exists, req.Expires = err == nil, fromMS(exp)
		if err := approvals.CheckDecision(req, operator, approve, reason, fromMS(now)); err != nil {
			return &DecisionError{Key: key, Err: err}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO decisions(action_key, decision, operator, reason, at_ms) VALUES (?, ?, ?, ?, ?)",
			key, d.Decision, operator, reason, now); err != nil {
			return err
		}
		d.At = fromMS(now)
		if err := appendEvent(ctx, tx, key, d.Decision, operator, map[string]any{"reason": reason}, now); err != nil {
			return err
		}
		return setStage(ctx, tx, key, d.Decision, 0, now)
	})
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
