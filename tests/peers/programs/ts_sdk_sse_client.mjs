// Drive an HTTP+SSE (2024-11-05 transport) MCP server with the official
// TypeScript SDK's client (npm @modelcontextprotocol/sdk@1.32.2), run with
// Node.js >= 18:
//
//     node tests/peers/programs/ts_sdk_sse_client.mjs URL MESSAGE
//
// The SDK's `Client` connects through `SSEClientTransport` to URL (the SSE
// endpoint: the transport GETs it, waits for the `endpoint` event and POSTs
// every message there), runs its initialize handshake (it always offers its
// newest version, 2025-11-25, and accepts any answer in its
// SUPPORTED_PROTOCOL_VERSIONS), then lists the tools, calls `echo` with
// {"message": MESSAGE}, calls an unknown tool, sends a raw `tools/call` with
// `{name: 42}` and pings, and closes. It prints one JSON object:
//
//     {"connected": true, "protocol_version", "endpoint", "server_info",
//      "capabilities", "instructions", "tools", "echo", "unknown_tool",
//      "bad_params", "ping"}
//
// where `endpoint` is the URL the transport POSTs to and each of the last four
// is {"result": ...} or {"error": {code, message, data}} (a JSON-RPC error, as
// the SDK's McpError carries it). When connecting fails it prints
// {"connected": false, "error": {...}} and exits 2 (an McpError: its code,
// message and data; anything else: its message); any other failure exits 1.
// The SDK is loaded from the peer node project `.cache/peers/node` (see
// ts_sdk_echo_server.mjs; MCP_PEERS_NODE_DIR overrides it) through createRequire.
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeDir =
  process.env.MCP_PEERS_NODE_DIR ?? resolve(here, "..", "..", "..", ".cache", "peers", "node");
const require = createRequire(join(nodeDir, "package.json"));

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { SSEClientTransport } = require("@modelcontextprotocol/sdk/client/sse.js");
const { CallToolResultSchema, McpError } = require("@modelcontextprotocol/sdk/types.js");

const REQUEST_TIMEOUT_MS = 20_000;
const WATCHDOG_MS = 60_000;

function usage() {
  process.stderr.write("usage: ts_sdk_sse_client.mjs URL MESSAGE\n");
  process.exit(64);
}

function rpcError(error) {
  return { code: error.code, message: error.message, data: error.data ?? null };
}

// The outcome of one request: its result, or the JSON-RPC error it got.
async function outcome(request) {
  try {
    return { result: await request() };
  } catch (error) {
    if (error instanceof McpError) {
      return { error: rpcError(error) };
    }
    throw error;
  }
}

async function run(url, message) {
  const transport = new SSEClientTransport(new URL(url));
  // Client.connect hands the negotiated version to the transport (which then
  // sends it as the mcp-protocol-version header); note it on the way.
  let negotiated = null;
  const setProtocolVersion = transport.setProtocolVersion.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setProtocolVersion(version);
  };
  const client = new Client({ name: "mcp-codegen-ts-sse-client", version: "0.0.0" });
  const options = { timeout: REQUEST_TIMEOUT_MS };
  try {
    await client.connect(transport, options);
  } catch (error) {
    await client.close();
    const failure =
      error instanceof McpError ? rpcError(error) : { message: String(error?.message ?? error) };
    return { connected: false, error: failure };
  }
  try {
    const tools = await client.listTools(undefined, options);
    return {
      connected: true,
      protocol_version: negotiated,
      endpoint: transport._endpoint?.href ?? null,
      server_info: client.getServerVersion() ?? null,
      capabilities: client.getServerCapabilities() ?? null,
      instructions: client.getInstructions() ?? null,
      tools: tools.tools,
      echo: await outcome(() =>
        client.callTool({ name: "echo", arguments: { message } }, undefined, options),
      ),
      unknown_tool: await outcome(() =>
        client.callTool({ name: "no-such-tool", arguments: {} }, undefined, options),
      ),
      bad_params: await outcome(() =>
        client.request(
          { method: "tools/call", params: { name: 42 } },
          CallToolResultSchema,
          options,
        ),
      ),
      ping: await outcome(() => client.ping(options)),
    };
  } finally {
    await client.close();
  }
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length !== 2) usage();
  const [url, message] = argv;
  // Only fires if something keeps the event loop alive past the end (a hang).
  setTimeout(() => {
    process.stderr.write("ts_sdk_sse_client: still running after the watchdog\n");
    process.exit(3);
  }, WATCHDOG_MS).unref();
  const report = await run(url, message);
  process.stdout.write(JSON.stringify(report) + "\n");
  process.exitCode = report.connected ? 0 : 2;
}

main().catch((error) => {
  process.stderr.write(`ts_sdk_sse_client: ${error?.stack ?? error}\n`);
  process.exit(1);
});
