//go:build !linux

package sandbox

import "os"

// statIDs: commands are confined on Linux alone; elsewhere a file is
// told apart by its size and modification time.
func statIDs(os.FileInfo) (dev, ino uint64, ctime int64) { return 0, 0, 0 }
