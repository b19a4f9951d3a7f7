// A Streamable HTTP MCP server built with the official TypeScript SDK
// (npm @modelcontextprotocol/sdk@1.32.2), run with Node.js >= 18:
//
//     node tests/peers/programs/ts_sdk_http_server.mjs PORT [--json] [--resumable]
//
// Serves the MCP endpoint /mcp on 127.0.0.1:PORT (0: a free port) with
// sessions: each `initialize` gets its own McpServer and
// StreamableHTTPServerTransport, keyed by the Mcp-Session-Id it mints, as in
// the SDK's own examples. Requests naming an unknown session get 404, others
// without a session 400 (both with a JSON-RPC error). Once listening it prints
// one line, `ready PORT`, on stdout.
//
// Tools:
// - `echo` {message: string}: the message unchanged, one text block;
// - `slow_echo` {message: string}: sends notifications/progress (when the
//   request has a progressToken), then, with --resumable, closes the
//   request's SSE stream (the client must resume it with GET and
//   Last-Event-ID), waits 300 ms and answers the message.
//
// --json: answer with JSON bodies instead of SSE streams (enableJsonResponse).
// --resumable: keep events in the SDK's example InMemoryEventStore, so SSE
// events carry ids and streams can be resumed.
//
// The SDK (and its zod) are loaded from the peer node project
// `.cache/peers/node` (MCP_PEERS_NODE_DIR overrides it) through createRequire.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeDir =
  process.env.MCP_PEERS_NODE_DIR ?? resolve(here, "..", "..", "..", ".cache", "peers", "node");
const require = createRequire(join(nodeDir, "package.json"));

const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { isInitializeRequest } = require("@modelcontextprotocol/sdk/types.js");
const { InMemoryEventStore } = require("@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js");
const { z } = require("zod");

const args = process.argv.slice(2);
const port = Number(args.find((a) => !a.startsWith("--")) ?? "0");
const json = args.includes("--json");
const resumable = args.includes("--resumable");

function makeServer() {
  const server = new McpServer({ name: "typescript-sdk-http-echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Return the message unchanged.", inputSchema: { message: z.string() } },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  server.registerTool(
    "slow_echo",
    { description: "Report progress, then echo.", inputSchema: { message: z.string() } },
    async ({ message }, extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: 1, total: 2, message: "half way" },
        });
      }
      if (resumable && extra.closeSSEStream) {
        extra.closeSSEStream();
      }
      await new Promise((done) => setTimeout(done, 300));
      return { content: [{ type: "text", text: message }] };
    },
  );
  return server;
}

const transports = new Map();

function refuse(res, status, code, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

const http = createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const sessionId = req.headers["mcp-session-id"];
    const known = sessionId ? transports.get(sessionId) : undefined;
    if (known) {
      await known.handleRequest(req, res, body);
      return;
    }
    if (!sessionId && req.method === "POST" && isInitializeRequest(body)) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        eventStore: resumable ? new InMemoryEventStore() : undefined,
        retryInterval: resumable ? 50 : undefined,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await makeServer().connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    if (sessionId) {
      refuse(res, 404, -32001, "Session not found");
    } else {
      refuse(res, 400, -32000, "Bad Request: No valid session ID provided");
    }
  } catch (error) {
    console.error("error handling a request:", error);
    if (!res.headersSent) refuse(res, 500, -32603, "Internal server error");
  }
});

http.listen(port, "127.0.0.1", () => {
  console.log(`ready ${http.address().port}`);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    for (const transport of transports.values()) transport.close().catch(() => {});
    http.close();
    process.exit(0);
  });
}
