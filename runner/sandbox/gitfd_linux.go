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
// confined process, what the descriptor is cannot. Each is stat'd through
// dir's descriptor ("..", "../..", …), one system call a level, which
// needs no read permission on any of them.
func ancestorIn(dir *os.File, ids []dirID) (int, error) {
	fd := int(dir.Fd())
	prev := dirID{^uint64(0), ^uint64(0)}
	for up := "."; ; {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, up, &st, 0); err != nil {
			return -1, err
		}
		id := dirID{uint64(st.Dev), st.Ino}
		if i := slices.Index(ids, id); i >= 0 {
			return i, nil
		}
		if id == prev { // the root is its own parent
			return -1, nil
		}
		prev = id
		if up == "." {
			up = ".."
		} else {
			up += "/.."
		}
	}
}
