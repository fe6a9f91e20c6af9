package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
	"github.com/tollgate-dev/tollgate/service"
)

// serveFlags are `serve`'s flags.
type serveFlags struct {
	listen      listFlag
	socketGroup string
	socketUsers listFlag
	tlsCert     string
	tlsKey      string
	rate        float64
	burst       int
	drain       time.Duration
}

// listFlag is a flag that may be given many times, each value kept.
type listFlag []string

// String is the values, comma-separated.
func (l *listFlag) String() string { return strings.Join(*l, ",") }

// Set adds a value.
func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// Repeatable exempts the flag from the rule that a flag is given once.
func (l *listFlag) Repeatable() {}

func bindServe(fs *flag.FlagSet, f *serveFlags) {
	fs.Var(&f.listen, "listen", "where to serve, repeatable: unix:PATH (a socket for agents on this host) or HOST:PORT (TLS; plain HTTP on loopback only)")
	fs.StringVar(&f.socketGroup, "socket-group", "", "admit the socket's peers in this group (root and the service's own user only with --socket-user)")
	fs.Var(&f.socketUsers, "socket-user", "admit this login user on the socket whatever its groups, repeatable")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "the TLS certificate (PEM) for HOST:PORT listeners")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the TLS certificate's private key (PEM)")
	fs.Float64Var(&f.rate, "rate", 200, "requests per second each identity may make on average (0: no bound)")
	fs.IntVar(&f.burst, "burst", 400, "requests each identity may make at once")
	fs.DurationVar(&f.drain, "drain", 30*time.Second, "on SIGTERM, how long calls in flight may take to finish")
}

// serveCommand is `serve`: tollgate over HTTP.
func serveCommand() command {
	return define("serve", "--listen unix:PATH|HOST:PORT [--socket-group G] [--socket-user U] [--tls-cert F --tls-key F] [--rate N] [--burst N] [--drain D]",
		"serve agents over a Unix socket or HTTPS: guard, report, status and the epoch, each caller authenticated", bindServe, runServe)
}

func init() {
	commandOrder = slices.Insert(commandOrder, slices.Index(commandOrder, "watch"), "serve")
	examples["serve"] = "tollgate --db /var/lib/tollgate/ledger.db serve --listen unix:/run/tollgate/tollgate.sock --socket-group tollgate-agents"
}

// tokenStore is the part of the ledger the server authenticates callers
// with: the agent tokens operators made (ledger/tokens.go) and the names
// they allowed each caller (ledger/principals.go). *ledger.Store is one.
type tokenStore interface {
	AuthenticateToken(ctx context.Context, bearer string) (ledger.Token, error)
	MayActAs(ctx context.Context, who, name string) (bool, error)
}

// ledgerCredentials adapts the ledger's token store to what the server
// asks (service.Credentials), so that the service package knows nothing
// of how tokens are kept.
type ledgerCredentials struct{ s tokenStore }

// TokenIdentity is the identity the ledger proves for a bearer token; a
// token it does not honour (unknown, revoked, unsigned on a signed
// ledger) is service.ErrUnauthenticated.
func (c ledgerCredentials) TokenIdentity(ctx context.Context, bearer string) (service.Identity, error) {
	t, err := c.s.AuthenticateToken(ctx, bearer)
	if errors.Is(err, ledger.ErrNotAuthenticated) {
		// The ledger's "not authenticated: " would repeat the service's
		// own "unauthenticated: " in the answer a person reads.
		why := strings.TrimPrefix(err.Error(), ledger.ErrNotAuthenticated.Error()+": ")
		return service.Identity{}, fmt.Errorf("%w: %s", service.ErrUnauthenticated, why)
	}
	if err != nil {
		return service.Identity{}, err
	}
	scope := service.ScopeAgent
	if t.Scope == ledger.TokenOperator {
		scope = service.ScopeOperator
	}
	return service.Identity{Name: t.Name, Scope: scope, TokenID: t.ID}, nil
}

// MayActAs is the ledger's answer: who's own name, or one an operator
// allowed it.
func (c ledgerCredentials) MayActAs(ctx context.Context, who, name string) (bool, error) {
	return c.s.MayActAs(ctx, who, name)
}

// credentialsFor is the token store the server authenticates bearer
// tokens with: the ledger's own. A ledger without one (a test double)
// admits no token (401), and the socket's peers are then the only
// callers.
func credentialsFor(s Ledger) service.Credentials {
	if ts, ok := s.(tokenStore); ok {
		return ledgerCredentials{ts}
	}
	return nil
}

func runServe(ctx context.Context, c *cmdCtx, f *serveFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if len(f.listen) == 0 {
		return 0, usagef("give --listen unix:PATH or --listen HOST:PORT")
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return 0, usagef("give --tls-cert and --tls-key together")
	}
	if f.rate < 0 || f.burst < 0 || f.drain < 0 {
		return 0, usagef("--rate, --burst and --drain are not negative")
	}
	policy := service.SocketPolicy{Group: f.socketGroup, Users: f.socketUsers}
	var tlsConfig *tls.Config
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return 0, fmt.Errorf("%w: --tls-cert/--tls-key: %v", ledger.ErrInvalidInput, err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for _, addr := range f.listen {
		if strings.HasPrefix(addr, "unix:") && f.socketGroup == "" && len(f.socketUsers) == 0 {
			return 0, usagef("--listen %s: give --socket-group (or --socket-user) to say who may connect", safetext.Escape(addr))
		}
		ln, err := service.Listen(addr, policy, tlsConfig)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", ledger.ErrInvalidInput, err)
		}
		lns = append(lns, ln)
	}
	s, err := c.openWith(ctx, ledger.Options{GroupCommit: true})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	creds := credentialsFor(s)
	srv := service.NewServer(service.Config{Ledger: s, Credentials: creds, Authority: c.authority(), Socket: policy,
		Rate: f.rate, Burst: f.burst, Log: c.env.Stderr})
	for _, ln := range lns {
		what := ln.Addr().String()
		switch {
		case ln.Addr().Network() == "unix":
			what = "unix:" + what
		case tlsConfig != nil:
			what += " (TLS)"
		}
		fmt.Fprintf(c.env.Stderr, "tollgate serve: listening on %s\n", safetext.Escape(what))
	}
	if creds == nil {
		fmt.Fprintln(c.env.Stderr, "tollgate serve: no token store: bearer tokens are refused, only the socket's peers are admitted")
	}
	err = srv.Serve(ctx, f.drain, lns...)
	lns = nil // Serve closed them
	fmt.Fprintln(c.env.Stderr, "tollgate serve: stopped")
	return ExitOK, err
}
