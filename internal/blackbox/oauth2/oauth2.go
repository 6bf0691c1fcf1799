// Package oauth2 is http_client_config.oauth2 of a blackbox http module: OAuth 2.0's client
// credentials grant (RFC 6749 §4.4), as prometheus/common's client runs it
// through golang.org/x/oauth2/clientcredentials — a token fetched from
// token_url for each probe, within the probe's budget, and sent as the
// probe's Authorization.
package oauth2

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/yamlsafe"
)

// Config is a module's oauth2: section.
type Config struct {
	clientID, clientSecret string
	tokenURL               string
	scopes                 []string
	// params are endpoint_params, sorted by name.
	params [][2]string
}

// oauth2Refused are oauth2's own fields healthctl does not map, with why
// (blackbox's documentation's words first), built on first use: a
// package-level map literal is built at every start, probe included.
var oauth2Refused = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"tls_config":             "\"configures the token request's TLS settings\": healthctl's token request verifies with the system's roots",
		"proxy_url":              "\"HTTP proxy server to use to connect to the targets\" (for the token request): healthctl's token request goes direct",
		"no_proxy":               "the token request's no_proxy: healthctl's token request goes direct",
		"proxy_from_environment": "the token request's proxy_from_environment: healthctl's token request goes direct",
		"proxy_connect_header":   "the token request's proxy_connect_header: healthctl's token request goes direct",
	}
})

// Parse reads an oauth2: section; files it names are read now, where file
// says (relative to the modules file).
func Parse(v *yaml.Node, file func(string) string, bad func(field string, line int, format string, args ...any) error) (*Config, error) {
	if v.Kind != yaml.MappingNode {
		return nil, bad("", v.Line, "want a mapping (client_id, client_secret, token_url, scopes, endpoint_params)")
	}
	c := &Config{}
	secretGiven := false
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], yamlsafe.Deref(v.Content[i+1])
		scalar := func() (string, error) {
			if val.Kind != yaml.ScalarNode {
				return "", bad(k.Value, val.Line, "want a value")
			}
			return val.Value, nil
		}
		var err error
		switch k.Value {
		case "client_id":
			c.clientID, err = scalar()
		case "client_secret":
			c.clientSecret, err = scalar()
			if secretGiven {
				return nil, bad(k.Value, k.Line, "give client_secret or client_secret_file, not both")
			}
			secretGiven = true
		case "client_secret_file":
			var f string
			if f, err = scalar(); err == nil {
				if secretGiven {
					return nil, bad(k.Value, k.Line, "give client_secret or client_secret_file, not both")
				}
				secretGiven = true
				b, rerr := inputfile.Read(file(f), inputfile.Headers)
				if rerr != nil {
					return nil, bad(k.Value, val.Line, "%q: %v", f, inputfile.Cause(rerr))
				}
				c.clientSecret = strings.TrimSpace(string(b))
			}
		case "token_url":
			var s string
			if s, err = scalar(); err == nil {
				u, perr := url.Parse(s)
				if perr != nil || !httpURL(u) || u.Host == "" {
					return nil, bad(k.Value, val.Line, "%q: want an http:// or https:// URL", s)
				}
				c.tokenURL = s
			}
		case "scopes":
			if val.Kind != yaml.SequenceNode {
				return nil, bad(k.Value, val.Line, "want a list")
			}
			for _, e := range val.Content {
				c.scopes = append(c.scopes, yamlsafe.Deref(e).Value)
			}
		case "endpoint_params":
			if val.Kind != yaml.MappingNode {
				return nil, bad(k.Value, val.Line, "want a mapping of names to values")
			}
			for j := 0; j+1 < len(val.Content); j += 2 {
				c.params = append(c.params, [2]string{val.Content[j].Value, yamlsafe.Deref(val.Content[j+1]).Value})
			}
			slices.SortFunc(c.params, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
		default:
			if why, ok := oauth2Refused()[k.Value]; ok {
				return nil, bad(k.Value, k.Line, "not supported: %s", why)
			}
			return nil, bad(k.Value, k.Line, "unknown field (want client_id, client_secret, client_secret_file, token_url, scopes, endpoint_params)")
		}
		if err != nil {
			return nil, err
		}
	}
	if c.clientID == "" || c.tokenURL == "" {
		return nil, bad("", v.Line, "want client_id and token_url")
	}
	return c, nil
}

// Secret is the client secret (a secret of the module's: masked in every
// answer).
func (c *Config) Secret() string { return c.clientSecret }

// httpURL says u is an http:// or https:// URL (the scheme table's
// default row, or that row over TLS).
func httpURL(u *url.URL) bool {
	row, ok := scheme.LookupScheme(u.Scheme)
	if !ok {
		return false
	}
	def := scheme.DefaultScheme()
	sec, _ := def.OverTLS()
	return row.Name == def.Name || row.Name == sec.Name
}

// maxTokenAnswer bounds a token endpoint's answer (x/oauth2's own bound).
const maxTokenAnswer = 1 << 20

// Token fetches an access token (within ctx's deadline): the credentials
// in a Basic header first, then, if the endpoint refuses that, in the
// form (x/oauth2's AuthStyleAutoDetect). It returns the Authorization
// value to send ("Bearer …"). Errors name the endpoint and its status,
// never what it answered.
func (c *Config) Token(ctx context.Context) (string, error) {
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil, MaxResponseHeaderBytes: 64 << 10}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	auth, err := c.fetch(ctx, client, true)
	if err != nil && ctx.Err() == nil {
		auth, err = c.fetch(ctx, client, false)
	}
	return auth, err
}

func (c *Config) fetch(ctx context.Context, client *http.Client, inHeader bool) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(c.scopes) > 0 {
		form.Set("scope", strings.Join(c.scopes, " "))
	}
	for _, p := range c.params {
		form.Set(p[0], p[1])
	}
	if !inHeader {
		form.Set("client_id", c.clientID)
		form.Set("client_secret", c.clientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if inHeader {
		req.SetBasicAuth(url.QueryEscape(c.clientID), url.QueryEscape(c.clientSecret))
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("oauth2: token request to %s: %v", c.tokenURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenAnswer))
	if err != nil {
		return "", fmt.Errorf("oauth2: token answer from %s: %v", c.tokenURL, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", fmt.Errorf("oauth2: token endpoint %s answered %d", c.tokenURL, resp.StatusCode)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/x-www-form-urlencoded", "text/plain":
		vals, perr := url.ParseQuery(string(body))
		if perr != nil {
			return "", fmt.Errorf("oauth2: token answer from %s does not parse", c.tokenURL)
		}
		tok.AccessToken, tok.TokenType = vals.Get("access_token"), vals.Get("token_type")
	default:
		if json.Unmarshal(body, &tok) != nil {
			return "", fmt.Errorf("oauth2: token answer from %s is not JSON (content-type %s)", c.tokenURL, strconv.Quote(ct))
		}
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("oauth2: token answer from %s has no access_token", c.tokenURL)
	}
	return tokenType(tok.TokenType) + " " + tok.AccessToken, nil
}

// tokenType is the Authorization scheme of a token type, as x/oauth2
// writes it: Bearer unless the endpoint named another.
func tokenType(t string) string {
	switch strings.ToLower(t) {
	case "", "bearer":
		return "Bearer"
	case "mac":
		return "MAC"
	case "basic":
		return "Basic"
	}
	return t
}
