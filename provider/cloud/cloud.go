// Package cloud adds the clouds that serve awl's wire APIs under their own
// endpoints and credentials to the provider registry: Amazon Bedrock (the
// Anthropic Messages API through InvokeModelWithResponseStream, SigV4 and
// the AWS credential chain), Google Vertex AI (streamRawPredict, the
// Application Default Credentials) and Azure OpenAI (the v1 API, an API
// key or a Microsoft Entra ID token). Each cloud is a provider.Cloud: the
// endpoint of a model's requests, their credentials, and the stream's
// framing; the wire API is provider's own.
package cloud

import (
	"cmp"
	"os"
	"strings"
	"sync"

	"github.com/awlrun/awl/provider"
)

func init() {
	provider.Register(bedrockSpec)
	provider.Register(vertexSpec)
	provider.Register(azureSpec(NameAzure, provider.WireResponses, "/responses"))
	provider.Register(azureSpec(NameAzureChat, provider.WireChat, "/chat/completions"))
}

// env is opts.Getenv, or the process's environment.
func env(opts provider.Options) func(string) string {
	if opts.Getenv != nil {
		return opts.Getenv
	}
	return os.Getenv
}

// configErr is a provider error of kind config (exit 4): what is missing
// to reach the cloud.
func configErr(name, msg string) error {
	return &provider.Error{Kind: provider.KindConfig, Provider: name, Message: msg}
}

// authErr is a provider error of kind auth (exit 4): credentials that
// were refused.
func authErr(name, msg string) error {
	return &provider.Error{Kind: provider.KindAuth, Provider: name, Message: msg}
}

// first returns the first non-empty value of the variables names, and its
// name.
func first(getenv func(string) string, names ...string) (value, name string) {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v, n
		}
	}
	return "", cmp.Or(strings.Join(names, " or "), "")
}

// secretSet is the credentials a cloud came to hold, each value once, for
// the run's redactor (provider.Cloud's Secrets). A refresh adds to it, and
// each new value is told to notify (provider.Options.OnSecret) before the
// credential is used.
type secretSet struct {
	mu     sync.Mutex
	list   []provider.Secret
	notify func(provider.Secret)
}

// newSecrets is the secret set of a cloud made with opts.
func newSecrets(opts provider.Options) *secretSet { return &secretSet{notify: opts.OnSecret} }

func (s *secretSet) add(name, value string) {
	if len(value) < 4 {
		return
	}
	s.mu.Lock()
	for _, x := range s.list {
		if x.Value == value {
			s.mu.Unlock()
			return
		}
	}
	sec := provider.Secret{Name: name, Value: value}
	s.list = append(s.list, sec)
	notify := s.notify
	s.mu.Unlock()
	if notify != nil {
		notify(sec)
	}
}

func (s *secretSet) all() []provider.Secret {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]provider.Secret(nil), s.list...)
}
