// Drive an MCP server's tasks (2025-11-25) with the official TypeScript SDK
// client's experimental task API (npm @modelcontextprotocol/sdk@1.32.2) over
// Streamable HTTP, run with Node.js >= 18:
//
//     node tests/peers/programs/ts_sdk_tasks_client.mjs URL
//
// The server is tests/unit/runtime/app/task_app.py. The client declares
// elicitation (answering {"name": "Ts"}), lists the tools (the SDK caches
// which support tasks), then:
//   - callToolStream `slow` (optional): taskCreated, taskStatus..., result;
//   - callToolStream `ask` (optional): the SDK polls, sees input_required,
//     calls tasks/result, answers the elicitation on that stream, gets the
//     result;
//   - callToolStream `must` (required) and `fail` (a tool error: failed);
//   - a raw task-augmented `tools/call` of a slow `slow`, then cancelTask,
//     getTask, cancelTask again (an error), getTaskResult (an error);
//   - listTasks; getTask of an unknown id; a plain `tools/call` of `must`.
// It prints one JSON report; each request's outcome is {"result": ...} or
// {"error": {code, message}}. The SDK is loaded as ts_sdk_client.mjs does.
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
} = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
} = require("@modelcontextprotocol/sdk/types.js");

const REQUEST_TIMEOUT_MS = 20_000;
const WATCHDOG_MS = 60_000;

async function outcome(request) {
  try {
    return { result: await request() };
  } catch (error) {
    if (error instanceof McpError) {
      return { error: { code: error.code, message: error.message } };
    }
    throw error;
  }
}

async function stream(client, name, args) {
  const seen = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    { timeout: REQUEST_TIMEOUT_MS },
  )) {
    if (message.type === "taskCreated") {
      seen.push({ type: "taskCreated", status: message.task.status, taskId: message.task.taskId });
    } else if (message.type === "taskStatus") {
      seen.push({ type: "taskStatus", status: message.task.status });
    } else if (message.type === "result") {
      seen.push({ type: "result", result: message.result });
    } else if (message.type === "error") {
      seen.push({ type: "error", code: message.error.code, message: message.error.message });
    }
  }
  return seen;
}

async function run(url) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client(
    { name: "ts-tasks-client", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  const elicited = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicited.push({ message: request.params.message, meta: request.params._meta ?? null });
    return { action: "accept", content: { name: "Ts" } };
  });
  await client.connect(transport);
  const report = {
    protocol_version: transport.protocolVersion ?? null,
    capabilities: client.getServerCapabilities(),
  };
  const tools = await client.listTools();
  report.task_support = Object.fromEntries(
    tools.tools.map((tool) => [tool.name, tool.execution?.taskSupport ?? null]),
  );
  report.slow = await stream(client, "slow", { text: "hi", seconds: 0.3 });
  report.ask = await stream(client, "ask", {});
  report.elicited = elicited;
  report.must = await stream(client, "must", {});
  report.fail = await stream(client, "fail", {});

  const created = await client.request(
    {
      method: "tools/call",
      params: { name: "slow", arguments: { text: "never", seconds: 60 }, task: { ttl: 60_000 } },
    },
    CreateTaskResultSchema,
  );
  const taskId = created.task.taskId;
  report.created = created.task;
  report.cancel = await outcome(() => client.experimental.tasks.cancelTask(taskId));
  report.after_cancel = await outcome(() => client.experimental.tasks.getTask(taskId));
  report.cancel_again = await outcome(() => client.experimental.tasks.cancelTask(taskId));
  report.cancelled_result = await outcome(() =>
    client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
  );
  report.list = await outcome(() => client.experimental.tasks.listTasks());
  report.unknown = await outcome(() => client.experimental.tasks.getTask("no-such-task"));
  report.plain_must = await outcome(() =>
    client.request({ method: "tools/call", params: { name: "must", arguments: {} } }, CallToolResultSchema),
  );
  await transport.terminateSession();
  await client.close();
  return report;
}

const url = process.argv[2];
if (!url) {
  process.stderr.write("usage: ts_sdk_tasks_client.mjs URL\n");
  process.exit(64);
}
const watchdog = setTimeout(() => {
  process.stderr.write("watchdog: the client took too long\n");
  process.exit(3);
}, WATCHDOG_MS);
run(url).then(
  (report) => {
    clearTimeout(watchdog);
    process.stdout.write(JSON.stringify(report) + "\n");
    process.exit(0);
  },
  (error) => {
    clearTimeout(watchdog);
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
