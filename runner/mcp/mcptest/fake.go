// Package mcptest is a misbehaving MCP server for tests: one that hangs at
// startup, one that exits in the middle of a call, one that writes garbage
// to stdout, one whose calls never end, one that will not stop. A test binary runs Main when it is
// started as the server.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ModeVar is the environment variable that selects the fake's mode; LogVar
// names a file the fake appends what happened to ("start", "cancelled").
const (
	ModeVar = "AWL_FAKE_MCP"
	LogVar  = "AWL_FAKE_MCP_LOG"
)

// Modes:
//
//	hang     never answers initialize
//	leak     like hang, after printing its other arguments to stderr
//	crash    tools ok and crash; crash exits the process mid-call
//	garbage  writes non-JSON lines to stdout at start and in each call
//	slow     tool wait blocks until the call is cancelled
//	env      tool env returns the value of the variable named by its argument
//	stubborn tools ok; starts a child of its own (stubborn-child) in its
//	         process group, and outlives both the end of its stdin and
//	         SIGTERM, logging "eof", "term" and "child-term" each with the
//	         time in Unix nanoseconds: only SIGKILL stops it
//	twins    tools files.read/v2 and files_read_v2, one awl name apart
//	huge     tools ok and huge; huge returns a 20 MiB text, one line on
//	         stdout over the 16 MiB the SDK takes, between BEGIN and END
func Main(mode string) {
	if mode == "stubborn-child" {
		stubborn("child-term")
	}
	logf("start %s %d", mode, os.Getpid())
	if mode == "stubborn" {
		go stubborn("term")
		// Argument and variable both name the mode: awl's tests run
		// the fake as `fakemcp MODE`, runner/mcp's with ModeVar.
		child := exec.Command(os.Args[0], "stubborn-child")
		child.Env = append(os.Environ(), ModeVar+"=stubborn-child")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			os.Exit(1)
		}
		logf("child %d", child.Process.Pid)
	}
	if mode == "hang" {
		fmt.Fprintln(os.Stderr, "fake: hanging")
		select {}
	}
	if mode == "leak" {
		fmt.Fprintln(os.Stderr, "debug: token="+strings.Join(os.Args[2:], " "))
		select {}
	}
	if mode == "garbage" {
		fmt.Println("Fake MCP server v1 starting... (this should have gone to stderr)")
		fmt.Println(`{"level":30,"msg":"listening"}`)
		fmt.Println(`[1,2,3]`)
		fmt.Fprintln(os.Stderr, "\x1b[2J\rscreen cleared\x07")
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, &sdk.ServerOptions{
		Instructions: "Fake server for awl's tests.",
	})
	obj := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	srv.AddTool(&sdk.Tool{Name: "ok", Description: "Says fine.", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if mode == "garbage" {
			fmt.Println("garbage in the middle of a call")
			fmt.Println(`{"level":40,"msg":"mid-call log"}`)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "fine"}}}, nil
	})
	switch mode {
	case "crash":
		srv.AddTool(&sdk.Tool{Name: "crash", Description: "Exits mid-call.", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "fake: crashing now")
			os.Exit(3)
			return nil, nil
		})
	case "slow":
		srv.AddTool(&sdk.Tool{Name: "wait", Description: "Never ends.", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			select {
			case <-ctx.Done():
				logf("cancelled")
				return nil, ctx.Err()
			case <-time.After(time.Hour):
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
		})
	case "twins":
		for _, name := range []string{"files.read/v2", "files_read_v2"} {
			srv.AddTool(&sdk.Tool{Name: name, InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "I am " + name}}}, nil
			})
		}
	case "huge":
		srv.AddTool(&sdk.Tool{Name: "huge", Description: "Returns 20 MiB.", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			text := "BEGIN é\n" + strings.Repeat("0123456789abcdé\"\n", 20<<20/18) + "END"
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
		})
	case "env":
		srv.AddTool(&sdk.Tool{Name: "env", Description: "Reads a variable.", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Name string }
			_ = jsonUnmarshal(req.Params.Arguments, &args)
			v, ok := os.LookupEnv(args.Name)
			text := "unset"
			if ok {
				text = "set:" + v
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
		})
	}
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
	}
	if mode == "stubborn" {
		logf("eof %d", time.Now().UnixNano())
		select {}
	}
	os.Exit(0)
}

// stubborn logs what, with the time, on each SIGTERM, and never returns.
func stubborn(what string) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	for range ch {
		logf("%s %d", what, time.Now().UnixNano())
	}
}

func logf(format string, args ...any) {
	p := os.Getenv(LogVar)
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, format+"\n", args...)
	f.Close()
}

func jsonUnmarshal(raw any, v any) error {
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
