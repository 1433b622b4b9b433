package discordtest

// Interactions: button presses and slash commands dispatched as
// INTERACTION_CREATE, the bot's answers to them (the callback, the
// original response, follow-ups through the interaction's webhook),
// message components, and application command registration.

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// Interaction is one interaction the fake dispatched and what the bot
// answered to it.
type Interaction struct {
	ID, Token          string
	Type               discordgo.InteractionType
	GuildID, ChannelID string
	// Responses are the bot's callbacks (POST
	// /interactions/{id}/{token}/callback), in order; Discord takes one.
	Responses []InteractionResponse
	// Original is the id of the original response message, once a
	// callback of type 4 or 5 created it.
	Original string
	// Followups are the ids of the follow-up messages, in order.
	Followups []string
	expired   bool
}

// InteractionResponse is one callback the bot posted.
type InteractionResponse struct {
	Type       discordgo.InteractionResponseType
	Content    string
	Flags      discordgo.MessageFlags
	Components json.RawMessage
}

// CommandSet is one bulk overwrite of application commands (PUT
// /applications/{app}/commands, or …/guilds/{guild}/commands).
type CommandSet struct {
	GuildID  string // "" for the global commands
	Commands []*discordgo.ApplicationCommand
}

func (s *Server) interactionRoutes(mux *http.ServeMux) {
	// interaction callbacks and webhooks are authenticated by their
	// token, not the bot's
	mux.HandleFunc("POST /api/v9/interactions/{id}/{token}/callback", s.interactionCallback)
	mux.HandleFunc("POST /api/v9/webhooks/{app}/{token}", s.webhookExecute)
	mux.HandleFunc("PATCH /api/v9/webhooks/{app}/{token}/messages/{mid}", s.webhookEdit)
	mux.HandleFunc("DELETE /api/v9/webhooks/{app}/{token}/messages/{mid}", s.webhookDelete)
	mux.HandleFunc("PUT /api/v9/applications/{app}/commands", s.auth(s.putCommands))
	mux.HandleFunc("PUT /api/v9/applications/{app}/guilds/{guild}/commands", s.auth(s.putCommands))
}

// StringOption is a string option of a slash command as the user filled
// it in.
func StringOption(name, value string) *discordgo.ApplicationCommandInteractionDataOption {
	return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Type: discordgo.ApplicationCommandOptionString, Value: value}
}

// SlashCommand builds the invocation of the slash command name by from in
// a guild channel (guildID "" is a DM: the user is set instead of the
// member). Pass it to InjectInteraction.
func (s *Server) SlashCommand(guildID, channelID string, from *discordgo.User, name string, options ...*discordgo.ApplicationCommandInteractionDataOption) *discordgo.Interaction {
	i := &discordgo.Interaction{
		Type: discordgo.InteractionApplicationCommand, GuildID: guildID, ChannelID: channelID,
		Data: discordgo.ApplicationCommandInteractionData{ID: "cmd-" + name, Name: name, CommandType: discordgo.ChatApplicationCommand, Options: options},
	}
	setUser(i, guildID, from)
	return i
}

// ButtonPress builds a press by from of the button customID under the
// message messageID (guildID "" is a DM). Pass it to InjectInteraction.
func (s *Server) ButtonPress(guildID, channelID, messageID string, from *discordgo.User, customID string) *discordgo.Interaction {
	msg := &discordgo.Message{ID: messageID, ChannelID: channelID, Author: s.Bot()}
	s.mu.Lock()
	if m := s.messages[messageID]; m != nil {
		msg.Content = m.Content
	}
	s.mu.Unlock()
	i := &discordgo.Interaction{
		Type: discordgo.InteractionMessageComponent, GuildID: guildID, ChannelID: channelID, Message: msg,
		Data: discordgo.MessageComponentInteractionData{CustomID: customID, ComponentType: discordgo.ButtonComponent},
	}
	setUser(i, guildID, from)
	return i
}

// setUser puts the invoking user where Discord does: member.user in a
// guild, user in a DM.
func setUser(i *discordgo.Interaction, guildID string, from *discordgo.User) {
	if guildID != "" {
		i.Member = &discordgo.Member{GuildID: guildID, User: from}
		return
	}
	i.User = from
}

// InjectInteraction dispatches an INTERACTION_CREATE for i (its id, token,
// application id and version are filled in) and returns its id. Like
// Inject, it waits for a connection when none is up.
func (s *Server) InjectInteraction(i *discordgo.Interaction) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	i.ID = s.newID()
	i.Token = "itok-" + i.ID
	i.AppID = AppID
	i.Version = 1
	data, _ := json.Marshal(i)
	s.interactions[i.ID] = &Interaction{ID: i.ID, Token: i.Token, Type: i.Type, GuildID: i.GuildID, ChannelID: i.ChannelID}
	s.lastSeq++
	ev := event{seq: s.lastSeq, typ: "INTERACTION_CREATE", data: data}
	s.events = append(s.events, ev)
	if s.conn != nil {
		s.deliver(s.conn, []event{ev})
	}
	return i.ID
}

// ExpireInteraction makes the interaction's token stop working, as it
// does 15 minutes after the interaction: its callback and webhook answer
// 401 Invalid Webhook Token.
func (s *Server) ExpireInteraction(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it := s.interactions[id]; it != nil {
		it.expired = true
	}
}

// Interaction returns what the fake knows of interaction id.
func (s *Server) Interaction(id string) (Interaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.interactionCopy(id)
}

func (s *Server) interactionCopy(id string) (Interaction, bool) {
	it := s.interactions[id]
	if it == nil {
		return Interaction{}, false
	}
	out := *it
	out.Responses = append([]InteractionResponse(nil), it.Responses...)
	out.Followups = append([]string(nil), it.Followups...)
	return out, true
}

// WaitInteraction waits until cond holds for interaction id and returns
// it.
func (s *Server) WaitInteraction(ctx context.Context, id string, cond func(Interaction) bool) (Interaction, error) {
	var got Interaction
	err := s.wait(ctx, func() bool {
		var ok bool
		got, ok = s.interactionCopy(id)
		return ok && cond(got)
	})
	return got, err
}

// Message returns the message id as it is now: a channel message, an
// interaction's original response or a follow-up.
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.messages[id]
	if m == nil {
		return Message{}, false
	}
	return *m, true
}

// WaitMessage waits until cond holds for message id and returns it.
func (s *Server) WaitMessage(ctx context.Context, id string, cond func(Message) bool) (Message, error) {
	var got Message
	err := s.wait(ctx, func() bool {
		m := s.messages[id]
		if m != nil {
			got = *m
		}
		return m != nil && cond(got)
	})
	return got, err
}

// CommandSets returns the bulk overwrites of application commands, in
// order.
func (s *Server) CommandSets() []CommandSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CommandSet(nil), s.commandSets...)
}

// WaitCommandSets waits until the bot made at least n bulk overwrites and
// returns them.
func (s *Server) WaitCommandSets(ctx context.Context, n int) ([]CommandSet, error) {
	err := s.wait(ctx, func() bool { return len(s.commandSets) >= n })
	return s.CommandSets(), err
}

// FailCommands makes the next n command registrations answer status
// (403 Missing Access, say, for a bot invited without the
// applications.commands scope).
func (s *Server) FailCommands(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.commandFail = append(s.commandFail, failure{status: status})
	}
}

// Buttons returns the buttons of a components list (Message.Components,
// Edit.Components), row after row.
func Buttons(raw json.RawMessage) []discordgo.Button {
	var rows []discordgo.ActionsRow
	if json.Unmarshal(raw, &rows) != nil {
		return nil
	}
	var out []discordgo.Button
	for _, r := range rows {
		for _, c := range r.Components {
			if b, ok := c.(*discordgo.Button); ok {
				out = append(out, *b)
			}
		}
	}
	return out
}

// components normalises a components field: nil when absent or null.
func components(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}

func wireComponents(raw json.RawMessage) any {
	if raw == nil {
		return []any{}
	}
	return raw
}

// wireComponent is an action row or a button as Discord takes them.
type wireComponent struct {
	Type       discordgo.ComponentType `json:"type"`
	Style      int                     `json:"style"`
	Label      string                  `json:"label"`
	CustomID   string                  `json:"custom_id"`
	URL        string                  `json:"url"`
	Components []wireComponent         `json:"components"`
}

// validComponents checks Discord's rules for a message's components: at
// most 5 action rows of at most 5 buttons, each with a style, a label of
// at most 80 characters and a custom_id of 1–100 (a link button a URL
// instead). False when it answered 400.
func validComponents(w http.ResponseWriter, raw json.RawMessage) bool {
	raw = components(raw)
	if raw == nil {
		return true
	}
	var rows []wireComponent
	ok := json.Unmarshal(raw, &rows) == nil && len(rows) <= 5
	for _, r := range rows {
		ok = ok && r.Type == discordgo.ActionsRowComponent && len(r.Components) >= 1 && len(r.Components) <= 5
		for _, b := range r.Components {
			ok = ok && b.Type == discordgo.ButtonComponent && b.Style >= 1 && b.Style <= 5 && utf8.RuneCountInString(b.Label) <= 80
			if b.Style == int(discordgo.LinkButton) {
				ok = ok && b.URL != "" && b.CustomID == ""
			} else {
				ok = ok && b.CustomID != "" && utf8.RuneCountInString(b.CustomID) <= 100
			}
		}
	}
	if !ok {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body (components)")
	}
	return ok
}

func (s *Server) interactionCallback(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Type discordgo.InteractionResponseType `json:"type"`
		Data *struct {
			Content    string                 `json:"content"`
			Flags      discordgo.MessageFlags `json:"flags"`
			Components json.RawMessage        `json:"components"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	resp := InteractionResponse{Type: body.Type}
	if body.Data != nil {
		resp.Content, resp.Flags, resp.Components = body.Data.Content, body.Data.Flags, components(body.Data.Components)
	}
	if utf8.RuneCountInString(resp.Content) > MaxContent {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	if !validComponents(w, resp.Components) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.interactions[r.PathValue("id")]
	switch {
	case it == nil:
		apiError(w, http.StatusNotFound, 10062, "Unknown interaction")
		return
	case it.Token != r.PathValue("token") || it.expired:
		apiError(w, http.StatusUnauthorized, 50027, "Invalid Webhook Token")
		return
	case len(it.Responses) > 0:
		apiError(w, http.StatusBadRequest, 40060, "Interaction has already been acknowledged.")
		return
	}
	switch resp.Type {
	case discordgo.InteractionResponseChannelMessageWithSource, discordgo.InteractionResponseDeferredChannelMessageWithSource:
		if resp.Type == discordgo.InteractionResponseChannelMessageWithSource && resp.Content == "" {
			apiError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
			return
		}
		m := &Message{ID: s.newID(), ChannelID: it.ChannelID, Content: resp.Content, Components: resp.Components, Interaction: it.ID}
		s.messages[m.ID] = m
		it.Original = m.ID
	case discordgo.InteractionResponseDeferredMessageUpdate, discordgo.InteractionResponseUpdateMessage:
		if it.Type != discordgo.InteractionMessageComponent {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body (type)")
			return
		}
	default:
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body (type)")
		return
	}
	it.Responses = append(it.Responses, resp)
	s.notify()
	w.WriteHeader(http.StatusNoContent)
}

// webhookInteraction finds the interaction a webhook call is for; nil
// when it answered an error. s.mu must be held.
func (s *Server) webhookInteraction(w http.ResponseWriter, r *http.Request) *Interaction {
	if r.PathValue("app") != AppID {
		apiError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return nil
	}
	for _, it := range s.interactions {
		if it.Token != r.PathValue("token") {
			continue
		}
		if it.expired {
			apiError(w, http.StatusUnauthorized, 50027, "Invalid Webhook Token")
			return nil
		}
		if len(it.Responses) == 0 {
			apiError(w, http.StatusNotFound, 10015, "Unknown Webhook")
			return nil
		}
		return it
	}
	apiError(w, http.StatusUnauthorized, 50027, "Invalid Webhook Token")
	return nil
}

// webhookMessage resolves "@original" or a follow-up id; nil when it
// answered an error. s.mu must be held.
func (s *Server) webhookMessage(w http.ResponseWriter, it *Interaction, mid string) *Message {
	if mid == "@original" {
		mid = it.Original
	}
	own := mid != "" && (mid == it.Original || slices.Contains(it.Followups, mid))
	m := s.messages[mid]
	if !own || m == nil {
		apiError(w, http.StatusNotFound, 10008, "Unknown Message")
		return nil
	}
	return m
}

// withWebhookMessage runs f on the message a webhook call names, under
// s.mu; it answers the error itself when there is none.
func (s *Server) withWebhookMessage(w http.ResponseWriter, r *http.Request, f func(*Message)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.webhookInteraction(w, r)
	if it == nil {
		return
	}
	if m := s.webhookMessage(w, it, r.PathValue("mid")); m != nil {
		f(m)
	}
}

func (s *Server) webhookEdit(w http.ResponseWriter, r *http.Request) {
	body, ok := readEdit(w, r)
	if !ok {
		return
	}
	s.withWebhookMessage(w, r, func(m *Message) {
		writeJSON(w, http.StatusOK, s.wireMessage(s.applyEdit(m, body, true)))
	})
}

func (s *Server) webhookExecute(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Content    string          `json:"content"`
		Components json.RawMessage `json:"components"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	switch n := utf8.RuneCountInString(body.Content); {
	case n == 0:
		apiError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return
	case n > MaxContent:
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	if !validComponents(w, body.Components) {
		return
	}
	s.mu.Lock()
	it := s.webhookInteraction(w, r)
	if it == nil {
		s.mu.Unlock()
		return
	}
	m := &Message{ID: s.newID(), ChannelID: it.ChannelID, Content: body.Content, Components: components(body.Components), Interaction: it.ID}
	s.messages[m.ID] = m
	it.Followups = append(it.Followups, m.ID)
	out := *m
	s.notify()
	s.mu.Unlock()
	if r.URL.Query().Get("wait") != "true" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, s.wireMessage(out))
}

func (s *Server) webhookDelete(w http.ResponseWriter, r *http.Request) {
	s.withWebhookMessage(w, r, func(m *Message) {
		delete(s.messages, m.ID)
		s.deleted = append(s.deleted, m.ID)
		s.notify()
		w.WriteHeader(http.StatusNoContent)
	})
}

// commandNameRE is Discord's rule for a chat command's (and an option's)
// name; letters must also be lower case.
var commandNameRE = regexp.MustCompile(`^[-_\p{L}\p{N}]{1,32}$`)

func validCommandName(n string) bool {
	return commandNameRE.MatchString(n) && n == strings.ToLower(n)
}

func validDescription(d string) bool {
	n := utf8.RuneCountInString(d)
	return n >= 1 && n <= 100
}

func (s *Server) putCommands(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("app") != AppID {
		apiError(w, http.StatusForbidden, 50001, "Missing Access")
		return
	}
	var cmds []*discordgo.ApplicationCommand
	if err := json.NewDecoder(r.Body).Decode(&cmds); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	ok := len(cmds) <= 100
	seen := map[string]bool{}
	for _, c := range cmds {
		ok = ok && c != nil && validCommandName(c.Name) && validDescription(c.Description) && !seen[c.Name] && len(c.Options) <= 25
		if c == nil {
			break
		}
		seen[c.Name] = true
		for _, o := range c.Options {
			ok = ok && o != nil && validCommandName(o.Name) && validDescription(o.Description)
		}
	}
	if !ok {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body (application commands)")
		return
	}
	s.mu.Lock()
	if len(s.commandFail) > 0 {
		f := s.commandFail[0]
		s.commandFail = s.commandFail[1:]
		s.mu.Unlock()
		fail(w, f)
		return
	}
	for _, c := range cmds {
		c.ID, c.ApplicationID, c.GuildID, c.Version = s.newID(), AppID, r.PathValue("guild"), "1"
	}
	s.commandSets = append(s.commandSets, CommandSet{GuildID: r.PathValue("guild"), Commands: cmds})
	s.notify()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, cmds)
}
