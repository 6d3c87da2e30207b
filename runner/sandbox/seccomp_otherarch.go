//go:build linux && !amd64 && !arm64

package sandbox

// seccompArchs is empty: the network filter is not built for this
// architecture, and the sandbox reports UDP, raw sockets and TCP Fast Open
// as not enforced.
var seccompArchs []seccompArch
