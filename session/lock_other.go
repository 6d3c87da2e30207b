//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package session

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// lockFile does nothing where flock does not exist (Windows, Solaris):
// one writer per session is then up to the user.
func lockFile(*os.File) error { return nil }

func lockShared(*os.File) error { return nil }

func lockWait(*os.File) error { return nil }

// linkCount is 1 where link counts are not known: os.SameFile decides.
func linkCount(os.FileInfo) uint64 { return 1 }
