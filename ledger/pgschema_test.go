package ledger

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/internal/snapshot"
	"github.com/tollgate-dev/tollgate/ledger/engine"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
)

var updatePGBaseline = flag.Bool("pg-baseline-update", false, "write ledger/postgres/testdata/baseline.sql.gz (pg_dump of a new ledger; only while the schema is at the baseline)")

// pgBaselineFile is the frozen pg_dump of a new PostgreSQL ledger at the
// baseline, which forward migrations start from: generated, never edited.
const pgBaselineFile = "postgres/testdata/baseline.sql.gz"

// pgDevLastFile is pg_dump of a ledger at PostgreSQL's last development
// schema (42), made by that build (testdata/dev20_ledger.sql.gz copied).
const pgDevLastFile = "testdata/dev42_ledger.sql.gz"

// loadDump runs a pg_dump script in the database u names, as its owner:
// psql's own commands (\restrict) left out.
func loadDump(t *testing.T, u, file string) {
	t.Helper()
	b, err := snapshot.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(b, "\n") {
		if !strings.HasPrefix(l, `\`) {
			keep = append(keep, l)
		}
	}
	db := rawDB(t, u)
	defer db.Close()
	// A dump sets search_path and other settings for its session; RESET
	// ALL in the same call leaves none behind on a server connection a
	// pooler (pgbouncer, transaction mode) gives the next client.
	if _, err := db.DB.Exec(strings.Join(keep, "\n") + "\nRESET ALL;"); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// pgCatalogOf describes everything about the schema of the database u
// names that a ledger's behaviour depends on, from pg_catalog: each
// table's and view's columns (type, collation, nullability, default,
// identity), constraints, indexes, triggers, row security, views'
// queries, functions (arguments, result, body, language, volatility,
// security, settings) and every grant, in public and tollgate_private.
// The owner's role, which differs from one database to the next, reads
// as OWNER.
func pgCatalogOf(t *testing.T, u string) string {
	t.Helper()
	db := rawDB(t, u)
	defer db.Close()
	var owner string
	if err := db.DB.QueryRow("SELECT current_user").Scan(&owner); err != nil {
		t.Fatal(err)
	}
	const ns = "n.nspname IN ('public', 'tollgate_private')"
	queries := []string{
		`SELECT n.nspname || ' ' || coalesce(array_to_string(n.nspacl, ','), '') FROM pg_namespace n WHERE ` + ns + ` ORDER BY 1`,
		`SELECT c.relkind::text || ' ' || n.nspname || '.' || c.relname || ' rls=' || c.relrowsecurity || ' acl=' || coalesce(array_to_string(c.relacl, ','), '')
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ` + ns + ` AND c.relkind IN ('r', 'v', 'S', 'p') ORDER BY 1`,
		`SELECT n.nspname || '.' || c.relname || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' coll=' || coalesce(co.collname, '') ||
			' notnull=' || a.attnotnull || ' identity=' || a.attidentity::text || ' generated=' || a.attgenerated::text || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') ||
			' acl=' || coalesce(array_to_string(a.attacl, ','), '')
			FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
			LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 0 AND co.collname <> 'default'
			WHERE ` + ns + ` AND c.relkind IN ('r', 'v', 'p') AND a.attnum > 0 AND NOT a.attisdropped
			ORDER BY n.nspname, c.relname, (SELECT count(*) FROM pg_attribute b WHERE b.attrelid = a.attrelid AND b.attnum > 0 AND NOT b.attisdropped AND b.attnum < a.attnum)`,
		`SELECT n.nspname || '.' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
			FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ` + ns + ` ORDER BY 1`,
		`SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ` + ns + ` ORDER BY 1`,
		`SELECT pg_get_triggerdef(g.oid) || ' enabled=' || g.tgenabled::text FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE ` + ns + ` AND NOT g.tgisinternal ORDER BY 1`,
		`SELECT n.nspname || '.' || c.relname || ' AS ' || pg_get_viewdef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ` + ns + ` AND c.relkind = 'v' ORDER BY 1`,
		`SELECT p.polname || ' on ' || p.polrelid::regclass || ' ' || p.polcmd::text || ' ' || p.polpermissive || ' ' || array_to_string(p.polroles::regrole[], ',') ||
			' using ' || coalesce(pg_get_expr(p.polqual, p.polrelid), '') || ' check ' || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '') FROM pg_policy p ORDER BY 1`,
		`SELECT n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') ' || pg_get_function_result(p.oid) || ' ' || l.lanname ||
			' ' || p.provolatile::text || ' secdef=' || p.prosecdef || ' strict=' || p.proisstrict || ' config=' || coalesce(array_to_string(p.proconfig, ','), '') ||
			' acl=' || coalesce(array_to_string(p.proacl, ','), '') || E'\n' || p.prosrc
			FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang WHERE ` + ns + ` ORDER BY 1`,
	}
	var b strings.Builder
	for _, q := range queries {
		rows, err := db.DB.Query(q)
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			b.WriteString(s + "\n")
		}
		rows.Close()
	}
	return regexp.MustCompile(`\b`+regexp.QuoteMeta(owner)+`\b`).ReplaceAllString(b.String(), "OWNER")
}

// requireSameCatalog fails, naming the first line that differs, unless
// got and want describe the same schema.
func requireSameCatalog(t *testing.T, got, want string) {
	t.Helper()
	if d := catalogDifference(got, want); d != "" {
		t.Fatal(d)
	}
}

// catalogDifference names the first line where got and want differ.
func catalogDifference(got, want string) string {
	if got == want {
		return ""
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d differs:\nmigrated: %.400s\nnew:      %.400s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("migrated %d lines, new %d", len(g), len(w))
}

// newPGLedger is a new ledger made from the definition files.
func newPGLedger(t *testing.T) string {
	t.Helper()
	u := pgtest.DB(t)
	s, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return u
}

// TestPostgresBaselineSnapshot: postgres/testdata/baseline.sql.gz is
// pg_dump of a new ledger, for as long as the schema is at the
// baseline: its definitions are what a new ledger's are (the dump is
// loaded and compared), and -pg-baseline-update writes it, never once a
// migration is on top of it.
func TestPostgresBaselineSnapshot(t *testing.T) {
	u := newPGLedger(t)
	if *updatePGBaseline {
		if postgres.SchemaVersion() != engine.Baseline {
			t.Fatalf("the schema is at %d, past the baseline: %s is frozen", postgres.SchemaVersion(), pgBaselineFile)
		}
		out, err := exec.Command("pg_dump", "--inserts", "--no-owner", u).Output()
		if err != nil {
			t.Fatal(err)
		}
		head := "-- A new PostgreSQL ledger at the baseline schema: pg_dump --inserts --no-owner,\n-- generated by TestPostgresBaselineSnapshot -pg-baseline-update, frozen once a\n-- migration is on top of it.\n"
		if err := snapshot.Write(pgBaselineFile, head+string(out)); err != nil {
			t.Fatal(err)
		}
		return
	}
	if postgres.SchemaVersion() != engine.Baseline {
		t.Skip("the schema is past the baseline: the snapshot is frozen (TestPostgresForwardMigrationsMakeTheSchema uses it)")
	}
	loaded := pgtest.DB(t)
	loadDump(t, loaded, pgBaselineFile)
	requireSameCatalog(t, pgCatalogOf(t, loaded), pgCatalogOf(t, u))
}

// TestPostgresForwardMigrationsMakeTheSchema: a ledger at the baseline
// (the frozen snapshot) migrated forward by 'tollgate migrate', and a
// ledger at the last development schema carried to the baseline and
// forward, each have exactly the schema a new ledger has: tables,
// columns, constraints, indexes, triggers, views, function bodies and
// grants. A definition changed without a migration is caught.
func TestPostgresForwardMigrationsMakeTheSchema(t *testing.T) {
	fresh := pgCatalogOf(t, newPGLedger(t))
	for _, file := range []string{pgBaselineFile, pgDevLastFile} {
		t.Run(file, func(t *testing.T) {
			u := pgtest.DB(t)
			loadDump(t, u, file)
			s, err := Open(ctx, u, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			requireSameCatalog(t, pgCatalogOf(t, u), fresh)
		})
	}
	for _, change := range []string{
		"CREATE OR REPLACE FUNCTION tollgate_name_ok(p text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT true $$",
		"DROP TRIGGER events_append_only ON events",
		"ALTER TABLE reports ALTER COLUMN result SET DEFAULT 'x'",
		"GRANT INSERT ON decisions TO tollgate_agent",
	} {
		t.Run("caught "+strings.Join(strings.Fields(change)[:3], " "), func(t *testing.T) {
			u := newPGLedger(t)
			if _, err := rawDB(t, u).DB.Exec(change); err != nil {
				t.Fatal(err)
			}
			if catalogDifference(pgCatalogOf(t, u), fresh) == "" {
				t.Fatalf("%q went unnoticed", change)
			}
		})
	}
}

// TestPostgresDevLastCarriedToBaseline: a ledger at PostgreSQL's last
// development schema, made by that build, is carried to the baseline by
// 'tollgate migrate' keeping its head and every row: verify proves the
// head it had and export writes the very bytes that build's export
// wrote; a read-only open first says to migrate.
func TestPostgresDevLastCarriedToBaseline(t *testing.T) {
	u := pgtest.DB(t)
	loadDump(t, u, pgDevLastFile)
	if _, err := Open(ctx, u, Options{ReadOnly: true}); !errors.Is(err, ErrNeedsMigration) {
		t.Fatalf("a read-only open of the development ledger: %v, want ErrNeedsMigration", err)
	}
	rel := ledgerRelations(t, u)
	before := tableSums(t, u, rel)
	s, err := Open(ctx, u, Options{Now: (&clock{t: devLastExportedAt}).Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := rawDB(t, u).QueryRow("SELECT max(version) FROM tollgate_schema").Scan(&v); err != nil || v != postgres.SchemaVersion() {
		t.Fatalf("schema %d (%v) after the step, want %d", v, err, postgres.SchemaVersion())
	}
	after := tableSums(t, u, rel)
	for name, sum := range before {
		if name != "public.tollgate_schema" && after[name] != sum {
			t.Errorf("the step changed the rows of %s", name)
		}
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || !isDevLastHead(rep.Head()) {
		t.Fatalf("verify after the step: %+v %v %v", rep.Head(), err, rep.Problems)
	}
	want, err := os.ReadFile("testdata/dev20_ledger.export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := s.Export(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("export after the step differs from the development build's:\n%.600s", got.String())
	}
}

// TestPostgresOlderDevelopmentSchemaRefused: a database at a development
// schema other than the last is refused by name, with what to do, and
// left as it was.
func TestPostgresOlderDevelopmentSchemaRefused(t *testing.T) {
	u := pgtest.DB(t)
	db := rawDB(t, u)
	if _, err := db.DB.Exec("CREATE TABLE tollgate_schema (version BIGINT PRIMARY KEY); INSERT INTO tollgate_schema VALUES (37)"); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		_, err := Open(ctx, u, Options{ReadOnly: ro})
		if !errors.Is(err, ErrDevelopmentSchema) || !strings.Contains(err.Error(), "schema version 37") || !strings.Contains(err.Error(), fmt.Sprintf("build of schema %d", postgres.DevLast)) {
			t.Fatalf("open (read-only %v): %v", ro, err)
		}
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the refused database now has %d tables (%v)", n, err)
	}
}
