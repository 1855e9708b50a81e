package logging

import (
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

const (
	// RemoteBurst lines with the same level and message are written in each
	// RemoteInterval; the rest of that interval's lines are dropped.
	RemoteBurst    = 5
	RemoteInterval = 10 * time.Second
)

// Remote returns lg rate-limited for lines caused by remote input: at most
// RemoteBurst lines per level and message in every RemoteInterval.
func Remote(lg *zap.Logger) *zap.Logger {
	return lg.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewSamplerWithOptions(c, RemoteInterval, RemoteBurst, 0)
	}))
}
