// Package formattest checks the adapters' Markdown converters for time
// linear in their input, on the inputs that make a converter rescanning
// the rest of a line for every unclosed marker quadratic.
package formattest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Input makes a pathological input of about n bytes.
type Input struct {
	Name string
	Gen  func(n int) string
}

// Pathological are inputs that have made herald's converters quadratic.
var Pathological = []Input{
	{"underscores", func(n int) string { return strings.Repeat("_", n) }},
	{"stars", func(n int) string { return strings.Repeat("*", n) }},
	{"open brackets", func(n int) string { return strings.Repeat("[", n) }},
	{"links without paren", func(n int) string { return strings.Repeat("[a](", n/4) }},
	{"bad urls", func(n int) string { return strings.Repeat("[a](b c", n/7) + ")" }},
	{"spaced stars", func(n int) string { return strings.Repeat("a *", n/3) }},
	{"bold openers", func(n int) string { return strings.Repeat("**a ", n/4) }},
	{"ticks between", func(n int) string { return strings.Repeat("*a`", n/3) + "*" }},
	{"fences", func(n int) string { return "```\n" + strings.Repeat("a\n", n/2) }},
	{"nested", func(n int) string {
		return strings.Repeat("**_~~[a](http://x)", n/36) + "x" + strings.Repeat("~~_**", n/10)
	}},
}

// Linear converts every Pathological input of n bytes, each within bound
// (twenty times bound under the race detector), and checks each output
// with wellFormed.
func Linear(t *testing.T, n int, bound time.Duration, convert func(string) string, wellFormed func(string) error) {
	if raceEnabled {
		bound *= 20
	}
	for _, p := range Pathological {
		t.Run(p.Name, func(t *testing.T) {
			s := p.Gen(n)
			start := time.Now()
			out := convert(s)
			d := time.Since(start)
			t.Logf("%d bytes in %v", len(s), d)
			if d > bound {
				t.Fatalf("%d bytes took %v (bound %v)", len(s), d, bound)
			}
			if err := wellFormed(out); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Bench runs convert on the named inputs at each size: with linear time,
// ns/op grows as the size does.
func Bench(b *testing.B, sizes []int, names []string, convert func(string) string) {
	for _, n := range sizes {
		for _, p := range Pathological {
			if !contains(names, p.Name) {
				continue
			}
			s := p.Gen(n)
			b.Run(fmt.Sprintf("%s/%d", p.Name, n), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					convert(s)
				}
			})
		}
	}
}

func contains(names []string, name string) bool {
	for _, x := range names {
		if x == name {
			return true
		}
	}
	return false
}

// Seeds adds a short form of every Pathological input to a fuzz corpus.
func Seeds(f *testing.F) {
	for _, p := range Pathological {
		f.Add(p.Gen(60))
	}
}
