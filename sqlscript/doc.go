// Package sqlscript reads the .sql files given to `planlint explain`: it
// decodes them, splits them into GO-separated batches and statements, works
// out what each batch sends to the server (a plain SQL batch, or an RPC to
// sp_executesql built from an EXEC sp_executesql call or from parameter
// annotations in comments), and keeps the position of everything so that
// findings can be reported on the file's lines. It also parses planlint-ignore
// suppression comments, fingerprints and redacts statements, and tells which
// statements cannot be rolled back. It talks to no server.
//
// Offsets are byte offsets into Script.Text, the decoded file without its
// byte-order mark. Lines and columns are 1-based; columns count Unicode
// characters.
package sqlscript
