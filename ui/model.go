// Package ui is tollgate's operator console, a Bubble Tea program. The root
// Model only routes: each view (a list per tab, the detail pane, the
// decision dialog) is a component that owns its state. Every ledger call
// runs in a tea.Cmd and comes back as a message tagged with its view and
// key; Update and View never touch the database.
package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	osc52 "github.com/aymanbagabas/go-osc52/v2"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// Options configures the console.
type Options struct {
	// Context is the program's: every ledger call the console makes runs
	// under it, so quitting (or the caller cancelling) cancels them. Nil
	// means context.Background().
	Context context.Context
	// Store is the ledger the console reads and decides on.
	Store    Ledger
	Operator string
	ReadOnly bool
	// Renderer draws the styles; nil means the default terminal renderer.
	Renderer *lipgloss.Renderer
	// Now is the status bar's clock; nil means time.Now.
	Now func() time.Time
	// Refresh is how often the ledger is checked for other processes'
	// writes; zero means 100ms: the check is one PRAGMA on a held connection.
	Refresh time.Duration
	// Clipboard receives the OSC 52 sequence that y and Y write (the
	// terminal puts its text on the clipboard, over SSH too); nil means
	// standard error, the terminal the console runs in.
	Clipboard io.Writer
	// Locked are the operator's passphrase-protected keys: the console
	// asks for their passphrase when it starts (and again before a
	// decision while one is still locked), without echo.
	Locked []LockedKey
}

// Model is the console's root model.
type Model struct {
	opt     Options
	store   Ledger
	watcher ledger.Watch
	styles  *Styles
	keys    *KeyMap
	// roKeys are the decision bindings as enabled, so that a read-only
	// console can say why a decision key does nothing.
	roKeys KeyMap
	help   help.Model
	views  [viewCount]*listView
	active viewID
	detail *detailView
	dialog *dialog
	unlock *unlockView
	// after is the decision to open once the key is unlocked, if one was
	// asked for while it was locked.
	after    *dialogKind
	filterIn textinput.Model
	filter   string
	filterOn bool
	showHelp bool
	log      *msgLog
	showLog  bool
	// acted are the keys this console decided: their change is not news.
	acted map[string]bool

	counts   ledger.Counts
	sign     ledger.Signing
	epoch    string
	refresh  time.Time
	lastErr  string
	notice   string
	inflight bool
	width    int
	height   int
}

// New builds the console on an open ledger. It opens the ledger's watch
// (SQLite: one reader connection for PRAGMA data_version).
func New(opt Options) (*Model, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Context == nil {
		opt.Context = context.Background()
	}
	if opt.Clipboard == nil {
		opt.Clipboard = os.Stderr
	}
	if opt.Refresh == 0 {
		opt.Refresh = 100 * time.Millisecond
	}
	if opt.Renderer == nil {
		opt.Renderer = lipgloss.DefaultRenderer()
	}
	w, err := opt.Store.Watch(opt.Context)
	if err != nil {
		return nil, err
	}
	st := NewStyles(opt.Renderer)
	km := DefaultKeyMap()
	km.SetReadOnly(opt.ReadOnly)
	m := &Model{opt: opt, store: opt.Store, watcher: w, styles: &st, keys: &km, help: help.New(),
		detail: newDetailView(&st, &km), width: 80, height: 24, roKeys: DefaultKeyMap(), log: newMsgLog(&st, &km), acted: map[string]bool{}}
	m.help.Styles.ShortKey, m.help.Styles.FullKey = st.HelpKey, st.HelpKey
	m.help.Styles.ShortDesc, m.help.Styles.FullDesc = st.HelpDesc, st.HelpDesc
	for v := viewID(0); v < viewCount; v++ {
		m.views[v] = newListView(v, &st, &km, opt.Store.Now)
	}
	m.filterIn = textinput.New()
	m.filterIn.Prompt = "/"
	m.filterIn.Placeholder = "key, agent or kind"
	m.filterIn.CharLimit = 80
	m.layout()
	return m, nil
}

// Close releases the watcher's connection.
func (m *Model) Close() error { return m.watcher.Close() }

// Init starts the first load and the refresh tick.
func (m *Model) Init() tea.Cmd {
	m.inflight = true
	return tea.Batch(m.snapshot(), m.tick(), m.askPassphrase())
}

// stillLocked reports whether a key the operator signs with still needs
// its passphrase.
func (m *Model) stillLocked() bool {
	for _, k := range m.opt.Locked {
		if k.Locked() {
			return true
		}
	}
	return false
}

// askPassphrase opens the passphrase prompt while a key is locked.
func (m *Model) askPassphrase() tea.Cmd {
	if m.opt.ReadOnly || !m.stillLocked() {
		return nil
	}
	m.unlock = newUnlockView(m.opt.Locked, m.styles, m.keys)
	m.layout()
	return m.unlock.Init()
}

// maxReload is the most rows one refresh reloads (ledger.List's cap).
const maxReload = 10000

// deadlinePassed reports whether the earliest deadline the last snapshot
// saw ahead has passed by the ledger's clock.
func (m *Model) deadlinePassed() bool {
	next := m.counts.Next
	return !next.IsZero() && !m.store.Now().Before(next)
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(m.opt.Refresh, func(time.Time) tea.Msg { return tickMsg{} })
}

// check asks whether any connection wrote since the last check.
func (m *Model) check() tea.Cmd {
	w, ctx := m.watcher, m.opt.Context
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		changed, err := w.Changed(ctx)
		return checkedMsg{changed, err}
	}
}

func (m *Model) list() *listView { return m.views[m.active] }

// query is what the active list shows.
func (m *Model) query() query {
	return query{view: m.active, filter: m.filter, order: m.list().order()}
}

func (m *Model) snapshot() tea.Cmd {
	// Reload every row loaded so far and a page more, so that rows other
	// processes added at the top do not push the selected key out of the
	// reloaded window, however deep the cursor is (up to the list cap).
	limit := min(m.list().loadedCount()+pageSize, maxReload)
	f := snapshotCmd(m.opt.Context, m.store, m.query(), m.opt.Operator, limit)
	return func() tea.Msg { return f() }
}

func (m *Model) loadMore() tea.Cmd {
	s, q, after, ctx := m.store, m.query(), m.list().last(), m.opt.Context
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		items, more, err := loadPage(ctx, s, q, after, pageSize)
		return pageMsg{query: q, items: items, more: more, err: err}
	}
}

// loadDetail fetches the selected row's detail.
func (m *Model) loadDetail() tea.Cmd {
	it, ok := m.list().current()
	m.detail.show(it, ok)
	if !ok {
		return nil
	}
	s, v, ctx := m.store, m.active, m.opt.Context
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		d, err := s.Status(ctx, it.Key)
		if errors.Is(err, ledger.ErrNotFound) && it.Fenced != nil {
			return detailMsg{view: v, key: it.Key, id: it.ID, missing: true}
		}
		return detailMsg{view: v, key: it.Key, id: it.ID, detail: d, err: err}
	}
}

// Update routes messages to the components.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tickMsg:
		cmds := []tea.Cmd{m.tick()}
		switch {
		case m.inflight:
		case m.deadlinePassed():
			// A state that changes because time passes (an approval
			// expiring, a lease running out) changes no file: re-read.
			m.inflight = true
			cmds = append(cmds, m.snapshot())
		default:
			m.inflight = true
			cmds = append(cmds, m.check())
		}
		return m, tea.Batch(cmds...)
	case checkedMsg:
		if msg.err != nil {
			m.inflight = false
			m.say(sevError, "refresh: "+safetext.Escape(msg.err.Error()))
			return m, nil
		}
		if !msg.changed {
			m.inflight = false
			return m, nil
		}
		return m, m.snapshot()
	case snapshotMsg:
		m.inflight = false
		if msg.err != nil {
			m.say(sevError, "refresh: "+safetext.Escape(msg.err.Error()))
			return m, nil
		}
		m.counts, m.epoch, m.sign, m.refresh = msg.counts, msg.epoch, msg.sign, m.opt.Now()
		if msg.query != m.query() {
			return m, m.snapshot()
		}
		gone := m.list().setItems(msg.items, msg.more)
		return m, tea.Batch(m.loadDetail(), m.whyGone(gone))
	case pageMsg:
		if msg.err != nil {
			m.say(sevError, "load: "+safetext.Escape(msg.err.Error()))
		} else if msg.query == m.query() {
			m.list().appendItems(msg.items, msg.more)
		}
		return m, nil
	case detailMsg:
		if msg.view == m.active {
			if changed := m.detail.setDetail(msg); changed != "" && !m.acted[msg.key] {
				m.say(sevInfo, changed)
			}
		}
		return m, nil
	case dialogDoneMsg:
		m.dialog = nil
		if !msg.confirmed {
			msg := "cancelled"
			if n := m.list().selectedCount(); n > 0 {
				msg = fmt.Sprintf("cancelled; %d still selected (* clears)", n)
			}
			m.say(sevInfo, msg)
			return m, nil
		}
		if m.sign.Signed {
			// Signing runs in the command; a hardware key may wait for its
			// touch meanwhile, and the console stays live.
			m.notice = "signing as " + safetext.Escape(m.sign.Operator) + ": touch your key if it asks"
		}
		// The keys are this console's from now on: a refresh that sees
		// them leave Pending before the answers arrive must not report the
		// console's own decision as someone else's.
		for _, t := range msg.targets {
			m.acted[t.Key] = true
		}
		return m, m.act(msg)
	case actionMsg:
		m.reportAction(msg)
		return m, m.snapshot()
	case decidedMsg:
		for _, text := range msg {
			m.say(sevInfo, text)
		}
		return m, nil
	case unlockedMsg:
		if m.unlock == nil {
			return m, nil
		}
		var cmd tea.Cmd
		m.unlock, cmd = m.unlock.Update(msg)
		if msg.err != nil {
			m.log.add(m.opt.Now(), sevError, "unlock: "+safetext.Escape(msg.err.Error()))
		}
		return m, cmd
	case unlockDoneMsg:
		m.unlock = nil
		after := m.after
		m.after = nil
		if msg.skipped {
			m.say(sevInfo, "operator key still locked: a decision asks for its passphrase first")
			return m, nil
		}
		m.say(sevInfo, "operator key unlocked")
		if after != nil {
			return m, m.openDecision(*after)
		}
		return m, nil
	case digestsMsg:
		if m.dialog != nil {
			m.dialog.setDigests(msg)
		}
		return m, nil
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	if m.unlock != nil {
		var cmd tea.Cmd
		m.unlock, cmd = m.unlock.Update(msg)
		return m, cmd
	}
	if m.dialog != nil {
		var cmd tea.Cmd
		m.dialog, cmd = m.dialog.Update(msg)
		return m, cmd
	}
	return m, nil
}

// key routes one key press: dialog first, then the filter, then global
// keys, decisions, and finally the focused component.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if msg.Type == tea.KeyCtrlC {
		return tea.Quit // from any dialog or input too
	}
	if m.unlock != nil {
		var cmd tea.Cmd
		m.unlock, cmd = m.unlock.Update(msg)
		return cmd
	}
	if m.dialog != nil {
		var cmd tea.Cmd
		m.dialog, cmd = m.dialog.Update(msg)
		return cmd
	}
	if m.filterOn {
		switch {
		case key.Matches(msg, m.keys.Confirm):
			m.filterOn = false
			m.filterIn.Blur()
			return nil
		case key.Matches(msg, m.keys.Cancel):
			m.filterOn = false
			m.filterIn.Blur()
			m.filterIn.SetValue("")
			return m.setFilter("")
		}
		// Live: every keystroke re-reads the view with what is typed.
		var cmd tea.Cmd
		m.filterIn, cmd = m.filterIn.Update(msg)
		disarm(&m.filterIn)
		if f := strings.TrimSpace(m.filterIn.Value()); f != m.filter {
			return tea.Batch(cmd, m.setFilter(f))
		}
		return cmd
	}
	m.notice, m.lastErr = "", "" // a message lasts until the next action
	k := m.keys
	switch {
	case msg.Type == tea.KeyCtrlC || key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp, m.showLog = !m.showHelp, false
		m.layout()
		return nil
	case key.Matches(msg, k.Log):
		m.showLog, m.showHelp = !m.showLog, false
		return nil
	case m.showLog && !key.Matches(msg, k.Cancel):
		var cmd tea.Cmd
		m.log, cmd = m.log.Update(msg)
		return cmd
	case key.Matches(msg, k.Cancel):
		switch {
		case m.showLog:
			m.showLog = false
		case m.showHelp:
			m.showHelp = false
			m.layout()
		case m.detail.Focused():
			m.detail.SetFocus(false)
		case m.filter != "":
			m.filterIn.SetValue("")
			return m.setFilter("")
		}
		return nil
	case key.Matches(msg, k.Filter):
		m.filterOn = true
		m.filterIn.SetValue(m.filter)
		m.filterIn.CursorEnd()
		return m.filterIn.Focus()
	case key.Matches(msg, k.NextTab) && (msg.Type == tea.KeyTab || !m.detail.Focused()):
		return m.switchView((m.active + 1) % viewCount)
	case key.Matches(msg, k.PrevTab) && (msg.Type == tea.KeyShiftTab || !m.detail.Focused()):
		return m.switchView((m.active + viewCount - 1) % viewCount)
	case key.Matches(msg, k.Focus):
		m.detail.SetFocus(!m.detail.Focused())
		return nil
	case key.Matches(msg, k.Views):
		return m.switchView(viewID(msg.String()[0] - '1'))
	case key.Matches(msg, k.Sort):
		if !m.list().cycleOrder() {
			m.say(sevInfo, "conflicts and fenced calls are a log: listed newest first only")
			return nil
		}
		m.say(sevInfo, "sorted by "+m.list().order().String()+" (s cycles)")
		return m.snapshot()
	case key.Matches(msg, k.CopyKey, k.CopyDigest):
		return m.copySelected(key.Matches(msg, k.CopyDigest))
	case m.opt.ReadOnly && m.roKeys.matchesDecision(msg):
		m.say(sevError, "read-only console (--read-only): approve, reject, reconcile, review and select are disabled")
		return nil
	case key.Matches(msg, k.SelectAll):
		m.list().toggleAll()
		return nil
	case key.Matches(msg, k.Approve):
		return m.openDecision(dlgApprove)
	case key.Matches(msg, k.Reject):
		return m.openDecision(dlgReject)
	case key.Matches(msg, k.Reconcile):
		return m.openDecision(dlgReconcile)
	case key.Matches(msg, k.Review):
		return m.openDecision(dlgReview)
	}
	if m.detail.Focused() {
		var cmd tea.Cmd
		m.detail, cmd = m.detail.Update(msg)
		return cmd
	}
	before, _ := m.list().current()
	var cmd tea.Cmd
	m.views[m.active], cmd = m.list().Update(msg)
	cmds := []tea.Cmd{cmd}
	if after, _ := m.list().current(); after.Key != before.Key || after.ID != before.ID {
		cmds = append(cmds, m.loadDetail())
	}
	if m.list().takeMoreRequest() {
		cmds = append(cmds, m.loadMore())
	}
	return tea.Batch(cmds...)
}

func (m *Model) switchView(v viewID) tea.Cmd {
	m.active = v
	m.detail.SetFocus(false)
	m.notice = ""
	return tea.Batch(m.loadDetail(), m.snapshot())
}

func (m *Model) setFilter(f string) tea.Cmd {
	m.filter = f
	for _, v := range m.views {
		v.reset(f)
	}
	return m.snapshot()
}

// copySelected puts the row's full key, or its payload digest, on the
// clipboard with OSC 52 (wrapped for tmux and screen), in a command: the
// write goes to the terminal, never through the ledger.
func (m *Model) copySelected(digest bool) tea.Cmd {
	it, ok := m.list().current()
	if !ok {
		m.say(sevInfo, "nothing to copy")
		return nil
	}
	what, text := "key", it.Key
	if digest {
		what = "digest"
		switch {
		case it.Conflict != nil:
			text = it.Conflict.AttemptSHA
		case it.Fenced != nil:
			text = it.Fenced.SHA256
		default:
			text, ok = m.detail.digestOf(it.Key)
			if !ok || text == "" {
				m.say(sevInfo, "the digest is still loading: press Y again")
				return nil
			}
		}
	}
	seq := osc52.New(text)
	switch {
	case os.Getenv("TMUX") != "":
		seq = seq.Tmux()
	case strings.HasPrefix(os.Getenv("TERM"), "screen"):
		seq = seq.Screen()
	}
	w := m.opt.Clipboard
	m.say(sevInfo, fmt.Sprintf("copied the %s of %s to the clipboard (OSC 52; the terminal must allow it)", what, safetext.Escape(it.Key)))
	return func() tea.Msg {
		seq.WriteTo(w)
		return nil
	}
}

// openDecision opens the confirmation dialog for the chosen rows, after
// checking that the decision applies to them.
func (m *Model) openDecision(kind dialogKind) tea.Cmd {
	rows := m.list().chosen()
	if len(rows) == 0 {
		m.say(sevInfo, "nothing selected")
		return nil
	}
	if m.stillLocked() {
		// The decision would be refused unsigned: ask first, then open it.
		m.after = &kind
		return m.askPassphrase()
	}
	if kind != dlgApprove && kind != dlgReject {
		rows = rows[:1] // reconcile and review act on the row under the cursor
	}
	var targets []target
	for _, it := range rows {
		want := map[dialogKind]string{dlgApprove: "pending", dlgReject: "pending", dlgReconcile: "uncertain"}[kind]
		switch {
		case kind == dlgReview && it.Conflict == nil && it.Fenced == nil:
			m.say(sevError, "mark reviewed applies to conflicts and fenced calls")
			return nil
		case kind != dlgReview && it.State != want:
			m.say(sevError, fmt.Sprintf("%s is %s: %s applies to %s actions", safetext.Escape(it.Key), it.State, strings.ToLower(dialogVerbs[kind]), want))
			return nil
		}
		t := target{Key: it.Key, ID: it.ID, View: m.active, Kind: it.Kind}
		switch {
		case it.Conflict != nil:
			t.Digest = it.Conflict.AttemptSHA
		case it.Fenced != nil:
			t.Digest = it.Fenced.SHA256
		default:
			t.Digest, _ = m.detail.digestOf(it.Key) // else loaded below
		}
		targets = append(targets, t)
	}
	m.lastErr = ""
	m.dialog = newDialog(kind, targets, m.styles, m.keys)
	m.layout()
	return tea.Batch(m.digests(targets), m.dialog.Init())
}

// digests fills in the digests of targets not yet loaded, so that the
// dialog always shows what is being decided.
func (m *Model) digests(ts []target) tea.Cmd {
	s, ctx := m.store, m.opt.Context
	ts = append([]target(nil), ts...)
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = t.Key
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		briefs, err := s.Briefs(ctx, keys)
		if err != nil {
			return digestsMsg(ts) // shown as loading; the decision still names each key
		}
		byKey := make(map[string]ledger.Brief, len(briefs))
		for _, b := range briefs {
			byKey[b.Key] = b
		}
		for i := range ts {
			b, ok := byKey[ts[i].Key] // a fenced call's key may have no intent
			if !ok {
				continue
			}
			if ts[i].Digest == "" {
				ts[i].Digest = b.SHA256
			}
			ts[i].Kind, ts[i].Subject = b.Kind, b.Target
		}
		return digestsMsg(ts)
	}
}

type digestsMsg []target

// act runs a confirmed decision in a command and reports every refusal.
// The keys are decided at once, each its own call with its own answer: a
// store opened with GroupCommit (the console's) commits those that arrive
// together in one transaction, so a batch of fifty costs a few fsyncs,
// not fifty.
func (m *Model) act(d dialogDoneMsg) tea.Cmd {
	s, op, ctx := m.store, m.opt.Operator, m.opt.Context
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		out := actionMsg{action: strings.ToLower(dialogVerbs[d.kind]), keys: make([]string, len(d.targets)), errs: make([]error, len(d.targets))}
		var wg sync.WaitGroup
		for i, t := range d.targets {
			out.keys[i] = t.Key
			wg.Add(1)
			go func() {
				defer wg.Done()
				out.errs[i] = decide(ctx, s, d, t, op)
			}()
		}
		wg.Wait()
		return out
	}
}

// decide makes one confirmed decision on one target.
func decide(ctx context.Context, s Ledger, d dialogDoneMsg, t target, op string) error {
	var err error
	switch d.kind {
	case dlgApprove:
		_, err = s.Approve(ctx, t.Key, op, d.text)
	case dlgReject:
		_, err = s.Reject(ctx, t.Key, op, d.text)
	case dlgReconcile:
		_, err = s.Reconcile(ctx, t.Key, ledger.Result(d.result), op, d.text)
	case dlgReview:
		if t.View == viewFenced {
			err = s.ReviewFenced(ctx, t.ID, op, d.text)
		} else {
			err = s.ReviewConflict(ctx, t.ID, op, d.text)
		}
	}
	return err
}

// refusalText is what the status bar says of a refused action: the rule
// for a decision the approvals package refused (the key is already shown
// beside it), else the whole error. Any error at all may arrive here (a
// fence, a context deadline, a driver error), so nothing is assumed of
// its shape.
func refusalText(err error) string {
	var de *ledger.DecisionError
	if errors.As(err, &de) && de.Err != nil {
		return de.Err.Error()
	}
	return err.Error()
}

// decidedMsg says pending keys were decided by someone else.
type decidedMsg []string

// whyGone looks up keys that left the Pending view without this console
// acting on them, and says who decided them and when.
func (m *Model) whyGone(keys []string) tea.Cmd {
	if m.active != viewPending {
		return nil
	}
	var ask []string
	for _, k := range keys {
		if !m.acted[k] && len(ask) < 20 {
			ask = append(ask, k)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	s, ctx := m.store, m.opt.Context
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var out decidedMsg
		for _, k := range ask {
			d, err := s.Status(ctx, k)
			if err == nil && d.Decision != nil {
				out = append(out, fmt.Sprintf("%s was %s by %s at %s", safetext.Escape(k), d.Decision.Decision, safetext.Escape(d.Decision.Operator), when(d.Decision.At)))
			}
		}
		return out
	}
}

// say shows a message on the message line (until the next key) and
// keeps it in the message log.
func (m *Model) say(sev severity, text string) {
	if sev == sevError {
		m.lastErr, m.notice = text, ""
	} else {
		m.notice, m.lastErr = text, ""
	}
	m.log.add(m.opt.Now(), sev, text)
}

func (m *Model) reportAction(a actionMsg) {
	var refused, done []string
	now := m.opt.Now()
	for i, err := range a.errs {
		m.acted[a.keys[i]] = true
		key := safetext.Escape(a.keys[i])
		if err != nil {
			why := safetext.Escape(refusalText(err))
			refused = append(refused, key+": "+why)
			m.log.add(now, sevError, a.action+" refused for "+key+": "+safetext.Escape(err.Error()))
		} else {
			done = append(done, key)
			m.log.add(now, sevInfo, a.action+" done for "+key)
		}
	}
	m.list().clearSelection()
	m.notice = fmt.Sprintf("%s: %d done", a.action, len(done))
	if len(done) > 0 {
		m.notice += " (" + strings.Join(done, ", ") + ")"
	}
	m.lastErr = ""
	if len(refused) > 0 {
		m.lastErr = fmt.Sprintf("%d refused: %s · L shows the full text", len(refused), strings.Join(refused, "; "))
	}
}

// layout gives every component its size.
func (m *Model) layout() {
	w, h := max(m.width, 40), max(m.height, 10)
	body := h - 4 // tabs, two status lines, help line
	m.help.Width = w
	if w >= 140 {
		lw := w * 11 / 20
		for _, v := range m.views {
			v.SetSize(lw, body)
		}
		m.detail.SetSize(w-lw-1, body)
	} else {
		lh := max(body*2/5, 4)
		for _, v := range m.views {
			v.SetSize(w, lh)
		}
		m.detail.SetSize(w, body-lh)
	}
	if m.dialog != nil {
		m.dialog.SetSize(w, body)
	}
	if m.unlock != nil {
		m.unlock.SetSize(w, body)
	}
	m.log.SetSize(w, body)
}

// View draws the console.
func (m *Model) View() string {
	w := max(m.width, 40)
	var parts []string
	parts = append(parts, m.tabs(w))
	var lower string
	switch {
	case m.showHelp:
		lower = m.styles.Pane.Width(w - 2).Render(m.fullHelp(w-4, max(m.height, 10)-4-2))
	default:
		lower = m.detail.View()
	}
	body := max(m.height, 10) - 4
	switch {
	case m.showLog:
		parts = append(parts, m.styles.App.Width(w).Height(body).MaxHeight(body).Render(m.log.View()))
	case m.showHelp:
		// Help takes the whole body, so every binding is on screen.
		parts = append(parts, m.styles.App.Width(w).Height(body).MaxHeight(body).Render(lower))
	case m.unlock != nil:
		parts = append(parts, m.styles.App.Width(w).Height(body).MaxHeight(body).Render(m.unlock.View()))
	case m.dialog != nil:
		// A decision takes the whole body: every key it names, its note
		// and its confirm line must be on screen, at 60x20 too.
		parts = append(parts, m.styles.App.Width(w).Height(body).MaxHeight(body).Render(m.dialog.View()))
	case w >= 140:
		parts = append(parts, lipgloss.JoinHorizontal(lipgloss.Top, m.list().View(), " ", lower))
	default:
		listH := m.list().Height()
		parts = append(parts, m.styles.App.Height(listH).MaxHeight(listH).Render(m.list().View()), lower)
	}
	parts = append(parts, m.statusBar(w))
	if m.filterOn {
		parts = append(parts, m.filterIn.View())
	} else {
		parts = append(parts, m.hintBar(w))
	}
	out := lipgloss.JoinVertical(lipgloss.Left, parts...)
	return m.styles.App.MaxHeight(max(m.height, 10)).MaxWidth(w).Render(out)
}

func (m *Model) shortHelp() []key.Binding {
	switch {
	case m.unlock != nil:
		return m.unlock.ShortHelp()
	case m.dialog != nil:
		return m.dialog.ShortHelp()
	case m.detail.Focused():
		return m.detail.ShortHelp()
	case m.showLog:
		return m.log.ShortHelp()
	}
	bs := append([]key.Binding{m.keys.NextTab}, m.list().ShortHelp()...)
	return append(bs, m.keys.Focus, m.keys.Filter)
}

// hintBar is the one-line help: what fits of the view's bindings, then
// "? help" and "q quit", which are never cut off.
func (m *Model) hintBar(w int) string {
	if m.dialog != nil || m.unlock != nil {
		return m.help.ShortHelpView(m.shortHelp())
	}
	tail := m.help.ShortHelpView([]key.Binding{m.keys.Help, m.keys.Quit})
	sep := m.help.Styles.ShortSeparator.Render(" • ")
	room := w - lipgloss.Width(tail) - lipgloss.Width(sep)
	// Bindings one by one while they fit, with room kept for "…" (bubbles'
	// own cut keeps adding items once its ellipsis no longer fits).
	var parts []string
	used := 0
	for _, b := range m.shortHelp() {
		if !b.Enabled() {
			continue
		}
		item := m.help.Styles.ShortKey.Render(b.Help().Key) + " " + m.help.Styles.ShortDesc.Render(b.Help().Desc)
		iw := lipgloss.Width(item) + lipgloss.Width(sep)
		if used+iw > room-2 {
			parts = append(parts, m.help.Styles.Ellipsis.Render("…"))
			break
		}
		parts, used = append(parts, item), used+iw
	}
	return strings.Join(append(parts, tail), sep)
}

// fullHelp shows every binding in w cells and h lines: its groups side
// by side while they fit the width, the rest on further rows; when that
// is too tall (60x20), every binding in columns h lines high, so nothing
// is dropped.
func (m *Model) fullHelp(w, h int) string {
	var rows []string
	var row []string
	rowW := 0
	for _, col := range m.keys.FullHelp() {
		view := m.help.FullHelpView([][]key.Binding{col})
		cw := lipgloss.Width(view) + 4
		if len(row) > 0 && rowW+cw > w {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, rowW = nil, 0
		}
		row, rowW = append(row, view+"    "), rowW+cw
	}
	rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	grouped := strings.Join(rows, "\n\n")
	if lipgloss.Height(grouped) <= h {
		return grouped
	}
	var all []key.Binding
	for _, col := range m.keys.FullHelp() {
		all = append(all, col...)
	}
	var cols []string
	for start := 0; start < len(all); start += max(h, 1) {
		cols = append(cols, m.help.FullHelpView([][]key.Binding{all[start:min(start+max(h, 1), len(all))]})+"   ")
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, cols...)
}

var shortTitles = [viewCount]string{"Pending", "Conflicts", "Uncertain", "Fenced", "All"}

func (m *Model) tabs(w int) string {
	counts := [viewCount]int64{m.counts.Pending, m.counts.Conflicts, m.counts.Uncertain, m.counts.Fenced, m.counts.All}
	titles := viewTitles
	if w < 110 {
		titles = shortTitles
	}
	var tabs []string
	for v := viewID(0); v < viewCount; v++ {
		label := fmt.Sprintf("%s %d", titles[v], counts[v])
		if v == m.active {
			tabs = append(tabs, m.styles.ActiveTab.Render(label))
		} else {
			tabs = append(tabs, m.styles.Tab.Render(label))
		}
	}
	line := strings.Join(tabs, m.styles.TabGap.Render("│"))
	return ansi.Truncate(line, w, "…")
}

// operatorText says who decides and how it is proven: the key's
// registered operator on a signed ledger, "decisions unsigned" on one
// that was never signed, or that no key offered can sign.
func (m *Model) operatorText(short bool) string {
	sg := m.sign
	name := safetext.Escape(sg.Operator)
	switch {
	case !sg.Signed && short:
		return "op " + name + " · decisions unsigned"
	case !sg.Signed:
		return "operator " + name + " · decisions unsigned"
	case sg.Problem != "" && short:
		return "op: no key"
	case sg.Problem != "":
		return "no registered operator key: decisions refused"
	case short:
		return "op " + name + " signed"
	}
	fp := strings.TrimPrefix(sg.Fingerprint, "SHA256:")
	return "operator " + name + " signs (SHA256:" + fp[:min(8, len(fp))] + "…)"
}

func (m *Model) statusBar(w int) string {
	st := m.styles
	epoch := "none"
	if m.epoch != "" {
		epoch = m.epoch[:8]
	}
	mode := ""
	if m.opt.ReadOnly {
		mode = " · READ-ONLY"
	}
	refreshed := "loading"
	if !m.refresh.IsZero() {
		refreshed = "refreshed " + m.refresh.UTC().Format("15:04:05Z")
	}
	c := m.counts
	right := fmt.Sprintf(" · epoch %s · %s%s · pending %d conflicts %d uncertain %d fenced %d · %s", epoch,
		m.operatorText(false), mode, c.Pending, c.Conflicts, c.Uncertain, c.Fenced, refreshed)
	if w < 140 {
		ep := ""
		if m.epoch != "" {
			ep = " · ep " + epoch
		}
		right = fmt.Sprintf("%s · %s%s · P%d C%d U%d F%d · %s", ep, m.operatorText(true), mode,
			c.Pending, c.Conflicts, c.Uncertain, c.Fenced, strings.TrimPrefix(refreshed, "refreshed "))
	}
	path := safetext.Escape(m.store.Path())
	room := w - ansi.StringWidth(right) - len("ledger ")
	if room < 8 {
		room = 8
	}
	if ansi.StringWidth(path) > room {
		path = "…" + path[len(path)-room+1:]
	}
	line := st.StatusBar.Render(ansi.Truncate("ledger "+path+right, w, "…"))
	// The message line: the active filter, always, then the last
	// message, which lasts until the next key.
	var msg []string
	if n := m.list().selectedCount(); n > 0 {
		msg = append(msg, st.Selected.Render(fmt.Sprintf("%d selected", n)))
	}
	if m.filter != "" {
		shown := "loading"
		if l := m.list(); l.loaded {
			shown = fmt.Sprintf("%d shown", len(l.items))
			if l.more {
				shown += "+"
			}
		}
		msg = append(msg, st.Muted.Render("filter: "+safetext.Escape(m.filter)+" · "+shown))
	}
	switch {
	case m.lastErr != "":
		msg = append(msg, st.StatusError.Render("! "+m.lastErr))
	case m.notice != "":
		msg = append(msg, st.StatusOK.Render(m.notice))
	}
	return line + "\n" + ansi.Truncate(strings.Join(msg, st.Muted.Render(" · ")), w, "…")
}
