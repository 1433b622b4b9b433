package telegramtest

// native.go fakes what a bot meets in a chat's life beyond messages: the
// command menu (setMyCommands), a webhook left behind by another
// deployment, a forum topic deleted under the bot, and a group upgraded
// to a supergroup.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"
)

// BotCommand is one entry of a command menu.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// commandRE is what Telegram takes as a command name.
var commandRE = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

func (s *Server) setMyCommands(w http.ResponseWriter, r *http.Request) {
	var cmds []BotCommand
	if err := json.Unmarshal([]byte(r.Form.Get("commands")), &cmds); err != nil {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: can't parse commands JSON object"})
		return
	}
	if len(cmds) > 100 {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: too many commands specified"})
		return
	}
	for _, c := range cmds {
		if !commandRE.MatchString(c.Command) {
			writeErr(w, Failure{Code: 400, Description: "Bad Request: BOT_COMMAND_INVALID"})
			return
		}
		if n := utf8.RuneCountInString(c.Description); n < 1 || n > 256 {
			writeErr(w, Failure{Code: 400, Description: "Bad Request: command description must be non-empty"})
			return
		}
	}
	scope := "default"
	if raw := r.Form.Get("scope"); raw != "" {
		var sc struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(raw), &sc); err != nil || sc.Type == "" {
			writeErr(w, Failure{Code: 400, Description: "Bad Request: can't parse BotCommandScope JSON object"})
			return
		}
		scope = sc.Type
	}
	s.mu.Lock()
	s.commands[scope] = cmds
	s.mu.Unlock()
	s.record(Call{Method: "setMyCommands", Form: r.Form})
	writeOK(w, true)
}

// Commands returns the menu set for a scope type ("default",
// "all_private_chats", "all_group_chats", …); nil when none was set.
func (s *Server) Commands(scope string) []BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commands[scope]
}

// SetWebhook sets a webhook as another deployment of the bot would have
// left it: getUpdates then answers 409 until deleteWebhook.
func (s *Server) SetWebhook(webhookURL string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhook = url.Values{"url": {webhookURL}}
	s.notifyLocked()
}

// DeleteTopic removes a forum topic: any request naming it as
// message_thread_id answers 400 "message thread not found".
func (s *Server) DeleteTopic(chatID int64, threadID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadThreads[strconv.FormatInt(chatID, 10)+"\x00"+strconv.Itoa(threadID)] = true
}

// MigrateGroup upgrades group oldID to supergroup newID as Telegram does:
// it queues the service message in the old group (migrate_to_chat_id)
// and the one in the new supergroup (migrate_from_chat_id), and from then
// on a request to the old chat answers 400 with migrate_to_chat_id.
func (s *Server) MigrateGroup(oldID, newID int64, by User) {
	s.mu.Lock()
	s.migrated[strconv.FormatInt(oldID, 10)] = newID
	s.mu.Unlock()
	s.AddUpdate(map[string]any{"message": map[string]any{
		"from": by.json(), "date": time.Now().Unix(),
		"chat":               map[string]any{"id": oldID, "type": "group", "title": "test group"},
		"migrate_to_chat_id": newID,
	}})
	s.AddUpdate(map[string]any{"message": map[string]any{
		"from": by.json(), "date": time.Now().Unix(),
		"chat":                 map[string]any{"id": newID, "type": "supergroup", "title": "test group"},
		"migrate_from_chat_id": oldID,
	}})
}

// refusedTarget is the error Telegram gives a request aimed at a chat
// that moved or a topic that is gone.
func (s *Server) refusedTarget(f url.Values) (Failure, bool) {
	chat := f.Get("chat_id")
	if chat == "" {
		return Failure{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if to, ok := s.migrated[chat]; ok {
		return Failure{Code: 400, Description: "Bad Request: group chat was upgraded to a supergroup chat", MigrateToChatID: to}, true
	}
	if t := f.Get("message_thread_id"); t != "" && s.deadThreads[chat+"\x00"+t] {
		return Failure{Code: 400, Description: "Bad Request: message thread not found"}, true
	}
	return Failure{}, false
}
