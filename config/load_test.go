package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// tree creates files (slash paths → content) under a new temporary
// directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if content == "<dir>" {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// env returns a Getenv that knows only vars.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestLoad(t *testing.T) {
	files := map[string]string{
		"repo/.planlint.yaml":              "fail_on: warning\n",
		"repo/a/b/c/keep":                  "",
		"repo/svc/.planlint.yml":           "fail_on: info\n",
		"repo/svc/sql/keep":                "",
		"repo/odd/.planlint.yaml/keep":     "", // a directory by that name is skipped
		"repo/other.yaml":                  "fail_on: none\n",
		"repo/empty.yaml":                  "",
		"elsewhere/x/keep":                 "",
		"repo/sub/.planlint.yaml":          "rules:\n  PL102: off\n",
		"repo/sub/.planlint.yml":           "rules:\n  PL103: off\n",
		"repo/sub/below/keep":              "",
		"repo/broken/.planlint.yaml":       "rulez: {}\n",
		"repo/broken/deeper/keep":          "",
		"repo/cfgdir.yaml/keep":            "",
		"repo/relative/configs/local.yaml": "redact: false\n",
		"repo/bad.yaml":                    "fail_on: never\n",
	}
	root := tree(t, files)
	if p, err := Find(root); err != nil || p != "" {
		t.Skipf("a config file above the temporary directory (%q, %v) would be found; cannot test discovery here", p, err)
	}
	at := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

	tests := []struct {
		name       string
		opts       Options
		wantPath   string // "" for defaults
		wantFailOn string // "" for unset
		wantErr    string
	}{
		{name: "in the working directory", opts: Options{Dir: at("repo")}, wantPath: at("repo/.planlint.yaml"), wantFailOn: "warning"},
		{name: "walking up", opts: Options{Dir: at("repo/a/b/c")}, wantPath: at("repo/.planlint.yaml"), wantFailOn: "warning"},
		{name: "nearest wins, .yml too", opts: Options{Dir: at("repo/svc/sql")}, wantPath: at("repo/svc/.planlint.yml"), wantFailOn: "info"},
		{name: "directory with the file's name skipped", opts: Options{Dir: at("repo/odd")}, wantPath: at("repo/.planlint.yaml"), wantFailOn: "warning"},
		{name: "none found gives defaults", opts: Options{Dir: at("elsewhere/x")}},
		{name: "explicit path beats discovery", opts: Options{Dir: at("repo/a"), Path: at("repo/other.yaml")}, wantPath: at("repo/other.yaml"), wantFailOn: "none"},
		{name: "explicit relative path", opts: Options{Dir: at("repo"), Path: "other.yaml"}, wantPath: at("repo/other.yaml"), wantFailOn: "none"},
		{name: "explicit empty file", opts: Options{Dir: at("repo"), Path: "empty.yaml"}, wantPath: at("repo/empty.yaml")},
		{
			name:     "environment beats discovery",
			opts:     Options{Dir: at("repo/svc/sql"), Getenv: env(map[string]string{EnvVar: at("repo/other.yaml")})},
			wantPath: at("repo/other.yaml"), wantFailOn: "none",
		},
		{
			name:     "environment relative to the working directory",
			opts:     Options{Dir: at("repo/relative"), Getenv: env(map[string]string{EnvVar: "configs/local.yaml"})},
			wantPath: at("repo/relative/configs/local.yaml"),
		},
		{
			name:     "flag beats environment",
			opts:     Options{Dir: at("repo"), Path: "empty.yaml", Getenv: env(map[string]string{EnvVar: "other.yaml"})},
			wantPath: at("repo/empty.yaml"),
		},
		{
			name:     "empty environment variable is unset",
			opts:     Options{Dir: at("repo/svc/sql"), Getenv: env(map[string]string{EnvVar: ""})},
			wantPath: at("repo/svc/.planlint.yml"), wantFailOn: "info",
		},
		{
			name:    "explicit path that does not exist",
			opts:    Options{Dir: at("repo"), Path: "missing.yaml"},
			wantErr: "missing.yaml: config file named by --config does not exist",
		},
		{
			name:    "environment path that does not exist",
			opts:    Options{Dir: at("repo"), Getenv: env(map[string]string{EnvVar: "nope/planlint.yaml"})},
			wantErr: "nope/planlint.yaml: config file named by PLANLINT_CONFIG does not exist",
		},
		{
			name:    "explicit path is a directory",
			opts:    Options{Dir: at("repo"), Path: "cfgdir.yaml"},
			wantErr: "cfgdir.yaml: config file named by --config: is a directory, not a config file",
		},
		{
			name:    "both spellings in one directory",
			opts:    Options{Dir: at("repo/sub/below")},
			wantErr: at("repo/sub/.planlint.yml") + ": both .planlint.yaml and .planlint.yml exist in " + at("repo/sub") + "; keep one",
		},
		{
			name:    "explicit file with an error is named as given",
			opts:    Options{Dir: at("repo"), Path: "bad.yaml"},
			wantErr: `bad.yaml:1:10: fail_on: expected error, warning, info or none; got "never"`,
		},
		{
			name:    "discovered file with an error",
			opts:    Options{Dir: at("repo/broken/deeper")},
			wantErr: at("repo/broken/.planlint.yaml") + `:1:1: unknown key "rulez"; did you mean "rules"? (known keys: exclude, fail_on, redact, rules, suppress)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(tt.opts)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Load error = %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if c.Path != tt.wantPath {
				t.Errorf("Path = %q; want %q", c.Path, tt.wantPath)
			}
			wantDir := tt.opts.Dir
			if tt.wantPath != "" {
				wantDir = filepath.Dir(tt.wantPath)
			}
			if c.Dir != wantDir || c.WorkDir != tt.opts.Dir {
				t.Errorf("Dir, WorkDir = %q, %q; want %q, %q", c.Dir, c.WorkDir, wantDir, tt.opts.Dir)
			}
			if got := deref(c.FailOn); (tt.wantFailOn == "" && got != nil) || (tt.wantFailOn != "" && got != tt.wantFailOn) {
				t.Errorf("FailOn = %v; want %q", got, tt.wantFailOn)
			}
		})
	}
}

func TestLoadMissingIsNotExist(t *testing.T) {
	_, err := Load(Options{Dir: t.TempDir(), Path: "missing.yaml"})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Path != "missing.yaml" {
		t.Errorf("error %#v is not an *Error naming the path as given", err)
	}
}

func TestLoadFile(t *testing.T) {
	root := tree(t, map[string]string{
		"cfg/planlint.yaml": "rules:\n  key-lookup:\n    warn_executions: 10\nexclude: [old/**]\n",
		"big.yaml":          "# " + string(make([]byte, MaxFileSize)),
	})
	c, err := LoadFile(filepath.Join(root, "cfg", "planlint.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Rules.Params["key-lookup"]["warn_executions"]; got != 10 {
		t.Errorf("warn_executions = %v; want 10", got)
	}
	if c.Dir != filepath.Join(root, "cfg") || c.WorkDir != c.Dir {
		t.Errorf("Dir, WorkDir = %q, %q; want both %q", c.Dir, c.WorkDir, filepath.Join(root, "cfg"))
	}
	if !c.Excluded("old/x.sql") || !c.Excluded(filepath.Join(root, "cfg", "old", "y.sql")) {
		t.Error("old/** does not exclude old/x.sql relative to the file's directory")
	}
	if _, err := LoadFile(filepath.Join(root, "big.yaml")); err == nil || err.Error() != filepath.Join(root, "big.yaml")+": larger than 1048576 bytes; is this really a config file?" {
		t.Errorf("oversized file: error = %v", err)
	}
	if _, err := LoadFile(filepath.Join(root, "none.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error = %v; want fs.ErrNotExist", err)
	}
}

func TestLoadProcessWorkingDirectory(t *testing.T) {
	root := tree(t, map[string]string{".planlint.yaml": "redact: false\n"})
	t.Chdir(root)
	c, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Redact == nil || *c.Redact {
		t.Errorf("Redact = %v; want false from %s", deref(c.Redact), filepath.Join(root, FileName))
	}
	if c.Rules.Severity != nil || c.Rules.Off != nil || c.Rules.Params != nil {
		t.Errorf("Rules = %+v; want empty", c.Rules)
	}
}
