package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
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
