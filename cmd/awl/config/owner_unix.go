//go:build unix

package config

import (
	"io/fs"
	"syscall"
)

// ownerUID is the user that owns what fi describes.
func ownerUID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
