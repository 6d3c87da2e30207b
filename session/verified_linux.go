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
	return fileState{dev: st.Dev, ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec}, true
}
