package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/rules"
)

func newRulesCmd(env *Env, g *globalFlags) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "rules [RULE]",
		Short: "List the rules, or print one rule's documentation (by code or name)",
		Args:  cobra.MaximumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, r := range rules.All() {
				names = append(names, r.Name+"\t"+r.Summary)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 0 && markdown {
				_, err := fmt.Fprint(out, rules.Index())
				return err
			}
			if len(args) == 0 {
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "CODE\tNAME\tSEVERITY\tNEEDS\tSUMMARY")
				for _, r := range rules.All() {
					needs := "plan"
					switch {
					case r.RunQuery != nil: // several plans of one query with runtime figures
						needs = "cache/querystore"
					case r.Run == nil: // reported by explain about .sql suppressions
						needs = "explain"
					case r.Catalog:
						needs = "plan+catalog"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Code, r.Name, r.Severity, needs, r.Summary)
				}
				return tw.Flush()
			}
			r := rules.Lookup(args[0])
			if r == nil {
				return usageError("unknown rule %q (run 'planlint rules' for the list)", args[0])
			}
			if markdown {
				_, err := fmt.Fprint(out, rules.Markdown(r))
				return err
			}
			_, err := fmt.Fprint(out, rules.Text(r))
			return err
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the rule's documentation page (or, without RULE, the rules table) as Markdown")
	return cmd
}
