package main

import "syscall"

// childAttr puts a call's run in a process group of its own (a terminal's
// Ctrl-C reaches the server, which interrupts each run once) and has the
// kernel send it SIGTERM when the server dies, even by SIGKILL: the run
// then ends its session as after any SIGTERM, and never outlives the
// server.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
