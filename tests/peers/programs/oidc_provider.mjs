// A real authorization server for the OAuth end-to-end tests: npm
// `oidc-provider`, configured for one MCP resource.
//
//   node oidc_provider.mjs PORT RESOURCE PACKAGE_DIR
//
// PACKAGE_DIR is the installed `oidc-provider` (benchmarks/node22.py puts it
// in .cache/peers/oidc-provider/node_modules/oidc-provider).
//
// Issuer http://127.0.0.1:PORT. Dynamic Client Registration is open; PKCE is
// required of public clients; resource indicators (RFC 8707) make the access
// token a JWT (RFC 9068) whose audience is the resource, with scope
// `mcp:tools`. The dev interactions log in any user name with any password.
// Prints `ready ISSUER` once listening.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const port = Number(process.argv[2]);
const resource = process.argv[3];
const entry = pathToFileURL(join(process.argv[4], "lib", "index.js"));
const { default: Provider } = await import(entry.href);
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  scopes: ["openid", "offline_access", "mcp:tools"],
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => resource,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        if (indicator !== resource) {
          throw new Error(`unknown resource ${indicator}`);
        }
        return {
          scope: "mcp:tools",
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: "jwt",
        };
      },
    },
  },
  findAccount: async (_ctx, id) => ({
    accountId: id,
    claims: async () => ({ sub: id }),
  }),
});

provider.listen(port, "127.0.0.1", () => {
  console.log(`ready ${issuer}`);
});
