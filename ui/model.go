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
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	osc52 "github.com/aymanbagabas/go-osc52/v2"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
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
	// Bell receives the terminal bell (BEL) when the number of uncertain
	// actions rises; nil means no bell. Run rings standard error unless
	// TOLLGATE_BELL is "off".
	Bell io.Writer
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
	// helpv is the help page and the hint line.
	helpv  *helpView
	views  [viewCount]*listView
	active viewID
	detail *detailView
	dialog *dialog
	unlock *unlockView
	// full is the full view of one key (f), over the whole body.
	full *fullView
	// after is the decision to open once the key is unlocked, if one was
	// asked for while it was locked.
	after    *dialogKind
	filter   *filterBar
	showHelp bool
	log      *msgLog
	showLog  bool
	// acted are the keys this console decided: their change is not news.
	acted map[string]bool
	// pending are the keys pending at the last snapshot (nil before the
	// first), told those already announced as decided elsewhere.
	pending, told map[string]bool
	// deciding is the confirmed decision the ledger has not answered yet.
	deciding *flight
	// unconfirmed says what the operator quit without knowing, for the
	// last frame and for Run to print once the terminal is restored.
	unconfirmed string

	counts ledger.Counts
	sign   ledger.Signing
	// auth is who may decide, as last re-read; authBusy while a read is
	// out (one at a time, at most every second).
	auth     authority
	authBusy bool
	// ident is the ledger file as opened and what changed since;
	// identBusy while a check is out.
	ident     identity
	identBusy bool
	epoch     string
	refresh   time.Time
	lastErr   string
	notice    string
	inflight  bool
	width     int
	height    int
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
	m := &Model{opt: opt, store: opt.Store, watcher: w, styles: &st, keys: &km, helpv: newHelpView(&st, &km), filter: newFilterBar(&km),
		detail: newDetailView(&st, &km), ident: newIdentity(opt.Store.Path()), width: 80, height: 24, roKeys: DefaultKeyMap(), log: newMsgLog(&st, &km), acted: map[string]bool{}, told: map[string]bool{}}
	for v := viewID(0); v < viewCount; v++ {
		m.views[v] = newListView(v, &st, &km, opt.Store.Now)
	}
	m.layout()
	return m, nil
}

// Close releases the watcher's connection.
func (m *Model) Close() error { return m.watcher.Close() }

// Init starts the first load and the refresh tick.
func (m *Model) Init() tea.Cmd {
	m.inflight, m.authBusy, m.identBusy = true, true, true
	return tea.Batch(m.snapshot(), m.tick(), m.askPassphrase(), readAuthority(m.opt.Context, m.store, m.opt.Operator),
		readIdentity(m.opt.Context, m.store, m.ident.file))
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
	return query{view: m.active, filter: m.filter.Value(), order: m.list().order()}
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
	return m.status(it, false)
}

// status reads one row's detail in a command, for the detail pane or the
// full view, tagged with the view and key it is for.
func (m *Model) status(it item, full bool) tea.Cmd {
	s, v, ctx := m.store, m.active, m.opt.Context
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		d, err := s.Status(ctx, it.Key)
		if errors.Is(err, ledger.ErrNotFound) && it.Fenced != nil {
			return detailMsg{view: v, key: it.Key, id: it.ID, missing: true, full: full}
		}
		return detailMsg{view: v, key: it.Key, id: it.ID, detail: d, err: err, full: full}
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
			// Nothing written: what is shown is current as of now, and the
			// status bar's time says the console is live.
			m.inflight, m.refresh = false, m.opt.Now()
			return m, nil
		}
		return m, m.snapshot()
	case snapshotMsg:
		m.inflight = false
		if msg.err != nil {
			m.say(sevError, "refresh: "+safetext.Escape(msg.err.Error()))
			return m, nil
		}
		bell := m.ring(msg.counts)
		m.counts, m.epoch, m.sign, m.refresh = msg.counts, msg.epoch, msg.sign, m.opt.Now()
		gone := m.leftPending(msg.pending)
		why := m.whyGone(gone)
		if msg.query != m.query() {
			return m, tea.Batch(m.snapshot(), why, bell)
		}
		lost, reason := m.list().setItems(msg.items, msg.more)
		if m.dialog != nil {
			for _, c := range m.dialog.recheck(msg.query.view, msg.items, msg.more) {
				m.log.add(m.opt.Now(), sevError, "while the dialog was open: "+c)
			}
		}
		if lost != nil && slices.Contains(gone, lost.Key) {
			lost = nil // announced with who decided it, as in every view
		}
		return m, tea.Batch(m.loadDetail(), why, bell, m.cursorLeft(lost, reason))
	case noticeMsg:
		m.say(msg.sev, msg.text)
		return m, nil
	case reloadMsg:
		if msg.view != m.active {
			return m, nil
		}
		return m, m.snapshot()
	case pageMsg:
		if msg.err != nil {
			m.say(sevError, "load: "+safetext.Escape(msg.err.Error()))
		} else if msg.query == m.query() {
			m.list().appendItems(msg.items, msg.more)
		}
		return m, nil
	case detailMsg:
		if msg.full {
			if m.full != nil {
				m.full, _ = m.full.Update(msg)
			}
			return m, nil
		}
		if msg.view == m.active {
			if changed := m.detail.setDetail(msg); changed != "" && !m.acted[msg.key] && !m.told[msg.key] {
				m.say(sevInfo, changed)
				// A decision (not a vote short of its quorum) is told once.
				m.told[msg.key] = msg.detail.State != ledger.StatePending
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
		if m.deciding != nil {
			m.say(sevError, "a decision is still in flight: "+m.deciding.what()+" (esc stops waiting)")
			return m, nil
		}
		if m.ident.problem != "" {
			m.say(sevError, "not recorded: "+m.ident.problem)
			return m, nil
		}
		// The keys are this console's from now on: a refresh that sees
		// them leave Pending before the answers arrive must not report the
		// console's own decision as someone else's.
		keys := make([]string, len(msg.targets))
		for i, t := range msg.targets {
			m.acted[t.Key] = true
			keys[i] = t.Key
		}
		// Signing runs in the command; a hardware key may wait for its
		// touch, another writer may hold the ledger: the console stays
		// live and says what it waits for.
		signer := ""
		if m.sign.Signed {
			signer = m.sign.Operator
		}
		actx, cancel := context.WithCancel(m.opt.Context)
		m.deciding = newFlight(strings.ToLower(dialogVerbs[msg.kind]), keys, signer, m.ident.file, cancel, m.styles, m.keys, m.opt.Now)
		m.deciding.SetSize(m.width, 1)
		return m, tea.Batch(m.act(actx, cancel, msg), m.deciding.Init())
	case actionMsg:
		if m.deciding != nil {
			msg.stopped = m.deciding.stopped
		}
		m.deciding = nil
		m.reportAction(msg)
		return m, m.snapshot()
	case authorityTickMsg:
		return m, once(&m.authBusy, readAuthority(m.opt.Context, m.store, m.opt.Operator))
	case authorityMsg:
		m.authBusy = false
		if msg.err != nil {
			// Fail closed: a console that cannot read who may decide does
			// not keep calling votes done on what it read before.
			failed := authority{read: true, signed: true, sign: m.auth.sign, err: safetext.Escape(msg.err.Error())}
			if failed.err != m.auth.err {
				m.say(sevError, "authority could not be re-read: "+failed.err+"; no vote is shown as counting until it is")
			}
			m.auth = failed
			m.detail.setAuthority(m.auth)
			return m, authorityTick()
		}
		next := newAuthority(msg)
		changed := m.auth.changes(next)
		m.auth, m.sign = next, msg.sign
		m.detail.setAuthority(next)
		if m.full != nil {
			m.full.setAuthority(next)
		}
		if len(changed) == 0 {
			return m, authorityTick()
		}
		m.say(sevError, "authority changed: "+strings.Join(changed, "; "))
		return m, tea.Batch(authorityTick(), m.loadDetail())
	case identityTickMsg:
		return m, once(&m.identBusy, readIdentity(m.opt.Context, m.store, m.ident.file))
	case identityMsg:
		m.identBusy = false
		if m.ident.observe(msg) {
			if m.ident.problem != "" {
				m.say(sevError, m.ident.problem)
			} else {
				m.say(sevInfo, "the ledger file is back as opened: decisions are allowed again")
			}
			m.layout()
		}
		return m, identityTick()
	case spinner.TickMsg, holderTickMsg, holderMsg:
		if m.deciding == nil {
			return m, nil // the decision landed: the spinner stops
		}
		var cmd tea.Cmd
		m.deciding, cmd = m.deciding.Update(msg)
		return m, cmd
	case fullClosedMsg:
		m.full = nil
		return m, nil
	case flightQuitMsg:
		m.unconfirmed = msg.unconfirmed
		m.log.add(m.opt.Now(), sevError, msg.unconfirmed)
		return m, tea.Quit
	case decidedMsg:
		// One line in any view, every one in the log, each once.
		var said []string
		for _, d := range msg {
			if !m.told[d.key] {
				m.told[d.key] = true
				said = append(said, d.text)
				m.log.add(m.opt.Now(), sevInfo, d.text)
			}
		}
		if len(said) > 0 {
			line := said[0]
			if len(said) > 1 {
				line += fmt.Sprintf(" (and %d more: L)", len(said)-1)
			}
			m.notice, m.lastErr = line, ""
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

// ring sounds the terminal bell (when the console has one) as the count
// of uncertain actions rises: an action whose outcome nobody knows needs
// an operator, who may be looking at another window.
func (m *Model) ring(next ledger.Counts) tea.Cmd {
	w := m.opt.Bell
	if w == nil || m.refresh.IsZero() || next.Uncertain <= m.counts.Uncertain {
		return nil
	}
	m.log.add(m.opt.Now(), sevError, fmt.Sprintf("bell: %d more uncertain (%d now)", next.Uncertain-m.counts.Uncertain, next.Uncertain))
	return func() tea.Msg {
		io.WriteString(w, "\a")
		return nil
	}
}

// cursorLeft says that the row the cursor was on left the view (nil:
// it did not), and where the cursor is now, instead of moving it
// silently: filtered out, or, looked up in a command, what the key is
// now. A key this console decided is already said by its report.
func (m *Model) cursorLeft(lost *item, why string) tea.Cmd {
	if lost == nil || m.acted[lost.Key] {
		return nil
	}
	now := "the list is empty"
	if it, ok := m.list().current(); ok {
		now = "the cursor is on " + safetext.Escape(it.Key)
	}
	key, title := safetext.Escape(lost.Key), viewTitles[m.active]
	if why == "filtered out" {
		return notice(sevInfo, fmt.Sprintf("%s is filtered out of %s (esc clears the filter); %s", key, title, now))
	}
	s, ctx, k, view := m.store, m.opt.Context, lost.Key, m.active
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		d, err := s.Status(ctx, k)
		var what string
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			what = "no longer in the ledger (archived?)"
		case err != nil:
			what = "left the view (" + why + ")"
		case d.Decision != nil && d.State != ledger.StatePending:
			what = fmt.Sprintf("now %s (%s by %s)", d.State, d.Decision.Decision, safetext.Escape(d.Decision.Operator))
		case view == viewAll:
			what = "left the loaded rows"
		default:
			what = "now " + string(d.State)
		}
		return noticeMsg{sevInfo, fmt.Sprintf("%s left %s: %s; %s", key, title, what, now)}
	}
}

// once starts read unless one is still out (busy), for the reads
// repeated every second: one at a time, however slow the ledger.
func once(busy *bool, read tea.Cmd) tea.Cmd {
	if *busy {
		return nil
	}
	*busy = true
	return read
}

// typing reports whether an input has the keys: a dialog's note, the
// passphrase prompt or the filter.
func (m *Model) typing() bool {
	return m.unlock != nil || m.dialog != nil || m.filter.Typing() || m.list().Typing()
}

// burst handles a key message carrying several runes (keys typed faster
// than the terminal is read, or a paste) as that many key presses, until
// one opens an input, which then takes the rest whole.
func (m *Model) burst(msg tea.KeyMsg) tea.Cmd {
	var cmds []tea.Cmd
	for i, r := range msg.Runes {
		if m.typing() {
			rest := msg
			rest.Runes = msg.Runes[i:]
			return tea.Batch(append(cmds, m.key(rest))...)
		}
		one := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}
		if r == ' ' {
			one.Type = tea.KeySpace
		}
		cmds = append(cmds, m.key(one))
	}
	return tea.Batch(cmds...)
}

// key routes one key press: bursts and pastes are split, a decision in
// flight holds q, then whatever has the keys takes them (the passphrase
// prompt, a dialog, the filter's input, the jump prompt, the full view);
// otherwise the console's own keys (views, overlays, decisions), and
// last the focused component: the log, the detail pane or the list.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	switch {
	case msg.Paste && msg.Type == tea.KeyRunes && !m.typing() && m.deciding == nil && !m.showLog && m.full == nil:
		// Pasted text is never a string of commands (a q in it would
		// quit): it goes into the filter, which finds the key pasted.
		open := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'/'}})
		return tea.Batch(open, m.key(msg))
	case msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && !m.typing():
		return m.burst(msg)
	}
	if m.deciding != nil {
		// A decision in flight holds q (and ctrl+c, from any input too)
		// until it lands, and takes esc to stop waiting.
		typing := m.typing()
		quit := msg.Type == tea.KeyCtrlC || !typing && key.Matches(msg, m.keys.Quit)
		stop := !typing && !m.showLog && !m.showHelp && key.Matches(msg, m.keys.StopWaiting)
		if quit || stop {
			var cmd tea.Cmd
			m.deciding, cmd = m.deciding.Update(msg)
			if quit && cmd == nil {
				m.log.add(m.opt.Now(), sevError, "quit held: "+m.deciding.what()+" is not yet confirmed by the ledger")
			}
			return cmd
		}
	}
	var cmd tea.Cmd
	switch {
	case msg.Type == tea.KeyCtrlC:
		return tea.Quit // from any dialog or input too
	case m.unlock != nil:
		m.unlock, cmd = m.unlock.Update(msg)
		return cmd
	case m.dialog != nil:
		m.dialog, cmd = m.dialog.Update(msg)
		return cmd
	case m.filter.Typing():
		before := m.filter.Value()
		m.filter, cmd = m.filter.Update(msg)
		if f := m.filter.Value(); f != before {
			// Live: every keystroke re-reads the view with what is typed.
			return tea.Batch(cmd, m.setFilter(f))
		}
		return cmd
	case m.list().Typing():
		return m.routeList(msg)
	case m.full != nil && !key.Matches(msg, m.keys.Quit):
		m.full, cmd = m.full.Update(msg)
		return cmd
	}
	m.notice, m.lastErr = "", "" // a message lasts until the next action
	if cmd, ok := m.consoleKey(msg); ok {
		return cmd
	}
	switch {
	case m.showLog:
		m.log, cmd = m.log.Update(msg)
		return cmd
	case m.showHelp:
		m.helpv, cmd = m.helpv.Update(msg)
		return cmd
	case m.detail.Focused():
		m.detail, cmd = m.detail.Update(msg)
		return cmd
	}
	return m.routeList(msg)
}

// consoleKey handles the keys that are the console's, not one
// component's: quit, the overlays, the views, the filter, and the
// decisions, which open a dialog. ok is false for any other key.
func (m *Model) consoleKey(msg tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit, true
	case key.Matches(msg, k.Help):
		m.showHelp, m.showLog = !m.showHelp, false
		m.layout()
	case key.Matches(msg, k.Log):
		m.showLog, m.showHelp = !m.showLog, false
	case m.showLog && !key.Matches(msg, k.Cancel):
		return nil, false // the log scrolls
	case key.Matches(msg, k.Cancel):
		switch {
		case m.showLog:
			m.showLog = false
		case m.showHelp:
			m.showHelp = false
			m.layout()
		case m.detail.Focused():
			m.detail.SetFocus(false)
		case m.filter.Value() != "":
			m.filter.Clear()
			return m.setFilter(""), true
		}
	case key.Matches(msg, k.Filter):
		return m.filter.Open(), true
	case key.Matches(msg, k.NextTab) && (msg.Type == tea.KeyTab || !m.detail.Focused()):
		return m.switchView((m.active + 1) % viewCount), true
	case key.Matches(msg, k.PrevTab) && (msg.Type == tea.KeyShiftTab || !m.detail.Focused()):
		return m.switchView((m.active + viewCount - 1) % viewCount), true
	case key.Matches(msg, k.Focus):
		m.detail.SetFocus(!m.detail.Focused())
	case key.Matches(msg, k.Views):
		return m.switchView(viewID(msg.String()[0] - '1')), true
	case key.Matches(msg, k.Full):
		return m.openFull(), true
	case key.Matches(msg, k.CopyKey, k.CopyDigest):
		return m.copySelected(key.Matches(msg, k.CopyDigest)), true
	case m.opt.ReadOnly && m.roKeys.matchesDecision(msg):
		m.say(sevError, "read-only console (--read-only): approve, reject, reconcile, review and select are disabled")
	case key.Matches(msg, k.Approve):
		return m.openDecision(dlgApprove), true
	case key.Matches(msg, k.Reject):
		return m.openDecision(dlgReject), true
	case key.Matches(msg, k.Reconcile):
		return m.openDecision(dlgReconcile), true
	case key.Matches(msg, k.Review):
		return m.openDecision(dlgReview), true
	default:
		return nil, false
	}
	return nil, true
}

// routeList gives a key to the active list, then loads the detail of
// the row the cursor moved to and the next page when the cursor nears
// the end of the loaded rows.
func (m *Model) routeList(msg tea.KeyMsg) tea.Cmd {
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

// openFull opens the full view of the row under the cursor.
func (m *Model) openFull() tea.Cmd {
	it, ok := m.list().current()
	if !ok {
		m.say(sevInfo, m.nothingText("nothing selected"))
		return nil
	}
	m.showHelp, m.showLog = false, false
	m.full = newFullView(it, m.styles, m.keys, m.auth)
	m.layout()
	return m.status(it, true)
}

func (m *Model) switchView(v viewID) tea.Cmd {
	m.active = v
	m.detail.SetFocus(false)
	m.notice = ""
	return tea.Batch(m.loadDetail(), m.snapshot())
}

func (m *Model) setFilter(f string) tea.Cmd {
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
		m.say(sevInfo, m.nothingText("nothing to copy"))
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
	w, ctx, inTmux := m.opt.Clipboard, m.opt.Context, os.Getenv("TMUX") != ""
	screen := strings.HasPrefix(os.Getenv("TERM"), "screen")
	said := fmt.Sprintf("copied the %s of %s to the clipboard (OSC 52; the terminal must allow it)", what, safetext.Escape(it.Key))
	return func() tea.Msg {
		seq, sev := osc52.New(text), sevInfo
		switch {
		case inTmux:
			var advice string
			if seq, advice = throughTmux(ctx, seq); advice != "" {
				said, sev = "the "+what+" of "+safetext.Escape(it.Key)+" was sent, but "+advice, sevError
			}
		case screen:
			seq = seq.Screen()
		}
		seq.WriteTo(w)
		return noticeMsg{sev, said}
	}
}

// throughTmux picks how OSC 52 reaches the clipboard from inside tmux,
// which drops what it is not told to pass: with set-clipboard on, tmux
// takes the plain sequence itself (and sets the outer terminal's
// clipboard); with allow-passthrough on, or a tmux older than 3.3 (no
// such option, passthrough always allowed), the sequence wrapped for
// passthrough gets through. Otherwise (tmux 3.3's defaults) nothing
// would: advice says what to set. It asks the tmux server, so it runs in
// a command, never in Update.
func throughTmux(ctx context.Context, seq osc52.Sequence) (osc52.Sequence, string) {
	option := func(args ...string) (string, bool) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "tmux", append([]string{"show-options"}, args...)...).Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	if v, _ := option("-sv", "set-clipboard"); v == "on" {
		return seq, ""
	}
	switch v, ok := option("-gwv", "allow-passthrough"); {
	case !ok, v == "on", v == "all":
		return seq.Tmux(), ""
	}
	return seq.Tmux(), "tmux drops it: run `tmux set -s set-clipboard on` (or `tmux set -g allow-passthrough on`) and press again"
}

// nothingText is why a key that acts on a row found none: the view's
// rows not read yet (a key pressed as the console opens, before its
// first load lands), else empty, as none says.
func (m *Model) nothingText(none string) string {
	if !m.list().loaded {
		return "the list is still loading: nothing is selected yet, press again once its rows show"
	}
	return none
}

// openDecision opens the confirmation dialog for the chosen rows, after
// checking that the decision applies to them.
func (m *Model) openDecision(kind dialogKind) tea.Cmd {
	if m.deciding != nil {
		m.say(sevError, "one decision at a time: "+m.deciding.what()+" is still waiting for the ledger (esc stops waiting)")
		return nil
	}
	if m.ident.problem != "" {
		m.say(sevError, "decisions refused: "+m.ident.problem)
		return nil
	}
	rows := m.list().chosen()
	if len(rows) == 0 {
		m.say(sevInfo, m.nothingText("nothing selected"))
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
		want := wantState(kind)
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
			// The stored payload is the key's (its kind and target load
			// below); the attempt is the retry's, shown beside it.
			c := it.Conflict
			t.Digest = c.StoredSHA256
			t.Attempt = &attempt{Digest: c.AttemptSHA, Withheld: c.Attempted == nil}
			if c.Attempted != nil {
				t.Attempt.Kind, t.Attempt.Subject = c.Attempted.Kind, c.Attempted.Target
			}
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
// It runs under actx, which esc cancels (cancel is called once it ends).
func (m *Model) act(actx context.Context, cancel context.CancelFunc, d dialogDoneMsg) tea.Cmd {
	s, op := m.store, m.opt.Operator
	return func() tea.Msg {
		defer cancel()
		ctx, stop := context.WithTimeout(actx, 30*time.Second)
		defer stop()
		n := len(d.targets)
		out := actionMsg{action: strings.ToLower(dialogVerbs[d.kind]), keys: make([]string, n), errs: make([]error, n), decisions: make([]ledger.Decision, n)}
		var wg sync.WaitGroup
		for i, t := range d.targets {
			out.keys[i] = t.Key
			wg.Add(1)
			go func() {
				defer wg.Done()
				out.decisions[i], out.errs[i] = decide(ctx, s, d, t, op)
			}()
		}
		wg.Wait()
		return out
	}
}

// decide makes one confirmed decision on one target; an approval or a
// rejection returns the decision, with the quorum it reached.
func decide(ctx context.Context, s Ledger, d dialogDoneMsg, t target, op string) (ledger.Decision, error) {
	switch d.kind {
	case dlgApprove:
		return s.Approve(ctx, t.Key, op, d.text)
	case dlgReject:
		return s.Reject(ctx, t.Key, op, d.text)
	case dlgReconcile:
		_, err := s.Reconcile(ctx, t.Key, d.result, op, d.text)
		return ledger.Decision{}, err
	case dlgReview:
		if t.View == viewFenced {
			return ledger.Decision{}, s.ReviewFenced(ctx, t.ID, op, d.text)
		}
		return ledger.Decision{}, s.ReviewConflict(ctx, t.ID, op, d.text)
	}
	return ledger.Decision{}, nil
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
type decidedMsg []decided

// decided is one key decided elsewhere and the line that says so.
type decided struct{ key, text string }

// leftPending takes the keys pending now and returns those that were
// pending at the last snapshot and are no longer, once each.
func (m *Model) leftPending(keys []string) []string {
	now := make(map[string]bool, len(keys))
	for _, k := range keys {
		now[k] = true
	}
	var gone []string
	for k := range m.pending {
		if !now[k] && !m.told[k] && !m.acted[k] {
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)
	m.pending = now
	return gone
}

// whyGone looks up keys that left Pending without this console acting on
// them, whatever the view, and says who decided them and when.
func (m *Model) whyGone(keys []string) tea.Cmd {
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
				out = append(out, decided{k, fmt.Sprintf("%s was %s by %s at %s", safetext.Escape(k), d.Decision.Decision, safetext.Escape(d.Decision.Operator), when(d.Decision.At))})
			}
		}
		return out
	}
}

// quorumText is how far one approval brought its quorum: "1 of 2
// approvals (bob); waiting for one more". The decision names only its own
// operator; earlier approvers are counted.
func quorumText(d ledger.Decision) string {
	who := safetext.Escape(d.Operator)
	if n := d.Approvals - 1; n == 1 {
		who += " and 1 other"
	} else if n > 1 {
		who += fmt.Sprintf(" and %d others", n)
	}
	return fmt.Sprintf("%d of %d approvals (%s); waiting for %s", d.Approvals, d.Approvers, who, more(d.Approvers-d.Approvals))
}

// more is "one more" or "3 more".
func more(n int) string {
	if n == 1 {
		return "one more"
	}
	return fmt.Sprintf("%d more", n)
}

// Unconfirmed says what the operator quit without the ledger confirming
// (a decision still in flight), or "".
func (m *Model) Unconfirmed() string { return m.unconfirmed }

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

// reportAction says what became of each key of a decision: done, a vote
// short of its quorum (the action still pending), not recorded because
// the operator stopped waiting, or refused.
func (m *Model) reportAction(a actionMsg) {
	var refused, done, votes, stopped []string
	now := m.opt.Now()
	for i, err := range a.errs {
		m.acted[a.keys[i]] = true
		key := safetext.Escape(a.keys[i])
		var d ledger.Decision
		if i < len(a.decisions) {
			d = a.decisions[i]
		}
		switch {
		case err != nil && a.stopped:
			stopped = append(stopped, key)
			m.log.add(now, sevError, a.action+" not recorded for "+key+": you stopped waiting for the ledger ("+safetext.Escape(err.Error())+")")
		case err != nil:
			why := safetext.Escape(refusalText(err))
			refused = append(refused, key+": "+why)
			m.log.add(now, sevError, a.action+" refused for "+key+": "+safetext.Escape(err.Error()))
		case d.Decision == ledger.DecisionApproved && d.State == ledger.StatePending:
			// One vote of a quorum: the action is still pending.
			text := key + ": " + quorumText(d)
			votes = append(votes, text)
			m.log.add(now, sevInfo, a.action+" vote recorded for "+text)
		default:
			done = append(done, key)
			m.log.add(now, sevInfo, a.action+" done for "+key)
		}
	}
	m.list().clearSelection()
	var parts []string
	if len(done) > 0 || len(votes) == 0 && len(stopped) == 0 {
		part := fmt.Sprintf("%s: %d done", a.action, len(done))
		if len(done) > 0 {
			part += " (" + strings.Join(done, ", ") + ")"
		}
		parts = append(parts, part)
	}
	parts = append(parts, votes...)
	if len(stopped) > 0 {
		parts = append(parts, fmt.Sprintf("stopped waiting: %s %s not recorded", a.action, strings.Join(stopped, ", ")))
	}
	m.notice = strings.Join(parts, " · ")
	m.lastErr = ""
	if len(refused) > 0 {
		m.lastErr = fmt.Sprintf("%d refused: %s · L shows the full text", len(refused), strings.Join(refused, "; "))
	}
}

// layout gives every component its size.
func (m *Model) layout() {
	w, h := max(m.width, 40), max(m.height, 10)
	body := h - m.chrome()
	m.helpv.SetSize(w, body)
	m.filter.SetSize(w, 1)
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
	if m.full != nil {
		m.full.SetSize(w, body)
	}
	if m.deciding != nil {
		m.deciding.SetSize(w, 1)
	}
	m.log.SetSize(w, body)
}

// chrome is how many lines are not the body: the banner, the tabs, the
// two status lines and the help line.
func (m *Model) chrome() int {
	if b := m.banner(max(m.width, 40)); b != "" {
		return 4 + lipgloss.Height(b)
	}
	return 4
}

// banner is the loud line over everything while the ledger file is not
// the one opened (deleted, replaced, another ledger): what happened, in
// the error style and reversed, wrapped (never cut) to w; "" otherwise.
// The whole text is in the message log and each refusal.
func (m *Model) banner(w int) string {
	if m.ident.problem == "" {
		return ""
	}
	text := "!! " + m.ident.headline() + " · decisions refused · L for details"
	if ansi.StringWidth(text) > w {
		text = "!! " + m.ident.headline() + " · L for details"
	}
	return m.styles.Banner.Width(w).Render(wrap(text, w))
}

// View draws the console.
func (m *Model) View() string {
	w := max(m.width, 40)
	var parts []string
	if b := m.banner(w); b != "" {
		parts = append(parts, b)
	}
	parts = append(parts, m.tabs(w))
	lower := m.detail.View()
	body := max(m.height, 10) - m.chrome()
	switch {
	case m.showLog:
		parts = append(parts, m.styles.App.Width(w).Height(body).MaxHeight(body).Render(m.log.View()))
	case m.showHelp:
		// Help takes the whole body, so every binding is on screen.
		parts = append(parts, m.styles.App.Width(w).Height(body).MaxHeight(body).Render(m.helpv.View()))
	case m.unlock != nil:
		parts = append(parts, m.styles.App.Width(w).Height(body).MaxHeight(body).Render(m.unlock.View()))
	case m.full != nil:
		parts = append(parts, m.styles.App.Width(w).Height(body).MaxHeight(body).Render(m.full.View()))
	case m.dialog != nil:
		// A decision takes the whole body: every key it names, its note
		// and its confirm line must be on screen, at 60x20 too.
		parts = append(parts, m.styles.App.Width(w).Height(body).MaxHeight(body).Render(m.dialog.View()))
	case w >= 140:
		parts = append(parts, lipgloss.JoinHorizontal(lipgloss.Top, m.list().View(), " ", lower))
	default:
		listH := m.list().Height()
		// The pane may be taller than the room left at the smallest sizes
		// (a banner takes a line): it is cut, never the status lines.
		lowH := max(body-listH, 1)
		parts = append(parts, m.styles.App.Height(listH).MaxHeight(listH).Render(m.list().View()),
			m.styles.App.MaxHeight(lowH).Render(lower))
	}
	parts = append(parts, m.statusBar(w))
	switch {
	case m.filter.Typing():
		parts = append(parts, m.filter.View())
	case m.list().Typing():
		parts = append(parts, m.list().Prompt())
	default:
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
	case m.full != nil:
		return m.full.ShortHelp()
	case m.deciding != nil:
		return m.deciding.ShortHelp()
	case m.detail.Focused():
		return m.detail.ShortHelp()
	case m.showLog:
		return m.log.ShortHelp()
	}
	bs := append([]key.Binding{m.keys.NextTab}, m.list().ShortHelp()...)
	return append(bs, m.keys.Focus, m.keys.Filter)
}

// hintBar is the one-line help of what has the keys.
func (m *Model) hintBar(w int) string {
	return m.helpv.hints(m.shortHelp(), w, m.dialog != nil || m.unlock != nil)
}

var (
	shortTitles = [viewCount]string{"Pending", "Conflicts", "Uncertain", "Fenced", "All"}
	// tinyTitles keep every view's count on screen below 60 columns.
	tinyTitles = [viewCount]string{"Pnd", "Cnf", "Unc", "Fen", "All"}
)

func (m *Model) tabs(w int) string {
	counts := [viewCount]int64{m.counts.Pending, m.counts.Conflicts, m.counts.Uncertain, m.counts.Fenced, m.counts.All}
	titles := viewTitles
	switch {
	case w < 60:
		titles = tinyTitles
	case w < 110:
		titles = shortTitles
	}
	var tabs []string
	for v := viewID(0); v < viewCount; v++ {
		label := fmt.Sprintf("%s %d", titles[v], counts[v])
		if v == m.active {
			tabs = append(tabs, m.styles.CurrentTab.Render("["+label+"]")) // as wide as a padded tab
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
	return "operator " + name + " signs (" + shortFP(sg.Fingerprint) + ")"
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
	// The clock is when the ledger was last checked: it moves while
	// idle, so a live console is told from a frozen one. Below 100
	// columns it leads the line, shorter, where nothing cuts it.
	refreshed, lead := "loading", "loading · "
	if !m.refresh.IsZero() {
		refreshed = "updated " + m.refresh.UTC().Format("15:04:05Z")
		lead = "upd " + m.refresh.UTC().Format("15:04:05") + " · "
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
			c.Pending, c.Conflicts, c.Uncertain, c.Fenced, refreshed)
	}
	if w >= 100 {
		lead = ""
	} else {
		right = strings.TrimSuffix(right, " · "+refreshed)
	}
	path := safetext.Escape(m.store.Path())
	room := w - ansi.StringWidth(lead+right) - len("ledger ")
	if room < 8 {
		room = 8
	}
	if ansi.StringWidth(path) > room {
		path = "…" + path[len(path)-room+1:]
	}
	line := st.StatusBar.Render(ansi.Truncate(lead+"ledger "+path+right, w, "…"))
	// The message line: the active filter, always, then the last
	// message, which lasts until the next key.
	var msg []string
	if n := m.list().selectedCount(); n > 0 {
		msg = append(msg, st.Selected.Render(fmt.Sprintf("%d selected", n)))
	}
	if f := m.filter.Value(); f != "" {
		shown := "loading"
		if l := m.list(); l.loaded {
			shown = fmt.Sprintf("%d shown", len(l.items))
			if l.more {
				shown += "+"
			}
		}
		msg = append(msg, st.Muted.Render("filter: "+safetext.Escape(f)+" · "+shown))
	}
	switch {
	case m.unconfirmed != "":
		msg = append(msg, st.StatusError.Render("! "+m.unconfirmed))
	case m.deciding != nil && m.lastErr != "":
		// A refusal while in flight (a second decision): said beside the
		// spinner, which keeps turning.
		msg = append(msg, m.deciding.Spinner()+st.StatusError.Render("! "+m.lastErr))
	case m.deciding != nil:
		msg = append(msg, m.deciding.View())
	case m.lastErr != "":
		msg = append(msg, st.StatusError.Render("! "+m.lastErr))
	case m.notice != "":
		msg = append(msg, st.StatusOK.Render(m.notice))
	}
	return line + "\n" + ansi.Truncate(strings.Join(msg, st.Muted.Render(" · ")), w, "…")
}
