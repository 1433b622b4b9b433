package hooks

import "github.com/heraldgw/herald"

// MediaInfo is one attachment of the message a turn answers, as hooks see
// it on agent:start and pre_llm_call: what it is and where the gateway
// stored it (Path is "" when it could not be downloaded). The platform's
// URL and handle are left out.
type MediaInfo struct {
	Type string `json:"type"`
	MIME string `json:"mime,omitempty"`
	Name string `json:"name,omitempty"`
	Size int64  `json:"size,omitempty"`
	Path string `json:"path,omitempty"`
}

// MediaOf lists ms as hooks see them; nil for none, so payloads without
// media keep their old shape.
func MediaOf(ms []herald.Media) []MediaInfo {
	if len(ms) == 0 {
		return nil
	}
	out := make([]MediaInfo, len(ms))
	for i, m := range ms {
		out[i] = MediaInfo{Type: m.Type, MIME: m.MIME, Name: m.Name, Size: m.Size, Path: m.Path}
	}
	return out
}
