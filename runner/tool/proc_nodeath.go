//go:build unix && !linux

package tool

import "syscall"

// deathSignal does nothing where there is no parent-death signal.
func deathSignal(*syscall.SysProcAttr) {}
