//go:build unix && !linux

package sandbox

import "errors"

// closeRangeCloexec is Linux's; elsewhere closeInherited walks /dev/fd.
func closeRangeCloexec() error { return errors.New("no close_range") }
