package ledger

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPostgresRecordFunctionWritesAsTheClient: a record answered by the
// database's one call (schema 24, tollgate_record) writes what a record
// through the state machine's own key transaction writes. For a plain, a
// redacted and a contextual payload, a kind, target, body, context and
// agent whose text JSON escapes differently in Go and in PostgreSQL, one
// key is recorded through the call (one round trip, first and retried)
// and its twin through the client's path: the answers are the same; the
// payload row, the projection row and the event (type, actor, detail
// byte for byte, fact table) are the same but for the key and the time;
// a changed payload is the same conflict either way; a body holding
// U+0000 is left to the client's path and recorded there; and verify
// proves every row.
func TestPostgresRecordFunctionWritesAsTheClient(t *testing.T) {
	u, fn, client, wire := functionAndClient(t)
	raw := rawDB(t, u)
	if _, err := fn.Record(ctx, "rec:warm", Payload{"run", "t", "b"}, RecordOptions{Agent: "bot"}); err != nil { // prepares the call
		t.Fatal(err)
	}
	weird := "w<&>\u2028\u2029\b\f\x01\x7f\"\\é/"
	cases := []struct {
		p      Payload
		redact bool
		c      Context
		full   bool // left to the client's path
	}{
		{Payload{"run", "t", "b"}, false, nil, false},
		{Payload{"run", "t<" + weird, "body " + weird}, true, nil, false},
		{Payload{"run", "t", "b"}, false, Context{"amount": 5.0, "note": "<a&b>", "tags": []string{"x"}}, false},
		{Payload{weird, "t<" + weird, "body " + weird}, false, Context{"k": weird}, false},
		{Payload{"run", "t", "a\x00b"}, false, nil, true},
	}
	rows := func(key string) string {
		t.Helper()
		var s string
		err := raw.QueryRow(`SELECT concat_ws(E'\n',
			(SELECT (to_jsonb(p) - 'action_key' - 'recorded_ms')::text FROM tollgate_private.payloads p WHERE p.action_key = $1),
			(SELECT (to_jsonb(x) - 'id' - 'action_key' - 'logical_key' - 'updated_ms')::text FROM action_index x WHERE x.action_key = $1),
			(SELECT string_agg(concat_ws(' ', e.type, e.actor, e.detail, e.fact_table), E'\n' ORDER BY e.type) FROM
				(SELECT type, actor, detail, fact_table FROM events WHERE action_key = $1
				 UNION ALL SELECT type, actor, detail, fact_table FROM pending_events WHERE action_key = $1) e))`, key).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i, c := range cases {
		opt := RecordOptions{Agent: "bot <&>\"é", Redact: c.redact, Context: c.c}
		kf, kg := fmt.Sprintf("rf:%d", i), fmt.Sprintf("rg:%d", i)
		for round := range 2 {
			var in Intent
			n := wire.calls(t, "record "+kf, func() (err error) { in, err = fn.Record(ctx, kf, c.p, opt); return err })
			if n != 1 && !c.full {
				t.Errorf("case %d round %d: the database's record took %d round trips, not 1", i, round, n)
			}
			ig, err := client.Record(ctx, kg, c.p, opt)
			if err != nil {
				t.Fatal(err)
			}
			in.Key, ig.Key = Key{}, Key{}
			if !reflect.DeepEqual(in, ig) || in.Created != (round == 0) {
				t.Errorf("case %d round %d: answers differ:\n function %+v\n client   %+v", i, round, in, ig)
			}
		}
		if f, g := rows(kf), rows(kg); f != g || f == "" {
			t.Errorf("case %d: the rows differ:\n function %s\n client   %s", i, f, g)
		}
		changed := Payload{c.p.Kind, c.p.Target, "another body"}
		_, ef := fn.Record(ctx, kf, changed, opt)
		_, eg := client.Record(ctx, kg, changed, opt)
		var cf, cg *ConflictError
		if !errors.As(ef, &cf) || !errors.As(eg, &cg) || !reflect.DeepEqual(cf.Differs, cg.Differs) || cf.State != cg.State {
			t.Errorf("case %d: a changed payload: function %v, client %v", i, ef, eg)
		}
	}
	verifyOK(t, fn)
}

// TestPostgresRecordFunctionRefusesOthers: tollgate_record is granted to
// every agent's role, so an agent (bot2) calls it itself on what is not
// its own or is not a record: another agent's recorded key, with its
// payload (whose digest any role reads) or another; a key outside the
// grammar; a digest that is not the payload's; a payload whose fields
// are not the ones sent; a context that is not its digest; an agent name
// with a control character. The database leaves the first two to the
// client's path with nothing written and refuses the rest, and nothing
// stored changes; the functions the call is made of are not the agent's
// to call. The owner of the key then records it again as a replay.
func TestPostgresRecordFunctionRefusesOthers(t *testing.T) {
	r := attackRoles(t)
	bot1 := openAt(t, r.bot1)
	raw2, owner := rawDB(t, r.bot2), rawDB(t, r.owner)
	p := Payload{"run", "t", "b"}
	if in, err := bot1.Record(ctx, "run:theirs", p, RecordOptions{Agent: "bot1"}); err != nil || !in.Created {
		t.Fatalf("bot1's record: %+v %v", in, err)
	}
	call := func(key, sha, canonical, kind, body, agent, ctxSHA, ctxText string) (string, string) {
		var path string
		err := raw2.QueryRow("SELECT o_path FROM tollgate_record($1, $2, $3, $4, 't', $5, $6, $7, $8, 0)",
			key, sha, canonical, kind, sha256Hex([]byte(body)), agent, ctxSHA, ctxText).Scan(&path)
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return "", pe.Code
		}
		if err != nil {
			t.Fatalf("tollgate_record(%s): %v", key, err)
		}
		return path, ""
	}
	other := Payload{"run", "t", "c"}
	before := ledgerState(t, owner)
	for _, c := range []struct {
		name, key, sha, canonical, kind, body, agent, ctxSHA, ctxText string
		path                                                          string
	}{
		{"another agent's key, its payload", "run:theirs", p.Digest(), string(p.Canonical()), "run", "b", "bot2", "", "", "full"},
		{"another agent's key, another payload", "run:theirs", other.Digest(), string(other.Canonical()), "run", "c", "bot2", "", "", "full"},
		{"a key that is no key", "RUN;mine", p.Digest(), string(p.Canonical()), "run", "b", "bot2", "", "", ""},
		{"a digest not the payload's", "run:mine", other.Digest(), string(p.Canonical()), "run", "b", "bot2", "", "", ""},
		{"fields not the ones sent", "run:mine", p.Digest(), string(p.Canonical()), "ask", "b", "bot2", "", "", ""},
		{"a context not its digest", "run:mine", p.Digest(), string(p.Canonical()), "run", "b", "bot2", sha256Hex([]byte("x")), `{"a":1}`, ""},
		{"an agent name with a control character", "run:mine", p.Digest(), string(p.Canonical()), "run", "b", "bot2\x1b[2J", "", "", ""},
	} {
		path, code := call(c.key, c.sha, c.canonical, c.kind, c.body, c.agent, c.ctxSHA, c.ctxText)
		if path != c.path || (c.path == "") != (code != "") {
			t.Errorf("%s: path %q, code %q; want path %q", c.name, path, code, c.path)
		}
		if after := ledgerState(t, owner); after != before {
			t.Errorf("%s: the ledger changed: %s, was %s", c.name, after, before)
		}
	}
	for _, q := range []string{
		"SELECT * FROM tollgate_private.key_parse('tollgate_record', 'run:mine', 0)",
		"SELECT tollgate_private.key_finish('run:mine', 't', 'bot2', 0, ARRAY['recorded'], ARRAY['{}'], ARRAY['payloads'], ARRAY['x'])",
	} {
		var pe *pgconn.PgError
		if _, err := raw2.DB.Exec(q); !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("an agent's role calls %.50s...: %v, want permission denied", q, err)
		}
	}
	if in, err := bot1.Record(ctx, "run:theirs", p, RecordOptions{Agent: "bot1"}); err != nil || !in.Replayed {
		t.Errorf("bot1's record again: %+v %v", in, err)
	}
	verifyOK(t, r.admin)
}
