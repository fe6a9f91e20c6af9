package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/ledger"
)

// fakeLedger fails every call it overrides with err; the others are not
// expected to be called (the embedded nil interface panics if they are).
type fakeLedger struct {
	cli.Ledger
	err    error
	closed bool
}

func (f *fakeLedger) Path() string { return "fake" }
func (f *fakeLedger) Close() error { f.closed = true; return nil }
func (f *fakeLedger) Status(context.Context, string) (ledger.Detail, error) {
	return ledger.Detail{}, f.err
}
func (f *fakeLedger) Guard(context.Context, string, ledger.Payload, ledger.GuardOptions) (ledger.Answer, error) {
	return ledger.Answer{}, f.err
}

// TestAnyErrorFromTheLedger hands the CLI, through Env.Open, a ledger
// whose calls fail with errors of every shape (a bare one no code maps, a
// context deadline, a wrapped sentinel, a body-bearing text never echoed
// by tollgate itself): each becomes one JSON object with an exit code, and
// the ledger is closed.
func TestAnyErrorFromTheLedger(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{errors.New("driver: something no code maps"), cli.ExitError},
		{context.DeadlineExceeded, cli.ExitError},
		{fmt.Errorf("%w: held by another writer", ledger.ErrBusy), cli.ExitTempFail},
		{fmt.Errorf("%w (connection refused)", ledger.ErrUnavailable), cli.ExitTempFail},
		{fmt.Errorf("%w (connection reset)", ledger.ErrCommitUnknown), cli.ExitCommitUnknown},
		{fmt.Errorf("wrapped: %w", ledger.ErrNotFound), cli.ExitNotFound},
		{fmt.Errorf("wrapped: %w", ledger.ErrNotPermitted), cli.ExitNotPermitted},
		{fmt.Errorf("wrapped: %w", ledger.ErrInvalidInput), cli.ExitInvalid},
	} {
		for _, args := range [][]string{{"status", "k:1", "--json"}, {"guard", "k:1", "--kind", "a", "--target", "t", "--body", "b", "--json"}} {
			fake := &fakeLedger{err: tc.err}
			var out, errOut bytes.Buffer
			env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" },
				Open: func(context.Context, string, ledger.Options) (cli.Ledger, error) { return fake, nil }}
			code := cli.Main(context.Background(), append([]string{"--db", "fake"}, args...), env)
			var obj map[string]any
			if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
				t.Fatalf("%v with %v: stdout is not one JSON object: %q", args, tc.err, out.String())
			}
			if code != tc.code || obj["exit_code"] != float64(tc.code) || !strings.Contains(fmt.Sprint(obj["error"]), tc.err.Error()) {
				t.Fatalf("%v with %v: exit %d, %v; want %d", args, tc.err, code, obj, tc.code)
			}
			if !fake.closed {
				t.Fatalf("%v with %v: the ledger was left open", args, tc.err)
			}
		}
	}
}
