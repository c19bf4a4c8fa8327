// Test harness for the plugin's tests: a fake memory server (node:http), a fake OpenCode SDK
// client, OpenCode-shaped messages, and a plugin made with a test environment. It holds no
// tests itself.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";

import { EmergentMemoryPlugin } from "../emergent-memory.js";

export const TOKEN = "emt_test_secret_token_1234567890";
export const PROJECT_ID = "0f6d7a3c-1b2e-4c5d-9e8f-a0b1c2d3e4f5";

/** A fake memory server. `respond(request)` may return {status, body, headers, delay, hang}. */
export async function fakeServer(respond = () => ({}), { port: wanted = 0 } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", async () => {
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch {}
      const request = { method: req.method, path: req.url, headers: req.headers, body };
      requests.push(request);
      const answer = { ...defaultAnswer(request), ...(state.respond(request) ?? {}) };
      if (answer.hang) return; // never answers
      if (answer.delay) await new Promise((resolve) => setTimeout(resolve, answer.delay));
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
  });
  const state = { respond };
  await new Promise((resolve) => server.listen(wanted, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    of: (route) => requests.filter((request) => request.path === route),
    set respond(handler) {
      state.respond = handler;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

function defaultAnswer(request) {
  if (request.path === "/api/v1/context") {
    return {
      status: 200,
      body: { context: "", memories: [], estimated_tokens: 0, budget_tokens: 500 },
    };
  }
  if (request.path === "/api/v1/capture") {
    const count = request.body?.messages?.length ?? 0;
    const first = request.body?.first_index ?? 0;
    return {
      status: 202,
      body: {
        capture: "queued",
        accepted: count,
        already_received: 0,
        next_index: first + count,
        windows_queued: 0,
      },
    };
  }
  return { status: 404, body: { error: { code: "not_found", message: "no such route" } } };
}

/** A context answer holding `text` inside the marker. */
export function memoryContext(text) {
  const context = `<emergent-memory>\n${text}\n</emergent-memory>`;
  return {
    status: 200,
    body: {
      context,
      memories: [{ id: "m1", category: "preference", content: text, estimated_tokens: 20 }],
      estimated_tokens: 30,
      budget_tokens: 500,
    },
  };
}

/** A fake OpenCode SDK client (the v1 client plugins get): sessions, messages and log. */
export function fakeOpenCode({ sessions = {}, messages = {}, log = true } = {}) {
  const logs = [];
  const calls = [];
  const client = {
    session: {
      async get({ path: { id } }) {
        calls.push(["session.get", id]);
        const info = sessions[id] ?? { id, title: "a session", parentID: undefined };
        return { data: info };
      },
      async messages({ path: { id }, query }) {
        calls.push(["session.messages", id, query?.limit]);
        const all = messages[id] ?? [];
        return { data: query?.limit ? all.slice(-query.limit) : all };
      },
    },
  };
  if (log) {
    client.app = {
      async log({ body }) {
        logs.push(body);
        return { data: true };
      },
    };
  }
  return { client, logs, calls, sessions, messages };
}

let counter = 0;
// OpenCode's ids: a prefix, then 12 hex digits (the low 48 bits of milliseconds * 4096 plus
// a counter), then 14 random characters.
const hex = (n) => (BigInt(n) & ((1n << 48n) - 1n)).toString(16).padStart(12, "0");

/** An OpenCode user message with the given text parts (strings, or part objects). */
export function userMessage(sessionID, id, ...texts) {
  return {
    info: {
      id,
      sessionID,
      role: "user",
      time: { created: Date.now() },
      agent: "build",
      model: { providerID: "anthropic", modelID: "claude-test" },
    },
    parts: texts.map((text) =>
      typeof text === "string"
        ? textPart(sessionID, id, text)
        : { sessionID, messageID: id, ...text },
    ),
  };
}

/** An OpenCode assistant message; `completed: false` for one still being written. */
export function assistantMessage(sessionID, id, parts, { completed = true, summary } = {}) {
  return {
    info: {
      id,
      sessionID,
      role: "assistant",
      time: completed ? { created: 1, completed: 2 } : { created: 1 },
      parentID: "msg_parent",
      modelID: "claude-test",
      providerID: "anthropic",
      mode: "build",
      path: { cwd: "/", root: "/" },
      cost: 0,
      tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
      ...(completed ? { finish: "stop" } : {}),
      ...(summary ? { summary: true } : {}),
    },
    parts: parts.map((part) =>
      typeof part === "string"
        ? textPart(sessionID, id, part)
        : { sessionID, messageID: id, id: nextPartId(), ...part },
    ),
  };
}

export function textPart(sessionID, messageID, text, extra = {}) {
  return { id: nextPartId(), sessionID, messageID, type: "text", text, ...extra };
}

export function toolPart(tool, input, state) {
  return {
    type: "tool",
    tool,
    callID: `call_${++counter}`,
    state: { input, time: { start: 1, end: 2 }, title: tool, metadata: {}, ...state },
  };
}

export function nextPartId() {
  return `prt_${hex(Date.now() * 4096 + ++counter)}abcdefghijklmn`;
}

/** What OpenCode hands chat.message for a new user message. */
export function newMessage(sessionID, text) {
  const messageID = `msg_${hex(Date.now() * 4096 + ++counter)}ABCDEFGHIJKLMN`;
  return {
    input: {
      sessionID,
      agent: "build",
      model: { providerID: "anthropic", modelID: "claude-test" },
      messageID,
    },
    output: {
      message: {
        id: messageID,
        sessionID,
        role: "user",
        time: { created: Date.now() },
        agent: "build",
      },
      parts: [textPart(sessionID, messageID, text)],
    },
  };
}

/** A temporary folder, removed by the returned function. */
export async function temporaryFolder() {
  const folder = await mkdtemp(path.join(os.tmpdir(), "emergent-memory-opencode-"));
  return { folder, remove: () => rm(folder, { recursive: true, force: true }) };
}

const VARIABLES = [
  "EMERGENT_MEMORY_HOOK_URL",
  "EMERGENT_MEMORY_HOOK_TOKEN",
  "EMERGENT_MEMORY_HOOK_CONFIG",
  "EMERGENT_MEMORY_DATA_DIR",
  "EMERGENT_MEMORY_PROJECT_ID",
  "EMERGENT_MEMORY_INJECTION_MIN_PROMPT_WORDS",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "HOME",
];

/**
 * The plugin's hooks, made with an environment of the test's own (the plugin reads its
 * environment when OpenCode loads it). By default: the fake server's URL, a token, a hooks
 * file that does not exist, a data folder in `folder`, and a fixed project id.
 */
export async function makePlugin({ server, folder, client, env = {}, directory } = {}) {
  const values = {
    EMERGENT_MEMORY_HOOK_URL: server?.url,
    EMERGENT_MEMORY_HOOK_TOKEN: TOKEN,
    EMERGENT_MEMORY_HOOK_CONFIG: path.join(folder, "no-such-hooks.json"),
    EMERGENT_MEMORY_DATA_DIR: path.join(folder, "data"),
    EMERGENT_MEMORY_PROJECT_ID: PROJECT_ID,
    HOME: path.join(folder, "home"),
    XDG_CONFIG_HOME: undefined,
    XDG_DATA_HOME: undefined,
    EMERGENT_MEMORY_INJECTION_MIN_PROMPT_WORDS: undefined,
    ...env,
  };
  const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of VARIABLES) {
    if (values[name] === undefined) delete process.env[name];
    else process.env[name] = values[name];
  }
  try {
    return await EmergentMemoryPlugin({
      client,
      directory: directory ?? folder,
      worktree: directory ?? folder,
      project: { id: "global", worktree: "/" },
      $: undefined,
    });
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** The hooks' log file of a plugin made by makePlugin (without an OpenCode log). */
export async function logFileText(folder) {
  try {
    return await readFile(path.join(folder, "data", "logs", "hooks.log"), "utf8");
  } catch {
    return "";
  }
}

/** Wait until `check()` is true (the file log is written in the background). */
export async function eventually(check, timeout = 2000) {
  const until = Date.now() + timeout;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}
