package ui

import (
	"context"
	"fmt"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/ledger"
)

// Run opens the console on a ledger file with lopt (the operator's keys,
// the anchor) and blocks until the operator quits or ctx ends. opt
// carries the console's settings: the name claimed (empty to take the
// key's registered name), read-only, the keys that need a passphrase;
// its Store and Context are set here.
func Run(ctx context.Context, path string, lopt ledger.Options, opt Options) error {
	s, err := ledger.Open(ctx, path, lopt)
	if err != nil {
		return err
	}
	defer s.Close()
	opt.Context, opt.Store = ctx, s
	return run(ctx, opt)
}

// RunStore runs the console on an open store.
func RunStore(ctx context.Context, s Ledger, operator string, readOnly bool) error {
	return run(ctx, Options{Context: ctx, Store: s, Operator: operator, ReadOnly: readOnly})
}

// BellEnv is the environment variable that turns the console's bell off
// ("off", "0", "false" or "no"); the bell is on by default.
const BellEnv = "TOLLGATE_BELL"

// bellOn reports whether the value of BellEnv leaves the bell on.
func bellOn(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

func run(ctx context.Context, opt Options) error {
	if opt.Bell == nil && bellOn(os.Getenv(BellEnv)) {
		opt.Bell = os.Stderr // the terminal, as the clipboard's OSC 52
	}
	m, err := New(opt)
	if err != nil {
		return err
	}
	defer m.Close()
	_, err = tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
	if u := m.Unconfirmed(); u != "" {
		// The alternate screen is gone with the last frame: say it where
		// the operator's shell is.
		fmt.Fprintln(os.Stderr, "tollgate console: "+u)
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}
