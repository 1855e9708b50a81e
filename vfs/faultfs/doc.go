// Package faultfs injects file-system errors under kraftd's storage (in the
// spirit of pebble's vfs/errorfs): FS wraps a vfs.FS and offers each
// operation to composable injectors: Fail for every operation of some
// kinds, If to narrow by a predicate, OnIndex to fail only the n-th,
// DiskFull for ENOSPC after a byte budget with a short write.
//
// For real processes, ControlInjector reads its rules from a control file
// (ParseControl) and SyncLedger records the size each file had at its last
// fsync, so a test can cut files back to what a power loss would have left
// (DurableSizes). A controller binary built with -tags faultfs wraps
// vfs.OS in both when KRAFTD_FAULTFS names that file (FromEnv), so the
// fault suite can stall or fail a running node's fsyncs and writes; a
// release build does not import this package.
//
//	mem := vfs.NewMemFS()
//	ffs := faultfs.Wrap(mem, faultfs.OnIndex(2, faultfs.Fail(syscall.EIO, faultfs.OpSync)))
//	err := vfs.WriteFileAtomic(ffs, "/d/state", data) // fails at the third fsync
package faultfs
