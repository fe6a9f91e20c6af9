package ui

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/hostguard"
	"github.com/tollgate-dev/tollgate/internal/testdata"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// pkgDir is the package folder; tests chdir into their ledger's folder so
// that the status bar shows a stable relative path.
var pkgDir string

func TestMain(m *testing.M) {
	os.Exit(hostguard.Main(func(p hostguard.Places) {
		ledger.SystemWitnessPath, opkeys.SystemAnchorPath = p.Witness, p.Anchor
	}, func() int {
		if path := os.Getenv(lockHolderEnv); path != "" {
			return holdLockChild(path) // this binary re-run as another writer
		}
		lipgloss.SetColorProfile(termenv.Ascii)
		pkgDir, _ = os.Getwd()
		return m.Run()
	}))
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)

// requireGolden compares a frame with testdata/<test>.golden in the
// package folder, through the golden package (its -update flag rewrites).
// Random permit ids are masked; the fixed test epoch (version 4 shaped,
// 11111111-...) is kept.
func requireGolden(t *testing.T, view string) {
	t.Helper()
	view = uuidRE.ReplaceAllStringFunc(view, func(u string) string {
		if strings.HasPrefix(u, "11111111-") {
			return u
		}
		return "<permit-id-xxxx-xxxx-xxxx-xxxxxxxxxxxx>"[:36]
	})
	wd, _ := os.Getwd()
	if err := os.Chdir(pkgDir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	golden.RequireEqual(t, []byte(view))
}

var ctx = context.Background()

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is a ledger in a temporary folder, opened under a relative path
// so that goldens do not depend on the machine.
type fixture struct {
	t     *testing.T
	s     *ledger.Store
	clock *clock
	// locked are passphrase-protected keys the console is to unlock.
	locked []LockedKey
}

func newFixture(t *testing.T) *fixture {
	t.Chdir(t.TempDir())
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s, err := ledger.Open(ctx, "ledger.db", ledger.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Approval, TTL: time.Hour}, "root")
	s.SetPolicy(ctx, approvals.Rule{Pattern: "report", Mode: approvals.Auto}, "root")
	return &fixture{t: t, s: s, clock: c}
}

func (f *fixture) guard(key, kind, body, agent string) ledger.Answer {
	f.t.Helper()
	a, err := f.s.Guard(ctx, key, ledger.Payload{Kind: kind, Target: "acct-7", Body: body}, ledger.GuardOptions{Agent: agent, Lease: time.Minute})
	var ce *ledger.ConflictError
	var fe *ledger.FencedError
	if err != nil && !errors.As(err, &ce) && !errors.As(err, &fe) {
		f.t.Fatal(err)
	}
	return a
}

// other opens a second handle on the same file: another process's writes.
func (f *fixture) other() *ledger.Store {
	s, err := ledger.Open(ctx, "ledger.db", ledger.Options{Now: f.clock.Now})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { s.Close() })
	return s
}

// console is a running test program and everything it has printed.
type console struct {
	*teatest.TestModel
	seen bytes.Buffer
}

func (f *fixture) console(w, h int, readOnly bool, operator string) *console {
	f.t.Helper()
	return f.run(Options{Store: f.s, Operator: operator, ReadOnly: readOnly, Locked: f.locked}, w, h)
}

// run starts the console with opt at w x h, with the tests' renderer,
// clock and refresh.
func (f *fixture) run(opt Options, w, h int) *console {
	f.t.Helper()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	opt.Renderer, opt.Refresh = r, 50*time.Millisecond
	opt.Now = func() time.Time { return time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC) }
	m, err := New(opt)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { m.Close() })
	return &console{TestModel: teatest.NewTestModel(f.t, m, teatest.WithInitialTermSize(w, h))}
}

// waitFor waits until the program has printed text, at any time since it
// started: the renderer writes each frame once, so text already shown
// counts, and several things drawn in one frame can be awaited in turn.
func waitFor(t *testing.T, c *console, text string) {
	t.Helper()
	// Generous: a wait that is met returns at once, and CI runs every
	// package's tests at once on two cores.
	waitWithin(t, c, text, slowdown*20*time.Second)
}

func waitWithin(t *testing.T, c *console, text string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	buf := make([]byte, 64<<10)
	for !bytes.Contains(c.seen.Bytes(), []byte(text)) {
		if time.Now().After(deadline) {
			t.Fatalf("%q not shown within %v; last output:\n%s", text, d, tail(c.seen.String(), 3000))
		}
		n, _ := c.Output().Read(buf)
		c.seen.Write(buf[:n])
		if n == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// finalModel quits and returns the model as the program left it.
func finalModel(t *testing.T, c *console) *Model {
	t.Helper()
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}
	return c.FinalModel(t, teatest.WithFinalTimeout(slowdown*20*time.Second)).(*Model)
}

// final quits and returns the last frame as the model renders it.
func final(t *testing.T, c *console) string {
	t.Helper()
	return finalModel(t, c).View()
}

func press(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "space":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func TestPendingViewGolden(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-4412", "refund", "refund 25 EUR\nsecond line", "refund-bot")
	f.guard("refund:le-4411", "refund", "refund 10 EUR", "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund:le-4411")
	waitFor(t, tm, "refund 25 EUR") // the soonest deadline is selected first (equal ones: oldest)
	requireGolden(t, final(t, tm))
}

func TestWideLayoutGolden(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-4411", "refund", "refund 10 EUR", "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund:le-4411")
	tm.Send(tea.WindowSizeMsg{Width: 200, Height: 60})
	waitFor(t, tm, "Pending approvals 1")
	waitFor(t, tm, "refund 10 EUR")
	view := final(t, tm)
	for i, line := range strings.Split(view, "\n") {
		if lipgloss.Width(line) > 200 {
			t.Fatalf("line %d is %d cells wide", i, lipgloss.Width(line))
		}
	}
	requireGolden(t, view)
}

// TestHostilePayloadGolden: a payload that tries to clear the screen, set
// the window title and overwrite a line must read as text.
func TestHostilePayloadGolden(t *testing.T) {
	f := newFixture(t)
	hostile := "\x1b[2J\x1b[H\x1b]0;owned\x07approve=NO\rapprove=YES\x1b]8;;unterminated \u202eevil\u009b31m\x7f\b"
	// Agent names with control or format characters are refused at input
	// now; the payload's fields are where hostile text still arrives.
	f.guard("refund:le-1", "refund", hostile, "bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, `approve=NO\rapprove=YES`)
	view := final(t, tm)
	if strings.ContainsAny(view, "\x1b\r\x07\x7f\b\u009b\u202e") {
		t.Fatalf("raw control characters reached the frame: %q", view)
	}
	for _, want := range []string{`\x1b[2J\x1b[H\x1b]0;owned\x07approve=NO\rapprove=YES`, `\u202eevil\u009b31m\x7f\b`} {
		if !strings.Contains(view, want) {
			t.Errorf("frame does not show %s", want)
		}
	}
	requireGolden(t, view)
}

func TestApproveThenAgentGetsPermit(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", "refund 10 EUR", "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund 10 EUR")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	waitFor(t, tm, "sha256 "+ledger.Payload{Kind: "refund", Target: "acct-7", Body: "refund 10 EUR"}.Digest())
	tm.Send(press("enter"))
	waitFor(t, tm, "approve: 1 done")
	final(t, tm)
	a := f.guard("refund:le-1", "refund", "refund 10 EUR", "refund-bot")
	if a.Verdict != ledger.Permitted {
		t.Fatalf("after approving in the console, guard says %s", a.Verdict)
	}
	d, _ := f.s.Status(ctx, "refund:le-1")
	if d.Decision == nil || d.Decision.Operator != "alice" {
		t.Fatalf("decision = %+v", d.Decision)
	}
}

func TestRejectNeedsReason(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", "x", "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund:le-1")
	tm.Send(press("r"))
	waitFor(t, tm, "Reject 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "a reason is required")
	tm.Type("amount too large")
	tm.Send(press("enter"))
	waitFor(t, tm, "reject: 1 done")
	final(t, tm)
	d, _ := f.s.Status(ctx, "refund:le-1")
	if d.State != ledger.StateRejected || d.Decision.Reason != "amount too large" {
		t.Fatalf("status = %s %+v", d.State, d.Decision)
	}
}

func TestCancelLeavesLedgerUnchanged(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", "x", "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund:le-1")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("esc"))
	waitFor(t, tm, "cancelled")
	final(t, tm)
	if d, _ := f.s.Status(ctx, "refund:le-1"); d.State != ledger.StatePending {
		t.Fatalf("state after cancel = %s", d.State)
	}
}

func TestBatchApprove(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"refund:a", "refund:b", "refund:c"} {
		f.guard(k, "refund", "body "+k, "refund-bot")
	}
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund:a")
	tm.Send(press("space")) // selects refund:a (soonest deadline; equal ones oldest first) and moves down
	tm.Send(press("space")) // selects refund:b
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 2 actions?")
	tm.Send(press("enter"))
	waitFor(t, tm, "approve: 2 done")
	final(t, tm)
	for k, want := range map[string]ledger.State{"refund:a": ledger.StateApproved, "refund:b": ledger.StateApproved, "refund:c": ledger.StatePending} {
		if d, _ := f.s.Status(ctx, k); d.State != want {
			t.Errorf("%s is %s, want %s", k, d.State, want)
		}
	}
}

func TestRefusalIsShown(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", "x", "alice") // the operator's own request
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund:le-1")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 1 action?")
	tm.Send(press("enter"))
	waitFor(t, tm, "1 refused")
	waitFor(t, tm, "may not approve their own")
	final(t, tm)
	if d, _ := f.s.Status(ctx, "refund:le-1"); d.State != ledger.StatePending {
		t.Fatalf("state = %s", d.State)
	}
}

func TestReconcileUncertain(t *testing.T) {
	f := newFixture(t)
	f.guard("report:q4", "report", "export totals", "report-bot")
	f.clock.Add(2 * time.Minute) // the lease runs out with no report
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "Uncertain 1")
	tm.Send(press("tab"))
	tm.Send(press("tab"))
	waitFor(t, tm, "report:q4")
	tm.Send(press("c"))
	waitFor(t, tm, "Reconcile 1 action?")
	tm.Type("provider has no record ")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'\u202e'}}) // Type sends bytes, not runes
	waitFor(t, tm, `provider has no record \u202e`)                  // a typed bidi override shows as its escape
	tm.Send(press("enter"))
	waitFor(t, tm, "choose the result first") // no preselected result
	tm.Send(press("tab"))                     // executed
	tm.Send(press("tab"))                     // not-executed
	tm.Send(press("enter"))
	waitFor(t, tm, "reconcile: 1 done")
	final(t, tm)
	d, _ := f.s.Status(ctx, "report:q4")
	if d.State != ledger.StateReconciled || d.Reconcile.Result != ledger.ResultNotExecuted || d.Reconcile.Note != `provider has no record \u202e` {
		t.Fatalf("status = %s %+v", d.State, d.Reconcile)
	}
}

func TestConflictSideBySideAndReview(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", "refund 10 EUR", "refund-bot")
	f.guard("refund:le-1", "refund", "refund 99 EUR", "refund-bot")
	tm := f.console(100, 40, false, "alice")
	waitFor(t, tm, "Conflicts 1")
	tm.Send(press("tab"))
	waitFor(t, tm, "differs: body")
	waitFor(t, tm, "≠ body")
	waitFor(t, tm, "refund 99 EUR")
	tm.Send(press("v"))
	waitFor(t, tm, "Mark reviewed 1 conflict?") // a log entry, not an action
	tm.Send(press("enter"))
	waitFor(t, tm, "mark reviewed: 1 done")
	waitFor(t, tm, "Conflicts 0")
	final(t, tm)
	if c, _ := f.s.Counts(ctx); c.Conflicts != 0 {
		t.Fatalf("conflict still open: %+v", c)
	}
}

func TestFencedView(t *testing.T) {
	f := newFixture(t)
	f.s.ActivateEpoch(ctx, "11111111-2222-4333-8444-555555555555", "root")
	f.guard("refund:late-call", "refund", "x", "legacy-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "Fenced 1")
	tm.Send(press("shift+tab"))
	tm.Send(press("shift+tab"))
	waitFor(t, tm, "refund:late-call")
	waitFor(t, tm, "never admitted")
	fm := finalModel(t, tm)
	requireGolden(t, fm.View())
	if v := fm.View(); !strings.Contains(v, "never admitted") || !strings.Contains(v, "not the active epoch") && !strings.Contains(v, "new work must use") {
		t.Fatalf("fenced detail:\n%s", v)
	}
}

func TestLiveRefreshKeepsSelection(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:a", "refund", "first", "refund-bot")
	f.guard("refund:b", "refund", "second", "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "first") // refund:a, the soonest deadline (equal ones oldest first)
	tm.Send(press("s"))     // newest first: the selection stays on refund:a, now second
	waitFor(t, tm, "sorted by newest first")
	waitFor(t, tm, "key  ") // the reloaded header
	// Another process writes a row above it; no key is pressed.
	other := f.other()
	start := time.Now()
	if _, err := other.Guard(ctx, "refund:c", ledger.Payload{Kind: "refund", Target: "t", Body: "third"}, ledger.GuardOptions{Agent: "x"}); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, tm, "Pending 3", time.Second)
	t.Logf("other process's write shown after %v", time.Since(start))
	fm := finalModel(t, tm)
	if it, _ := fm.list().current(); it.Key != "refund:a" || fm.detail.key != "refund:a" {
		t.Fatalf("selection moved to %s (detail %s)", it.Key, fm.detail.key)
	}
}

func TestReadOnlyDisablesDecisions(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", "x", "refund-bot")
	tm := f.console(80, 24, true, "alice")
	waitFor(t, tm, "READ-ONLY")
	waitFor(t, tm, "refund:le-1") // else the keys find no row, and prove nothing
	tm.Send(press("a"))
	tm.Send(press("r"))
	view := final(t, tm)
	if strings.Contains(view, "action?") {
		t.Fatal("a decision dialog opened in read-only mode")
	}
	if d, _ := f.s.Status(ctx, "refund:le-1"); d.State != ledger.StatePending {
		t.Fatalf("state = %s", d.State)
	}
}

func TestFilterHelpAndEmptyStates(t *testing.T) {
	f := newFixture(t)
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "No pending approvals")
	f.other().Guard(ctx, "refund:x", ledger.Payload{Kind: "refund", Target: "t", Body: "b"}, ledger.GuardOptions{Agent: "refund-bot"})
	f.other().Guard(ctx, "report:y", ledger.Payload{Kind: "report", Target: "t", Body: "b"}, ledger.GuardOptions{Agent: "report-bot"})
	tm.Send(press("G")) // nothing to do, must not crash on short lists
	tm.Send(press("shift+tab"))
	waitFor(t, tm, "report:y")
	tm.Send(press("/"))
	tm.Type("refund-bot")
	tm.Send(press("enter"))
	waitFor(t, tm, "filter: refund-bot · 1 shown")
	tm.Send(press("?"))
	waitFor(t, tm, "mark reviewed")
	fm := finalModel(t, tm)
	for _, it := range fm.list().items {
		if it.Key == "report:y" {
			t.Fatal("filter left report:y in the list")
		}
	}
	if len(fm.list().items) != 1 {
		t.Fatalf("filtered list has %d rows", len(fm.list().items))
	}
}

func TestResizeSmallAndBack(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", strings.Repeat("long body ", 200), "refund-bot")
	tm := f.console(200, 60, false, "alice")
	waitFor(t, tm, "Pending approvals 1")
	tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	waitFor(t, tm, "Pending 1")
	view := final(t, tm)
	lines := strings.Split(view, "\n")
	if len(lines) > 24 {
		t.Fatalf("80x24 frame has %d lines", len(lines))
	}
	for i, l := range lines {
		if lipgloss.Width(l) > 80 {
			t.Fatalf("line %d is %d wide", i, lipgloss.Width(l))
		}
	}
}

func TestDetailScrollsWhenFocused(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", strings.Repeat("line\n", 40), "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, `line\n`)
	tm.Send(press("enter"))
	for i := 0; i < 5; i++ {
		tm.Send(press("j"))
	}
	waitFor(t, tm, "esc cancel")
	fm := finalModel(t, tm)
	if !fm.detail.focused || fm.detail.vp.YOffset != 5 {
		t.Fatalf("focused %v, offset %d", fm.detail.focused, fm.detail.vp.YOffset)
	}
	if it, _ := fm.list().current(); it.Key != "refund:le-1" {
		t.Fatalf("the list moved instead: %s", it.Key)
	}
}

func TestConflictGolden(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", "refund 10 EUR", "refund-bot")
	f.guard("refund:le-1", "refund", "refund 99 EUR", "retry-bot")
	tm := f.console(100, 40, false, "alice")
	waitFor(t, tm, "Conflicts 1")
	tm.Send(press("tab"))
	waitFor(t, tm, "≠ body")
	requireGolden(t, final(t, tm))
}

// TestUncertainDialogGolden: the reconcile prompt names the key and shows
// its digest beside the decision.
func TestUncertainDialogGolden(t *testing.T) {
	if slowdown > 1 {
		// Under -race the dialog's target arrives after the frame the
		// golden takes (seen in CI); the non-race run checks the frame.
		t.Skip("golden frame not compared under -race")
	}
	f := newFixture(t)
	f.guard("report:q4", "report", "export totals", "report-bot")
	f.clock.Add(2 * time.Minute)
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "Uncertain 1")
	tm.Send(press("tab"))
	tm.Send(press("tab"))
	waitFor(t, tm, "holder report-bot")
	tm.Send(press("c"))
	waitFor(t, tm, "Reconcile 1 action?")
	waitFor(t, tm, "sha256 "+ledger.Payload{Kind: "report", Target: "acct-7", Body: "export totals"}.Digest())
	waitFor(t, tm, "report · target acct-7") // loaded in a command, after the digest the detail already had
	requireGolden(t, final(t, tm))
}

func TestAllViewGolden(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", "a", "refund-bot")
	f.guard("report:daily-1", "report", "b", "report-bot")
	f.s.Record(ctx, "note:1", ledger.Payload{Kind: "note", Target: "t", Body: "c"}, ledger.RecordOptions{Agent: "n", Redact: true})
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "All 3")
	tm.Send(press("shift+tab"))
	waitFor(t, tm, "body withheld")
	requireGolden(t, final(t, tm))
}

// TestRefusalOfAnyShapeDoesNotCrash feeds refusals that wrap nothing (a
// fence, a context deadline, a plain error) through Update: the console
// reports each and keeps running.
func TestRefusalOfAnyShapeDoesNotCrash(t *testing.T) {
	f := newFixture(t)
	m, err := New(Options{Store: f.s, Operator: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	errs := []error{&ledger.FencedError{Key: "k:1", Reason: "stale epoch"}, context.DeadlineExceeded, errors.New("driver said no"),
		&ledger.DecisionError{Key: "k:4", Err: approvals.ErrAlreadyDecided}}
	m.Update(actionMsg{action: "approve", keys: []string{"k:1", "k:2", "k:3", "k:4"}, errs: errs})
	for _, want := range []string{"stale epoch", "deadline exceeded", "driver said no", "already decided"} {
		if !strings.Contains(m.lastErr, want) {
			t.Errorf("error line %q does not say %q", m.lastErr, want)
		}
	}
}

// TestQuittingCancelsQueries: every ledger call the console makes runs
// under the program's context; once it is cancelled (the program quit),
// a refresh ends at once with the cancellation, reported, not a crash.
func TestQuittingCancelsQueries(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:c-1", "refund", "x", "refund-bot")
	pctx, cancel := context.WithCancel(context.Background())
	m, err := New(Options{Context: pctx, Store: f.s, Operator: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cancel()
	for name, cmd := range map[string]tea.Cmd{"snapshot": m.snapshot(), "check": m.check()} {
		msg := cmd()
		var got error
		switch x := msg.(type) {
		case snapshotMsg:
			got = x.err
		case checkedMsg:
			got = x.err
		}
		if !errors.Is(got, context.Canceled) {
			t.Fatalf("%s after the program's context ended: %v, want context.Canceled", name, got)
		}
		m.Update(msg)
		if !strings.Contains(m.lastErr, "canceled") {
			t.Fatalf("%s: the error line says %q", name, m.lastErr)
		}
	}
}

// TestCorpusEscapedInConsole: every string of the shared corpus, as a
// payload's target, is drawn exactly as the corpus says and never raw.
func TestCorpusEscapedInConsole(t *testing.T) {
	for i, h := range testdata.HostileStrings(t) {
		if testing.Short() && slowdown > 1 && i%4 != 0 {
			// CI's race run, after the plain run has drawn every string:
			// a quarter of them, each a console of its own.
			continue
		}
		t.Run(h.Name, func(t *testing.T) {
			f := newFixture(t)
			a, err := f.s.Guard(ctx, "refund:c-1", ledger.Payload{Kind: "refund", Target: h.Text, Body: "b"}, ledger.GuardOptions{Agent: "bot"})
			if err != nil || a.State != ledger.StatePending {
				t.Fatalf("guard: %+v %v", a, err)
			}
			tm := f.console(200, 40, true, "alice")
			waitFor(t, tm, "target "+h.Escaped)
			frame := final(t, tm)
			if h.Text != h.Escaped && strings.Contains(frame, h.Text) {
				t.Fatalf("the raw text reached the frame")
			}
		})
	}
}

// TestTimeDrivenChangesShowWithoutWrites: with nothing writing, a pending
// approval that expires and a lease that runs out show their new states
// and counts within a second of the deadline (the ledger's clock is
// moved; no process writes).
func TestTimeDrivenChangesShowWithoutWrites(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:t-1", "refund", "x", "refund-bot") // pending, deadline 10:00
	a := f.guard("report:t-2", "report", "y", "report-bot")
	if a.Verdict != ledger.Permitted {
		t.Fatalf("auto: %+v", a)
	}
	tm := f.console(100, 30, true, "alice")
	waitFor(t, tm, "P1 C0 U0 F0")
	f.clock.Add(2 * time.Minute)                             // the lease (1 minute) ran out
	waitWithin(t, tm, "P1 C0 U1 F0", slowdown*3*time.Second) // the tick is 50ms here, 100ms in use
	f.clock.Add(time.Hour)                                   // the approval expired
	waitWithin(t, tm, "P0 C0 U1 F0", slowdown*3*time.Second)
	final(t, tm)
}

// TestBatchDialogFitsSixtyByTwenty: twelve selected keys, one of them
// long, at 60x20: the dialog shows as many as fit with each key's kind,
// target and digest, says which it shows, scrolls to every one of them,
// and keeps the note field and the confirm line on screen throughout.
func TestBatchDialogFitsSixtyByTwenty(t *testing.T) {
	f := newFixture(t)
	long := "refund:" + strings.Repeat("x", 70)
	var keys []string
	for i := 0; i < 11; i++ {
		keys = append(keys, fmt.Sprintf("refund:b-%02d", i))
	}
	keys = append(keys, long) // the newest: listed last (equal deadlines, oldest first)
	for _, k := range keys {
		f.guard(k, "refund", "body "+k, "refund-bot")
	}
	tm := f.console(60, 20, false, "alice")
	waitFor(t, tm, "Pending 12")
	for range keys {
		tm.Send(press("space"))
	}
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 12 actions?")
	waitFor(t, tm, "of 12")
	waitFor(t, tm, "refund · target acct-7") // the targets, loaded in a command
	var frame string
	for range keys {
		tm.Send(press("down"))
	}
	m := finalModel(t, tm)
	frame = m.View()
	if lines := strings.Count(frame, "\n") + 1; lines > 20 {
		t.Fatalf("the frame has %d lines at 60x20", lines)
	}
	for _, want := range []string{"enter confirm · esc cancel", "note (optional)", "keys 12-12 of 12", "refund · target acct-7", "sha256 "} {
		if !strings.Contains(frame, want) {
			t.Errorf("scrolled to the end, the frame lacks %q:\n%s", want, frame)
		}
	}
	// The long key (the newest, so the last) is shown whole, wrapped
	// rather than cut.
	joined := strings.NewReplacer("\n", "", "║", "", " ", "").Replace(frame)
	if !strings.Contains(joined, long) {
		t.Errorf("the long key is cut:\n%s", frame)
	}
}

// TestReadOnlySaysWhy: in --read-only, a decision key says why it does
// nothing instead of doing nothing silently.
func TestReadOnlySaysWhy(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:ro-1", "refund", "x", "refund-bot")
	tm := f.console(100, 30, true, "alice")
	waitFor(t, tm, "refund:ro-1")
	tm.Send(press("a"))
	waitFor(t, tm, "read-only console (--read-only): approve, reject")
	final(t, tm)
}

// TestLiveFilterIgnoresCase: the filter applies as it is typed, ignores
// case, says how many rows it shows, stays visible over later messages,
// and an empty result says it is the filter, not an empty ledger.
func TestLiveFilterIgnoresCase(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:alpha-1", "refund", "x", "Alpha-Bot")
	f.guard("refund:beta-2", "refund", "y", "other-bot")
	tm := f.console(100, 30, false, "alice")
	waitFor(t, tm, "refund:beta-2")
	tm.Send(press("/"))
	tm.Type("ALPHA")
	waitFor(t, tm, "filter: ALPHA · 1 shown") // no enter: live
	tm.Send(press("enter"))
	tm.Send(press("a"))
	tm.Send(press("esc")) // cancelled: the filter must still show
	waitFor(t, tm, "filter: ALPHA · 1 shown · cancelled")
	tm.Send(press("/"))
	tm.Type("zzz")
	waitFor(t, tm, `Nothing here matches the filter "ALPHAzzz"`)
	m := finalModel(t, tm)
	if m.filter.Value() != "ALPHAzzz" {
		t.Fatalf("filter = %q", m.filter.Value())
	}
}

// TestHelpShowsEveryBindingAtSixtyByTwenty: the help page wraps its
// columns instead of dropping the third, and the hint bar keeps "? help"
// and "q quit" at every width; 1-5 jump to the views.
func TestHelpShowsEveryBindingAtSixtyByTwenty(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:h-1", "refund", "x", "refund-bot")
	tm := f.console(60, 20, false, "alice")
	waitFor(t, tm, "? help • q quit")
	tm.Send(press("?"))
	for _, want := range []string{"mark reviewed", "reconcile", "select", "jump to view", "quit", "filter"} {
		waitFor(t, tm, want)
	}
	tm.Send(press("?"))
	tm.Send(press("5"))
	waitFor(t, tm, "key  ") // the All view's header
	m := finalModel(t, tm)
	if m.active != viewAll {
		t.Fatalf("5 opened view %d", m.active)
	}
}

// TestListTimes: lists show times relative to the ledger's clock, and a
// deadline within ten minutes is marked (bold, in the warning colour).
func TestListTimes(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now.Add(14*time.Minute + 20*time.Second), "in 14m"},
		{now.Add(-3 * time.Minute), "3m ago"},
		{now.Add(45 * time.Second), "in 45s"},
		{now.Add(3*time.Hour + 5*time.Minute), "in 3h05m"},
		{now.Add(-50 * time.Hour), "2d ago"},
	} {
		if got := relative(tc.t, now); got != tc.want {
			t.Errorf("relative(%v) = %q, want %q", tc.t.Sub(now), got, tc.want)
		}
	}
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	st := NewStyles(r)
	km := DefaultKeyMap()
	l := newListView(viewPending, &st, &km, func() time.Time { return now })
	l.SetSize(100, 10)
	l.setItems([]item{
		{ID: 2, Key: "refund:soon", Logical: "refund:soon", State: ledger.StatePending, Kind: "refund", Deadline: now.Add(9 * time.Minute)},
		{ID: 1, Key: "refund:later", Logical: "refund:later", State: ledger.StatePending, Kind: "refund", Deadline: now.Add(time.Hour)},
	}, false)
	l.cursor = 1 // the highlight is on rows off the cursor
	view := l.View()
	soon := st.Soon.Render(pad("in 9m", 11))
	if !strings.Contains(view, soon) {
		t.Errorf("the deadline in 9 minutes is not marked:\n%q", view)
	}
	if strings.Contains(view, st.Soon.Render(pad("in 1h00m", 11))) {
		t.Errorf("a deadline an hour away is marked")
	}
}

// TestSelectionStaysDeep: past the first pages of the All view, the
// selection stays on its key when other processes add rows at the top.
func TestSelectionStaysDeep(t *testing.T) {
	f := newFixture(t)
	var items []ledger.BulkItem
	for i := 0; i < 3*pageSize+50; i++ {
		items = append(items, ledger.BulkItem{Key: fmt.Sprintf("refund:deep-%04d", i), Payload: ledger.Payload{Kind: "refund", Target: "t", Body: fmt.Sprint(i)}, Agent: "bot", RecordOnly: true})
	}
	if _, err := f.s.BulkGuard(ctx, items); err != nil {
		t.Fatal(err)
	}
	tm := f.console(100, 30, false, "alice")
	tm.Send(press("5"))
	waitFor(t, tm, "refund:deep-0649")
	// G goes to the last loaded row, which asks for the next page: the
	// bottom of each page in turn, then the oldest row.
	// Pressed until the oldest row is shown: a G before the next page
	// arrives stays at the end of what is loaded.
	deadline := time.Now().Add(slowdown * 10 * time.Second)
	buf := make([]byte, 64<<10)
	for !bytes.Contains(tm.seen.Bytes(), []byte("refund:deep-0000")) {
		if time.Now().After(deadline) {
			t.Fatal("G never reached the oldest row")
		}
		tm.Send(press("G"))
		time.Sleep(slowdown * 50 * time.Millisecond)
		n, _ := tm.Output().Read(buf)
		tm.seen.Write(buf[:n])
	}
	tm.Send(press("k")) // the second-oldest key, which three new rows would push out of a reload of as many rows
	waitFor(t, tm, "refund:deep-0001")
	other := f.other()
	for i := 0; i < 3; i++ {
		if _, err := other.Record(ctx, fmt.Sprintf("refund:new-%d", i), ledger.Payload{Kind: "refund", Target: "t", Body: "n"}, ledger.RecordOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, tm, "All 653")
	m := finalModel(t, tm)
	if it, _ := m.list().current(); it.Key != "refund:deep-0001" {
		t.Fatalf("the selection moved to %s", it.Key)
	}
}

// TestMessageLogKeepsFullText: a refusal's full text, cut on the message
// line, is in the message log (L), with each key of a partial batch
// named as done or refused; the message line clears on the next key.
func TestMessageLogKeepsFullText(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:m-1", "refund", "x", "alice") // alice's own request
	f.guard("refund:m-2", "refund", "y", "refund-bot")
	tm := f.console(80, 24, false, "alice")
	waitFor(t, tm, "refund:m-2")
	tm.Send(press("space"))
	tm.Send(press("space"))
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 2 actions?")
	tm.Send(press("enter"))
	waitFor(t, tm, "1 refused")
	tm.Send(press("L"))
	waitFor(t, tm, "approve done for refund:m-2")
	waitFor(t, tm, "approve refused for refund:m-1")
	m := finalModel(t, tm)
	var all []string
	for _, e := range m.log.entries {
		all = append(all, e.text)
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{`operator "alice" and agent "alice" are the same name`, "approve done for refund:m-2"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the log lacks %q:\n%s", want, joined)
		}
	}
	if m.lastErr != "" || m.notice != "" {
		t.Errorf("the message line did not clear on the next key: %q %q", m.lastErr, m.notice)
	}
}

// TestSelectionIsVisibleAndSaid: * selects every pending row, the count
// stays on the message line, a cancelled dialog says the marks are kept,
// and * again clears them.
func TestSelectionIsVisibleAndSaid(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"refund:s-1", "refund:s-2", "refund:s-3"} {
		f.guard(k, "refund", "x "+k, "refund-bot")
	}
	tm := f.console(100, 30, false, "alice")
	waitFor(t, tm, "refund:s-3")
	tm.Send(press("*"))
	waitFor(t, tm, "3 selected")
	tm.Send(press("a"))
	waitFor(t, tm, "Approve 3 actions?")
	tm.Send(press("esc"))
	waitFor(t, tm, "cancelled; 3 still selected (* clears)")
	tm.Send(press("*"))
	m := finalModel(t, tm)
	if n := m.list().selectedCount(); n != 0 {
		t.Fatalf("* left %d selected", n)
	}
}

// TestDecisionElsewhereIsSaid: when another operator decides the key the
// console shows, the console says who and when.
func TestDecisionElsewhereIsSaid(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:e-1", "refund", "x", "refund-bot")
	tm := f.console(100, 30, true, "alice")
	waitFor(t, tm, "refund:e-1")
	if _, err := f.other().Approve(ctx, "refund:e-1", "bob", "fine"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "refund:e-1 was approved by bob at 2026-12-01 09:00:00Z")
	final(t, tm)
}

// model builds the console for a test that drives it by hand: every
// command runs to completion before the next key, so the order of rows
// can be read between keys (the refresh tick is not started).
func (f *fixture) model(w, h int, clipboard io.Writer) *Model {
	f.t.Helper()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	m, err := New(Options{Store: f.s, Operator: "alice", Renderer: r, Clipboard: clipboard,
		Now: func() time.Time { return time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC) }, Refresh: time.Hour})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { m.Close() })
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	drain(m, m.snapshot())
	return m
}

// step sends one message and runs what it starts.
func step(m *Model, msg tea.Msg) {
	_, cmd := m.Update(msg)
	drain(m, cmd)
}

func listedKeys(m *Model) []string {
	var out []string
	for _, it := range m.list().items {
		out = append(out, it.Key)
	}
	return out
}

// TestPendingSortsByDeadline: Pending lists the soonest deadline first by
// default, whatever the order of arrival; s moves the order to the next
// column (age, key, kind, agent, then back), S reverses it, each says
// which, and the header marks the column and its direction.
func TestPendingSortsByDeadline(t *testing.T) {
	f := newFixture(t)
	f.s.SetPolicy(ctx, approvals.Rule{Pattern: "urgent", Mode: approvals.Approval, TTL: 5 * time.Minute}, "root")
	f.guard("refund:r-1", "refund", "x", "bot") // due 10:00
	f.clock.Add(time.Minute)
	f.guard("urgent:u-1", "urgent", "x", "bot") // due 09:06
	f.clock.Add(time.Minute)
	f.guard("refund:r-2", "refund", "x", "bot") // due 10:02
	m := f.model(100, 30, io.Discard)
	for _, want := range []struct {
		press  string
		keys   []string
		header string
		said   string
	}{
		{"", []string{"urgent:u-1", "refund:r-1", "refund:r-2"}, "due ▲", ""},
		{"s", []string{"refund:r-2", "urgent:u-1", "refund:r-1"}, "key (newest first)", "sorted by newest first (s next column, S reverses)"},
		{"S", []string{"refund:r-1", "urgent:u-1", "refund:r-2"}, "key (oldest first)", "sorted by oldest first"},
		{"s", []string{"refund:r-1", "refund:r-2", "urgent:u-1"}, "key ▲", "sorted by key ▲"},
		{"S", []string{"urgent:u-1", "refund:r-2", "refund:r-1"}, "key ▼", "sorted by key ▼"},
		{"s", []string{"refund:r-2", "refund:r-1", "urgent:u-1"}, "kind ▲", "sorted by kind ▲"}, // ties newest first
		{"s", []string{"refund:r-2", "urgent:u-1", "refund:r-1"}, "agent ▲", "sorted by agent ▲"},
		{"s", []string{"urgent:u-1", "refund:r-1", "refund:r-2"}, "due ▲", "sorted by soonest deadline"},
		{"S", []string{"refund:r-2", "refund:r-1", "urgent:u-1"}, "due ▼", "sorted by latest deadline"},
	} {
		if want.press != "" {
			step(m, press(want.press))
			if !strings.HasPrefix(m.notice, want.said) {
				t.Fatalf("%s said %q, want %q", want.press, m.notice, want.said)
			}
		}
		if got := listedKeys(m); !slices.Equal(got, want.keys) {
			t.Fatalf("%s: listed %v, want %v", want.said, got, want.keys)
		}
		if !strings.Contains(m.View(), want.header) {
			t.Fatalf("the header does not show %q:\n%s", want.header, m.View())
		}
	}
	step(m, press("2")) // Conflicts: a log, sorted by age or key
	step(m, press("s"))
	if !strings.Contains(m.notice, "sorted by key ▲") {
		t.Fatalf("s in Conflicts said %q", m.notice)
	}
}

// TestDeadlineOrderPages: past the first page, the rows loaded in
// deadline order continue that order, none twice, none missing.
func TestDeadlineOrderPages(t *testing.T) {
	f := newFixture(t)
	for i, ttl := range []time.Duration{time.Hour, 30 * time.Minute, 2 * time.Hour} {
		f.s.SetPolicy(ctx, approvals.Rule{Pattern: fmt.Sprintf("kind%d", i), Mode: approvals.Approval, TTL: ttl}, "root")
	}
	const n = 2*pageSize + 50
	for i := 0; i < n; i++ {
		f.guard(fmt.Sprintf("k:%03d", i), fmt.Sprintf("kind%d", i%3), "x", "bot")
		f.clock.Add(time.Second)
	}
	m := f.model(80, 24, io.Discard)
	for i := 0; i < 5 && len(m.list().items) < n; i++ {
		step(m, press("G")) // to the bottom: the next page loads
	}
	items := m.list().items
	seen := map[string]bool{}
	for i, it := range items {
		if seen[it.Key] {
			t.Fatalf("%s listed twice", it.Key)
		}
		seen[it.Key] = true
		if i > 0 {
			p := items[i-1]
			if it.stored.Before(p.stored) || it.stored.Equal(p.stored) && it.ID < p.ID {
				t.Fatalf("row %d (%s, due %s) after %s (due %s)", i, it.Key, it.stored, p.Key, p.stored)
			}
		}
	}
	if len(items) != n {
		t.Fatalf("loaded %d rows of %d", len(items), n)
	}
}

// syncBuffer is a clipboard written from a command's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCopyWithOSC52: y puts the full key and Y the payload digest on the
// clipboard as OSC 52 sequences, and the console says what it copied.
func TestCopyWithOSC52(t *testing.T) {
	t.Setenv("TMUX", "")
	t.Setenv("TERM", "xterm-256color")
	f := newFixture(t)
	long := "refund:" + strings.Repeat("z", 60) // longer than its column
	f.guard(long, "refund", "x", "bot")
	clip := &syncBuffer{}
	m := f.model(80, 24, clip)
	step(m, press("y"))
	want := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(long)) + "\a"
	if clip.String() != want || !strings.Contains(m.notice, "copied the key of "+long) {
		t.Fatalf("y wrote %q and said %q", clip.String(), m.notice)
	}
	d, err := f.s.Status(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	step(m, press("Y"))
	want += "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(d.SHA256)) + "\a"
	if clip.String() != want || !strings.Contains(m.notice, "copied the digest") {
		t.Fatalf("Y wrote %q and said %q", clip.String(), m.notice)
	}
}

// TestDetailHeadStaysAt60x20: at 60x20 with a body far longer than the
// pane, scrolling to the end keeps the key, state and whole digest on
// screen (wrapped, never cut) and says which lines are shown.
func TestDetailHeadStaysAt60x20(t *testing.T) {
	f := newFixture(t)
	a := f.guard("refund:long-1", "refund", strings.Repeat("a long body line\n", 60), "refund-bot")
	m := f.model(60, 20, io.Discard)
	step(m, press("enter"))
	step(m, press("G"))
	view := m.View()
	for _, want := range []string{"key        refund:long-1", "state      pending", "digest     " + a.SHA256[:8]} {
		if !strings.Contains(view, want) {
			t.Fatalf("after G the pane lost %q:\n%s", want, view)
		}
	}
	// The digest is cut at the pane's edge, never dropped: its lines,
	// read inside the border, hold all 64 digits in order.
	var inside strings.Builder
	for _, l := range strings.Split(view, "\n") {
		inside.WriteString(strings.TrimSpace(strings.Trim(l, "│┌┐└┘─")))
	}
	if !strings.Contains(inside.String(), a.SHA256) {
		t.Fatalf("the whole digest is not on screen:\n%s", view)
	}
	at := regexp.MustCompile(`lines (\d+)-(\d+) of (\d+)`).FindStringSubmatch(view)
	if at == nil || at[2] != at[3] || at[1] == "1" {
		t.Fatalf("the position line does not say the end is shown: %v\n%s", at, view)
	}
	// The head leaves the timeline more than one line: a digest word-wrapped
	// under its label took the line the pane needs (one line at a time
	// cannot be read).
	if first, _ := strconv.Atoi(at[1]); first >= mustAtoi(t, at[2]) {
		t.Fatalf("the pane shows one line of its body at a time: %v\n%s", at, view)
	}
	step(m, press("g"))
	if !strings.Contains(m.View(), "lines 1-") {
		t.Fatalf("g did not go back to the top:\n%s", m.View())
	}
}

// TestOwnDecisionIsNotNews: when a refresh sees the console's own
// approvals leave Pending before their answers arrive (the watch fires on
// the commit, the batch is still answering), the console does not report
// its own decision as someone else's.
func TestOwnDecisionIsNotNews(t *testing.T) {
	f := newFixture(t)
	f.guard("refund:own-1", "refund", "x", "refund-bot")
	f.guard("refund:own-2", "refund", "y", "refund-bot")
	m := f.model(80, 24, nil)
	_, cmd := m.Update(dialogDoneMsg{confirmed: true, kind: dlgApprove, targets: []target{{Key: "refund:own-1"}, {Key: "refund:own-2"}}, text: "ok"})
	answer := cmd().(tea.BatchMsg)[0]() // committed, not yet delivered (the second is the spinner)
	drain(m, m.snapshot())
	if got := listedKeys(m); len(got) != 0 {
		t.Fatalf("pending after the approvals: %v", got)
	}
	step(m, answer)
	for _, e := range m.log.entries {
		if strings.Contains(e.text, "was approved by") {
			t.Fatalf("the console reported its own decision as news: %q", e.text)
		}
	}
	if !strings.Contains(m.notice, "2 done") {
		t.Fatalf("notice %q", m.notice)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLongTargetKeepsDigestInDialog: one pending key whose kind and target
// (as long as guard admits) do not fit the dialog at 80x24 or 60x20 keeps
// its name and payload digest on screen beside the prompt, and ↓ scrolls
// its kind and target to the end, which is shown, not cut to "…".
func TestLongTargetKeepsDigestInDialog(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {60, 20}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			f := newFixture(t)
			p := ledger.Payload{Kind: "refund", Target: strings.Repeat("T", 990) + "-END", Body: "b"}
			if _, err := f.s.Guard(ctx, "refund:long", p, ledger.GuardOptions{Agent: "bot"}); err != nil {
				t.Fatal(err)
			}
			tm := f.console(sz.w, sz.h, false, "alice")
			waitFor(t, tm, "Pending 1")
			tm.Send(press("a"))
			waitFor(t, tm, "Approve 1 action?")
			waitFor(t, tm, "lines 1-")
			for range 40 {
				tm.Send(tea.KeyMsg{Type: tea.KeyDown})
			}
			waitFor(t, tm, "-END")
			frame := final(t, tm)
			if lines := strings.Count(frame, "\n") + 1; lines > sz.h {
				t.Fatalf("the frame has %d lines at %dx%d", lines, sz.w, sz.h)
			}
			joined := strings.NewReplacer("\n", "", "║", "", " ", "").Replace(frame)
			for _, want := range []string{"•refund:long", "sha256" + p.Digest(), "-END", "enterconfirm·esccancel"} {
				if !strings.Contains(joined, want) {
					t.Errorf("scrolled to the end, the dialog lacks %q:\n%s", want, frame)
				}
			}
		})
	}
}
