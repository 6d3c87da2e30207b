package session

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockHolder returns the pid holding the flock on f, from /proc/locks, or 0.
// Lines look like "1: FLOCK  ADVISORY  WRITE 12345 fe:00:9978424 0 EOF",
// the device as hex major:minor and the inode in decimal.
func lockHolder(f *os.File) int {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, st.Ino)
	pl, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer pl.Close()
	sc := bufio.NewScanner(pl)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		// id: FLOCK ADVISORY WRITE pid dev:ino start end (blocked waiters
		// have "->" after the id).
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fs[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}
