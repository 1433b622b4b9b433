package config

// source.go: where each effective setting came from. The loader records a
// Source per key path ("platforms.telegram.token") while it walks the
// config.yaml node tree and while it applies the environment; a key with
// no record is a default. Warnings about a value name its source, and
// `herald config show --effective` prints it beside each value.

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/heraldgw/herald"
)

// Source says where a setting came from: a line of config.yaml or .env,
// an environment variable, or (the zero Source) herald's default.
type Source struct {
	// File is "config.yaml" or ".env"; empty for a default or a variable
	// of the process environment.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Env is the variable that set the value (in the environment, or in
	// .env when File is ".env").
	Env string `json:"env,omitempty"`
}

// IsDefault reports whether the value is herald's default.
func (s Source) IsDefault() bool { return s.File == "" && s.Env == "" }

// String is "default", "config.yaml:LINE", "environment (NAME)" or
// ".env:LINE (NAME)".
func (s Source) String() string {
	switch {
	case s.IsDefault():
		return "default"
	case s.File == "":
		return "environment (" + s.Env + ")"
	case s.Env != "":
		return fmt.Sprintf("%s:%d (%s)", s.File, s.Line, s.Env)
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// warning is a Warning about the value from s: file, line and column
// for a file, the variable for the environment.
func (s Source) warning(msg string) Warning {
	switch {
	case s.IsDefault():
		return Warning{File: "config.yaml", Msg: msg}
	case s.File == "":
		return Warning{File: "environment (" + s.Env + ")", Msg: msg}
	}
	return Warning{File: s.File, Line: s.Line, Column: s.Column, Msg: msg}
}

// error is an *Error about the value from s, placed as warning places
// a Warning.
func (s Source) error(msg string) *Error {
	w := s.warning(msg)
	return &Error{File: w.File, Line: w.Line, Column: w.Column, Msg: w.Msg}
}

// Source returns where the setting at key (a dotted path of config.yaml
// keys, "approvals.mode") came from.
func (c *Config) Source(key string) Source { return c.sources[key] }

func (c *Config) setSource(key string, s Source) {
	if c.sources == nil {
		c.sources = map[string]Source{}
	}
	c.sources[key] = s
}

// keyWalker walks config.yaml's node tree beside Config's type: it warns
// about keys herald does not know and records where each known key is.
type keyWalker struct {
	warns   []Warning
	sources map[string]Source
}

var (
	rawType   = reflect.TypeOf(Raw{})
	nodeType  = reflect.TypeOf(yaml.Node{})
	modelType = reflect.TypeOf(Model{})
)

// at is the position of a key's value: the value itself when it is a
// scalar, else the key (a list or mapping starts on the lines below).
func at(k, v *yaml.Node) Source {
	n := k
	if v.Kind == yaml.ScalarNode || v.Kind == yaml.AliasNode {
		n = v
	}
	return Source{File: "config.yaml", Line: n.Line, Column: n.Column}
}

func (w *keyWalker) walk(n *yaml.Node, t reflect.Type, prefix string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == modelType && n.Kind == yaml.ScalarNode {
		w.sources[prefix+"default"] = Source{File: "config.yaml", Line: n.Line, Column: n.Column}
		return
	}
	if n.Kind == yaml.MappingNode && t.Kind() == reflect.Map && t.Key().Kind() == reflect.String {
		// a map of named entries (platforms.webhook.routes): each entry's keys
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			w.sources[prefix+k.Value] = at(k, v)
			w.walk(v, t.Elem(), prefix+k.Value+".")
		}
		return
	}
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct || t == nodeType || t == rawType {
		return
	}
	fields := structFields(t)
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fields[k.Value]
		if !ok {
			w.unknown(prefix, k, names)
			continue
		}
		w.sources[prefix+k.Value] = at(k, v)
		w.walk(v, f.Type, prefix+k.Value+".")
	}
	// Hermes' model.model names the model when model.default does not
	if t == modelType {
		if _, ok := w.sources[prefix+"default"]; !ok {
			if s, ok := w.sources[prefix+"model"]; ok {
				w.sources[prefix+"default"] = s
			}
		}
	}
}

func (w *keyWalker) unknown(prefix string, k *yaml.Node, names []string) {
	key := prefix + k.Value
	msg := fmt.Sprintf("unknown key %q", key)
	closest := herald.Closest(k.Value, names)
	if prefix == "" && hermesKeys[k.Value] || prefix == "plugins." && closest == "" {
		msg = fmt.Sprintf("key %q is a Hermes setting herald does not use; ignored", key)
	} else if closest != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", prefix+closest)
	} else {
		msg += "; ignored"
	}
	w.warns = append(w.warns, Warning{File: "config.yaml", Line: k.Line, Msg: msg})
}

// structFields maps a struct's config.yaml keys to its fields, inline
// structs' keys included.
func structFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-":
		case strings.Contains(opts, "inline"):
			for k, v := range structFields(f.Type) {
				out[k] = v
			}
		default:
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			out[name] = f
		}
	}
	if t == modelType {
		out["model"] = reflect.StructField{Name: "Alt", Type: reflect.TypeOf("")}
	}
	return out
}
