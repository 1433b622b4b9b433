package teams

// auth.go: checking that an inbound activity comes from the Bot Framework.
// The JWT is parsed and its signature, times, issuer and audience checked
// by github.com/golang-jwt/jwt/v5; herald only finds the key: the OpenID
// metadata document names the JWKS, whose RSA keys are cached by key id
// and fetched again when a token names a key not in the cache (at most
// once per keyRefreshEvery, so a flood of made-up key ids cannot make
// herald hammer Microsoft), or when the cache is older than keyMaxAge.

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	// Issuer is the issuer of the tokens the Bot Framework signs for
	// activities it sends to a bot.
	Issuer = "https://api.botframework.com"
	// ClockSkew is how far a token's exp and nbf may be off.
	ClockSkew = 5 * time.Minute
	// keyRefreshEvery bounds how often an unknown key id fetches the keys.
	keyRefreshEvery = time.Minute
	// keyRetryEvery bounds how often a fetch is tried while none has
	// succeeded yet.
	keyRetryEvery = 5 * time.Second
	// keyMaxAge is how long fetched keys are used without a refetch.
	keyMaxAge = 24 * time.Hour
	// maxKeysBody bounds the metadata and JWKS documents; maxKeys the keys
	// kept.
	maxKeysBody = 1 << 20
	maxKeys     = 100
)

// errUnauthorized is every reason a request's token is refused; the
// wrapped detail goes to the log, never to the caller.
var errUnauthorized = errors.New("teams: request not authenticated")

// signingKey is one key of the JWKS.
type signingKey struct {
	key *rsa.PublicKey
	// endorsements are the channel ids the key may sign for ("msteams");
	// none means any.
	endorsements []string
}

// verifier checks inbound tokens.
type verifier struct {
	appID       string
	metadataURL string
	client      *http.Client
	now         func() time.Time

	mu        sync.Mutex
	keys      map[string]signingKey
	fetched   time.Time // when keys were last fetched (zero: never)
	attempted time.Time // when a fetch was last tried
}

// claims are the token's claims herald reads beyond the registered ones.
type claims struct {
	jwt.RegisteredClaims
	ServiceURL string `json:"serviceurl,omitempty"`
}

// verify checks the Authorization header's token for an activity from
// channelID; it returns the token's serviceurl claim ("" when none).
func (v *verifier) verify(ctx context.Context, header, channelID string) (serviceURL string, err error) {
	raw, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || strings.TrimSpace(raw) == "" {
		return "", fmt.Errorf("%w: no Bearer token", errUnauthorized)
	}
	var key signingKey
	var c claims
	_, err = jwt.ParseWithClaims(strings.TrimSpace(raw), &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errors.New("token names no key id")
		}
		k, err := v.key(ctx, kid)
		if err != nil {
			return nil, err
		}
		key = k
		return k.key, nil
	},
		jwt.WithValidMethods([]string{"RS256"}),
		jwt.WithIssuer(Issuer),
		jwt.WithAudience(v.appID),
		jwt.WithLeeway(ClockSkew),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(v.now),
	)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errUnauthorized, err)
	}
	if len(key.endorsements) > 0 && !slices.Contains(key.endorsements, channelID) {
		return "", fmt.Errorf("%w: the signing key does not endorse channel %q", errUnauthorized, channelID)
	}
	return c.ServiceURL, nil
}

// key returns the signing key kid, fetching the keys when it is unknown
// (at most once per keyRefreshEvery) or when they are old.
func (v *verifier) key(ctx context.Context, kid string) (signingKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	k, ok := v.keys[kid]
	stale := v.fetched.IsZero() || now.Sub(v.fetched) > keyMaxAge
	if ok && !stale {
		return k, nil
	}
	minGap := keyRefreshEvery
	if v.fetched.IsZero() {
		minGap = keyRetryEvery
	}
	if !v.attempted.IsZero() && now.Sub(v.attempted) < minGap {
		if ok {
			return k, nil
		}
		return signingKey{}, fmt.Errorf("unknown signing key %q", kid)
	}
	v.attempted = now
	keys, err := v.fetch(ctx)
	if err != nil {
		if ok {
			return k, nil // an old key still signs; try again later
		}
		return signingKey{}, fmt.Errorf("signing keys: %w", err)
	}
	v.keys, v.fetched = keys, now
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return signingKey{}, fmt.Errorf("unknown signing key %q", kid)
}

// fetch reads the OpenID metadata document and the JWKS it names.
func (v *verifier) fetch(ctx context.Context) (map[string]signingKey, error) {
	var meta struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := getJSON(ctx, v.client, v.metadataURL, &meta); err != nil {
		return nil, fmt.Errorf("OpenID metadata %s: %w", v.metadataURL, err)
	}
	if meta.JWKSURI == "" {
		return nil, fmt.Errorf("OpenID metadata %s names no jwks_uri", v.metadataURL)
	}
	var set struct {
		Keys []struct {
			Kty          string   `json:"kty"`
			Kid          string   `json:"kid"`
			Use          string   `json:"use"`
			N            string   `json:"n"`
			E            string   `json:"e"`
			Endorsements []string `json:"endorsements"`
		} `json:"keys"`
	}
	if err := getJSON(ctx, v.client, meta.JWKSURI, &set); err != nil {
		return nil, fmt.Errorf("JWKS %s: %w", meta.JWKSURI, err)
	}
	keys := map[string]signingKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" || k.Kid == "" || (k.Use != "" && k.Use != "sig") || len(keys) >= maxKeys {
			continue
		}
		pub, err := rsaKey(k.N, k.E)
		if err != nil {
			continue
		}
		keys[k.Kid] = signingKey{key: pub, endorsements: k.Endorsements}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("JWKS %s has no RSA signing key", meta.JWKSURI)
	}
	return keys, nil
}

// rsaKey builds an RSA public key from a JWK's base64url n and e.
func rsaKey(n, e string) (*rsa.PublicKey, error) {
	nb, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(n, "="))
	if err != nil {
		return nil, err
	}
	eb, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(e, "="))
	if err != nil {
		return nil, err
	}
	if len(nb) < 256 || len(eb) == 0 || len(eb) > 4 {
		return nil, errors.New("RSA key too small or exponent malformed")
	}
	exp := int(new(big.Int).SetBytes(eb).Int64())
	if exp < 3 {
		return nil, errors.New("RSA exponent too small")
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(nb), E: exp}, nil
}

// getJSON GETs url and decodes a JSON answer of at most maxKeysBody bytes.
func getJSON(ctx context.Context, client *http.Client, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeysBody+1))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if len(body) > maxKeysBody {
		return fmt.Errorf("answer over %d bytes", maxKeysBody)
	}
	return json.Unmarshal(body, into)
}
