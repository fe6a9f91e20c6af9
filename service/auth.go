package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/exitcode"
	"github.com/tollgate-dev/tollgate/safetext"
)

// SocketPolicy decides which peers on a Unix socket are admitted: the
// members of Group, except root and the service's own user, who must be
// named in Users (as must anyone outside the group).
type SocketPolicy struct {
	// Group is the name or id of the group whose members are admitted.
	Group string
	// Users are login names admitted whatever their groups.
	Users []string
}

// peer is what the kernel says about the process at the other end of a
// Unix socket connection (SO_PEERCRED), read once when it connects.
type peer struct {
	uid, gid uint32
	pid      int32
	user     string // login name; "" when the uid has none
	err      error  // why the peer is not admitted; nil when it is
}

type peerKey struct{}

// ConnContext is http.Server's ConnContext: on a Unix socket it reads
// the peer's credentials from the kernel and decides admission once per
// connection.
func (s *Server) ConnContext(ctx context.Context, c net.Conn) context.Context {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return ctx
	}
	p := &peer{}
	raw, err := uc.SyscallConn()
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			var cred *syscall.Ucred
			cred, err = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
			if err == nil {
				p.uid, p.gid, p.pid = cred.Uid, cred.Gid, cred.Pid
			}
		})
		err = errors.Join(err, cerr)
	}
	if err != nil {
		p.err = fmt.Errorf("the peer's credentials could not be read: %v", err)
	} else {
		p.user, p.err = s.cfg.Socket.admit(p.uid, p.gid)
		if p.err != nil {
			s.logf("refused socket peer uid %d pid %d: %s", p.uid, p.pid, p.err)
		}
	}
	return context.WithValue(ctx, peerKey{}, p)
}

// admit returns the peer's login name, or why it is refused.
func (sp SocketPolicy) admit(uid, gid uint32) (string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return "", fmt.Errorf("uid %d has no login name", uid)
	}
	if slices.Contains(sp.Users, u.Username) {
		return u.Username, nil
	}
	if uid == 0 || int(uid) == os.Geteuid() {
		return "", fmt.Errorf("user %s is root or the service's own user, admitted only when --socket-user names it", safetext.Escape(u.Username))
	}
	if sp.Group == "" {
		return "", fmt.Errorf("user %s is not among --socket-user and no --socket-group is set", safetext.Escape(u.Username))
	}
	g, err := lookupGroup(sp.Group)
	if err != nil {
		return "", err
	}
	gids, err := u.GroupIds()
	if err != nil {
		return "", fmt.Errorf("the groups of user %s could not be read: %v", safetext.Escape(u.Username), err)
	}
	if slices.Contains(gids, g.Gid) || strconv.FormatUint(uint64(gid), 10) == g.Gid {
		return u.Username, nil
	}
	return "", fmt.Errorf("user %s is not in group %s", safetext.Escape(u.Username), safetext.Escape(g.Name))
}

// lookupGroup finds a group by name, else by id.
func lookupGroup(name string) (*user.Group, error) {
	if g, err := user.LookupGroup(name); err == nil {
		return g, nil
	}
	if g, err := user.LookupGroupId(name); err == nil {
		return g, nil
	}
	return nil, fmt.Errorf("no group %s", safetext.Escape(name))
}

// admit authenticates a request and applies its identity's rate; on
// refusal it has answered (401, 403, 429) and returns false.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (Identity, bool) {
	id, err := s.identify(r)
	switch {
	case errors.Is(err, ErrUnauthenticated):
		s.metrics.answer("unauthenticated")
		refuse(w, ProblemUnauthenticated, exitcode.NotPermitted, "%s", err)
		return Identity{}, false
	case errors.Is(err, ErrForbidden):
		s.metrics.answer("not-permitted")
		refuse(w, ProblemNotPermitted, exitcode.NotPermitted, "%s", err)
		return Identity{}, false
	case err != nil:
		s.refused(w, r, err)
		return Identity{}, false
	}
	if wait, ok := s.limits.allow(id.Name); !ok {
		s.metrics.answer("rate-limited")
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		refuse(w, ProblemRateLimited, exitcode.TempFail, "rate limited: %s made more requests than --rate allows; retry in %s", safetext.Escape(id.Name), wait)
		return Identity{}, false
	}
	return id, true
}

// identify is who the request comes from: a bearer token's holder (on a
// socket, a name the peer may use), else the socket's peer.
func (s *Server) identify(r *http.Request) (Identity, error) {
	p, onSocket := r.Context().Value(peerKey{}).(*peer)
	if onSocket && p.err != nil {
		return Identity{}, fmt.Errorf("%w: %s", ErrForbidden, p.err)
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		if onSocket {
			return Identity{Name: p.user, Scope: ScopeAgent}, nil
		}
		return Identity{}, fmt.Errorf("%w: send a token: Authorization: Bearer TOKEN (tollgate agents token create NAME)", ErrUnauthenticated)
	}
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return Identity{}, fmt.Errorf("%w: the Authorization header is \"Bearer TOKEN\"", ErrUnauthenticated)
	}
	if s.cfg.Credentials == nil {
		return Identity{}, fmt.Errorf("%w: this server accepts no tokens", ErrUnauthenticated)
	}
	id, err := s.cfg.Credentials.TokenIdentity(r.Context(), strings.TrimSpace(token))
	if err != nil {
		return Identity{}, err
	}
	if onSocket && !approvals.SameName(id.Name, p.user) {
		// A token sent on the socket must name the peer or a name the
		// peer may use: a token copied from another agent is not a way
		// to be it.
		ok, err := s.cfg.Credentials.MayActAs(r.Context(), p.user, id.Name)
		if err != nil {
			return Identity{}, err
		}
		if !ok {
			return Identity{}, fmt.Errorf("%w: the token names %s, which user %s may not act as", ErrForbidden, safetext.Escape(id.Name), safetext.Escape(p.user))
		}
	}
	return id, nil
}
