//go:build linux

package sandbox

// seccompArchs are the system call ABIs a process can use here: x86-64
// (and x32 numbers, refused), and i386 through int 0x80.
var seccompArchs = []seccompArch{archX8664, archI386}
