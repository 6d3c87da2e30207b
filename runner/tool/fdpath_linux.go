package tool

import (
	"os"
	"strconv"
)

// fdPath returns the path of the file open as fd, as the kernel knows it
// (symbolic links resolved): what was really opened, whatever a link in
// the name it was opened by pointed to a moment before.
func fdPath(fd uintptr, _ string) (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
}
