package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPostgresReportOneCallIsTheClientPath: the one-call report (schema
// 19, tollgate_report) files what the client's key transaction files. For
// each outcome, reference (plain, empty, one JSON escapes and HTML
// escapes reach) and result, one key is reported through the database's
// call and its twin through the client's path (a store told its engine
// has no clock takes it): the answers are the same, the event's detail is
// byte for byte the client's json.Marshal, a second identical report is a
// replay either way, and verify proves the ledger (every fact's hash and
// the chain).
func TestPostgresReportOneCallIsTheClientPath(t *testing.T) {
	r := newPGRoles(t)
	server, client := openAt(t, r.bot1), openAt(t, r.bot1)
	client.noEngineClock.Store(true)
	sr, ok := server.serverReport()
	if !ok {
		t.Fatal("the agent's store does not report through the database's call")
	}
	raw := rawDB(t, r.owner)
	refs := []string{"", "prov-123", "<a href=\"x\">&amp;</a> \\ é \u2028\u2029 \t"}
	n := 0
	for _, outcome := range []Outcome{Succeeded, Failed, Unknown} {
		for _, ref := range refs {
			for _, result := range []string{"", `{"ok":true,"n":1}`} {
				n++
				opt := ReportOptions{Ref: ref, Latency: time.Duration(n) * 7 * time.Millisecond, Result: result}
				twin := [2]string{fmt.Sprintf("run:one-call-%d", n), fmt.Sprintf("run:client-%d", n)}
				var got [2]ReportAnswer
				var detail [2]string
				for i, s := range []*Store{server, client} {
					a, err := s.Guard(ctx, twin[i], Payload{"run", "t", twin[i]}, GuardOptions{Agent: "bot1"})
					if err != nil || a.Verdict != Permitted {
						t.Fatalf("%s: guard %+v %v", twin[i], a.Verdict, err)
					}
					if i == 0 {
						var done bool
						got[i], done, err = server.reportOnServer(ctx, sr, twin[i], a.PermitID, outcome, opt)
						if err == nil && !done {
							t.Fatalf("%s: the database left a permit holder's first report to the client", twin[i])
						}
					} else {
						got[i], err = client.Report(ctx, twin[i], a.PermitID, outcome, opt)
					}
					if err != nil {
						t.Fatalf("%s: report: %v", twin[i], err)
					}
					err = raw.QueryRow(`SELECT detail FROM events WHERE action_key = $1 AND type = 'report_accepted'
						UNION ALL SELECT detail FROM pending_events WHERE action_key = $1 AND type = 'report_accepted'`, twin[i]).Scan(&detail[i])
					if err != nil {
						t.Fatalf("%s: the report's event: %v", twin[i], err)
					}
					again, err := s.Report(ctx, twin[i], a.PermitID, outcome, opt)
					if err != nil || !again.Replayed || again.State != got[i].State {
						t.Errorf("%s: the same report again: %+v %v", twin[i], again, err)
					}
					got[i].Key = ""
				}
				if got[0] != got[1] {
					t.Errorf("%s %q %q: the one call answered %+v, the client's path %+v", outcome, ref, result, got[0], got[1])
				}
				want, _ := json.Marshal(map[string]any{"outcome": outcome, "ref": ref, "latency_ms": opt.Latency.Milliseconds()})
				if detail[0] != string(want) || detail[1] != string(want) {
					t.Errorf("%s %q: the event's detail: one call %s, client %s, want %s", outcome, ref, detail[0], detail[1], want)
				}
			}
		}
	}
	verifyOK(t, r.admin)
}

// TestPostgresReportFunctionRefusesOthers: tollgate_report is granted to
// every agent's role, so an agent tries it on what is not its own: another
// agent's permit (its id is visible to every role), a permit id that is
// not the key's, and arguments no report has. The database refuses the
// first by the reports' rule (the permit's role), leaves the second to the
// client's path with nothing written, refuses the rest as arguments, and
// nothing stored changes; the owner's agent then reports under its own
// permit in one call.
func TestPostgresReportFunctionRefusesOthers(t *testing.T) {
	r := attackRoles(t)
	bot1 := openAt(t, r.bot1)
	raw2, owner := rawDB(t, r.bot2), rawDB(t, r.owner)
	a, err := bot1.Guard(ctx, "run:theirs", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"})
	if err != nil || a.Verdict != Permitted {
		t.Fatalf("bot1's guard: %+v %v", a.Verdict, err)
	}
	var seen string
	if err := raw2.QueryRow("SELECT permit_id FROM permits WHERE action_key = 'run:theirs'").Scan(&seen); err != nil || seen != a.PermitID {
		t.Fatalf("an agent's role reads another's permit id: %q %v", seen, err)
	}
	call := func(key, permit, outcome string, latency int64) (string, string) {
		var path string
		err := raw2.QueryRow("SELECT o_path FROM tollgate_report($1, $2, $3, 'ref', $4, '', 0)", key, permit, outcome, latency).Scan(&path)
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return "", pe.Code
		}
		if err != nil {
			t.Fatalf("tollgate_report(%s): %v", key, err)
		}
		return path, ""
	}
	before := ledgerState(t, owner)
	for _, c := range []struct {
		name, key, permit, outcome string
		latency                    int64
		path, code                 string
	}{
		{"another role's permit", "run:theirs", a.PermitID, "succeeded", 1, "", "TG002"},
		{"a permit id not the key's", "run:theirs", newUUID(), "failed", 1, "full", ""},
		{"an outcome no report has", "run:theirs", a.PermitID, "done", 1, "", "22023"},
		{"a negative latency", "run:theirs", a.PermitID, "succeeded", -1, "", "22023"},
		{"a key that is no key", "RUN;theirs", a.PermitID, "succeeded", 1, "", "22023"},
	} {
		if path, code := call(c.key, c.permit, c.outcome, c.latency); path != c.path || code != c.code {
			t.Errorf("%s: path %q, code %q; want path %q, code %q", c.name, path, code, c.path, c.code)
		}
		if after := ledgerState(t, owner); after != before {
			t.Errorf("%s: the ledger changed: %s, was %s", c.name, after, before)
		}
	}
	got, err := bot1.Report(ctx, "run:theirs", a.PermitID, Succeeded, ReportOptions{Ref: "prov-1"})
	if err != nil || got.State != StateSucceeded || got.Replayed {
		t.Errorf("bot1's own report: %+v %v", got, err)
	}
	verifyOK(t, r.admin)
}

// TestPostgresReportMarkStaysTheReports: from schema 22 tollgate_report
// marks its transaction while it writes, as the guard does (schema 21),
// and the checks of its own rows skip it. An agent's role reports under
// its own permit and then, in the same transaction or the same
// multi-statement query, appends a forged "approved" event: the mark is
// gone by then, the event's check refuses it, and nothing is kept.
func TestPostgresReportMarkStaysTheReports(t *testing.T) {
	r := attackRoles(t)
	bot1, raw, owner := openAt(t, r.bot1), rawDB(t, r.bot1), rawDB(t, r.owner)
	conn, err := raw.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	forged := `SELECT * FROM tollgate_append_events(ARRAY['%[1]s'], ARRAY['approved'], ARRAY['alice'], ARRAY['{"reason":"ok"}'],
		ARRAY[(extract(epoch FROM now()) * 1000)::bigint], ARRAY['decisions'], ARRAY['%[1]s'], ARRAY[repeat('a', 64)])`
	for i, inOneQuery := range []bool{false, true} {
		key := fmt.Sprintf("run:mark-%d", i)
		a, err := bot1.Guard(ctx, key, Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"})
		if err != nil || a.Verdict != Permitted {
			t.Fatalf("%s: %+v %v", key, a.Verdict, err)
		}
		before := ledgerState(t, owner)
		report := fmt.Sprintf("SELECT o_path FROM tollgate_report('%s', '%s', 'succeeded', '', 1, '', 0)", key, a.PermitID)
		if inOneQuery {
			_, err = conn.ExecContext(ctx, report+"; "+fmt.Sprintf(forged, key))
		} else {
			if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			var path string
			if err := conn.QueryRowContext(ctx, report).Scan(&path); err != nil || path != "new" {
				t.Fatalf("%s: bot1's own report in its transaction: %q %v", key, path, err)
			}
			_, err = conn.ExecContext(ctx, fmt.Sprintf(forged, key))
			conn.ExecContext(ctx, "ROLLBACK")
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Errorf("%s (one query %v): the forged event after a report: %v, want the database's refusal", key, inOneQuery, err)
		}
		if after := ledgerState(t, owner); after != before {
			t.Errorf("%s (one query %v): the ledger changed: %s, was %s", key, inOneQuery, after, before)
		}
	}
	verifyOK(t, r.admin)
}
