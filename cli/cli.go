// Package cli is tollgate's command line: it parses arguments, reads
// payloads, calls the ledger and turns answers into JSON, text and the exit
// codes scripts rely on. It is separate from main so that tests can run
// commands in-process as well as through the built binary.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/exitcode"
	"github.com/tollgate-dev/tollgate/internal/jsonout"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
	"github.com/tollgate-dev/tollgate/safetext"
)

// Exit codes (SPEC 5). Scripts depend on these numbers; package exitcode
// holds them, shared with the HTTP service.
const (
	ExitOK        = exitcode.OK
	ExitError     = exitcode.Error
	ExitUsage     = exitcode.Usage
	ExitInvalid   = exitcode.Invalid
	ExitConflict  = exitcode.Conflict
	ExitDenied    = exitcode.Denied
	ExitUncertain = exitcode.Uncertain
	ExitNotFound  = exitcode.NotFound
	ExitSettled   = exitcode.Settled
	ExitRetry     = exitcode.Retry
	// ExitNotPermitted: this identity may not do that (no valid operator
	// signature, a database role without the right).
	ExitNotPermitted = exitcode.NotPermitted
	// ExitTempFail (sysexits' EX_TEMPFAIL, the number retry-later has):
	// the ledger could not be reached, or stayed locked, for as long as
	// the command retried; nothing was recorded and repeating is safe.
	// The JSON answer says "safe_to_repeat": true.
	ExitTempFail = exitcode.TempFail
	// ExitCommitUnknown (sysexits' EX_IOERR): the last attempt was lost
	// while committing; ask `tollgate status KEY` before acting on it.
	// Every write is idempotent, so repeating the call is also safe.
	ExitCommitUnknown = exitcode.CommitUnknown
)

// DefaultRetryFor is how long a command rides out a transient fault (a
// database restarting, a lost connection, a locked ledger) before it
// gives up; --retry-for or $TOLLGATE_RETRY_FOR set another.
const DefaultRetryFor = 30 * time.Second

// DefaultAttemptTimeout is how long one attempt of a call may wait for
// the database's answer before it is abandoned and, within --retry-for,
// made again on a new connection: a lock another session holds, a server
// or network that stopped answering, a COMMIT waiting for a synchronous
// standby that is gone. A write's attempt takes milliseconds; ten seconds
// leaves room for a slow commit while a 30 s --retry-for still gets
// three tries. --attempt-timeout or $TOLLGATE_ATTEMPT_TIMEOUT set
// another; 0 bounds an attempt by --retry-for alone.
const DefaultAttemptTimeout = 10 * time.Second

// Env is what a command may touch of the outside world.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Console runs the operator console; main wires it to the ui package so
	// that this package does not depend on the terminal.
	Console func(ctx context.Context, opt ConsoleOptions) error
	// Demo runs the demo; wired by main like Console.
	Demo func(ctx context.Context, opt DemoOptions) error
	// Open opens a ledger; nil means ledger.Open. Tests give the CLI a
	// fake here.
	Open func(ctx context.Context, path string, opt ledger.Options) (Ledger, error)
}

// ConsoleOptions are the console's command-line settings.
type ConsoleOptions struct {
	DB string
	// Operator is the name claimed with --operator or TOLLGATE_OPERATOR;
	// Ledger carries the keys, the anchor and the login name.
	Operator string
	ReadOnly bool
	Ledger   ledger.Options
	// Locked are the passphrase-protected keys among Ledger.Signers that
	// a registered operator holds: the console asks for their passphrase
	// itself, since it owns the terminal.
	Locked []*opkeys.Key
}

// DemoOptions are the demo's command-line settings.
type DemoOptions struct {
	DB       string
	Operator string
	// Agents runs the simulated agents for this long; zero means until
	// the console quits.
	Headless time.Duration
}

// usageError is a command-line mistake: exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// command is one tollgate command: its usage, and bind, which declares
// its flags on a flag set and returns the run function bound to them
// (define builds it from a typed flag struct).
type command struct {
	name    string
	args    string
	summary string
	bind    func(fs *flag.FlagSet) runFunc
}

// runFunc runs a command whose flags are parsed; it returns the exit code
// of an answer, or the refusal Main prints.
type runFunc func(ctx context.Context, c *cmdCtx) (int, error)

// cmdCtx carries one invocation's parsed state common to every command.
type cmdCtx struct {
	env  Env
	fs   *flag.FlagSet
	db   string
	json bool
	// retryFor bounds how long transient faults are retried.
	retryFor time.Duration
	// attempt bounds each attempt of a call to the database (and of
	// opening the ledger).
	attempt time.Duration
	pos     []string
	stdout  io.Writer
	// cleanup runs when the command ends (an ssh-agent connection).
	cleanup []func()
}

// Main runs one tollgate invocation and returns its exit code. Every
// refusal, usage errors included, goes to stderr escaped as the console
// escapes untrusted text, and with --json also to stdout as one object
// {"error", "exit_code"}.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if env.Open == nil {
		env.Open = openLedger
	}
	jsonMode := wantsJSON(args)
	name := ""
	fail := func(err error) int {
		prefix := "tollgate"
		if name != "" {
			prefix += " " + name
		}
		fmt.Fprintf(env.Stderr, "%s: %s%s\n", prefix, errorText(err), nextStep(err))
		code, obj := refusal(err)
		if jsonMode {
			writeJSON(env.Stdout, obj)
		}
		return code
	}
	global := flag.NewFlagSet("tollgate", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	db := global.String("db", "", "ledger file (default $TOLLGATE_DB, else $XDG_DATA_HOME/tollgate/ledger.db)")
	retryFor := global.Duration("retry-for", -1, "how long to ride out a transient fault before exiting 75 (default $TOLLGATE_RETRY_FOR, else 30s)")
	attempt := global.Duration("attempt-timeout", -1, "how long one attempt may wait for the database before it is abandoned and retried (default $TOLLGATE_ATTEMPT_TIMEOUT, else 10s)")
	help := global.Bool("help", false, "show help")
	version := global.Bool("version", false, "print the version, the commit and whether its tree was modified")
	global.BoolVar(help, "h", false, "show help")
	onceFlags(global)
	if err := global.Parse(args); err != nil {
		if !jsonMode {
			topUsage(env.Stderr)
		}
		return fail(unknownFlag(global, err))
	}
	rest := global.Args()
	if *help {
		topUsage(env.Stdout)
		return ExitOK
	}
	name = "console"
	if len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	if *version {
		name, rest = "version", nil
	}
	if name == "help" {
		topUsage(env.Stdout)
		return ExitOK
	}
	if _, ok := subcommands[name]; ok {
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			if len(rest) > 0 && (rest[0] == "--help" || rest[0] == "-h") {
				topUsage(env.Stdout)
				return ExitOK
			}
			return fail(usagef("a subcommand is required: %s (see tollgate --help)", subcommands[name]))
		}
		name, rest = name+" "+rest[0], rest[1:]
	}
	cmd, ok := commands()[name]
	if !ok {
		bad := name
		name = ""
		return fail(unknownCommand(bad))
	}
	c := &cmdCtx{env: env, stdout: env.Stdout}
	fs := flag.NewFlagSet("tollgate "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cdb, cretry, cattempt := commonFlags(fs, &c.json)
	run := cmd.bind(fs)
	onceFlags(fs)
	c.fs = fs
	pos, err := parseInterspersed(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		cmdUsage(env.Stdout, cmd, fs)
		return ExitOK
	}
	if err != nil {
		if !jsonMode {
			cmdUsage(env.Stderr, cmd, fs)
		}
		return fail(unknownFlag(fs, err))
	}
	c.pos = pos
	c.db = *db
	if *cretry >= 0 {
		*retryFor = *cretry
	}
	if c.retryFor, err = retryBudget(*retryFor, env.Getenv("TOLLGATE_RETRY_FOR")); err != nil {
		return fail(err)
	}
	if *cattempt >= 0 {
		*attempt = *cattempt
	}
	if c.attempt, err = durationSetting(*attempt, env.Getenv("TOLLGATE_ATTEMPT_TIMEOUT"), "attempt-timeout", DefaultAttemptTimeout); err != nil {
		return fail(err)
	}
	if *cdb != "" {
		c.db = *cdb
	}
	code, err := run(ctx, c)
	for _, f := range c.cleanup {
		f()
	}
	if err != nil {
		return fail(err)
	}
	return code
}

// subcommands are the commands that take a subcommand word.
var subcommands = map[string]string{"policy": "set or list", "epoch": "activate or show", "operator": "init", "operators": "add, list or remove", "agents": "allow, revoke, list or token", "mcp": "serve or proxy"}

// wantsJSON reports whether --json is among the arguments, so that even
// a command line that does not parse gets its error as JSON.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--json", "-json", "--json=true", "-json=true":
			return true
		case "--":
			return false
		}
	}
	return false
}

// onceValue refuses a flag given twice: "--kind a --kind b" silently
// binding b is how an agent ends up acting on what it did not mean.
type onceValue struct {
	flag.Value
	name string
	set  bool
}

func (o *onceValue) Set(s string) error {
	if o.set {
		return fmt.Errorf("flag --%s given twice: give each flag once", o.name)
	}
	o.set = true
	return o.Value.Set(s)
}

// String is the wrapped flag's; the flag package also calls it on a zero
// onceValue to tell a default apart, which must not panic.
func (o *onceValue) String() string {
	if o == nil || o.Value == nil {
		return ""
	}
	return o.Value.String()
}

// IsBoolFlag keeps boolean flags valueless (--json, not --json=true).
func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func onceFlags(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, many := f.Value.(interface{ Repeatable() }); !many {
			f.Value = &onceValue{Value: f.Value, name: f.Name}
		}
	})
}

// parseInterspersed accepts flags before and after positional arguments,
// as in `tollgate guard KEY --kind refund`.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if i := len(args) - len(rest); i > 0 && args[i-1] == "--" {
			// Everything after "--" is positional, verbatim: mcp proxy's
			// upstream command keeps its own flags.
			return append(pos, rest...), nil
		}
		args = rest
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// writeJSON prints v as one line of JSON in which every character that
// could act on a terminal or hide text is escaped as \uXXXX: Go's
// encoder already escapes C0, but writes DEL, C1 controls and format
// characters (zero-width, bidi overrides) raw. '<', '>' and '&' are
// written as themselves (no HTML escaping: nobody reads this in a page).
func writeJSON(w io.Writer, v any) {
	b, _ := jsonout.Marshal(v)
	w.Write(append(safetext.EscapeJSON(b), '\n'))
}

// ledgerPath is --db, else TOLLGATE_DB, else the XDG default.
func (c *cmdCtx) ledgerPath() (string, error) {
	if c.db != "" {
		return c.db, nil
	}
	return ledger.DefaultPath()
}

// open opens the ledger chosen by --db, TOLLGATE_DB or the default path.
// A writing command creates or migrates it; a reading command never
// creates, migrates or changes a file.
func (c *cmdCtx) open(ctx context.Context, readOnly bool) (Ledger, error) {
	return c.openWith(ctx, ledger.Options{OneShot: !readOnly, ReadOnly: readOnly})
}

// openWith opens the ledger with opt; every writer also carries the
// operators file, since guard checks each grant against it.
func (c *cmdCtx) openWith(ctx context.Context, opt ledger.Options) (Ledger, error) {
	path, err := c.ledgerPath()
	if err != nil {
		return nil, err
	}
	// Readers carry the anchor too: verify names each decision signed
	// outside it. Writers consult the shared witness before a grant, at
	// the place fixed at build time, never one the environment names.
	if opt.Anchor, err = c.anchor(); err != nil {
		return nil, err
	}
	if !opt.ReadOnly {
		opt.Witness = ledger.SystemWitnessPath
	}
	// A database that cannot be reached (restarting, failing over) is
	// asked again with backoff and jitter within the retry budget;
	// nothing was asked of it, so this is always safe.
	opt.RetryFor = max(c.retryFor, time.Millisecond)
	opt.AttemptTimeout = c.attempt
	deadline := time.Now().Add(c.retryFor)
	backoff := 100 * time.Millisecond
	for {
		s, err := c.openAttempt(ctx, path, opt)
		left := time.Until(deadline)
		if err == nil || !errors.Is(err, ledger.ErrUnavailable) || left <= 0 {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(min(left, backoff/2+time.Duration(rand.Int64N(int64(backoff/2))))):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// openAttempt is one attempt at opening the ledger, bounded by
// --attempt-timeout: a server that accepts the connection and never
// answers (or a network that drops every packet) is given up and asked
// again. Opening is safe to repeat (a migration is one transaction that
// checks the version first), so an attempt cut off is an outage.
func (c *cmdCtx) openAttempt(ctx context.Context, path string, opt ledger.Options) (Ledger, error) {
	if c.attempt <= 0 {
		return c.env.Open(ctx, path, opt)
	}
	actx, cancel := context.WithTimeout(ctx, c.attempt)
	defer cancel()
	s, err := c.env.Open(actx, path, opt)
	if err != nil && !errors.Is(err, ledger.ErrUnavailable) && actx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w (opening the ledger: no answer within --attempt-timeout %s: %v)", ledger.ErrUnavailable, c.attempt, err)
	}
	return s, err
}

// commonFlags binds the flags every command takes (--db, --retry-for,
// --attempt-timeout, --json): Main and the completion scripts read them
// from here.
func commonFlags(fs *flag.FlagSet, jsonOut *bool) (db *string, retryFor, attempt *time.Duration) {
	db = fs.String("db", "", "ledger file or postgres:// URL (default $TOLLGATE_DB, else $XDG_DATA_HOME/tollgate/ledger.db)")
	retryFor = fs.Duration("retry-for", -1, "how long to ride out a transient fault before exiting 75, at most 1h ($TOLLGATE_RETRY_FOR when not given)")
	attempt = fs.Duration("attempt-timeout", -1, "how long one attempt may wait for the database before it is abandoned and retried, 0 for no limit but --retry-for ($TOLLGATE_ATTEMPT_TIMEOUT when not given)")
	// -1 only means "not given"; --help shows the default that applies
	// then, not "(default -1ns)".
	fs.Lookup("retry-for").DefValue = DefaultRetryFor.String()
	fs.Lookup("attempt-timeout").DefValue = DefaultAttemptTimeout.String()
	fs.BoolVar(jsonOut, "json", false, "print one JSON object")
	return db, retryFor, attempt
}

// retryBudget is --retry-for, else $TOLLGATE_RETRY_FOR, else the
// default; at most an hour.
func retryBudget(flagValue time.Duration, env string) (time.Duration, error) {
	return durationSetting(flagValue, env, "retry-for", DefaultRetryFor)
}

// durationSetting is the flag --name when given (not negative), else the
// environment's $TOLLGATE_NAME, else def; at most an hour.
func durationSetting(flagValue time.Duration, env, name string, def time.Duration) (time.Duration, error) {
	d := flagValue
	if d < 0 && env != "" {
		var err error
		if d, err = time.ParseDuration(env); err != nil || d < 0 {
			return 0, fmt.Errorf("%w: %s=%q: a duration such as 30s (%v)", ledger.ErrInvalidInput, envName(name), safetext.Escape(env), err)
		}
	}
	if d < 0 {
		d = def
	}
	if d > time.Hour {
		return 0, fmt.Errorf("%w: --%s is at most 1h (got %s)", ledger.ErrInvalidInput, name, d)
	}
	return d, nil
}

// envName is the environment variable a flag defaults from.
func envName(flagName string) string {
	return "TOLLGATE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// key returns the one positional key argument.
func (c *cmdCtx) key() (string, error) {
	if len(c.pos) != 1 {
		return "", usagef("expected exactly one KEY argument, got %d", len(c.pos))
	}
	if _, err := ledger.ParseKey(c.pos[0]); err != nil {
		return "", err
	}
	return c.pos[0], nil
}

func topUsage(w io.Writer) {
	fmt.Fprint(w, `tollgate keeps agents' consequential actions idempotent and human-approved.

Usage: tollgate [--db PATH] COMMAND [ARGS] [--json]

Commands:
`)
	cs := commands()
	for _, n := range commandOrder {
		fmt.Fprintf(w, "  %-16s %s\n", n, cs[n].summary)
	}
	fmt.Fprint(w, `
Exit codes: 0 ok (guard: execute now, then report), 1 error a retry may
cure (busy, I/O), 2 usage, 3 invalid input, 4 conflict or already
decided/reported differently, 5 denied (rejected, expired, policy deny,
fenced), 6 uncertain (reconcile, do not re-execute), 7 not found (no such
key, request, permit or ledger), 10 settled, 75 pending or executing
(retry later), 77 not permitted.

Run 'tollgate COMMAND --help' for a command's flags.
`)
}

func cmdUsage(w io.Writer, cmd command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: tollgate %s %s\n\n%s\n\n%sFlags:\n", cmd.name, cmd.args, cmd.summary, exampleLine(cmd.name))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// nextStep is what a newcomer does about an error whose text alone does
// not say, after it on stderr: a missing SQLite ledger is created by
// 'tollgate migrate' or the first record or guard (a PostgreSQL one's
// text already names migrate).
func nextStep(err error) string {
	if errors.Is(err, ledger.ErrNoLedger) && !strings.Contains(err.Error(), "tollgate migrate") {
		return "; 'tollgate migrate' creates it (so does the first record or guard), or --db / $TOLLGATE_DB names another"
	}
	return ""
}
