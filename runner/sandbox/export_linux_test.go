package sandbox

// OwnCgroup is the cgroup v2 directory the process runs in ("" for none).
func OwnCgroup() string { return ownCgroup() }

// WithoutHelper makes the sandboxes New makes until restore is called
// enter their user namespace through nsenter (and, as root, setpriv), as
// where the embedded helper cannot run.
func WithoutHelper() (restore func()) {
	noHelper = true
	return func() { noHelper = false }
}

// CanMakeNamespaces reports whether awl makes its namespaces itself, as
// root with CAP_SYS_ADMIN.
func CanMakeNamespaces() bool { return namespacesAvailable() }
