package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/modelinfo"
)

// modelsCmd is `awl models`: the model table awl prices, sizes and
// thinks with, and each provider's default model.
type modelsCmd struct {
	JSON    bool   `name:"json"`
	Pricing string `name:"pricing" placeholder:"FILE"`
}

// modelsJSON is `awl models --json`: the shape of a --pricing file, with
// the defaults beside it (a pricing file's defaults are not read).
type modelsJSON struct {
	Updated        string            `json:"updated"`
	DefaultsChosen string            `json:"defaultsChosen"`
	Defaults       map[string]string `json:"defaults"`
	Models         []modelinfo.Model `json:"models"`
}

func (c *modelsCmd) Run(a *app) error {
	t, err := loadPrices(a.getenv, c.Pricing, "--pricing")
	if err != nil {
		return err
	}
	defaults := map[string]string{}
	for _, s := range provider.Specs() {
		if s.DefaultModel != "" {
			defaults[s.Name] = s.DefaultModel
		}
	}
	if c.JSON {
		out := modelsJSON{Updated: t.Updated, DefaultsChosen: provider.DefaultsChosen, Defaults: defaults, Models: t.Models()}
		for i := range out.Models {
			if out.Models[i].Aliases == nil {
				out.Models[i].Aliases = []string{}
			}
		}
		data, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		_, err = a.stdout.Write(append(data, '\n'))
		return err
	}
	isDefault := map[string]bool{}
	for name, m := range defaults {
		isDefault[provider.Family(name)+"\x00"+m] = true
	}
	fmt.Fprintf(a.stdout, "awl's model table, checked %s; default models chosen %s; prices in US$ per million tokens\n\n", t.Updated, provider.DefaultsChosen)
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tMODEL\tWINDOW\tOUTPUT\tTHINKING\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tALIASES")
	for _, m := range t.Models() {
		name := m.Name
		if isDefault[m.Provider+"\x00"+m.Name] {
			name += " (default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Provider, name, tokens(m.ContextWindow), tokens(m.MaxOutput),
			dash(m.Thinking), price(m.Input), price(m.Output), price(m.CacheRead), price(m.CacheWrite), dash(strings.Join(m.Aliases, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, "\nSources, long-context prices and images: awl models --json.")
	return nil
}

// tokens writes a token count short: 1M, 200K, or the number; "-" for
// not known.
func tokens(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n%10_000 == 0 && n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "M"
	case n%1000 == 0:
		return strconv.FormatInt(n/1000, 10) + "K"
	}
	return strconv.FormatInt(n, 10)
}

func price(usd float64) string { return strconv.FormatFloat(usd, 'f', -1, 64) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
