// Package vfs is the one file-system seam of kraftd's storage: the metadata
// log, its snapshots, the quorum-state file and the formatted log dirs
// (meta.properties, the bootstrap snapshot) are all read and written
// through FS, so the same code runs on the OS, on MemFS (power-loss images)
// and under vfs/faultfs (injected errors). It is a leaf package (standard
// library only) so the metadata log and the storage tooling share it
// without importing each other.
//
// # Durable writes
//
// Every whole-file replacement goes through WriteFileAtomic (or
// WriteFileAtomicVia to choose the temp name and mode): write a temp file,
// fsync it, rename it over the target, fsync the directory. Streaming
// writers (segments, snapshots) use FS directly and SyncDir for the
// directory entries they create, rename or remove. Directories are created
// with MkdirAll, which fsyncs the parent of each one it creates (FS has only
// a one-level Mkdir, so there is no way to create them without).
//
// # Testing
//
// MemFS keeps, per file, the content as of its last fsync and, per
// directory, the entries as of the directory's last fsync; CrashClone
// returns the file system a power loss would leave (optionally with a torn,
// partly written unsynced tail), and SetAfterOp lets a test take such an
// image after every single operation (as pebble's vfs.MemFS and its crash
// clones). Injected errors live beside it in vfs/faultfs, as pebble keeps
// vfs/errorfs, so that nothing of them is linked into a release binary.
//
//	mem := vfs.NewMemFS()
//	err := vfs.WriteFileAtomic(mem, "/d/state", data)
//	img := mem.CrashClone(nil) // what a power loss now would leave
package vfs
