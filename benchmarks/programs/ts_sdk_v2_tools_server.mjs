// An MCP server of N tools built with the TypeScript SDK v2
// (npm @modelcontextprotocol/server@2.4.0 and @modelcontextprotocol/node@2.1.2),
// which serves protocol revision 2026-07-28 (and 2025-era traffic), for the
// revisions benchmark:
//
//     node benchmarks/programs/ts_sdk_v2_tools_server.mjs N            # stdio
//     node benchmarks/programs/ts_sdk_v2_tools_server.mjs N --http PORT
//
// Registers N tools with McpServer.registerTool, tool_0000 ..., each taking
// {message: string, count?: integer} and answering the message count times,
// with a one-line description, as benchmarks/programs/ts_sdk_tools_server.mjs
// does with the v1 SDK. Over stdio it is served by serveStdio (one factory for
// both eras); over HTTP by createMcpHandler behind node:http on 127.0.0.1,
// printing "ready PORT" once listening.
//
// The SDK and its zod are loaded from the node project `.cache/peers/node-sdk2`
// written by `benchmarks.peers.ensure_node_v2_peers()` (set
// MCP_PEERS_NODE_V2_DIR to use another one) through createRequire.
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeDir =
  process.env.MCP_PEERS_NODE_V2_DIR ??
  resolve(here, "..", "..", ".cache", "peers", "node-sdk2");
const require = createRequire(join(nodeDir, "package.json"));

const { McpServer, createMcpHandler } = require("@modelcontextprotocol/server");
const { serveStdio } = require("@modelcontextprotocol/server/stdio");
const { toNodeHandler } = require("@modelcontextprotocol/node");
const { z } = require("zod");

const n = Number(process.argv[2]);
const http = process.argv[3] === "--http";
const port = Number(process.argv[4]);
if (!Number.isInteger(n) || n < 0 || (http && !Number.isInteger(port))) {
  console.error("usage: node ts_sdk_v2_tools_server.mjs N [--http PORT]");
  process.exit(2);
}

function makeServer() {
  const server = new McpServer({ name: "typescript-sdk-v2-tools", version: "1.0.0" });
  for (let index = 0; index < n; index++) {
    server.registerTool(
      `tool_${String(index).padStart(4, "0")}`,
      {
        description: `Tool ${index}: return the message, count times.`,
        inputSchema: z.object({ message: z.string(), count: z.number().int().optional() }),
      },
      async ({ message, count }) => ({
        content: [{ type: "text", text: message.repeat(count ?? 1) }],
      }),
    );
  }
  return server;
}

if (http) {
  const handler = toNodeHandler(createMcpHandler(makeServer));
  const listener = createServer((req, res) => {
    if (req.url !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    handler(req, res);
  });
  listener.listen(port, "127.0.0.1", () => console.log(`ready ${port}`));
} else {
  serveStdio(makeServer);
}
