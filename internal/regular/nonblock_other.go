//go:build !unix

package regular

const oNonblock = 0
