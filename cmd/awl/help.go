package main

import (
	"strings"

	"github.com/alecthomas/kong"
)

// helpTable is the help of every command, argument and flag of the grammar,
// keyed by its place in it: "run" for the command, "run <prompt>" for an
// argument, "run --model" for a flag, "--session-dir" for a global flag.
//
// The texts are not in the struct tags, beside their fields, on purpose:
// kong reads each tag rune by rune and interpolates each help text with a
// regular expression, for every command, at every start, whichever command
// runs. With the help in the tags that was 550 KB and 6,300 allocations of
// each start (BenchmarkNewParser), more than the rest of a text run; kong
// now builds the grammar from short tags, and fillHelp sets the texts on
// the model it built. TestHelpTexts keeps this table and the grammar in
// step, both ways.
//
// In a text, @name@ is filled from the provider registry (providerHelp).
//
// An array, which the linker lays out as it is, not a map: a package-level
// map is built by an initialiser at every start of awl (this one, 8.5 KB),
// and `awl run` reads no help. helpTexts makes the map when help is filled.
var helpTable = [...]struct{ key, text string }{
	{"--version", "Print awl's version and exit."},
	{"--session-dir", "Sessions directory (default $AWL_SESSION_DIR, else $XDG_DATA_HOME/awl/sessions)."},

	// awl run
	{"run", "Run a prompt to completion: model turns and tool calls, every entry appended to the session."},
	{"run <prompt>", "The prompt (arguments are joined by spaces)."},
	{"run --cd", "Run in DIR instead of the current directory."},
	{"run --prompt", "The prompt."},
	{"run --prompt-file", "Read the prompt from FILE."},
	{"run --stdin", "Wait for standard input however long it takes."},
	{"run --no-stdin", "Never read standard input."},
	{"run --stdin-timeout", "With a prompt from arguments or flags, how long to wait for stdin's first byte."},
	{"run --input", "text: stdin is part of the prompt; ndjson: stdin is a channel of input messages, a turn a user message, until EOF (docs/events.md)."},
	{"run --input-strict", "With --input ndjson, end the run (exit 2) at the first line refused instead of skipping it."},
	{"run --system", "Replace the default system prompt."},
	{"run --append-system", "Add to the system prompt."},
	{"run --provider", "@provider_names@ (env AWL_PROVIDER; default: a resumed session's, else the first of @auto_key_vars@ that is set)."},
	{"run --model", "Model name (env AWL_MODEL; default per provider: @default_models@)."},
	{"run --base-url", "API base URL (default from @base_url_vars@, per provider)."},
	{"run --max-retries", "Retries of a failed model request."},
	{"run --stall-timeout", "Give up on a model request once a silent server has cost it this long in all: its stalled attempts (90 s without a byte each, less when less is left) and the waits after them (exit 5)."},
	{"run --reasoning", "Thinking/reasoning effort: low, medium or high, sent in the form the model takes (awl models)."},
	{"run --tools", "Allow only these tools, or calls: names, globs, bash(git diff *), write(src/**) (comma-separated outside parentheses; repeatable)."},
	{"run --fail-on-deny", "Exit 9 (reason denied) where the run would have exited 0, when the tool policy denied any call."},
	{"run --tool-hook", "Run CMD (bash -c) before each allowed call: JSON of the call on stdin, a decision on stdout (allow, deny, or allow with a changed input); repeatable, in order; a hook that fails denies."},
	{"run --tool-hook-timeout", "How long a --tool-hook may take before it denies the call."},
	{"run --deny-tools", "Deny these tools, or calls: read(**/.env), bash(git push *) (a deny wins)."},
	{"run --no-tools", "Offer no tools."},
	{"run --sandbox", "Confine what tools write and reach: off, read-only or workspace-write (env AWL_SANDBOX; default off)."},
	{"run --sandbox-writable", "With --sandbox, tools may also write under DIR (repeatable)."},
	{"run --sandbox-network", "With --sandbox, let tools use the network."},
	{"run --config", "Read this configuration file instead of the user's and the project's (env AWL_CONFIG)."},
	{"run --no-config", "Read no configuration file (the AWL_ variables still count)."},
	{"run --profile", "Use the [profile.NAME] tables of the configuration files (env AWL_PROFILE)."},
	{"run --trust-project", "Let the project's .awl/config.toml set every key, not only narrow what the run may do (env AWL_TRUST_PROJECT=1)."},
	{"run --sandbox-best-effort", "Where the kernel cannot enforce the sandbox in full, warn and go on instead of failing (exit 4)."},
	{"run --mcp-config", "Start the MCP servers of FILE (.mcp.json shape; repeatable) and offer their tools as mcp__<server>__<tool>."},
	{"run --mcp-timeout", "How long each MCP server may take to start and list its tools."},
	{"run --mcp-call-timeout", "Cancel an MCP tool call that runs longer than this."},
	{"run --mcp-strict", "Exit 4 when an MCP server fails to start (default: warn and go on without it)."},
	{"run --max-turns", "Stop after N model requests (exit 6)."},
	{"run --timeout", "Stop the whole run after this long (exit 124)."},
	{"run --max-output-tokens", "Output token cap per model request (at least the API's least, 16 on openai; at most the model's limit)."},
	{"run --max-cost-usd", "Stop before a model request once this run has cost X US dollars (exit 6)."},
	{"run --max-total-tokens", "Stop before a model request once this run has used N tokens, cache included (exit 6)."},
	{"run --pricing", "A JSON price table that overrides or extends awl's (env AWL_PRICING)."},
	{"run --context-window", "The model's context window in tokens (default: awl's model table; for a model it does not know, pruning and compaction wait for the API to say the prompt is too long)."},
	{"run --prune-at", "Show old tool results as short stubs once a request reaches PCT% of the context window (1-100; default 60, or --compact-at when lower)."},
	{"run --compact-at", "Have the model summarise the conversation once a request reaches PCT% of the context window (1-100; default 80)."},
	{"run --cache-ttl", "How long the provider's prompt cache keeps what each request writes: 5m (the default), 1h (Anthropic; writes cost twice the input price instead of 1.25 times) or 24h (OpenAI's extended retention, same price), so that steps minutes apart still read it."},
	{"run --service-tier", "The provider's processing tier: auto, default, flex (OpenAI; about half price, slower, refused more often when busy, so --stall-timeout defaults to 15m and --max-retries to 8) or priority (OpenAI; faster, dearer). Each request is priced at the tier the API says served it."},
	{"run --no-compact", "Never compact, not even when the API says the prompt is too long (then exit 5)."},
	{"run --output", "text (final answer), json (one result object) or ndjson (events as they happen)."},
	{"run --stream", "With ndjson, also emit text and thinking deltas."},
	{"run --quiet", "No progress lines on stderr (text output)."},
	{"run --progress", "Progress lines on stderr with --output json or ndjson too."},
	{"run --output-schema", "The final answer must be JSON valid against this JSON Schema file (exit 7 when it never is); - reads it from stdin; none drops a resumed session's schema."},
	{"run --schema-retries", "Turns the model gets to fix an answer that fails --output-schema."},
	{"run --check", "After the model ends its turn, run CMD with bash -c; a failure is fed back to the model (repeatable; exit 8 when checks still fail)."},
	{"run --check-retries", "Turns the model gets to fix what --check reports."},
	{"run --output-last-message", "Also write the final answer (text, or the JSON value) to FILE."},
	{"run --resume", "Continue a session: an id, a unique prefix or a path to a session file; the next word is always taken. Bare --resume (last, or before a flag) means the session of this directory used last, as -c."},
	{"run --continue", "Continue the session of this directory used last (latest modification); start one if there is none."},
	{"run --fork", "Start a new session whose history is REF's (an id, a unique prefix or a path, as --resume); REF itself is only read."},
	{"run --session-id", "The new session's id, a UUID (with --fork, the fork's); one that exists fails with exit 3."},
	{"run --image", "Attach an image (PNG, JPEG, GIF, WebP; repeatable)."},
	{"run --share-cloud-credentials", "Pass the clouds' credential variables (AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, …) to the tools and checks, for a task that runs an aws command; they stay redacted (docs/security.md)."},
	{"run --redact-env", "Treat this variable's value as a secret: replaced by [redacted:NAME] wherever it would be stored, shown or sent, and kept from tools (repeatable; env AWL_REDACT_ENV, comma-separated)."},
	{"run --skills", "Also offer the skills in DIR: a skill's folder, or a folder of them (repeatable; after the user's and the project's, shadowing them)."},
	{"run --no-skills", "Offer no skills: find none."},
	{"run --skills-strict", "A skill that breaks the SKILL.md format is exit 2 instead of a warning."},
	{"run --no-agents-md", "Don't show the model AGENTS.md files."},
	{"run --no-env-context", "Don't show the model the environment context."},
	{"run --replay", "With --provider replay: the recorded session to serve as the model (env AWL_REPLAY)."},
	{"run --replay-lenient", "With --provider replay: warn on divergence instead of failing."},

	// awl sessions
	{"sessions", "List, show, locate, verify, compact and prune sessions."},

	// awl models
	{"models", "List awl's model table: each model's context window, output limit, thinking form and prices, and each provider's default model."},
	{"models --json", "Print the table as JSON, in the shape of a --pricing file, with the defaults."},
	{"models --pricing", "Override or extend the table with FILE (default $AWL_PRICING), as awl run does."},

	// awl sessions list
	{"sessions list", "List the sessions of this directory, oldest first (the default: awl sessions [--json] [--all] [--limit N] [--since 24h])."},
	{"sessions list --json", "Print a JSON array, one object per session."},
	{"sessions list --all", "List the sessions of every directory."},
	{"sessions list --limit", "Keep only the newest N sessions."},
	{"sessions list --since", "Keep only sessions modified within this long, more than 0 (30d, 24h, 90m)."},

	// awl sessions show
	{"sessions show", "Show a session's conversation; --json prints its entries as stored."},
	{"sessions show <ref>", "Session id, unique prefix, or path."},
	{"sessions show --json", "Print the header, then the entries on the active path, as NDJSON exactly as stored (image bytes included)."},
	{"sessions show --full", "Don't cut long tool results, thinking and system prompts."},

	// awl sessions path
	{"sessions path", "Print a session file's path."},
	{"sessions path <ref>", "Session id, unique prefix, or path."},

	// awl sessions rm
	{"sessions rm", "Remove sessions (never one in use: naming one is exit 3)."},
	{"sessions rm <refs>", "Session ids, unique prefixes, or paths."},

	// awl sessions prune
	{"sessions prune", "Remove sessions not modified for a while; one in use is skipped, said on stderr, and is no failure (exit 0)."},
	{"sessions prune --older-than", "Remove sessions not modified for this long (30d, 12h)."},
	{"sessions prune --dry-run", "Print what would be removed; remove nothing."},
	{"sessions prune --all", "Prune the sessions of every directory, not only this one."},

	// awl sessions verify
	{"sessions verify", "Check sessions fully, as a resume would: path:line: reason for each problem; exit 3 if any is broken."},
	{"sessions verify <refs>", "Session ids, unique prefixes, or paths (default: this directory's sessions)."},
	{"sessions verify --all", "Verify the sessions of every directory."},
	{"sessions verify --json", "Print a JSON array, one object per session."},

	// awl sessions compact
	{"sessions compact", "Have the model summarise a session now, so that its next run starts from the summary; events as NDJSON on stdout."},
	{"sessions compact <ref>", "Session id, unique prefix, or path (as --resume takes it)."},
	{"sessions compact --provider", "The provider for the summary request (env AWL_PROVIDER; default: the session's)."},
	{"sessions compact --model", "The model for the summary request (env AWL_MODEL; default: the session's)."},
	{"sessions compact --base-url", "API base URL (default from the provider's base URL variable)."},
	{"sessions compact --max-retries", "Retries of a failed summary request."},
	{"sessions compact --timeout", "Give up after this long (exit 124)."},
	{"sessions compact --context-window", "The model's context window in tokens (default: awl's model table); the latest messages that fit in a fifth of it are kept whole."},
	{"sessions compact --pricing", "A JSON price table that overrides or extends awl's (env AWL_PRICING)."},
	{"sessions compact --system", "The system prompt of the rebuilt context, as awl run --system."},
	{"sessions compact --append-system", "Add to the system prompt of the rebuilt context, as awl run --append-system."},
	{"sessions compact --no-agents-md", "Leave AGENTS.md files out of the rebuilt context."},
	{"sessions compact --no-env-context", "Leave the environment context out of the rebuilt context."},
	{"sessions compact --redact-env", "Treat this variable's value as a secret, as awl run --redact-env (repeatable)."},

	// awl sessions report
	{"sessions report", "Write a session as one self-contained HTML page (--html FILE) to read offline or keep as a CI artifact."},
	{"sessions report <ref>", "Session id, unique prefix, or path."},
	{"sessions report --html", "Write the page to FILE (- for stdout)."},

	// awl skills
	{"skills", "List the skills a run here would offer the model (name, source, path, description), and those it would skip or that are shadowed, with why."},
	{"skills --json", "Print them as a JSON array, with problems, shadowing and allowed-tools."},
	{"skills --cd", "For a run in DIR."},
	{"skills --skills", "Also take skills from DIR (a skill's folder, or a folder of them; repeatable)."},
	{"skills --no-skills", "Find no skills."},
	{"skills --config", "Read this configuration file instead of the user's and the project's (env AWL_CONFIG)."},
	{"skills --no-config", "Read no configuration file."},
	{"skills --profile", "With the profile NAME (env AWL_PROFILE)."},
	{"skills --trust-project", "Trust the project's configuration file (env AWL_TRUST_PROJECT=1)."},

	// awl config
	{"config", "Show the configuration a run here would use, and the files it comes from."},
	{"config show", "Print every setting a run here with RUN FLAGS would start with and where it comes from (a flag, a file's line, an AWL_ variable, the default)."},
	{"config show --json", "Print it as one JSON object."},
	{"config show <run-flags>", "Flags of awl run, as the run would take them: -C, --config, --no-config, --profile, --trust-project, and any setting's own (--model, --max-turns, …)."},
	{"config path", "Print the configuration files a run here reads, in order, one a line."},
	{"config path --cd", "For a run in DIR."},
	{"config path --config", "Read this file instead of the user's and the project's (env AWL_CONFIG)."},
	{"config path --no-config", "Read no configuration file."},

	// awl schema
	{"schema", "Print JSON Schemas (awl schema events, awl schema input)."},
	{"schema <which>", "Which schema: events (the NDJSON events on stdout), input (the messages --input ndjson reads)."},

	// awl mcp
	{"mcp", "Serve awl over MCP, and log in to and out of MCP servers that want OAuth."},

	// awl mcp login
	{"mcp login", "Authorize awl with an HTTP MCP server (OAuth authorization code): prints the URL, opens $BROWSER when set, stores the tokens."},
	{"mcp login <server>", "The server's name: in an mcp-config, or an [mcp-servers.NAME] table of a configuration file."},
	{"mcp login --mcp-config", "The mcp-config file(s) that define the server, as awl run --mcp-config."},
	{"mcp login --cd", "As a run in DIR would find its configuration."},
	{"mcp login --config", "Read this configuration file instead of the user's and the project's (env AWL_CONFIG)."},
	{"mcp login --no-config", "Read no configuration file."},
	{"mcp login --profile", "With the profile NAME (env AWL_PROFILE)."},
	{"mcp login --trust-project", "Trust the project's configuration file, whose MCP servers an untrusted one may not set (env AWL_TRUST_PROJECT=1)."},
	{"mcp login --timeout", "How long to wait for the authorization."},

	// awl mcp serve
	{"mcp serve", "Serve awl over MCP on stdio: the tools run, resume and fork each start an awl run with RUN FLAGS as the ceiling (docs/mcp.md)."},
	{"mcp serve <run-flags>", "Flags of awl run every call starts with (not the prompt, session or output ones); a caller's options only narrow them."},

	// awl mcp logout
	{"mcp logout", "Remove the stored OAuth tokens of an MCP server."},
	{"mcp logout <server>", "The server's name: in an mcp-config, or an [mcp-servers.NAME] table of a configuration file."},
	{"mcp logout --mcp-config", "The mcp-config file(s) that define the server, as awl run --mcp-config."},
	{"mcp logout --cd", "As a run in DIR would find its configuration."},
	{"mcp logout --config", "Read this configuration file instead of the user's and the project's (env AWL_CONFIG)."},
	{"mcp logout --no-config", "Read no configuration file."},
	{"mcp logout --profile", "With the profile NAME (env AWL_PROFILE)."},
	{"mcp logout --trust-project", "Trust the project's configuration file, whose MCP servers an untrusted one may not set (env AWL_TRUST_PROJECT=1)."},

	// awl version
	{"version", "Print awl's version."},
}

// helpTexts is helpTable as a map.
func helpTexts() map[string]string {
	m := make(map[string]string, len(helpTable))
	for _, e := range helpTable {
		m[e.key] = e.text
	}
	return m
}

// fillHelp sets the help of node's commands, arguments and flags, and
// their children's, from texts (helpTexts), with each @name@ replaced by
// vars[name].
func fillHelp(node *kong.Node, path string, texts, vars map[string]string) {
	text := func(key string) string {
		h := texts[key]
		if strings.IndexByte(h, '@') >= 0 {
			for name, v := range vars {
				h = strings.ReplaceAll(h, "@"+name+"@", v)
			}
		}
		return h
	}
	pre := path
	if path != "" {
		node.Help = text(path)
		pre += " "
	}
	for _, a := range node.Positional {
		a.Help = text(pre + "<" + a.Name + ">")
	}
	for _, f := range node.Flags {
		if h := text(pre + "--" + f.Name); h != "" {
			f.Help = h
		}
	}
	for _, c := range node.Children {
		fillHelp(c, pre+c.Name, texts, vars)
	}
}
