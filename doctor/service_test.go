package doctor_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/doctor"
)

// The service's user and the agents' group in these layouts: ids other
// than root's and the agent's own.
const (
	serviceUID = 4321
	agentsGID  = 4322
)

// serviceHost is the recommended single-host deployment, laid out as
// examples/tollgate.service makes it: the ledger the service user's
// (0600 in its 0700 folder), the socket made by the service (its user,
// the agents' group, 0660, in a 0750 folder of that group) with a
// server answering /healthz on it, and the agent's user in the agents'
// group.
func serviceHost(t *testing.T) *host {
	h := goodHost(t)
	h.in.Agent = doctor.Agent{Name: nobody.Name, UID: nobody.UID, GIDs: []int{nobody.GIDs[0], agentsGID}}
	chown(t, h.ledger, serviceUID, serviceUID)
	chown(t, filepath.Dir(h.ledger), serviceUID, serviceUID)
	run := filepath.Join(h.root, "run")
	must(t, os.Mkdir(run, 0o750))
	chown(t, run, serviceUID, agentsGID)
	h.in.Socket = filepath.Join(run, "tollgate.sock")
	serveHealth(t, h.in.Socket)
	chown(t, h.in.Socket, serviceUID, agentsGID)
	chmod(t, h.in.Socket, 0o660)
	return h
}

// serveHealth serves GET /healthz on a Unix socket at path until the
// test ends; the socket stays on disk when the server stops, as a
// killed server's does.
func serveHealth(t *testing.T, path string) *http.Server {
	t.Helper()
	l, err := net.Listen("unix", path)
	must(t, err)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"ok"}`))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestDoctorServiceDeployment: with the socket, doctor checks the
// single-host deployment, and each way of breaking it is named by its
// own finding (the rule and what to do), and only those.
func TestDoctorServiceDeployment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout func(t *testing.T, h *host)
		bad    map[string]doctor.Severity
		exit   int
	}{
		{name: "good", layout: func(*testing.T, *host) {}, exit: 0},
		{name: "no socket given: no service findings", layout: func(t *testing.T, h *host) { h.in.Socket = "" },
			bad: map[string]doctor.Severity{"service.running": absent, "service.socket": absent, "service.ledger-owner": absent, "service.ledger-folder": absent}, exit: 0},
		{name: "the service does not answer", layout: func(t *testing.T, h *host) {
			must(t, os.Remove(h.in.Socket))
			l, err := net.Listen("unix", h.in.Socket) // a socket nothing answers on: the connection is refused
			must(t, err)
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close()
			chown(t, h.in.Socket, serviceUID, agentsGID)
			chmod(t, h.in.Socket, 0o660)
		}, bad: map[string]doctor.Severity{"service.running": doctor.Fail}, exit: 1},
		{name: "the service answers 503", layout: func(t *testing.T, h *host) {
			h.in.Health = func(context.Context, string) error { return errors.New("GET /healthz answered 503") }
		}, bad: map[string]doctor.Severity{"service.running": doctor.Fail}, exit: 1},
		{name: "no socket", layout: func(t *testing.T, h *host) { must(t, os.Remove(h.in.Socket)) },
			bad: map[string]doctor.Severity{"service.running": doctor.Fail, "service.socket": doctor.Fail, "service.ledger-owner": doctor.Fail, "service.ledger-folder": doctor.Fail}, exit: 1},
		{name: "the socket's group is not the agents'", layout: func(t *testing.T, h *host) { chown(t, h.in.Socket, serviceUID, serviceUID) },
			bad: map[string]doctor.Severity{"service.socket": doctor.Fail}, exit: 1},
		{name: "the socket's folder closed to the agents' group", layout: func(t *testing.T, h *host) { chmod(t, filepath.Dir(h.in.Socket), 0o700) },
			bad: map[string]doctor.Severity{"service.socket": doctor.Fail}, exit: 1},
		{name: "any user can connect", layout: func(t *testing.T, h *host) {
			chmod(t, h.in.Socket, 0o666)
			chmod(t, filepath.Dir(h.in.Socket), 0o755)
		}, bad: map[string]doctor.Severity{"service.socket": doctor.Warn}, exit: 0},
		{name: "socket 0666 in a folder others cannot search", layout: func(t *testing.T, h *host) { chmod(t, h.in.Socket, 0o666) }, exit: 0},
		{name: "the ledger readable by its group", layout: func(t *testing.T, h *host) { chmod(t, h.ledger, 0o640) },
			bad: map[string]doctor.Severity{"service.ledger-owner": doctor.Fail}, exit: 1},
		{name: "the ledger another user's", layout: func(t *testing.T, h *host) { chown(t, h.ledger, 1, 1) },
			bad: map[string]doctor.Severity{"service.ledger-owner": doctor.Fail}, exit: 1},
		{name: "the ledger the agent's", layout: func(t *testing.T, h *host) { chown(t, h.ledger, nobody.UID, nobody.GIDs[0]) },
			bad: map[string]doctor.Severity{"service.ledger-owner": doctor.Fail}, exit: 1},
		{name: "the ledger's folder writable by the agents' group", layout: func(t *testing.T, h *host) {
			chown(t, filepath.Dir(h.ledger), serviceUID, agentsGID)
			chmod(t, filepath.Dir(h.ledger), 0o770)
		}, bad: map[string]doctor.Severity{"service.ledger-owner": doctor.Fail, "service.ledger-folder": doctor.Fail}, exit: 1},
		{name: "the ledger's folder readable by others", layout: func(t *testing.T, h *host) { chmod(t, filepath.Dir(h.ledger), 0o755) },
			bad: map[string]doctor.Severity{"service.ledger-folder": doctor.Warn}, exit: 0},
		{name: "the agent runs as the service's user", layout: func(t *testing.T, h *host) {
			h.in.Agent = doctor.Agent{Name: "tollgate", UID: serviceUID, GIDs: []int{serviceUID, agentsGID}}
		}, bad: map[string]doctor.Severity{"service.ledger-owner": doctor.Fail, "service.ledger-folder": doctor.Fail}, exit: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := serviceHost(t)
			tc.layout(t, h)
			r := checkLayout(t, h, tc.bad, tc.exit)
			// A failing finding's fix names what to change: the ledger,
			// its folder or the socket, or the unit that makes them.
			for _, f := range r.Failing() {
				if !strings.HasPrefix(f.ID, "service.") {
					continue
				}
				if !strings.Contains(f.Fix, h.ledger) && !strings.Contains(f.Fix, filepath.Dir(h.ledger)) && !strings.Contains(f.Fix, h.in.Socket) &&
					!strings.Contains(f.Fix, "examples/tollgate.service") {
					t.Errorf("%s: the fix names neither the file to change nor the unit: %s", f.ID, f.Fix)
				}
			}
		})
	}
}
