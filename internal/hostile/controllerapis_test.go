package hostile

import (
	"math/rand/v2"
	"testing"
)

// Every hostile controller request encodes and decodes back at its version,
// and a wide one stays under the body bound it was given.
func TestControllerApisRequests(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, a := range kraftdApis.Apis() {
		key := int16(a.Key)
		if notControllerApis[key] {
			continue
		}
		for v := a.Versions.Min; v <= a.Versions.Max; v++ {
			for name, req := range map[string]interface {
				AppendTo([]byte) []byte
				ReadFrom([]byte) error
			}{"maximal": fill(key, v, maxValues, 3), "minimal": fill(key, v, minValues, 0), "wide": wide(key, v, 64<<10)} {
				b := req.AppendTo(nil)
				back := fill(key, v, minValues, 0)
				if err := back.ReadFrom(b); err != nil {
					t.Errorf("%s v%d %s: %v", a.Name(), v, name, err)
				}
				if name == "wide" && len(b) > 64<<10+4096 {
					t.Errorf("%s v%d wide: %d bytes", a.Name(), v, len(b))
				}
			}
			body := fill(key, v, maxValues, 3).AppendTo(nil)
			if c := corrupt(body, rng); len(c) > len(body) {
				t.Errorf("%s v%d: corrupt grew the body", a.Name(), v)
			}
		}
	}
}
