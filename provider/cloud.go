package provider

import (
	"context"
	"io"
	"net/http"
)

// Cloud is what a cloud adds to a wire API it serves under its own
// endpoint (Spec.Cloud): where a model's requests go, how each is
// authorised, and how its answer is framed. Amazon Bedrock, Google Vertex
// AI and Azure OpenAI are clouds (package provider/cloud).
type Cloud interface {
	// URL is the endpoint of a request for model.
	URL(model string) string
	// Authorize adds the request's credentials; body reads the request
	// body from its start (a signature covers it). An error is a
	// *Error (KindConfig or KindAuth: no credentials, a refused token).
	Authorize(ctx context.Context, req *http.Request, body func() io.Reader) error
	// Stream returns a 2xx answer's body, r, as the wire API's own
	// stream, and its media type: a cloud that frames the stream its own
	// way (Bedrock's event stream) decodes it to server-sent events here.
	Stream(r io.Reader, h http.Header) (io.Reader, string)
	// Secrets are the credentials the cloud holds, by name, for the run's
	// redactor: values that are in no variable (a session token STS
	// gave, a token file's content).
	Secrets() []Secret
}

// Secret is a credential value, by the name its placeholder shows.
type Secret struct{ Name, Value string }

// Secrets returns the credentials p holds beyond its variables (a cloud
// provider's), for the run's redactor; nil for other providers.
func Secrets(p Provider) []Secret {
	if c, ok := p.(*client); ok && c.cloud != nil {
		return c.cloud.Secrets()
	}
	return nil
}
