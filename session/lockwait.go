package session

import (
	"errors"
	"os"
	"time"
)

// deadHolderWait bounds how long takeLock waits for the kernel to release
// a lock whose holder is gone or dying.
const deadHolderWait = 2 * time.Second

// testHookDeadHolder, when set by a test, runs each time takeLock finds
// the lock held for a process that is gone or dying, before it waits.
var testHookDeadHolder func(pid int)

// testHookLockBusy, when set by a test, runs each time a lock attempt finds
// the lock held, before takeLock looks for its holder.
var testHookLockBusy func()

// takeLock takes lock (lockFile or lockShared) on f without blocking. A
// lock held by a live process is refused at once: errLocked and the
// holder's pid (0 when unknown). A lock held for a process that is gone or
// dying is not in use: a resume started the moment a SIGKILLed awl's
// parent stopped waiting for it (or did not wait) can find the lock still
// held, for the milliseconds the kernel takes to tear the process down
// and close its files, or until a child forked at that moment has reached
// its exec. takeLock then waits, up to deadHolderWait, for the lock to be
// released.
func takeLock(f *os.File, lock func(*os.File) error) (int, error) {
	var deadline time.Time
	for {
		err := lock(f)
		if !errors.Is(err, errLocked) {
			return 0, err
		}
		if testHookLockBusy != nil {
			testHookLockBusy()
		}
		pid := lockHolder(f)
		if pid <= 0 {
			// No holder: the lock was released after the attempt (the
			// last process holding a dead awl's file ended between the
			// two looks), or /proc/locks cannot say. Try once more.
			if err = lock(f); !errors.Is(err, errLocked) {
				return 0, err
			}
			pid = lockHolder(f)
		}
		if pid <= 0 || !holderGone(pid) {
			return pid, err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(deadHolderWait)
		} else if time.Now().After(deadline) {
			return pid, err
		}
		if testHookDeadHolder != nil {
			testHookDeadHolder(pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
