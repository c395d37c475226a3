package segment

import "os"

func readAll(p string) ([]byte, error)  { return os.ReadFile(p) }
func writeAll(p string, b []byte) error { return os.WriteFile(p, b, 0o644) }
