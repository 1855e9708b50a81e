// Package vfs is the one file-system seam of kraftd's storage: the metadata
// log, its snapshots, the quorum-state file and the formatted log dirs
// (meta.properties, the bootstrap snapshot) are all
// read and written through FS, so the same code runs on the OS, on MemFS
// (power-loss images) and under FaultFS (injected errors). It is a leaf
// package (standard library only) so both metadatalog and clusterid can use
// it.
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
// image after every single operation. FaultFS offers each operation to
// composable injectors (in the spirit of pebble's vfs/errorfs): Fail for
// every operation of some kinds, If to narrow by a predicate, OnIndex to
// fail only the n-th, DiskFull for ENOSPC after a byte budget with a short
// write. ControlInjector reads its rules from a control file
// (ParseControl); a binary built with -tags faultfs wraps OS in it when
// KRAFTD_FAULTFS names that file, so real-process tests can stall or fail
// a running node's fsyncs and writes.
//
//	mem := vfs.NewMemFS()
//	ffs := vfs.NewFaultFS(mem, vfs.OnIndex(2, vfs.Fail(syscall.EIO, vfs.OpSync)))
//	err := vfs.WriteFileAtomic(ffs, "/d/state", data) // fails at the third fsync
package vfs
