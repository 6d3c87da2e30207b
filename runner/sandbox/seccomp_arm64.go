//go:build linux

package sandbox

// seccompArchs are the system call ABIs a process can use here: AArch64
// and 32-bit ARM (EABI, without socketcall).
var seccompArchs = []seccompArch{archAArch64, archARM}
