// Drive an MCP server over HTTP with the official TypeScript SDK's client
// (npm @modelcontextprotocol/sdk@1.32.2), run with Node.js >= 18:
//
//     node tests/peers/programs/ts_sdk_http_client.mjs TRANSPORT URL MESSAGE
//
// TRANSPORT is `streamable` (`StreamableHTTPClientTransport`: POST to URL, the
// session id from the initialize response, a standalone GET stream opened
// after `notifications/initialized`, DELETE on `terminateSession()`) or `sse`
// (`SSEClientTransport`, the deprecated 2024-11-05 HTTP+SSE transport: GET URL
// for the event stream, POST to the endpoint its first event names).
//
// The client runs the initialize handshake (it offers its newest version,
// 2025-11-25, and accepts any in its SUPPORTED_PROTOCOL_VERSIONS), lists the
// tools, calls `echo` with {"message": MESSAGE}, calls an unknown tool, sends
// a raw `tools/call` with `{name: 42}`, pings, and (streamable only) ends the
// session with DELETE. It prints one JSON object:
//
//     {"connected": true, "protocol_version", "session_id", "server_info",
//      "capabilities", "tools", "echo", "unknown_tool", "bad_params", "ping",
//      "terminated", "transport_errors"}
//
// where each request's outcome is {"result": ...} or {"error": {code, message,
// data}} (a JSON-RPC error, as the SDK's McpError carries it), "terminated" is
// whether DELETE succeeded (null for `sse`), and "transport_errors" lists what
// the transport reported through `onerror` before the client closed. When
// connecting fails with an McpError, or an HTTP error status (the SDK's
// StreamableHTTPError: "error" is then {"status", "message"}), it prints
// {"connected": false, "error"} and exits 2; any other failure exits 1. The SDK is loaded from the peer node
// project `.cache/peers/node` (MCP_PEERS_NODE_DIR overrides it), as
// ts_sdk_client.mjs does.
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeDir =
  process.env.MCP_PEERS_NODE_DIR ?? resolve(here, "..", "..", "..", ".cache", "peers", "node");
const require = createRequire(join(nodeDir, "package.json"));

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { SSEClientTransport } = require("@modelcontextprotocol/sdk/client/sse.js");
const { CallToolResultSchema, McpError } = require("@modelcontextprotocol/sdk/types.js");

const REQUEST_TIMEOUT_MS = 20_000;
const WATCHDOG_MS = 60_000;

function usage() {
  process.stderr.write("usage: ts_sdk_http_client.mjs streamable|sse URL MESSAGE\n");
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

function makeTransport(kind, url) {
  if (kind === "streamable") {
    return new StreamableHTTPClientTransport(new URL(url));
  }
  return new SSEClientTransport(new URL(url));
}

async function run(kind, url, message) {
  const transport = makeTransport(kind, url);
  // Client.connect hands the negotiated version to setProtocolVersion.
  let negotiated = null;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setProtocolVersion?.(version);
  };
  const transportErrors = [];
  let closing = false;
  const client = new Client({ name: "mcp-codegen-ts-http-client", version: "0.0.0" });
  client.onerror = (error) => {
    if (!closing) transportErrors.push(String(error?.message ?? error));
  };
  const options = { timeout: REQUEST_TIMEOUT_MS };
  try {
    await client.connect(transport, options);
  } catch (error) {
    let refusal = null;
    if (error instanceof McpError) {
      refusal = rpcError(error);
    } else if (error instanceof StreamableHTTPError) {
      refusal = { status: error.code, message: error.message };
    } else {
      throw error;
    }
    closing = true;
    await client.close();
    return { connected: false, error: refusal };
  }
  try {
    const sessionId = transport.sessionId ?? null;
    const tools = await client.listTools(undefined, options);
    const report = {
      connected: true,
      protocol_version: negotiated,
      session_id: sessionId,
      server_info: client.getServerVersion() ?? null,
      capabilities: client.getServerCapabilities() ?? null,
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
      terminated: null,
    };
    if (kind === "streamable") {
      await transport.terminateSession();
      report.terminated = transport.sessionId === undefined;
    }
    report.transport_errors = [...transportErrors];
    return report;
  } finally {
    closing = true;
    await client.close();
  }
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length !== 3 || !["streamable", "sse"].includes(argv[0])) usage();
  const [kind, url, message] = argv;
  // Only fires if something keeps the event loop alive past the end (a hang).
  setTimeout(() => {
    process.stderr.write("ts_sdk_http_client: still running after the watchdog\n");
    process.exit(3);
  }, WATCHDOG_MS).unref();
  const report = await run(kind, url, message);
  process.stdout.write(JSON.stringify(report) + "\n");
  process.exitCode = report.connected ? 0 : 2;
}

main().catch((error) => {
  process.stderr.write(`ts_sdk_http_client: ${error?.stack ?? error}\n`);
  process.exit(1);
});
