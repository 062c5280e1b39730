//go:build !unix

package cli

// oNoFollow: no such flag here; createOutput's Lstat check stands alone.
const oNoFollow = 0
