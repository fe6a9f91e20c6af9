// Package opkeys finds, creates and loads operator keys, and reads the
// allowed_signers anchor. It stands apart from the ledger because keys
// live on the operator's machine (a file under the XDG config directory,
// ssh-agent, a terminal to ask a passphrase on), while the ledger sees
// only ssh.Signer and ssh.PublicKey. It writes no cryptography of its own:
// keys, signatures and fingerprints are golang.org/x/crypto/ssh's.
package opkeys

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// ErrKey is wrapped by every refusal of a key or key file, so callers can
// map it to "invalid input".
var ErrKey = errors.New("operator key")

// keyTypes are the accepted public key types: Ed25519, in a file or agent
// or on a FIDO hardware key (sk-ssh-ed25519, which asks for a touch).
var keyTypes = map[string]bool{ssh.KeyAlgoED25519: true, ssh.KeyAlgoSKED25519: true}

// CheckType refuses keys that are not Ed25519, naming the rule.
func CheckType(pub ssh.PublicKey) error {
	if !keyTypes[pub.Type()] {
		return fmt.Errorf("%w: %s keys are not accepted: operator keys are Ed25519 (ssh-ed25519 or sk-ssh-ed25519@openssh.com)", ErrKey, pub.Type())
	}
	return nil
}

// ParsePublicKey reads one public key line in authorized_keys form
// ("ssh-ed25519 AAAA... comment") and accepts only Ed25519 keys.
func ParsePublicKey(line string) (ssh.PublicKey, error) {
	if strings.ContainsAny(strings.TrimSpace(line), "\n\r") {
		return nil, fmt.Errorf("%w: a public key is one line", ErrKey)
	}
	pub, _, opts, _, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return nil, fmt.Errorf("%w: not an OpenSSH public key line (want \"ssh-ed25519 AAAA...\"): %v", ErrKey, err)
	}
	if len(opts) > 0 {
		return nil, fmt.Errorf("%w: a public key line has no options", ErrKey)
	}
	return pub, CheckType(pub)
}

// Line is a public key's one-line OpenSSH form without a comment.
func Line(pub ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
}

// Fingerprint is the key's SHA256:... fingerprint, as ssh-keygen -l shows it.
func Fingerprint(pub ssh.PublicKey) string { return ssh.FingerprintSHA256(pub) }

// DefaultPath is where `operator init` keeps the key:
// tollgate/operator_ed25519 under configHome ($XDG_CONFIG_HOME; when empty
// or relative, ~/.config).
func DefaultPath(configHome string) (string, error) {
	base := configHome
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%w: no config directory: set XDG_CONFIG_HOME or --key (%v)", ErrKey, err)
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "tollgate", "operator_ed25519"), nil
}

// Init creates an Ed25519 key at path (0600, in a 0700 directory) unless a
// file is already there, and returns its public key; created says whether
// it made one. An existing key is loaded, never overwritten.
func Init(path, comment string) (pub ssh.PublicKey, created bool, err error) {
	if _, err := os.Lstat(path); err == nil {
		k, err := Load(path)
		if err != nil {
			return nil, false, err
		}
		return k.Public, false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, err
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return nil, false, err
	}
	// O_EXCL: two inits at once make one key, never a torn file.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, false, err
	}
	if _, err := f.Write(pem.EncodeToMemory(block)); err != nil {
		f.Close()
		os.Remove(path)
		return nil, false, err
	}
	if err := f.Close(); err != nil {
		return nil, false, err
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, false, err
	}
	return s.PublicKey(), true, os.WriteFile(path+".pub", []byte(Line(s.PublicKey())+" "+comment+"\n"), 0o644)
}

// Key is an operator key read from a file. A passphrase-protected key
// knows its public key at once and signs after Unlock.
type Key struct {
	Path   string
	Public ssh.PublicKey
	raw    []byte
	// mu guards signer: the console unlocks the key in a command while
	// it draws, and the ledger signs with it from another goroutine.
	mu     sync.Mutex
	signer ssh.Signer
}

// Load reads a private key file in OpenSSH format. Like ssh, it refuses a
// file that others can read or write.
func Load(path string) (*Key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrKey, path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: permissions %04o on %s are too open: a private key must be readable by its owner only (chmod 600), as ssh requires", ErrKey, perm, path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	k := &Key{Path: path, raw: raw}
	s, err := ssh.ParsePrivateKey(raw)
	var pm *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &pm) && pm.PublicKey != nil:
		k.Public = pm.PublicKey
	case err != nil:
		return nil, fmt.Errorf("%w: %s is not an OpenSSH private key: %v", ErrKey, path, err)
	default:
		k.Public, k.signer = s.PublicKey(), s
	}
	return k, CheckType(k.Public)
}

// Locked reports whether the key needs a passphrase before it can sign.
func (k *Key) Locked() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.signer == nil
}

// Unlock decrypts a passphrase-protected key.
func (k *Key) Unlock(passphrase []byte) error {
	s, err := ssh.ParsePrivateKeyWithPassphrase(k.raw, passphrase)
	if err != nil {
		return fmt.Errorf("%w: %s: wrong passphrase or damaged key", ErrKey, k.Path)
	}
	k.mu.Lock()
	k.signer = s
	k.mu.Unlock()
	return nil
}

// Signer returns a signer for the key. A locked key asks for its
// passphrase (with ask) on its first signature, so a command that never
// signs (an unsigned ledger, another key chosen) never asks.
func (k *Key) Signer(ask func(path string) ([]byte, error)) ssh.Signer {
	return &keySigner{k: k, ask: ask}
}

type keySigner struct {
	k   *Key
	ask func(path string) ([]byte, error)
}

func (s *keySigner) PublicKey() ssh.PublicKey { return s.k.Public }

// MayWait is true while the key waits for its passphrase: the ledger
// then signs outside its write transaction.
func (s *keySigner) MayWait() bool { return s.k.Locked() }

// agentSigner is a key ssh-agent holds: the agent, or the hardware key
// behind it, may take its time (a touch), so it never signs while the
// ledger holds its write lock.
type agentSigner struct{ ssh.Signer }

// MayWait is always true for an agent's key.
func (agentSigner) MayWait() bool { return true }

// LockedKeyOf returns the key file behind a signer from Key.Signer when
// it still needs its passphrase: the console asks for it in its own
// prompt rather than on a terminal it has taken over.
func LockedKeyOf(sg ssh.Signer) (*Key, bool) {
	if ks, ok := sg.(*keySigner); ok && ks.k.Locked() {
		return ks.k, true
	}
	return nil, false
}

// String names the key by its file.
func (k *Key) String() string { return k.Path }

func (s *keySigner) Sign(r io.Reader, data []byte) (*ssh.Signature, error) {
	if err := s.unlock(); err != nil {
		return nil, err
	}
	s.k.mu.Lock()
	sg := s.k.signer
	s.k.mu.Unlock()
	return sg.Sign(r, data)
}

func (s *keySigner) unlock() error {
	if s.k.Locked() {
		if s.ask == nil {
			return fmt.Errorf("%w: %s is passphrase-protected: add it to ssh-agent (ssh-add) or run in a terminal", ErrKey, s.k.Path)
		}
		pass, err := s.ask(s.k.Path)
		if err != nil {
			return err
		}
		return s.k.Unlock(pass)
	}
	return nil
}

// AgentSigners returns the Ed25519 keys ssh-agent holds at sock (the value of SSH_AUTH_SOCK),
// and a function that closes the connection. No socket means none.
// Signing goes to the agent, so the private key is never read here, and
// a hardware key can ask for its touch.
func AgentSigners(sock string) ([]ssh.Signer, func(), error) {
	if sock == "" {
		return nil, func() {}, nil
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, func() {}, fmt.Errorf("%w: ssh-agent at SSH_AUTH_SOCK: %v", ErrKey, err)
	}
	all, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, func() {}, fmt.Errorf("%w: ssh-agent: %v", ErrKey, err)
	}
	var out []ssh.Signer
	for _, s := range all {
		if keyTypes[s.PublicKey().Type()] {
			out = append(out, agentSigner{s})
		}
	}
	return out, func() { conn.Close() }, nil
}

// exists reports whether path names anything, for the optional files.
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
