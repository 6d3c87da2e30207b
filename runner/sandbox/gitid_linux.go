package sandbox

import (
	"os"
	"syscall"
)

// statIDs are st's device, inode and change time (Unix nanoseconds).
func statIDs(st os.FileInfo) (dev, ino uint64, ctime int64) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0
	}
	return uint64(sys.Dev), uint64(sys.Ino), syscall.TimespecToNsec(sys.Ctim)
}
