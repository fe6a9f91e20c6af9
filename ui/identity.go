package ui

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/safetext"
)

// identityEvery is how often the console checks that the ledger it shows
// is still the one at its path: a file deleted or replaced under a
// running console (its connections keep reading the old one) is said
// within a second.
const identityEvery = time.Second

type (
	identityTickMsg struct{}
	// identityMsg is one check: the file at the path (device and inode,
	// through os.SameFile) and the ledger id the store reads now.
	identityMsg struct {
		file     os.FileInfo
		statErr  error
		ledgerID string
		err      error
	}
)

func identityTick() tea.Cmd {
	return tea.Tick(identityEvery, func(time.Time) tea.Msg { return identityTickMsg{} })
}

// identityFile is the file to stat for a ledger location: the absolute
// path of a file ledger, "" for a URL (PostgreSQL has no file).
func identityFile(location string) string {
	if location == "" || strings.Contains(location, "://") {
		return ""
	}
	if abs, err := filepath.Abs(location); err == nil {
		return abs
	}
	return location
}

// readIdentity stats the ledger file and reads the ledger id, in a
// command. Stat opens nothing, so SQLite's locks on the file stay whole.
func readIdentity(pctx context.Context, s Ledger, file string) tea.Cmd {
	return func() tea.Msg {
		var msg identityMsg
		if file != "" {
			msg.file, msg.statErr = os.Stat(file)
		}
		ctx, cancel := context.WithTimeout(pctx, 5*time.Second)
		defer cancel()
		h, err := s.Head(ctx)
		msg.ledgerID, msg.err = h.LedgerID, err
		return msg
	}
}

// identity is the ledger as the console first found it, and what differs
// now: problem is "" while the path holds the file opened and the store
// reads the ledger it opened.
type identity struct {
	// name is the path as the status bar shows it; file is what is
	// stat'ed ("" when the ledger is not a file).
	name, file string
	first      *identityMsg
	problem    string
}

func newIdentity(location string) identity {
	return identity{name: safetext.Escape(location), file: identityFile(location)}
}

// observe takes one check and reports whether problem changed.
func (id *identity) observe(msg identityMsg) bool {
	if msg.err != nil {
		return false // a busy or slow read is the refresh's to report
	}
	if id.first == nil {
		if msg.statErr != nil {
			id.file = "" // not a plain file (a URI): the ledger id alone is checked
		}
		id.first = &msg
		return false
	}
	was := id.problem
	id.problem = id.judge(msg)
	return id.problem != was
}

// judge says what changed since the first check, or "".
func (id *identity) judge(msg identityMsg) string {
	const refused = "this console still reads the file it opened; decisions are refused until the original is back (quit and reopen to read what is there now, and run tollgate verify)"
	switch {
	case id.file != "" && errors.Is(msg.statErr, fs.ErrNotExist):
		return "LEDGER FILE DELETED: " + id.name + " is gone; " + refused
	case id.file != "" && msg.statErr != nil:
		return "LEDGER FILE UNREADABLE: " + id.name + ": " + safetext.Escape(msg.statErr.Error()) + "; " + refused
	case id.file != "" && !os.SameFile(id.first.file, msg.file):
		return "LEDGER FILE REPLACED: another file (another device and inode) is at " + id.name + "; " + refused
	case msg.ledgerID != id.first.ledgerID:
		return "LEDGER CHANGED: the ledger read is now " + safetext.Escape(msg.ledgerID) + ", not " + safetext.Escape(id.first.ledgerID) + " as opened; " + refused
	}
	return ""
}

// headline is the banner's first words: what happened, up to the colon.
func (id *identity) headline() string {
	head, _, _ := strings.Cut(id.problem, ":")
	return head
}
