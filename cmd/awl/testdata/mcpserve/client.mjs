// A client of `awl mcp serve` written with the official MCP TypeScript
// SDK (runner/mcp/testdata/npm pins it; $MCP_SDK is its dist/esm): it
// lists the tools, calls run with a progress callback, resumes the
// returned session, then calls resume again and cancels the call (an
// AbortController) once the command the model asked for has written its
// pid. It prints what it saw as one JSON object. With $MCP_URL and
// $MCP_TOKEN it speaks streamable HTTP to that server (its arguments
// unused), else it starts its arguments as a stdio server.
// TestMCPServeTypeScriptSDK runs it against the fake model.
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const sdk = process.env.MCP_SDK;
const { Client } = await import(`${sdk}/client/index.js`);
const { StdioClientTransport } = await import(`${sdk}/client/stdio.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/client/streamableHttp.js`);

const [command, ...args] = process.argv.slice(2);
const transport = process.env.MCP_URL
  ? new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
      requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_TOKEN}` } },
    })
  : new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'awl-ts-test', version: '1' });
await client.connect(transport);

const out = { server: client.getServerVersion(), protocol: transport.protocolVersion ?? null };
out.tools = (await client.listTools()).tools.map((t) => t.name);

const progress = [];
out.run = await client.callTool({ name: 'run', arguments: { prompt: 'first' } }, undefined, {
  onprogress: (p) => progress.push(p),
  resetTimeoutOnProgress: true,
});
out.progress = progress;
const id = out.run.structuredContent.session_id;
out.resume = await client.callTool({ name: 'resume', arguments: { session: id, prompt: 'second' } });

const ac = new AbortController();
const third = client.callTool({ name: 'resume', arguments: { session: id, prompt: 'third' } }, undefined, { signal: ac.signal });
while (!existsSync('pid') || !readFileSync('pid', 'utf8').endsWith('\n')) {
  await sleep(50);
}
ac.abort(new Error('the caller gave up'));
try {
  await third;
  out.third = 'answered';
} catch (e) {
  out.third = String(e?.message ?? e);
}
// The cancellation is sent in the background: give it time to leave
// before the transport closes (over HTTP, close aborts what is in flight).
await sleep(300);
if (process.env.MCP_URL) {
  await transport.terminateSession();
}
await client.close();
console.log(JSON.stringify(out));
