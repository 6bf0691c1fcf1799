//go:build !unix

package watch

func softNOFILE() uint64 { return 1024 }
