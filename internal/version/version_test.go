package version

import (
	"runtime"
	"testing"
)

func TestString(t *testing.T) {
	in := Info{Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567", GoVersion: "go1.26.0", Platform: "linux/arm64"}
	if got, want := in.String(), "kraftd v1.2.3 commit 0123456789abcdef0123456789abcdef01234567 go1.26.0 linux/arm64"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	in.Modified = true
	if got, want := in.String(), "kraftd v1.2.3 commit 0123456789abcdef0123456789abcdef01234567+modified go1.26.0 linux/arm64"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got, want := (Info{Version: "dev", GoVersion: "go1.26.0", Platform: "linux/amd64"}).String(), "kraftd dev commit unknown go1.26.0 linux/amd64"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

func TestGetUnstamped(t *testing.T) {
	in := Get()
	if in.Version != "dev" || in.GoVersion != runtime.Version() || in.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("%+v", in)
	}
}
