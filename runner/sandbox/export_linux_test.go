package sandbox

// OwnCgroup is the cgroup v2 directory the process runs in ("" for none).
func OwnCgroup() string { return ownCgroup() }
