package telegramtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// reactionEmoji are the emoji Telegram lets a bot react with
// (ReactionTypeEmoji).
var reactionEmoji = map[string]bool{}

func init() {
	for _, e := range strings.Fields("👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤‍🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂ 🤷 🤷‍♀ 😡") {
		reactionEmoji[e] = true
	}
}

// setMessageReaction records the bot's reaction on a message, refusing
// emoji outside Telegram's set as Telegram does (REACTION_INVALID).
func (s *Server) setMessageReaction(w http.ResponseWriter, r *http.Request) {
	f := r.Form
	if f.Get("chat_id") == "" || f.Get("message_id") == "" {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: chat_id and message_id are required"})
		return
	}
	var rs []struct {
		Type  string `json:"type"`
		Emoji string `json:"emoji"`
	}
	if raw := f.Get("reaction"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &rs); err != nil {
			writeErr(w, Failure{Code: 400, Description: "Bad Request: can't parse reaction types JSON object"})
			return
		}
	}
	var set []string
	for _, x := range rs {
		if x.Type != "emoji" || !reactionEmoji[x.Emoji] {
			writeErr(w, Failure{Code: 400, Description: "Bad Request: REACTION_INVALID"})
			return
		}
		set = append(set, x.Emoji)
	}
	s.record(Call{Method: "setMessageReaction", ChatID: f.Get("chat_id"), MessageID: f.Get("message_id"), Reaction: strings.Join(set, " "), Form: f})
	writeOK(w, true)
}
