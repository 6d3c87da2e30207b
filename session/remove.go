package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Remove deletes the session file at path unless a writer holds its lock.
// It takes the lock without waiting: a session in use is refused with a
// *Error of KindLocked (and Pid when known); a missing file is KindNotFound.
// A file whose first line is not a valid session header (of this awl or a
// newer one) is never removed: it is refused with a *Error of
// KindNotSession and left as it was.
// The file is unlinked while the lock is held, so no writer can take it
// between the check and the removal.
func Remove(path string) error { return remove(path, true, time.Time{}) }

// CheckRemove says what Remove would do, removing nothing: nil when it
// would remove path, else the error it would return. It takes and releases
// the same lock, so a session in use now is reported as such.
func CheckRemove(path string) error { return remove(path, false, time.Time{}) }

// RemoveOlder is Remove for `awl sessions prune`: with the lock held, it
// checks again that the file was last modified before cutoff, and keeps
// one modified since (a run resumed it after the caller listed it): a
// *Error of KindModified. It also removes a creation's temporary file
// (StaleTemps) that no creation holds.
func RemoveOlder(path string, cutoff time.Time) error { return remove(path, true, cutoff) }

// CheckRemoveOlder says what RemoveOlder would do, removing nothing.
func CheckRemoveOlder(path string, cutoff time.Time) error { return remove(path, false, cutoff) }

func remove(path string, unlink bool, cutoff time.Time) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return openError(path, err)
	}
	defer f.Close()
	if testHookRemoveOpened != nil {
		testHookRemoveOpened(path)
	}
	if pid, err := takeLock(f, lockFile); err != nil {
		if errors.Is(err, errLocked) {
			return lockedError(path, pid)
		}
		return fmt.Errorf("lock session %s: %w", path, err)
	}
	// What was checked must be what is unlinked: the name may have been
	// given to another file between the open and the lock.
	if err := stillNamed(path, f); err != nil {
		return err
	}
	if !cutoff.IsZero() {
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("stat session %s: %w", path, err)
		}
		if !fi.ModTime().Before(cutoff) {
			return &Error{Kind: KindModified, Path: path,
				Msg: fmt.Sprintf("session %s was modified at %s, after the cut-off: kept", path, fi.ModTime().UTC().Format(time.RFC3339))}
		}
	}
	// A creation's temporary file may hold half a header: it is no
	// session to check, and its lock, free, says no creation holds it.
	if !isTempName(filepath.Base(path)) {
		if err := checkSessionFile(path, f); err != nil && !isKind(err, KindNewer) {
			if !isKind(err, KindNotSession) {
				err = notSessionError(path, err)
			}
			return err
		}
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

// testHookRemoveOpened, when set by a test, runs between remove's open and
// its lock: the window in which a resume may append, or the name may be
// given to another file.
var testHookRemoveOpened func(path string)
