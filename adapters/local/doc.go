// Package local is the built-in HTTP platform: a JSON API and a small web
// chat page on 127.0.0.1, so herald can be tried, scripted and tested with
// no bot token.
//
//	POST /v1/messages   send a message; waits (?wait= seconds, default 60)
//	                    for the turn it starts or joins and returns the
//	                    replies it caused
//	GET  /v1/events     Server-Sent Events: every hook point as it fires,
//	                    in the directory-hook form {"event_type","context"}
//	GET  /healthz       each platform's state
//	GET  /              the web chat page
//
// Every /v1/ call needs "Authorization: Bearer <token>" (the token is in
// $HERALD_HOME/local.token). Requests whose Host is not a loopback name (or
// one of platforms.local.allowed_hosts) are refused with 403, so a web page
// cannot drive the agent by DNS rebinding.
package local
