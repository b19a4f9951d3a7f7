// oidc-provider (npm, an OpenID Certified authorization server, pinned and
// installed by benchmarks/node22.py) set up as the authorization server of
// MCP servers, for the end-to-end OAuth tests:
//
//     .cache/peers/node22/.../bin/node tests/peers/programs/oidc_provider.mjs
//
// It listens on a free loopback port and prints `READY <issuer>` once ready;
// SIGTERM stops it. The package is loaded from `.cache/peers/oidc-provider`
// (MCP_OIDC_PROVIDER_DIR overrides it). What is configured, and why:
//
// - Dynamic Client Registration (RFC 7591) is open, public clients
//   (`token_endpoint_auth_method: none`) included; PKCE is required of every
//   client (S256, the only method this provider knows).
// - Resource indicators (RFC 8707): any absolute http(s) URL without a
//   fragment is a resource server with the scopes `mcp:read mcp:write` (or
//   those MCP_RESOURCE_SCOPES lists, space-separated), and its access tokens
//   are JWTs (RFC 9068) signed RS256 with `aud` = that resource. The signing key is made at start and never leaves the process:
//   verifiers fetch the public half from the JWKS.
// - Resources listed in MCP_OPAQUE_RESOURCES (space-separated URLs) get
//   opaque access tokens instead, which their server asks about at the
//   introspection endpoint (RFC 7662) as the confidential client
//   `mcp-resource-server` with the secret in MCP_INTROSPECTION_SECRET (no
//   such client without it). Only that client may introspect.
// - Refresh tokens come with `offline_access`, the provider's default rule.
// - A scripted login: the interaction endpoint signs the fixed user
//   `interop-user` in and grants the scopes asked, with no form, so a client
//   that follows redirects (keeping cookies) ends at its redirect_uri with
//   the code.
// - A client registered with `client_name: "expired-tokens"` gets access
//   tokens issued an hour in the past (`iat` and `exp` moved back, signed by
//   the provider as usual): the honest way to show a verifier an expired
//   token without waiting out its clock-skew leeway.
//
// Each token issued is printed on stdout as `GRANT {"grant", "format",
// "client", "scope", "aud", "exp"}` (for a JWT, its claims; for an opaque
// token, the provider's record, without `exp`), for the tests to check.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const providerDir =
  process.env.MCP_OIDC_PROVIDER_DIR ??
  resolve(here, "..", "..", "..", ".cache", "peers", "oidc-provider");
const entry = createRequire(join(providerDir, "package.json")).resolve("oidc-provider");
const { default: Provider } = await import(pathToFileURL(entry).href);

const USER = "interop-user";
const RESOURCE_SCOPES = process.env.MCP_RESOURCE_SCOPES || "mcp:read mcp:write";
const EXPIRED_CLIENT_NAME = "expired-tokens";
const BACKDATE_S = 3600;
const OPAQUE = new Set((process.env.MCP_OPAQUE_RESOURCES ?? "").split(" ").filter(Boolean));
const INTROSPECTION_SECRET = process.env.MCP_INTROSPECTION_SECRET;
const INTROSPECTOR = "mcp-resource-server";

function signingKey() {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = privateKey.export({ format: "jwk" });
  return { ...jwk, kid: randomBytes(8).toString("hex"), alg: "RS256", use: "sig" };
}

function resourceIndicator(indicator) {
  try {
    const url = new URL(indicator);
    return ["http:", "https:"].includes(url.protocol) && !indicator.includes("#");
  } catch {
    return false;
  }
}

// The provider's storage (its `Adapter` interface) in this process' memory:
// what the provider ships for that warns on every start.
class MemoryAdapter {
  static store = new Map();
  constructor(model) {
    this.model = model;
  }
  key(id) {
    return `${this.model}:${id}`;
  }
  async upsert(id, payload) {
    const store = MemoryAdapter.store;
    store.set(this.key(id), payload);
    if (payload.grantId) store.set(`grant:${payload.grantId}:${this.key(id)}`, id);
    if (payload.uid) store.set(`uid:${payload.uid}`, id);
    if (payload.userCode) store.set(`userCode:${payload.userCode}`, id);
  }
  async find(id) {
    return MemoryAdapter.store.get(this.key(id));
  }
  async findByUid(uid) {
    return this.find(MemoryAdapter.store.get(`uid:${uid}`));
  }
  async findByUserCode(userCode) {
    return this.find(MemoryAdapter.store.get(`userCode:${userCode}`));
  }
  async consume(id) {
    const payload = await this.find(id);
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    MemoryAdapter.store.delete(this.key(id));
  }
  async revokeByGrantId(grantId) {
    const prefix = `grant:${grantId}:`;
    for (const key of [...MemoryAdapter.store.keys()]) {
      if (key.startsWith(prefix)) {
        MemoryAdapter.store.delete(key);
        MemoryAdapter.store.delete(key.slice(prefix.length));
      }
    }
  }
}

function configuration() {
  return {
    adapter: MemoryAdapter,
    responseTypes: ["code"],
    // Named here too so that clients may register with them (`scope` in
    // their metadata) and find them in `scopes_supported`.
    scopes: ["openid", "offline_access", ...RESOURCE_SCOPES.split(" ")],
    // Registration policy: the `scope` a client registers with is not kept as
    // a ceiling on what it may ask later (the user's grant is the limit), so
    // a step-up can widen it. The SDKs register with the scope of the first
    // challenge and do not register again to step up.
    extraClientMetadata: {
      properties: ["scope"],
      validator: (_ctx, key, _value, metadata) => {
        if (key === "scope") delete metadata.scope;
      },
    },
    jwks: { keys: [signingKey()] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({ sub }),
    }),
    pkce: { required: () => true },
    clients: INTROSPECTION_SECRET
      ? [
          {
            client_id: INTROSPECTOR,
            client_secret: INTROSPECTION_SECRET,
            grant_types: [],
            response_types: [],
            redirect_uris: [],
          },
        ]
      : [],
    features: {
      devInteractions: { enabled: false },
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx, client) => client.clientId === INTROSPECTOR,
      },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (!resourceIndicator(indicator)) {
            throw new Provider.errors.InvalidTarget();
          }
          return {
            scope: RESOURCE_SCOPES,
            audience: indicator,
            accessTokenTTL: 600,
            ...(OPAQUE.has(indicator)
              ? { accessTokenFormat: "opaque" }
              : { accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } }),
          };
        },
      },
    },
    formats: {
      customizers: {
        jwt: async (ctx, _token, jwt) => {
          if (ctx?.oidc?.client?.clientName === EXPIRED_CLIENT_NAME) {
            jwt.payload.iat -= BACKDATE_S;
            jwt.payload.exp -= BACKDATE_S;
          }
        },
      },
    },
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
      AuthorizationCode: 60,
      Grant: 3600,
      IdToken: 600,
      Interaction: 600,
      RefreshToken: 3600,
      Session: 3600,
    },
    renderError: async (ctx, out) => {
      ctx.type = "application/json";
      ctx.body = out;
    },
  };
}

// The scripted login and consent: whatever the prompt, finish it at once.
async function interact(provider, req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session, grantId } = details;
  if (prompt.name === "login") {
    const result = { login: { accountId: USER } };
    return provider.interactionFinished(req, res, result, {
      mergeWithLastSubmission: false,
    });
  }
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) {
    grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  }
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "));
  }
  const result = { consent: { grantId: await grant.save() } };
  return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

function claimsOf(jwt) {
  const payload = jwt.split(".")[1];
  return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
}

function announce(ctx) {
  const token = ctx.body?.access_token;
  if (typeof token !== "string") return;
  const jwt = token.split(".").length === 3;
  const entity = ctx.oidc.entities.AccessToken;
  const claims = jwt
    ? claimsOf(token)
    : { client_id: entity.clientId, scope: entity.scope, aud: entity.aud, exp: entity.exp };
  const line = {
    grant: ctx.oidc.params.grant_type,
    format: jwt ? "jwt" : "opaque",
    client: claims.client_id,
    scope: claims.scope ?? null,
    aud: claims.aud,
    exp: claims.exp,
  };
  process.stdout.write(`GRANT ${JSON.stringify(line)}\n`);
}

const server = createServer();
await new Promise((done) => server.listen(0, "127.0.0.1", done));
const issuer = `http://127.0.0.1:${server.address().port}`;
const provider = new Provider(issuer, configuration());
provider.on("grant.success", announce);
const callback = provider.callback();
server.on("request", (req, res) => {
  if (req.url.startsWith("/interaction/")) {
    interact(provider, req, res).catch((error) => {
      res.statusCode = 500;
      res.end(String(error));
    });
    return;
  }
  callback(req, res);
});
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
process.stdout.write(`READY ${issuer}\n`);
