// The official TypeScript SDK client (npm @modelcontextprotocol/sdk@1.32.2)
// signing in to a protected MCP server with its own OAuth flow, then calling
// tools:
//
//     node tests/peers/programs/ts_sdk_oauth_client.mjs URL
//
// Its `OAuthClientProvider` is the SDK's interface, implemented here in
// memory, with a scripted "browser": `redirectToAuthorization` fetches the
// authorization URL, follows the authorization server's redirects (its
// scripted login and consent, cookies kept) up to the one to our redirect
// URI, which it does not follow, and keeps the code of that `Location`. When the SDK stops for the user (`UnauthorizedError`), the
// program hands that code to `transport.finishAuth` and tries again: the
// connection (a new transport, as the SDK requires) and, on the 403 step-up,
// the same call on the same session.
//
// The provider keeps no refresh token: on a 403 `insufficient_scope` this SDK
// version refreshes when it holds one, and a refresh cannot widen a grant
// (RFC 6749 section 6), so its step-up would fail against any authorization
// server; without one it re-authorizes with the scopes the challenge names.
//
// It lists the tools, calls `whoami`, `write` (needs mcp:write), `whoami`,
// and prints one JSON object: {"tools_before", "whoami_before", "write",
// "whoami_after", "authorizations"}. The SDK is loaded from the peer node
// project `.cache/peers/node` (MCP_PEERS_NODE_DIR overrides it).
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
const { UnauthorizedError } = require("@modelcontextprotocol/sdk/client/auth.js");

const REDIRECT_URI = "http://127.0.0.1:9/callback";
const WATCHDOG_MS = 60_000;

class MemoryProvider {
  constructor() {
    this.info = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.pendingCode = undefined;
    this.visited = [];
  }
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: "ts-sdk-interop",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    const { refresh_token: _dropped, ...kept } = tokens;
    this.saved = kept;
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url) {
    const first = await fetch(url, { redirect: "manual" });
    let response = first;
    let location = new URL(response.headers.get("location"), url);
    // The authorization server's own hops (its login and consent pages, with
    // their cookies) until it redirects to us.
    const cookies = new Map();
    while (!location.href.startsWith(REDIRECT_URI)) {
      for (const set of response.headers.getSetCookie()) {
        const [pair] = set.split(";");
        const at = pair.indexOf("=");
        cookies.set(pair.slice(0, at), pair.slice(at + 1));
      }
      const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");
      response = await fetch(location, { redirect: "manual", headers: { cookie } });
      location = new URL(response.headers.get("location"), location);
    }
    this.visited.push({
      status: first.status,
      scope: url.searchParams.get("scope"),
      resource: url.searchParams.get("resource"),
      code_challenge_method: url.searchParams.get("code_challenge_method"),
    });
    this.pendingCode = location.searchParams.get("code");
  }
}

function text(result) {
  return result.content
    .filter((item) => item.type === "text")
    .map((item) => item.text)
    .join(" ");
}

async function main() {
  const url = new URL(process.argv[2]);
  const provider = new MemoryProvider();

  // Once the SDK stops for the user: hand it the code, then `retry`.
  async function authorized(transport, attempt, retry) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof UnauthorizedError) || provider.pendingCode === undefined) {
        throw error;
      }
      const code = provider.pendingCode;
      provider.pendingCode = undefined;
      await transport.finishAuth(code);
      return await retry();
    }
  }

  let client = new Client({ name: "ts-sdk-oauth-interop", version: "1.0.0" });
  let transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await authorized(
    transport,
    () => client.connect(transport),
    async () => {
      client = new Client({ name: "ts-sdk-oauth-interop", version: "1.0.0" });
      transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
      await client.connect(transport);
    },
  );
  const call = (name, args) => {
    const once = () => client.callTool({ name, arguments: args });
    return authorized(transport, once, once);
  };
  const tools = await client.listTools();
  const before = await call("whoami", {});
  const write = await call("write", { text: "x" });
  const after = await call("whoami", {});
  await client.close();
  return {
    tools_before: tools.tools.map((tool) => tool.name).sort(),
    whoami_before: text(before),
    write: text(write),
    whoami_after: text(after),
    authorizations: provider.visited,
  };
}

const watchdog = setTimeout(() => {
  process.stderr.write("ts_sdk_oauth_client: timed out\n");
  process.exit(1);
}, WATCHDOG_MS);
try {
  process.stdout.write(JSON.stringify(await main()) + "\n");
  clearTimeout(watchdog);
} catch (error) {
  process.stderr.write(`ts_sdk_oauth_client: ${error?.stack ?? error}\n`);
  process.exit(1);
}
