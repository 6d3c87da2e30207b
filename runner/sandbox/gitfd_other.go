//go:build !linux

package sandbox

import "os"

// dirIDs are the identities of dirs: none without Linux, where no
// directory is made read-only.
func dirIDs(dirs []string) []dirID { return nil }

// ancestorIn returns -1: without Linux, no directory is read-only.
func ancestorIn(dir *os.File, ids []dirID) (int, error) { return -1, nil }
