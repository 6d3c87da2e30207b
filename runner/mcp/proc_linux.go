package mcp

import "syscall"

// deathSignal makes the kernel SIGKILL a server when awl dies, even by
// SIGKILL: a stdio server never outlives the run that started it.
func deathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
