package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// define makes a command whose flags are the fields of F: bind declares
// them on the command's flag set, and run receives them typed, so a
// misspelt flag is a compile error, not a nil pointer at run time.
func define[F any](name, args, summary string, bind func(*flag.FlagSet, *F), run func(context.Context, *cmdCtx, *F) (int, error)) command {
	return command{name: name, args: args, summary: summary, bind: func(fs *flag.FlagSet) runFunc {
		f := new(F)
		if bind != nil {
			bind(fs, f)
		}
		return func(ctx context.Context, c *cmdCtx) (int, error) { return run(ctx, c, f) }
	}}
}

// noFlags is the flag struct of a command that has none of its own.
type noFlags struct{}

// access is how a command opens the ledger.
type access int

const (
	// reading never creates, migrates or changes the file.
	reading access = iota
	// writing is an agent's write: it creates or migrates the ledger and
	// carries the operators file, which guard checks grants against.
	writing
)

// answer is what a command that succeeded prints: the value --json
// writes as one object (or array), the text a terminal reads, and the
// exit code (guard's and report's depend on the answer).
type answer struct {
	code int
	json any
	text func(w io.Writer)
}

// ok is an answer with exit code 0.
func ok(json any, text func(w io.Writer)) answer { return answer{code: ExitOK, json: json, text: text} }

// withLedger is the one runner: it opens the ledger as acc, calls fn,
// closes the ledger and prints fn's answer as JSON or text. A refusal is
// returned to Main, which prints it (refusal) and exits with its code.
func withLedger(ctx context.Context, c *cmdCtx, acc access, fn func(Ledger) (answer, error)) (int, error) {
	s, err := c.open(ctx, acc == reading)
	if err != nil {
		return 0, err
	}
	return runWith(c, s, fn)
}

// runWith calls fn on an open store, closes it and prints the answer.
// Closing fails when the server cut a pooled connection after the answer
// (a terminated session, TLS's close alert on a broken pipe): what fn
// stored is stored, so its answer and exit code stand, and the failure
// to close is a warning on stderr. Exit 1 there would tell an agent that
// its committed report failed (TestPostgresFaultsSurvived).
func runWith(c *cmdCtx, s Ledger, fn func(Ledger) (answer, error)) (int, error) {
	a, err := fn(s)
	cerr := s.Close()
	if err != nil {
		return 0, err
	}
	if cerr != nil && c.env.Stderr != nil {
		fmt.Fprintf(c.env.Stderr, "tollgate: warning: closing the ledger after the answer: %s\n", errorText(cerr))
	}
	c.print(a)
	return a.code, nil
}

// print writes an answer as JSON or text.
func (c *cmdCtx) print(a answer) {
	switch {
	case c.json && a.json != nil:
		writeJSON(c.stdout, a.json)
	case !c.json && a.text != nil:
		a.text(c.stdout)
	}
}
