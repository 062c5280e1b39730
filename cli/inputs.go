package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// defaultInclude are the file names check reads from a directory.
var defaultInclude = []string{"*.sqlplan", "*.xml"}

// expandArgs turns check's arguments into file paths: a directory stands
// for the plan files under it (recursively, names matching include), and
// an argument that names no file but holds a glob pattern (with ** for any
// depth, as PowerShell and some CI runners pass it quoted) for the files it
// matches. Other arguments stay as they are, so that a missing file is
// reported as such. An argument that expands to nothing gives an input
// that fails with the reason.
func expandArgs(env *Env, args, include []string) ([]string, map[string]error) {
	if len(include) == 0 {
		include = defaultInclude
	}
	var out []string
	failed := map[string]error{}
	for _, arg := range args {
		if arg == "-" {
			out = append(out, arg)
			continue
		}
		full := env.resolve(arg)
		st, err := os.Stat(full)
		switch {
		case err == nil && st.IsDir():
			found, err := walkPlans(arg, full, include)
			if err == nil && len(found) == 0 {
				err = fmt.Errorf("is a directory with no plan files (%s); --include sets the names to read", strings.Join(include, ", "))
			}
			if err != nil {
				out = append(out, arg)
				failed[arg] = err
				continue
			}
			out = append(out, found...)
		case err != nil && errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(arg, "*?[{"):
			found, err := globPlans(env, arg)
			if err == nil && len(found) == 0 {
				err = errors.New("no file matches this pattern")
			}
			if err != nil {
				out = append(out, arg)
				failed[arg] = err
				continue
			}
			out = append(out, found...)
		default:
			out = append(out, arg)
		}
	}
	return out, failed
}

// walkPlans lists the files under dir whose names match include, in
// lexical order, as paths that start with arg.
func walkPlans(arg, dir string, include []string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		for _, pat := range include {
			if ok, _ := filepath.Match(pat, d.Name()); ok {
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				found = append(found, filepath.Join(arg, rel))
				break
			}
		}
		return nil
	})
	sort.Strings(found)
	return found, err
}

// globPlans expands a pattern relative to the working directory (or an
// absolute one), files only, in lexical order.
func globPlans(env *Env, pattern string) ([]string, error) {
	base, rel := doublestar.SplitPattern(filepath.ToSlash(pattern))
	root := env.resolve(filepath.FromSlash(base))
	if !doublestar.ValidatePattern(rel) {
		return nil, errors.New("not a valid pattern")
	}
	matches, err := doublestar.Glob(os.DirFS(root), rel, doublestar.WithFilesOnly())
	if err != nil {
		return nil, err
	}
	out := make([]string, len(matches))
	for i, m := range matches {
		if base == "." {
			out[i] = filepath.FromSlash(m)
		} else {
			out[i] = filepath.Join(filepath.FromSlash(base), filepath.FromSlash(m))
		}
	}
	sort.Strings(out)
	return out, nil
}

// failedInput is an input that reports why its argument gave no file.
func failedInput(path string, err error) input {
	return input{path: path, open: func() (io.ReadCloser, error) { return nil, err }}
}
