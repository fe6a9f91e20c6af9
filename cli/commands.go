package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
	"github.com/tollgate-dev/tollgate/safetext"
)

var commandOrder = []string{"console", "demo", "record", "guard", "report", "status", "list", "approve", "reject",
	"reconcile", "policy set", "policy list", "epoch activate", "epoch show", "operator init", "operators add", "operators list",
	"operators remove", "verify", "export", "backup", "migrate"}

func commands() map[string]command {
	cs := []command{
		{name: "console", args: "[--operator NAME] [--key FILE] [--read-only] [--witness FILE]", summary: "open the operator console", run: runConsole,
			flags: func(fs *flag.FlagSet, c *cmdCtx) {
				operatorFlags(fs, c)
				c.b(fs, "read-only", "disable every decision")
				witnessFlag(fs, c)
			}},
		{name: "demo", args: "[--db PATH]", summary: "seed a scratch ledger, run simulated agents, open the console", run: runDemo,
			flags: func(fs *flag.FlagSet, c *cmdCtx) {
				c.s(fs, "operator", "operator name (default $TOLLGATE_OPERATOR, else the login name)")
				c.d(fs, "headless", 0, "run only the simulated agents for this long, without the console")
			}},
		{name: "record", args: "KEY --kind K --target T (--body B | --body-file F)", summary: "record an intent only", run: runRecord, flags: payloadFlags},
		{name: "guard", args: "KEY --kind K --target T (--body B | --body-file F) [--agent A] [--lease D] [--wait D]",
			summary: "record if new, apply policy, request approval once, issue a permit once", run: runGuard,
			flags: func(fs *flag.FlagSet, c *cmdCtx) {
				payloadFlags(fs, c)
				c.d(fs, "lease", ledger.DefaultLease, "how long the permit holder has to report")
				c.d(fs, "wait", 0, "poll until the answer is no longer 75 (retry later) or this long passes")
			}},
		{name: "report", args: "KEY --permit ID --outcome succeeded|failed|unknown [--ref R] [--latency D]", summary: "report the outcome of a permitted action", run: runReport,
			flags: func(fs *flag.FlagSet, c *cmdCtx) {
				c.s(fs, "permit", "the permit id guard returned")
				c.s(fs, "outcome", "succeeded, failed or unknown")
				c.s(fs, "ref", "a safe reference to the external effect (never the body)")
				c.d(fs, "latency", 0, "how long the action took")
			}},
		{name: "status", args: "KEY", summary: "show everything known about a key", run: runStatus},
		{name: "list", args: "[--state S] [--agent A] [--kind K] [--prefix P] [--epoch E] [--limit N]", summary: "list actions, newest first", run: runList,
			flags: func(fs *flag.FlagSet, c *cmdCtx) {
				c.s(fs, "state", "only this state")
				c.s(fs, "agent", "only this agent")
				c.s(fs, "kind", "only this kind")
				c.s(fs, "prefix", "only logical keys with this prefix")
				c.s(fs, "epoch", "only keys under this epoch")
				c.ints["limit"] = fs.Int("limit", 100, "at most this many rows (max 10000)")
			}},
		{name: "approve", args: "KEY [--reason R] [--operator NAME] [--key FILE]", summary: "approve a pending action", run: runDecide(true), flags: decideFlags},
		{name: "reject", args: "KEY --reason R [--operator NAME] [--key FILE]", summary: "reject a pending action", run: runDecide(false), flags: decideFlags},
		{name: "reconcile", args: "KEY --result executed|not-executed --note N [--operator NAME] [--key FILE]", summary: "settle an uncertain action", run: runReconcile,
			flags: func(fs *flag.FlagSet, c *cmdCtx) {
				c.s(fs, "result", "executed or not-executed")
				c.s(fs, "note", "what the operator checked (required)")
				operatorFlags(fs, c)
			}},
		{name: "policy set", args: "PATTERN --mode auto|approval|deny [--ttl D] [--approvers N]", summary: "set the rule for a kind or kind glob", run: runPolicySet,
			flags: func(fs *flag.FlagSet, c *cmdCtx) {
				c.s(fs, "mode", "auto, approval or deny")
				c.d(fs, "ttl", approvals.DefaultTTL, "approval deadline for mode approval")
				c.ints["approvers"] = fs.Int("approvers", 1, fmt.Sprintf("how many distinct operators must approve (1 to %d; mode approval)", approvals.MaxApprovers))
				operatorFlags(fs, c)
			}},
		{name: "policy list", summary: "list the rules in force", run: runPolicyList},
		{name: "epoch activate", args: "[--epoch UUID]", summary: "start a new operator epoch; new work must use hsr1:<epoch>:<key>", run: runEpochActivate,
			flags: func(fs *flag.FlagSet, c *cmdCtx) {
				c.s(fs, "epoch", "use this lowercase UUID instead of a random one")
				operatorFlags(fs, c)
			}},
		{name: "epoch show", summary: "show the active epoch", run: runEpochShow},
		{name: "operator init", args: "[--key FILE]", summary: "create this operator's Ed25519 key (kept if one exists) and print its public line", run: runOperatorInit, flags: keyFlag},
		{name: "operators add", args: "NAME PUBKEY [--key FILE]", summary: "register an operator; the first makes the ledger signed, later ones are signed by an operator", run: runOperatorsAdd, flags: keyFlag},
		{name: "operators list", summary: "list the registered operators and their keys", run: runOperatorsList},
		{name: "operators remove", args: "NAME [--key FILE]", summary: "withdraw an operator's key (signed by an operator)", run: runOperatorsRemove, flags: keyFlag},
		{name: "verify", args: "[--witness FILE]", summary: "prove every fact, the hash chain, payload digests and witnessed heads", run: runVerify, flags: witnessFlag},
		{name: "export", summary: "write the evidence of every action as JSON Lines", run: runExport},
		{name: "backup", args: "FILE [--witness FILE]", summary: "write a consistent copy of the live ledger (never replaces FILE)", run: runBackup, flags: witnessFlag},
		{name: "migrate", summary: "create the ledger or upgrade its schema", run: runMigrate},
	}
	m := map[string]command{}
	for _, c := range cs {
		m[c.name] = c
	}
	return m
}

func witnessFlag(fs *flag.FlagSet, c *cmdCtx) {
	c.s(fs, "witness", "the witness file of chain heads (default $XDG_STATE_HOME/tollgate/witness)")
}

// witnessPath is --witness, else the XDG default.
func (c *cmdCtx) witnessPath() (string, error) {
	if w := c.str("witness"); w != "" {
		return w, nil
	}
	return ledger.DefaultWitnessPath()
}

// witness records a head this process saw in the witness file.
func (c *cmdCtx) witness(h ledger.Head, by string) error {
	path, err := c.witnessPath()
	if err != nil {
		return err
	}
	return ledger.AppendWitness(path, h, by, time.Now())
}

func decideFlags(fs *flag.FlagSet, c *cmdCtx) {
	c.s(fs, "reason", "why (required to reject)")
	operatorFlags(fs, c)
}

func noArgs(c *cmdCtx) error {
	if len(c.pos) > 0 {
		return usagef("unexpected argument %q", safetext.Escape(c.pos[0]))
	}
	return nil
}

func runConsole(ctx context.Context, c *cmdCtx) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if c.env.Console == nil {
		return ExitError, errors.New("this build has no console")
	}
	if err := ledger.CheckReviewInput(c.claimedOperator(), ""); err != nil {
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
	if err := c.witness(h, "console"); err != nil {
		return 0, err
	}
	opt := ConsoleOptions{DB: s.Path(), Operator: c.claimedOperator(), ReadOnly: *c.bools["read-only"],
		Ledger: ledger.Options{ReadOnly: *c.bools["read-only"], Existing: true, Operator: c.loginName()}}
	if !opt.ReadOnly {
		if opt.Ledger.Anchor, err = c.anchor(); err != nil {
			return 0, err
		}
		if opt.Ledger.Signers, err = c.signers(); err != nil {
			return 0, err
		}
		// A passphrase is asked before the console takes the terminal.
		for _, sg := range opt.Ledger.Signers {
			if set.Signed {
				if err := opkeys.UnlockNow(sg); err != nil {
					return 0, err
				}
			}
		}
	}
	return ExitOK, c.env.Console(ctx, opt)
}

func runDemo(ctx context.Context, c *cmdCtx) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if c.env.Demo == nil {
		return ExitError, errors.New("this build has no demo")
	}
	op := c.claimedOperator()
	if op == "" {
		op = c.loginName()
	}
	return ExitOK, c.env.Demo(ctx, DemoOptions{DB: c.db, Operator: op, Headless: *c.durs["headless"]})
}

func runRecord(ctx context.Context, c *cmdCtx) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	p, err := c.payload()
	if err != nil {
		return 0, err
	}
	opt := ledger.RecordOptions{Agent: c.str("agent"), Redact: *c.bools["redact"]}
	if _, err := ledger.CheckRecordInput(key, p, opt); err != nil {
		return 0, err
	}
	s, err := c.open(ctx, false)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	in, err := s.Record(ctx, key, p, opt)
	if err != nil {
		return 0, err
	}
	out := map[string]any{"key": key, "logical_key": in.Key.Logical, "epoch": in.Key.Epoch, "payload_sha256": in.SHA256,
		"created": in.Created, "replayed": in.Replayed, "state": in.State, "redacted": in.Redacted}
	if c.json {
		writeJSON(c.stdout, out)
	} else {
		verb := "recorded"
		if in.Replayed {
			verb = "already recorded (replayed)"
		}
		fmt.Fprintf(c.stdout, "%s: %s, payload sha256 %s, state %s\n", key, verb, in.SHA256, in.State)
	}
	return ExitOK, nil
}

func verdictExit(v ledger.Verdict) int {
	switch v {
	case ledger.Permitted:
		return ExitOK
	case ledger.RetryLater:
		return ExitRetry
	case ledger.Denied:
		return ExitDenied
	case ledger.Uncertain:
		return ExitUncertain
	case ledger.Settled:
		return ExitSettled
	}
	return ExitError
}

func runGuard(ctx context.Context, c *cmdCtx) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	p, err := c.payload()
	if err != nil {
		return 0, err
	}
	wait := *c.durs["wait"]
	if wait < 0 || wait > 24*time.Hour {
		return 0, fmt.Errorf("%w: --wait is between 0 (no waiting) and 24h (got %s)", ledger.ErrInvalidInput, wait)
	}
	opt := ledger.GuardOptions{Agent: c.str("agent"), Redact: *c.bools["redact"], Lease: *c.durs["lease"]}
	if opt.Lease == 0 {
		return 0, fmt.Errorf("%w: a lease is between %s and %s (got 0)", ledger.ErrInvalidInput, ledger.MinLease, ledger.MaxLease)
	}
	if _, err := ledger.CheckGuardInput(key, p, opt); err != nil {
		return 0, err
	}
	s, err := c.open(ctx, false)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	deadline := time.Now().Add(wait)
	backoff := 250 * time.Millisecond
	var a ledger.Answer
	for {
		a, err = s.Guard(ctx, key, p, opt)
		if err != nil {
			return 0, err
		}
		if a.Verdict != ledger.RetryLater || !time.Now().Add(backoff).Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff = backoff * 3 / 2
		}
	}
	code := verdictExit(a.Verdict)
	if c.json {
		writeJSON(c.stdout, struct {
			ledger.Answer
			ExitCode int `json:"exit_code"`
		}{a, code})
		return code, nil
	}
	fmt.Fprintf(c.stdout, "%s: %s (%s)", key, a.State, a.Verdict)
	if a.Replayed {
		fmt.Fprint(c.stdout, ", replayed")
	}
	if a.PermitID != "" {
		fmt.Fprintf(c.stdout, ", permit %s until %s: execute now, then report", a.PermitID, a.LeaseUntil.Format(time.RFC3339))
	}
	if a.Reason != "" {
		fmt.Fprintf(c.stdout, ": %s", safetext.Escape(a.Reason))
	}
	if a.SafeNewKey {
		fmt.Fprint(c.stdout, "; a new reviewed operation needs a new key")
	}
	fmt.Fprintln(c.stdout)
	return code, nil
}

func runReport(ctx context.Context, c *cmdCtx) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	if c.str("permit") == "" {
		return 0, usagef("--permit is required")
	}
	o, err := ledger.ParseOutcome(c.str("outcome"))
	if err != nil {
		return 0, err
	}
	opt := ledger.ReportOptions{Ref: c.str("ref"), Latency: *c.durs["latency"]}
	if err := ledger.CheckReportInput(key, o, opt); err != nil {
		return 0, err
	}
	s, err := c.open(ctx, false)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	r, err := s.Report(ctx, key, c.str("permit"), o, opt)
	if err != nil {
		return 0, err
	}
	code := ExitOK
	switch {
	case r.State == ledger.StateReconciled:
		code = ExitSettled
	case r.Late:
		code = ExitUncertain
	}
	if c.json {
		writeJSON(c.stdout, struct {
			ledger.ReportAnswer
			ExitCode int `json:"exit_code"`
		}{r, code})
		return code, nil
	}
	fmt.Fprintf(c.stdout, "%s: reported %s, state %s", key, r.Outcome, r.State)
	if r.Replayed {
		fmt.Fprint(c.stdout, " (replayed)")
	}
	if r.Late {
		fmt.Fprint(c.stdout, "; late: kept as evidence, an operator reconciles")
	}
	if r.Disagrees {
		fmt.Fprint(c.stdout, "; disagrees with the reconciliation: flagged for review")
	}
	fmt.Fprintln(c.stdout)
	return code, nil
}

func runStatus(ctx context.Context, c *cmdCtx) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	s, err := c.open(ctx, true)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	d, err := s.Status(ctx, key)
	if err != nil {
		return 0, err
	}
	if c.json {
		writeJSON(c.stdout, d)
		return ExitOK, nil
	}
	w := c.stdout
	fmt.Fprintf(w, "key:          %s\nlogical key:  %s\nepoch:        %s\nstate:        %s\n", key, d.Logical, orNone(d.Epoch), d.State)
	fmt.Fprintf(w, "agent:        %s\nkind:         %s\npayload:      sha256 %s", safetext.Escape(orNone(d.Agent)), safetext.Escape(orNone(d.Kind)), d.SHA256)
	switch {
	case !d.Retained:
		fmt.Fprint(w, " (recorded outside tollgate, body not retained)")
	case d.Redacted:
		fmt.Fprint(w, " (body withheld)")
	}
	fmt.Fprintln(w)
	if d.Policy != "" {
		fmt.Fprintf(w, "policy:       %s (rule %s)\n", d.Policy, safetext.Escape(d.PolicyPat))
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
	return ExitOK, nil
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

func runList(ctx context.Context, c *cmdCtx) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	f := ledger.Filter{Agent: c.str("agent"), Kind: c.str("kind"), KeyPrefix: c.str("prefix"), Epoch: c.str("epoch"), Limit: *c.ints["limit"]}
	if f.Limit < 1 || f.Limit > 10000 {
		return 0, fmt.Errorf("%w: --limit is between 1 and 10000 (got %d)", ledger.ErrInvalidInput, f.Limit)
	}
	if st := c.str("state"); st != "" {
		var err error
		if f.State, err = ledger.ParseState(st); err != nil {
			return 0, err
		}
	}
	s, err := c.open(ctx, true)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	rows, err := s.List(ctx, f)
	if err != nil {
		return 0, err
	}
	if c.json {
		if rows == nil {
			rows = []ledger.Row{}
		}
		writeJSON(c.stdout, rows)
		return ExitOK, nil
	}
	for _, r := range rows {
		fmt.Fprintf(c.stdout, "%-11s %-40s %-16s %s\n", r.State, r.Key, safetext.Escape(r.Kind), safetext.Escape(r.Agent))
	}
	return ExitOK, nil
}

func runDecide(approve bool) func(ctx context.Context, c *cmdCtx) (int, error) {
	return func(ctx context.Context, c *cmdCtx) (int, error) {
		key, err := c.key()
		if err != nil {
			return 0, err
		}
		if !approve && strings.TrimSpace(c.str("reason")) == "" {
			return 0, usagef("--reason is required to reject")
		}
		decision := ledger.DecisionRejected
		if approve {
			decision = ledger.DecisionApproved
		}
		if err := ledger.CheckDecisionInput(key, c.claimedOperator(), decision, c.str("reason")); err != nil {
			return 0, err
		}
		s, err := c.openOperator(ctx)
		if err != nil {
			return 0, err
		}
		defer s.Close()
		var d ledger.Decision
		if approve {
			d, err = s.Approve(ctx, key, c.claimedOperator(), c.str("reason"))
		} else {
			d, err = s.Reject(ctx, key, c.claimedOperator(), c.str("reason"))
		}
		if err != nil {
			return 0, err
		}
		if c.json {
			writeJSON(c.stdout, d)
		} else {
			fmt.Fprintf(c.stdout, "%s: %s by %s, %s", key, d.Decision, safetext.Escape(d.Operator), safetext.Escape(d.Proof.String()))
			if d.State == ledger.StatePending {
				fmt.Fprintf(c.stdout, "; %d of %d approvals, still pending", d.Approvals, d.Approvers)
			}
			fmt.Fprintln(c.stdout)
		}
		return ExitOK, nil
	}
}

func runReconcile(ctx context.Context, c *cmdCtx) (int, error) {
	key, err := c.key()
	if err != nil {
		return 0, err
	}
	if c.str("note") == "" {
		return 0, usagef("--note is required")
	}
	result := ledger.Result(c.str("result"))
	if err := ledger.CheckReconcileInput(key, result, c.claimedOperator(), c.str("note")); err != nil {
		return 0, err
	}
	s, err := c.openOperator(ctx)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	r, err := s.Reconcile(ctx, key, result, c.claimedOperator(), c.str("note"))
	if err != nil {
		return 0, err
	}
	if c.json {
		writeJSON(c.stdout, r)
	} else {
		fmt.Fprintf(c.stdout, "%s: reconciled %s by %s, %s\n", key, r.Result, safetext.Escape(r.Operator), safetext.Escape(r.Proof.String()))
		if r.Disagrees {
			fmt.Fprintln(c.stdout, "a late report disagrees with this result: flagged for review")
		}
	}
	return ExitOK, nil
}

func runPolicySet(ctx context.Context, c *cmdCtx) (int, error) {
	if len(c.pos) != 1 {
		return 0, usagef("expected exactly one PATTERN argument")
	}
	mode, err := approvals.ParseMode(c.str("mode"))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ledger.ErrInvalidInput, err)
	}
	ttl := *c.durs["ttl"]
	switch {
	case mode != approvals.Approval:
		ttl = 0
	case ttl == 0:
		return 0, fmt.Errorf("%w: a TTL is between %s and %s (got 0)", ledger.ErrInvalidInput, ledger.MinTTL, ledger.MaxTTL)
	}
	rule := approvals.Rule{Pattern: c.pos[0], Mode: mode, TTL: ttl, Approvers: *c.ints["approvers"]}
	if rule.Approvers < 1 {
		return 0, fmt.Errorf("%w: --approvers is between 1 and %d (got %d)", ledger.ErrInvalidInput, approvals.MaxApprovers, rule.Approvers)
	}
	if err := ledger.CheckPolicyInput(rule, c.claimedOperator()); err != nil {
		return 0, err
	}
	s, err := c.openOperator(ctx)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	r, err := s.SetPolicy(ctx, rule, c.claimedOperator())
	if err != nil {
		return 0, err
	}
	if c.json {
		writeJSON(c.stdout, ruleJSON(r))
	} else {
		fmt.Fprintf(c.stdout, "rule %d: %s -> %s%s\n", r.ID, safetext.Escape(r.Pattern), r.Mode, ttlText(r))
	}
	return ExitOK, nil
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
	return map[string]any{"id": r.ID, "pattern": r.Pattern, "mode": r.Mode, "ttl_seconds": int64(r.TTL.Seconds()), "approvers": max(r.Approvers, 1)}
}

func runPolicyList(ctx context.Context, c *cmdCtx) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	s, err := c.open(ctx, true)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	rules, err := s.Policies(ctx)
	if err != nil {
		return 0, err
	}
	if c.json {
		out := []map[string]any{}
		for _, r := range rules {
			out = append(out, ruleJSON(r))
		}
		writeJSON(c.stdout, map[string]any{"rules": out, "default": ruleJSON(approvals.DefaultRule())})
		return ExitOK, nil
	}
	for _, r := range rules {
		fmt.Fprintf(c.stdout, "%-30s %s%s\n", safetext.Escape(r.Pattern), r.Mode, ttlText(r))
	}
	def := approvals.DefaultRule()
	fmt.Fprintf(c.stdout, "%-30s %s%s\n", def.Pattern, def.Mode, ttlText(def))
	return ExitOK, nil
}

func runEpochActivate(ctx context.Context, c *cmdCtx) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if err := ledger.CheckEpochInput(c.str("epoch"), c.claimedOperator()); err != nil {
		return 0, err
	}
	s, err := c.openOperator(ctx)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	e, err := s.ActivateEpoch(ctx, c.str("epoch"), c.claimedOperator())
	if err != nil {
		return 0, err
	}
	return printEpoch(c, e), nil
}

func printEpoch(c *cmdCtx, e ledger.EpochInfo) int {
	if c.json {
		writeJSON(c.stdout, map[string]any{"epoch": e.Epoch, "operator": e.Operator, "activated_at": e.Activated, "active": e.Epoch != ""})
		return ExitOK
	}
	if e.Epoch == "" {
		fmt.Fprintln(c.stdout, "no epoch active: plain logical keys are admitted")
		return ExitOK
	}
	fmt.Fprintf(c.stdout, "epoch %s activated by %s at %s\nnew work must use hsr1:%s:<logical-key>\n", e.Epoch, safetext.Escape(e.Operator), ts(e.Activated), e.Epoch)
	return ExitOK
}

func runEpochShow(ctx context.Context, c *cmdCtx) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	s, err := c.open(ctx, true)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	e, err := s.Epoch(ctx)
	if err != nil {
		return 0, err
	}
	return printEpoch(c, e), nil
}

func runVerify(ctx context.Context, c *cmdCtx) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	wpath, err := c.witnessPath()
	if err != nil {
		return 0, err
	}
	heads, bad, err := ledger.ReadWitness(wpath)
	if err != nil {
		return 0, err
	}
	s, err := c.open(ctx, true)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	rep, err := s.Verify(ctx, heads...)
	if err != nil {
		return 0, err
	}
	rep.Problems = append(rep.Problems, bad...)
	code := ExitOK
	if !rep.OK() {
		code = ExitError
	} else if err := c.witness(rep.Head(), "verify"); err != nil {
		// Only a head that verified is witnessed: a witness must never
		// vouch for a chain that did not hold.
		return 0, err
	}
	if c.json {
		if rep.Problems == nil {
			rep.Problems = []ledger.Problem{}
		}
		writeJSON(c.stdout, struct {
			ledger.VerifyReport
			OK bool `json:"ok"`
		}{rep, rep.OK()})
		return code, nil
	}
	fmt.Fprintf(c.stdout, "ledger %s\nintegrity_check: %s\nevents: %d (chain head %s)\nfacts: %d proven by their events\nintents: %d (%d retained, %d recorded outside tollgate)\nwitnessed heads checked: %d (%s)\n",
		rep.LedgerID, rep.Integrity, rep.Events, rep.ChainHead, rep.Facts, rep.Intents, rep.Payloads, rep.External, rep.Witnessed, safetext.Escape(wpath))
	for _, p := range rep.Problems {
		fmt.Fprintf(c.stdout, "PROBLEM %s\n", safetext.Escape(p.String()))
	}
	if rep.OK() {
		fmt.Fprintln(c.stdout, "ok")
	}
	return code, nil
}

func runMigrate(ctx context.Context, c *cmdCtx) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	s, err := c.open(ctx, false)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	h, err := s.Head(ctx)
	if err != nil {
		return 0, err
	}
	if c.json {
		writeJSON(c.stdout, map[string]any{"ledger": s.Path(), "ledger_id": h.LedgerID, "schema_version": ledger.SchemaVersion(), "exit_code": ExitOK})
	} else {
		fmt.Fprintf(c.stdout, "ledger %s (id %s) is at schema version %d\n", safetext.Escape(s.Path()), h.LedgerID, ledger.SchemaVersion())
	}
	return ExitOK, nil
}

func runExport(ctx context.Context, c *cmdCtx) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	s, err := c.open(ctx, true)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	_, err = s.Export(ctx, c.stdout)
	return ExitOK, err
}

func runBackup(ctx context.Context, c *cmdCtx) (int, error) {
	if len(c.pos) != 1 {
		return 0, usagef("expected exactly one FILE argument")
	}
	path, err := c.ledgerPath()
	if err != nil {
		return 0, err
	}
	s, err := ledger.Open(ctx, path, ledger.Options{Existing: true})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	h, err := s.Backup(ctx, c.pos[0])
	if err != nil {
		return 0, err
	}
	if err := c.witness(h, "backup"); err != nil {
		return 0, err
	}
	if c.json {
		writeJSON(c.stdout, map[string]any{"backup": c.pos[0], "ok": true, "ledger_id": h.LedgerID, "events": h.Seq, "chain_head": h.Hash, "exit_code": ExitOK})
	} else {
		fmt.Fprintf(c.stdout, "backup written to %s (%d events, head %s)\n", safetext.Escape(c.pos[0]), h.Seq, h.Hash)
	}
	return ExitOK, nil
}
