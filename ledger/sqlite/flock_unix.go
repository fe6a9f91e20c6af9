//go:build unix

package sqlite

import "syscall"

// fileLocks says this system has flock(2) for the writer queue.
const fileLocks = true

func tryLock(fd uintptr) error { return syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB) }

// lock blocks for the lock, again after a signal interrupts it.
func lock(fd uintptr) error {
	for {
		if err := syscall.Flock(int(fd), syscall.LOCK_EX); err != syscall.EINTR {
			return err
		}
	}
}

func unlock(fd uintptr) { syscall.Flock(int(fd), syscall.LOCK_UN) }
