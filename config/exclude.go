package config

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// compileGlob cleans an exclude glob and splits it into segments.
// Backslashes are taken as path separators (so globs written on Windows
// work), which means they cannot escape metacharacters; use a class such
// as [*] instead.
func compileGlob(glob string) (string, []string, error) {
	g := strings.ReplaceAll(strings.TrimSpace(glob), `\`, "/")
	if g == "" {
		return "", nil, errors.New("empty glob")
	}
	if strings.HasPrefix(g, "/") || filepath.IsAbs(glob) || hasDrive(g) {
		return "", nil, fmt.Errorf("glob %q is absolute; globs are relative to the config file's directory", glob)
	}
	segs := strings.Split(g, "/")
	for _, s := range segs {
		if s == ".." {
			return "", nil, fmt.Errorf("glob %q leaves the config file's directory (\"..\")", glob)
		}
	}
	g, segs = splitGlob(g)
	if g == "." {
		return "", nil, fmt.Errorf("glob %q names the config file's directory itself; use \"**\" to exclude everything", glob)
	}
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return "", nil, fmt.Errorf("invalid glob %q: bad pattern in segment %q", glob, s)
		}
	}
	return g, segs, nil
}

// splitGlob cleans a glob and splits it into segments.
func splitGlob(glob string) (string, []string) {
	g := path.Clean(strings.ReplaceAll(strings.TrimSpace(glob), `\`, "/"))
	return g, strings.Split(g, "/")
}

// hasDrive reports a Windows drive prefix such as "C:/".
func hasDrive(g string) bool {
	return len(g) >= 3 && g[1] == ':' && g[2] == '/' && g[0]|0x20 >= 'a' && g[0]|0x20 <= 'z'
}

// Excluded reports whether path is excluded by the exclude globs. A
// relative path is taken from WorkDir; backslashes count as separators.
// Globs are anchored at Dir: "*" matches within one path segment, "**"
// matches any number of segments, and a glob that matches a directory
// excludes everything below it. Paths outside Dir are never excluded.
// Malformed globs, which Parse rejects, match nothing.
func (c *Config) Excluded(p string) bool {
	if len(c.Exclude) == 0 {
		return false
	}
	segs, ok := c.relSegments(p)
	if !ok {
		return false
	}
	for _, glob := range c.Exclude {
		if _, g := splitGlob(glob); matchPrefix(g, segs) {
			return true
		}
	}
	return false
}

// relSegments returns p relative to c.Dir, split into segments.
func (c *Config) relSegments(p string) ([]string, bool) {
	p = filepath.FromSlash(strings.ReplaceAll(p, `\`, "/"))
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.WorkDir, p)
	}
	rel, err := filepath.Rel(c.Dir, p)
	if err != nil {
		return nil, false
	}
	rel = filepath.ToSlash(rel)
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, false
	}
	return strings.Split(rel, "/"), true
}

// matchPrefix reports whether glob segments g match segs or a leading part
// of it (a directory holding the path). It runs in O(len(g)·len(segs)).
func matchPrefix(g, segs []string) bool {
	// reach[j]: g[:i] matches segs[:j], for the current i.
	reach := make([]bool, len(segs)+1)
	next := make([]bool, len(segs)+1)
	reach[0] = true
	for _, pat := range g {
		clear(next)
		if pat == "**" {
			// Zero or more segments: everything from the first reachable j on.
			on := false
			for j := range reach {
				on = on || reach[j]
				next[j] = on
			}
		} else {
			for j := 1; j <= len(segs); j++ {
				if reach[j-1] {
					ok, _ := path.Match(pat, segs[j-1])
					next[j] = ok
				}
			}
		}
		reach, next = next, reach
	}
	for j := 1; j <= len(segs); j++ {
		if reach[j] {
			return true
		}
	}
	return false
}
