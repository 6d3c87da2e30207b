package session

import (
	"io/fs"
	"syscall"
)

// stateOf is the state of the file fi describes.
func stateOf(fi fs.FileInfo) (fileState, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileState{}, false
	}
	return fileState{dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtimespec.Sec*1e9 + st.Mtimespec.Nsec, ctime: st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec}, true
}
