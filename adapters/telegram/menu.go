package telegram

// menu.go publishes the gateway's command catalogue as the bot's command
// menu (setMyCommands), the list Telegram shows when a user types "/".

import (
	"context"
	"regexp"
	"strings"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/heraldgw/herald/adapters"
)

// Telegram's rules for a menu: names of 1–32 lower-case letters, digits
// and underscores; descriptions of 1–256 characters; at most 100 entries.
const (
	maxMenuCommands    = 100
	maxMenuDescription = 256
)

var menuNameRE = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

// menuScopes are the scopes the menu is set for. Telegram shows a chat the
// narrowest scope that has a menu, so setting only the default would leave
// a menu an earlier bot on this token set for private or group chats in
// front of herald's.
var menuScopes = []tgbotapi.BotCommandScope{
	tgbotapi.NewBotCommandScopeDefault(),
	tgbotapi.NewBotCommandScopeAllPrivateChats(),
	tgbotapi.NewBotCommandScopeAllGroupChats(),
}

var _ adapters.CommandMenu = (*Adapter)(nil)

// SetCommands implements adapters.CommandMenu: Run publishes cmds after
// getMe, until once it succeeds. Names are written as Telegram takes them
// (lower case, "-" as "_", which the gateway reads back as "-"); one
// Telegram cannot take is left out with a warning.
func (a *Adapter) SetCommands(cmds []adapters.Command) {
	var menu []tgbotapi.BotCommand
	seen := map[string]bool{}
	for _, c := range cmds {
		name := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(strings.TrimSpace(c.Name), "/")), "-", "_")
		if !menuNameRE.MatchString(name) {
			a.log.Warn("telegram: command left out of the menu: Telegram takes 1-32 letters, digits and underscores", "command", c.Name)
			continue
		}
		if seen[name] {
			continue
		}
		if len(menu) == maxMenuCommands {
			a.log.Warn("telegram: command menu full (100 entries); the rest left out", "first_left_out", c.Name)
			break
		}
		seen[name] = true
		menu = append(menu, tgbotapi.BotCommand{Command: name, Description: menuDescription(c.Description, name)})
	}
	a.mu.Lock()
	a.menu, a.menuSet, a.menuPublished = menu, true, false
	a.mu.Unlock()
}

// menuDescription fits d to Telegram's 1–256 characters.
func menuDescription(d, name string) string {
	d = strings.Join(strings.Fields(d), " ")
	if d == "" {
		return "/" + name
	}
	if utf8.RuneCountInString(d) > maxMenuDescription {
		d = string([]rune(d)[:maxMenuDescription-1]) + "…"
	}
	return d
}

// publishMenu sets the menu for each scope, if SetCommands gave one that
// is not published yet. A failure is logged and tried again at the next
// Run; it never stops this one.
func (a *Adapter) publishMenu(ctx context.Context) {
	a.mu.Lock()
	menu, pending := a.menu, a.menuSet && !a.menuPublished
	a.mu.Unlock()
	if !pending {
		return
	}
	if menu == nil {
		// an empty list clears a scope's menu; nil would be sent as null
		menu = []tgbotapi.BotCommand{}
	}
	for _, scope := range menuScopes {
		if _, err := a.bot(ctx).Request(tgbotapi.NewSetMyCommandsWithScope(scope, menu...)); err != nil {
			if ctx.Err() == nil {
				a.log.Warn("telegram: could not set the command menu; trying again at the next connect", "scope", scope.Type, "err", a.classify("setMyCommands", err))
			}
			return
		}
	}
	a.mu.Lock()
	a.menuPublished = true
	a.mu.Unlock()
	a.log.Info("telegram: command menu set", "commands", len(menu))
}
