package cloud

import (
	"context"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/cloud/cloudtest"
)

// TestCloudServiceTiers: --service-tier on a cloud is the cloud's own.
// Bedrock takes default, flex and priority in its
// X-Amzn-Bedrock-Service-Tier header, signed with the request, and auto
// as nothing; Vertex AI takes auto and default as nothing and refuses
// flex and priority; neither body carries the Messages API's
// service_tier, which both refuse. Azure OpenAI takes OpenAI's four in
// the body.
func TestCloudServiceTiers(t *testing.T) {
	fake := cloudtest.NewBedrock("us-east-1", testCreds)
	defer fake.Close()
	p := newBedrockProvider(t, staticEnv(t, "us-east-1", nil), fake.URL, 0)
	for i, tier := range []string{"flex", "priority", "default", "auto"} {
		fake.Enqueue(cloudtest.Answer{Frames: cloudtest.Frames(recorded(t, "text-max-tokens.sse"))})
		req := hello()
		req.ServiceTier = tier
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatalf("%s: %v", tier, err)
		}
		r := fake.Requests()[i]
		want := map[string]string{"auto": ""}[tier]
		if tier != "auto" {
			want = tier
		}
		if r.SigErr != nil || r.Header.Get("X-Amzn-Bedrock-Service-Tier") != want || gjson.GetBytes(r.Body, "service_tier").Exists() {
			t.Errorf("%s: header %q, body %s, signature %v", tier, r.Header.Get("X-Amzn-Bedrock-Service-Tier"), r.Body, r.SigErr)
		}
		if tier != "auto" && !strings.Contains(strings.ToLower(r.Header.Get("Authorization")), "x-amzn-bedrock-service-tier") {
			t.Errorf("%s: the tier header is not signed: %s", tier, r.Header.Get("Authorization"))
		}
	}
	for _, tc := range []struct {
		provider, tier string
		ok             bool
		why            string
	}{
		{NameBedrock, "flex", true, ""},
		{NameBedrock, "auto", true, ""},
		{NameBedrock, "batch", false, "want auto, default, flex or priority"},
		{NameVertex, "default", true, ""},
		{NameVertex, "auto", true, ""},
		{NameVertex, "flex", false, "Claude on Vertex AI has no flex or priority tier"},
		{NameVertex, "priority", false, "Claude on Vertex AI has no flex or priority tier"},
		{NameAzure, "flex", true, ""},
		{NameAzure, "priority", true, ""},
		{NameAzureChat, "auto", true, ""},
	} {
		ok, why := provider.ServiceTierOffered(tc.provider, tc.tier)
		if ok != tc.ok || !strings.Contains(why, tc.why) {
			t.Errorf("%s --service-tier %s: %v %q, want %v %q", tc.provider, tc.tier, ok, why, tc.ok, tc.why)
		}
	}
}

// TestCloudCacheTTL: --cache-ttl on a cloud, for the model the table
// knows the id by: Bedrock's hour on Claude 4.5 and later models only,
// Vertex AI's on all, neither a day; Azure OpenAI's day on the models
// OpenAI's rule gives it, an unmapped deployment asked as given.
func TestCloudCacheTTL(t *testing.T) {
	for _, tc := range []struct {
		provider, model, ttl string
		ok                   bool
		why                  string
	}{
		{NameBedrock, "claude-sonnet-4-5", "1h", true, ""},
		{NameBedrock, "claude-opus-4-7", "1h", true, ""},
		{NameBedrock, "claude-sonnet-5-5", "1h", true, ""},
		{NameBedrock, "claude-haiku-4-5", "1h", true, ""},
		{NameBedrock, "claude-sonnet-4", "1h", false, "Claude Haiku, Sonnet and Opus 4.5 and later models, not on claude-sonnet-4"},
		{NameBedrock, "claude-opus-4-1", "1h", false, "not on claude-opus-4-1"},
		{NameBedrock, "claude-3-7-sonnet", "1h", false, "not on claude-3-7-sonnet"},
		{NameBedrock, "meta.llama3-70b-instruct-v1:0", "1h", true, ""},
		{NameBedrock, "claude-sonnet-4-5", "24h", false, "Bedrock keeps Claude's prompt cache 5 minutes, or 1 hour"},
		{NameBedrock, "claude-sonnet-4-5", "5m", true, ""},
		{NameVertex, "claude-sonnet-4", "1h", true, ""},
		{NameVertex, "claude-sonnet-4-5", "24h", false, "Vertex AI keeps Claude's prompt cache 5 minutes or 1 hour"},
		{NameAzure, "gpt-5.4", "24h", true, ""},
		{NameAzure, "gpt-4o", "24h", false, "not on gpt-4o"},
		{NameAzure, "gpt-5.4", "1h", false, "24 hours (--cache-ttl 24h)"},
		{NameAzure, "prod-deployment", "24h", true, ""},
	} {
		ok, why := provider.ExtendedCache(tc.provider, tc.model, tc.ttl)
		if ok != tc.ok || tc.why != "" && !strings.Contains(why, tc.why) {
			t.Errorf("%s %s --cache-ttl %s: %v %q, want %v %q", tc.provider, tc.model, tc.ttl, ok, why, tc.ok, tc.why)
		}
	}
}
