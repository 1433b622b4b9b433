package hooks

// judge_wire.go: the Judge a registry's prompt and agent hooks ask, set
// by the composition root (hooks cannot import the agent that implements
// it).

import "sync"

// judges maps each *Registry to its Judge.
var judges sync.Map

// SetJudge gives the prompt and agent hooks of r their model.
func (r *Registry) SetJudge(j Judge) { judges.Store(r, j) }

// Judge returns the Judge set for r, or nil when none was.
func (r *Registry) Judge() Judge {
	j, _ := judges.Load(r)
	out, _ := j.(Judge)
	return out
}
