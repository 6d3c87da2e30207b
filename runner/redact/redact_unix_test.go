//go:build unix

package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/awlrun/awl/internal/cputime"
)

// BenchmarkRedact scans 1 MiB of tool output that holds no secret, against
// eight 48-byte secrets shaped like API keys ("sk-proj-" and 40 random
// letters and digits), the common case of every tool result. The text is
// full of near misses: "sk-", "sk-proj-" and numbers. Target: ≤ 1 ms per
// MB.
func BenchmarkRedact(b *testing.B) {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rnd := rand.New(rand.NewPCG(1, 2))
	var secrets []Secret
	for i := range 8 {
		key := []byte("sk-proj-")
		for range 40 {
			key = append(key, alnum[rnd.IntN(len(alnum))])
		}
		secrets = append(secrets, Secret{fmt.Sprintf("KEY%d", i), string(key)})
	}
	r := New(secrets)
	var text strings.Builder
	for text.Len() < 1<<20 {
		fmt.Fprintf(&text, "sessions/%05d.jsonl: ssh-keygen -s sk-ssh sk-proj-%d settings saved; status=ok\n", text.Len(), text.Len())
	}
	s := text.String()
	b.SetBytes(int64(len(s)))
	cpu0 := cputime.Process()
	for b.Loop() {
		if r.String(s) != s {
			b.Fatal("redacted text that holds no secret")
		}
	}
	mb := float64(len(s)) / 1e6 * float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/mb, "ms/MB")
	// On a shared machine wall time includes waiting for a core; the
	// process's CPU time is what the scan costs.
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/1e6/mb, "cpu-ms/MB")
}
