// Command http-policy is a tiny policy service for herald's http hooks:
// herald POSTs each pre_tool_call payload (the JSON a shell hook reads on
// stdin), signed with X-Herald-Signature-256 when the hook has a secret;
// this service refuses terminal commands that say "rm -rf" and lets
// everything else through. Run it, then point a hook at it:
//
//	HERALD_POLICY_SECRET=change-me go run ./examples/http-policy -listen 127.0.0.1:9090
//
//	# $HERALD_HOME/config.yaml
//	hooks:
//	  pre_tool_call:
//	    - type: http
//	      url: http://127.0.0.1:9090/check
//	      secret: ${HERALD_POLICY_SECRET}
//	      allow_private: true     # the service is on this machine
//	      block_on_failure: true  # no answer, no tool call
//	      timeout_seconds: 5
//	      priority: 100
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
)

// payload is the part of herald's shell-hook payload this policy reads.
type payload struct {
	Event     string         `json:"hook_event_name"`
	ToolName  string         `json:"tool_name"`
	ToolInput map[string]any `json:"tool_input"`
}

// Handler answers herald's http hook. With a secret, a request whose
// signature does not verify is refused (401), and herald counts that as
// the hook failing.
func Handler(secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || r.Method != http.MethodPost {
			http.Error(w, "POST a JSON payload", http.StatusBadRequest)
			return
		}
		if secret != "" {
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write(body)
			want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
			if !hmac.Equal([]byte(r.Header.Get("X-Herald-Signature-256")), []byte(want)) {
				http.Error(w, "bad signature", http.StatusUnauthorized)
				return
			}
		}
		var p payload
		if err := json.Unmarshal(body, &p); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		cmd, _ := p.ToolInput["command"].(string)
		if p.Event == "pre_tool_call" && p.ToolName == "terminal" && strings.Contains(cmd, "rm -rf") {
			json.NewEncoder(w).Encode(map[string]string{"decision": "block", "reason": "policy: rm -rf is not allowed here"})
			return
		}
		io.WriteString(w, "{}")
	})
}

func main() {
	listen := flag.String("listen", "127.0.0.1:9090", "address to listen on")
	flag.Parse()
	log.Printf("policy service on http://%s/check", *listen)
	log.Fatal(http.ListenAndServe(*listen, Handler(os.Getenv("HERALD_POLICY_SECRET"))))
}
