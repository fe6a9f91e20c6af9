package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/approvals"
)

// RecordOptions qualifies a Record or Guard call.
type RecordOptions struct {
	// Agent names the caller; it is kept with the intent and the events.
	Agent string
	// Redact keeps only the digests: the payload text is not retained.
	Redact bool
	// Context is stored with the intent and bound to its key (Guard's).
	Context Context
	// mayActOn, when set, refuses a key recorded under another agent
	// before anything is logged on it (GuardOptions.Caller).
	mayActOn func(ctx context.Context, key, owner string) error
}

// Intent is the stored intent of one key.
type Intent struct {
	Key    Key
	SHA256 string
	// Created is true when this call stored the intent.
	Created bool
	// Replayed is true when an earlier call had already stored it.
	Replayed bool
	// Retained is false when the intent has no payload row: it was
	// recorded by the seed fixture or another tool sharing the table.
	Retained bool
	Redacted bool
	Agent    string
	Kind     string
	State    State
	// facts are the key's facts as read (or written) in the transaction
	// that produced this Intent, so that Guard does not read them again.
	facts keyFacts
}

// MaxAgentLen bounds agent and operator names.
const MaxAgentLen = approvals.MaxNameLen

// checkName applies approvals.CheckName and makes its refusal an
// ErrInvalidInput.
func checkName(what, s string) error {
	if err := approvals.CheckName(what, s); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	return nil
}

// Record stores the intent of key bound to payload. A new key is stored with
// its retained payload (or only its digests when redacted) in one
// transaction; an identical retry returns the stored intent with Replayed
// set; a different payload returns a *ConflictError after logging the
// attempt, and the stored hash is never replaced.
func (s *Store) Record(ctx context.Context, key string, p Payload, opt RecordOptions) (Intent, error) {
	k, err := CheckRecordInput(key, p, opt)
	if err != nil {
		return Intent{}, err
	}
	opt.Agent = s.agentOr(opt.Agent)
	digest := p.Digest()
	if sr, ok := s.serverRecord(); ok {
		// The database records the common intent whole, an identical
		// retry's lookup included, in one round trip; what it leaves to
		// this path it leaves having written nothing.
		if in, done, err := s.recordOnServer(ctx, sr, k, p, digest, opt); done || err != nil {
			return in, err
		}
	} else if ix, ok := s.fastLookup(ctx, k.String(), p.Kind, digest, opt.Context.Digest()); ok {
		return ix.intent(k, toMS(s.now())), nil
	}
	r, err := writeKeyed(ctx, s, k.Logical, func(tx *Tx) (refused[Intent], error) {
		in, ce, fe, err := recordTx(ctx, tx, k, p, digest, opt, tx.now)
		in.facts = keyFacts{} // Guard's, not the caller's
		switch {
		case ce != nil:
			return refused[Intent]{in, ce}, err
		case fe != nil:
			return refused[Intent]{in, fe}, err
		}
		return refused[Intent]{val: in}, err
	})
	if err != nil {
		return Intent{}, err
	}
	return r.val, r.err
}

// recordTx stores or replays the intent inside the caller's transaction;
// digest is p's, which the caller has already computed. A conflict or
// fence is returned beside a nil error so that the caller commits the
// logged attempt before reporting it.
func recordTx(ctx context.Context, tx *Tx, k Key, p Payload, digest string, opt RecordOptions, now int64) (Intent, *ConflictError, *FencedError, error) {
	key := k.String()
	out := Intent{Key: k, SHA256: digest}
	var stored, storedCtx, storedCtxText string
	err := tx.QueryRowContext(ctx, `SELECT i.payload_sha256, coalesce(pl.context_sha256, ak.context_sha256, ''), coalesce(pl.context, '') FROM intents i
		LEFT JOIN payloads pl ON pl.action_key = i.action_key`+archivedJoin+` WHERE i.action_key = ?`, key).Scan(&stored, &storedCtx, &storedCtxText)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if fe, err := checkFence(ctx, tx, k, digest, opt.Agent, now); fe != nil || err != nil {
			return out, nil, fe, err
		}
		if err := insertIntent(ctx, tx, k, p, digest, opt, now); err != nil {
			return out, nil, nil, err
		}
		out.Created, out.Retained, out.Redacted = true, true, opt.Redact
		out.Agent, out.Kind, out.State = opt.Agent, p.Kind, StateRecorded
		out.facts = keyFacts{Stage: StateRecorded, Agent: opt.Agent, Kind: p.Kind, Retained: true, Redacted: opt.Redact}
		return out, nil, nil, nil
	case err != nil:
		return out, nil, nil, err
	}
	f, err := loadFacts(ctx, tx, key)
	if err != nil {
		return out, nil, nil, err
	}
	if opt.mayActOn != nil {
		if err := opt.mayActOn(ctx, key, f.Agent); err != nil {
			return out, nil, nil, err
		}
	}
	out = f.intent(k, stored, now)
	if stored == digest && storedCtx == opt.Context.Digest() {
		// The payload matches the stored digest, so its kind is the
		// intent's kind, also for an intent recorded without its payload
		// (by the seed fixture), which has none: policy then matches the
		// kind the agent is about to act on.
		out.Kind, out.facts.Kind = p.Kind, p.Kind
		return out, nil, nil, nil
	}
	var ctxDiffers []string
	if storedCtx != opt.Context.Digest() {
		ctxDiffers = contextDiffers(storedCtxText, opt.Context)
	}
	ce, err := logConflict(ctx, tx, k, p, digest, stored, ctxDiffers, opt, now)
	if ce != nil {
		ce.State = out.State
	}
	return out, ce, nil, err
}

// sendRedacted hands a redacted payload's canonical text to PostgreSQL
// for the one row about to be written (the transaction-local setting
// tollgate.redacted_text, schema 41): its trigger hashes the text, binds
// the row's kind and digests to the payload digest, and stores none of
// it. SQLite keeps the digests unbound (docs/postgres-roles.md).
func sendRedacted(ctx context.Context, tx *Tx, p Payload) error {
	if !tx.server {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT set_config('tollgate.redacted_text', ?, true)", string(p.Canonical()))
	return err
}

func insertIntent(ctx context.Context, tx *Tx, k Key, p Payload, digest string, opt RecordOptions, now int64) error {
	key := k.String()
	if err := recordIntent(ctx, tx, key, digest); err != nil {
		return err
	}
	var canonical any
	if !opt.Redact {
		canonical = string(p.Canonical())
	} else if err := sendRedacted(ctx, tx, p); err != nil {
		return err
	}
	ref, err := insertFact(ctx, tx, "payloads", `action_key, payload_sha256, canonical, redacted, kind,
		kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context`,
		key, digest, canonical, boolInt(opt.Redact), p.Kind,
		sha256Hex([]byte(p.Kind)), sha256Hex([]byte(p.Target)), sha256Hex([]byte(p.Body)), opt.Agent, now,
		opt.Context.Digest(), string(opt.Context.Canonical()))
	if err != nil {
		return err
	}
	target := p.Target
	if opt.Redact {
		target = ""
	}
	if tx.server {
		err = refreshIndex(ctx, tx, key, &target)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE action_index SET logical_key = ?, epoch = ?, kind = ?, agent = ?, target = ?, updated_ms = ?,
		retained = 1, redacted = ?, context_sha256 = ? WHERE action_key = ?`, k.Logical, k.Epoch, p.Kind, opt.Agent, target, now, boolInt(opt.Redact), opt.Context.Digest(), key)
	}
	if err != nil {
		return err
	}
	return appendEvent(ctx, tx, key, evRecorded, opt.Agent, map[string]any{
		"payload_sha256": digest, "redacted": opt.Redact, "kind": p.Kind}, now, &ref)
}

// intent is the stored intent of an existing key, as its facts say.
func (f keyFacts) intent(k Key, digest string, now int64) Intent {
	return Intent{Key: k, SHA256: digest, Replayed: true, Retained: f.Retained, Redacted: f.Redacted,
		Agent: f.Agent, Kind: f.Kind, State: stateFrom(f.Stage, f.Deadline, now), facts: f}
}

// intent is an identical retry's answer read from the projection by the
// fast path, which grants nothing.
func (ix indexRow) intent(k Key, now int64) Intent {
	return Intent{Key: k, SHA256: ix.SHA256, Replayed: true, Retained: ix.Retained, Redacted: ix.Redacted,
		Agent: ix.Agent, Kind: ix.Kind, State: stateFrom(ix.Stage, ix.Deadline, now)}
}

// logConflict appends the attempt to the conflict log and the chain.
func logConflict(ctx context.Context, tx *Tx, k Key, p Payload, digest, stored string, ctxDiffers []string, opt RecordOptions, now int64) (*ConflictError, error) {
	key := k.String()
	var differs []string
	var ks, ts, bs string
	err := tx.QueryRowContext(ctx, "SELECT kind_sha256, target_sha256, body_sha256 FROM payloads WHERE action_key = ?", key).Scan(&ks, &ts, &bs)
	switch {
	case err == nil:
		for _, f := range [...]struct {
			name, stored, v string
		}{{"kind", ks, p.Kind}, {"target", ts, p.Target}, {"body", bs, p.Body}} {
			if sha256Hex([]byte(f.v)) != f.stored {
				differs = append(differs, f.name)
			}
		}
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	if differs != nil || stored == digest {
		differs = append(differs, ctxDiffers...)
	}
	var attempted any
	if !opt.Redact {
		attempted = string(p.Canonical())
	}
	diffText := strings.Join(differs, ",")
	if differs == nil {
		diffText = "unknown"
	}
	ref, err := insertFact(ctx, tx, "conflicts", "action_key, stored_sha256, attempted_sha256, attempted, redacted, differs, agent, at_ms",
		key, stored, digest, attempted, boolInt(opt.Redact), diffText, opt.Agent, now)
	if err != nil {
		return nil, err
	}
	id := ref.rowID()
	if err := appendEvent(ctx, tx, key, evConflict, opt.Agent, map[string]any{
		"conflict_id": id, "attempted_sha256": digest, "differs": diffText}, now, &ref); err != nil {
		return nil, err
	}
	return &ConflictError{Key: key, StoredSHA256: stored, AttemptSHA: digest, Differs: differs, ConflictID: id}, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
