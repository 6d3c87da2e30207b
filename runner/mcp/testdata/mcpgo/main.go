// Command mcpgo is an MCP server written with github.com/mark3labs/mcp-go,
// over stdio: a third implementation, next to the npm servers and awl's
// own fakes, for the tests that run real servers through `awl run`. It is
// a module of its own so that awl never links mcp-go.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("mcpgo-test", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("add",
		mcp.WithDescription("Adds two numbers."),
		mcp.WithNumber("a", mcp.Required()),
		mcp.WithNumber("b", mcp.Required()),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := req.RequireFloat("a")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		b, err := req.RequireFloat("b")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(fmt.Sprintf("sum=%g", a+b)), nil
	})
	s.AddTool(mcp.NewTool("shout",
		mcp.WithDescription("Repeats words in capitals."),
		mcp.WithArray("words", mcp.Required(), mcp.WithStringItems()),
		mcp.WithString("mark", mcp.Enum("!", "?")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		words, err := req.RequireStringSlice("words")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(strings.ToUpper(strings.Join(words, " ")) + req.GetString("mark", "!")), nil
	})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
