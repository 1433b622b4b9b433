package cmd

import (
	"slices"
	"testing"
)

// A hook_result goes out after its hook point whichever comes first; a
// result whose point never comes goes out once pointOrderSize later
// entries have pushed it out.
func TestPointOrder(t *testing.T) {
	o := &pointOrder{seen: map[uint64]bool{}, held: map[uint64]func(){}}
	var out []string
	pub := func(s string) func() { return func() { out = append(out, s) } }
	o.result(2, pub("result 2"))
	o.point(1, pub("point 1"))
	o.point(2, pub("point 2"))
	o.result(1, pub("result 1"))
	if want := []string{"point 1", "point 2", "result 2", "result 1"}; !slices.Equal(out, want) {
		t.Fatalf("order %q, want %q", out, want)
	}
	out = nil
	o.result(99, pub("orphan"))
	for i := range pointOrderSize {
		o.point(uint64(1000+i), func() {})
	}
	if !slices.Equal(out, []string{"orphan"}) || len(o.seen) > pointOrderSize || len(o.held) != 0 {
		t.Fatalf("after %d points: out %q, %d seen, %d held", pointOrderSize, out, len(o.seen), len(o.held))
	}
}
