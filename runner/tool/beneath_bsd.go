//go:build unix && !linux

package tool

import "os"

// openAtBeneath opens the directory rel beneath dir, walking it one
// component at a time with O_NOFOLLOW (no openat2 here).
func openAtBeneath(dir *os.File, rel string) (*os.File, error) {
	return openWalkBeneath(dir, rel)
}
