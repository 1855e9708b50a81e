package logging

import (
	"fmt"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestRemoteLimitsEachMessage(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	lg := Remote(zap.New(core))
	for i := 0; i < 1000; i++ {
		lg.Warn("forged request refused", zap.Int("peer", i))
		lg.Info("wrong cluster id", zap.String("remote", fmt.Sprint("10.0.0.", i)))
	}
	if got := logs.FilterMessage("forged request refused").Len(); got != RemoteBurst {
		t.Errorf("forged request lines = %d, want %d", got, RemoteBurst)
	}
	if got := logs.FilterMessage("wrong cluster id").Len(); got != RemoteBurst {
		t.Errorf("cluster id lines = %d, want %d", got, RemoteBurst)
	}
	// The plain logger is untouched.
	plain := zap.New(core)
	for i := 0; i < 10; i++ {
		plain.Error("disk failed")
	}
	if got := logs.FilterMessage("disk failed").Len(); got != 10 {
		t.Errorf("plain lines = %d, want 10", got)
	}
}
