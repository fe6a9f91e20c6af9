package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
	"github.com/tollgate-dev/tollgate/safetext"
)

// agentNamer is a ledger that keeps PostgreSQL's map of login roles to
// the agent names operators allowed them (schema 28): *ledger.Store. It
// is not part of Ledger, which every backend and test double serves.
type agentNamer interface {
	AllowAgent(ctx context.Context, role, name string) (bool, error)
	RevokeAgent(ctx context.Context, role, name string) (bool, error)
	AgentNames(ctx context.Context) ([]ledger.AgentName, error)
}

// withAgentNames runs fn on the ledger's map of names, refusing before
// anything is opened (or created) when the ledger is not PostgreSQL's.
func withAgentNames(ctx context.Context, c *cmdCtx, acc access, fn func(agentNamer) (answer, error)) (int, error) {
	path, err := c.ledgerPath()
	if err != nil {
		return 0, err
	}
	if !postgres.IsURL(path) {
		return 0, fmt.Errorf("%w; %s is a SQLite ledger, whose agents name themselves (guard --agent) with no login role the database could check them against", ledger.ErrNoAgentNames, safetext.Escape(path))
	}
	return withLedger(ctx, c, acc, func(s Ledger) (answer, error) {
		n, ok := s.(agentNamer)
		if !ok {
			return answer{}, fmt.Errorf("%w; this ledger keeps none", ledger.ErrNoAgentNames)
		}
		return fn(n)
	})
}

// roleAndName are agents allow's and revoke's two arguments.
func roleAndName(c *cmdCtx) (role, name string, err error) {
	if len(c.pos) != 2 {
		return "", "", usagef("expected ROLE and NAME: the PostgreSQL login role and the agent name it may act as")
	}
	return c.pos[0], c.pos[1], nil
}

// agentNameAnswer is allow's or revoke's answer.
func agentNameAnswer(verb string, changed bool, role, name string) answer {
	return ok(map[string]any{"role": role, "agent": name, verb: changed}, func(w io.Writer) {
		state := verb
		if !changed {
			state = "unchanged (already " + verb + ")"
			if verb == "revoked" {
				state = "unchanged (was not allowed)"
			}
		}
		fmt.Fprintf(w, "role %s as agent %s: %s\n", safetext.Escape(role), safetext.Escape(name), state)
	})
}

func runAgentsAllow(ctx context.Context, c *cmdCtx, _ *noFlags) (int, error) {
	role, name, err := roleAndName(c)
	if err != nil {
		return 0, err
	}
	return withAgentNames(ctx, c, writing, func(s agentNamer) (answer, error) {
		added, err := s.AllowAgent(ctx, role, name)
		return agentNameAnswer("allowed", added, role, name), err
	})
}

func runAgentsRevoke(ctx context.Context, c *cmdCtx, _ *noFlags) (int, error) {
	role, name, err := roleAndName(c)
	if err != nil {
		return 0, err
	}
	return withAgentNames(ctx, c, writing, func(s agentNamer) (answer, error) {
		gone, err := s.RevokeAgent(ctx, role, name)
		return agentNameAnswer("revoked", gone, role, name), err
	})
}

func runAgentsList(ctx context.Context, c *cmdCtx, _ *noFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	return withAgentNames(ctx, c, reading, func(s agentNamer) (answer, error) {
		names, err := s.AgentNames(ctx)
		return ok(names, func(w io.Writer) {
			if len(names) == 0 {
				fmt.Fprintln(w, "no names allowed: each agent's role acts under its own name only (allow another: tollgate agents allow ROLE NAME)")
			}
			for _, n := range names {
				fmt.Fprintf(w, "%-20s %-20s added %s by %s\n", safetext.Escape(n.Role), safetext.Escape(n.Agent), ts(n.Added), safetext.Escape(n.AddedBy))
			}
		}), err
	})
}
