package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/awlrun/awl/cmd/awl/skills"
)

// BenchmarkConfigStart is what a run's start pays for configuration and
// skills: the lookups alone (no file, no skill), and one project file with
// ten skills, read, parsed, layered and catalogued
// (docs/performance.md).
func BenchmarkConfigStart(b *testing.B) {
	for _, withFiles := range []bool{false, true} {
		repo := b.TempDir()
		sub := filepath.Join(repo, "a", "b")
		if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		name := "none"
		if withFiles {
			name = "one_file_ten_skills"
			os.MkdirAll(filepath.Join(repo, ".awl"), 0o755)
			os.WriteFile(filepath.Join(repo, ".awl", "config.toml"), []byte("model = \"claude-sonnet-4-5\"\nsandbox = \"workspace-write\"\ntools = [\"read\", \"grep\", \"bash\"]\nmax-cost-usd = 0.5\ntimeout = \"15m\"\n[profile.review]\nmax-turns = 20\n"), 0o644)
			for i := range 10 {
				n := fmt.Sprintf("skill-%d", i)
				p := filepath.Join(repo, ".agents", "skills", n, "SKILL.md")
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, fmt.Appendf(nil, "---\nname: %s\ndescription: What skill %d is for, in a sentence or two of the kind a real skill has.\nlicense: MIT\n---\n# Steps\n\nDo this, then that.\n", n, i), 0o644)
			}
		}
		env := map[string]string{"HOME": filepath.Join(repo, "home"), "XDG_CONFIG_HOME": filepath.Join(repo, "home", ".config")}
		a := &app{getenv: func(k string) string { return env[k] }}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				c := &runCmd{Dir: sub}
				if err := c.configure(a); err != nil {
					b.Fatal(err)
				}
				dirs, err := c.skillDirs(a, sub)
				if err != nil {
					b.Fatal(err)
				}
				all := skills.Discover(skillsFS, dirs)
				if off := skills.Offered(all); withFiles && len(off) != 10 {
					b.Fatalf("%d skills", len(off))
				}
			}
		})
	}
}
