package shell_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd"
)

func run(t *testing.T, home string, args ...string) (int, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), append([]string{"--home", home}, args...), cmd.WithStdio(strings.NewReader(""), &out, &errw), cmd.WithGetenv(func(string) string { return "" }))
	return code, out.String() + errw.String()
}
