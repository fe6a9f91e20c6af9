package cli_test

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestInstallReleaseArchives runs scripts/release for this machine's
// platform: a full and an agent archive, each holding a static tollgate
// and the README, listed with their true digests in SHA256SUMS; the
// binaries run, and the agent build has no console. (CI runs the script
// for linux/amd64 too; all eight archives take minutes on a cold cache.)
func TestInstallReleaseArchives(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the release script builds two binaries")
	}
	if onPostgres {
		// The archives and their binaries do not depend on the engine (the
		// one ledger they open is a file): the SQLite run proves them, and
		// CI's two PostgreSQL runs keep their half-minute each.
		t.Skip("the release archives do not depend on the engine: checked in the SQLite run")
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("release archives are for linux and darwin")
	}
	out := t.TempDir()
	cmd := exec.Command("sh", "../scripts/release", out)
	cmd.Env = append(os.Environ(), "TARGETS="+runtime.GOOS+"/"+runtime.GOARCH, "VERSION=v0.0.0-test", "EXTRA_LDFLAGS="+hostPlaces.LDFlags())
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}
	base := "tollgate-v0.0.0-test-" + runtime.GOOS + "-" + runtime.GOARCH
	names := []string{base + ".tar.gz", base + "-agent.tar.gz"}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		listed[name] = sum
	}
	if len(listed) != len(names) {
		t.Fatalf("SHA256SUMS lists %d archives, want %v:\n%s", len(listed), names, sums)
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(data); listed[name] != hex.EncodeToString(sum[:]) {
			t.Fatalf("%s: SHA256SUMS says %s, the file is %x", name, listed[name], sum)
		}
		dir := filepath.Join(t.TempDir(), strings.TrimSuffix(name, ".tar.gz"))
		files := untar(t, filepath.Join(out, name), filepath.Dir(dir))
		if want := []string{filepath.Base(dir) + "/README.md", filepath.Base(dir) + "/tollgate"}; !slices.Equal(files, want) {
			t.Fatalf("%s holds %v, want %v", name, files, want)
		}
		tg := filepath.Join(dir, "tollgate")
		if b, err := exec.Command(tg, "--help").Output(); err != nil || !strings.Contains(string(b), "Usage: tollgate") {
			t.Fatalf("%s: tollgate --help: %v\n%s", name, err, b)
		}
		if b, err := exec.Command(tg, "--version").Output(); err != nil || !strings.HasPrefix(string(b), "tollgate v0.0.0-test ") {
			t.Fatalf("%s: tollgate --version: %v\n%s", name, err, b)
		}
		b, _ := exec.Command(tg, "console", "--db", filepath.Join(t.TempDir(), "l.db")).CombinedOutput()
		if agent := strings.HasSuffix(name, "-agent.tar.gz"); agent != strings.Contains(string(b), "this build has no console") {
			t.Fatalf("%s: console answers %q", name, b)
		}
	}
}

// untar extracts a .tar.gz into dir and returns the regular files' names.
func untar(t *testing.T, archive, dir string) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		names = append(names, h.Name)
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		w, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(w, tr)
		w.Close()
	}
	slices.Sort(names)
	return names
}
