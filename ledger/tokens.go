package ledger

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// The service's identities (issue 44, SPEC 12): bearer tokens an operator
// makes for agents (and operators) that reach `tollgate serve`, and the
// names a principal may act as besides its own (principals.go). Both are
// fact tables (agent_tokens, principal_names) whose rows are committed by
// events on the hash chain and, on a signed ledger, signed by the
// operator who wrote them, so verify proves them as it proves an
// operator change, and a row written by hand authenticates nobody.

// Event types of the identity facts.
const (
	evTokenCreated     = "token_created"
	evTokenRevoked     = "token_revoked"
	evPrincipalAllowed = "principal_allowed"
	evPrincipalRevoked = "principal_revoked"
)

// TokenScope is what a token's holder may do through the service: an
// agent's scope guards, reports and reads its own keys; an operator's
// reaches the operator endpoints and every read (SPEC 12).
type TokenScope string

// The token scopes.
const (
	TokenAgent    TokenScope = "agent"
	TokenOperator TokenScope = "operator"
)

// ParseTokenScope is s as a scope, refusing any other word by name.
func ParseTokenScope(s string) (TokenScope, error) {
	switch sc := TokenScope(s); sc {
	case TokenAgent, TokenOperator:
		return sc, nil
	}
	return "", fmt.Errorf("%w: a token's scope is %q or %q, not %q", ErrInvalidInput, TokenAgent, TokenOperator, s)
}

// ErrNotAuthenticated matches every refusal of a credential: the
// service answers it 401, whatever the reason, so that a caller learns
// nothing about which tokens exist.
var ErrNotAuthenticated = errors.New("not authenticated")

// Sentinels AuthenticateToken returns; both match ErrNotAuthenticated.
var (
	// ErrTokenUnknown means the bearer string is not a token this ledger
	// made and proves: malformed, never created, a digest that does not
	// match, or a creation whose event or signature does not prove it.
	ErrTokenUnknown = fmt.Errorf("%w: unknown token", ErrNotAuthenticated)
	// ErrTokenRevoked means the token was revoked.
	ErrTokenRevoked = fmt.Errorf("%w: the token was revoked", ErrNotAuthenticated)
)

// tokenPrefix starts every bearer token: it names the format's version
// and makes a leaked token recognisable to secret scanners.
const tokenPrefix = "tg1_"

// Sizes of a token's parts: the id (not secret) is 8 random bytes in
// hex, the secret 32 random bytes in unpadded base64url.
const (
	tokenIDLen     = 16
	tokenSecretLen = 43
)

// Token is one token as the ledger proves it; it never carries the
// secret or its digest.
type Token struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Scope     TokenScope `json:"scope"`
	CreatedBy string     `json:"created_by"`
	Created   time.Time  `json:"created"`
	Revoked   bool       `json:"revoked"`
	RevokedBy string     `json:"revoked_by,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// Proof is the creation's: signed by the operator who made it,
	// unsigned (a ledger never signed), or INVALID, which authenticates
	// nobody.
	Proof Proof `json:"proof"`
	// InForce is whether the token authenticates its holder now: not
	// revoked, and its creation honoured as AuthenticateToken judges it
	// (Why says why not).
	InForce bool   `json:"in_force"`
	Why     string `json:"why,omitempty"`
}

// identityRow is a row of agent_tokens or principal_names with the event
// that commits it and its signature.
type identityRow struct {
	vals []any
	seq  int64
	sha  string
	sig  sigRow
}

func (r identityRow) text(t *factTable, col string) string { return t.value(r.vals, col) }

// readIdentityRows reads rows of table (agent_tokens or principal_names)
// with their proofs, oldest first.
func readIdentityRows(ctx context.Context, tx *Tx, table, where string, args ...any) ([]identityRow, error) {
	t := factTableNamed(table)
	q := "SELECT " + prefixCols("t.", t.cols) + ", coalesce(e.seq, 0), coalesce(e.fact_sha256, ''), s.fingerprint, s.signed_ms, s.signature FROM " + table + " t" +
		" LEFT JOIN events e ON e.fact_table = '" + table + "' AND e.fact_row = CAST(t.id AS TEXT)" + sigJoin(table, "id") + " WHERE " + where + " ORDER BY t.id"
	n := t.ncols()
	return queryRows(ctx, tx, q, args, func(r *sql.Rows, x *identityRow) error {
		x.vals = make([]any, n)
		ptrs := make([]any, n+5)
		for i := range x.vals {
			ptrs[i] = &x.vals[i]
		}
		ptrs[n], ptrs[n+1], ptrs[n+2], ptrs[n+3], ptrs[n+4] = &x.seq, &x.sha, &x.sig.fp, &x.sig.signed, &x.sig.blob
		return r.Scan(ptrs...)
	})
}

// honoured says why an identity fact does not count now, or "" when it
// does: it must be committed by its event as it stands and, on a signed
// ledger, carry a valid signature by an operator registered now (and in
// the operators file, when there is one), as guard asks of a rule: one
// made before the ledger was signed stops counting when it is (make it
// again, signed). A doubtful operator registry honours nothing.
func (s *Store) honoured(ctx context.Context, tx *Tx, reg *registry, table string, x identityRow) (string, error) {
	t := factTableNamed(table)
	if x.seq == 0 || x.sha != t.ref(x.vals).SHA256 {
		return "not committed by its event as it stands", nil
	}
	if !reg.signed {
		return "", nil
	}
	if !x.sig.present() {
		return "unsigned: made before the ledger was signed, or written by hand", nil
	}
	if len(reg.problems) > 0 {
		return "the operator registry is doubtful (tollgate verify names why)", nil
	}
	st, err := statementFromRow(ctx, tx, t, x.vals)
	if err != nil {
		return "", err
	}
	if _, why := reg.prove(st, reg.ledger, x.sig, reg.current, s.anchor, x.text(t, "operator"), x.seq); why != "" {
		return why, nil
	}
	return "", nil
}

// identityStatement is what an operator signs for a token's creation or
// revocation (the digest stands where a key's payload digest does) or
// for allowing or withdrawing a name. Names are quoted: a name may hold
// a space, and must not shift into the next field.
func identityStatement(st *statement, v func(string) string) {
	switch st.Fact {
	case "agent_tokens":
		st.ref = v("token_id")
		st.Request = tokenRequest(v("token_id"), v("name"), TokenScope(v("scope")))
		st.Act, st.Payload = v("action"), v("digest")
	case "principal_names":
		st.Request, st.Act = principalRequest(v("who"), v("agent")), v("action")
	}
}

func tokenRequest(id, name string, scope TokenScope) string {
	return fmt.Sprintf("token_id=%s name=%q scope=%s", id, name, scope)
}

func principalRequest(who, agent string) string {
	return fmt.Sprintf("who=%q agent=%q", who, agent)
}

// completeIdentity binds an identity fact to its place (the change
// before it in its table) and completes a revocation's draft with what
// the token's creation says of it.
func completeIdentity(ctx context.Context, tx *Tx, st *statement) error {
	what := "name change"
	if st.Fact == "agent_tokens" {
		what = "token change"
		if st.Request == "" {
			var name, scope string
			if err := tx.QueryRowContext(ctx, "SELECT name, scope FROM agent_tokens WHERE token_id = ? AND action = 'create'", st.ref).Scan(&name, &scope); err != nil {
				return err
			}
			st.Request = tokenRequest(st.ref, name, TokenScope(scope))
		}
	}
	return placeStatement(ctx, tx, st, what, "")
}

// newToken makes a token's id and its bearer string.
func newToken() (id, bearer string, err error) {
	var b [8 + 32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	id = hex.EncodeToString(b[:8])
	return id, tokenPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(b[8:]), nil
}

// parseBearer is the id of a well-formed bearer string.
func parseBearer(bearer string) (string, bool) {
	rest, ok := strings.CutPrefix(bearer, tokenPrefix)
	if !ok || len(rest) != tokenIDLen+1+tokenSecretLen || rest[tokenIDLen] != '_' {
		return "", false
	}
	id, secret := rest[:tokenIDLen], rest[tokenIDLen+1:]
	if !validTokenID(id) {
		return "", false
	}
	if b, err := base64.RawURLEncoding.Strict().DecodeString(secret); err != nil || len(b) != 32 {
		return "", false
	}
	return id, true
}

// validTokenID is whether id has a token id's form: 16 lowercase hex.
func validTokenID(id string) bool {
	if len(id) != tokenIDLen {
		return false
	}
	for _, c := range []byte(id) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// CreateToken makes a bearer token for name with scope, as operator: an
// operator act, signed on a signed ledger (where the name comes from the
// key, and a claimed operator must be it) and recorded under the
// operator's name on one that was never signed. It returns the token and
// its bearer string, which is shown once: the ledger keeps only its
// SHA-256.
func (s *Store) CreateToken(ctx context.Context, name string, scope TokenScope, operator string) (Token, string, error) {
	if name == "" {
		return Token{}, "", fmt.Errorf("%w: a token needs the name its holder acts under", ErrInvalidInput)
	}
	if err := checkName("token name", name); err != nil {
		return Token{}, "", err
	}
	if _, err := ParseTokenScope(string(scope)); err != nil {
		return Token{}, "", err
	}
	if operator != "" {
		if err := checkOperator(operator); err != nil {
			return Token{}, "", err
		}
	}
	id, bearer, err := newToken()
	if err != nil {
		return Token{}, "", err
	}
	digest := sha256Hex([]byte(bearer))
	tok := Token{ID: id, Name: name, Scope: scope}
	draft := statement{Fact: "agent_tokens", Request: tokenRequest(id, name, scope), Act: "create", Payload: digest, ref: id}
	proof, err := s.signedWrite(ctx, operator, draft, func(tx *Tx, op string) (*factRef, error) {
		now := tx.now
		ref, err := insertFact(ctx, tx, "agent_tokens", "token_id, action, name, name_key, scope, digest, operator, at_ms",
			id, "create", name, approvals.NameKey(name), string(scope), digest, op, now)
		if err != nil {
			return nil, err
		}
		tok.CreatedBy, tok.Created = op, fromMS(now)
		return &ref, appendEvent(ctx, tx, "", evTokenCreated, op, map[string]any{"token_id": id, "name": name, "scope": string(scope)}, now, &ref)
	})
	if err != nil {
		return Token{}, "", err
	}
	tok.Proof, tok.InForce = proof, true
	return tok, bearer, nil
}

// RevokeToken ends the token with id, as operator (an operator act,
// signed on a signed ledger): its next use is refused. A token is
// revoked once; an unknown id is refused by name.
func (s *Store) RevokeToken(ctx context.Context, id, operator string) (Token, error) {
	if !validTokenID(id) {
		return Token{}, fmt.Errorf("%w: a token id is %d lowercase hex digits (tollgate agents token list)", ErrInvalidInput, tokenIDLen)
	}
	if operator != "" {
		if err := checkOperator(operator); err != nil {
			return Token{}, err
		}
	}
	var tok Token
	_, err := s.signedWrite(ctx, operator, statement{Fact: "agent_tokens", Act: "revoke", ref: id}, func(tx *Tx, op string) (*factRef, error) {
		now := tx.now
		rows, err := readIdentityRows(ctx, tx, "agent_tokens", "t.token_id = ?", id)
		if err != nil {
			return nil, err
		}
		toks := tokensFrom(rows)
		if len(toks) == 0 {
			return nil, fmt.Errorf("%w: there is no token %s", ErrInvalidInput, id)
		}
		tok = toks[0]
		if tok.Revoked {
			return nil, fmt.Errorf("%w: token %s was revoked already, by %s at %s", ErrInvalidInput, id, tok.RevokedBy, tok.RevokedAt.Format(time.RFC3339))
		}
		ref, err := insertFact(ctx, tx, "agent_tokens", "token_id, action, name, name_key, scope, digest, operator, at_ms",
			id, "revoke", tok.Name, approvals.NameKey(tok.Name), string(tok.Scope), "", op, now)
		if err != nil {
			return nil, err
		}
		at := fromMS(now)
		tok.Revoked, tok.RevokedBy, tok.RevokedAt, tok.InForce, tok.Why = true, op, &at, false, "revoked"
		return &ref, appendEvent(ctx, tx, "", evTokenRevoked, op, map[string]any{"token_id": id, "name": tok.Name}, now, &ref)
	})
	return tok, err
}

// tokensFrom folds token rows into tokens, oldest first: a revocation
// row ends its token whatever its proof (a forged revocation can only
// lock a holder out), and a revocation with no creation is dropped.
func tokensFrom(rows []identityRow) []Token {
	t := factTableNamed("agent_tokens")
	var out []Token
	byID := map[string]int{}
	for _, x := range rows {
		id := x.text(t, "token_id")
		at, _ := x.vals[8].(int64)
		switch x.text(t, "action") {
		case "create":
			if _, ok := byID[id]; ok {
				continue
			}
			byID[id] = len(out)
			out = append(out, Token{ID: id, Name: x.text(t, "name"), Scope: TokenScope(x.text(t, "scope")), CreatedBy: x.text(t, "operator"), Created: fromMS(at)})
		case "revoke":
			if i, ok := byID[id]; ok && !out[i].Revoked {
				when := fromMS(at)
				out[i].Revoked, out[i].RevokedBy, out[i].RevokedAt = true, x.text(t, "operator"), &when
			}
		}
	}
	return out
}

// Tokens lists every token, oldest first, with the proof of its
// creation; never a secret or a digest. On PostgreSQL only an operator's
// role (or the schema's owner) may read them.
func (s *Store) Tokens(ctx context.Context) ([]Token, error) {
	var out []Token
	err := s.read(ctx, func(tx *Tx) error {
		reg, err := loadRegistry(ctx, tx)
		if err != nil {
			return err
		}
		rows, err := readIdentityRows(ctx, tx, "agent_tokens", "1 = 1")
		if err != nil {
			return err
		}
		out = tokensFrom(rows)
		t := factTableNamed("agent_tokens")
		for _, x := range rows {
			if x.text(t, "action") != "create" {
				continue
			}
			i := slices.IndexFunc(out, func(k Token) bool { return k.ID == x.text(t, "token_id") })
			if i < 0 || out[i].Proof.Status != "" {
				continue
			}
			if out[i].Proof, err = s.identityProof(ctx, tx, reg, "agent_tokens", x); err != nil {
				return err
			}
			why, err := s.honoured(ctx, tx, reg, "agent_tokens", x)
			if err != nil {
				return err
			}
			if out[i].Revoked {
				why = "revoked"
			}
			out[i].InForce, out[i].Why = why == "", why
		}
		return nil
	})
	if out == nil {
		out = []Token{}
	}
	return out, s.identityErr(err)
}

// identityProof is how an identity fact is proven, for display: against
// every key ever registered, as status shows a decision, and INVALID when
// its event does not commit it as it stands.
func (s *Store) identityProof(ctx context.Context, tx *Tx, reg *registry, table string, x identityRow) (Proof, error) {
	t := factTableNamed(table)
	if x.seq == 0 || x.sha != t.ref(x.vals).SHA256 {
		return Proof{Status: "invalid", Problem: "not committed by its event as it stands"}, nil
	}
	return proofOf(ctx, tx, reg, reg.ledger, table, colText(x.vals[0]), x.text(t, "operator"), x.sig, x.seq)
}

// AuthenticateToken returns the token whose bearer string is bearer,
// when this ledger made it, proves its creation now (committed by its
// event and, on a signed ledger, signed by an operator registered now)
// and it is not revoked. It refuses with ErrTokenUnknown or
// ErrTokenRevoked (both ErrNotAuthenticated), naming the token's id at
// most, never the bearer string. The digest is compared in constant
// time. On PostgreSQL it needs an operator's role or the owner's: an
// agent's role cannot read the digests.
func (s *Store) AuthenticateToken(ctx context.Context, bearer string) (Token, error) {
	id, ok := parseBearer(bearer)
	if !ok {
		return Token{}, fmt.Errorf("%w (not a tollgate token: %s<id>_<secret>)", ErrTokenUnknown, tokenPrefix)
	}
	digest := sha256Hex([]byte(bearer))
	var tok Token
	err := s.read(ctx, func(tx *Tx) error {
		rows, err := readIdentityRows(ctx, tx, "agent_tokens", "t.token_id = ?", id)
		if err != nil {
			return err
		}
		t := factTableNamed("agent_tokens")
		i := slices.IndexFunc(rows, func(x identityRow) bool { return x.text(t, "action") == "create" })
		// A digest that differs and an id never made are one answer.
		if i < 0 || subtle.ConstantTimeCompare([]byte(rows[i].text(t, "digest")), []byte(digest)) != 1 {
			return fmt.Errorf("%w (id %s)", ErrTokenUnknown, id)
		}
		toks := tokensFrom(rows)
		tok = toks[0]
		if tok.Revoked {
			return fmt.Errorf("%w (id %s, by %s at %s)", ErrTokenRevoked, id, tok.RevokedBy, tok.RevokedAt.Format(time.RFC3339))
		}
		reg, err := loadRegistry(ctx, tx)
		if err != nil {
			return err
		}
		why, err := s.honoured(ctx, tx, reg, "agent_tokens", rows[i])
		if err != nil {
			return err
		}
		if why != "" {
			return fmt.Errorf("%w (id %s: its creation is not proven: %s)", ErrTokenUnknown, id, why)
		}
		tok.Proof, err = s.identityProof(ctx, tx, reg, "agent_tokens", rows[i])
		tok.InForce = true
		return err
	})
	if err != nil {
		return Token{}, s.identityErr(err)
	}
	return tok, nil
}

// identityErr maps an engine's refusal (an agent's role reading the
// tokens on PostgreSQL) to ErrNotPermitted, leaving the ledger's own
// errors as they are.
func (s *Store) identityErr(err error) error {
	if err == nil || errors.Is(err, ErrNotAuthenticated) || errors.Is(err, ErrInvalidInput) || errors.Is(err, ErrNotPermitted) {
		return err
	}
	return s.eng.MapError(err)
}
