package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// PrincipalName is one name an operator allowed a service principal (a
// token's name, or the Unix user a socket's peer logs in as) to act as
// besides its own.
type PrincipalName struct {
	Who     string    `json:"who"`
	Agent   string    `json:"agent"`
	AddedBy string    `json:"added_by"`
	Added   time.Time `json:"added"`
	// Proof is the allowing row's; one that is INVALID allows nothing.
	Proof Proof `json:"proof"`
}

// principalAction is a principal_names row's action.
type principalAction string

const (
	principalAllow  principalAction = "allow"
	principalRevoke principalAction = "revoke"
)

// pairState replays the rows of one (who, agent) pair, oldest first, and
// returns the row that allows it now, or nil. A revocation counts
// whatever its proof (a forged one can only take a name away); an
// allowance counts only when honoured (committed by its event and, on a
// signed ledger, signed by an operator registered now).
func (s *Store) pairState(ctx context.Context, tx *Tx, reg *registry, rows []identityRow) (*identityRow, error) {
	t := factTableNamed("principal_names")
	var allowed *identityRow
	for i := range rows {
		x := &rows[i]
		if principalAction(x.text(t, "action")) == principalRevoke {
			allowed = nil
			continue
		}
		why, err := s.honoured(ctx, tx, reg, "principal_names", *x)
		if err != nil {
			return nil, err
		}
		if why == "" {
			allowed = x
		}
	}
	return allowed, nil
}

// checkPair refuses a principal or a name that is empty or that a name
// may not be.
func checkPair(who, name string) error {
	for _, n := range [][2]string{{"principal", who}, {"agent name", name}} {
		if n[1] == "" {
			return fmt.Errorf("%w: the %s is empty", ErrInvalidInput, n[0])
		}
		if err := checkName(n[0], n[1]); err != nil {
			return err
		}
	}
	return nil
}

// pairRows reads the rows of the pair (who, agent), by their names'
// normalized forms.
func pairRows(ctx context.Context, tx *Tx, who, agent string) ([]identityRow, error) {
	return readIdentityRows(ctx, tx, "principal_names", "t.who_key = ? AND t.agent_key = ?", approvals.NameKey(who), approvals.NameKey(agent))
}

// MayActAs reports whether the principal who may act under name: its
// own name (the same after the names' normalization: precis, case
// folded), or a name an operator allowed it (AllowPrincipal) and has not
// withdrawn. A name that is not a valid name is refused (ErrInvalidInput).
func (s *Store) MayActAs(ctx context.Context, who, name string) (bool, error) {
	if err := checkPair(who, name); err != nil {
		return false, err
	}
	if approvals.SameName(who, name) {
		return true, nil
	}
	var ok bool
	err := s.read(ctx, func(tx *Tx) error {
		rows, err := pairRows(ctx, tx, who, name)
		if err != nil || len(rows) == 0 {
			return err
		}
		reg, err := loadRegistry(ctx, tx)
		if err != nil {
			return err
		}
		x, err := s.pairState(ctx, tx, reg, rows)
		ok = x != nil
		return err
	})
	return ok, s.identityErr(err)
}

// AllowPrincipal lets the service principal who act as name, as
// operator: an operator act, signed on a signed ledger. It reports
// whether the name was newly allowed (false: it was already, and nothing
// was written).
func (s *Store) AllowPrincipal(ctx context.Context, who, name, operator string) (bool, error) {
	return s.changePrincipal(ctx, principalAllow, who, name, operator)
}

// RevokePrincipal withdraws a name AllowPrincipal allowed, as operator.
// It reports whether the name had been allowed (false: it was not, and
// nothing was written). What the principal did under the name stays.
func (s *Store) RevokePrincipal(ctx context.Context, who, name, operator string) (bool, error) {
	return s.changePrincipal(ctx, principalRevoke, who, name, operator)
}

func (s *Store) changePrincipal(ctx context.Context, act principalAction, who, name, operator string) (bool, error) {
	if err := checkPair(who, name); err != nil {
		return false, err
	}
	if operator != "" {
		if err := checkOperator(operator); err != nil {
			return false, err
		}
	}
	if approvals.SameName(who, name) {
		return false, nil // its own name needs no allowance and cannot be withdrawn
	}
	var changed bool
	draft := statement{Fact: "principal_names", Request: principalRequest(who, name), Act: string(act)}
	_, err := s.signedWrite(ctx, operator, draft, func(tx *Tx, op string) (*factRef, error) {
		now := tx.now
		changed = false
		rows, err := pairRows(ctx, tx, who, name)
		if err != nil {
			return nil, err
		}
		reg, err := loadRegistry(ctx, tx)
		if err != nil {
			return nil, err
		}
		cur, err := s.pairState(ctx, tx, reg, rows)
		if err != nil {
			return nil, err
		}
		if (cur != nil) == (act == principalAllow) {
			return nil, nil
		}
		ref, err := insertFact(ctx, tx, "principal_names", "who, who_key, agent, agent_key, action, operator, at_ms",
			who, approvals.NameKey(who), name, approvals.NameKey(name), string(act), op, now)
		if err != nil {
			return nil, err
		}
		typ := evPrincipalAllowed
		if act == principalRevoke {
			typ = evPrincipalRevoked
		}
		changed = true
		return &ref, appendEvent(ctx, tx, "", typ, op, map[string]any{"who": who, "agent": name}, now, &ref)
	})
	return changed, err
}

// PrincipalNames lists the names service principals may act as now, by
// principal, with the proof of each allowance.
func (s *Store) PrincipalNames(ctx context.Context) ([]PrincipalName, error) {
	out := []PrincipalName{}
	err := s.read(ctx, func(tx *Tx) error {
		out = out[:0]
		rows, err := readIdentityRows(ctx, tx, "principal_names", "1 = 1")
		if err != nil || len(rows) == 0 {
			return err
		}
		reg, err := loadRegistry(ctx, tx)
		if err != nil {
			return err
		}
		t := factTableNamed("principal_names")
		pairs := map[[2]string][]identityRow{}
		var order [][2]string
		for _, x := range rows {
			k := [2]string{x.text(t, "who_key"), x.text(t, "agent_key")}
			if _, ok := pairs[k]; !ok {
				order = append(order, k)
			}
			pairs[k] = append(pairs[k], x)
		}
		for _, k := range order {
			x, err := s.pairState(ctx, tx, reg, pairs[k])
			if err != nil {
				return err
			}
			if x == nil {
				continue
			}
			at, _ := x.vals[7].(int64)
			p := PrincipalName{Who: x.text(t, "who"), Agent: x.text(t, "agent"), AddedBy: x.text(t, "operator"), Added: fromMS(at)}
			if p.Proof, err = s.identityProof(ctx, tx, reg, "principal_names", *x); err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	return out, s.identityErr(err)
}
