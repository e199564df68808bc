package config

import (
	"strings"
	"testing"
)

// FuzzLiteralKey keeps a literal api_key at a fixed place and fuzzes the text after it: no
// error may show the key, however broken the rest of the file is.
func FuzzLiteralKey(f *testing.F) {
	f.Add("\n    model: m\n    base_url: http://h/v1\n")
	f.Add(", model: [}\n")
	f.Add("\\q\"\n")
	f.Add("\n      more\n  - bogus\n")
	f.Fuzz(func(t *testing.T, suffix string) {
		for _, prefix := range []string{
			"endpoints:\n  - api_key: sk-SECRETxyz",
			"endpoints:\n  - {api_key: \"sk-SECRETxyz",
			"endpoints:\n  - headers: {Authorization: Bearer sk-SECRETxyz",
		} {
			_, err := Parse("f.yaml", []byte(prefix+suffix))
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("the key leaks:\n%v", err)
			}
		}
	})
}
