package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/opkeys"
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
	// Context is what policy may read about the action beside its
	// payload; it is bound to the key like the payload.
	Context Context
	// Attempt is the client's id for this call, sent again on every
	// retry of it (attempts.go): the permit a guard carrying it is issued
	// is given again to a later guard with the same id, key, payload and
	// agent while it executes. Empty: none.
	Attempt string
	// Caller, when set, says whether the caller may act on a key recorded
	// under the agent name owner ("" for an intent recorded outside
	// tollgate). A key it refuses is answered ErrNotCallersKey before any
	// step is taken or anything logged: a server whose callers share the
	// store keeps one agent from being handed the permit an operator
	// approved for another whose key and payload it guessed. It is asked
	// in the guard's own reads (the projection row a retry is answered
	// from, the facts the transaction reads), so the check costs no read
	// of its own. Nil: every key is the caller's (one agent per store).
	Caller func(ctx context.Context, owner string) (bool, error)
	// target is the payload's target, for a condition to read.
	target string
	// body is the payload's body, for a condition to read as
	// action.body; evaluatePolicy leaves it out of a redacted payload.
	body string
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
	// Approvers is the quorum the request needs, on the call that made it.
	Approvers int `json:"approvers,omitempty"`
	// Rule explains the policy decision, on the call that made it: the
	// rule (its id is its version), its condition and what it read.
	Rule   *approvals.Explain `json:"rule,omitempty"`
	Reason string             `json:"reason,omitempty"`
	// CallerAsserted lists the context fields the caller asserted where
	// a transport derived the others (the MCP proxy's --caller-context).
	CallerAsserted []string `json:"caller_asserted,omitempty"`
}

// Guard is the agent's one call before acting. It records the intent if
// new (with Record's conflict rules), evaluates policy once per key,
// requests approval once, issues at most one permit, and answers with the
// key's state. Every step it takes is its own row, in one transaction.
func (s *Store) Guard(ctx context.Context, key string, p Payload, opt GuardOptions) (Answer, error) {
	a, err := s.guard(ctx, key, p, opt)
	a.CallerAsserted = opt.Context.CallerAsserted()
	return a, err
}

func (s *Store) guard(ctx context.Context, key string, p Payload, opt GuardOptions) (Answer, error) {
	k, err := CheckGuardInput(key, p, opt)
	if err != nil {
		return Answer{}, err
	}
	opt.Agent = s.agentOr(opt.Agent)
	if opt.Lease == 0 {
		opt.Lease = DefaultLease
	}
	// An identical retry of a key that needs no new step is answered from
	// one index read (indexAnswer).
	digest := p.Digest()
	opt.target, opt.body = p.Target, p.Body
	g := s.grantInputs()
	looked := false // the database read the key's row and looked for the attempt's permit
	if sg, ok := s.serverGuard(g); ok {
		// The database answers the common guard whole, the retry's lookup
		// and an attempt's included, in one round trip; what it leaves to
		// this path it leaves having written nothing.
		a, path, err := s.guardOnServer(ctx, sg, k, p, digest, opt)
		if path == serverDone || err != nil {
			return a, err
		}
		looked = path == serverLeft
	}
	if !looked {
		if a, ok, err := s.lookupGuard(ctx, k, p.Kind, digest, opt); ok || err != nil {
			return a, err
		}
	}
	// The permit ids this call's attempts issued: an attempt whose
	// COMMIT's answer was lost may have stored its permit, which the
	// retry then finds. Only this call knew the id, so the permit is its
	// caller's, who is told so rather than to wait for a lease no one
	// holds.
	var issued []string
	r, err := writeKeyed(ctx, s, k.Logical, func(tx *Tx) (refused[Answer], error) {
		in, ce, fe, err := recordTx(ctx, tx, k, p, digest, RecordOptions{Agent: opt.Agent, Redact: opt.Redact, Context: opt.Context, mayActOn: opt.mayActOn}, tx.now)
		switch {
		case err != nil:
			return refused[Answer]{}, err
		case ce != nil:
			return refused[Answer]{Answer{Key: k.String(), Logical: k.Logical, Epoch: k.Epoch, SHA256: ce.StoredSHA256, State: ce.State}, ce}, nil
		case fe != nil:
			return refused[Answer]{Answer{Key: k.String(), Logical: k.Logical, Epoch: k.Epoch, Verdict: Denied, Reason: fe.Reason}, fe}, nil
		}
		a, fe, err := guardTx(ctx, tx, k, in, opt, g, tx.now)
		switch {
		case err != nil || fe != nil:
		case a.PermitID != "":
			issued = append(issued, a.PermitID)
		case len(issued) > 0 && a.State == StateExecuting:
			a, err = ownPermit(ctx, tx, a, issued)
		}
		if fe != nil {
			return refused[Answer]{Answer{Key: k.String(), Logical: k.Logical, Epoch: k.Epoch, Verdict: Denied, Reason: fe.Reason}, fe}, err
		}
		return refused[Answer]{val: a}, err
	})
	if err != nil {
		return Answer{}, err
	}
	return r.val, r.err
}

// lookupGuard answers a guard the database's call did not (SQLite, a
// clock of the client's, a grant proved outside the ledger) from the
// key's projection row, read outside any transaction (indexAnswer), and
// gives a retry that carries an attempt id its permit (replayAttempt)
// only when the row says the key executes, or could not be read: a key
// that is new, settled, pending or another payload's holds no permit to
// give again, so an attempt id costs that read transaction only where a
// permit might be given. ok is false when the key transaction decides.
func (s *Store) lookupGuard(ctx context.Context, k Key, kind, digest string, opt GuardOptions) (a Answer, ok bool, err error) {
	ix, found, read := s.indexLookup(ctx, k.String(), kind)
	same := found && ix.SHA256 == digest && ix.Context == opt.Context.Digest()
	if same {
		if err := opt.mayActOn(ctx, k.String(), ix.Agent); err != nil {
			return Answer{}, true, err
		}
	}
	if opt.Attempt != "" && (!read || same && ix.Stage == StateExecuting) {
		if a, ok, err := s.replayAttempt(ctx, k, digest, opt); ok || err != nil {
			return a, true, err
		}
	}
	if !same {
		return Answer{}, false, nil
	}
	a, ok = s.indexAnswer(ctx, k, ix, nil)
	return a, ok, nil
}

// ErrNotCallersKey means the key was recorded under an agent name the
// caller may not act as (GuardOptions.Caller): exit 77, HTTP 403.
var ErrNotCallersKey = fmt.Errorf("%w: the key was recorded by another agent, and a caller acts on its own keys only", ErrNotPermitted)

// mayActOn applies o.Caller to key, recorded under owner.
func (o GuardOptions) mayActOn(ctx context.Context, key, owner string) error {
	if o.Caller == nil {
		return nil
	}
	ok, err := o.Caller(ctx, owner)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("key %s: %w", key, ErrNotCallersKey)
	}
	return nil
}

// indexAnswer answers an identical retry from the key's projection row,
// read outside any transaction. The projection grants nothing: only
// answers that tell the caller to wait or stop are read from it;
// rejected and reconciled keys need their reason, and recorded and
// approved keys a write, so they take the full path (false), which reads
// the facts.
//
// epochIs, when not nil, says whether the key's epoch is the active one
// (read with the row); nil reads it.
func (s *Store) indexAnswer(ctx context.Context, k Key, ix indexRow, epochIs func(string) bool) (Answer, bool) {
	if epochIs == nil {
		epochIs = func(e string) bool { return s.epochIs(ctx, e) }
	}
	switch ix.Stage {
	case StatePending:
		// A pending key is answered from the index only while its epoch
		// is the active one (one more indexed read): a request of an
		// older epoch is fenced, on the full path.
		if ix.Deadline > toMS(s.now()) && !epochIs(k.Epoch) {
			return Answer{}, false
		}
		fallthrough
	case StateExecuting, StateUncertain, StateSucceeded, StateFailed, StateDenied:
		a := Answer{Key: k.String(), Logical: k.Logical, Epoch: k.Epoch, SHA256: ix.SHA256, Replayed: true}
		return answerFor(a, keyFacts{Stage: ix.Stage, Deadline: ix.Deadline}, toMS(s.now())), true
	}
	return Answer{}, false
}

// guardTx takes the key's next step from its facts (in.facts, read in
// this transaction): evaluate policy, request approval, or issue the
// permit an approval or an auto rule allows.
func guardTx(ctx context.Context, tx *Tx, k Key, in Intent, opt GuardOptions, g grantInputs, now int64) (Answer, *FencedError, error) {
	key := k.String()
	a := Answer{Key: key, Logical: k.Logical, Epoch: k.Epoch, SHA256: in.SHA256, Replayed: !in.Created}
	f := in.facts
	switch f.Stage {
	case StateRecorded, StateApproved:
		// Both lead to a new permit (or a request). A grant reads the
		// operator registry: on a signed ledger the approval's signatures
		// or the auto rule's must prove it, and the epoch it fences by must
		// prove itself too.
		t, err := loadTrust(ctx, tx, g.anchor)
		if err != nil {
			return a, nil, err
		}
		if err := t.checkWitness(ctx, tx, g); err != nil {
			return a, nil, err
		}
		// A step deleted under its event (a used permit, a rejection)
		// would leave the key reading as before that step. On PostgreSQL
		// no role guard runs as may delete or change a fact row (and an
		// agent's role cannot read every column a row hash covers).
		if !tx.server {
			if err := keyRowsCommitted(ctx, tx, key); err != nil {
				return a, nil, err
			}
		}
		// A key admitted under an older epoch gets neither a request nor a
		// permit. A key created in this transaction passed the fence a
		// moment ago; on a signed ledger the epoch must also prove itself.
		if t.required() || !in.Created {
			act, err := t.activeEpoch(ctx, tx)
			if err != nil {
				return a, nil, err
			}
			if act.Epoch != k.Epoch && (act.Epoch != "" || !in.Created) {
				fe, err := logFence(ctx, tx, k, act.Epoch, in.SHA256, opt.Agent,
					fmt.Sprintf("admitted under epoch %q, not the active epoch %q: no new permit", k.Epoch, act.Epoch), now)
				return a, fe, err
			}
		}
		if f.Stage == StateApproved {
			if t.required() {
				if err := t.proveApproval(ctx, tx, key); err != nil {
					return a, nil, err
				}
			}
			return issuePermit(ctx, tx, a, opt, now)
		}
		if tx.server && (opt.Redact || f.Redacted) {
			// The database evaluates the rules too, from the stored
			// payload, which keeps no target when redacted: it is given
			// here, for this transaction, and taken only if its digest
			// is the payload's.
			if _, err := tx.ExecContext(ctx, "SELECT set_config('tollgate.target', ?, true)", opt.target); err != nil {
				return a, nil, err
			}
		}
		// action.agent is the agent whose intent it is, as stored: the
		// key's payload names it, and so does the database's own
		// evaluation on PostgreSQL, whoever guards the key.
		owner := in.Agent
		if owner == "" {
			owner = opt.Agent
		}
		if opt.Redact || f.Redacted {
			// A redacted payload keeps no body: a condition finds
			// action.body absent, as the database's evaluator does.
			opt.body = ""
		}
		rule, ex, err := evaluatePolicy(ctx, tx, key, in.Kind, owner, opt, t, now)
		if err != nil {
			return a, nil, err
		}
		a.Policy, a.Replayed = rule.Mode, false
		if ex.RuleID != 0 || ex.Error != "" {
			a.Rule = &ex
		}
		switch rule.Mode {
		case approvals.Deny:
			a.State, a.Verdict, a.Reason = StateDenied, Denied, "denied by policy "+rule.Pattern
			return a, nil, setStage(ctx, tx, key, StateDenied, 0, now)
		case approvals.Auto:
			return issuePermit(ctx, tx, a, opt, now)
		}
		a.Approvers = rule.Approvers
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
	case StatePending:
		// A request of an epoch that is no longer active can never be
		// approved (decide refuses it), so waiting on it is waiting for
		// ever: it is fenced.
		if stateFrom(f.Stage, f.Deadline, now) == StatePending {
			act, err := activeEpoch(ctx, tx)
			if err != nil {
				return a, nil, err
			}
			if act.Epoch != "" && act.Epoch != k.Epoch {
				fe, err := logFence(ctx, tx, k, act.Epoch, in.SHA256, opt.Agent,
					fmt.Sprintf("pending under epoch %q, not the active epoch %s: it can no longer be approved; use a key under the active epoch", k.Epoch, act.Epoch), now)
				return a, fe, err
			}
		}
	}
	return answerFor(a, f, now), nil, nil
}

// ownPermit answers a key whose running permit is one of issued (ids
// this call generated) as permitted to this caller, with that permit.
func ownPermit(ctx context.Context, tx *Tx, a Answer, issued []string) (Answer, error) {
	var id string
	var lease int64
	if err := tx.QueryRowContext(ctx, "SELECT permit_id, lease_ms FROM permits WHERE action_key = ?", a.Key).Scan(&id, &lease); err != nil {
		return a, err
	}
	if slices.Contains(issued, id) {
		a.Verdict, a.PermitID, a.LeaseUntil, a.Reason, a.Replayed = Permitted, id, fromMS(lease), "", false
	}
	return a, nil
}

// grantInputs is what a grant is checked against besides the ledger's
// own facts: the anchor outside it, and the heads of the witness guard
// consults with the path the ledger is witnessed under. They are read
// before the transaction (file I/O holds no lock).
type grantInputs struct {
	anchor  *opkeys.Anchor
	witness []Head
	path    string
	// unread is why a witness that exists could not be read: no grant
	// then (trust.checkWitness).
	unread error
}

// witnessed reports whether a witness has a say in a grant.
func (g grantInputs) witnessed() bool { return len(g.witness) > 0 || g.unread != nil }

func (s *Store) grantInputs() grantInputs {
	heads, err := s.witness.heads()
	return grantInputs{anchor: s.anchor, witness: heads, path: s.witnessName(), unread: err}
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
	if err := recordAttempt(ctx, tx, a.Key, id, opt.Agent, opt.Attempt, now); err != nil {
		return a, nil, err
	}
	a.State, a.Verdict, a.PermitID, a.LeaseUntil, a.Replayed = StateExecuting, Permitted, id, fromMS(lease), false
	return a, nil, setStage(ctx, tx, a.Key, StateExecuting, lease, now)
}

// rulesSQL reads rules oldest first; currentRules keeps the latest per
// pattern (what policy list shows). Match over every rule gives the same
// answer, since among equal patterns the later wins; evaluation reads them
// all, so that on a signed ledger an unproven latest rule leaves the
// proven one before it in force.
const rulesSQL = "SELECT id, pattern, mode, ttl_ms, approvers, condition, priority FROM policy_rules"

func scanRule(rows *sql.Rows, r *approvals.Rule) error {
	var ttl int64
	err := rows.Scan(&r.ID, &r.Pattern, &r.Mode, &ttl, &r.Approvers, &r.Condition, &r.Priority)
	r.TTL = time.Duration(ttl) * time.Millisecond
	return err
}

func currentRules(ctx context.Context, tx *Tx) ([]approvals.Rule, error) {
	return queryRows(ctx, tx, rulesSQL+" WHERE id IN (SELECT max(id) FROM policy_rules GROUP BY pattern, condition) ORDER BY id", nil, scanRule)
}

// evaluatePolicy applies the rules once per key and stores the result. On
// a signed ledger only rules whose signatures verify are applied: a rule
// inserted by hand is not policy.
func evaluatePolicy(ctx context.Context, tx *Tx, key, kind, agent string, opt GuardOptions, t *trust, now int64) (approvals.Rule, approvals.Explain, error) {
	rules, err := allRules(ctx, tx)
	if err != nil {
		return approvals.Rule{}, approvals.Explain{}, err
	}
	f := approvals.Facts{Kind: kind, Target: opt.target, Agent: agent, Body: opt.body, Context: opt.Context, Now: fromMS(now)}
	r, ex := approvals.Decide(newestRules(rules), f)
	if t.required() {
		if r, ex, err = t.decideProven(ctx, tx, rules, f); err != nil {
			return r, ex, err
		}
	}
	var ruleID any
	if r.ID != 0 {
		ruleID = r.ID
	}
	// A rule without a condition read nothing: its id and pattern, which
	// the row has anyway, are its whole explanation (status rebuilds it),
	// so only a condition's reads or error are stored.
	explain := ""
	if ex.Condition != "" || ex.Error != "" || ex.Semantics != 0 {
		b, _ := json.Marshal(ex)
		explain = string(b)
	}
	ref, err := insertFact(ctx, tx, "policy_evals", "action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain",
		key, string(r.Mode), r.TTL.Milliseconds(), ruleID, r.Pattern, now, r.Approvers, explain)
	if err != nil {
		return r, ex, err
	}
	return r, ex, appendEvent(ctx, tx, key, evPolicyEvaluated, opt.Agent, map[string]any{"mode": r.Mode, "pattern": r.Pattern, "ttl_ms": r.TTL.Milliseconds(), "approvers": r.Approvers}, now, &ref)
}

// SetPolicy adds a rule for a kind pattern; a later rule for the same
// pattern replaces the earlier one for keys evaluated from now on. On a
// signed ledger the rule is signed by the operator's key, and guard
// applies no rule that is not.
func (s *Store) SetPolicy(ctx context.Context, r approvals.Rule, operator string) (approvals.Rule, error) {
	if err := CheckPolicyInput(r, operator); err != nil {
		return approvals.Rule{}, err
	}
	switch {
	case r.Mode != approvals.Approval:
		r.TTL, r.Approvers = 0, 1
	case r.TTL == 0:
		r.TTL = approvals.DefaultTTL
	}
	r.Approvers = max(r.Approvers, 1)
	draft := statement{Fact: "policy_rules", Request: r.Pattern, condition: r.Condition,
		Act: policyAct(string(r.Mode), r.TTL.Milliseconds(), int64(r.Approvers), r.Condition, r.Priority)}
	_, err := s.signedWrite(ctx, operator, draft,
		func(tx *Tx, op string) (*factRef, error) {
			now := tx.now
			ref, err := insertFact(ctx, tx, "policy_rules", "pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority",
				r.Pattern, string(r.Mode), r.TTL.Milliseconds(), op, now, r.Approvers, r.Condition, r.Priority)
			if err != nil {
				return nil, err
			}
			r.ID = ref.rowID()
			if tx.server {
				if err := setConditionAST(ctx, tx, r); err != nil {
					return nil, err
				}
			}
			return &ref, appendEvent(ctx, tx, "", evPolicySet, op, map[string]any{"rule_id": r.ID, "pattern": r.Pattern, "mode": r.Mode,
				"ttl_ms": r.TTL.Milliseconds(), "approvers": r.Approvers}, now, &ref)
		})
	return r, err
}

// setConditionAST stores, on PostgreSQL, the translation of a rule's
// condition that the database evaluates (schema 11): the rule is
// enforced where the guard's transaction runs, whatever the guard's
// client sends. A condition outside the translated subset is refused.
func setConditionAST(ctx context.Context, tx *Tx, r approvals.Rule) error {
	if r.Condition == "" {
		return nil
	}
	ast, err := approvals.PortableConditionAST(r.Condition)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	_, err = tx.ExecContext(ctx, "SELECT tollgate_set_condition(?, ?)", r.ID, ast)
	return err
}

// fillConditionASTs translates, on PostgreSQL, every rule's condition
// that has no translation yet: the rules of a ledger made before schema
// 11, or copied into PostgreSQL. A condition outside the subset keeps
// none, and the database then refuses to evaluate the rule (verify and
// guard name it) rather than skip it.
func fillConditionASTs(ctx context.Context, tx *Tx) error {
	rules, err := queryRows(ctx, tx, "SELECT id, condition FROM policy_rules p WHERE condition <> ''"+
		" AND NOT EXISTS (SELECT 1 FROM policy_conditions c WHERE c.rule_id = p.id) ORDER BY id", nil,
		func(rows *sql.Rows, r *approvals.Rule) error { return rows.Scan(&r.ID, &r.Condition) })
	if err != nil {
		return err
	}
	for _, r := range rules {
		if err := setConditionAST(ctx, tx, r); err != nil && !errors.Is(err, approvals.ErrNotPortable) {
			return err
		}
	}
	return nil
}

// PolicyRule is a rule as policy list shows it: the newest rule for its
// pattern, with whether guard applies it and why not.
type PolicyRule struct {
	approvals.Rule
	RuleStanding
}

// PolicyStandings returns the newest rule of each pattern and condition,
// in the order guard evaluates them,
// each judged exactly as guard judges it (committed, linked, signed over
// its place by a registered key the anchor lists, or set before the
// ledger was signed): what is listed is what applies.
func (s *Store) PolicyStandings(ctx context.Context) ([]PolicyRule, error) {
	var out []PolicyRule
	err := s.read(ctx, func(tx *Tx) error {
		rules, t, err := s.rulesAndTrust(ctx, tx, currentRules)
		if err != nil {
			return err
		}
		out = make([]PolicyRule, 0, len(rules))
		for _, r := range approvals.Ordered(rules) {
			st, err := t.ruleStanding(ctx, tx, r.ID)
			if err != nil {
				return err
			}
			out = append(out, PolicyRule{Rule: r, RuleStanding: st})
		}
		return nil
	})
	return out, err
}

// rulesAndTrust reads rules (with read) and what judges them, for the
// commands that show policy without writing.
func (s *Store) rulesAndTrust(ctx context.Context, tx *Tx, read func(context.Context, *Tx) ([]approvals.Rule, error)) ([]approvals.Rule, *trust, error) {
	rules, err := read(ctx, tx)
	if err != nil {
		return nil, nil, err
	}
	reg, err := loadRegistry(ctx, tx)
	if err != nil {
		return nil, nil, err
	}
	return rules, &trust{ledger: reg.ledger, reg: reg, anchor: s.anchor}, nil
}

// allRules reads every rule, oldest first.
func allRules(ctx context.Context, tx *Tx) ([]approvals.Rule, error) {
	return queryRows(ctx, tx, rulesSQL+" ORDER BY id", nil, scanRule)
}

// PolicyTest answers what the rules in force would decide for an action
// (kind, target, agent, context) at a time (zero: now), and why, the way
// guard decides at a key's first sight, without writing anything: a rule
// that would decide and does not prove itself is the same integrity
// refusal guard would give.
func (s *Store) PolicyTest(ctx context.Context, f approvals.Facts) (approvals.Rule, approvals.Explain, error) {
	if f.Now.IsZero() {
		f.Now = s.now()
	}
	var r approvals.Rule
	var ex approvals.Explain
	err := s.read(ctx, func(tx *Tx) error {
		rules, t, err := s.rulesAndTrust(ctx, tx, allRules)
		if err != nil {
			return err
		}
		if !t.required() {
			r, ex = approvals.Decide(newestRules(rules), f)
			return nil
		}
		r, ex, err = t.decideProven(ctx, tx, rules, f)
		return err
	})
	return r, ex, err
}

// Policies returns the newest rule of each pattern, oldest first, as
// stored (PolicyStandings says which of them apply).
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
	// Approvals counts the distinct operators who approved so far and
	// Approvers the quorum; State is the request's state after this
	// decision (pending until the quorum is reached).
	Approvals int   `json:"approvals"`
	Approvers int   `json:"approvers"`
	State     State `json:"state"`
	Proof     Proof `json:"proof"`
}

// Approve records an approval. When it completes the quorum, the next
// Guard under the key gets the permit.
func (s *Store) Approve(ctx context.Context, key, operator, reason string) (Decision, error) {
	return s.decide(ctx, key, operator, DecisionApproved, reason)
}

// Reject records a rejection, which decides the request at once; a reason
// is required.
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

// decide records one operator's vote and, when it decides the request
// (the quorum's last approval, or any rejection), the decision.
func (s *Store) decide(ctx context.Context, key, operator string, decision DecisionKind, reason string) (Decision, error) {
	if err := CheckDecisionInput(key, operator, decision, reason); err != nil {
		return Decision{}, err
	}
	k, _ := ParseKey(key)
	var d Decision
	var fence *FencedError
	// voted: an attempt of this call stored its vote; replay: a later
	// attempt found it stored (the COMMIT's answer was lost) and answers
	// from it instead of refusing the operator's own vote as a second.
	var voted, replay bool
	proof, err := s.signedWrite(ctx, operator, statement{Fact: "votes", Key: key, Act: string(decision), Text: reason}, func(tx *Tx, op string) (*factRef, error) {
		now := tx.now
		fence, replay = nil, false
		d = Decision{Key: key, Decision: decision, Operator: op, Reason: reason, At: fromMS(now), State: StatePending}
		var req approvals.Request
		var exp int64
		// occupied: a decisions row holds the key's slot, committed by an
		// event (req.Decided) or not (forged: setAsideForged). It, the
		// active epoch and what the quorum is taken from are read with
		// the request, so that the common decision asks for none of them
		// in a round trip of its own; the key transaction holds the
		// ledger-wide lock shared, so none of them changes before it
		// commits.
		var occupied bool
		var epoch string
		var qr quorumRow
		err := tx.QueryRowContext(ctx, `SELECT q.agent, q.expires_ms, coalesce(d.decision, ''),
			EXISTS (SELECT 1 FROM decisions o WHERE o.action_key = q.action_key),
			coalesce((SELECT a.epoch FROM epochs a ORDER BY a.seq DESC LIMIT 1), ''), `+quorumCols+`
			FROM approval_requests q LEFT JOIN decisions d ON d.action_key = q.action_key`+committedDecision+quorumJoins+`
			WHERE q.action_key = ?`, key).Scan(append([]any{&req.Agent, &exp, &req.Decided, &occupied, &epoch}, qr.dest()...)...)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		req.Exists, req.Expires = err == nil, fromMS(exp)
		if req.Exists {
			// The quorum is the signed rule's, not the agent-written
			// evaluation's alone (requestQuorum).
			n, err := qr.quorum(key)
			if err != nil {
				return nil, err
			}
			d.Approvers = int(n)
		}
		// Only votes their events commit count; one inserted by hand is
		// evidence, not a vote. One that holds this operator's slot is
		// set aside before the real vote is stored (forgedVote).
		type voteRow struct {
			id                 int64
			operator, decision string
			nameKey            string
			committed          bool
		}
		votes, err := queryRows(ctx, tx, "SELECT id, operator, decision, name_key,"+
			" EXISTS (SELECT 1 FROM events ev WHERE ev.fact_table = 'votes' AND ev.fact_row = CAST(v.id AS TEXT))"+
			" FROM votes v WHERE action_key = ?", []any{key},
			func(r *sql.Rows, v *voteRow) error {
				return r.Scan(&v.id, &v.operator, &v.decision, &v.nameKey, &v.committed)
			})
		if err != nil {
			return nil, err
		}
		var forgedVote int64
		for _, v := range votes {
			if !v.committed {
				if v.nameKey == approvals.NameKey(op) {
					forgedVote = v.id
				}
				continue
			}
			req.Voted = append(req.Voted, v.operator)
			if v.decision == string(DecisionApproved) {
				d.Approvals++
			}
			replay = replay || (voted && approvals.NameKey(v.operator) == approvals.NameKey(op) && v.decision == string(decision))
		}
		if replay {
			if req.Decided != "" {
				d.State = State(req.Decided)
			}
			return nil, nil
		}
		if err := approvals.CheckDecision(req, op, decision == DecisionApproved, reason, fromMS(now)); err != nil {
			return nil, &DecisionError{Key: key, Err: err}
		}
		// A key admitted under an older epoch can never get a permit, so
		// approving it would record an approval that means nothing; a
		// rejection, which closes the key, stays allowed.
		if decision == DecisionApproved && epoch != "" && k.Epoch != epoch {
			digest := ""
			if err := tx.QueryRowContext(ctx, "SELECT payload_sha256 FROM intents WHERE action_key = ?", key).Scan(&digest); err != nil {
				return nil, err
			}
			fence, err = logFence(ctx, tx, k, epoch, digest, op,
				fmt.Sprintf("admitted under epoch %q, not the active epoch %s: it can get no permit, so it cannot be decided", k.Epoch, epoch), now)
			return nil, err
		}
		if forgedVote != 0 {
			if err := setAsideForgedVote(ctx, tx, key, forgedVote, op, now); err != nil {
				return nil, err
			}
		}
		vote, err := insertFact(ctx, tx, "votes", "action_key, decision, operator, name_key, reason, at_ms",
			key, string(decision), op, approvals.NameKey(op), reason, now)
		if err != nil {
			return nil, err
		}
		voted = true
		if err := appendEvent(ctx, tx, key, evVote, op, map[string]any{"decision": decision, "reason": reason}, now, &vote); err != nil {
			return nil, err
		}
		if decision == DecisionApproved {
			d.Approvals++
			if d.Approvals < d.Approvers {
				return &vote, nil
			}
		}
		if occupied {
			if err := setAsideForged(ctx, tx, key, op, now); err != nil {
				return nil, err
			}
		}
		ref, err := insertFact(ctx, tx, "decisions", "action_key, decision, operator, reason, at_ms", key, string(decision), op, reason, now)
		if err != nil {
			return nil, err
		}
		if err := appendEvent(ctx, tx, key, string(decision), op, map[string]any{"reason": reason}, now, &ref); err != nil {
			return nil, err
		}
		d.State = State(decision)
		return &vote, setStage(ctx, tx, key, State(decision), 0, now)
	})
	if err == nil && fence != nil {
		return Decision{}, fence
	}
	d.Proof = proof
	if err == nil && replay {
		// The stored vote's own proof, and time.
		if st, err := s.Status(ctx, key); err == nil {
			for _, v := range st.Votes {
				if approvals.NameKey(v.Operator) == approvals.NameKey(d.Operator) {
					d.Proof, d.At = v.Proof, v.At
				}
			}
		}
	}
	return d, err
}

// setAsideForged frees the key's decision slot when a decisions row that
// no event commits (inserted by hand) holds it: the row moves, whole, to
// set_aside as evidence committed by its own event, and the real decision
// takes the slot (SPEC 7: a forged row never blocks a real decision).
// Only SQLite ledgers can hold one that way: on PostgreSQL no agent role
// may insert a decision, so a row there was forged by the schema's owner
// and is refused as an integrity failure, with nothing written.
func setAsideForged(ctx context.Context, tx *Tx, key, op string, now int64) error {
	return setAside(ctx, tx, key, "decisions", "action_key = ?", key, "a decisions row", op, now)
}

// setAsideForgedVote frees an operator's vote slot on a request (one
// vote per operator) when a votes row that no event commits holds it,
// as setAsideForged does for the decision: a forged vote never blocks the
// real operator's vote.
func setAsideForgedVote(ctx context.Context, tx *Tx, key string, id int64, op string, now int64) error {
	return setAside(ctx, tx, key, "votes", "id = ?", id, fmt.Sprintf("a votes row (id %d)", id), op, now)
}

// setAside moves the one row of table that where selects to set_aside,
// committed by its own event, and deletes it (SQLite only; on
// PostgreSQL an integrity failure naming the row, nothing written).
func setAside(ctx context.Context, tx *Tx, key, table, where string, arg any, what, op string, now int64) error {
	t := factTableNamed(table)
	vals, err := scanFact(tx.QueryRowContext(ctx, "SELECT "+t.cols+" FROM "+table+" WHERE "+where, arg), t.ncols())
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if tx.server && table != "votes" {
		return integrityError("key %s: %s that no event commits occupies the slot of %s; nothing was stored (only the schema's owner can have written it)", key, what, op)
	}
	row := map[string]any{}
	for i, c := range strings.Split(t.cols, ", ") {
		row[c] = vals[i]
	}
	j, err := json.Marshal(row)
	if err != nil {
		return err
	}
	ref, err := insertFact(ctx, tx, "set_aside", "action_key, fact_table, row_json, operator, at_ms", key, table, string(j), op, now)
	if err != nil {
		return err
	}
	if err := appendEvent(ctx, tx, key, evSetAside, op, map[string]any{"table": table, "why": "no event commits it"}, now, &ref); err != nil {
		return err
	}
	if tx.server {
		// The owner's function removes the row it finds set aside here
		// (schema 35): no operator's role may delete a vote.
		_, err := tx.ExecContext(ctx, "SELECT tollgate_drop_forged_vote(?)", arg)
		return err
	}
	restore, err := suspendAppendOnly(ctx, tx, table)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE "+where, arg); err != nil {
		return err
	}
	return restore()
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
