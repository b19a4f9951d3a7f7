// Drive an stdio MCP server with the official TypeScript SDK's client
// (npm @modelcontextprotocol/sdk@1.32.2), run with Node.js >= 18:
//
//     node tests/peers/programs/ts_sdk_client.mjs MESSAGE -- COMMAND [ARG ...]
//
// The SDK's `Client` spawns COMMAND through `StdioClientTransport` (with this
// process's environment; the server's stderr is inherited), runs its initialize
// handshake (it always offers its newest version, 2025-11-25, and accepts any
// answer in its SUPPORTED_PROTOCOL_VERSIONS), then lists the tools, calls `echo`
// with {"message": MESSAGE}, calls an unknown tool, sends a raw `tools/call`
// with `{name: 42}` and pings. It prints one JSON object:
//
//     {"connected": true, "protocol_version", "server_info", "capabilities",
//      "instructions", "tools", "echo", "unknown_tool", "bad_params", "ping"}
//
// where each of the last four is {"result": ...} or {"error": {code, message,
// data}} (a JSON-RPC error, as the SDK's McpError carries it). When connecting
// fails with an McpError it prints {"connected": false, "error": {...}} and
// exits 2; any other failure exits 1. The SDK is loaded from the peer node
// project `.cache/peers/node` (see ts_sdk_echo_server.mjs; MCP_PEERS_NODE_DIR
// overrides it) through createRequire.
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeDir =
  process.env.MCP_PEERS_NODE_DIR ?? resolve(here, "..", "..", "..", ".cache", "peers", "node");
const require = createRequire(join(nodeDir, "package.json"));

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { CallToolResultSchema, McpError } = require("@modelcontextprotocol/sdk/types.js");

const REQUEST_TIMEOUT_MS = 20_000;
const WATCHDOG_MS = 60_000;

function usage() {
  process.stderr.write("usage: ts_sdk_client.mjs MESSAGE -- COMMAND [ARG ...]\n");
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

async function run(message, command, args) {
  const transport = new StdioClientTransport({ command, args, env: { ...process.env } });
  // The stdio transport keeps no protocol version; Client.connect hands the
  // negotiated one to transport.setProtocolVersion when the transport has it.
  let negotiated = null;
  transport.setProtocolVersion = (version) => {
    negotiated = version;
  };
  const client = new Client({ name: "mcp-codegen-ts-client", version: "0.0.0" });
  const options = { timeout: REQUEST_TIMEOUT_MS };
  try {
    await client.connect(transport, options);
  } catch (error) {
    if (error instanceof McpError) {
      await client.close();
      return { connected: false, error: rpcError(error) };
    }
    throw error;
  }
  try {
    const tools = await client.listTools(undefined, options);
    return {
      connected: true,
      protocol_version: negotiated,
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
  if (argv.length < 3 || argv[1] !== "--") usage();
  const [message, , command, ...args] = argv;
  // Only fires if something keeps the event loop alive past the end (a hang).
  setTimeout(() => {
    process.stderr.write("ts_sdk_client: still running after the watchdog\n");
    process.exit(3);
  }, WATCHDOG_MS).unref();
  const report = await run(message, command, args);
  process.stdout.write(JSON.stringify(report) + "\n");
  process.exitCode = report.connected ? 0 : 2;
}

main().catch((error) => {
  process.stderr.write(`ts_sdk_client: ${error?.stack ?? error}\n`);
  process.exit(1);
});
