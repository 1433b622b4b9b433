package config

// mask.go: what counts as a secret, and config.yaml's text with every
// secret's value masked, for `herald config show`.

import (
	"bytes"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/heraldgw/herald"
)

// secretTag marks a field whose value is a credential: never printed,
// always redacted.
const secretTag = "secret"

// Masked stands for a secret's value wherever settings are shown.
const Masked = herald.Mask

// SecretKey reports whether a config.yaml key (its last part) names a
// credential: token, secret, password, api_key and the like, in any
// case and with any prefix (bot_token, GITHUB_TOKEN, app_password).
func SecretKey(name string) bool {
	l := strings.ToLower(name)
	for _, suf := range []string{"token", "secret", "password", "passwd", "api_key", "apikey", "private_key", "credentials", "authorization"} {
		if strings.HasSuffix(l, suf) {
			return true
		}
	}
	return IsSecretName(name)
}

// MaskFile returns config.yaml's text with the value of every secret
// setting replaced by "[REDACTED]" (Masked, quoted so the text stays
// YAML): the fields herald keeps credentials in, and any key named like
// one (SecretKey), wherever it is (a hook's env:, a header). A "${NAME}"
// reference is kept: it names a variable, not a secret. The text keeps
// its layout and comments; where a secret is written in a way the text
// cannot be masked in place (a quoted or plain value over several lines),
// the document is written anew from its masked tree instead. Text that is
// not YAML is an *Error, as from Load.
func MaskFile(data []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(err, data)
	}
	lines := strings.SplitAfter(string(data), "\n")
	secrets := secretScalars(&root, lines)
	if len(secrets) == 0 {
		return data, nil
	}
	spans := make([]maskSpan, len(secrets))
	inPlace := true
	for i, sc := range secrets {
		spans[i] = scalarSpan(lines, sc.node, sc.keyColumn)
		inPlace = inPlace && spans[i].from >= 0
	}
	for _, sc := range secrets {
		sc.node.Value, sc.node.Style, sc.node.Tag = Masked, yaml.DoubleQuotedStyle, "!!str"
	}
	rewritten, err := yaml.Marshal(&root)
	if err != nil {
		return nil, &Error{File: "config.yaml", Msg: "cannot be shown with its secrets masked: " + err.Error()}
	}
	if inPlace {
		// kept only when it reads back as exactly the masked tree
		out := maskInPlace(lines, spans)
		var back yaml.Node
		if yaml.Unmarshal(out, &back) == nil {
			if again, err := yaml.Marshal(&back); err == nil && bytes.Equal(again, rewritten) {
				return out, nil
			}
		}
	}
	return rewritten, nil
}

// secretScalar is a secret's value node and the column of its key.
type secretScalar struct {
	node      *yaml.Node
	keyColumn int
}

// secretScalars finds the value of every secret setting in a config.yaml
// node tree, each once.
func secretScalars(root *yaml.Node, lines []string) []secretScalar {
	var out []secretScalar
	masked, seen := map[*yaml.Node]bool{}, map[*yaml.Node]bool{}
	var visit func(n *yaml.Node, t reflect.Type, secret bool, keyColumn int)
	visit = func(n *yaml.Node, t reflect.Type, secret bool, keyColumn int) {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			var et reflect.Type
			if t != nil && t.Kind() == reflect.Slice {
				et = t.Elem()
			}
			for _, x := range n.Content {
				visit(x, et, secret, keyColumn)
			}
		case yaml.MappingNode:
			var fields map[string]reflect.StructField
			if t != nil && t.Kind() == reflect.Struct {
				fields = structFields(t)
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				var ft reflect.Type
				tagged := false
				if f, ok := fields[k.Value]; ok {
					ft, tagged = f.Type, f.Tag.Get(secretTag) == "true"
				} else if t != nil && t.Kind() == reflect.Map {
					ft = t.Elem()
				}
				visit(v, ft, secret || tagged || SecretKey(k.Value), k.Column)
			}
		case yaml.ScalarNode:
			if secret && !masked[n] && n.Value != "" && n.Tag != "!!null" && !secretRef.MatchString(strings.TrimSpace(n.Value)) {
				masked[n] = true
				out = append(out, secretScalar{node: n, keyColumn: keyColumn})
			}
		case yaml.AliasNode:
			// the anchored value is written where the anchor is; each
			// anchor is looked into once (an alias may name its own
			// ancestor, or a thousand aliases one anchor)
			if secret && n.Alias != nil && !seen[n.Alias] {
				seen[n.Alias] = true
				visit(n.Alias, t, true, lineIndent(lines, n.Alias.Line)+1)
			}
		}
	}
	visit(root, reflect.TypeOf(Config{}), false, 0)
	return out
}

// maskSpan is where one secret scalar is written: runes [from, to) of its
// first line (from -1: not found), and with block the lines below that
// are indented more than its key (the content of a | or > scalar).
type maskSpan struct {
	line, from, to int
	block          bool
	keyColumn      int
}

func maskInPlace(lines []string, spans []maskSpan) []byte {
	lines = slices.Clone(lines)
	for _, s := range spans {
		l := lines[s.line-1]
		r := []rune(strings.TrimRight(l, "\r\n"))
		lines[s.line-1] = string(r[:s.from]) + `"` + Masked + `"` + string(r[s.to:]) + lineEnd(l)
		if !s.block {
			continue
		}
		for i := s.line; i < len(lines); i++ {
			l := lines[i]
			if strings.TrimSpace(l) == "" {
				continue
			}
			if lineIndent(lines, i+1) < s.keyColumn {
				break
			}
			lines[i] = ""
		}
	}
	return []byte(strings.Join(lines, ""))
}

// scalarSpan finds where n is written on its line. It gives up (from -1)
// on a value that goes on over more lines than a block scalar's.
func scalarSpan(lines []string, n *yaml.Node, keyColumn int) maskSpan {
	s := maskSpan{line: n.Line, from: -1, keyColumn: keyColumn}
	if n.Line < 1 || n.Line > len(lines) {
		return s
	}
	r := []rune(strings.TrimRight(lines[n.Line-1], "\r\n"))
	from := n.Column - 1
	if from < 0 || from > len(r) {
		return s
	}
	rest := r[from:]
	// an anchor or a tag before the value stays
	for len(rest) > 0 && (rest[0] == '&' || rest[0] == '!') {
		i := 0
		for i < len(rest) && rest[i] != ' ' && rest[i] != '\t' {
			i++
		}
		for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') {
			i++
		}
		from, rest = from+i, rest[i:]
	}
	end := -1
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		// the indicator and any comment after it; the content below
		s.from, s.to, s.block = from, len(r), true
		return s
	case yaml.DoubleQuotedStyle:
		for i := 1; i < len(rest) && end < 0; i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				end = i + 1
			}
		}
	case yaml.SingleQuotedStyle:
		for i := 1; i < len(rest) && end < 0; i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				end = i + 1
			}
		}
	default:
		if strings.HasPrefix(string(rest), n.Value) {
			end = len([]rune(n.Value))
		}
	}
	if end >= 0 {
		s.from, s.to = from, from+end
	}
	return s
}

// lineIndent is the number of spaces that start line n (1-based).
func lineIndent(lines []string, n int) int {
	if n < 1 || n > len(lines) {
		return 0
	}
	return len(lines[n-1]) - len(strings.TrimLeft(lines[n-1], " "))
}

// lineEnd is the line break that ends l, if any.
func lineEnd(l string) string {
	return l[len(strings.TrimRight(l, "\r\n")):]
}
