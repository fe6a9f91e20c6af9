package cli

import (
	"context"
	"flag"
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

// principalNamer is a ledger that keeps the service's map of principals
// (a token's name, a socket peer's Unix user) to the names operators
// allowed them, on either engine: *ledger.Store.
type principalNamer interface {
	AllowPrincipal(ctx context.Context, who, name, operator string) (bool, error)
	RevokePrincipal(ctx context.Context, who, name, operator string) (bool, error)
	PrincipalNames(ctx context.Context) ([]ledger.PrincipalName, error)
}

// tokenMaker is a ledger that makes, lists and revokes the service's
// bearer tokens: *ledger.Store.
type tokenMaker interface {
	CreateToken(ctx context.Context, name string, scope ledger.TokenScope, operator string) (ledger.Token, string, error)
	Tokens(ctx context.Context) ([]ledger.Token, error)
	RevokeToken(ctx context.Context, id, operator string) (ledger.Token, error)
}

// serviceArg is --service: the service principals' map on PostgreSQL,
// where the login roles' map is the default.
type serviceArg struct{ service bool }

func (a *serviceArg) bind(fs *flag.FlagSet) {
	fs.BoolVar(&a.service, "service", false, "on PostgreSQL, the names tollgate serve's principals (token names, socket users) may act as, not login roles' (always so on SQLite)")
}

// services says whether the command is about the service principals'
// map: always on SQLite, which has no login roles; on PostgreSQL when
// --service says so.
func (a *serviceArg) services(c *cmdCtx) (bool, error) {
	path, err := c.ledgerPath()
	if err != nil {
		return false, err
	}
	return a.service || !postgres.IsURL(path), nil
}

// agentNameFlags are agents allow's and revoke's: which map, and the
// operator's name and key that sign a change of the service's map on a
// signed ledger.
type agentNameFlags struct {
	operatorArgs
	serviceArg
}

func bindAgentNames(fs *flag.FlagSet, f *agentNameFlags) {
	f.operatorArgs.bind(fs)
	f.serviceArg.bind(fs)
}

func bindService(fs *flag.FlagSet, f *serviceArg) { f.bind(fs) }

// withAgentNames runs fn on PostgreSQL's map of login roles.
func withAgentNames(ctx context.Context, c *cmdCtx, acc access, fn func(agentNamer) (answer, error)) (int, error) {
	return withLedger(ctx, c, acc, func(s Ledger) (answer, error) {
		n, ok := s.(agentNamer)
		if !ok {
			return answer{}, fmt.Errorf("%w; this ledger keeps none", ledger.ErrNoAgentNames)
		}
		return fn(n)
	})
}

// asPrincipalNamer is s's service principals' map, or why it has none.
func asPrincipalNamer(s Ledger) (principalNamer, error) {
	n, ok := s.(principalNamer)
	if !ok {
		return nil, fmt.Errorf("%w: this ledger keeps no names for the service's principals", ledger.ErrInvalidInput)
	}
	return n, nil
}

// whoAndName are agents allow's and revoke's two arguments.
func whoAndName(c *cmdCtx) (who, name string, err error) {
	if len(c.pos) != 2 {
		return "", "", usagef("expected WHO and NAME: the PostgreSQL login role (or, on SQLite or with --service, the token's name or Unix user) and the agent name it may act as")
	}
	return c.pos[0], c.pos[1], nil
}

// agentNameAnswer is allow's or revoke's answer; whoKey is "role" for
// a login role, "who" for a service principal.
func agentNameAnswer(verb string, changed bool, whoKey, who, name string) answer {
	return ok(map[string]any{whoKey: who, "agent": name, verb: changed}, func(w io.Writer) {
		state := verb
		if !changed {
			state = "unchanged (already " + verb + ")"
			if verb == "revoked" {
				state = "unchanged (was not allowed)"
			}
		}
		fmt.Fprintf(w, "%s %s as agent %s: %s\n", whoKey, safetext.Escape(who), safetext.Escape(name), state)
	})
}

func runAgentsAllow(ctx context.Context, c *cmdCtx, f *agentNameFlags) (int, error) {
	return changeAgentName(ctx, c, f, "allowed")
}

func runAgentsRevoke(ctx context.Context, c *cmdCtx, f *agentNameFlags) (int, error) {
	return changeAgentName(ctx, c, f, "revoked")
}

// changeAgentName is allow or revoke: on the service's map an operator
// act (signed on a signed ledger), on PostgreSQL's login roles' map a
// call the database allows an operator's role only.
func changeAgentName(ctx context.Context, c *cmdCtx, f *agentNameFlags, verb string) (int, error) {
	who, name, err := whoAndName(c)
	if err != nil {
		return 0, err
	}
	svc, err := f.services(c)
	if err != nil {
		return 0, err
	}
	if !svc {
		return withAgentNames(ctx, c, writing, func(s agentNamer) (answer, error) {
			change := s.AllowAgent
			if verb == "revoked" {
				change = s.RevokeAgent
			}
			changed, err := change(ctx, who, name)
			return agentNameAnswer(verb, changed, "role", who, name), err
		})
	}
	op := f.claimed(c)
	return f.asOperator(ctx, c, func(s Ledger) (answer, error) {
		n, err := asPrincipalNamer(s)
		if err != nil {
			return answer{}, err
		}
		change := n.AllowPrincipal
		if verb == "revoked" {
			change = n.RevokePrincipal
		}
		changed, err := change(ctx, who, name, op)
		return agentNameAnswer(verb, changed, "who", who, name), err
	})
}

func runAgentsList(ctx context.Context, c *cmdCtx, f *serviceArg) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	svc, err := f.services(c)
	if err != nil {
		return 0, err
	}
	if svc {
		return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
			n, err := asPrincipalNamer(s)
			if err != nil {
				return answer{}, err
			}
			names, err := n.PrincipalNames(ctx)
			return ok(names, func(w io.Writer) {
				if len(names) == 0 {
					fmt.Fprintln(w, "no names allowed: each principal acts under its own name only (allow another: tollgate agents allow WHO NAME)")
				}
				for _, p := range names {
					fmt.Fprintf(w, "%-20s %-20s added %s by %s, %s\n", safetext.Escape(p.Who), safetext.Escape(p.Agent), ts(p.Added), safetext.Escape(p.AddedBy), safetext.Escape(p.Proof.String()))
				}
			}), err
		})
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

// tokenFlags are agents token's: the scope of a token made, and the
// operator's name and key that sign the act.
type tokenFlags struct {
	operatorArgs
	scope string
}

func bindToken(fs *flag.FlagSet, f *tokenFlags) {
	f.operatorArgs.bind(fs)
	fs.StringVar(&f.scope, "scope", string(ledger.TokenAgent), "with create: agent (guard, report, read its own keys) or operator (the operator endpoints and every read)")
}

// tokenVerbs are agents token's actions, the first argument.
var tokenVerbs = []string{"create", "list", "revoke"}

// runAgentsToken is `agents token create NAME`, `agents token list` and
// `agents token revoke ID`: one command whose first argument is the
// action, so that the command table keeps two words per command.
func runAgentsToken(ctx context.Context, c *cmdCtx, f *tokenFlags) (int, error) {
	if len(c.pos) == 0 {
		return 0, usagef("expected an action: agents token create NAME, agents token list or agents token revoke ID")
	}
	verb, args := c.pos[0], c.pos[1:]
	if verb != "create" && f.scope != string(ledger.TokenAgent) {
		return 0, usagef("--scope is create's")
	}
	switch verb {
	case "create":
		if len(args) != 1 {
			return 0, usagef("expected one NAME: the agent name the token's holder acts under")
		}
		scope, err := ledger.ParseTokenScope(f.scope)
		if err != nil {
			return 0, err
		}
		op := f.claimed(c)
		return f.asOperator(ctx, c, func(s Ledger) (answer, error) {
			m, err := asTokenMaker(s)
			if err != nil {
				return answer{}, err
			}
			tok, secret, err := m.CreateToken(ctx, args[0], scope, op)
			if err != nil {
				return answer{}, err
			}
			return ok(map[string]any{"token": tok, "secret": secret}, func(w io.Writer) {
				fmt.Fprintf(w, "token %s for %s (scope %s), created by %s, %s\n", tok.ID, safetext.Escape(tok.Name), tok.Scope, safetext.Escape(tok.CreatedBy), safetext.Escape(tok.Proof.String()))
				fmt.Fprintf(w, "%s\nshown once: the ledger keeps only its SHA-256. Give it to the agent as TOLLGATE_TOKEN or a --token-file (0600).\n", secret)
			}), nil
		})
	case "list":
		if len(args) != 0 {
			return 0, usagef("unexpected argument %q", safetext.Escape(args[0]))
		}
		return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
			m, err := asTokenMaker(s)
			if err != nil {
				return answer{}, err
			}
			toks, err := m.Tokens(ctx)
			return ok(toks, func(w io.Writer) {
				if len(toks) == 0 {
					fmt.Fprintln(w, "no tokens (make one: tollgate agents token create NAME)")
				}
				for _, t := range toks {
					state := "in force"
					switch {
					case t.Revoked:
						state = "revoked " + ts(*t.RevokedAt) + " by " + safetext.Escape(t.RevokedBy)
					case !t.InForce:
						state = "NOT IN FORCE: " + safetext.Escape(t.Why)
					}
					fmt.Fprintf(w, "%s %-20s %-8s created %s by %s, %s; %s\n", t.ID, safetext.Escape(t.Name), t.Scope, ts(t.Created), safetext.Escape(t.CreatedBy), safetext.Escape(t.Proof.String()), state)
				}
			}), err
		})
	case "revoke":
		if len(args) != 1 {
			return 0, usagef("expected one token ID (tollgate agents token list)")
		}
		op := f.claimed(c)
		return f.asOperator(ctx, c, func(s Ledger) (answer, error) {
			m, err := asTokenMaker(s)
			if err != nil {
				return answer{}, err
			}
			tok, err := m.RevokeToken(ctx, args[0], op)
			return ok(tok, func(w io.Writer) {
				fmt.Fprintf(w, "token %s for %s revoked by %s: its next use is refused\n", tok.ID, safetext.Escape(tok.Name), safetext.Escape(tok.RevokedBy))
			}), err
		})
	}
	return 0, usagef("no action %q: agents token create, list or revoke", safetext.Escape(verb))
}

// asTokenMaker is s's tokens, or why it has none.
func asTokenMaker(s Ledger) (tokenMaker, error) {
	m, ok := s.(tokenMaker)
	if !ok {
		return nil, fmt.Errorf("%w: this ledger keeps no tokens", ledger.ErrInvalidInput)
	}
	return m, nil
}
