// Package procenv keeps secrets in this process's environment from other
// processes: it blanks the values of named variables in the environment
// block the kernel shows as /proc/PID/environ, and marks the process
// non-dumpable so that other processes of the same user cannot read its
// memory (/proc/PID/mem, ptrace) or, lacking CAP_SYS_PTRACE, its environ at
// all. The process's own view of its environment (os.Getenv, os.Environ)
// is not changed.
package procenv
