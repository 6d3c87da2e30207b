package tool

import "syscall"

// deathSignal makes the kernel SIGKILL the command when awl dies, even by
// SIGKILL: a tool never outlives the run that started it. It reaches the
// command bash runs when bash execs it directly (`bash -c 'sleep 30'`), but
// not processes bash forks; those are killed with the group when awl ends
// normally, on timeout and on SIGINT/SIGTERM.
func deathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
