package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/tollgate-dev/tollgate/ledger/postgres"
)

// The recommended single-host deployment (SPEC 12, docs/service.md,
// examples/tollgate.service): `tollgate serve` runs as a system user of
// its own that alone opens the ledger (0600 in a folder of its own),
// and the agents' users reach it only through its Unix socket, whose
// group is the one --socket-group names. Then every file-level attack of
// the trust model is out of the agents' reach, not only in view. These
// checks run when doctor is given the socket.

// serviceFix is where each fix of the deployment is spelled out.
const serviceFix = "as docs/service.md (\"One host: the socket\") and examples/tollgate.service lay it out"

// healthTimeout bounds the check that the service answers.
const healthTimeout = 3 * time.Second

// SocketHealth asks the service on a Unix socket for GET /healthz and
// returns nil when it answers 200.
func SocketHealth(ctx context.Context, socket string) error {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://tollgate.sock/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz answered %d", resp.StatusCode)
	}
	return nil
}

// service runs the deployment's checks: the service answers, the agent
// can connect to its socket (and others are kept off it), and the
// ledger is the service user's alone.
func (c *checker) service(ctx context.Context) []Finding {
	sock := c.look(c.in.Socket)
	svc, known := -1, false
	if sock.fi != nil {
		svc, _, known = owner(sock.fi)
	}
	out := []Finding{c.serviceRunning(ctx), c.serviceSocket(sock)}
	if postgres.IsURL(c.in.Ledger) {
		return append(out, note("service.ledger-owner", "the ledger is a PostgreSQL database: its roles, not a file's owner and mode, keep it from the agents (the postgres findings)",
			"give the service a login of its own and the agents none"))
	}
	return append(out, c.serviceLedgerOwner(svc, known), c.serviceLedgerFolder(svc, known))
}

// serviceRunning: the service answers /healthz on its socket.
func (c *checker) serviceRunning(ctx context.Context) Finding {
	if err := c.in.Health(ctx, c.in.Socket); err != nil {
		return fail("service.running", fmt.Sprintf("no service answers on the socket %s: %v", c.in.Socket, err),
			"agents on this host guard through it: start it (systemctl enable --now tollgate), "+serviceFix+"; journalctl -u tollgate says why it stopped")
	}
	return pass("service.running", "tollgate serve answers on the socket "+c.in.Socket, "agents guard through it with TOLLGATE_URL=unix://"+c.in.Socket)
}

// serviceSocket: the agent's user can connect to the socket (its group
// is the agents'), and users outside that group cannot.
func (c *checker) serviceSocket(e entry) Finding {
	const groupFix = "the socket and its folder belong to the group serve --socket-group names (tollgate-agents), the socket 0660 and its folder 0750 (RuntimeDirectoryMode and the chgrp in examples/tollgate.service), and each agent's user is in that group (usermod -aG tollgate-agents USER)"
	switch {
	case e.missing():
		return fail("service.socket", "no socket at "+e.path, "start tollgate serve with --listen unix:"+e.path+" --socket-group tollgate-agents, "+serviceFix)
	case e.err != nil:
		return fail("service.socket", fmt.Sprintf("socket %s: %v", e.path, e.err), "doctor must stat the socket to judge it: run it as a user who can")
	case e.fi.Mode().Type() != fs.ModeSocket:
		return fail("service.socket", fmt.Sprintf("%s is not a socket (%s)", e.path, e.fi.Mode().Type()), "point --socket at the path serve --listen unix:PATH names")
	case !e.reach || !c.files.agent.may(e.fi, permWrite):
		return fail("service.socket", fmt.Sprintf("the agent's user cannot connect to the socket %s", c.where(e)),
			"connecting takes write permission on the socket and search on its folders: "+groupFix)
	}
	if c.openToAll(e) {
		return warn("service.socket", fmt.Sprintf("any user on this host can connect to the socket %s", c.where(e)),
			"the server still admits only its --socket-group's members and --socket-user's, but the file should keep the others off too: "+groupFix)
	}
	return pass("service.socket", fmt.Sprintf("socket %s: the agent's user can connect, users outside its group cannot", c.where(e)),
		"the server names each caller by its login user (peer credentials) and admits only --socket-group's members")
}

// openToAll reports whether a user in no group of the socket's could
// connect: the socket writable by others and every folder above it
// searchable by them.
func (c *checker) openToAll(e entry) bool {
	other := Agent{Name: "other", UID: -2, GIDs: []int{-2}}
	reach, _ := files{stat: c.stat, agent: other}.above(e.path)
	return reach && other.may(e.fi, permWrite)
}

// serviceLedgerOwner: the ledger belongs to the service's user (the
// socket's owner: the server made it), mode 0600, and the agent's user
// is not that user.
func (c *checker) serviceLedgerOwner(svc int, known bool) Finding {
	e := c.look(c.in.Ledger)
	fix := fmt.Sprintf("the service's user alone opens the ledger: chown %s: %s && chmod 0600 %s (tollgate creates it 0600)", userName(svc), e.path, e.path)
	if e.fi == nil {
		return fail("service.ledger-owner", "no ledger file to judge at "+e.path, "the ledger.file finding says why; "+serviceFix)
	}
	uid, _, ok := owner(e.fi)
	switch {
	case !known:
		return fail("service.ledger-owner", "the service's user is not known: the socket, which the server makes as that user, could not be read",
			"fix the service.socket finding first, "+serviceFix)
	case c.in.Agent.UID == svc:
		return fail("service.ledger-owner", fmt.Sprintf("the agent's user %s is the service's user (it owns the socket): it opens the ledger %s itself", c.in.Agent.Name, e.path),
			"run the service as a system user of its own (useradd --system tollgate; User=tollgate in examples/tollgate.service) and the agents as others")
	case !ok || uid != svc:
		return fail("service.ledger-owner", fmt.Sprintf("the ledger %s does not belong to the service's user %s", c.where(e), userName(svc)),
			fix)
	case e.fi.Mode().Perm()&0o077 != 0:
		return fail("service.ledger-owner", fmt.Sprintf("the ledger %s is open to users other than the service's (mode %s)", c.where(e), modeString(e.fi)),
			fix)
	case e.reads || e.changes != "":
		return fail("service.ledger-owner", fmt.Sprintf("the agent's user can open the ledger %s", c.where(e)), fix)
	}
	return pass("service.ledger-owner", fmt.Sprintf("ledger %s: the service's user %s alone opens it", c.where(e), userName(svc)),
		"agents reach it only through the service, so the ledger's bytes, its chain and its side files are out of their reach")
}

// serviceLedgerFolder: the agent's user cannot replace the ledger
// through a folder above it, and its folder is the service's (SQLite
// makes the -wal and -shm files beside the ledger).
func (c *checker) serviceLedgerFolder(svc int, known bool) Finding {
	dir := filepath.Dir(c.in.Ledger)
	_, replace := c.above(c.in.Ledger)
	if replace != "" {
		return fail("service.ledger-folder", fmt.Sprintf("the agent's user can replace the ledger %s: %s", c.in.Ledger, replace),
			fmt.Sprintf("keep the ledger in a folder of the service's own in folders only root writes: install -d -o %s -m 0700 %s (StateDirectory=tollgate, StateDirectoryMode=0700 in examples/tollgate.service)", userName(svc), dir))
	}
	fi, err := c.stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err != nil:
		return fail("service.ledger-folder", fmt.Sprintf("the ledger's folder %s: %v", dir, err), "doctor must stat the folder to judge it: run it as a user who can")
	case !known:
		return fail("service.ledger-folder", "the service's user is not known (see service.socket)", serviceFix)
	}
	if uid, _, ok := owner(fi); !ok || uid != svc || fi.Mode().Perm()&0o077 != 0 {
		return warn("service.ledger-folder", fmt.Sprintf("the ledger's folder %s (%s) is not the service user's alone", dir, describe(fi)),
			fmt.Sprintf("chown %s %s && chmod 0700 %s: SQLite writes the ledger's -wal and -shm files there, which no other user should read", userName(svc), dir, dir))
	}
	return pass("service.ledger-folder", fmt.Sprintf("the ledger's folder %s (%s): the service's, and the agent's user cannot replace what is in it", dir, describe(fi)),
		"the ledger cannot be swapped or rolled back under the service")
}
