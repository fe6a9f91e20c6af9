package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// agentNamesSchema is the PostgreSQL schema that binds an agent's name to
// its login role (migration 0028).
const agentNamesSchema = 28

// ErrNoAgentNames means the ledger keeps no map of login roles to agent
// names: a SQLite ledger (its agents are the file's users, with no login
// role for the database to check) or a PostgreSQL one older than schema
// 28 (tollgate migrate upgrades it).
var ErrNoAgentNames = fmt.Errorf("%w: agent names are bound to PostgreSQL login roles", ErrInvalidInput)

// AgentName is one name an operator allowed a login role to act as,
// besides its own (schema 28).
type AgentName struct {
	Role    string    `json:"role"`
	Agent   string    `json:"agent"`
	AddedBy string    `json:"added_by"`
	Added   time.Time `json:"added"`
}

// DefaultAgent is the agent name a guard or record that names none is
// recorded under: on PostgreSQL the login role, the one name the
// database lets a role use unless an operator allows it another; empty
// on SQLite, which takes the name the caller gives.
func (s *Store) DefaultAgent() string {
	if lr, ok := s.eng.(engine.LoginRoler); ok {
		return lr.LoginRole()
	}
	return ""
}

// agentOr is agent, or DefaultAgent when agent is empty.
func (s *Store) agentOr(agent string) string {
	if agent == "" {
		return s.DefaultAgent()
	}
	return agent
}

// agentNamesDB is the pool the agent-name functions run on, or why there
// are none.
func (s *Store) agentNamesDB(writing bool) (*sql.DB, error) {
	if s.eng.Name() != "postgres" {
		return nil, fmt.Errorf("%w; this %s ledger takes the name each agent gives (guard --agent), so there is nothing to allow", ErrNoAgentNames, s.eng.Name())
	}
	if s.eng.SchemaVersion() < agentNamesSchema {
		return nil, fmt.Errorf("%w from schema %d; this ledger is at %d: run tollgate migrate as the schema's owner", ErrNoAgentNames, agentNamesSchema, s.eng.SchemaVersion())
	}
	if writing {
		if s.w == nil {
			return nil, fmt.Errorf("%w: the ledger was opened read-only", ErrInvalidInput)
		}
		return s.w, nil
	}
	return s.r, nil
}

// AllowAgent lets the PostgreSQL login role act as agent name besides its
// own: its payloads and conflicts may then carry that name, which rules
// read as action.agent. Only an operator's role (or the schema's owner)
// may; the database refuses any other (ErrNotPermitted). It reports
// whether the name was newly allowed.
func (s *Store) AllowAgent(ctx context.Context, role, name string) (bool, error) {
	return s.agentNameCall(ctx, "SELECT tollgate_agent_allow($1, $2)", role, name)
}

// RevokeAgent withdraws a name AllowAgent allowed: the role's later
// payloads may no longer carry it; facts it wrote under the name stay. It
// reports whether the name had been allowed.
func (s *Store) RevokeAgent(ctx context.Context, role, name string) (bool, error) {
	return s.agentNameCall(ctx, "SELECT tollgate_agent_revoke($1, $2)", role, name)
}

func (s *Store) agentNameCall(ctx context.Context, q, role, name string) (bool, error) {
	db, err := s.agentNamesDB(true)
	if err != nil {
		return false, err
	}
	var changed bool
	if err := db.QueryRowContext(ctx, q, role, name).Scan(&changed); err != nil {
		return false, s.agentNameErr(err)
	}
	return changed, nil
}

// AgentNames lists the names operators allowed login roles, by role.
func (s *Store) AgentNames(ctx context.Context) ([]AgentName, error) {
	db, err := s.agentNamesDB(false)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT role, agent, added_by, added_ms FROM tollgate_agent_names()")
	if err != nil {
		return nil, s.agentNameErr(err)
	}
	defer rows.Close()
	out := []AgentName{}
	for rows.Next() {
		var a AgentName
		var ms int64
		if err := rows.Scan(&a.Role, &a.Agent, &a.AddedBy, &ms); err != nil {
			return nil, err
		}
		a.Added = time.UnixMilli(ms).UTC()
		out = append(out, a)
	}
	return out, s.agentNameErr(rows.Err())
}

// agentNameErr maps the database's refusals: a role with no EXECUTE is
// ErrNotPermitted; an unknown role or an unusable name, which the
// functions refuse with 22023, is ErrInvalidInput.
func (s *Store) agentNameErr(err error) error {
	if err == nil {
		return nil
	}
	m := s.eng.MapError(err)
	if errors.Is(m, ErrNotPermitted) {
		return m
	}
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) && coded.SQLState() == "22023" {
		return fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	return m
}
