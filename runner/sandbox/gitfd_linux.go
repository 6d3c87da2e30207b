package sandbox

import (
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// dirIDs are the identities of dirs, each -1 where it cannot be had.
func dirIDs(dirs []string) []dirID {
	ids := make([]dirID, len(dirs))
	for i, d := range dirs {
		var st unix.Stat_t
		if err := unix.Stat(d, &st); err != nil {
			ids[i] = dirID{^uint64(0), ^uint64(0)}
			continue
		}
		ids[i] = dirID{uint64(st.Dev), st.Ino}
	}
	return ids
}

// ancestorIn returns the index in ids of the directory that dir is or
// lies in, -1 when none, from the identities of dir and of each directory
// above it, up to the root: what dir's path names can change under a
// confined process, what the descriptor is cannot. Each parent is opened
// with O_PATH, which needs no read permission on it.
func ancestorIn(dir *os.File, ids []dirID) (int, error) {
	fd, err := unix.FcntlInt(dir.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer func() { unix.Close(fd) }()
	prev := dirID{^uint64(0), ^uint64(0)}
	for {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return -1, err
		}
		id := dirID{uint64(st.Dev), st.Ino}
		if i := slices.Index(ids, id); i >= 0 {
			return i, nil
		}
		if id == prev { // the root is its own parent
			return -1, nil
		}
		parent, err := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		unix.Close(fd)
		fd, prev = parent, id
	}
}
