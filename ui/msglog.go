package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
)

// severity is how a message is shown: a refusal or error stands out.
type severity int

const (
	sevInfo severity = iota
	sevError
)

// logEntry is one message, kept whole.
type logEntry struct {
	at   time.Time
	sev  severity
	text string // already escaped
	// times is how often the message came; first is when it first did.
	times int
	first time.Time
}

// repeatWindow is how many of the newest entries a repeated message is
// merged with: a refresh failing every tick while a server is down, in
// turn with the authority re-read, would otherwise fill the log and push
// out the one result of a decision the operator needs.
const repeatWindow = 8

// msgLog is the message log (L): every message and every key's result of
// every batch, whole and newest first, since the message line only has
// room for a summary and lasts until the next key.
type msgLog struct {
	styles  *Styles
	keys    *KeyMap
	entries []logEntry
	vp      viewport.Model
	width   int
	height  int
}

var _ component[*msgLog] = (*msgLog)(nil)

func newMsgLog(st *Styles, km *KeyMap) *msgLog {
	return &msgLog{styles: st, keys: km, vp: viewport.New(0, 0)}
}

// add keeps one message; the log holds the last 500.
// A message equal to one of the newest few is merged with it and moved
// to the top, counted.
func (l *msgLog) add(at time.Time, sev severity, text string) {
	e := logEntry{at: at, sev: sev, text: text, times: 1, first: at}
	for i := len(l.entries) - 1; i >= max(len(l.entries)-repeatWindow, 0); i-- {
		if old := l.entries[i]; old.sev == sev && old.text == text {
			e.times, e.first = old.times+1, old.first
			l.entries = slices.Delete(l.entries, i, i+1)
			break
		}
	}
	l.entries = append(l.entries, e)
	if len(l.entries) > 500 {
		l.entries = l.entries[len(l.entries)-500:]
	}
	l.render()
}

// SetSize sets the pane's outer size, border included.
func (l *msgLog) SetSize(w, h int) {
	l.width, l.height = w, h
	l.vp.Width, l.vp.Height = max(w-4, 10), max(h-2, 1)
	l.render()
}

func (l *msgLog) render() {
	if len(l.entries) == 0 {
		l.vp.SetContent(l.styles.Empty.Render("No messages yet. Results of decisions and every refusal, in full, appear here."))
		return
	}
	var b strings.Builder
	for i := len(l.entries) - 1; i >= 0; i-- {
		e := l.entries[i]
		style := l.styles.Value
		if e.sev == sevError {
			style = l.styles.StatusError
		}
		line := fmt.Sprintf("%s  %s", e.at.UTC().Format("15:04:05Z"), e.text)
		if e.times > 1 {
			line += fmt.Sprintf(" (%d times since %s)", e.times, e.first.UTC().Format("15:04:05Z"))
		}
		b.WriteString(style.Render(wrap(line, l.vp.Width)) + "\n")
	}
	l.vp.SetContent(b.String())
}

// Update scrolls the log.
func (l *msgLog) Update(msg tea.Msg) (*msgLog, tea.Cmd) {
	if km, ok := msg.(tea.KeyMsg); ok {
		scroll(&l.vp, l.keys, km)
	}
	return l, nil
}

// View draws the log in a pane with its title.
func (l *msgLog) View() string {
	title := l.styles.DialogTitle.Render(fmt.Sprintf("Messages (%d, newest first) · L or esc closes", len(l.entries)))
	return l.styles.Pane.Width(max(l.width-2, 10)).Render(title + "\n" + l.vp.View())
}

// ShortHelp implements help.KeyMap.
func (l *msgLog) ShortHelp() []key.Binding {
	return []key.Binding{l.keys.Up, l.keys.Down, l.keys.Log, l.keys.Cancel}
}

// FullHelp implements help.KeyMap.
func (l *msgLog) FullHelp() [][]key.Binding { return [][]key.Binding{l.ShortHelp()} }
