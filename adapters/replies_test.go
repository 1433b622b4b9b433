package adapters_test

import (
	"testing"

	"github.com/heraldgw/herald/adapters"
)

func TestRepliesMatchChatAndCause(t *testing.T) {
	var rs adapters.Replies[string]
	w, ok := rs.Await("m1", "c1")
	if !ok {
		t.Fatal("first await refused")
	}
	if _, ok := rs.Await("m1", "c2"); ok {
		t.Fatal("the same id from another chat was taken")
	}
	w2, ok := rs.Await("m1", "c1")
	if !ok || w2 != w {
		t.Fatal("a second request on the same id and chat does not share the collector")
	}
	if rs.Deliver("c2", "m1", "stray") || rs.Deliver("c1", "m9", "other") {
		t.Fatal("a reply for another chat or message was taken")
	}
	if !rs.Deliver("c1", "m1", "a") || !rs.Deliver("c1", "m1", "b") {
		t.Fatal("a reply was not taken")
	}
	select {
	case <-w.Arrived():
	default:
		t.Fatal("no arrival signalled")
	}
	if got := w.Got(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("got %v", got)
	}
	rs.Release("m1", w)
	if !rs.Deliver("c1", "m1", "c") {
		t.Fatal("released while a request still waits")
	}
	rs.Release("m1", w2)
	if rs.Deliver("c1", "m1", "d") {
		t.Fatal("delivered after every request released")
	}
}

// Revise rewrites what the requests waiting from one chat collected, in
// place, and nothing of another chat's.
func TestRepliesRevise(t *testing.T) {
	var rs adapters.Replies[string]
	w, _ := rs.Await("m1", "c1")
	other, _ := rs.Await("m2", "c2")
	rs.Deliver("c1", "m1", "Hel")
	rs.Deliver("c1", "m1", "notice")
	rs.Deliver("c2", "m2", "Hel")
	grow := func(v string) (string, bool) { return v + "lo", v == "Hel" }
	if !rs.Revise("c1", grow) {
		t.Fatal("nothing revised")
	}
	if got := w.Got(); len(got) != 2 || got[0] != "Hello" || got[1] != "notice" {
		t.Fatalf("c1 got %v", got)
	}
	if got := other.Got(); len(got) != 1 || got[0] != "Hel" {
		t.Fatalf("c2 got %v", got)
	}
	if rs.Revise("c3", grow) {
		t.Fatal("a chat nobody waits on was revised")
	}
}
