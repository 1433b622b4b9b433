package cmd

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// errorMessage reads the error bodies of six APIs, whatever a server
// sends: it never panics, and what it returns came from the body.
func FuzzErrorMessage(f *testing.F) {
	for _, s := range []string{
		`{"ok":false,"error_code":401,"description":"Unauthorized"}`,
		`{"ok":false,"error":"invalid_auth"}`,
		`{"message":"401: Unauthorized","code":0}`,
		`{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error"}}`,
		`{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret.\r\nTrace ID: x"}`,
		`{"errcode":"M_UNKNOWN_TOKEN","error":"Unknown access token"}`,
		`<html>502</html>`, `null`, `{"error":7}`, `{"error":{"message":3}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msg := errorMessage(data)
		if msg == "" {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("errorMessage(%q) = %q from a body that is not JSON", data, msg)
		}
		if !utf8.ValidString(msg) {
			t.Fatalf("errorMessage(%q) = %q: not UTF-8", data, msg)
		}
	})
}

// hooksDoctorChecks reads herald hooks doctor's report: any text gives
// checks with a known status and a detail.
func FuzzHooksDoctorChecks(f *testing.F) {
	f.Add("/x/a.sh [pre_tool_call]\n  ✓ executable\n  ✗ not allowlisted (herald hooks allow pre_tool_call \"/x/a.sh\")\n1 issue(s) found.\n")
	f.Add("No shell hooks configured in config.yaml.\nDirectory hooks in /h/hooks (1):\nfmt [directory hook]\n  ⚠ HOOK.yaml:3: unknown key\n  ✓ python: /usr/bin/python3 (Python 3.11.2)\n")
	f.Add("✗ cannot read /h/hooks: permission denied\n")
	f.Fuzz(func(t *testing.T, out string) {
		for _, c := range hooksDoctorChecks(out) {
			if c.Section != "hooks" || (c.Status != checkOK && c.Status != checkWarn && c.Status != checkFail) {
				t.Fatalf("check %+v from %q", c, out)
			}
		}
	})
}
