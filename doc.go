// Package herald holds the vocabulary every part of the gateway shares: the
// inbound Message and its Source, the Target a reply or notice is delivered
// to, and the few small interfaces that cross package lines (Deliverer,
// Replier, TranscriptAppender).
//
// It imports nothing from the project. Anything that needs more than these
// types lives in a subpackage: hooks, sessions, config, adapters, agent,
// gateway, cron, boot, cmd.
package herald
