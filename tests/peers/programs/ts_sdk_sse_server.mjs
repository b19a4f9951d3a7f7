// An HTTP+SSE (2024-11-05 transport) MCP server built with the official
// TypeScript SDK (npm @modelcontextprotocol/sdk@1.32.2), run with Node.js >= 18:
//
//     node tests/peers/programs/ts_sdk_sse_server.mjs [PORT]
//
// GET /sse opens a session: a new `McpServer` connected to a new
// `SSEServerTransport("/messages", res)` (the SDK names the session in the
// endpoint's `sessionId` query parameter); POST /messages?sessionId=ID goes to
// that session's `handlePostMessage`; an unknown session gets 404, any other
// request 404. The session is forgotten when its stream closes. One tool, `echo`
// with input {message: string}, answers the message unchanged as one text
// content block. The server listens on 127.0.0.1, PORT 0 (the default) being a
// free port; the bound port is printed on stdout, one line, once it listens.
// It serves until SIGTERM or SIGINT. The SDK (and its zod) are loaded from the
// peer node project `.cache/peers/node` (see ts_sdk_echo_server.mjs;
// MCP_PEERS_NODE_DIR overrides it) through createRequire.
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeDir =
  process.env.MCP_PEERS_NODE_DIR ?? resolve(here, "..", "..", "..", ".cache", "peers", "node");
const require = createRequire(join(nodeDir, "package.json"));

const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { SSEServerTransport } = require("@modelcontextprotocol/sdk/server/sse.js");
const { z } = require("zod");

function echoServer() {
  const server = new McpServer({ name: "typescript-sdk-sse-echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    {
      description: "Return the message unchanged.",
      inputSchema: { message: z.string() },
    },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  return server;
}

const sessions = new Map();

async function handle(req, res) {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  if (req.method === "GET" && url.pathname === "/sse") {
    const transport = new SSEServerTransport("/messages", res);
    const server = echoServer();
    sessions.set(transport.sessionId, transport);
    res.on("close", () => {
      sessions.delete(transport.sessionId);
      void server.close();
    });
    await server.connect(transport);
    return;
  }
  if (req.method === "POST" && url.pathname === "/messages") {
    const transport = sessions.get(url.searchParams.get("sessionId") ?? "");
    if (transport === undefined) {
      res.writeHead(404).end("unknown session");
      return;
    }
    await transport.handlePostMessage(req, res);
    return;
  }
  res.writeHead(404).end("not found");
}

const httpServer = createServer((req, res) => {
  handle(req, res).catch((error) => {
    process.stderr.write(`ts_sdk_sse_server: ${error?.stack ?? error}\n`);
    if (!res.headersSent) {
      res.writeHead(500).end();
    }
  });
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    httpServer.closeAllConnections();
    httpServer.close(() => process.exit(0));
  });
}

const port = Number(process.argv[2] ?? "0");
httpServer.listen(port, "127.0.0.1", () => {
  process.stdout.write(`${httpServer.address().port}\n`);
});
