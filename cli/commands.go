package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/exitcode"
	"github.com/tollgate-dev/tollgate/internal/jsonout"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
	"github.com/tollgate-dev/tollgate/safetext"
)

var commandOrder = []string{"console", "demo", "record", "guard", "report", "status", "show", "list", "approve", "reject",
	"reconcile", "policy set", "policy list", "policy test", "epoch activate", "epoch show", "operator init", "operators add", "operators list",
	"operators remove", "agents allow", "agents revoke", "agents list", "agents token", "mcp serve", "mcp proxy", "watch", "verify", "doctor", "export", "backup", "archive", "migrate", "version"}

func commands() map[string]command {
	cs := []command{
		define("console", "[--operator NAME] [--key FILE] [--read-only] [--witness FILE]", "open the operator console", bindConsole, runConsole),
		define("demo", "[--db PATH]", "seed a scratch ledger, run simulated agents, open the console", bindDemo, runDemo),
		define("record", "KEY --kind K --target T (--body B | --body-file F)", "record an intent only", bindPayload, runRecord),
		define("guard", "KEY --kind K --target T (--body B | --body-file F) [--agent A] [--lease D] [--wait D] [--url URL]",
			"record if new, apply policy, request approval once, issue a permit once", bindGuard, runGuard),
		define("report", "KEY --permit ID --outcome succeeded|failed|unknown [--ref R] [--latency D] [--url URL]", "report the outcome of a permitted action", bindReport, runReport),
		define("status", "KEY [--url URL]", "show everything known about a key", bindRemote, runStatus),
		define("list", "[--state S|fenced|conflict] [--agent A] [--kind K] [--prefix P] [--epoch E] [--limit N] [--all]", "list actions, or logged fenced calls or conflicts, newest first", bindList, runList),
		define("show", "KEY [--payload]", "show a key as status does and, with --payload, its retained kind, target and body (escaped)", bindShow, runShow),
		define("approve", "KEY [--reason R] [--operator NAME] [--key FILE]", "approve a pending action", bindDecide, runDecide(ledger.DecisionApproved)),
		define("reject", "KEY --reason R [--operator NAME] [--key FILE]", "reject a pending action", bindDecide, runDecide(ledger.DecisionRejected)),
		define("reconcile", "KEY --result executed|not-executed --note N [--operator NAME] [--key FILE]", "settle an uncertain action", bindReconcile, runReconcile),
		define("policy set", "PATTERN --mode auto|approval|deny [--ttl D] [--approvers N] [--if CEL] [--priority N]", "set the rule for a kind or kind glob", bindPolicySet, runPolicySet),
		define[noFlags]("policy list", "", "list the rules in the order they are evaluated, each in force or not", nil, runPolicyList),
		define("policy test", "--kind K [--target T] [--agent A] [--context JSON] [--at TIME]", "say what the rules would decide for an action and why, writing nothing", bindPolicyTest, runPolicyTest),
		define("epoch activate", "[--epoch UUID]", "start a new operator epoch; new work must use hsr1:<epoch>:<key>", bindEpoch, runEpochActivate),
		define("epoch show", "[--url URL]", "show the active epoch", bindRemote, runEpochShow),
		define("operator init", "[--key FILE]", "create this operator's Ed25519 key (kept if one exists) and print its public line", bindKey, runOperatorInit),
		define("operators add", "NAME PUBKEY [--key FILE]", "register an operator; the first makes the ledger signed, later ones are signed by an operator", bindKey, runOperatorsAdd),
		define[noFlags]("operators list", "", "list the registered operators and their keys", nil, runOperatorsList),
		define("operators remove", "NAME [--key FILE]", "withdraw an operator's key (signed by an operator)", bindKey, runOperatorsRemove),
		define("agents allow", "WHO NAME [--service] [--operator NAME] [--key FILE]", "let WHO act as agent NAME besides its own name (operators only): a PostgreSQL login role, or on SQLite and with --service a token's name or Unix user of tollgate serve", bindAgentNames, runAgentsAllow),
		define("agents revoke", "WHO NAME [--service] [--operator NAME] [--key FILE]", "withdraw a name agents allow gave; facts already written keep it", bindAgentNames, runAgentsRevoke),
		define("agents list", "[--service]", "list the agent names login roles (PostgreSQL) or, on SQLite and with --service, the service's principals may act as besides their own", bindService, runAgentsList),
		define("agents token", "create NAME [--scope agent|operator] | list | revoke ID [--operator NAME] [--key FILE]",
			"make a bearer token for tollgate serve (its secret printed once, only its digest kept), list the tokens, or revoke one (operators only)", bindToken, runAgentsToken),
		define("mcp serve", "[--agent A]", "serve the tools guard, report and status over MCP on stdin/stdout (no decision tool)", bindMCPServe, runMCPServe),
		define("mcp proxy", "[--agent A] [--target T] [--timeout D] [--lease D] [--guard-reads] [--key-arg NAME] [--redact] [--repeat-window D] -- CMD ARGS...",
			"run an upstream MCP server and offer its tools, each call guarded, forwarded only with a permit, and reported", bindMCPProxy, runMCPProxy),
		define("verify", "[--witness FILE] [--archive FILE]", "prove every fact, the hash chain, payload digests and witnessed heads; --archive also proves an archive file", bindVerify, runVerify),
		define("doctor", "[--agent-user NAME] [--key FILE] [--socket PATH]", "check whether this deployment enforces approval against the agent's user: exit 0 only when it does, 1 when it does not", bindDoctor, runDoctor),
		define("export", "[--archives]", "write the evidence of every action as JSON Lines; --archives reads archived actions' evidence from their archives", bindExport, runExport),
		define("watch", "[--json] [--warn 10m] [--exec CMD]", "follow the ledger: one line per new pending request, approval near expiry, uncertain action, conflict and fenced call", bindWatch, runWatch),
		define("backup", "FILE [--witness FILE]", "write a consistent copy of the live ledger (never replaces FILE)", bindWitness, runBackup),
		define("archive", "--settled-before DATE|DURATION --to FILE [--witness FILE]", "move settled actions, with every fact proving them, into an archive ledger; keep each key's digest and final state", bindArchive, runArchive),
		define[noFlags]("version", "", "print the version, the commit and whether its tree was modified (also tollgate --version)", nil, runVersion),
		define("migrate", "[--from FILE]", "create the ledger or upgrade its schema; --from copies an SQLite ledger into an empty PostgreSQL one", bindMigrate, runMigrate),
	}
	cs = append(cs, setupCommands()...)
	cs = append(cs, serveCommand())
	m := map[string]command{}
	for _, c := range cs {
		m[c.name] = c
	}
	return m
}

// path is --witness, else the XDG default.
func (w *witnessArg) path() (string, error) {
	if w.witness != "" {
		return w.witness, nil
	}
	return ledger.DefaultWitnessPath()
}

// record writes a head this process saw to the witness file, and to the
// shared witness unless the ledger is a copy (which it says on stderr).
func (w *witnessArg) record(c *cmdCtx, h ledger.Head, by string) error {
	path, err := w.path()
	if err != nil {
		return err
	}
	now := time.Now()
	if err := ledger.AppendWitness(path, h, by, now); err != nil {
		return err
	}
	// Operators feed the shared witness that every guard consults, where
	// the installer made its folder and this user may write it.
	_, err = ledger.ShareWitness(h, by, now)
	var copyErr *ledger.CopyError
	if errors.As(err, &copyErr) {
		fmt.Fprintf(c.env.Stderr, "tollgate %s: note: %s\n", by, safetext.Escape(copyErr.Error()))
		return nil
	}
	return err
}

func noArgs(c *cmdCtx) error {
	if len(c.pos) > 0 {
		return usagef("unexpected argument %q", safetext.Escape(c.pos[0]))
	}
	return nil
}

func runConsole(ctx context.Context, c *cmdCtx, f *consoleFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if c.env.Console == nil {
		return ExitError, errors.New("this build has no console")
	}
	if err := ledger.CheckReviewInput(f.claimed(c), ""); err != nil {
		return 0, err
	}
	// The session's first head goes to the witness before the console
	// opens; a reading command never creates or migrates the ledger.
	s, err := c.open(ctx, true)
	if err != nil {
		return 0, err
	}
	h, err := s.Head(ctx)
	var set ledger.OperatorSet
	if err == nil {
		set, err = s.Operators(ctx)
	}
	s.Close()
	if err != nil {
		return 0, err
	}
	if err := f.record(c, h, "console"); err != nil {
		return 0, err
	}
	// The console reopens the ledger as named, not by its Path: a
	// PostgreSQL Path leaves the password out.
	db, err := c.ledgerPath()
	if err != nil {
		return 0, err
	}
	// --retry-for and --attempt-timeout bound each of the console's calls
	// as they bound a command's.
	opt := ConsoleOptions{DB: db, Operator: f.claimed(c), ReadOnly: f.readOnly,
		Ledger: ledger.Options{ReadOnly: f.readOnly, Existing: true, Operator: c.loginName(), GroupCommit: true,
			RetryFor: max(c.retryFor, time.Millisecond), AttemptTimeout: c.attempt}}
	if !opt.ReadOnly {
		if opt.Ledger.Anchor, err = c.anchor(); err != nil {
			return 0, err
		}
		// No terminal prompt: the console asks for a passphrase in its
		// own dialog, since it owns the terminal once it starts.
		if opt.Ledger.Signers, err = f.signers(c, nil); err != nil {
			return 0, err
		}
		for _, sg := range opt.Ledger.Signers {
			if k, ok := opkeys.LockedKeyOf(sg); ok && set.Signed && set.Registered(sg.PublicKey()) {
				opt.Locked = append(opt.Locked, k)
			}
		}
	}
	return ExitOK, c.env.Console(ctx, opt)
}

func runDemo(ctx context.Context, c *cmdCtx, f *demoFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if c.env.Demo == nil {
		return ExitError, errors.New("this build has no demo")
	}
	op := f.operator
	if op == "" {
		op = c.env.Getenv("TOLLGATE_OPERATOR")
	}
	if op == "" {
		op = c.loginName()
	}
	return ExitOK, c.env.Demo(ctx, DemoOptions{DB: c.db, Operator: op, Headless: f.headless})
}

func runRecord(ctx context.Context, c *cmdCtx, f *payloadArgs) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	p, err := f.payload(c)
	if err != nil {
		return 0, err
	}
	opt := ledger.RecordOptions{Agent: f.agent, Redact: f.redact}
	if _, err := ledger.CheckRecordInput(key, p, opt); err != nil {
		return 0, err
	}
	return withLedger(ctx, c, writing, func(s Ledger) (answer, error) {
		in, err := s.Record(ctx, key, p, opt)
		return ok(map[string]any{"key": key, "logical_key": in.Key.Logical, "epoch": in.Key.Epoch, "payload_sha256": in.SHA256,
			"created": in.Created, "replayed": in.Replayed, "state": in.State, "redacted": in.Redacted}, func(w io.Writer) {
			verb := "recorded"
			if in.Replayed {
				verb = "already recorded (replayed)"
			}
			fmt.Fprintf(w, "%s: %s, payload sha256 %s, state %s\n", key, verb, in.SHA256, in.State)
		}), err
	})
}

// verdictExit is the exit code of a guard's verdict.
func verdictExit(v ledger.Verdict) int { return exitcode.OfVerdict(v) }

func runGuard(ctx context.Context, c *cmdCtx, f *guardFlags) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	p, err := f.payload(c)
	if err != nil {
		return 0, err
	}
	if f.wait < 0 || f.wait > 24*time.Hour {
		return 0, fmt.Errorf("%w: --wait is between 0 (no waiting) and 24h (got %s)", ledger.ErrInvalidInput, f.wait)
	}
	opt := ledger.GuardOptions{Agent: f.agent, Redact: f.redact, Lease: f.lease}
	if f.context != "" {
		if opt.Context, err = ledger.ParseContext([]byte(f.context)); err != nil {
			return 0, err
		}
	}
	if opt.Lease == 0 {
		return 0, fmt.Errorf("%w: a lease is between %s and %s (got 0)", ledger.ErrInvalidInput, ledger.MinLease, ledger.MaxLease)
	}
	if _, err := ledger.CheckGuardInput(key, p, opt); err != nil {
		return 0, err
	}
	return f.remote.withLedger(ctx, c, writing, func(s Ledger) (answer, error) {
		a, err := guardWaiting(ctx, s, key, p, opt, f.wait)
		if err != nil {
			return answer{}, err
		}
		code := verdictExit(a.Verdict)
		return answer{code: code, json: struct {
			ledger.Answer
			Authority string `json:"authority"`
			ExitCode  int    `json:"exit_code"`
		}{a, authorityOf(c, s), code}, text: func(w io.Writer) { guardText(w, a) }}, nil
	})
}

// guardWaiting calls Guard, and with --wait polls (backing off to 5 s)
// until the answer is no longer retry-later or the wait has passed.
func guardWaiting(ctx context.Context, s Ledger, key string, p ledger.Payload, opt ledger.GuardOptions, wait time.Duration) (ledger.Answer, error) {
	deadline := time.Now().Add(wait)
	backoff := 250 * time.Millisecond
	for {
		a, err := s.Guard(ctx, key, p, opt)
		if err != nil || a.Verdict != ledger.RetryLater || !time.Now().Add(backoff).Before(deadline) {
			return a, err
		}
		select {
		case <-ctx.Done():
			return a, ctx.Err()
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff = backoff * 3 / 2
		}
	}
}

func guardText(w io.Writer, a ledger.Answer) {
	fmt.Fprintf(w, "%s: %s", a.Key, a.State)
	if string(a.Verdict) != string(a.State) {
		// "uncertain (uncertain)" would say one thing twice.
		fmt.Fprintf(w, " (%s)", a.Verdict)
	}
	if a.Replayed {
		fmt.Fprint(w, ", replayed")
	}
	if a.PermitID != "" {
		fmt.Fprintf(w, ", permit %s until %s: execute now, then report", a.PermitID, a.LeaseUntil.Format(time.RFC3339))
	}
	if a.Reason != "" {
		fmt.Fprintf(w, ": %s", safetext.Escape(a.Reason))
	}
	if a.SafeNewKey {
		fmt.Fprint(w, "; a new reviewed operation needs a new key")
	}
	if a.Rule != nil {
		fmt.Fprintf(w, "; policy %s by %s", a.Policy, explainText(a.Rule))
	}
	fmt.Fprintln(w)
}

func runReport(ctx context.Context, c *cmdCtx, f *reportFlags) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	if f.permit == "" {
		return 0, usagef("--permit is required")
	}
	o, err := ledger.ParseOutcome(f.outcome)
	if err != nil {
		return 0, err
	}
	opt := ledger.ReportOptions{Ref: f.ref, Latency: f.latency}
	if err := ledger.CheckReportInput(key, o, opt); err != nil {
		return 0, err
	}
	return f.remote.withLedger(ctx, c, writing, func(s Ledger) (answer, error) {
		r, err := s.Report(ctx, key, f.permit, o, opt)
		if err != nil {
			return answer{}, err
		}
		code := exitcode.OfReport(r)
		return answer{code: code, json: struct {
			ledger.ReportAnswer
			ExitCode int `json:"exit_code"`
		}{r, code}, text: func(w io.Writer) {
			fmt.Fprintf(w, "%s: reported %s, state %s", key, r.Outcome, r.State)
			if r.Replayed {
				fmt.Fprint(w, " (replayed)")
			}
			if r.Late {
				fmt.Fprint(w, "; late: kept as evidence, an operator reconciles")
			}
			if r.Disagrees {
				fmt.Fprint(w, "; disagrees with the reconciliation: flagged for review")
			}
			fmt.Fprintln(w)
		}}, nil
	})
}

func runStatus(ctx context.Context, c *cmdCtx, f *remoteArg) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	return f.withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		d, err := s.Status(ctx, key)
		auth := authorityOf(c, s)
		return ok(struct {
			ledger.Detail
			Authority string `json:"authority"`
		}{d, auth}, func(w io.Writer) {
			statusText(w, d)
			fmt.Fprintf(w, "authority:    %s\n", safetext.Escape(auth))
		}), err
	})
}

// runShow is status for an operator, who may read the retained payload:
// the payload is never part of an agent-facing answer.
func runShow(ctx context.Context, c *cmdCtx, f *showFlags) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		d, err := s.Status(ctx, key)
		out := map[string]any{"status": d}
		if f.payload {
			out["payload"] = d.Payload // null when withheld or recorded outside tollgate
		}
		return ok(out, func(w io.Writer) {
			statusText(w, d)
			if !f.payload {
				return
			}
			switch {
			case d.Payload != nil:
				fmt.Fprintf(w, "payload kind:   %s\npayload target: %s\npayload body:\n%s\n", safetext.Escape(d.Payload.Kind),
					safetext.Escape(d.Payload.Target), safetext.EscapeMultiline(d.Payload.Body))
			case d.Redacted:
				fmt.Fprintln(w, "payload:      withheld (redacted: only its hashes are kept)")
			default:
				fmt.Fprintln(w, "payload:      not retained (recorded outside tollgate)")
			}
		}), err
	})
}

func statusText(w io.Writer, d ledger.Detail) {
	fmt.Fprintf(w, "key:          %s\nlogical key:  %s\nepoch:        %s\nstate:        %s\n", d.Key, d.Logical, orNone(d.Epoch), d.State)
	if d.State == ledger.StateUncertain {
		// The state an operator is paged for: say what settles it.
		fmt.Fprintf(w, "next:         find out whether it ran, then: tollgate reconcile %s --result executed|not-executed --note N\n", safetext.Escape(d.Key))
	}
	fmt.Fprintf(w, "agent:        %s\nkind:         %s\npayload:      sha256 %s", safetext.Escape(orNone(d.Agent)), safetext.Escape(orNone(d.Kind)), d.SHA256)
	switch {
	case !d.Retained:
		fmt.Fprint(w, " (recorded outside tollgate, body not retained)")
	case d.Redacted:
		fmt.Fprint(w, " (body withheld)")
	}
	fmt.Fprintln(w)
	if d.Policy != "" {
		if d.PolicyPat == approvals.DefaultRule().Pattern {
			// Worded as the console words it, not "(rule (no rule matches))".
			fmt.Fprintf(w, "policy:       %s (default: no rule matches)\n", d.Policy)
		} else {
			fmt.Fprintf(w, "policy:       %s (rule %s)\n", d.Policy, safetext.Escape(d.PolicyPat))
		}
	}
	if d.Rule != nil {
		fmt.Fprintf(w, "decided by:   %s\n", explainText(d.Rule))
	}
	if len(d.Context) > 0 {
		fmt.Fprintf(w, "context:      %s\n", safetext.Escape(string(d.Context)))
		if len(d.CallerAsserted) > 0 {
			fmt.Fprintf(w, "caller's:     %s (asserted by the caller, not derived from what executes)\n", safetext.Escape(strings.Join(d.CallerAsserted, ", ")))
		}
	}
	if !d.Expires.IsZero() {
		fmt.Fprintf(w, "approval:     requested %s, deadline %s, %d of %d approvals\n", ts(d.Requested), ts(d.Expires), d.Approvals(), max(d.Approvers, 1))
	}
	for _, v := range d.Votes {
		fmt.Fprintf(w, "decision:     %s by %s at %s, %s", v.Decision, safetext.Escape(v.Operator), ts(v.At), safetext.Escape(v.Proof.String()))
		if v.Reason != "" {
			fmt.Fprintf(w, ": %s", safetext.Escape(v.Reason))
		}
		fmt.Fprintln(w)
	}
	for _, f := range d.Forged {
		fmt.Fprintf(w, "FORGED:       %s\n", safetext.Escape(f))
	}
	if d.Archive != 0 {
		fmt.Fprintf(w, "archived:     to %s (checkpoint %d); its facts and events are there: tollgate --db %s status %s\n",
			safetext.Escape(d.ArchiveFile), d.Archive, safetext.Escape(d.ArchiveFile), safetext.Escape(d.Key))
	}
	if d.PermitID != "" {
		fmt.Fprintf(w, "permit:       %s to %s, issued %s, lease until %s\n", d.PermitID, safetext.Escape(d.Holder), ts(d.Issued), ts(d.Lease))
	}
	for _, r := range d.Reports {
		fmt.Fprintf(w, "report:       %s (%s) at %s ref %s latency %dms\n", r.Outcome, r.Kind, ts(r.At), safetext.Escape(r.Ref), r.Latency)
	}
	if d.Reconcile != nil {
		fmt.Fprintf(w, "reconciled:   %s by %s at %s, %s: %s\n", d.Reconcile.Result, safetext.Escape(d.Reconcile.Operator), ts(d.Reconcile.At),
			safetext.Escape(d.Reconcile.Proof.String()), safetext.Escape(d.Reconcile.Note))
	}
	if d.Disagrees {
		fmt.Fprintln(w, "flagged:      a report disagrees with the reconciliation")
	}
	if d.Conflicts > 0 {
		fmt.Fprintf(w, "conflicts:    %d attempt(s) with a different payload\n", d.Conflicts)
	}
	fmt.Fprintln(w, "timeline:")
	for _, e := range d.Events {
		fmt.Fprintf(w, "  %s  %-20s %s\n", ts(e.At), e.Type, safetext.Escape(e.Actor))
	}
}

func ts(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func runList(ctx context.Context, c *cmdCtx, f *listFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	filter := ledger.Filter{Agent: f.agent, Kind: f.kind, KeyPrefix: f.prefix, Epoch: f.epoch, Limit: f.limit}
	if filter.Limit < 1 || filter.Limit > 10000 {
		return 0, fmt.Errorf("%w: --limit is between 1 and 10000 (got %d)", ledger.ErrInvalidInput, filter.Limit)
	}
	switch f.state {
	case "fenced", "conflict":
		// Not states of a key but logged attempts: the console's Fenced
		// calls and Conflicts views, unreviewed first (--all for every one).
		return listLogged(ctx, c, f)
	case "":
	default:
		var err error
		if filter.State, err = ledger.ParseState(f.state); err != nil {
			return 0, fmt.Errorf("%w (or fenced, conflict for the logged attempts)", err)
		}
	}
	return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		rows, err := s.List(ctx, filter)
		if rows == nil {
			rows = []ledger.Row{}
		}
		return ok(rows, func(w io.Writer) {
			for _, r := range rows {
				fmt.Fprintf(w, "%-11s %-40s %-16s %s\n", r.State, r.Key, safetext.Escape(r.Kind), safetext.Escape(r.Agent))
			}
		}), err
	})
}

// listLogged lists fenced calls or conflicts, newest first: unreviewed
// ones, or all with --all.
func listLogged(ctx context.Context, c *cmdCtx, f *listFlags) (int, error) {
	if f.agent != "" || f.kind != "" || f.epoch != "" {
		return 0, usagef("--state %s takes --prefix, --all and --limit only", f.state)
	}
	return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		if f.state == "fenced" {
			rows, err := s.Fenced(ctx, f.all, f.prefix, 0, f.limit)
			if rows == nil {
				rows = []ledger.FencedRow{}
			}
			return ok(rows, func(w io.Writer) {
				for _, r := range rows {
					fmt.Fprintf(w, "fenced %-6d %-40s %s  agent %s: %s%s\n", r.ID, safetext.Escape(r.Key), ts(r.At), safetext.Escape(orNone(r.Agent)),
						safetext.Escape(r.Reason), reviewedText(r.Reviewed))
				}
			}), err
		}
		rows, err := s.Conflicts(ctx, f.all, f.prefix, 0, f.limit)
		if rows == nil {
			rows = []ledger.ConflictRow{}
		}
		return ok(rows, func(w io.Writer) {
			for _, r := range rows {
				fmt.Fprintf(w, "conflict %-4d %-40s %s  agent %s: differs in %s (stored %s, attempted %s)%s\n", r.ID, safetext.Escape(r.Key), ts(r.At),
					safetext.Escape(orNone(r.Agent)), orNone(r.Differs), r.StoredSHA256[:12], r.AttemptSHA[:12], reviewedText(r.Reviewed))
			}
		}), err
	})
}

func reviewedText(reviewed bool) string {
	if reviewed {
		return " (reviewed)"
	}
	return ""
}

func runDecide(decision ledger.DecisionKind) func(context.Context, *cmdCtx, *decideFlags) (int, error) {
	return func(ctx context.Context, c *cmdCtx, f *decideFlags) (int, error) {
		key, err := c.key()
		if err != nil {
			return 0, err
		}
		if decision == ledger.DecisionRejected && strings.TrimSpace(f.reason) == "" {
			return 0, usagef("--reason is required to reject")
		}
		op := f.claimed(c)
		if err := ledger.CheckDecisionInput(key, op, decision, f.reason); err != nil {
			return 0, err
		}
		return f.asOperator(ctx, c, func(s Ledger) (answer, error) {
			decide := s.Approve
			if decision == ledger.DecisionRejected {
				decide = s.Reject
			}
			d, err := decide(ctx, key, op, f.reason)
			return ok(d, func(w io.Writer) {
				fmt.Fprintf(w, "%s: %s by %s, %s", key, d.Decision, safetext.Escape(d.Operator), safetext.Escape(d.Proof.String()))
				if d.State == ledger.StatePending {
					fmt.Fprintf(w, "; %d of %d approvals, still pending", d.Approvals, d.Approvers)
				}
				fmt.Fprintln(w)
			}), err
		})
	}
}

func runReconcile(ctx context.Context, c *cmdCtx, f *reconcileFlags) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	if f.note == "" {
		return 0, usagef("--note is required")
	}
	result, op := ledger.Result(f.result), f.claimed(c)
	if err := ledger.CheckReconcileInput(key, result, op, f.note); err != nil {
		return 0, err
	}
	return f.asOperator(ctx, c, func(s Ledger) (answer, error) {
		r, err := s.Reconcile(ctx, key, result, op, f.note)
		return ok(r, func(w io.Writer) {
			fmt.Fprintf(w, "%s: reconciled %s by %s, %s\n", key, r.Result, safetext.Escape(r.Operator), safetext.Escape(r.Proof.String()))
			if r.Disagrees {
				fmt.Fprintln(w, "a late report disagrees with this result: flagged for review")
			}
		}), err
	})
}

func runPolicySet(ctx context.Context, c *cmdCtx, f *policySetFlags) (int, error) {
	if len(c.pos) != 1 {
		return 0, usagef("expected exactly one PATTERN argument")
	}
	mode, err := approvals.ParseMode(f.mode)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ledger.ErrInvalidInput, err)
	}
	ttl := f.ttl
	switch {
	case mode != approvals.Approval:
		ttl = 0
	case ttl == 0:
		return 0, fmt.Errorf("%w: a TTL is between %s and %s (got 0)", ledger.ErrInvalidInput, ledger.MinTTL, ledger.MaxTTL)
	}
	rule := approvals.Rule{Pattern: c.pos[0], Mode: mode, TTL: ttl, Approvers: f.approvers, Condition: f.condition, Priority: f.priority}
	if rule.Approvers < 1 {
		return 0, fmt.Errorf("%w: --approvers is between 1 and %d (got %d)", ledger.ErrInvalidInput, approvals.MaxApprovers, rule.Approvers)
	}
	op := f.claimed(c)
	if err := ledger.CheckPolicyInput(rule, op); err != nil {
		return 0, err
	}
	warnings := conditionWarnings(rule.Condition)
	return f.asOperator(ctx, c, func(s Ledger) (answer, error) {
		r, err := s.SetPolicy(ctx, rule, op)
		if err == nil && len(warnings) > 0 {
			// What an action of this pattern that sends none of the
			// fields gets now, under every rule in force.
			kind := strings.NewReplacer("*", "x", "?", "x").Replace(r.Pattern)
			if d, ex, terr := s.PolicyTest(ctx, approvals.Facts{Kind: kind}); terr == nil && ex.FailedRule != 0 {
				what := string(d.Mode)
				if d.Mode == approvals.Approval {
					what = fmt.Sprintf("approval by %d operator(s)", d.Approvers)
				}
				warnings = append(warnings, fmt.Sprintf("an action of kind %s that sends none of them gets %s now (rule %d)", kind, what, ex.RuleID))
			}
		}
		j := ruleJSON(r)
		if len(warnings) > 0 {
			j["warnings"] = warnings
		}
		return ok(j, func(w io.Writer) {
			fmt.Fprintf(w, "rule %d: %s%s -> %s%s\n", r.ID, safetext.Escape(r.Pattern), condText(r), r.Mode, ttlText(r))
			for _, m := range warnings {
				fmt.Fprintln(w, "warning: "+safetext.Escape(m))
			}
		}), err
	})
}

// callerAsserted lists what a rule's condition reads that the caller
// asserts (docs/policy.md), for policy list.
func callerAsserted(cond string) []string {
	if cond == "" {
		return nil
	}
	c, err := approvals.CompileCondition(cond)
	if err != nil {
		return nil
	}
	return c.CallerAsserted()
}

// localZones lists where a rule's condition names the zone "Local" or
// "" (a rule stored before policy set refused them).
func localZones(cond string) []string {
	if cond == "" {
		return nil
	}
	c, err := approvals.CompileCondition(cond)
	if err != nil {
		return nil
	}
	return c.LocalZones()
}

// conditionWarnings says, for each field a condition reads without a
// has() that tests it, what an action that does not send it gets: the
// condition fails closed (SPEC 10).
func conditionWarnings(cond string) []string {
	if cond == "" {
		return nil
	}
	c, err := approvals.CompileCondition(cond)
	if err != nil {
		return nil
	}
	var out []string
	for _, field := range c.Unguarded() {
		out = append(out, fmt.Sprintf("the condition reads %s without has(%s): an action that does not send it gets the most restrictive outcome of this rule "+
			"and every rule after it for its kind (deny, then approval with the highest quorum, then auto; policy test shows which); "+
			"write has(%s) && ... to make it optional", field, field, field))
	}
	return out
}

func ttlText(r approvals.Rule) string {
	if r.Mode != approvals.Approval {
		return ""
	}
	if r.Approvers > 1 {
		return fmt.Sprintf(" (ttl %s, %d approvers)", r.TTL, r.Approvers)
	}
	return " (ttl " + r.TTL.String() + ")"
}

func ruleJSON(r approvals.Rule) map[string]any {
	j := map[string]any{"id": r.ID, "pattern": r.Pattern, "mode": r.Mode, "ttl_seconds": int64(r.TTL.Seconds()), "approvers": max(r.Approvers, 1)}
	if r.Condition != "" {
		j["condition"] = r.Condition
	}
	if r.Priority != 0 {
		j["priority"] = r.Priority
	}
	return j
}

// condText is a rule's priority and condition as policy list shows them.
func condText(r approvals.Rule) string {
	s := ""
	if r.Priority != 0 {
		s += fmt.Sprintf(" [priority %d]", r.Priority)
	}
	if r.Condition != "" {
		s += " if " + safetext.Escape(r.Condition)
	}
	return s
}

// explainText is why a rule decided, for guard's and status's text.
func explainText(ex *approvals.Explain) string {
	if ex == nil {
		return ""
	}
	s := fmt.Sprintf("rule %d (%s)", ex.RuleID, safetext.Escape(ex.Pattern))
	if ex.Condition != "" {
		s += " if " + safetext.Escape(ex.Condition)
	}
	if len(ex.Read) > 0 {
		b, _ := jsonout.Marshal(ex.Read)
		s += " read " + safetext.Escape(string(b))
	}
	if ex.Error != "" && ex.FailedRule != 0 {
		s += fmt.Sprintf("; rule %d's condition failed, closed: ", ex.FailedRule) + safetext.Escape(ex.Error)
	} else if ex.Error != "" {
		s += "; condition failed, so approval: " + safetext.Escape(ex.Error)
	}
	return s
}

func runPolicyTest(ctx context.Context, c *cmdCtx, f *policyTestFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if f.kind == "" {
		return 0, usagef("--kind is required")
	}
	facts := approvals.Facts{Kind: f.kind, Target: f.target, Agent: f.agent, Body: f.body}
	if f.context != "" {
		ctxv, err := ledger.ParseContext([]byte(f.context))
		if err != nil {
			return 0, err
		}
		facts.Context = ctxv
	}
	if f.at != "" {
		t, err := time.Parse(time.RFC3339, f.at)
		if err != nil {
			return 0, fmt.Errorf("%w: --at: %v (use RFC 3339, 2026-12-04T20:30:00+01:00)", ledger.ErrInvalidInput, err)
		}
		facts.Now = t
	}
	return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		r, ex, err := s.PolicyTest(ctx, facts)
		j := ruleJSON(r)
		j["explain"], j["exit_code"] = ex, ExitOK
		return ok(j, func(w io.Writer) {
			fmt.Fprintf(w, "%s%s", r.Mode, ttlText(r))
			if ex.RuleID != 0 || ex.Error != "" {
				fmt.Fprintf(w, " by %s", explainText(&ex))
			} else {
				fmt.Fprint(w, " (no rule matches)")
			}
			fmt.Fprintln(w)
		}), err
	})
}

func runPolicyList(ctx context.Context, c *cmdCtx, _ *noFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		rules, err := s.PolicyStandings(ctx)
		out := []map[string]any{}
		for _, r := range rules {
			j := ruleJSON(r.Rule)
			j["in_force"], j["proof"] = r.InForce, r.Proof
			if r.Why != "" {
				j["why"] = r.Why
			}
			if asserted := callerAsserted(r.Condition); len(asserted) > 0 {
				j["caller_asserted"] = asserted
			}
			if local := localZones(r.Condition); len(local) > 0 {
				j["local_zones"] = local
			}
			out = append(out, j)
		}
		def := approvals.DefaultRule()
		return ok(map[string]any{"rules": out, "default": ruleJSON(def)}, func(w io.Writer) {
			for _, r := range rules {
				standing := "in force, " + r.Proof.String()
				switch {
				case r.Invalid:
					standing = "INVALID: guard refuses every kind it matches until an operator sets it again (" + r.Why + ")"
				case !r.InForce:
					standing = "NOT IN FORCE: " + r.Why
				}
				fmt.Fprintf(w, "%-30s %s%s%s  %s\n", safetext.Escape(r.Pattern), r.Mode, ttlText(r.Rule), condText(r.Rule), safetext.Escape(standing))
				if local := localZones(r.Condition); len(local) > 0 {
					fmt.Fprintf(w, "%-30s   WARNING: names the zone of the process that evaluates it (%s), which its TZ chooses: guard fails closed on it; set the rule again with an IANA zone\n", "", safetext.Escape(strings.Join(local, ", ")))
				}
				if asserted := callerAsserted(r.Condition); len(asserted) > 0 {
					fmt.Fprintf(w, "%-30s   reads the caller's assertion, not what executes: %s (action.agent is authenticated on PostgreSQL only; rules on action.body read what executes)\n", "", safetext.Escape(strings.Join(asserted, ", ")))
				}
			}
			fmt.Fprintf(w, "%-30s %s%s\n", def.Pattern, def.Mode, ttlText(def))
		}), err
	})
}

func runEpochActivate(ctx context.Context, c *cmdCtx, f *epochFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	op := f.claimed(c)
	if err := ledger.CheckEpochInput(f.epoch, op); err != nil {
		return 0, err
	}
	return f.asOperator(ctx, c, func(s Ledger) (answer, error) {
		e, err := s.ActivateEpoch(ctx, f.epoch, op)
		return epochAnswer(e), err
	})
}

func epochAnswer(e ledger.EpochInfo) answer {
	return ok(map[string]any{"epoch": e.Epoch, "operator": e.Operator, "activated_at": e.Activated, "active": e.Epoch != ""}, func(w io.Writer) {
		if e.Epoch == "" {
			fmt.Fprintln(w, "no epoch active: plain logical keys are admitted")
			return
		}
		fmt.Fprintf(w, "epoch %s activated by %s at %s\nnew work must use hsr1:%s:<logical-key>\n", e.Epoch, safetext.Escape(e.Operator), ts(e.Activated), e.Epoch)
	})
}

func runEpochShow(ctx context.Context, c *cmdCtx, f *remoteArg) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	return f.withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		e, err := s.Epoch(ctx)
		return epochAnswer(e), err
	})
}

func runVerify(ctx context.Context, c *cmdCtx, f *verifyFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	wpath, err := f.path()
	if err != nil {
		return 0, err
	}
	heads, bad, err := ledger.ReadWitness(wpath)
	if err != nil {
		return 0, err
	}
	// The shared witness guard consults is checked too, when readable.
	if wpath != ledger.SystemWitnessPath {
		shared, sbad, err := ledger.ReadWitness(ledger.SystemWitnessPath)
		if err != nil {
			// guard refuses every grant while it cannot read it.
			sbad = append(sbad, ledger.Problem{Table: "witness", Row: "shared", Rule: fmt.Sprintf("the shared witness cannot be read, and guard grants nothing until it can: %v", err)})
		}
		heads, bad = append(heads, shared...), append(bad, sbad...)
	}
	return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		p := c.progress()
		defer p.finish()
		rep, err := s.VerifyWith(ctx, p.step, heads...)
		if err != nil {
			return answer{}, err
		}
		rep.Problems = append(rep.Problems, bad...)
		var proof *ledger.ArchiveProof
		if f.archive != "" {
			p, err := proveArchive(ctx, s, f.archive)
			if err != nil {
				return answer{}, err
			}
			proof = &p
		}
		code := ExitOK
		if !rep.OK() || proof != nil && !proof.OK() {
			code = ExitError
		} else if err := f.record(c, rep.Head(), "verify"); err != nil {
			// Only a head that verified is witnessed: a witness must never
			// vouch for a chain that did not hold.
			return answer{}, err
		}
		if rep.Problems == nil {
			rep.Problems = []ledger.Problem{}
		}
		return answer{code: code, json: struct {
			ledger.VerifyReport
			Archive *ledger.ArchiveProof `json:"archive,omitempty"`
			OK      bool                 `json:"ok"`
		}{rep, proof, code == ExitOK}, text: func(w io.Writer) {
			fmt.Fprintf(w, "ledger %s\nintegrity_check: %s\nevents: %d (chain head %s)\nfacts: %d proven by their events\nintents: %d (%d retained, %d recorded outside tollgate)\nwitnessed heads checked: %d (%s)\noperators file: %s\n",
				rep.LedgerID, rep.Integrity, rep.Events, rep.ChainHead, rep.Facts, rep.Intents, rep.Payloads, rep.External, rep.Witnessed, safetext.Escape(wpath), safetext.Escape(rep.Anchor))
			for _, p := range rep.Problems {
				fmt.Fprintf(w, "PROBLEM %s\n", safetext.Escape(p.String()))
			}
			for _, t := range rep.Unreadable {
				fmt.Fprintf(w, "not proven: %s rows (this role may not read them; the events committing them were proven)\n", t)
			}
			if proof != nil {
				writeArchiveProof(w, *proof)
			}
			if code == ExitOK {
				fmt.Fprintln(w, "ok")
			}
		}}, nil
	})
}

func runMigrate(ctx context.Context, c *cmdCtx, f *migrateFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if f.from != "" {
		return copyLedger(ctx, c, f.from)
	}
	return withLedger(ctx, c, writing, func(s Ledger) (answer, error) {
		h, err := s.Head(ctx)
		v := ledger.SchemaVersionOf(s.Path())
		return ok(map[string]any{"ledger": s.Path(), "ledger_id": h.LedgerID, "schema_version": v, "exit_code": ExitOK}, func(w io.Writer) {
			fmt.Fprintf(w, "ledger %s (id %s) is at schema version %d\n", safetext.Escape(s.Path()), h.LedgerID, v)
		}), err
	})
}

// copyLedger is 'migrate --from FILE': the SQLite ledger FILE copied into
// the empty PostgreSQL database --db names, proven by the same head.
func copyLedger(ctx context.Context, c *cmdCtx, from string) (int, error) {
	dst, err := c.ledgerPath()
	if err != nil {
		return 0, err
	}
	h, err := ledger.CopyToPostgres(ctx, from, dst)
	if err != nil {
		return 0, err
	}
	c.print(ok(map[string]any{"from": from, "ledger_id": h.LedgerID, "events": h.Seq, "chain_head": h.Hash,
		"schema_version": ledger.SchemaVersionOf(dst), "exit_code": ExitOK}, func(w io.Writer) {
		fmt.Fprintf(w, "copied %s (id %s, %d events, head %s) into the PostgreSQL ledger; verify on the copy reports the same head\n",
			safetext.Escape(from), h.LedgerID, h.Seq, h.Hash)
	}))
	return ExitOK, nil
}

func runExport(ctx context.Context, c *cmdCtx, f *exportFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	// Export streams its lines itself, its last line included: the answer
	// prints nothing more. Evidence its own pass could not prove exits 1,
	// with a word on stderr, so a script that keeps only the lines still
	// learns of it.
	return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		p := c.progress()
		defer p.finish()
		exp := s.ExportWith
		if f.archives {
			a, ok := s.(interface {
				ExportArchives(context.Context, io.Writer, func(int)) (ledger.ExportEnd, error)
			})
			if !ok {
				return answer{}, fmt.Errorf("%w: this ledger cannot read archives", ledger.ErrInvalidInput)
			}
			exp = a.ExportArchives
		}
		end, err := exp(ctx, c.stdout, p.exported)
		if err == nil && !end.ChainVerified {
			fmt.Fprintf(c.env.Stderr, "export: the evidence did not prove itself (%d problem(s), named on its last line); run tollgate verify\n", end.ProblemCount)
			return answer{code: ExitError}, nil
		}
		return answer{}, err
	})
}

func runBackup(ctx context.Context, c *cmdCtx, f *witnessArg) (int, error) {
	if len(c.pos) != 1 {
		return 0, usagef("expected exactly one FILE argument")
	}
	path, err := c.ledgerPath()
	if err != nil {
		return 0, err
	}
	// A backup reads first: the ledger must exist at this build's schema.
	s, err := ledger.Open(ctx, path, ledger.Options{Existing: true})
	if err != nil {
		return 0, err
	}
	return runWith(c, s, func(s Ledger) (answer, error) {
		h, err := s.Backup(ctx, c.pos[0])
		if err == nil {
			err = f.record(c, h, "backup")
		}
		return ok(map[string]any{"backup": c.pos[0], "ok": true, "ledger_id": h.LedgerID, "events": h.Seq, "chain_head": h.Hash, "exit_code": ExitOK}, func(w io.Writer) {
			fmt.Fprintf(w, "backup written to %s (%d events, head %s)\n", safetext.Escape(c.pos[0]), h.Seq, h.Hash)
		}), err
	})
}
