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
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

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
	// scanWindow is how many ids one step of a filter's scan of All reads
	// (zero: defaultScanWindow); tests make it small.
	scanWindow int64
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
	// voted are the keys this console cast a vote on that left them
	// pending, with the name it voted as: their decision by another
	// operator is news, and its own votes are not.
	voted map[string]string
	// noticeKeys are the keys this console's own message line is about
	// (its votes short of a quorum): it is taken down when one of them
	// leaves Pending, so that it never outlives the key's change.
	noticeKeys []string
	noticeText string // the message noticeKeys belong to, while shown
	// votesSeen is the newest vote id announced or skipped (-1 before the
	// first snapshot, which only learns it).
	votesSeen int64
	// pending are the keys pending at the last snapshot (nil before the
	// first), told those already announced as decided elsewhere.
	pending, told map[string]bool
	// deciding is the confirmed decision the ledger has not answered yet.
	deciding *flight
	// unconfirmed says what the operator quit without knowing, for the
	// last frame and for Run to print once the terminal is restored.
	unconfirmed string
	// dropping is the type-ahead after a refused decision key, timed by
	// wall (time.Now; tests set their own).
	dropping typeAheadDrop
	wall     func() time.Time

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
	// refreshErr: the last refresh failed, and its message may be shown;
	// failures in a row set retryAt, before which no refresh is tried.
	refreshErr bool
	failures   int
	retryAt    time.Time
	inflight   bool
	width      int
	height     int
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
	if opt.scanWindow <= 0 {
		opt.scanWindow = defaultScanWindow
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
		detail: newDetailView(&st, &km), ident: newIdentity(opt.Store.Path()), width: 80, height: 24, roKeys: DefaultKeyMap(), log: newMsgLog(&st, &km), acted: map[string]bool{}, voted: map[string]string{}, votesSeen: -1, told: map[string]bool{}, wall: time.Now}
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
	var above int64
	if sc := m.list().scan; sc != nil && !sc.running {
		above = sc.top
	}
	f := snapshotCmd(m.opt.Context, m.store, m.query(), m.opt.Operator, limit, above, m.votesSeen)
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
		return m, m.onTick(msg)
	case checkedMsg:
		return m, m.onChecked(msg)
	case snapshotMsg:
		return m, m.onSnapshot(msg)
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
	case scanMsg:
		return m, m.onScan(msg)
	case detailMsg:
		return m, m.onDetail(msg)
	case dialogDoneMsg:
		return m, m.onDialogDone(msg)
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
		return m, m.onAuthority(msg)
	case identityTickMsg:
		return m, once(&m.identBusy, readIdentity(m.opt.Context, m.store, m.ident.file))
	case identityMsg:
		return m, m.onIdentity(msg)
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
		return m, m.onDecided(msg)
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
		return m, m.onUnlockDone(msg)
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

// onTick handles a refresh tick: check the ledger for writes, or re-read it when a deadline passed.
func (m *Model) onTick(msg tickMsg) tea.Cmd {
	cmds := []tea.Cmd{m.tick()}
	switch {
	case m.inflight:
	case time.Now().Before(m.retryAt):
		// The last refresh failed: wait out its backoff rather than ask a
		// stopped server ten times a second.
	case m.deadlinePassed():
		// A state that changes because time passes (an approval
		// expiring, a lease running out) changes no file: re-read.
		m.inflight = true
		cmds = append(cmds, m.snapshot())
	default:
		m.inflight = true
		cmds = append(cmds, m.check())
	}
	return tea.Batch(cmds...)
}

// onChecked handles the answer to a check for writes.
func (m *Model) onChecked(msg checkedMsg) tea.Cmd {
	if msg.err != nil {
		m.inflight = false
		m.refreshFailed(msg.err)
		return nil
	}
	if !msg.changed {
		// Nothing written: what is shown is current as of now, and the
		// status bar's time says the console is live.
		m.inflight, m.refresh = false, m.opt.Now()
		m.refreshed()
		return nil
	}
	return m.snapshot()
}

// onSnapshot handles a reload of the counts and the active list.
func (m *Model) onSnapshot(msg snapshotMsg) tea.Cmd {
	m.inflight = false
	if msg.err != nil {
		m.refreshFailed(msg.err)
		return nil
	}
	bell := m.ring(msg.counts)
	m.counts, m.epoch, m.sign, m.refresh = msg.counts, msg.epoch, msg.sign, m.opt.Now()
	m.refreshed()
	for _, v := range m.views {
		v.setActiveEpoch(msg.epoch)
	}
	m.detail.setActiveEpoch(msg.epoch)
	gone := m.leftPending(msg.pending)
	for _, k := range m.noticeKeys {
		if m.notice == m.noticeText && slices.Contains(gone, k) {
			m.notice, m.noticeKeys = shownKey(k)+" left Pending", nil
			break
		}
	}
	why := m.whyGone(gone)
	m.announceVotes(msg, gone)
	if msg.query != m.query() {
		return tea.Batch(m.snapshot(), why, bell)
	}
	if scanning(msg.query) {
		return tea.Batch(why, bell, m.scanSnapshot(msg))
	}
	m.list().scan = nil // another order: the rows are one query's
	lost, reason := m.list().setItems(msg.items, msg.more)
	if m.dialog != nil {
		for _, c := range m.dialog.recheck(msg.query.view, msg.items, msg.more) {
			m.log.add(m.opt.Now(), sevError, "while the dialog was open: "+c)
		}
	}
	if lost != nil && slices.Contains(gone, lost.Key) {
		lost = nil // announced with who decided it, as in every view
	}
	return tea.Batch(m.loadDetail(), why, bell, m.cursorLeft(lost, reason))
}

// scanSnapshot starts the scan of a filter of All once the counts say
// how many ids it has to read, or, on a refresh, adds the rows written
// above its top.
func (m *Model) scanSnapshot(msg snapshotMsg) tea.Cmd {
	l := m.list()
	switch {
	case l.scan == nil:
		return tea.Batch(m.loadDetail(), m.scanStep(m.active, l.startScan(msg.newest)))
	case l.scan.running || msg.above != l.scan.top:
		return nil // a window is out, or the rows are above another top
	}
	l.addAbove(msg.items, msg.newest)
	return m.loadDetail() // the rows keep their state; the pane re-reads it
}

// scanStep reads one window of the active filter's scan of view v.
func (m *Model) scanStep(v viewID, r scanReq) tea.Cmd {
	return scanCmd(m.opt.Context, m.store, v, m.views[v].filter, m.opt.scanWindow, r)
}

// onScan handles one window of a scan: its rows are added and the next
// window read, until a page is found or every id is read. A window of a
// dropped scan, or of a view left, is dropped.
func (m *Model) onScan(msg scanMsg) tea.Cmd {
	l := m.views[msg.view]
	switch {
	case !l.ofScan(msg):
		return nil
	case msg.err != nil:
		l.stopScan()
		m.say(sevError, "scan: "+safetext.Escape(msg.err.Error())+" (/ filters again)")
		return nil
	case msg.view != m.active:
		l.stopScan()
		return nil
	}
	before, _ := l.current()
	var cmds []tea.Cmd
	if r, ok := l.scanned(msg); ok {
		cmds = append(cmds, m.scanStep(msg.view, r))
	}
	if after, _ := l.current(); after.Key != before.Key || after.ID != before.ID {
		cmds = append(cmds, m.loadDetail())
	}
	return tea.Batch(cmds...)
}

// onDetail handles a row's detail, for the pane or the full view.
func (m *Model) onDetail(msg detailMsg) tea.Cmd {
	if msg.full {
		if m.full != nil {
			m.full, _ = m.full.Update(msg)
		}
		return nil
	}
	if msg.view == m.active {
		if changed := m.detail.setDetail(msg); changed != "" && !m.acted[msg.key] && !m.told[msg.key] {
			m.say(sevInfo, changed)
			// A decision (not a vote short of its quorum) is told once.
			m.told[msg.key] = msg.detail.State != ledger.StatePending
		}
	}
	return nil
}

// onDialogDone handles a dialog closed: a confirmed decision starts in a command.
func (m *Model) onDialogDone(msg dialogDoneMsg) tea.Cmd {
	m.dialog = nil
	if !msg.confirmed {
		msg := "cancelled"
		if n := m.list().selectedCount(); n > 0 {
			msg = fmt.Sprintf("cancelled; %d still selected (* clears)", n)
		}
		m.say(sevInfo, msg)
		return nil
	}
	if m.deciding != nil {
		m.say(sevError, "a decision is still in flight: "+m.deciding.what()+" (esc stops waiting)")
		return nil
	}
	if m.ident.problem != "" {
		m.say(sevError, "not recorded: "+m.ident.problem)
		return nil
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
	if isBackground(m.lastErr) {
		m.lastErr = "" // the flight's line says what it waits for
	}
	m.deciding = newFlight(strings.ToLower(dialogVerbs[msg.kind]), keys, signer, m.ident.file, cancel, m.styles, m.keys, m.opt.Now)
	m.deciding.SetSize(m.width, 1)
	return tea.Batch(m.act(actx, cancel, msg), m.deciding.Init())
}

// onAuthority handles who may decide, re-read.
func (m *Model) onAuthority(msg authorityMsg) tea.Cmd {
	m.authBusy = false
	if msg.err != nil {
		// Fail closed: a console that cannot read who may decide does
		// not keep calling votes done on what it read before.
		failed := authority{read: true, signed: true, sign: m.auth.sign, err: safetext.Escape(msg.err.Error())}
		if failed.err != m.auth.err {
			m.background(authorityPrefix + failed.err + "; no vote is shown as counting until it is")
		}
		m.auth = failed
		m.detail.setAuthority(m.auth)
		return authorityTick()
	}
	next := newAuthority(msg)
	changed := m.auth.changes(next)
	m.auth, m.sign = next, msg.sign
	m.detail.setAuthority(next)
	if m.full != nil {
		m.full.setAuthority(next)
	}
	if len(changed) == 0 {
		return authorityTick()
	}
	m.say(sevError, "authority changed: "+strings.Join(changed, "; "))
	return tea.Batch(authorityTick(), m.loadDetail())
}

// onIdentity handles the ledger file's identity, re-checked.
func (m *Model) onIdentity(msg identityMsg) tea.Cmd {
	m.identBusy = false
	if m.ident.observe(msg) {
		if m.ident.problem != "" {
			m.say(sevError, m.ident.problem)
		} else {
			m.say(sevInfo, "the ledger file is back as opened: decisions are allowed again")
		}
		m.layout()
	}
	return identityTick()
}

// onDecided handles keys decided elsewhere, said once each.
func (m *Model) onDecided(msg decidedMsg) tea.Cmd {
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
	return nil
}

// onUnlockDone handles the passphrase prompt closed.
func (m *Model) onUnlockDone(msg unlockDoneMsg) tea.Cmd {
	m.unlock = nil
	after := m.after
	m.after = nil
	if msg.skipped {
		m.say(sevInfo, "operator key still locked: a decision asks for its passphrase first")
		return nil
	}
	m.say(sevInfo, "operator key unlocked")
	if after != nil {
		return m.openDecision(*after)
	}
	return nil
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

// typeAhead is how long after a refused decision key the keys typed are
// taken as its note and dropped, each one extending it: type-ahead
// arrives within milliseconds, a fast typist's keys 100-200ms apart,
// while a key pressed after reading the refusal comes later.
const typeAhead = 300 * time.Millisecond

// dropTypeAhead reports whether msg is typed right after a refused
// decision key, and drops it if so. A note typed blind after a refused
// c or a (a stale row, the wrong view, no key to sign) has no dialog to
// go into: its letters would run as commands, and an r among them opens
// a rejection of the row under the cursor, one enter from deciding it.
func (m *Model) dropTypeAhead(msg tea.KeyMsg) bool {
	if m.dropping.until.IsZero() {
		return false
	}
	now := m.wall()
	typed := msg.Type == tea.KeyRunes || msg.Type == tea.KeySpace || msg.Type == tea.KeyEnter || msg.Type == tea.KeyBackspace
	if !now.Before(m.dropping.until) || !typed || m.typing() {
		if m.dropping.keys != "" {
			m.log.add(m.opt.Now(), sevError, m.dropping.text())
		}
		m.dropping = typeAheadDrop{}
		return false
	}
	m.dropping.until = now.Add(typeAhead)
	switch msg.Type {
	case tea.KeyEnter:
		m.dropping.keys += "⏎"
	default:
		m.dropping.keys += msg.String()
	}
	m.lastErr, m.notice = m.dropping.text(), ""
	return true
}

// typeAheadDrop is the keys dropped after a refused decision key: the
// refusal they followed, and until when the next key is dropped too.
type typeAheadDrop struct {
	refusal string
	keys    string
	until   time.Time
}

func (d typeAheadDrop) text() string {
	// The dropped keys lead: the line is cut at the terminal's width,
	// and a long key in the refusal would push them out of sight.
	return `dropped "` + safetext.Escape(d.keys) + `", typed right after a refused key: ` + d.refusal
}

// refusedDecision reports whether msg was a decision key that opened no
// dialog (and no passphrase prompt before one): refused, as the message
// line says.
func (m *Model) refusedDecision(msg tea.KeyMsg) bool {
	k := m.roKeys
	return key.Matches(msg, k.Approve, k.Reject, k.Reconcile, k.Review) && m.dialog == nil && m.unlock == nil
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
		quit := key.Matches(msg, m.keys.ForceQuit) || !typing && key.Matches(msg, m.keys.Quit)
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
	if m.dropTypeAhead(msg) {
		return nil
	}
	var cmd tea.Cmd
	switch {
	case key.Matches(msg, m.keys.ForceQuit):
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
	case key.Matches(msg, k.TabKey) || key.Matches(msg, k.NextTab) && !m.detail.Focused():
		return m.switchView((m.active + 1) % viewCount), true
	case key.Matches(msg, k.ShiftTab) || key.Matches(msg, k.PrevTab) && !m.detail.Focused():
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
		return m.decisionKey(msg, dlgApprove), true
	case key.Matches(msg, k.Reject):
		return m.decisionKey(msg, dlgReject), true
	case key.Matches(msg, k.Reconcile):
		return m.decisionKey(msg, dlgReconcile), true
	case key.Matches(msg, k.Review):
		return m.decisionKey(msg, dlgReview), true
	default:
		return nil, false
	}
	return nil, true
}

// decisionKey opens the decision's dialog; when it is refused instead,
// the keys typed right after it (its note) are dropped for a moment.
func (m *Model) decisionKey(msg tea.KeyMsg, kind dialogKind) tea.Cmd {
	cmd := m.openDecision(kind)
	if _, row := m.list().current(); row && m.refusedDecision(msg) {
		// With no row (the list still loading, an empty view) no key
		// typed after it can decide anything: nothing is dropped.
		m.dropping = typeAheadDrop{refusal: m.lastErr, until: m.wall().Add(typeAhead)}
	}
	return cmd
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
		if r, ok := m.list().resumeScan(); ok {
			cmds = append(cmds, m.scanStep(m.active, r))
		} else if m.list().scan == nil {
			cmds = append(cmds, m.loadMore())
		}
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
	m.list().stopScan() // its windows are dropped; it starts again on return
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

// nothingText is why a key that acts on a row found none: the view's
// rows not read yet (a key pressed as the console opens, before its
// first load lands), else empty, as none says.
func (m *Model) nothingText(none string) string {
	if !m.list().loaded {
		return "the list is still loading: nothing is selected yet, press again once its rows show"
	}
	return none
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

// maxRefreshBackoff bounds the wait between refreshes while they fail.
const maxRefreshBackoff = 2 * time.Second

// refreshPrefix starts the message of a failed refresh.
const refreshPrefix = "refresh failed, retrying; the list is as of the status bar's time: "

// refreshFailed says that a refresh failed (a server stopped, a file
// unreadable). The background retries every tick, so its message never
// takes the line from a decision in flight or from a decision's result,
// which the operator must read; the log has it either way.
func (m *Model) refreshFailed(err error) {
	m.refreshErr = true
	// Backoff on the wall clock (the ledger's clock may stand still in
	// tests): the refresh interval doubled per failure, at most
	// maxRefreshBackoff, so a server back up is seen within that.
	m.failures = min(m.failures+1, 16)
	m.retryAt = time.Now().Add(min(m.opt.Refresh<<m.failures, maxRefreshBackoff))
	m.background(refreshPrefix + safetext.Escape(err.Error()))
}

// authorityPrefix starts the message of a failed re-read of who may
// decide.
const authorityPrefix = "authority could not be re-read: "

// background says what a background read found wrong: in the log always,
// on the message line only when it would cover neither a decision in
// flight (whose line says what it waits for and how to stop) nor a
// decision's result or refusal, which stay until the next key.
func (m *Model) background(text string) {
	m.log.add(m.opt.Now(), sevError, text)
	if m.deciding != nil || m.notice != "" || m.lastErr != "" && !isBackground(m.lastErr) {
		return
	}
	m.lastErr = text
}

// isBackground says whether a message line came from a background read.
func isBackground(text string) bool {
	return strings.HasPrefix(text, refreshPrefix) || strings.HasPrefix(text, authorityPrefix)
}

// refreshed clears a failed refresh's message once a refresh succeeds:
// a stale error would say the ledger is unreachable when it answers.
func (m *Model) refreshed() {
	if !m.refreshErr {
		return
	}
	m.refreshErr, m.failures, m.retryAt = false, 0, time.Time{}
	const back = "the ledger answers again: the list is current"
	m.log.add(m.opt.Now(), sevInfo, back)
	if strings.HasPrefix(m.lastErr, refreshPrefix) {
		m.lastErr, m.notice = "", back
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
