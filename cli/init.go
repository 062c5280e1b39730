package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/config"
)

func newInitCmd(env *Env) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter " + config.FileName + " in the working directory",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			wd, err := workDir(env)
			if err != nil {
				return &exitError{code: ExitError, err: err}
			}
			path := filepath.Join(wd, config.FileName)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if force && errors.Is(err, fs.ErrExist) {
				f, err = createOutput(path)
			}
			if errors.Is(err, fs.ErrExist) {
				return usageError("%s: already exists (use --force to overwrite it)", path)
			}
			if err != nil {
				return &exitError{code: ExitError, err: err}
			}
			if _, err := f.WriteString(config.Starter()); err != nil {
				f.Close()
				return &exitError{code: ExitError, err: err}
			}
			if err := f.Close(); err != nil {
				return &exitError{code: ExitError, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing file")
	return cmd
}
