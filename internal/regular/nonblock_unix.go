//go:build unix

package regular

import "syscall"

// oNonblock keeps open from waiting for a FIFO's writer.
const oNonblock = syscall.O_NONBLOCK
