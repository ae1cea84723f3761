// The one version of service, worker, client, CLI and MCP server (package.json's), the RPC handshake rule and limits.
/** Kept equal to package.json's version; a test fails when they differ. */
export const CLIENT_VERSION = '0.1.0';

/** Sent by the client on every RPC call; the server answers with its own version in X-Server-Version. */
export const CLIENT_VERSION_HEADER = 'X-Client-Version';
export const SERVER_VERSION_HEADER = 'X-Server-Version';

const SEMVER = /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:[-+][0-9A-Za-z.+-]{1,64})?$/;

export function parseVersion(version: string): { major: number; minor: number; patch: number } | undefined {
  const match = SEMVER.exec(version);
  return match ? { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) } : undefined;
}

/**
 * Client and server are compatible when major and minor are equal; patch releases only fix behaviour and never
 * change an input or output shape. (For 0.x, where any minor may break, this is the same rule.)
 */
export function isCompatibleVersion(client: string, server: string): boolean {
  const a = parseVersion(client);
  const b = parseVersion(server);
  return a !== undefined && b !== undefined && a.major === b.major && a.minor === b.minor;
}

/** Calls in one RPC batch request (POST /api/rpc). */
export const MAX_BATCH_CALLS = 1000;
