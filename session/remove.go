package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Remove deletes the session file at path unless a writer holds its lock.
// It takes the lock without waiting: a session in use is refused with a
// *Error of KindLocked (and Pid when known); a missing file is KindNotFound.
// A file whose first line is not a valid session header (of this awl or a
// newer one) is never removed: it is refused with a *Error of
// KindNotSession and left as it was.
// The file is unlinked while the lock is held, so no writer can take it
// between the check and the removal.
func Remove(path string) error { return remove(path, true) }

// CheckRemove says what Remove would do, removing nothing: nil when it
// would remove path, else the error it would return. It takes and releases
// the same lock, so a session in use now is reported as such.
func CheckRemove(path string) error { return remove(path, false) }

func remove(path string, unlink bool) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return openError(path, err)
	}
	defer f.Close()
	if pid, err := takeLock(f, lockFile); err != nil {
		if errors.Is(err, errLocked) {
			return lockedError(path, pid)
		}
		return fmt.Errorf("lock session %s: %w", path, err)
	}
	if err := checkSessionFile(path, f); err != nil && !isKind(err, KindNewer) {
		if !isKind(err, KindNotSession) {
			err = notSessionError(path, err)
		}
		return err
	}
	if !unlink {
		return nil
	}
	if err := os.Remove(path); err != nil {
		return accessError(path, "cannot remove session file", err)
	}
	// Make the removal durable; failing to sync the directory is not worth
	// reporting a removed file as kept.
	_ = syncDir(filepath.Dir(path))
	return nil
}
