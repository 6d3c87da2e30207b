package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/awlrun/awl/internal/atomicfile"
)

// VerifiedName is the file in each directory of the store in which the
// listing keeps what it verified: for each session file, the file's state
// (device, inode, size, modification and change times in nanoseconds) and
// Verify's verdict on it then (sound, or its first problem). A listing
// verifies in full only the files whose state differs; a file only
// appended to since is verified again whole. The file is disposable: one
// that is missing, unreadable or not in this format is rebuilt, never
// trusted, and `awl sessions verify` never reads it.
const VerifiedName = ".verified"

// verifiedVersion is the first line of a verified file. Its number goes up
// whenever what Verify accepts changes, so that verdicts of an older awl
// are not trusted.
const verifiedVersion = "awl verified 3"

// settle is how old a file's modification and change times must be before
// a verdict on it is kept: file systems keep those times at a coarse
// granularity (a clock tick, or worse), so a file changed again within the
// same tick as the verification would keep its state unchanged.
var settle = 2 * time.Second

// fileState is what identifies the content of a file as far as the
// listing can tell without reading it. The change time cannot be set back
// by a user (touch -d sets the modification time, and the change time to
// now), and a file replaced by a rename has another inode.
type fileState struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

// verdict is Verify's judgement on a file in one state: no problem (kind
// 0), or its first problem, whose message is the file's path followed by
// rest.
type verdict struct {
	state fileState
	kind  ErrorKind
	line  int
	rest  string
	// sum is what the listing shows of a sound file (nil: not kept).
	sum *listSummary
}

// err is v's problem for the file at path, nil for none.
func (v verdict) err(path string) error {
	if v.kind == 0 {
		return nil
	}
	return &Error{Kind: v.kind, Path: path, Line: v.line, Msg: path + v.rest}
}

// verifiedDir is one directory's verdicts during a listing: those read
// from its verified file and those found now.
type verifiedDir struct {
	path  string // the verified file
	names map[string]bool
	old   map[string]verdict
	mu    sync.Mutex
	now   map[string]verdict // found in this listing
	stale bool               // old holds files that are gone, or not in this state
}

// readVerified reads dir's verified file; files are the session files the
// listing found there. A file that cannot be read or parsed gives no
// verdicts.
func readVerified(dir string, files []string) *verifiedDir {
	vd := &verifiedDir{path: filepath.Join(dir, VerifiedName), names: make(map[string]bool, len(files)), now: map[string]verdict{}}
	for _, f := range files {
		vd.names[filepath.Base(f)] = true
	}
	data, err := os.ReadFile(vd.path)
	if err == nil {
		vd.old, err = parseVerified(data)
	}
	if err != nil {
		vd.old = nil
		vd.stale = !errors.Is(err, os.ErrNotExist)
	}
	for name := range vd.old {
		if !vd.names[name] {
			vd.stale = true
		}
	}
	return vd
}

// parseVerified parses a verified file: its version line, then a line per
// session file, fields separated by tabs:
//
//	NAME DEV INO SIZE MTIME CTIME ok [SUMMARY]
//	NAME DEV INO SIZE MTIME CTIME corrupt|newer LINE "REST"
//
// SUMMARY, a JSON object, is what the listing shows of the sound file.
//
// Any line out of this format makes the whole file unusable.
//
// The file is converted to a string once; names are cut from it, so a
// listing's read of 1,000 verdicts allocates the map and that string.
func parseVerified(data []byte) (map[string]verdict, error) {
	first, rest, ok := strings.Cut(string(data), "\n")
	if !ok || first != verifiedVersion {
		return nil, errors.New("not a verified file of this version")
	}
	out := make(map[string]verdict, strings.Count(rest, "\n"))
	for len(rest) > 0 {
		var line string
		if line, rest, ok = strings.Cut(rest, "\n"); !ok {
			return nil, errors.New("torn last line")
		}
		name, v, err := parseVerdict(line)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup || !cacheableName(name) {
			return nil, fmt.Errorf("name %q", name)
		}
		out[name] = v
	}
	return out, nil
}

// parseVerdict parses one line of a verified file after its version line.
func parseVerdict(line string) (string, verdict, error) {
	var v verdict
	var f [9]string
	n := 0 // fields cut
	for more := true; more; n++ {
		if n == len(f) {
			return "", v, errors.New("over 9 fields")
		}
		f[n], line, more = strings.Cut(line, "\t")
	}
	if n < 7 || n > 9 {
		return "", v, fmt.Errorf("%d fields", n)
	}
	var nums [5]uint64
	for i := range nums {
		x, err := strconv.ParseUint(f[1+i], 10, 64)
		if err != nil {
			return "", v, err
		}
		nums[i] = x
	}
	v.state = fileState{dev: nums[0], ino: nums[1], size: int64(nums[2]), mtime: int64(nums[3]), ctime: int64(nums[4])}
	switch {
	case f[6] == "ok" && n == 7:
	case f[6] == "ok" && n == 8:
		sum, err := parseSummary(f[7])
		if err != nil {
			return "", v, err
		}
		v.sum = sum
	case (f[6] == "corrupt" || f[6] == "newer") && n == 9:
		v.kind = KindCorrupt
		if f[6] == "newer" {
			v.kind = KindNewer
		}
		l, err := strconv.Atoi(f[7])
		if err != nil || l < 0 {
			return "", v, fmt.Errorf("line %q", f[7])
		}
		v.line = l
		if v.rest, err = strconv.Unquote(f[8]); err != nil {
			return "", v, err
		}
	default:
		return "", v, fmt.Errorf("verdict %q", f[6])
	}
	return f[0], v, nil
}

// cacheableName reports whether a file name can stand in a verified file.
func cacheableName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "\t\n\r")
}

// lookup returns the verdict kept for the file name in state st.
func (vd *verifiedDir) lookup(name string, st fileState) (verdict, bool) {
	v, ok := vd.old[name]
	return v, ok && v.state == st
}

// keep records a verdict found in this listing.
func (vd *verifiedDir) keep(name string, v verdict) {
	vd.mu.Lock()
	vd.now[name] = v
	vd.mu.Unlock()
}

// write replaces the verified file when this listing changed what it
// holds: the old verdicts of files still there, with those found now.
// It never fails the listing: a directory awl cannot write keeps its old
// file, and the next listing verifies again.
func (vd *verifiedDir) write() {
	if len(vd.now) == 0 && !vd.stale {
		return
	}
	merged := make(map[string]verdict, len(vd.names))
	for name, v := range vd.old {
		if vd.names[name] {
			merged[name] = v
		}
	}
	for name, v := range vd.now {
		merged[name] = v
	}
	if len(merged) == 0 && vd.old == nil && !vd.stale {
		return
	}
	_ = atomicfile.Write(vd.path, formatVerified(merged), 0o600)
}

// formatVerified is the content of a verified file holding vs.
func formatVerified(vs map[string]verdict) []byte {
	names := make([]string, 0, len(vs))
	for name := range vs {
		names = append(names, name)
	}
	slices.Sort(names)
	b := []byte(verifiedVersion + "\n")
	for _, name := range names {
		v := vs[name]
		s := v.state
		b = fmt.Appendf(b, "%s\t%d\t%d\t%d\t%d\t%d\t", name, s.dev, s.ino, s.size, s.mtime, s.ctime)
		switch v.kind {
		case 0:
			b = append(b, "ok"...)
			if v.sum != nil {
				if sum := v.sum.encode(); sum != nil {
					b = append(append(b, '\t'), sum...)
				}
			}
		case KindNewer:
			b = fmt.Appendf(b, "newer\t%d\t%s", v.line, strconv.Quote(v.rest))
		default:
			b = fmt.Appendf(b, "corrupt\t%d\t%s", v.line, strconv.Quote(v.rest))
		}
		b = append(b, '\n')
	}
	return b
}

// judge returns Verify's verdict v on the open file f at path, whose
// state was st: problem is Verify's first problem (nil for none), and keep
// reports that v may be kept: the file did not change while it was read,
// its times are settled, and its problem, if any, is in its content (not a
// failure to read it).
func judge(path string, f *os.File, st fileState, now time.Time) (v verdict, keep bool, problem error) {
	if testHookJudge != nil {
		testHookJudge(path)
	}
	v.state = st
	if _, err := read(path, f, false, inPlace); err != nil {
		var se *Error
		if !errors.As(err, &se) || (se.Kind != KindCorrupt && se.Kind != KindNewer) || !strings.HasPrefix(se.Msg, path) {
			return v, false, err
		}
		problem = se
		v.kind, v.line, v.rest = se.Kind, se.Line, se.Msg[len(path):]
	}
	fi, err := f.Stat()
	if err != nil {
		return v, false, problem
	}
	after, ok := stateOf(fi)
	cut := now.Add(-settle).UnixNano()
	return v, ok && after == st && st.mtime < cut && st.ctime < cut, problem
}

// testHookJudge, when set by a test, runs each time a listing verifies a
// file in full.
var testHookJudge func(path string)
