//go:build unix && !linux

package tool

// fdPath returns the path of the file open as fd. Without /proc it is
// read from name again, and accepted only if the same file is found
// there (fdPathByName).
func fdPath(fd uintptr, name string) (string, error) { return fdPathByName(fd, name) }
