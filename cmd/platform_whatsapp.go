package cmd

// platform_whatsapp.go adds the WhatsApp adapter (the WhatsApp Business
// Cloud API) to the gateway when an access token is configured
// (WHATSAPP_ACCESS_TOKEN or platforms.whatsapp.access_token), unless
// platforms.whatsapp.enabled is false. Its webhook is served on the
// inbound listener at /whatsapp/webhook.

import (
	"fmt"
	"net/url"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/whatsapp"
	"github.com/heraldgw/herald/config"
)

func init() {
	platformBuilders = append(platformBuilders, buildWhatsApp)
	platformCommons[whatsapp.Platform] = func(c *config.Config) config.Common { return c.Platforms.WhatsApp.Common }
}

func buildWhatsApp(a *app) (adapters.Adapter, bool, error) {
	wc := a.cfg.Platforms.WhatsApp
	// enabled: true with no token still builds it, so /healthz says
	// which setting is missing
	if !config.On(wc.Enabled, wc.AccessToken != "") {
		return nil, false, nil
	}
	if wc.APIBase != "" {
		if u, err := url.Parse(wc.APIBase); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, false, fmt.Errorf("config.yaml: platforms.whatsapp.api_base %q is not an http(s) URL (e.g. %s)", wc.APIBase, whatsapp.DefaultAPIBase)
		}
	}
	return whatsapp.New(whatsapp.Config{
		AccessToken:   wc.AccessToken,
		PhoneNumberID: wc.PhoneNumberID,
		VerifyToken:   wc.VerifyToken,
		AppSecret:     wc.AppSecret,
		APIBase:       wc.APIBase,
		HomeChannel:   wc.HomeChannel,
		Store:         a.store,
		Log:           a.log.With("platform", "whatsapp"),
		Redactor:      a.redactor,
	}), true, nil
}
