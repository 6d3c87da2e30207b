//go:build !linux && !unix

package tool

import "path/filepath"

// fdPath returns the path of the file opened as name, its symbolic links
// resolved. Without /proc or descriptor identities (Windows) it is read
// from the name again, so a link swapped between the open and this look
// is not seen (Linux reads the descriptor's own path; other Unix systems
// check the file found is the one open: fdPathByName).
func fdPath(_ uintptr, name string) (string, error) {
	p, err := filepath.EvalSymlinks(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}
