//go:build !linux

package procenv

// Hide does nothing where there is no /proc/PID/environ to hide from.
func Hide(names []string) error { return nil }
