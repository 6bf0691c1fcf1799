//go:build !unix

package limits

func softNOFILE() uint64 { return 1024 }
