//go:build !linux

package index

func adviseHuge[T any]([]T) {}
