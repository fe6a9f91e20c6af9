package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Agent is the Unix identity the checks judge against: the user an agent
// process runs as and the groups it holds. Permissions are what stands
// between that user and the files approval depends on.
type Agent struct {
	Name string `json:"name"`
	UID  int    `json:"uid"`
	GIDs []int  `json:"gids"`
}

// CurrentAgent is the user running doctor, with this process's own
// groups (its supplementary groups, not /etc/group's idea of them): run
// as the agents' user, doctor asks what an agent there can do.
func CurrentAgent() (Agent, error) {
	a := Agent{UID: os.Getuid(), GIDs: []int{os.Getgid()}}
	groups, err := os.Getgroups()
	if err != nil {
		return a, fmt.Errorf("the groups of this process: %w", err)
	}
	for _, g := range groups {
		if !slices.Contains(a.GIDs, g) {
			a.GIDs = append(a.GIDs, g)
		}
	}
	a.Name = strconv.Itoa(a.UID)
	if u, err := user.LookupId(a.Name); err == nil {
		a.Name = u.Username
	}
	return a, nil
}

// LookupAgent is the named user (or uid) with its primary and supplementary
// groups from the user database, for --agent-user: an operator asks
// about the agents' user without becoming it.
func LookupAgent(name string) (Agent, error) {
	u, err := user.Lookup(name)
	if _, numeric := strconv.Atoi(name); err != nil && numeric == nil {
		// A uid with no name in the user database, as containers have.
		u, err = user.LookupId(name)
	}
	if err != nil {
		return Agent{}, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return Agent{}, fmt.Errorf("user %s has a uid that is not a number (%s)", name, u.Uid)
	}
	a := Agent{Name: u.Username, UID: uid}
	ids, err := u.GroupIds()
	if err != nil {
		return Agent{}, fmt.Errorf("the groups of user %s: %w", name, err)
	}
	for _, s := range append([]string{u.Gid}, ids...) {
		if g, err := strconv.Atoi(s); err == nil && !slices.Contains(a.GIDs, g) {
			a.GIDs = append(a.GIDs, g)
		}
	}
	return a, nil
}

// owner is a file's uid and gid; ok is false when the file system gave
// none, and then every check treats the file as the agent's (fail closed).
func owner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, -1, false
	}
	return int(st.Uid), int(st.Gid), true
}

// Permission bits of the three classes, shifted per class by may.
const (
	permRead  = 4
	permWrite = 2
	permExec  = 1
)

// may reports whether the agent holds bit on fi. The classes are
// exclusive, as the kernel applies them: an owner is judged by the owner
// bits alone, a group member by the group bits, everyone else by the
// others'. Root may everything. ACLs are not read (see the README).
func (a Agent) may(fi fs.FileInfo, bit fs.FileMode) bool {
	if a.UID == 0 {
		return true
	}
	uid, gid, ok := owner(fi)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case uid == a.UID:
		return perm&(bit<<6) != 0
	case slices.Contains(a.GIDs, gid):
		return perm&(bit<<3) != 0
	}
	return perm&bit != 0
}

// owns reports whether the agent owns fi, which lets it chmod the file
// whatever its mode says.
func (a Agent) owns(fi fs.FileInfo) bool {
	uid, _, ok := owner(fi)
	return !ok || a.UID == 0 || uid == a.UID
}

// files answers questions about paths through the injected stat, and
// names owners for messages.
type files struct {
	stat  func(string) (fs.FileInfo, error)
	agent Agent
}

// describe is "owner:group mode" for a message.
func describe(fi fs.FileInfo) string {
	uid, gid, ok := owner(fi)
	if !ok {
		return "owner unknown, mode " + modeString(fi)
	}
	return userName(uid) + ":" + groupName(gid) + " " + modeString(fi)
}

// modeString is the octal mode with the setuid, setgid and sticky bits
// where they are set, as chmod takes it.
func modeString(fi fs.FileInfo) string {
	m := uint32(fi.Mode().Perm())
	if fi.Mode()&fs.ModeSetuid != 0 {
		m |= 0o4000
	}
	if fi.Mode()&fs.ModeSetgid != 0 {
		m |= 0o2000
	}
	if fi.Mode()&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return fmt.Sprintf("%04o", m)
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

func groupName(gid int) string {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return g.Name
	}
	return strconv.Itoa(gid)
}

// entry is one path as the agent sees it.
type entry struct {
	path string
	fi   fs.FileInfo // nil when err is set
	err  error
	// changes says how the agent's user can change what is at path
	// (write it, chmod it, or replace it through a folder above), ""
	// when it cannot.
	changes string
	// reach says whether the agent's user can search every folder above
	// it, and reads whether it can also read it.
	reach, reads bool
}

func (e entry) missing() bool { return errors.Is(e.err, fs.ErrNotExist) }

// look stats path and works out what the agent can do to it.
func (f files) look(path string) entry {
	path = filepath.Clean(path)
	e := entry{path: path}
	e.fi, e.err = f.stat(path)
	if e.err == nil {
		e.reads = f.agent.may(e.fi, permRead)
		switch {
		case f.agent.UID == 0:
			e.changes = "the agent's user is root"
		case f.agent.owns(e.fi):
			e.changes = "the agent's user owns it"
		case f.agent.may(e.fi, permWrite):
			e.changes = fmt.Sprintf("it is writable by the agent's user (%s)", describe(e.fi))
		}
	}
	reach, replace := f.above(path)
	// Through a symbolic link, the folders above its target matter too:
	// the agent may not touch the link yet own where it points.
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		realReach, realReplace := f.above(real)
		reach = reach && realReach
		if replace == "" {
			replace = realReplace
		}
	}
	e.reach, e.reads = reach, e.reads && reach
	if e.changes == "" {
		e.changes = replace
	}
	return e
}

// above walks the folders above path. reach says whether the agent can
// search every one of them (to open path at all); replace says how it can
// put something else at path: a folder it owns, or one it can write and
// search, unless the folder is sticky and the entry in it is not the
// agent's (as in /tmp).
func (f files) above(path string) (reach bool, replace string) {
	reach = true
	var childFI fs.FileInfo
	if fi, err := f.stat(path); err == nil {
		childFI = fi
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := f.stat(dir)
		if err != nil {
			// A missing folder: whoever can create it in the first
			// folder above that exists puts anything at path.
			reach, childFI = false, nil
			if dir == filepath.Dir(dir) {
				return reach, replace
			}
			continue
		}
		reach = reach && f.agent.may(fi, permExec)
		if replace == "" {
			switch {
			case f.agent.owns(fi) && f.agent.UID != 0:
				replace = fmt.Sprintf("the agent's user owns the folder %s above it", dir)
			case f.agent.may(fi, permWrite) && f.agent.may(fi, permExec):
				sticky := fi.Mode()&fs.ModeSticky != 0
				if !sticky || childFI == nil || f.agent.owns(childFI) {
					replace = fmt.Sprintf("the folder %s above it is writable by the agent's user, which can replace what is inside (%s)", dir, describe(fi))
				}
			}
		}
		if dir == filepath.Dir(dir) {
			return reach, replace
		}
		childFI = fi
	}
}

// worldWritable names the first of path and its folder that any user on
// the host may write (a sticky folder aside), "" when neither.
func (f files) worldWritable(e entry) string {
	for _, p := range []string{e.path, filepath.Dir(e.path)} {
		fi, err := f.stat(p)
		if err == nil && fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
			return p
		}
	}
	return ""
}

// where is "PATH (owner:group mode) in FOLDER (owner:group mode)".
func (f files) where(e entry) string {
	var b strings.Builder
	b.WriteString(e.path)
	if e.fi != nil {
		b.WriteString(" (" + describe(e.fi) + ")")
	}
	dir := filepath.Dir(e.path)
	if fi, err := f.stat(dir); err == nil {
		b.WriteString(" in " + dir + " (" + describe(fi) + ")")
	}
	return b.String()
}
