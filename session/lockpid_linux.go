package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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

// holderGone reports whether the process pid, which /proc/locks names as a
// lock's holder, no longer runs or is being torn down: no such process, a
// zombie, a process exiting (PF_EXITING), or one with a SIGKILL pending.
// Its lock is then released as soon as the kernel has closed its files
// (or a child that shares them has exec'd or died).
func holderGone(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	// "pid (comm) state ppid pgrp session tty_nr tpgid flags ...": comm
	// may hold spaces and parentheses, so fields count from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 7 {
		return false
	}
	switch f[0] {
	case "Z", "X", "x":
		return true
	}
	const pfExiting = 0x4
	if flags, err := strconv.ParseUint(f[6], 10, 64); err == nil && flags&pfExiting != 0 {
		return true
	}
	st, err := os.ReadFile(dir + "/status")
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	for _, l := range strings.Split(string(st), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || (k != "SigPnd" && k != "ShdPnd") {
			continue
		}
		if m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && m&(1<<(syscall.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}
