package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

type logFlags struct {
	format string // console or json
	level  string
}

func (l *logFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&l.format, "log-format", "console", "log format: console (human-readable) or json")
	fs.StringVar(&l.level, "log-level", "info", "log level: debug, info, warn, error")
}

// newLogger builds the process logger writing to w (stderr in production).
// Console is for people at a terminal; json for log collectors.
func (l *logFlags) newLogger(w io.Writer) (*zap.Logger, error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", l.level, err)
	}
	ec := zap.NewProductionEncoderConfig()
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	ec.EncodeDuration = zapcore.StringDurationEncoder
	var enc zapcore.Encoder
	switch l.format {
	case "console":
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	case "json":
		enc = zapcore.NewJSONEncoder(ec)
	default:
		return nil, fmt.Errorf("--log-format %q: want console or json", l.format)
	}
	ws := zapcore.AddSync(w)
	if f, ok := w.(*os.File); ok {
		ws = zapcore.Lock(f)
	} else {
		ws = zapcore.Lock(ws)
	}
	return zap.New(zapcore.NewCore(enc, ws, lvl), zap.ErrorOutput(ws)), nil
}
