// Package testdata loads the fixtures under the repository's testdata/
// folder for the tests of several packages (the seed fixture's SQL, the
// corpus of hostile strings, the CLI's golden answers). It exists so that
// each package reads them one way, whatever its own folder is.
package testdata

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Dir is the repository's testdata folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// Path is a file under testdata/.
func Path(name ...string) string { return filepath.Join(append([]string{Dir()}, name...)...) }

// Hostile is one untrusted string and how tollgate must show it.
type Hostile struct {
	Name    string `json:"name"`
	Text    string `json:"text"`
	Escaped string `json:"escaped"`
}

// HostileStrings reads testdata/hostile.json.
func HostileStrings(t testing.TB) []Hostile {
	t.Helper()
	b, err := os.ReadFile(Path("hostile.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Hostile
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("hostile.json: %v", err)
	}
	if len(out) == 0 {
		t.Fatal("hostile.json holds no strings")
	}
	return out
}

// SeedFixture returns the seed fixture's two statements: the table it
// creates and the insert it records an intent with (parameters: action
// key, payload SHA-256).
func SeedFixture() (create, insert string) {
	b, err := os.ReadFile(Path("seed_fixture.sql"))
	if err != nil {
		panic(err) // the fixture is part of the repository
	}
	var stmts []string
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			stmts = append(stmts, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if len(stmts) != 2 {
		panic("seed_fixture.sql must hold exactly two statements")
	}
	return stmts[0], stmts[1]
}

// WriteSeedLedger writes a ledger at path as the seed fixture does: its
// table, and one intent per key bound to digest.
func WriteSeedLedger(t testing.TB, db *sql.DB, digest string, keys ...string) {
	t.Helper()
	create, insert := SeedFixture()
	if _, err := db.Exec(create); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if _, err := db.Exec(insert, k, digest); err != nil {
			t.Fatal(err)
		}
	}
}
