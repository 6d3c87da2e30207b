//go:build unix

package sandbox

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInherited marks every descriptor above 2 close-on-exec, so that
// no child awl starts (a tool, a check, an MCP server) gets one awl did
// not open for it. awl opens its own descriptors close-on-exec; what is
// left open across exec is what awl inherited, such as a shell's
// `exec 7>>outside.txt`, which a confined `echo >&7` could write through
// although Landlock forbids opening the file. awl itself keeps them.
func closeInherited() {
	if closeRangeCloexec() == nil {
		return
	}
	ents, err := os.ReadDir("/dev/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// processAlive reports whether a process pid exists.
func processAlive(pid int) bool {
	return unix.Kill(pid, 0) != unix.ESRCH
}
