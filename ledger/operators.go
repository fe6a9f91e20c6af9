package ledger

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger/engine"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// ErrNotPermitted means this identity may not do that: no operator key,
// a key that is not registered (or not in the operators file), a name
// that is not the key's, or a decision whose signatures do not prove it.
var ErrNotPermitted = engine.ErrNotPermitted

// ErrChanged means the fact an operator signed changed before it could be
// written (another decision landed meanwhile): nothing was stored.
var ErrChanged = errors.New("the ledger changed while the statement was being signed; nothing was stored, try again")

// maxSigningDelay bounds the time between signing a statement and
// storing it: a touch or a passphrase fits, a replay days later does not.
const maxSigningDelay = 5 * time.Minute

// Operator is a registered operator: a name bound to a public key.
type Operator struct {
	Name        string    `json:"name"`
	PublicKey   string    `json:"public_key"`
	Fingerprint string    `json:"fingerprint"`
	Added       time.Time `json:"added_at"`
	// InForce is whether guard honours this operator's signatures now:
	// false when an operators file applies and does not list the key for
	// this name (Why says so).
	InForce bool   `json:"in_force"`
	Why     string `json:"why,omitempty"`
	pub     ssh.PublicKey
}

// registry is the operator set replayed from the operators table in
// event order, keeping only changes that are committed by their event
// and, after the first, signed by an operator registered before them.
type registry struct {
	// ledger is the ledger id, read once an operator row exists.
	ledger string
	signed bool
	// genesisSeq is the event that made the ledger signed: operator facts
	// committed after it need signatures.
	genesisSeq int64
	current    map[string]Operator // by fingerprint
	ever       map[string]Operator // every key once validly registered
	problems   []Problem
	// legacy is the last event whose facts may carry version 1 statements
	// (legacyThrough); 0 on a ledger that accepts none. readLegacy reads
	// it, once, when a signature first fails as v2.
	legacy     int64
	legacyRead bool
	readLegacy func() (int64, error)
}

// legacyOK reports whether a fact committed by event seq may be proven by
// a version 1 statement.
// It reads where v1 statements end only the first time it is asked: a
// ledger whose signatures are all v2 never pays for it.
func (r *registry) legacyOK(seq int64) bool {
	if !r.legacyRead && r.readLegacy != nil {
		r.legacy, _ = r.readLegacy()
		r.legacyRead = true
	}
	return seq > 0 && seq <= r.legacy
}

func (r *registry) add(table, row, key, rule string, args ...any) {
	r.problems = append(r.problems, Problem{Table: table, Row: row, Key: key, Rule: fmt.Sprintf(rule, args...)})
}

type sigRow struct {
	fp     sql.NullString
	signed sql.NullInt64
	blob   []byte
}

func (g sigRow) present() bool { return g.fp.Valid }

// sigJoin attaches a fact row's signature; alias t is the fact table.
func sigJoin(table, idCol string) string {
	return " LEFT JOIN signatures s ON s.fact_table = '" + table + "' AND s.fact_row = CAST(t." + idCol + " AS TEXT)"
}

// loadRegistry replays the operator set inside tx. A ledger never signed
// costs one query; a signed one also reads the ledger id its statements
// name (reg.ledger).
func loadRegistry(ctx context.Context, tx *Tx) (*registry, error) {
	reg := &registry{current: map[string]Operator{}, ever: map[string]Operator{}}
	t := factTableNamed("operators")
	type opRow struct {
		vals []any
		seq  sql.NullInt64
		sha  sql.NullString
		sig  sigRow
		// the committing event, the hash before it and the link after it,
		// read in the same query so that checking the chain's links costs
		// no query of its own
		ev            eventLink
		before, after sql.NullString
	}
	rows, err := queryRows(ctx, tx, "SELECT t.id, t.name, t.name_key, t.action, t.public_key, t.fingerprint, t.at_ms, e.seq, e.fact_sha256, s.fingerprint, s.signed_ms, s.signature,"+
		" e.action_key, e.type, e.actor, e.detail, e.at_ms, e.prev_hash, e.hash, e.fact_table, e.fact_row, e.hv,"+
		" "+hashBeforeSQL+", "+prevAfterSQL+" FROM operators t"+
		" LEFT JOIN events e ON e.fact_table = 'operators' AND e.fact_row = CAST(t.id AS TEXT)"+sigJoin("operators", "id")+" ORDER BY t.id", nil,
		func(r *sql.Rows, o *opRow) error {
			o.vals = make([]any, 7)
			return r.Scan(&o.vals[0], &o.vals[1], &o.vals[2], &o.vals[3], &o.vals[4], &o.vals[5], &o.vals[6], &o.seq, &o.sha, &o.sig.fp, &o.sig.signed, &o.sig.blob,
				&o.ev.key, &o.ev.typ, &o.ev.actor, &o.ev.detail, &o.ev.at, &o.ev.prev, &o.ev.hash, &o.ev.ft, &o.ev.fr, &o.ev.hv, &o.before, &o.after)
		})
	if err != nil || len(rows) == 0 {
		return reg, err
	}
	// Each change's place is the change before it by id (placeStatement's
	// rule), taken from the rows already read rather than asked again.
	prevOf := map[string][]any{}
	for i := 1; i < len(rows); i++ {
		prevOf[fmt.Sprint(rows[i].vals[0])] = rows[i-1].vals
	}
	// Replayed in the order their events were committed (a row without an
	// event last: it counts for nothing), sorted here rather than by SQLite,
	// which would build a temporary b-tree on every grant.
	slices.SortStableFunc(rows, func(a, b opRow) int {
		committed := func(o opRow) int {
			if o.seq.Valid {
				return 0
			}
			return 1
		}
		return cmp.Or(cmp.Compare(committed(a), committed(b)), cmp.Compare(a.seq.Int64, b.seq.Int64))
	})
	if reg.ledger, err = ledgerID(ctx, tx); err != nil {
		return nil, err
	}
	reg.readLegacy = func() (int64, error) { return legacyThrough(ctx, tx) }
	ledger := reg.ledger
	seen := map[string]bool{}
	for _, o := range rows {
		row := fmt.Sprint(o.vals[0])
		if seen[row] {
			continue
		}
		seen[row] = true
		name, _ := o.vals[1].(string)
		action, _ := o.vals[3].(string)
		line, _ := o.vals[4].(string)
		fp, _ := o.vals[5].(string)
		at, _ := o.vals[6].(int64)
		where := "id=" + row
		if !o.seq.Valid || o.sha.String != t.ref(o.vals).SHA256 {
			reg.add("operators", where, "", "operator change %q is not committed by its event: it counts for nothing", name)
			continue
		}
		// The registry follows the chain's links, not event numbers: an
		// event numbered to come first (before the real first
		// registration, say) but not linked into the chain counts for
		// nothing.
		if linked, err := o.ev.linked(ctx, tx, o.seq.Int64, o.sha.String, o.before, o.after); err != nil {
			return nil, err
		} else if !linked {
			reg.add("operators", where, "", "operator change %q is committed by event %d, which is not linked into the hash chain: it counts for nothing", name, o.seq.Int64)
			continue
		}
		pub, err := opkeys.ParsePublicKey(line)
		if err != nil || opkeys.Fingerprint(pub) != fp || o.vals[2] != approvals.NameKey(name) {
			reg.add("operators", where, "", "operator change %q has a key, fingerprint or name key that do not agree", name)
			continue
		}
		op := Operator{Name: name, PublicKey: opkeys.Line(pub), Fingerprint: fp, Added: fromMS(at), pub: pub}
		if reg.signed {
			st := statement{V: currentStatement, Fact: "operators", Request: name, Act: action + " " + line, row: row, Place: "first operator change"}
			if prev := prevOf[row]; prev != nil {
				st.Place = fmt.Sprintf("after operator change id=%v sha256=%s", prev[0], t.ref(prev).SHA256)
			}
			if _, why := reg.prove(st, ledger, o.sig, reg.current, nil, "", o.seq.Int64); why != "" {
				reg.add("operators", where, "", "operator change %q (%s): %s", name, action, why)
				continue
			}
		}
		switch {
		case !reg.signed && action == "add":
			reg.signed, reg.genesisSeq = true, o.seq.Int64
			reg.current[fp], reg.ever[fp] = op, op
		case !reg.signed:
			reg.add("operators", where, "", "a removal before any registration")
		case action == "add":
			if reg.byName(name) != nil || reg.current[fp].Name != "" {
				reg.add("operators", where, "", "operator %q or key %s is already registered", name, fp)
				continue
			}
			reg.current[fp], reg.ever[fp] = op, op
		default:
			if cur, ok := reg.current[fp]; !ok || !approvals.SameName(cur.Name, name) {
				reg.add("operators", where, "", "removes operator %q with a key that is not theirs", name)
				continue
			}
			delete(reg.current, fp)
		}
	}
	return reg, nil
}

func (r *registry) byName(name string) *Operator {
	for _, o := range r.current {
		if approvals.SameName(o.Name, name) {
			return &o
		}
	}
	return nil
}

// prove checks one signed fact: its signature row, a signing key in keys
// (and in the anchor, when there is one), the statement verifying, and the
// fact's author (when it names one) being that key's operator. It returns
// the operator, or why the proof fails. A version 1 statement (which
// does not bind the fact's place) counts only for a fact committed (by
// event seq) before the ledger's upgrade to version 2.
func (r *registry) prove(st statement, ledger string, sig sigRow, keys map[string]Operator, anchor *opkeys.Anchor, author string, seq int64) (Operator, string) {
	if !sig.present() {
		return Operator{}, "unsigned"
	}
	op, ok := keys[sig.fp.String]
	if !ok {
		return Operator{}, fmt.Sprintf("signed by %s, which is not a registered operator key", sig.fp.String)
	}
	st.Ledger, st.Signed = ledger, sig.signed.Int64
	if err := checkSignature(op.pub, st, sig.blob); err != nil {
		v1 := st
		v1.V = 1
		if !r.legacyOK(seq) || checkSignature(op.pub, v1, sig.blob) != nil {
			return op, err.Error()
		}
	}
	if author != "" && !approvals.SameName(author, op.Name) {
		return op, fmt.Sprintf("names operator %q but is signed by %q's key", author, op.Name)
	}
	if anchor != nil {
		if err := anchor.Allows(op.Name, op.pub); err != nil {
			return op, err.Error()
		}
	}
	return op, ""
}

// Proof says how a decision is proven: signed by a registered operator's
// key, unsigned (a ledger that was never signed), or INVALID with why.
type Proof struct {
	Status      string `json:"status"` // signed, unsigned or invalid
	Operator    string `json:"operator,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Problem     string `json:"problem,omitempty"`
}

// String is the form status, export and the console show.
func (p Proof) String() string {
	switch p.Status {
	case "signed":
		return fmt.Sprintf("signed by %s (%s)", p.Operator, p.Fingerprint)
	case "unsigned":
		return "unsigned"
	}
	return "INVALID: " + p.Problem
}

// proofOf checks one stored fact row against every key ever registered,
// for display and verify (guard uses only keys registered now).
func proofOf(ctx context.Context, tx *Tx, reg *registry, ledger, table, row, author string, sig sigRow, committedSeq int64) (Proof, error) {
	if !reg.signed || (committedSeq <= reg.genesisSeq && !sig.present()) {
		return Proof{Status: "unsigned"}, nil
	}
	st, err := statementFor(ctx, tx, table, row)
	if err != nil {
		return Proof{}, err
	}
	op, why := reg.prove(st, ledger, sig, reg.ever, nil, author, committedSeq)
	if why != "" {
		return Proof{Status: "invalid", Problem: why, Fingerprint: sig.fp.String}, nil
	}
	return Proof{Status: "signed", Operator: op.Name, Fingerprint: op.Fingerprint}, nil
}

// signedWrite runs one operator-authored write. On a ledger that was
// never signed it is one transaction under the claimed name (else the
// store's default operator). On a signed ledger the operator is the
// registered owner of one of the store's signers, and claimed, when
// given, must be that name: a first transaction completes draft (what the
// row will say) with what the ledger says of its key and writes nothing;
// the key signs it outside any transaction (an agent may wait for a
// touch, and the write lock is not held meanwhile); a second transaction
// writes the fact, rebuilds its statement from the stored row and stores
// the signature only if it verifies over it, so a draft that drifted from
// the row, or a ledger that changed meanwhile, stores nothing (ErrChanged).
// fn returns the fact to sign, or nil when it wrote nothing an operator
// must sign (a logged refusal).
func (s *Store) signedWrite(ctx context.Context, claimed string, draft statement, fn func(tx *Tx, operator string) (*factRef, error)) (Proof, error) {
	return s.sign(ctx, claimed, true, draft, fn)
}

// errSign stops the first transaction of a signed write: nothing was
// written, and the statement is ready to sign.
var errSign = errors.New("statement ready to sign")

// sign is signedWrite; needName is false only for the first operator
// registration, which no operator can sign.
//
// Once the act is stored, its head goes to the shared witness (witnessAct):
// an act erased whole, chain re-linked, before the next verify, backup or
// console session would otherwise leave no head that shows it missing.
func (s *Store) sign(ctx context.Context, claimed string, needName bool, draft statement, fn func(tx *Tx, operator string) (*factRef, error)) (_ Proof, err error) {
	defer func() {
		if err == nil {
			s.witnessAct(ctx)
		}
	}()
	var (
		signer  ssh.Signer
		st      statement
		drafted bool
	)
	proof := Proof{Status: "unsigned"}
	write := s.signedWriteFor(draft)
	err = write(ctx, func(tx *Tx) error {
		proof = Proof{Status: "unsigned"}
		now := tx.now
		id, reg, err := s.registryTx(ctx, tx)
		if err != nil {
			return err
		}
		if !reg.signed {
			name := cmp.Or(claimed, s.operator)
			if needName {
				if err := requireOperator(name); err != nil {
					return err
				}
				if s.anchor != nil {
					return fmt.Errorf("%w: the operators file %s exists, so this ledger must be signed: register an operator first (tollgate operators add NAME PUBKEY)", ErrNotPermitted, s.anchor.Path)
				}
			}
			_, err := fn(tx, name)
			return err
		}
		var op Operator
		if signer, op, err = s.pickSigner(reg, claimed); err != nil {
			return err
		}
		if !mayWait(signer) {
			return signInTx(ctx, tx, id, op, signer, fn, &proof)
		}
		st = draft
		st.Ledger, st.Signed = id, now
		// A draft that cannot be completed (no such request, say) is not
		// signed: the write below refuses with its own error.
		drafted = completeStatement(ctx, tx, &st) == nil
		return errSign
	})
	if !errors.Is(err, errSign) {
		return proof, err
	}
	var blob []byte
	if drafted {
		sig, err := signer.Sign(rand.Reader, st.bytes())
		if err != nil {
			return Proof{}, fmt.Errorf("%w: the operator key did not sign: %v", ErrNotPermitted, err)
		}
		blob = ssh.Marshal(sig)
	}
	fp := opkeys.Fingerprint(signer.PublicKey())
	err = write(ctx, func(tx *Tx) error {
		now := tx.now
		id, reg, err := s.registryTx(ctx, tx)
		if err != nil {
			return err
		}
		op, ok := reg.current[fp]
		if !ok {
			return fmt.Errorf("%w: key %s was removed from the operators while signing", ErrNotPermitted, fp)
		}
		if now-st.Signed > maxSigningDelay.Milliseconds() || now < st.Signed-maxSigningDelay.Milliseconds() {
			return fmt.Errorf("%w (signed %s, storing %s: more than %s apart)", ErrChanged, fromMS(st.Signed).Format(time.RFC3339), fromMS(now).Format(time.RFC3339), maxSigningDelay)
		}
		ref, err := fn(tx, op.Name)
		if err != nil || ref == nil {
			return err
		}
		st2, err := refStatement(ctx, tx, *ref)
		if err != nil {
			return err
		}
		st2.Ledger, st2.Signed = id, st.Signed
		if blob == nil || checkSignature(op.pub, st2, blob) != nil {
			return ErrChanged
		}
		return storeSignature(ctx, tx, op, *ref, st.Signed, blob, now, &proof)
	})
	return proof, err
}

// signedWriteFor is the transaction a signed write runs in. A key's own
// fact (a vote and the decision it may complete, a reconciliation) runs
// as a key transaction: on PostgreSQL it locks that key and shares the
// ledger-wide lock, and takes the chain head only for its events, their
// projection and its commit (schema 30). As a write of the whole ledger
// an approval locked the head before its first read, 13 of its 15 round
// trips, in which no event was sealed and no other operator could decide
// any key. What it reads beyond its key (the operators, the active
// epoch, the rules) changes only under the ledger-wide lock held alone,
// which a key transaction excludes. Facts of the whole ledger (rules,
// epochs, conflict reviews) keep the ledger-wide write.
func (s *Store) signedWriteFor(draft statement) func(context.Context, func(*Tx) error) error {
	k, err := ParseKey(draft.Key)
	if err != nil || (draft.Fact != "votes" && draft.Fact != "reconciliations") {
		return s.write
	}
	return func(ctx context.Context, fn func(*Tx) error) error {
		return s.writeKey(ctx, k.Logical, func(tx *Tx) error {
			tx.eventsFirst = true
			return fn(tx)
		})
	}
}

// refStatement is the statement of a fact just written, from the columns
// its INSERT returned.
func refStatement(ctx context.Context, tx *Tx, ref factRef) (statement, error) {
	if ref.vals == nil {
		return statementFor(ctx, tx, ref.Table, ref.Row)
	}
	return statementFromRow(ctx, tx, factTableNamed(ref.Table), ref.vals)
}

// SlowSigner is a signer that may wait before it answers: ssh-agent, a
// hardware key asking for a touch, a key file asking for its passphrase.
// It signs between two transactions, so no write lock is held while it
// waits. A signer that answers at once (a key in memory) signs inside
// the one transaction that writes the fact.
type SlowSigner interface {
	ssh.Signer
	MayWait() bool
}

func mayWait(sg ssh.Signer) bool {
	w, ok := sg.(SlowSigner)
	return ok && w.MayWait()
}

// signInTx writes the fact and signs the statement rebuilt from the
// stored row, in the caller's transaction.
func signInTx(ctx context.Context, tx *Tx, ledger string, op Operator, sg ssh.Signer, fn func(tx *Tx, operator string) (*factRef, error), proof *Proof) error {
	now := tx.now
	ref, err := fn(tx, op.Name)
	if err != nil || ref == nil {
		return err
	}
	st, err := refStatement(ctx, tx, *ref)
	if err != nil {
		return err
	}
	st.Ledger, st.Signed = ledger, now
	sig, err := sg.Sign(rand.Reader, st.bytes())
	if err != nil {
		return fmt.Errorf("%w: the operator key did not sign: %v", ErrNotPermitted, err)
	}
	return storeSignature(ctx, tx, op, *ref, now, ssh.Marshal(sig), now, proof)
}

// storeSignature keeps a fact's signature, committed by its own event.
func storeSignature(ctx context.Context, tx *Tx, op Operator, ref factRef, signed int64, blob []byte, now int64, proof *Proof) error {
	sref, err := insertFact(ctx, tx, "signatures", "fact_table, fact_row, fingerprint, signed_ms, signature, at_ms", ref.Table, ref.Row, op.Fingerprint, signed, blob, now)
	if err != nil {
		return err
	}
	*proof = Proof{Status: "signed", Operator: op.Name, Fingerprint: op.Fingerprint}
	return appendEvent(ctx, tx, "", evSigned, op.Name, map[string]any{"table": ref.Table, "row": ref.Row, "fingerprint": op.Fingerprint}, now, &sref)
}

func (s *Store) registryTx(ctx context.Context, tx *Tx) (string, *registry, error) {
	reg, err := loadRegistry(ctx, tx)
	if err != nil {
		return "", nil, err
	}
	return reg.ledger, reg, nil
}

// pickSigner chooses the first of the store's keys that is a registered
// operator (and listed in the anchor, when there is one).
func (s *Store) pickSigner(reg *registry, claimed string) (ssh.Signer, Operator, error) {
	if len(s.signers) == 0 {
		return nil, Operator{}, fmt.Errorf("%w: this ledger is signed: an operator key is needed (tollgate operator init, --key FILE, TOLLGATE_OPERATOR_KEY or ssh-agent)", ErrNotPermitted)
	}
	var fps []string
	for _, sg := range s.signers {
		fp := opkeys.Fingerprint(sg.PublicKey())
		op, ok := reg.current[fp]
		if !ok {
			fps = append(fps, fp)
			continue
		}
		if claimed != "" && !approvals.SameName(claimed, op.Name) {
			return nil, op, fmt.Errorf("%w: --operator %q is not the name registered for key %s (%q): the name comes from the key", ErrNotPermitted, claimed, fp, op.Name)
		}
		if s.anchor != nil {
			if err := s.anchor.Allows(op.Name, op.pub); err != nil {
				return nil, op, fmt.Errorf("%w: %v", ErrNotPermitted, err)
			}
		}
		return sg, op, nil
	}
	return nil, Operator{}, fmt.Errorf("%w: no key offered (%v) is a registered operator of this ledger", ErrNotPermitted, fps)
}

// AddOperator registers name with an Ed25519 public key (one
// authorized_keys line). The first registration makes the ledger signed
// for ever, and needs no signature; every later one is signed by a
// registered operator's key.
func (s *Store) AddOperator(ctx context.Context, name, publicKey string) (Operator, error) {
	if err := checkName("operator name", name); err != nil {
		return Operator{}, err
	}
	pub, err := opkeys.ParsePublicKey(publicKey)
	if err != nil {
		return Operator{}, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	op := Operator{Name: name, PublicKey: opkeys.Line(pub), Fingerprint: opkeys.Fingerprint(pub), pub: pub}
	err = s.changeOperators(ctx, statement{Fact: "operators", Request: name, Act: "add " + op.PublicKey}, func(tx *Tx, reg *registry) (*factRef, error) {
		now := tx.now
		if o := reg.byName(name); o != nil {
			return nil, fmt.Errorf("%w: operator %q is already registered (key %s); remove it first", ErrInvalidInput, o.Name, o.Fingerprint)
		}
		if o, ok := reg.current[op.Fingerprint]; ok {
			return nil, fmt.Errorf("%w: key %s is already registered to operator %q", ErrInvalidInput, op.Fingerprint, o.Name)
		}
		op.Added = fromMS(now)
		return operatorFact(ctx, tx, "add", op, now)
	})
	return op, err
}

// RemoveOperator withdraws an operator's key. The last operator cannot be
// removed: a signed ledger stays signed, and with no operator nothing on
// it could ever be decided again.
func (s *Store) RemoveOperator(ctx context.Context, name string) (Operator, error) {
	if err := checkName("operator name", name); err != nil {
		return Operator{}, err
	}
	var op Operator
	err := s.changeOperators(ctx, statement{Fact: "operators", Request: name, Act: "remove"}, func(tx *Tx, reg *registry) (*factRef, error) {
		now := tx.now
		o := reg.byName(name)
		if o == nil {
			return nil, fmt.Errorf("%w: operator %q is not registered", ErrNotFound, name)
		}
		if len(reg.current) == 1 {
			return nil, fmt.Errorf("%w: %q is the last operator: register another before removing it (a signed ledger stays signed)", ErrInvalidInput, o.Name)
		}
		op = *o
		return operatorFact(ctx, tx, "remove", op, now)
	})
	return op, err
}

// changeOperators writes an operator change: the first registration
// unsigned, every later one through signedWrite.
func (s *Store) changeOperators(ctx context.Context, draft statement, fn func(tx *Tx, reg *registry) (*factRef, error)) error {
	_, err := s.sign(ctx, "", false, draft, func(tx *Tx, _ string) (*factRef, error) {
		_, reg, err := s.registryTx(ctx, tx)
		if err != nil {
			return nil, err
		}
		ref, err := fn(tx, reg)
		if err != nil || reg.signed {
			return ref, err
		}
		return nil, nil // the first registration is the root of trust: unsigned
	})
	return err
}

func operatorFact(ctx context.Context, tx *Tx, action string, op Operator, now int64) (*factRef, error) {
	ref, err := insertFact(ctx, tx, "operators", "name, name_key, action, public_key, fingerprint, at_ms",
		op.Name, approvals.NameKey(op.Name), action, op.PublicKey, op.Fingerprint, now)
	if err != nil {
		return nil, err
	}
	ev := evOperatorAdded
	if action == "remove" {
		ev = evOperatorRemoved
	}
	return &ref, appendEvent(ctx, tx, "", ev, op.Name, map[string]any{"fingerprint": op.Fingerprint}, now, &ref)
}

// OperatorSet is the ledger's operators as proven from its facts.
type OperatorSet struct {
	// Signed is true once any operator was registered: decisions need keys.
	Signed    bool       `json:"signed"`
	Operators []Operator `json:"operators"`
	// Problems are operator changes that count for nothing (not committed
	// by their event, or not signed by an operator registered before).
	Problems []Problem `json:"problems,omitempty"`
}

// Registered reports whether pub is a registered operator's key.
func (o OperatorSet) Registered(pub ssh.PublicKey) bool {
	fp := opkeys.Fingerprint(pub)
	return slices.ContainsFunc(o.Operators, func(op Operator) bool { return op.Fingerprint == fp })
}

// Operators returns the registered operators, oldest first.
func (s *Store) Operators(ctx context.Context) (OperatorSet, error) {
	var out OperatorSet
	err := s.read(ctx, func(tx *Tx) error {
		_, reg, err := s.registryTx(ctx, tx)
		if err != nil {
			return err
		}
		out = OperatorSet{Signed: reg.signed, Problems: reg.problems, Operators: []Operator{}}
		for _, o := range reg.current {
			o.InForce = true
			if s.anchor != nil {
				if err := s.anchor.Allows(o.Name, o.pub); err != nil {
					o.InForce, o.Why = false, err.Error()
				}
			}
			if len(reg.problems) > 0 {
				o.InForce, o.Why = false, "the operator registry is doubtful (see problems): guard grants nothing until it is repaired"
			}
			out.Operators = append(out.Operators, o)
		}
		return nil
	})
	slices.SortFunc(out.Operators, func(a, b Operator) int {
		return cmp.Or(a.Added.Compare(b.Added), cmp.Compare(a.Name, b.Name))
	})
	return out, err
}

// Signing says how this store's operator-authored writes will be signed,
// for the console's status bar: on a ledger that was never signed,
// unsigned under Operator; else the registered name and fingerprint of
// the key that will sign, or why no key can.
type Signing struct {
	Signed      bool
	Operator    string
	Fingerprint string
	Problem     string
}

// Signing reports how decisions made through this store under the
// claimed name (empty: the key's, or the store's default) are signed.
func (s *Store) Signing(ctx context.Context, claimed string) (Signing, error) {
	var out Signing
	err := s.read(ctx, func(tx *Tx) error {
		_, reg, err := s.registryTx(ctx, tx)
		if err != nil {
			return err
		}
		out = Signing{Signed: reg.signed, Operator: cmp.Or(claimed, s.operator)}
		if !reg.signed {
			return nil
		}
		_, op, err := s.pickSigner(reg, claimed)
		if err != nil {
			out.Problem = strings.TrimPrefix(err.Error(), ErrNotPermitted.Error()+": ")
			return nil
		}
		out.Operator, out.Fingerprint = op.Name, op.Fingerprint
		return nil
	})
	return out, err
}
