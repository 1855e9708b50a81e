package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kraftd/kraftd/vfs"
	"github.com/kraftd/kraftd/vfs/faultfs"
)

// crashFormatOptions formats a data dir and the metadata dir of a dynamic
// quorum whose voter 1 is this node, so every kind of file format writes is
// covered: meta.properties and the bootstrap snapshot.
func crashFormatOptions(t *testing.T) FormatOptions {
	voters, err := ParseInitialControllers("1@a:9093:J8aAPcfLQt2bqs1JT_rMgQ,2@b:9093:Dq3E_1nWQ5-qDjymY8nuzQ")
	if err != nil {
		t.Fatal(err)
	}
	return FormatOptions{
		Dirs: []string{"/data/logs"}, MetadataDir: "/data/meta",
		ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", NodeID: 1,
		Now:                func() time.Time { return time.UnixMilli(1_700_000_000_000) },
		InitialControllers: voters, ControllerListener: "CONTROLLER",
	}
}

// checkFormatImage checks a file system left by an interrupted or failed
// Format with options o: every dir holding meta.properties is fully
// formatted (bootstrap data complete, nothing torn), and the dirs are either
// all formatted (Load accepts them) or Format can run again (with
// IgnoreFormatted when some already are) and then Load accepts them. It
// returns the first violation.
func checkFormatImage(fsys *vfs.MemFS, o FormatOptions) error {
	formatted, err := checkFormattedDirs(fsys, o)
	if err != nil {
		return err
	}
	if formatted < 2 {
		o.FS, o.IgnoreFormatted = fsys, formatted > 0
		if err := Format(o); err != nil {
			return fmt.Errorf("%d of 2 dirs formatted, and format cannot run again: %w", formatted, err)
		}
		if formatted, err = checkFormattedDirs(fsys, o); err != nil {
			return fmt.Errorf("after formatting again: %w", err)
		} else if formatted < 2 {
			return fmt.Errorf("formatting again formatted %d of 2 dirs", formatted)
		}
	}
	node, err := LoadFS(fsys, o.Dirs, o.MetadataDir, o.NodeID)
	if err != nil {
		return fmt.Errorf("formatted dirs do not load: %w", err)
	}
	if node.ClusterID != o.ClusterID || node.DirectoryID != o.InitialControllers[0].DirectoryID {
		return fmt.Errorf("loaded %+v", node)
	}
	return nil
}

// checkFormattedDirs verifies every dir that has meta.properties and
// returns how many have it.
func checkFormattedDirs(fsys *vfs.MemFS, o FormatOptions) (int, error) {
	now := o.Now()
	fs, err := resolveFeatures(nil, nil, true)
	if err != nil {
		return 0, err
	}
	snapshot := BootstrapSnapshot(1, o.InitialControllers, o.ControllerListener, fs.records(), now)
	partDir := filepath.Join(o.MetadataDir, "__cluster_metadata-0")
	formatted := 0
	for _, dir := range []string{o.Dirs[0], o.MetadataDir} {
		if _, err := fsys.Stat(Path(dir)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		formatted++
		mp, err := readMetaProperties(fsys, dir)
		if err != nil {
			return 0, err
		}
		if mp.Version != 1 || mp.ClusterID != o.ClusterID || mp.NodeID != o.NodeID || mp.DirectoryID.IsZero() {
			return 0, fmt.Errorf("%s holds %+v", Path(dir), mp)
		}
		want := map[string][]byte{}
		names := []string{MetaPropertiesFile}
		if dir == o.MetadataDir {
			want[filepath.Join(partDir, BootstrapSnapshotName)] = snapshot
			names = []string{"__cluster_metadata-0", MetaPropertiesFile}
			if got, _ := fsys.List(partDir); !reflect.DeepEqual(got, []string{BootstrapSnapshotName}) {
				return 0, fmt.Errorf("%s holds %q beside meta.properties", partDir, got)
			}
			if st, err := fsys.Stat(filepath.Join(partDir, BootstrapSnapshotName)); err != nil || st.Mode().Perm() != 0o444 {
				return 0, fmt.Errorf("bootstrap snapshot not frozen read-only: %v %v", st, err)
			}
		}
		if got, _ := fsys.List(dir); !reflect.DeepEqual(got, names) {
			return 0, fmt.Errorf("%s holds %q beside meta.properties", dir, got)
		}
		for p, data := range want {
			if got, err := fsys.ReadFile(p); err != nil || !bytes.Equal(got, data) {
				return 0, fmt.Errorf("%s beside meta.properties: %d bytes, want %d (%v)", p, len(got), len(data), err)
			}
		}
	}
	return formatted, nil
}

// formatCrashImages formats on a MemFS seen through wrap and checks the
// power-loss image after every file-system operation (with unsynced data
// lost, and with a random part of it kept), then the final image.
func formatCrashImages(t *testing.T, wrap func(vfs.FS) vfs.FS) error {
	o := crashFormatOptions(t)
	mem := vfs.NewMemFS()
	rng := rand.New(rand.NewPCG(7, 8))
	var images []*vfs.MemFS
	mem.SetAfterOp(func() { images = append(images, mem.CrashClone(nil), mem.CrashClone(rng)) })
	o.FS = wrap(mem)
	if err := Format(o); err != nil {
		t.Fatal(err)
	}
	mem.SetAfterOp(nil)
	if len(images) < 20 {
		t.Fatalf("only %d crash images", len(images))
	}
	for i, img := range images {
		if err := checkFormatImage(img, o); err != nil {
			return fmt.Errorf("crash after operation %d: %w", i/2+1, err)
		}
	}
	final := mem.CrashClone(nil)
	if n, err := checkFormattedDirs(final, o); err != nil || n != 2 {
		return fmt.Errorf("after format returned: %d dirs formatted (%v)", n, err)
	}
	return nil
}

func TestFormatCrashAtEveryStep(t *testing.T) {
	if err := formatCrashImages(t, func(fs vfs.FS) vfs.FS { return fs }); err != nil {
		t.Fatal(err)
	}
}

// TestFormatCrashTestSeesMissingFsyncs shows the crash test above catches
// a Format that skips any one of the fsyncs it needs.
func TestFormatCrashTestSeesMissingFsyncs(t *testing.T) {
	for _, skip := range []string{
		"meta.properties.tmp",             // meta.properties torn
		"-bootstrap.checkpoint.part",      // snapshot torn
		"/data/meta/__cluster_metadata-0", // snapshot rename lost
		"/data",                           // new log dirs lost
	} {
		err := formatCrashImages(t, func(fs vfs.FS) vfs.FS { return skipSyncFS{fs, skip} })
		if err == nil {
			t.Errorf("skipping the fsync of %s went unnoticed", skip)
		} else {
			t.Logf("without the fsync of %s: %v", skip, err)
		}
	}
}

// skipSyncFS makes fsyncs of files and dirs whose name ends with suffix do
// nothing: a Format that forgot them.
type skipSyncFS struct {
	vfs.FS
	suffix string
}

func (s skipSyncFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	return s.wrap(name, func() (vfs.File, error) { return s.FS.OpenFile(name, flag, perm) })
}

func (s skipSyncFS) OpenDir(name string) (vfs.File, error) {
	return s.wrap(name, func() (vfs.File, error) { return s.FS.OpenDir(name) })
}

func (s skipSyncFS) wrap(name string, open func() (vfs.File, error)) (vfs.File, error) {
	f, err := open()
	if err != nil || !strings.HasSuffix(name, s.suffix) {
		return f, err
	}
	return noSyncFile{f}, nil
}

type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error { return nil }

// TestFormatFaults fails Format at every step in turn (disk full after each
// byte count, each fsync, any operation): it must return the error, and the
// dirs left behind, live or after a power loss, must be unformatted or fully
// formatted, never half.
func TestFormatFaults(t *testing.T) {
	errInjected := errors.New("injected")
	for _, tc := range []struct {
		name   string
		inject func(i int) faultfs.Injector
		want   error
	}{
		{"disk full", func(i int) faultfs.Injector { return faultfs.DiskFull(int64(i)) }, syscall.ENOSPC},
		{"fsync", func(i int) faultfs.Injector { return faultfs.OnIndex(i, faultfs.Fail(syscall.EIO, faultfs.OpSync)) }, syscall.EIO},
		{"any operation", func(i int) faultfs.Injector { return faultfs.OnIndex(i, faultfs.Fail(errInjected)) }, errInjected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failures := 0
			for i := 0; ; i++ {
				o := crashFormatOptions(t)
				mem := vfs.NewMemFS()
				o.FS = faultfs.Wrap(mem, tc.inject(i))
				err := Format(o)
				if err == nil {
					break
				}
				failures++
				if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "/data/") {
					t.Fatalf("step %d: %v (want %v naming the dir)", i, err, tc.want)
				}
				crashed := mem.CrashClone(nil)
				if cerr := checkFormatImage(mem, o); cerr != nil {
					t.Fatalf("step %d (%v): %v", i, err, cerr)
				}
				if err := checkFormatImage(crashed, o); err != nil {
					t.Fatalf("step %d, then a crash: %v", i, err)
				}
			}
			if failures < 5 {
				t.Fatalf("only %d failure points", failures)
			}
		})
	}
}
