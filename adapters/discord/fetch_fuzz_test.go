package discord

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzFetchURL: whatever URL a message carries, Fetch dials only
// Discord's attachment hosts over https, with no user info.
func FuzzFetchURL(f *testing.F) {
	for _, s := range []string{
		"https://cdn.discordapp.com/attachments/1/2/a.png?ex=1&is=2&hm=3&",
		"https://media.discordapp.net:443/attachments/1/2/a.png",
		"https://CDN.DiscordApp.com/x",
		"https://cdn.discordapp.com@evil.example/x",
		"https://cdn.discordapp.com.evil.example/x",
		"https://evil.example#@cdn.discordapp.com/",
		"https://evil.example\\@cdn.discordapp.com/",
		"https://[::1]:443/",
		"//cdn.discordapp.com/x",
		"https:cdn.discordapp.com",
		"https://cdn.discordapp.com%2f@evil.example/",
		"file:///etc/passwd",
	} {
		f.Add(s)
	}
	a := New(Config{})
	f.Fuzz(func(t *testing.T, s string) {
		req, err := http.NewRequest(http.MethodGet, s, nil)
		if err != nil || !a.allowed(req.URL) {
			return
		}
		u := req.URL
		host := strings.ToLower(u.Hostname())
		if strings.ToLower(u.Scheme) != "https" {
			t.Fatalf("%q allowed with scheme %q", s, u.Scheme)
		}
		if u.User != nil || (host != "cdn.discordapp.com" && host != "media.discordapp.net") || (u.Port() != "" && u.Port() != "443") {
			t.Fatalf("%q allowed: host %q port %q user %v", s, u.Hostname(), u.Port(), u.User)
		}
	})
}
