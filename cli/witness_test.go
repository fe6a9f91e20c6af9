package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/ledger"
)

// TestConsoleWitnessesItsHead: a console session records the head it
// opened on before the console runs, and never creates a ledger.
func TestConsoleWitnessesItsHead(t *testing.T) {
	db := newDB(t)
	witness := filepath.Join(t.TempDir(), "w")
	opened := ""
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
		Getenv:  func(string) string { return "" },
		Console: func(_ context.Context, o cli.ConsoleOptions) error { opened = o.DB; return nil }}
	if code := cli.Main(context.Background(), []string{"--db", db, "console", "--witness", witness, "--operator", "alice"}, env); code != cli.ExitNotFound {
		t.Fatalf("console on a missing ledger: exit %d, want %d", code, cli.ExitNotFound)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) || opened != "" {
		t.Fatalf("the console created a ledger (%v) or ran (%q)", err, opened)
	}
	want(t, run(t, db, "", "record", "k:1", "--kind", "a", "--target", "t", "--body", "b"), 0)
	if code := cli.Main(context.Background(), []string{"--db", db, "console", "--witness", witness, "--operator", "alice"}, env); code != 0 || opened != db {
		t.Fatalf("console: exit %d, opened %q", code, opened)
	}
	heads, bad, err := ledger.ReadWitness(witness)
	if err != nil || len(bad) != 0 || len(heads) != 1 || heads[0].Seq != 2 {
		t.Fatalf("witness after one console session: %+v %v %v", heads, bad, err)
	}
}
