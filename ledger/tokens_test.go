package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/opkeys"
)

// TestTokenLifecycle: a token is made for a name and scope, authenticates
// its holder until it is revoked, and is then refused as revoked; a
// bearer string that is not exactly a token this ledger made is refused
// as unknown; the secret and its digest appear in no list, export or
// event.
func TestTokenLifecycle(t *testing.T) {
	s, _ := openTest(t)
	agentTok, agentSecret, err := s.CreateToken(ctx, "bot-1", TokenAgent, "root")
	if err != nil {
		t.Fatal(err)
	}
	opTok, opSecret, err := s.CreateToken(ctx, "console", TokenOperator, "root")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(agentSecret, "tg1_"+agentTok.ID+"_") || agentTok.CreatedBy != "root" || agentTok.Proof.Status != "unsigned" {
		t.Fatalf("created %+v with secret of form %q", agentTok, agentSecret[:21])
	}
	for _, tc := range []struct {
		secret string
		name   string
		scope  TokenScope
	}{{agentSecret, "bot-1", TokenAgent}, {opSecret, "console", TokenOperator}} {
		got, err := s.AuthenticateToken(ctx, tc.secret)
		if err != nil || got.Name != tc.name || got.Scope != tc.scope || got.Revoked {
			t.Fatalf("authenticate %s: %+v %v", tc.name, got, err)
		}
	}
	id := agentTok.ID
	flip := []byte(agentSecret)
	flip[len(flip)-2] ^= 1 // still base64url of 32 bytes: only the digest differs
	for _, bad := range []struct{ name, bearer string }{
		{"empty", ""},
		{"another prefix", "tg2_" + agentSecret[4:]},
		{"secret changed", string(flip)},
		{"truncated", agentSecret[:len(agentSecret)-1]},
		{"extended", agentSecret + "A"},
		{"id of another token", "tg1_" + opTok.ID + agentSecret[4+16:]},
		{"never made", "tg1_0123456789abcdef_" + strings.Repeat("A", 43)},
		{"uppercase id", "tg1_" + strings.ToUpper(id) + agentSecret[4+16:]},
		{"digest as bearer", sha256Hex([]byte(agentSecret))},
	} {
		if _, err := s.AuthenticateToken(ctx, bad.bearer); !errors.Is(err, ErrTokenUnknown) || !errors.Is(err, ErrNotAuthenticated) {
			t.Errorf("%s: %v, want ErrTokenUnknown", bad.name, err)
		} else if bad.bearer != "" && strings.Contains(err.Error(), bad.bearer) {
			t.Errorf("%s: the refusal repeats the bearer string", bad.name)
		}
	}
	revoked, err := s.RevokeToken(ctx, id, "root")
	if err != nil || !revoked.Revoked || revoked.RevokedBy != "root" || revoked.Name != "bot-1" {
		t.Fatalf("revoke: %+v %v", revoked, err)
	}
	if _, err := s.AuthenticateToken(ctx, agentSecret); !errors.Is(err, ErrTokenRevoked) || !errors.Is(err, ErrNotAuthenticated) {
		t.Fatalf("a revoked token: %v, want ErrTokenRevoked", err)
	}
	if _, err := s.AuthenticateToken(ctx, opSecret); err != nil {
		t.Fatalf("revoking one token ended another: %v", err)
	}
	for _, bad := range []struct{ name, id string }{{"again", id}, {"unknown", "0123456789abcdef"}, {"not an id", "../x"}, {"a secret", agentSecret}} {
		if _, err := s.RevokeToken(ctx, bad.id, "root"); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("revoke %s: %v, want invalid input", bad.name, err)
		}
	}
	if _, _, err := s.CreateToken(ctx, "bot\u0007", TokenAgent, "root"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a name with a control character: %v", err)
	}
	if _, _, err := s.CreateToken(ctx, "bot-2", TokenScope("admin"), "root"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("an unknown scope: %v", err)
	}
	if _, _, err := s.CreateToken(ctx, "bot-2", TokenAgent, ""); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("no operator on an unsigned ledger: %v", err)
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 2 || list[0].ID != id || !list[0].Revoked || list[1].Revoked || list[1].Scope != TokenOperator {
		t.Fatalf("list: %+v %v", list, err)
	}
	var out bytes.Buffer
	js, _ := json.Marshal(list)
	out.Write(js)
	evs, _ := s.Timeline(ctx, "")
	js, _ = json.Marshal(evs)
	out.Write(js)
	if _, err := s.Export(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), id) {
		t.Fatal("the events do not name the token")
	}
	for _, secret := range []string{agentSecret, opSecret} {
		for _, leak := range []string{secret, secret[4+16+1:], sha256Hex([]byte(secret))} {
			if strings.Contains(out.String(), leak) {
				t.Fatalf("the list, events or export hold a token's secret or digest")
			}
		}
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep.Problems, err)
	}
}

// TestTokensOnSignedLedger: on a signed ledger a token's creation and
// revocation are operator acts: refused without a registered key (exit
// 77) with nothing stored, refused under another operator's name, and
// signed by the key's operator otherwise, with a key that signs at once
// and one that may wait; verify proves them.
func TestTokensOnSignedLedger(t *testing.T) {
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "key in memory", true: "key that may wait"}[slow], func(t *testing.T) {
			path, clk, alice := testLedger(t), newClock(), newSigner(t)
			var key ssh.Signer = alice
			if slow {
				key = slowKey{alice}
			}
			s := openAs(t, path, clk, nil, key)
			if _, err := s.AddOperator(ctx, "alice", opkeys.Line(alice.PublicKey())); err != nil {
				t.Fatal(err)
			}
			nokey, stranger := openAs(t, path, clk, nil), openAs(t, path, clk, nil, newSigner(t))
			events := func() (n int) {
				s.r.QueryRow("SELECT count(*) FROM events").Scan(&n)
				return n
			}
			before := events()
			for name, st := range map[string]*Store{"no key": nokey, "a key not registered": stranger} {
				if _, _, err := st.CreateToken(ctx, "bot-1", TokenAgent, ""); !errors.Is(err, ErrNotPermitted) {
					t.Errorf("create with %s: %v, want not permitted", name, err)
				}
				if _, err := st.AllowPrincipal(ctx, "bot-1", "backup", ""); !errors.Is(err, ErrNotPermitted) {
					t.Errorf("allow with %s: %v, want not permitted", name, err)
				}
			}
			if _, _, err := s.CreateToken(ctx, "bot-1", TokenAgent, "bob"); !errors.Is(err, ErrNotPermitted) {
				t.Errorf("create under another name: %v, want not permitted", err)
			}
			if n := events(); n != before {
				t.Fatalf("refused acts stored %d events", n-before)
			}
			tok, secret, err := s.CreateToken(ctx, "bot-1", TokenAgent, "")
			if err != nil || tok.Proof.Status != "signed" || tok.Proof.Operator != "alice" || tok.CreatedBy != "alice" {
				t.Fatalf("signed create: %+v %v", tok, err)
			}
			if got, err := nokey.AuthenticateToken(ctx, secret); err != nil || got.Proof.Status != "signed" {
				t.Fatalf("authenticate a signed token: %+v %v", got, err)
			}
			if ok, err := s.AllowPrincipal(ctx, "bot-1", "backup", ""); err != nil || !ok {
				t.Fatalf("signed allow: %v %v", ok, err)
			}
			if ok, err := nokey.MayActAs(ctx, "bot-1", "backup"); err != nil || !ok {
				t.Fatalf("a signed allowance: %v %v", ok, err)
			}
			if _, err := nokey.RevokeToken(ctx, tok.ID, ""); !errors.Is(err, ErrNotPermitted) {
				t.Errorf("revoke without a key: %v", err)
			}
			if _, err := s.RevokeToken(ctx, tok.ID, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := nokey.AuthenticateToken(ctx, secret); !errors.Is(err, ErrTokenRevoked) {
				t.Fatalf("after a signed revoke: %v", err)
			}
			list, err := nokey.Tokens(ctx)
			if err != nil || len(list) != 1 || list[0].Proof.Status != "signed" {
				t.Fatalf("list: %+v %v", list, err)
			}
			var unsigned int
			s.r.QueryRow(`SELECT count(*) FROM agent_tokens t WHERE NOT EXISTS (SELECT 1 FROM signatures s WHERE s.fact_table = 'agent_tokens' AND s.fact_row = CAST(t.id AS TEXT))`).Scan(&unsigned)
			if unsigned != 0 {
				t.Fatalf("%d token rows unsigned", unsigned)
			}
			rep, err := nokey.Verify(ctx)
			if err != nil || !rep.OK() {
				t.Fatalf("verify: %v %v", rep.Problems, err)
			}
		})
	}
}

// TestMayActAs: a principal acts under its own name, spelled any way the
// names' normalization folds together, and under a name an operator
// allowed it until the allowance is withdrawn; never under another.
func TestMayActAs(t *testing.T) {
	s, _ := openTest(t)
	if ok, err := s.AllowPrincipal(ctx, "bot-1", "backup-bot", "root"); err != nil || !ok {
		t.Fatalf("allow: %v %v", ok, err)
	}
	if ok, err := s.AllowPrincipal(ctx, "BOT-1", "Backup-Bot", "root"); err != nil || ok {
		t.Fatalf("allowed twice: %v %v, want no change", ok, err)
	}
	if ok, err := s.AllowPrincipal(ctx, "bot-2", "bot-1", "root"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ok, err := s.RevokePrincipal(ctx, "bot-2", "bot-1", "root"); err != nil || !ok {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if ok, err := s.RevokePrincipal(ctx, "bot-2", "bot-1", "root"); err != nil || ok {
		t.Fatalf("revoked twice: %v %v, want no change", ok, err)
	}
	for _, tc := range []struct {
		who, name string
		want      bool
	}{
		{"bot-1", "bot-1", true},
		{"bot-1", "Bot-1", true},
		{"bot-1", "ｂｏｔ-1", true},
		{"bot-1", "bot-1 ", true},
		{"bot-1", "backup-bot", true},
		{"Bot-1", "BACKUP-BOT", true},
		{"backup-bot", "bot-1", false},
		{"bot-2", "bot-1", false},
		{"bot-2", "backup-bot", false},
		{"bot-1", "bot-2", false},
	} {
		if ok, err := s.MayActAs(ctx, tc.who, tc.name); err != nil || ok != tc.want {
			t.Errorf("MayActAs(%q, %q) = %v %v, want %v", tc.who, tc.name, ok, err, tc.want)
		}
	}
	for _, bad := range [][2]string{{"", "x"}, {"x", ""}, {"bot\u200b", "x"}, {"x", "a\nb"}} {
		if _, err := s.MayActAs(ctx, bad[0], bad[1]); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("MayActAs(%q, %q): %v, want invalid input", bad[0], bad[1], err)
		}
	}
	names, err := s.PrincipalNames(ctx)
	if err != nil || len(names) != 1 || names[0].Who != "bot-1" || names[0].Agent != "backup-bot" || names[0].AddedBy != "root" {
		t.Fatalf("names: %+v %v", names, err)
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep.Problems, err)
	}
}

// identityLedger is a closed ledger holding two tokens (one revoked) and
// an allowed name, and the head a verify witnessed.
func identityLedger(t *testing.T) (path, secret string, head Head) {
	t.Helper()
	s, _ := openTest(t)
	if _, _, err := s.CreateToken(ctx, "bot-1", TokenAgent, "root"); err != nil {
		t.Fatal(err)
	}
	tok, _, err := s.CreateToken(ctx, "bot-2", TokenAgent, "root")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeToken(ctx, tok.ID, "root"); err != nil {
		t.Fatal(err)
	}
	_, secret, err = s.CreateToken(ctx, "bot-3", TokenAgent, "root")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AllowPrincipal(ctx, "bot-1", "backup", "root"); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("the untouched ledger does not verify: %v %v", rep.Problems, err)
	}
	s.Close()
	return testPath(s), secret, rep.Head()
}

// TestVerifyNamesTamperedIdentityRows edits the identity facts of a copy
// as someone who can write the database (triggers off) would, and
// asserts that verify names the row, and that what the edit was for (a
// wider scope, a revocation undone, a name allowed by hand) is not
// honoured by AuthenticateToken or MayActAs.
func TestVerifyNamesTamperedIdentityRows(t *testing.T) {
	path, secret, head := identityLedger(t)
	tests := []struct {
		name  string
		edit  []string
		table string
		row   string
		// check asserts the edit gains nothing on the tampered copy.
		check func(t *testing.T, s *Store)
	}{
		{name: "scope widened", edit: []string{"UPDATE agent_tokens SET scope = 'operator' WHERE id = 4"}, table: "agent_tokens", row: "id=4",
			check: func(t *testing.T, s *Store) {
				if tok, err := s.AuthenticateToken(ctx, secret); !errors.Is(err, ErrTokenUnknown) {
					t.Errorf("a token whose row was edited: %+v %v, want refused", tok, err)
				}
			}},
		{name: "digest replaced", edit: []string{"UPDATE agent_tokens SET digest = '" + strings.Repeat("a", 64) + "' WHERE id = 1"}, table: "agent_tokens", row: "id=1"},
		{name: "revocation deleted", edit: []string{"DELETE FROM agent_tokens WHERE action = 'revoke'"}, table: "agent_tokens", row: "id=3"},
		{name: "token inserted by hand", edit: []string{
			"INSERT INTO agent_tokens(id, token_id, action, name, name_key, scope, digest, operator, at_ms) VALUES (9, '00000000000000aa', 'create', 'mallory', 'mallory', 'operator', '" + strings.Repeat("b", 64) + "', 'root', 1)",
		}, table: "agent_tokens", row: "id=9"},
		{name: "name allowed by hand", edit: []string{
			"INSERT INTO principal_names(id, who, who_key, agent, agent_key, action, operator, at_ms) VALUES (9, 'bot-2', 'bot-2', 'bot-1', 'bot-1', 'allow', 'root', 1)",
		}, table: "principal_names", row: "id=9",
			check: func(t *testing.T, s *Store) {
				if ok, err := s.MayActAs(ctx, "bot-2", "bot-1"); ok || err != nil {
					t.Errorf("a hand-written allowance: %v %v, want not allowed", ok, err)
				}
			}},
		{name: "allowed name changed", edit: []string{"UPDATE principal_names SET agent = 'root', agent_key = 'root' WHERE id = 1"}, table: "principal_names", row: "id=1",
			check: func(t *testing.T, s *Store) {
				if ok, err := s.MayActAs(ctx, "bot-1", "root"); ok || err != nil {
					t.Errorf("an edited allowance: %v %v, want not allowed", ok, err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp, db := tamperCopy(t, path)
			for _, q := range tc.edit {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			db.Close()
			c, err := Open(ctx, cp, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rep, err := c.Verify(ctx, head)
			if err != nil {
				t.Fatal(err)
			}
			requireNamed(t, rep, tc.table, tc.row)
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

// TestPostgresAgentCannotReadOrMakeTokens: on PostgreSQL an agent's role
// cannot read the tokens' digests, make or revoke a token, or allow
// itself a name, through the ledger (exit 77) or in SQL (42501), and
// nothing changes; an operator's role does all of it.
func TestPostgresAgentCannotReadOrMakeTokens(t *testing.T) {
	r := newPGRoles(t)
	bot1, alice := openAt(t, r.bot1), openAt(t, r.alice)
	tok, secret, err := alice.CreateToken(ctx, "svc-bot", TokenAgent, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := bot1.CreateToken(ctx, "bot1", TokenOperator, "bot1"); !errors.Is(err, ErrNotPermitted) {
		t.Errorf("an agent's role made a token: %v, want exit 77", err)
	}
	if _, err := bot1.RevokeToken(ctx, tok.ID, "bot1"); !errors.Is(err, ErrNotPermitted) {
		t.Errorf("an agent's role revoked a token: %v, want exit 77", err)
	}
	if _, err := bot1.Tokens(ctx); !errors.Is(err, ErrNotPermitted) {
		t.Errorf("an agent's role listed the tokens: %v, want exit 77", err)
	}
	if _, err := bot1.AuthenticateToken(ctx, secret); !errors.Is(err, ErrNotPermitted) {
		t.Errorf("an agent's role read a digest to authenticate: %v, want exit 77", err)
	}
	if _, err := bot1.AllowPrincipal(ctx, "bot1", "svc-bot", "bot1"); !errors.Is(err, ErrNotPermitted) {
		t.Errorf("an agent's role allowed itself a name: %v, want exit 77", err)
	}
	raw := rawDB(t, r.bot1)
	for _, q := range []string{
		"SELECT digest FROM agent_tokens",
		"SELECT count(*) FROM agent_tokens",
		"INSERT INTO agent_tokens(token_id, action, name, name_key, scope, digest, operator, at_ms) VALUES ('00000000000000aa', 'create', 'x', 'x', 'operator', '" + strings.Repeat("b", 64) + "', 'x', 1)",
		"SELECT " + insertFactFn + "agent_tokens(ARRAY['token_id'], ARRAY['x'])",
		"SELECT " + insertFactFn + "principal_names(ARRAY['who'], ARRAY['x'])",
		"INSERT INTO principal_names(who, who_key, agent, agent_key, action, operator, at_ms) VALUES ('bot1', 'bot1', 'svc-bot', 'svc-bot', 'allow', 'x', 1)",
	} {
		if _, err := raw.DB.Exec(q); pgCode(err) != "42501" {
			t.Errorf("%s: %v, want permission denied", q, err)
		}
	}
	if got, err := alice.AuthenticateToken(ctx, secret); err != nil || got.Name != "svc-bot" {
		t.Fatalf("an operator's role authenticating: %+v %v", got, err)
	}
	if ok, err := alice.AllowPrincipal(ctx, "svc-bot", "bot1", "alice"); err != nil || !ok {
		t.Fatalf("an operator's allow: %v %v", ok, err)
	}
	// The names map holds no secret: an agent's role reads it.
	if ok, err := bot1.MayActAs(ctx, "svc-bot", "bot1"); err != nil || !ok {
		t.Errorf("an agent's role asking MayActAs: %v %v", ok, err)
	}
	if _, err := alice.RevokeToken(ctx, tok.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	list, err := alice.Tokens(ctx)
	if err != nil || len(list) != 1 || !list[0].Revoked {
		t.Fatalf("list: %+v %v", list, err)
	}
	// An agent's role verifies the ledger but for the rows it may not
	// read, and says which; an operator's role proves them too.
	rep, err := bot1.Verify(ctx)
	if err != nil || !rep.OK() || !slices.Equal(rep.Unreadable, []string{"agent_tokens"}) {
		t.Fatalf("verify as an agent's role: %+v %v", rep, err)
	}
	rep2, err := alice.Verify(ctx)
	if err != nil || !rep2.OK() || len(rep2.Unreadable) != 0 || rep2.Facts != rep.Facts+2 {
		t.Fatalf("verify as an operator's role: %+v %v (the agent's proved %d facts)", rep2, err, rep.Facts)
	}
}

// TestForgedTokenOnSignedLedger: someone who can write the ledger's
// database (an agent's user with the SQLite file) adds a token whose
// secret they know, with an event whose hash is right, but cannot sign
// it as an operator: the token authenticates nobody, and verify names
// the row as unsigned.
func TestForgedTokenOnSignedLedger(t *testing.T) {
	path, clk, alice := testLedger(t), newClock(), newSigner(t)
	s := openAs(t, path, clk, nil, alice)
	if _, err := s.AddOperator(ctx, "alice", opkeys.Line(alice.PublicKey())); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateToken(ctx, "bot-1", TokenAgent, ""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cp, db := tamperCopy(t, testPath(s))
	id, bearer, err := newToken()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO agent_tokens(id, token_id, action, name, name_key, scope, digest, operator, at_ms) VALUES (7, ?, 'create', 'mallory', 'mallory', 'operator', ?, 'alice', 1)",
		id, sha256Hex([]byte(bearer))); err != nil {
		t.Fatal(err)
	}
	ft := factTableNamed("agent_tokens")
	vals, err := scanFact(db.QueryRow("SELECT "+ft.cols+" FROM agent_tokens WHERE id = 7"), ft.ncols())
	if err != nil {
		t.Fatal(err)
	}
	forgeEvent(t, db, "", evTokenCreated, "alice", map[string]any{"token_id": id}, ft.ref(vals))
	if _, err := db.Exec("UPDATE chain_head SET seq = (SELECT max(seq) FROM events), hash = (SELECT hash FROM events ORDER BY seq DESC LIMIT 1)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c, err := Open(ctx, cp, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tok, err := c.AuthenticateToken(ctx, bearer); !errors.Is(err, ErrTokenUnknown) || !strings.Contains(err.Error(), "unsigned") {
		t.Fatalf("a forged token on a signed ledger: %+v %v, want refused as unsigned", tok, err)
	}
	rep, err := c.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	requireNamed(t, rep, "agent_tokens", "id=7")
}

// TestIdentityMadeBeforeSigningStopsCounting: a token made and a name
// allowed on a ledger that was never signed stop counting once it is
// signed, as an unsigned rule does: list says why; made again with the
// operator's key they count.
func TestIdentityMadeBeforeSigningStopsCounting(t *testing.T) {
	path, clk, alice := testLedger(t), newClock(), newSigner(t)
	s := openAs(t, path, clk, nil, alice)
	_, secret, err := s.CreateToken(ctx, "bot-1", TokenAgent, "root")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AllowPrincipal(ctx, "bot-1", "backup", "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuthenticateToken(ctx, secret); err != nil {
		t.Fatalf("before signing: %v", err)
	}
	if _, err := s.AddOperator(ctx, "alice", opkeys.Line(alice.PublicKey())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuthenticateToken(ctx, secret); !errors.Is(err, ErrTokenUnknown) || !strings.Contains(err.Error(), "unsigned") {
		t.Fatalf("an unsigned token on a signed ledger: %v", err)
	}
	if ok, err := s.MayActAs(ctx, "bot-1", "backup"); ok || err != nil {
		t.Fatalf("an unsigned allowance on a signed ledger: %v %v", ok, err)
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 1 || list[0].InForce || !strings.Contains(list[0].Why, "unsigned") {
		t.Fatalf("list: %+v %v", list, err)
	}
	if ok, err := s.AllowPrincipal(ctx, "bot-1", "backup", ""); err != nil || !ok {
		t.Fatalf("allowed again, signed: %v %v", ok, err)
	}
	if ok, err := s.MayActAs(ctx, "bot-1", "backup"); !ok || err != nil {
		t.Fatalf("a signed allowance: %v %v", ok, err)
	}
	_, secret, err = s.CreateToken(ctx, "bot-1", TokenAgent, "")
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := s.AuthenticateToken(ctx, secret); err != nil || !tok.InForce || tok.Proof.Status != "signed" {
		t.Fatalf("made again, signed: %+v %v", tok, err)
	}
}

// BenchmarkAuthenticateToken is what the service pays to authenticate
// one request's bearer token, on a ledger never signed and on a signed
// one (the registry replayed and the creation's signature checked).
func BenchmarkAuthenticateToken(b *testing.B) {
	for _, signed := range []bool{false, true} {
		b.Run(map[bool]string{false: "unsigned", true: "signed"}[signed], func(b *testing.B) {
			alice := newSigner(b)
			s := openAs(b, testLedger(b), newClock(), nil, alice)
			if signed {
				if _, err := s.AddOperator(ctx, "alice", opkeys.Line(alice.PublicKey())); err != nil {
					b.Fatal(err)
				}
			}
			_, secret, err := s.CreateToken(ctx, "bot-1", TokenAgent, "")
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.AuthenticateToken(ctx, secret); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
