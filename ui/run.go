package ui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/ledger"
)

// Run opens the console on a ledger file with opt (the operator's keys,
// the anchor) and blocks until the operator quits or ctx ends. operator
// is the name claimed, empty to take the key's registered name.
func Run(ctx context.Context, path string, opt ledger.Options, operator string, readOnly bool) error {
	s, err := ledger.Open(ctx, path, opt)
	if err != nil {
		return err
	}
	defer s.Close()
	return RunStore(ctx, s, operator, readOnly)
}

// RunStore runs the console on an open store.
func RunStore(ctx context.Context, s *ledger.Store, operator string, readOnly bool) error {
	m, err := New(Options{Context: ctx, Store: s, Operator: operator, ReadOnly: readOnly})
	if err != nil {
		return err
	}
	defer m.Close()
	_, err = tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
	if ctx.Err() != nil {
		return nil
	}
	return err
}
