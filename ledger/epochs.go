package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

func validUTF8(s string) bool { return utf8.ValidString(s) }

// FencedError reports new work refused because its key is not under the
// active operator epoch. The attempt is logged before this is returned.
type FencedError struct {
	Key         string
	KeyEpoch    string
	ActiveEpoch string
	Reason      string
	FencedID    int64
}

// Error implements error.
func (e *FencedError) Error() string {
	return fmt.Sprintf("fenced: key %s: %s (logged as fenced call %d)", e.Key, e.Reason, e.FencedID)
}

// Answer is the fenced call as an agent reads it: denied, with the key's
// epoch, the active one and the rule for new work.
func (e *FencedError) Answer() map[string]any {
	return map[string]any{"key": e.Key, "error": "fenced", "verdict": Denied, "state": "fenced",
		"key_epoch": e.KeyEpoch, "active_epoch": e.ActiveEpoch, "reason": e.Reason, "fenced_id": e.FencedID,
		"replayed": false, "safe_new_key": false}
}

// EpochInfo describes the active operator epoch.
type EpochInfo struct {
	Epoch     string
	Operator  string
	Activated time.Time
	// Seq counts activations; zero means no epoch was ever activated.
	Seq int64
}

// newUUID returns a random version 4 UUID in lowercase canonical form. Ids
// come from crypto/rand, never from the clock. A variable only so that
// the test comparing a new ledger with a migrated one can fix its id.
var newUUID = func() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const h = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, h[c>>4], h[c&0xf])
	}
	return string(out)
}

func activeEpoch(ctx context.Context, tx *Tx) (EpochInfo, error) {
	var e EpochInfo
	var at int64
	err := tx.QueryRowContext(ctx, "SELECT seq, epoch, operator, at_ms FROM epochs ORDER BY seq DESC LIMIT 1").Scan(&e.Seq, &e.Epoch, &e.Operator, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return EpochInfo{}, nil
	}
	e.Activated = fromMS(at)
	return e, err
}

// Epoch returns the active epoch; its Epoch is empty when none was
// ever activated.
func (s *Store) Epoch(ctx context.Context) (EpochInfo, error) {
	var e EpochInfo
	err := s.read(ctx, func(tx *Tx) error {
		var err error
		e, err = activeEpoch(ctx, tx)
		return err
	})
	return e, err
}

// ActivateEpoch starts a new operator epoch. epoch may be empty (a random
// one is made) or a lowercase canonical UUID never used before. From now
// on new work must use hsr1:<epoch>:<logical-key>.
func (s *Store) ActivateEpoch(ctx context.Context, epoch, operator string) (EpochInfo, error) {
	if err := CheckEpochInput(epoch, operator); err != nil {
		return EpochInfo{}, err
	}
	if epoch == "" {
		epoch = newUUID()
	}
	var out EpochInfo
	_, err := s.signedWrite(ctx, operator, statement{Fact: "epochs", Act: "activate " + epoch}, func(tx *Tx, op string) (*factRef, error) {
		now := tx.now
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM epochs WHERE epoch = ?", epoch).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, fmt.Errorf("%w: epoch %s was activated before; an epoch is never reused", ErrInvalidInput, epoch)
		}
		ref, err := insertFact(ctx, tx, "epochs", "epoch, operator, at_ms", epoch, op, now)
		if err != nil {
			return nil, err
		}
		if err := appendEvent(ctx, tx, "", evEpochActivated, op, map[string]any{"epoch": epoch}, now, &ref); err != nil {
			return nil, err
		}
		if err := fenceStalePending(ctx, tx, epoch, now); err != nil {
			return nil, err
		}
		out, err = activeEpoch(ctx, tx)
		return &ref, err
	})
	return out, err
}

// stalePendingQuery finds the requests still pending under an epoch other
// than the active one, through the partial index of open work.
const stalePendingQuery = "SELECT action_key, agent FROM action_index WHERE " + openStages + " AND stage = 'pending' AND deadline_ms > ? AND epoch <> ?"

// fenceStalePending logs, as the epoch changes, a fenced call for each
// request still pending under another epoch: it can never be approved
// now (decide refuses it), so the console lists it under Fenced at once
// rather than when its agent next asks. The projection only finds the
// candidates; each is checked against its facts before it is logged.
func fenceStalePending(ctx context.Context, tx *Tx, active string, now int64) error {
	type cand struct{ key, agent string }
	cands, err := queryRows(ctx, tx, stalePendingQuery, []any{now, active}, func(r *sql.Rows, c *cand) error { return r.Scan(&c.key, &c.agent) })
	if err != nil {
		return err
	}
	for _, c := range cands {
		k, err := ParseKey(c.key)
		if err != nil {
			continue // not a key tollgate wrote; verify names it
		}
		f, err := loadFacts(ctx, tx, c.key)
		if err != nil || stateFrom(f.Stage, f.Deadline, now) != StatePending {
			continue
		}
		var digest string
		if err := tx.QueryRowContext(ctx, "SELECT payload_sha256 FROM intents WHERE action_key = ?", c.key).Scan(&digest); err != nil {
			return err
		}
		if _, err := logFence(ctx, tx, k, active, digest, c.agent,
			fmt.Sprintf("pending under epoch %q when epoch %s was activated: it can no longer be approved; use a key under the active epoch", k.Epoch, active), now); err != nil {
			return err
		}
	}
	return nil
}

// checkFence refuses new work whose key is not under the active epoch, and
// logs the refusal. No active epoch admits plain keys only.
func checkFence(ctx context.Context, tx *Tx, k Key, digest, agent string, now int64) (*FencedError, error) {
	act, err := activeEpoch(ctx, tx)
	if err != nil {
		return nil, err
	}
	if k.Epoch == act.Epoch {
		return nil, nil
	}
	reason := fmt.Sprintf("new work must use hsr1:%s:<logical-key>", act.Epoch)
	switch {
	case act.Epoch == "":
		reason = fmt.Sprintf("epoch %s is not active (no epoch has been activated)", k.Epoch)
	case k.Epoch != "":
		reason = fmt.Sprintf("epoch %s is not the active epoch %s", k.Epoch, act.Epoch)
	}
	return logFence(ctx, tx, k, act.Epoch, digest, agent, reason, now)
}

func logFence(ctx context.Context, tx *Tx, k Key, active, digest, agent, reason string, now int64) (*FencedError, error) {
	key := k.String()
	ref, err := insertFact(ctx, tx, "fenced", "action_key, key_epoch, active_epoch, payload_sha256, agent, reason, at_ms",
		key, k.Epoch, active, digest, agent, reason, now)
	if err != nil {
		return nil, err
	}
	id := ref.rowID()
	if err := appendEvent(ctx, tx, key, evFenced, agent, map[string]any{"fenced_id": id, "reason": reason}, now, &ref); err != nil {
		return nil, err
	}
	return &FencedError{Key: key, KeyEpoch: k.Epoch, ActiveEpoch: active, Reason: reason, FencedID: id}, nil
}

// checkOperator checks a claimed operator name. Empty is allowed here: on
// a signed ledger the name comes from the key, and on an unsigned one
// signedWrite falls back to the store's default or refuses.
func checkOperator(op string) error {
	if op == "" {
		return nil
	}
	return checkName("operator", op)
}

// requireOperator is the rule on a ledger that was never signed: some
// name must be given.
func requireOperator(op string) error {
	if op == "" {
		return fmt.Errorf("%w: an operator name is required (--operator or TOLLGATE_OPERATOR)", ErrInvalidInput)
	}
	return checkOperator(op)
}
