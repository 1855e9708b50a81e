package faultfs

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// ControlRule is one line of a fault control file: every operation of
// Kind (whose path contains PathContains, when set) first waits Delay, then
// fails with Err when Err is not nil.
type ControlRule struct {
	Kind         OpKind
	PathContains string
	Delay        time.Duration
	Err          error
}

// controlErrnos are the errors a control file may name.
var controlErrnos = map[string]syscall.Errno{"EIO": syscall.EIO, "ENOSPC": syscall.ENOSPC, "EROFS": syscall.EROFS}

// ParseControl parses a fault control file: one rule a line, "#" comments,
//
//	KIND delay DURATION [PATH-SUBSTRING]
//	KIND error ERRNO [PATH-SUBSTRING]
//
// with KIND an operation name (create, open, write, sync, truncate, rename,
// remove, mkdir) and ERRNO one of EIO, ENOSPC, EROFS. An empty file injects
// nothing.
func ParseControl(text string) ([]ControlRule, error) {
	var rules []ControlRule
	for i, line := range strings.Split(text, "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		r, err := parseControlRule(f)
		if err != nil {
			return nil, fmt.Errorf("fault control line %d %q: %w", i+1, line, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseControlRule(f []string) (ControlRule, error) {
	if len(f) < 3 || len(f) > 4 {
		return ControlRule{}, fmt.Errorf("want KIND delay|error ARG [PATH-SUBSTRING]")
	}
	var r ControlRule
	kind := -1
	for k, name := range opNames {
		if name == f[0] {
			kind = k
		}
	}
	if kind < 0 {
		return r, fmt.Errorf("unknown operation %q", f[0])
	}
	r.Kind = OpKind(kind)
	if len(f) == 4 {
		r.PathContains = f[3]
	}
	switch f[1] {
	case "delay":
		d, err := time.ParseDuration(f[2])
		if err != nil || d < 0 {
			return r, fmt.Errorf("bad delay %q", f[2])
		}
		r.Delay = d
	case "error":
		errno, ok := controlErrnos[f[2]]
		if !ok {
			return r, fmt.Errorf("unknown errno %q", f[2])
		}
		r.Err = errno
	default:
		return r, fmt.Errorf("unknown action %q", f[1])
	}
	return r, nil
}

// ControlInjector follows a control file: Poll re-reads it, and MaybeError
// applies the rules of the latest good read. A file that is missing or does
// not parse keeps the previous rules (a test rewriting it must never see a
// half-written file take effect as "no faults").
type ControlInjector struct {
	path  string
	rules atomic.Pointer[[]ControlRule]
}

// NewControlInjector returns an injector following the file at path (read
// once now; call Poll to pick up changes).
func NewControlInjector(path string) *ControlInjector {
	c := &ControlInjector{path: path}
	c.rules.Store(&[]ControlRule{})
	c.Poll()
	return c
}

// Poll re-reads the control file.
func (c *ControlInjector) Poll() error {
	b, err := os.ReadFile(c.path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	rules, err := ParseControl(string(b))
	if err != nil {
		return err
	}
	c.rules.Store(&rules)
	return nil
}

// MaybeError implements Injector.
func (c *ControlInjector) MaybeError(op Op) error {
	for _, r := range *c.rules.Load() {
		if r.Kind != op.Kind || !strings.Contains(op.Path, r.PathContains) {
			continue
		}
		if r.Delay > 0 {
			time.Sleep(r.Delay)
		}
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}
