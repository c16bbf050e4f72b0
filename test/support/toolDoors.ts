import http from 'node:http';
import type { Caller, World } from './fuzzWorld.ts';
import type { Reply } from './server.ts';

/** REST for agents, MCP `tools/call`, and the web app's `/api/tools/:name`. */
export type Door = 'rest' | 'mcp' | 'app';

/** Codes and statuses of SPEC part 7, written here rather than imported so the product cannot move them. */
const SPEC_STATUS: Record<string, number> = {
  unauthenticated: 401,
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  locked: 423,
  rate_limited: 429,
  registration_not_open: 403,
  claim_required: 402,
  paused: 503,
  busy: 503,
  internal: 500,
};

/**
 * One door's answer: `outcome` is what two doors must agree on ("ok", an error code with the paths
 * of its issues, or what went wrong below the tool), `problems` what breaks the spec on its own.
 */
export type Answer = { door: Door; status: number; outcome: string; problems: string[]; message: string; text: string };

const isObject = (value: unknown): value is Record<string, any> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A POST on a connection of its own. A pooled keep-alive socket can be closed by the server (after
 * its 5 s keep-alive timeout) just as the next request reuses it, which ends in ECONNRESET on a busy
 * machine; on a fresh connection a reset can only be the server's doing.
 */
export function send(url: string, headers: Record<string, string>, body: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {}
        const replyHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) replyHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        resolve({ status: res.statusCode!, headers: replyHeaders, body: parsed, text });
      });
      res.on('error', reject);
    });
    req.setTimeout(45_000, () => req.destroy(new Error(`no answer from ${url} within 45 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

function post(world: World, door: Door, caller: Caller, tool: string, json: string, id: number): Promise<Reply> {
  const key = caller === 'owner' || caller === 'member' || caller === 'outsider' ? world.keys[caller] : undefined;
  const auth: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  if (door === 'rest') return send(`${world.server.url}/api/v1/tools/${tool}`, { 'content-type': 'application/json', ...auth }, json);
  if (door === 'app') {
    const cookie: Record<string, string> = caller === 'person' ? { cookie: world.cookie } : {};
    return send(`${world.server.url}/api/tools/${tool}`, { 'content-type': 'application/json', 'x-svc': '1', ...cookie }, json);
  }
  const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":${json}}}`;
  return send(`${world.server.url}/mcp`, { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth }, body);
}

/** The error body of SPEC part 7: `{error, message, …details}`, with `issues: [{path, message}]` on schema failures. */
function errorShape(body: unknown, problems: string[]): string {
  if (!isObject(body)) {
    problems.push('the refusal is not a JSON object');
    return 'unreadable';
  }
  const code = String(body.error);
  if (!(code in SPEC_STATUS)) problems.push(`unknown error code ${JSON.stringify(body.error)}`);
  if (code === 'internal') problems.push('internal error');
  if (typeof body.message !== 'string' || body.message === '') problems.push('no message');
  if (body.issues === undefined) return code;
  if (!Array.isArray(body.issues) || !body.issues.every((i: unknown) => isObject(i) && typeof i.path === 'string' && typeof i.message === 'string')) {
    problems.push('issues are not [{path, message}]');
    return code;
  }
  const paths = [...new Set(body.issues.map((i: { path: string }) => i.path))].sort();
  return `${code}(${paths.join(',')})`;
}

function readHttp(door: 'rest' | 'app', reply: Reply, problems: string[]): string {
  if (reply.status === 200) {
    const body = reply.body;
    const shaped = isObject(body) && body.api === '1' && typeof body.text === 'string' && isObject(body.data) && (door === 'rest' || 'view' in body);
    if (!shaped) problems.push(`a success that is not {text, data${door === 'app' ? ', view' : ''}, api}`);
    return 'ok';
  }
  if (reply.status >= 500) problems.push(`HTTP ${reply.status}`);
  const outcome = errorShape(reply.body, problems);
  const code = isObject(reply.body) ? String(reply.body.error) : '';
  if (code in SPEC_STATUS && SPEC_STATUS[code] !== reply.status) problems.push(`${code} with status ${reply.status}, not ${SPEC_STATUS[code]}`);
  if (reply.status === 401 && !reply.headers.get('www-authenticate') && door === 'rest') problems.push('401 without WWW-Authenticate');
  if (reply.status === 429 && !reply.headers.get('retry-after')) problems.push('429 without Retry-After');
  return outcome;
}

function readMcp(reply: Reply, problems: string[]): string {
  if (reply.status === 401) {
    if (reply.body?.error !== 'invalid_token' || !reply.headers.get('www-authenticate')) problems.push('401 without invalid_token and its challenge');
    return 'unauthenticated';
  }
  if (reply.status !== 200) {
    problems.push(`HTTP ${reply.status}`);
    return `http ${reply.status}`;
  }
  const body = reply.body;
  if (isObject(body) && isObject(body.error)) {
    problems.push(`JSON-RPC error ${body.error.code} instead of a tool result`);
    return `jsonrpc ${body.error.code}`;
  }
  const result = isObject(body) ? body.result : undefined;
  if (!isObject(result)) {
    problems.push('no JSON-RPC result');
    return 'unreadable';
  }
  const text = Array.isArray(result.content) ? result.content[0] : undefined;
  if (!isObject(text) || text.type !== 'text' || typeof text.text !== 'string') problems.push('content[0] is not a text part');
  if (!isObject(result._meta) || result._meta['svc/api'] !== '1') problems.push('no _meta["svc/api"]');
  if (result.isError === true) return errorShape(result.structuredContent, problems);
  if (!isObject(result.structuredContent)) problems.push('a success without structuredContent');
  return 'ok';
}

let nextId = 1;

/** Calls `tool` through one door as `caller`, with the arguments' JSON text exactly as given. */
export async function callTool(world: World, door: Door, caller: Caller, tool: string, json: string): Promise<Answer> {
  const reply = await post(world, door, caller, tool, json, nextId++);
  const problems: string[] = [];
  const outcome = door === 'mcp' ? readMcp(reply, problems) : readHttp(door, reply, problems);
  const error = door === 'mcp' ? reply.body?.result?.structuredContent ?? reply.body?.error : reply.body;
  const text = door === 'mcp' ? String(reply.body?.result?.content?.[0]?.text ?? '') : String(reply.body?.text ?? '');
  return { door, status: reply.status, outcome, problems, message: outcome === 'ok' ? '' : String(error?.message ?? reply.text).slice(0, 160), text };
}
