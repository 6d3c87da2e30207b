//go:build !unix

package skills

import "os"

// readSKILL reads the head of the SKILL.md at p (readHead).
func readSKILL(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	if fi.Size() > MaxSize {
		return nil, errTooLarge
	}
	return readHead(f)
}
