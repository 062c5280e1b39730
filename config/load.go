package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/planlint/planlint/internal/regular"
)

// MaxFileSize bounds the configuration file a run will read.
const MaxFileSize = 1 << 20

// Options say where to look for the configuration file.
type Options struct {
	// Path is the --config flag's value; "" when the flag was not given.
	Path string
	// Dir is the working directory: discovery starts there and relative
	// paths are resolved against it. "" means the process's.
	Dir string
	// Getenv reads EnvVar; nil means the environment is not consulted.
	Getenv func(string) string
}

// Load finds and reads the configuration: the --config path if given, else
// the EnvVar path if set, else the first FileName or AltFileName found
// walking up from Dir. With no file it returns the defaults (Path "").
// An explicit path that does not exist is an error.
func Load(o Options) (*Config, error) {
	wd := o.Dir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("config: working directory: %w", err)
		}
	}
	wd, err := filepath.Abs(wd)
	if err != nil {
		return nil, fmt.Errorf("config: working directory: %w", err)
	}

	explicit, origin := o.Path, "--config"
	if explicit == "" && o.Getenv != nil {
		explicit, origin = o.Getenv(EnvVar), EnvVar
	}
	path := explicit
	if explicit != "" {
		if !filepath.IsAbs(path) {
			path = filepath.Join(wd, path)
		}
	} else {
		if path, err = Find(wd); err != nil {
			return nil, err
		}
		if path == "" {
			return Default(wd), nil
		}
	}

	// Errors name an explicit file as the user wrote it.
	name := path
	if explicit != "" {
		name = explicit
	}
	data, err := readFile(path)
	if err != nil {
		e := &Error{Path: name, Err: err}
		switch {
		case errors.Is(err, fs.ErrNotExist) && explicit != "":
			e.Msg = fmt.Sprintf("config file named by %s does not exist", origin)
		case explicit != "":
			e.Msg = fmt.Sprintf("config file named by %s: %v", origin, err)
		default:
			e.Msg = err.Error()
		}
		return nil, e
	}
	c, err := parse(name, path, data)
	if err != nil {
		return nil, err
	}
	c.WorkDir = wd
	return c, nil
}

// LoadFile reads one configuration file; relative paths given to Excluded
// are resolved against the file's directory.
func LoadFile(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{Path: path, Msg: err.Error(), Err: err}
	}
	data, err := readFile(abs)
	if err != nil {
		return nil, &Error{Path: path, Msg: err.Error(), Err: err}
	}
	return parse(path, abs, data)
}

// readFile reads a regular file of at most MaxFileSize bytes.
func readFile(path string) ([]byte, error) {
	f, err := regular.Open(path)
	if errors.Is(err, regular.ErrNotRegular) {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return nil, errors.New("is a directory, not a config file")
		}
	}
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, unwrapPath(err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("larger than %d bytes; is this really a config file?", MaxFileSize)
	}
	return data, nil
}

// unwrapPath drops the path from an *fs.PathError, which Error prints
// already, keeping the error's identity for errors.Is.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Find returns the first configuration file found in dir or one of its
// ancestors, or "" when there is none. Two files (FileName and AltFileName)
// in the same directory are an error, since either could be meant.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	for {
		var found []string
		for _, name := range []string{FileName, AltFileName} {
			p := filepath.Join(dir, name)
			st, err := os.Stat(p)
			switch {
			case err == nil && !st.IsDir():
				found = append(found, p)
			case err == nil, errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
				// A directory by that name, or nothing we can read: keep looking.
			default:
				return "", fmt.Errorf("config: looking for %s: %w", p, err)
			}
		}
		switch len(found) {
		case 1:
			return found[0], nil
		case 2:
			return "", &Error{Path: found[1], Msg: fmt.Sprintf("both %s and %s exist in %s; keep one", FileName, AltFileName, dir)}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}
