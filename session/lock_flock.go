//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package session

import (
	"errors"
	"os"
	"syscall"
)

var errLocked = errors.New("locked")

// lockFile takes the writer lock: flock(LOCK_EX|LOCK_NB) on the open file.
// The kernel drops it when the file is closed or the process dies, so a
// crash never leaves a stale lock.
func lockFile(f *os.File) error { return flock(f, syscall.LOCK_EX) }

// lockWait takes flock(LOCK_EX) on f, waiting for it.
func lockWait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

// lockShared takes a reader's lock: flock(LOCK_SH|LOCK_NB). Readers share
// it; it excludes the writer lock.
func lockShared(f *os.File) error { return flock(f, syscall.LOCK_SH) }

// flock takes how (LOCK_EX or LOCK_SH) on f without waiting: errLocked
// when another holds a lock that excludes it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch err {
		case nil:
			return nil
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			return errLocked
		}
		return err
	}
}

// linkCount is the number of names fi's file has; 0 once it is removed.
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
