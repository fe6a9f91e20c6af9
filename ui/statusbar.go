package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tollgate-dev/tollgate/safetext"
)

// The lines around the body: the banner, the tabs, the status bar with
// the message line, and the hints.

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
	case m.showHelp:
		// Not the list's keys: the page covers the list.
		return m.helpv.ShortHelp()
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
			if l.scan != nil && l.scan.running {
				// The list's own progress line may be below its rows.
				shown += " · " + l.scanProgress()
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
