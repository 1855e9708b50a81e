package network

import (
	"errors"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const inlineWrites = true

// writeOnce makes one non-blocking writev of bufs; a full socket (EAGAIN, EINTR) is not
// an error, only a short count.
func writeOnce(rc syscall.RawConn, bufs net.Buffers) (int, error) {
	var (
		n    int
		werr error
	)
	if err := rc.Write(func(fd uintptr) bool {
		n, werr = unix.Writev(int(fd), bufs)
		return true // one attempt: never wait for the socket
	}); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, nil // a blocking write's deadline, not cleared yet: nothing was written
		}
		return 0, err
	}
	if werr == unix.EAGAIN || werr == unix.EINTR {
		return 0, nil
	}
	return max(n, 0), werr
}
