package doctor_test

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/doctor"
	"github.com/tollgate-dev/tollgate/internal/hostguard"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

func TestMain(m *testing.M) {
	os.Exit(hostguard.Main(func(p hostguard.Places) {
		ledger.SystemWitnessPath, opkeys.SystemAnchorPath = p.Witness, p.Anchor
	}, func() int { return pgtest.Main(m) }))
}

// catalogWrites counts, as the superuser reads the ACLs themselves (not
// through has_table_privilege, as doctor does), the direct write grants
// role holds on the ledger's tables: the expectation follows the schema,
// so when the grants are revoked this test expects doctor to pass.
func catalogWrites(t *testing.T, dbURL, role string) []string {
	t.Helper()
	// pg_class is the database's own: read it in the ledger's database.
	u, err := url.Parse(pgtest.Admin(t))
	if err != nil {
		t.Fatal(err)
	}
	ledgerDB, _ := url.Parse(dbURL)
	u.Path = ledgerDB.Path
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`
		SELECT a.privilege_type || ' on ' || c.relname
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a
		WHERE n.nspname = 'public' AND a.grantee = $1::text::regrole
		  AND a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE')
		ORDER BY 1`, role)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDoctorPostgresGrants runs doctor's catalog checks against a
// migrated ledger as an agent's login role would connect: the role is
// neither owner nor superuser, a local connection in clear is no
// exposure, and pg.agent-writes fails exactly when the catalog shows a
// direct write grant to tollgate_agent (the schema as it stands grants
// INSERT on fact tables, beside its SECURITY DEFINER functions), and passes
// once the owner revokes them. Connected as the schema's owner, doctor
// fails pg.role.
func TestDoctorPostgresGrants(t *testing.T) {
	ctx := context.Background()
	owner := pgtest.DB(t)
	s, err := ledger.Open(ctx, owner, ledger.Options{}) // migrates: the schema and the roles
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	agent := pgtest.Role(t, owner, "bot", "tollgate_agent")

	r := report(doctor.CheckPostgres(ctx, agent))
	for id, want := range map[string]bool{"pg.connect": true, "pg.role": true, "pg.tls": true} {
		if f, ok := r.Find(id); ok && f.OK != want {
			t.Errorf("%s: %+v", id, f)
		}
	}
	for _, c := range []struct{ id, role string }{{"pg.agent-writes", doctor.AgentRole}, {"pg.operator-writes", doctor.OperatorRole}} {
		grants := catalogWrites(t, owner, c.role)
		f, ok := r.Find(c.id)
		if !ok {
			t.Fatalf("no %s finding: %+v", c.id, r.Findings)
		}
		if f.OK != (len(grants) == 0) {
			t.Errorf("%s: ok=%v, but the catalog grants %s %v", c.id, f.OK, c.role, grants)
		}
		for _, g := range grants {
			if !strings.Contains(f.Message, g) {
				t.Errorf("%s does not name %q: %s", c.id, g, f.Message)
			}
		}
	}
	if f, _ := r.Find("pg.agent-writes"); !f.OK && (f.Severity != doctor.Fail || r.Enforces) {
		t.Errorf("the agent role's direct writes must fail the deployment: %+v", f)
	}
	if f, _ := r.Find("pg.operator-writes"); !f.OK && f.Severity != doctor.Warn {
		t.Errorf("the operator role's direct writes warn (the agent is not in it): %+v", f)
	}

	// The whole check on a PostgreSQL ledger: the host's files weigh less
	// (the agent's role, not file modes, keeps it from the ledger), so a
	// missing anchor and witness and an unsigned ledger only warn, and
	// the agent role's direct writes alone decide the exit.
	full := doctor.Check(ctx, doctor.Inputs{Agent: nobody, Ledger: agent, Anchor: "/nonexistent/operators", Witness: "/nonexistent/witness",
		Facts: func(ctx context.Context) (doctor.LedgerFacts, error) {
			s, err := ledger.Open(ctx, agent, ledger.Options{ReadOnly: true})
			if err != nil {
				return doctor.LedgerFacts{}, err
			}
			defer s.Close()
			set, err := s.Operators(ctx)
			return doctor.LedgerFacts{Signed: set.Signed}, err
		}})
	for id, want := range map[string]doctor.Severity{"anchor.system": doctor.Warn, "witness.system": doctor.Warn, "ledger.signed": doctor.Warn} {
		if f, _ := full.Find(id); f.Severity != want {
			t.Errorf("on PostgreSQL, %s: %+v, want %s", id, f, want)
		}
	}
	if f, _ := full.Find("pg.agent-writes"); full.Enforces != f.OK {
		t.Errorf("on PostgreSQL the agent role's grants decide: enforces=%v, %+v", full.Enforces, f)
	}

	// The fix doctor names, run as the owner, turns the finding: the
	// check reads the grants as they are, not as this schema made them.
	db, err := sql.Open("pgx", owner)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public FROM tollgate_agent"); err != nil {
		t.Fatal(err)
	}
	r = report(doctor.CheckPostgres(ctx, agent))
	if f, _ := r.Find("pg.agent-writes"); !f.OK || len(catalogWrites(t, owner, doctor.AgentRole)) != 0 {
		t.Errorf("after the revoke: %+v", f)
	}

	r = report(doctor.CheckPostgres(ctx, owner))
	if f, ok := r.Find("pg.role"); !ok || f.OK || !strings.Contains(f.Message, "owner") {
		t.Errorf("connected as the schema's owner: %+v", f)
	}
	if t.Failed() {
		for _, f := range r.Findings {
			t.Logf("%-5s %-18s %s", f.Severity, f.ID, f.Message)
		}
	}
}

// report is a Report of these findings alone.
func report(fs []doctor.Finding) doctor.Report {
	r := doctor.Report{Findings: fs, Enforces: true}
	for _, f := range fs {
		r.Enforces = r.Enforces && f.Severity != doctor.Fail
	}
	return r
}
