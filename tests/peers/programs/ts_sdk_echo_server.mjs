// An stdio MCP server built with the official TypeScript SDK
// (npm @modelcontextprotocol/sdk@1.32.2), run with Node.js >= 18:
//
//     node tests/peers/programs/ts_sdk_echo_server.mjs
//
// One tool, `echo` with input {message: string}, answering the message unchanged
// as one text content block. The SDK (and its zod) are loaded from the peer node
// project `.cache/peers/node` written by `benchmarks.peers.ensure_node_peers()`;
// set MCP_PEERS_NODE_DIR to use another one. They are loaded through
// createRequire (the packages' public "require" exports), since an ES module
// outside that folder cannot resolve its bare package names.
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const nodeDir =
  process.env.MCP_PEERS_NODE_DIR ?? resolve(here, "..", "..", "..", ".cache", "peers", "node");
const require = createRequire(join(nodeDir, "package.json"));

const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const server = new McpServer({ name: "typescript-sdk-echo", version: "1.0.0" });

server.registerTool(
  "echo",
  {
    description: "Return the message unchanged.",
    inputSchema: { message: z.string() },
  },
  async ({ message }) => ({ content: [{ type: "text", text: message }] }),
);

await server.connect(new StdioServerTransport());
