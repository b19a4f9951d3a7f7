// A stdio MCP server of N tools built with the official TypeScript SDK
// (npm @modelcontextprotocol/sdk@1.32.2), for the scaling benchmark:
//
//     node benchmarks/programs/ts_sdk_tools_server.mjs N
//
// Registers N tools with McpServer.registerTool, tool_0000 ..., each taking
// {message: string, count?: integer} and answering the message count times,
// with a one-line description. The SDK does not paginate tools/list.
//
// The SDK (and its zod) are loaded from the peer node project
// `.cache/peers/node` written by `benchmarks.peers.ensure_node_peers()` (set
// MCP_PEERS_NODE_DIR to use another one) through createRequire, as
// tests/peers/programs/ts_sdk_echo_server.mjs does.
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeDir =
  process.env.MCP_PEERS_NODE_DIR ?? resolve(here, "..", "..", ".cache", "peers", "node");
const require = createRequire(join(nodeDir, "package.json"));

const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const n = Number(process.argv[2]);
if (!Number.isInteger(n) || n < 0) {
  console.error("usage: node ts_sdk_tools_server.mjs N");
  process.exit(2);
}

const server = new McpServer({ name: "typescript-sdk-tools", version: "1.0.0" });

for (let index = 0; index < n; index++) {
  server.registerTool(
    `tool_${String(index).padStart(4, "0")}`,
    {
      description: `Tool ${index}: return the message, count times.`,
      inputSchema: { message: z.string(), count: z.number().int().optional() },
    },
    async ({ message, count }) => ({
      content: [{ type: "text", text: message.repeat(count ?? 1) }],
    }),
  );
}

await server.connect(new StdioServerTransport());
