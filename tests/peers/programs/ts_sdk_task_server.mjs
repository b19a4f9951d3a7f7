// A Streamable HTTP MCP server with task tools, built with the official
// TypeScript SDK's experimental tasks API (npm @modelcontextprotocol/sdk@1.32.2):
//
//     node tests/peers/programs/ts_sdk_task_server.mjs PORT
//
// Serves /mcp on 127.0.0.1:PORT (0: a free port) with sessions, as
// ts_sdk_http_server.mjs does; prints `ready PORT` once listening. The
// McpServer gets the SDK's InMemoryTaskStore and InMemoryTaskMessageQueue,
// which serve tasks/get, tasks/result (blocking, delivering the queued
// requests of a task on its stream), tasks/list (pages of 10) and
// tasks/cancel, and send notifications/tasks/status on each change. The
// server declares tasks.{list,cancel,requests.tools.call}.
//
// Task tools (registerToolTask, taskSupport "required" unless said):
// - `delay` {ms}: completes after ms with "slept <ms>" ("optional");
// - `ask_name`: input_required, asks the client `elicitation/create` (queued
//   for the task's tasks/result stream), completes with "hello <name>";
// - `haiku` {topic}: the same with `sampling/createMessage`, completes with
//   the sampled text;
// - `broken`: completes as failed with an isError result "it broke".
// And plain tools (no task support): `echo` {message}; `ask_client_task`
// {kind: "elicit"|"sample"}, which sends the client a task-augmented
// elicitation/create or sampling/createMessage (the SDK's elicitInputStream /
// createMessageStream with `task`: it polls the client's tasks/get, then
// fetches tasks/result) and answers JSON {events, answer}.
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
const {
  InMemoryTaskStore,
  InMemoryTaskMessageQueue,
} = require("@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js");
const { z } = require("zod");

const port = Number(process.argv[2] ?? "0");
const taskStore = new InMemoryTaskStore();

function text(value) {
  return { content: [{ type: "text", text: value }] };
}

// Runs `work` in the background for a new task; `work` gets the request's
// task store and the task id and returns [status, result].
function backgrounded(work) {
  return {
    async createTask(args, extra) {
      const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, pollInterval: 50 });
      (async () => {
        try {
          const [status, result] = await work(args, extra, task.taskId);
          const now = await extra.taskStore.getTask(task.taskId);
          if (now.status !== "cancelled") {
            await extra.taskStore.storeTaskResult(task.taskId, status, result);
          }
        } catch (error) {
          console.error(`task ${task.taskId} failed:`, error);
        }
      })();
      return { task };
    },
    async getTask(_args, extra) {
      return await extra.taskStore.getTask(extra.taskId);
    },
    async getTaskResult(_args, extra) {
      return await extra.taskStore.getTaskResult(extra.taskId);
    },
  };
}

// Asks the client through the task's queue, the task input_required meanwhile.
async function asking(extra, taskId, send) {
  await extra.taskStore.updateTaskStatus(taskId, "input_required");
  const answer = await send({ relatedTask: { taskId } });
  await extra.taskStore.updateTaskStatus(taskId, "working");
  return answer;
}

function makeServer() {
  const server = new McpServer(
    { name: "typescript-sdk-task-server", version: "1.0.0" },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  server.registerTool(
    "ask_client_task",
    {
      description: "Send the client a task-augmented elicitation or sampling; report how it went.",
      inputSchema: { kind: z.enum(["elicit", "sample"]) },
    },
    async ({ kind }, extra) => {
      const options = { task: { ttl: 60000 }, relatedRequestId: extra.requestId };
      const tasks = server.server.experimental.tasks;
      const stream =
        kind === "elicit"
          ? tasks.elicitInputStream(
              {
                mode: "form",
                message: "Your name?",
                requestedSchema: { type: "object", properties: { name: { type: "string" } } },
              },
              options,
            )
          : tasks.createMessageStream(
              {
                messages: [{ role: "user", content: { type: "text", text: "A haiku" } }],
                maxTokens: 50,
              },
              options,
            );
      const events = [];
      let answer;
      for await (const message of stream) {
        events.push(message.type === "taskStatus" ? `status:${message.task.status}` : message.type);
        if (message.type === "result") answer = message.result;
        if (message.type === "error") return { ...text(String(message.error)), isError: true };
      }
      return text(JSON.stringify({ events, answer }));
    },
  );
  server.registerTool(
    "echo",
    { description: "Return the message unchanged.", inputSchema: { message: z.string() } },
    async ({ message }) => text(message),
  );
  server.experimental.tasks.registerToolTask(
    "delay",
    {
      description: "Sleep, then say so.",
      inputSchema: { ms: z.number() },
      execution: { taskSupport: "optional" },
    },
    backgrounded(async ({ ms }) => {
      await new Promise((done) => setTimeout(done, ms));
      return ["completed", text(`slept ${ms}`)];
    }),
  );
  server.experimental.tasks.registerToolTask(
    "ask_name",
    { description: "Ask the user's name.", inputSchema: {}, execution: { taskSupport: "required" } },
    backgrounded(async (_args, extra, taskId) => {
      const answer = await asking(extra, taskId, (options) =>
        server.server.elicitInput(
          {
            mode: "form",
            message: "Your name?",
            requestedSchema: { type: "object", properties: { name: { type: "string" } } },
          },
          options,
        ),
      );
      return ["completed", text(`hello ${answer.content?.name}`)];
    }),
  );
  server.experimental.tasks.registerToolTask(
    "haiku",
    {
      description: "Ask the client's model for a haiku.",
      inputSchema: { topic: z.string() },
      execution: { taskSupport: "required" },
    },
    backgrounded(async ({ topic }, extra, taskId) => {
      const answer = await asking(extra, taskId, (options) =>
        server.server.createMessage(
          {
            messages: [{ role: "user", content: { type: "text", text: `A haiku on ${topic}` } }],
            maxTokens: 50,
          },
          options,
        ),
      );
      return ["completed", text(answer.content.text)];
    }),
  );
  server.experimental.tasks.registerToolTask(
    "broken",
    { description: "Fail.", inputSchema: {}, execution: { taskSupport: "required" } },
    backgrounded(async () => ["failed", { ...text("it broke"), isError: true }]),
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
  const body = Buffer.concat(chunks).toString("utf8");
  return body ? JSON.parse(body) : undefined;
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
    taskStore.cleanup?.();
    http.close();
    process.exit(0);
  });
}
