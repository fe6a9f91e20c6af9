package ledger

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// ceilingSchema is the bare shape of what a guard of a new key under an
// auto rule writes on PostgreSQL: the intent, the retained payload, the
// projection (written, then moved to executing), the policy evaluation,
// the permit and three events with their two indexes, at about the sizes
// tollgate's rows have, with no trigger, no check, no hash computed and
// no lock but the one the variant takes. guard_facts writes them in one
// call; with use_head it takes the next sequence numbers from a one-row
// chain head (locked until COMMIT, as every commit's place in one chain
// is), without it from a sequence (as events sealed into the chain later
// would be).
const ceilingSchema = `
CREATE TABLE f_intent (id bigserial PRIMARY KEY, action_key text UNIQUE, sha text, kind text, agent text, at bigint, row_sha text);
CREATE TABLE f_payload (action_key text PRIMARY KEY, body text);
CREATE TABLE f_index (id bigserial PRIMARY KEY, action_key text UNIQUE, stage text, deadline bigint, answer text);
CREATE TABLE f_eval (action_key text PRIMARY KEY, rule bigint, mode text, explain text, at bigint, row_sha text);
CREATE TABLE f_permit (id bigserial PRIMARY KEY, action_key text UNIQUE, permit_id text UNIQUE, agent text, issued bigint, lease bigint, row_sha text);
CREATE TABLE f_events (seq bigint PRIMARY KEY, action_key text, type text, actor text, detail text, at bigint,
	fact_table text, fact_id bigint, fact_sha text, hash text);
CREATE INDEX ON f_events (action_key);
CREATE INDEX ON f_events (fact_table, fact_id);
CREATE TABLE f_head (one int PRIMARY KEY, seq bigint, hash text);
INSERT INTO f_head VALUES (1, 0, '');
CREATE SEQUENCE f_seq;
CREATE FUNCTION guard_facts(k text, use_head boolean) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE s bigint;
BEGIN
	INSERT INTO f_intent (action_key, sha, kind, agent, at, row_sha) VALUES (k, md5(k) || md5(k), 'run', 'bot', 1, md5('a') || md5('b'));
	INSERT INTO f_payload VALUES (k, repeat('x', 300));
	INSERT INTO f_index (action_key, stage, deadline, answer) VALUES (k, 'recorded', 0, repeat('a', 100));
	INSERT INTO f_eval VALUES (k, 1, 'auto', repeat('e', 60), 1, md5('c') || md5('d'));
	INSERT INTO f_permit (action_key, permit_id, agent, issued, lease, row_sha) VALUES (k, md5(k || 'p'), 'bot', 1, 2, md5('e') || md5('f'));
	UPDATE f_index SET stage = 'executing', answer = repeat('b', 100) WHERE action_key = k;
	IF use_head THEN
		UPDATE f_head SET seq = seq + 3, hash = md5(k) WHERE one = 1 RETURNING seq INTO s;
	ELSE
		s := 1000000000000 + nextval('f_seq') * 3;
	END IF;
	INSERT INTO f_events SELECT s + g, k, 'permit_issued', 'bot', repeat('d', 120), 1, 'permits', g, md5('g') || md5('h'), md5(k || g)
		FROM generate_series(1, 3) g;
	RETURN s;
END $$;`

// BenchmarkPostgresCeiling measures what issue 25's speed goals would ask
// of any design that stores a guard's facts: n connections (1, 8, 32)
// each call guard_facts (one round trip, one transaction, nothing but the
// writes) for -pgagents.for, with the chain head and without it,
// interleaved with the baseline of BenchmarkPostgresAgents (one bare
// INSERT into the seed's table per call). The ratios are ceilings, not
// tollgate's figures: tollgate also evaluates the policy, hashes every
// fact and event, and runs the database's checks. It fails only when a
// write fails.
func BenchmarkPostgresCeiling(b *testing.B) {
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			url := pgtest.DB(b)
			seedTable(b, url)
			setup := openPgx(b, url)
			defer setup.Close()
			if _, err := setup.Exec(ceilingSchema); err != nil {
				b.Fatal(err)
			}
			conns := func(query string, args func(key string) []any) func(int) (func(string) error, func()) {
				return func(int) (func(string) error, func()) {
					db := openPgx(b, url)
					return func(key string) error {
						_, err := db.Exec(query, args(key)...)
						return err
					}, func() { db.Close() }
				}
			}
			digest := pay.Digest()
			for i := range b.N {
				raw := agentRun(b, n, *pgAgentsFor, conns("INSERT INTO intents VALUES ($1, $2, 'recorded') ON CONFLICT (action_key) DO NOTHING",
					func(k string) []any { return []any{k, digest} }), fmt.Sprintf("raw:%d", i))
				head := agentRun(b, n, *pgAgentsFor, conns("SELECT guard_facts($1, true)",
					func(k string) []any { return []any{k} }), fmt.Sprintf("head:%d", i))
				free := agentRun(b, n, *pgAgentsFor, conns("SELECT guard_facts($1, false)",
					func(k string) []any { return []any{k} }), fmt.Sprintf("free:%d", i))
				b.ReportMetric(raw.perSec, "baseline/s")
				b.ReportMetric(head.perSec/raw.perSec, "facts+head/baseline")
				b.ReportMetric(free.perSec/raw.perSec, "facts/baseline")
				b.ReportMetric(ms(head.p99), "facts+head-p99-ms")
				b.ReportMetric(ms(free.p99), "facts-p99-ms")
			}
		})
	}
}

// openPgx opens url through pgx with one connection, the shape of one
// agent or one baseline client; the caller closes it.
func openPgx(b *testing.B, url string) *sql.DB {
	b.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}
