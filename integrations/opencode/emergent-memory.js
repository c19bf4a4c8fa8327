/**
 * emergent-memory for OpenCode: automatic memory through the memory server's HTTP API.
 *
 * What Claude Code gets from `emergent-memory hook EVENT`, OpenCode gets from this plugin:
 *
 * - Injection (POST /api/v1/context). On a session's first user message the plugin asks for
 *   the session's opening memories (event "session_start"), and on every user message for
 *   the memories relevant to it (event "prompt"). The hook is `chat.message`, which runs
 *   before OpenCode saves the message: each non-empty context is added to the message as a
 *   synthetic text part. OpenCode sends synthetic parts to the model and does not show them
 *   in the conversation; being part of the message, they stay in the session's history as
 *   Claude Code's `additionalContext` does.
 * - Compaction (`experimental.session.compacting`): the messages not yet captured are sent
 *   with `final: true`, and the session starts afresh on the server (event "session_start",
 *   source "compact"). The memories it returns go into the compaction prompt's context, and
 *   into the system prompt of the session's later requests
 *   (`experimental.chat.system.transform`): the messages that held the earlier injections
 *   are summarised away by compaction.
 * - Capture (POST /api/v1/capture), on the `session.idle` event: the session's messages that
 *   were not sent yet, read through OpenCode's SDK client. User text is "user", assistant
 *   text "assistant"; tool calls, tool results and the text OpenCode adds to a user message
 *   itself (a file's content, an agent's instructions) are "tool": data, never the user's
 *   word. `<emergent-memory>` and `<system-reminder>` blocks are cut out first. When a session
 *   is deleted or OpenCode shuts down (`dispose`), what is left is sent with `final: true`.
 *
 * The plugin never breaks or slows a session: every request has a short time limit, every
 * error is caught and logged (OpenCode's log, else the hooks' log file), nothing is thrown.
 * Logs hold statuses, error codes and counts: never a token or a message's text.
 *
 * Subagent sessions (those with a parent) get neither: their "user" is the assistant.
 *
 * No dependencies: Node 20 or Bun built-ins and the global fetch. OpenCode calls every
 * export of a plugin file as a plugin, so this file exports the plugin and nothing else.
 */

import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { appendFile, mkdir, readFile, realpath, rename, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const CLIENT = "opencode";
const SERVICE = "emergent-memory";
const DEFAULT_URL = "http://127.0.0.1:8765";
const CONTEXT_PATH = "/api/v1/context";
const CAPTURE_PATH = "/api/v1/capture";

// Time limits, in milliseconds.
const CONTEXT_TIMEOUT = 1500; // one context request
const CAPTURE_TIMEOUT = 3000; // one capture request
const OPENCODE_TIMEOUT = 1500; // one call to OpenCode's own API (session, messages)
const CAPTURE_RUN_BUDGET = { idle: 8000, compaction: 4000, end: 3000 }; // all of one capture
const CONTEXT_PAUSE = 30000; // after a context request timed out, skip them for this long
const CONFIG_RETRY = 30000; // a missing or unusable configuration is read again after this
const GIT_TIMEOUT = 1000;

// Capture, as the Claude Code hooks do it (emergent_memory/hooks/transcript.py).
const MAX_MESSAGE_CHARS = 16000; // one message's text: head and tail kept
const MAX_CALL_CHARS = 600; // a tool call's summary
const MAX_BATCH_BYTES = 256000; // one request's messages, encoded
const MAX_BATCH_MESSAGES = 500;
const MAX_CAPTURE_REQUESTS = 3; // per capture run; the rest goes with the next one
const CALL_KEYS = [
  "command",
  "filePath",
  "file_path",
  "path",
  "pattern",
  "url",
  "query",
  "description",
  "prompt",
];
// The marker rule of emergent_memory/markers.py, copied (the plugin cannot import Python) and
// tested with the same cases (tests/data/marker_cases.json): an <emergent-memory> block, any
// case, ASCII whitespace in its tags, attributes, never a longer name (<emergent-memory-cli>),
// to its closing tag or, unclosed, to the end; then stray closing tags.
const MEMORY_BLOCK =
  /<[ \t\n\r\f\v]*emergent-memory(?:[ \t\n\r\f\v][^<>]*)?>[\s\S]*?(?:<[ \t\n\r\f\v]*\/[ \t\n\r\f\v]*emergent-memory[ \t\n\r\f\v]*>|$)/gi;
const MEMORY_CLOSE = /<[ \t\n\r\f\v]*\/[ \t\n\r\f\v]*emergent-memory[ \t\n\r\f\v]*>/gi;
const BLANK_RUNS = /\n{3,}/g;
const ASCII_EDGES = /^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g;
// System reminders (notes an agent adds to a message), cut to the end when unclosed too.
const SYSTEM_REMINDER = /<system-reminder>[\s\S]*?(?:<\/system-reminder>|$)/gi;

// Injection.
const MAX_PROMPT_CHARS = 8000;
const DEFAULT_MIN_PROMPT_WORDS = 3;
const MIN_WORDS_VARIABLE = "EMERGENT_MEMORY_INJECTION_MIN_PROMPT_WORDS";
const WORDS = /[\p{L}\p{N}_]+/gu;
const COMPACTION_NOTE =
  "Memories about this user and project, from emergent-memory. The assistant is given " +
  "them again after compaction: the summary need not repeat them.";

// Project ids as emergent_memory/auth/local_ids.py derives them (uuid5 of "project:<root>").
const ID_NAMESPACE = "6f1c2d3e-9b8a-4c5d-8e7f-0a1b2c3d4e5f";
const MAX_LOG_BYTES = 1000000;

/**
 * The plugin: OpenCode calls it once per project directory, with its SDK client.
 *
 * @param {{client?: any, directory?: string, worktree?: string}} input
 * @returns {Promise<Record<string, Function>>} the hooks
 */
export const EmergentMemoryPlugin = async (input) => {
  const env = { ...process.env };
  const client = input?.client;
  const directory = input?.directory || process.cwd();
  const log = makeLog(client, env);
  const sessions = new Map();
  let config = null;
  let configPromise = Promise.resolve(null);
  let configReadAt = -Infinity;
  let contextPausedUntil = 0;
  let projectPromise = null;
  let sendProject = true; // false once the server refused a project for this token

  function session(id) {
    let state = sessions.get(id);
    if (!state) {
      state = {
        child: undefined, // a subagent's session (undefined: not known yet)
        resumed: undefined, // had messages before this process saw it
        started: false, // the server answered its session_start
        compactContext: "", // the memories for its system prompt since its last compaction
        seen: new Set(), // ids of the messages whose capture messages were made
        nextIndex: 0, // the index of the next capture message
        pending: [], // capture messages not accepted by the server yet
        queue: Promise.resolve(), // its capture runs, one at a time
        deleted: false, // OpenCode deleted it (and its messages)
      };
      sessions.set(id, state);
    }
    return state;
  }

  /** The configuration, or null (logged once) while there is no usable one. */
  function configured() {
    if (Date.now() - configReadAt >= CONFIG_RETRY && !config) {
      configReadAt = Date.now();
      configPromise = loadConfig(env).then((found) => {
        if (found.problem) {
          log.once("warn", found.problem);
          return null;
        }
        config = found.config;
        log.useFile(config.logFile);
        return config;
      });
    }
    return configPromise;
  }

  function project() {
    projectPromise ??= projectId(env, directory, log);
    return projectPromise;
  }

  /** POST a JSON body; answers {status, data} or {failure: "timeout" | "unreachable"}. */
  async function post(cfg, route, body, timeout) {
    const project_id = sendProject ? await project() : null;
    const full = project_id ? { ...body, project_id } : body;
    const answer = await request(cfg, route, full, timeout);
    if (answer.status !== 403 || !project_id || env.EMERGENT_MEMORY_PROJECT_ID) return answer;
    // Refused: a token that acts only in its own project? Then it works without naming one.
    const retry = await request(cfg, route, body, timeout);
    if (!(retry.status >= 200 && retry.status < 300)) return answer;
    sendProject = false;
    log.once(
      "warn",
      "the token may not name this repository's project (403): memories go to the token's " +
        "own project; the token of `emergent-memory hooks install` keeps one project per " +
        "repository",
    );
    return retry;
  }

  async function request(cfg, route, body, timeout) {
    try {
      const response = await fetch(cfg.url + route, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          authorization: `Bearer ${cfg.token}`,
        },
        body: JSON.stringify(body),
        redirect: "error",
        signal: AbortSignal.timeout(timeout),
      });
      let data = null;
      try {
        data = await response.json();
      } catch (error) {
        if (isTimeout(error)) return { failure: "timeout" };
      }
      return { status: response.status, data };
    } catch (error) {
      if (isTimeout(error)) return { failure: "timeout" };
      return { failure: "unreachable", reason: errorKind(error) };
    }
  }

  /** The context to inject ("" for none), or null when the server could not give one. */
  async function context(cfg, body, what) {
    if (Date.now() < contextPausedUntil) return null;
    const answer = await post(cfg, CONTEXT_PATH, { ...body, client: CLIENT }, CONTEXT_TIMEOUT);
    if (answer.failure === "timeout") {
      contextPausedUntil = Date.now() + CONTEXT_PAUSE;
      log.write("warn", `${what}: the server at ${cfg.url} timed out; no context for 30 s`);
      return null;
    }
    if (answer.failure) {
      log.write("warn", `${what}: the server at ${cfg.url} is unreachable (${answer.reason})`);
      return null;
    }
    if (answer.status !== 200) {
      log.write("warn", `${what}: the server answered ${answer.status} (${apiCode(answer)})`);
      return null;
    }
    const text = answer.data?.context;
    if (typeof text !== "string") {
      log.write("warn", `${what}: the server's answer has no context string`);
      return null;
    }
    return text.trim() ? text : "";
  }

  /** Whether the session is a subagent's; whether it had messages before this process. */
  async function learn(id, state) {
    const [info, earlier] = await Promise.all([
      state.child === undefined ? opencode(() => client.session.get({ path: { id } }), log) : null,
      state.resumed === undefined
        ? opencode(() => client.session.messages({ path: { id }, query: { limit: 1 } }), log)
        : null,
    ]);
    if (state.child === undefined) state.child = Boolean(info?.parentID);
    if (state.resumed === undefined) state.resumed = Array.isArray(earlier) && earlier.length > 0;
  }

  async function onMessage(hookInput, output) {
    const id = hookInput?.sessionID;
    const message = output?.message;
    if (typeof id !== "string" || !id || !Array.isArray(output?.parts)) return;
    const cfg = await configured();
    if (!cfg) return;
    const state = session(id);
    await learn(id, state);
    if (state.child) return;
    const found = [];
    let reachable = true;
    if (!state.started) {
      // Asked again with the next message when the server could not answer.
      const source = state.resumed ? "resume" : "startup";
      const body = { session_id: id, event: "session_start", source };
      const start = await context(cfg, body, "session start");
      state.started = start !== null;
      if (start === null) reachable = false;
      else if (start) found.push(start);
    }
    const prompt = userText(output.parts).slice(0, MAX_PROMPT_CHARS);
    if (reachable && wordCount(prompt) >= minPromptWords(env)) {
      const relevant = await context(cfg, { session_id: id, event: "prompt", prompt }, "prompt");
      if (relevant) found.push(relevant);
    }
    for (const text of found) {
      output.parts.push({
        id: partId(output.parts),
        sessionID: id,
        messageID: message?.id ?? output.parts[0]?.messageID,
        type: "text",
        text,
        synthetic: true,
      });
    }
  }

  /** Send the session's unsent messages; true when nothing is left unsent. */
  function capture(id, { final, budget }) {
    const state = session(id);
    const deadline = Date.now() + budget;
    const run = state.queue.then(() => sendUnsent(id, state, final, deadline));
    state.queue = run.catch(() => {});
    return run;
  }

  async function sendUnsent(id, state, final, deadline) {
    const cfg = await configured();
    if (!cfg) return false;
    if (state.child === undefined) await learn(id, state);
    if (state.child) return true;
    if (!state.deleted) {
      const messages = await opencode(() => client.session.messages({ path: { id } }), log, {
        timeout: Math.max(100, Math.min(CAPTURE_TIMEOUT, deadline - Date.now())),
      });
      if (!Array.isArray(messages)) return false;
      collect(state, messages);
    }
    if (!state.pending.length && !final) return true;
    const batches = batch(state.pending, state.nextIndex);
    for (let number = 0; number < batches.length; number++) {
      const last = number === batches.length - 1;
      const { firstIndex, messages } = batches[number];
      if (!(await sendBatch(cfg, id, firstIndex, messages, final && last, deadline))) return false;
      state.pending.splice(0, messages.length);
    }
    return state.pending.length === 0;
  }

  async function sendBatch(cfg, id, firstIndex, messages, final, deadline) {
    const left = Math.min(CAPTURE_TIMEOUT, deadline - Date.now());
    if (left < 100) {
      log.write("info", "capture: out of time; the rest is sent next time");
      return false;
    }
    const body = {
      session_id: id,
      client: CLIENT,
      first_index: firstIndex,
      messages: messages.map(({ role, content }) => ({ role, content })),
      final,
    };
    const answer = await post(cfg, CAPTURE_PATH, body, left);
    if (answer.failure) {
      const what = answer.failure === "timeout" ? "timed out" : `is unreachable (${answer.reason})`;
      log.write("warn", `capture: the server at ${cfg.url} ${what}; the messages wait`);
      return false;
    }
    if (answer.status !== 202) {
      log.write("warn", `capture: the server answered ${answer.status} (${apiCode(answer)})`);
      return false;
    }
    if (answer.data?.capture === "off") {
      // the server took nothing: the messages wait until capture is on (an Anthropic key)
      log.once("info", "capture: automatic capture is off on the server; the messages wait");
      return false;
    }
    return true;
  }

  async function onEvent({ event } = {}) {
    const type = event?.type;
    const properties = event?.properties ?? {};
    if (type === "session.created" && properties.info?.id) {
      if (properties.info.parentID) session(properties.info.id).child = true;
    } else if (type === "session.idle" && properties.sessionID) {
      await capture(properties.sessionID, { final: false, budget: CAPTURE_RUN_BUDGET.idle });
    } else if (type === "session.deleted" && properties.info?.id) {
      const id = properties.info.id;
      if (!sessions.has(id)) return;
      const state = session(id);
      state.deleted = true; // its messages are gone: send what was already read
      await capture(id, { final: true, budget: CAPTURE_RUN_BUDGET.end });
      sessions.delete(id);
    }
  }

  async function onCompacting(hookInput, output) {
    const id = hookInput?.sessionID;
    if (typeof id !== "string" || !id) return;
    const cfg = await configured();
    if (!cfg) return;
    const state = session(id);
    await learn(id, state);
    if (state.child) return;
    const [, memories] = await Promise.all([
      capture(id, { final: true, budget: CAPTURE_RUN_BUDGET.compaction }),
      context(cfg, { session_id: id, event: "session_start", source: "compact" }, "compaction"),
    ]);
    if (memories === null) return;
    state.started = true;
    state.compactContext = memories;
    if (memories && Array.isArray(output?.context)) {
      output.context.push(`${COMPACTION_NOTE}\n${memories}`);
    }
  }

  async function onSystem(hookInput, output) {
    const id = hookInput?.sessionID;
    const memories = id ? sessions.get(id)?.compactContext : "";
    if (memories && Array.isArray(output?.system)) output.system.push(memories);
  }

  async function onDispose() {
    const open = [...sessions.entries()].filter(([, state]) => state.child === false);
    await Promise.allSettled(
      open.map(([id]) => capture(id, { final: true, budget: CAPTURE_RUN_BUDGET.end })),
    );
  }

  // Read the configuration and find the project now, not on the first message.
  configured()
    .then(project)
    .catch(() => {});

  const guard =
    (name, handler) =>
    async (...args) => {
      try {
        await handler(...args);
      } catch (error) {
        log.write("error", `${name}: internal error: ${errorKind(error)}`);
      }
    };

  return {
    "chat.message": guard("chat.message", onMessage),
    "experimental.session.compacting": guard("compaction", onCompacting),
    "experimental.chat.system.transform": guard("system", onSystem),
    // OpenCode does not wait for event hooks; the promise (which never rejects) is for tests.
    event: guard("event", onEvent),
    dispose: guard("dispose", onDispose),
  };
};

// -- configuration ------------------------------------------------------------------------

/** The hooks file's path: $EMERGENT_MEMORY_HOOK_CONFIG, else hooks.json in the user's
 * emergent-memory config folder (as emergent_memory/hooks/config.py finds it). */
function hooksFilePath(env) {
  const configured = env.EMERGENT_MEMORY_HOOK_CONFIG;
  if (configured) return path.resolve(expandHome(configured, env));
  return path.join(userDir(env, "XDG_CONFIG_HOME", ".config"), "hooks.json");
}

function defaultLogFile(env) {
  const data = env.EMERGENT_MEMORY_DATA_DIR
    ? path.resolve(expandHome(env.EMERGENT_MEMORY_DATA_DIR, env))
    : userDir(env, "XDG_DATA_HOME", ".local/share");
  return path.join(data, "logs", "hooks.log");
}

function userDir(env, xdgVariable, linuxDefault) {
  if (process.platform === "win32") {
    return path.join(env.LOCALAPPDATA || path.join(os.homedir(), "AppData", "Local"), SERVICE);
  }
  const xdg = env[xdgVariable];
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, SERVICE);
  const base = process.platform === "darwin" ? "Library/Application Support" : linuxDefault;
  return path.join(homeOf(env), base, SERVICE);
}

function homeOf(env) {
  return env.HOME || os.homedir();
}

function expandHome(value, env) {
  return value === "~" || value.startsWith("~/") ? path.join(homeOf(env), value.slice(1)) : value;
}

/** {config: {url, token, logFile}} or {problem}: a sentence without secrets. */
async function loadConfig(env) {
  const file = hooksFilePath(env);
  let stored = {};
  try {
    const status = await stat(file);
    if (process.platform !== "win32") {
      if (status.mode & 0o077) {
        return {
          problem:
            `the hooks file ${file} is open to group or others and holds a token: it is ` +
            `not used; run: chmod 600 ${file}`,
        };
      }
      if (typeof process.getuid === "function" && status.uid !== process.getuid()) {
        return { problem: `the hooks file ${file} belongs to another user: it is not used` };
      }
    }
    stored = JSON.parse(await readFile(file, "utf8"));
    if (!stored || typeof stored !== "object" || Array.isArray(stored)) {
      return { problem: `the hooks file ${file} is not a JSON object` };
    }
  } catch (error) {
    if (error?.code !== "ENOENT") {
      const why =
        error instanceof SyntaxError ? "is not valid JSON" : `cannot be read (${errorKind(error)})`;
      return { problem: `the hooks file ${file} ${why}; run: emergent-memory hooks install` };
    }
  }
  const url = env.EMERGENT_MEMORY_HOOK_URL || stored.url || DEFAULT_URL;
  const token = env.EMERGENT_MEMORY_HOOK_TOKEN || stored.token;
  if (typeof url !== "string" || !/^https?:\/\/[^/]/.test(url)) {
    return { problem: `the server URL must start with http:// or https:// (see ${file})` };
  }
  if (!token || typeof token !== "string") {
    return {
      problem:
        `no token for the memory server, so no automatic memory: run emergent-memory hooks ` +
        `install (or set EMERGENT_MEMORY_HOOK_TOKEN); hooks file ${file}`,
    };
  }
  const logFile =
    typeof stored.log_file === "string" && stored.log_file
      ? expandHome(stored.log_file, env)
      : null;
  return { config: { url: url.replace(/\/+$/, ""), token, logFile } };
}

function minPromptWords(env) {
  const words = Number.parseInt(env[MIN_WORDS_VARIABLE] ?? "", 10);
  return words >= 1 && words <= 50 ? words : DEFAULT_MIN_PROMPT_WORDS;
}

// -- project ------------------------------------------------------------------------------

/** EMERGENT_MEMORY_PROJECT_ID, else the project of the directory's git repository (or of
 * the directory), derived as the stdio server and the Claude Code hooks derive it. */
async function projectId(env, directory, log) {
  const configured = env.EMERGENT_MEMORY_PROJECT_ID;
  if (configured) {
    if (/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(configured)) {
      return formatUuid(configured.replace(/-/g, "").toLowerCase());
    }
    log.once("error", "EMERGENT_MEMORY_PROJECT_ID is not a UUID: it is not sent");
    return null;
  }
  try {
    return uuid5(ID_NAMESPACE, `project:${await projectRoot(directory)}`);
  } catch (error) {
    log.once("warn", `no project for ${directory} (${errorKind(error)}): none is sent`);
    return null;
  }
}

async function projectRoot(directory) {
  const top = await new Promise((resolve) => {
    execFile(
      "git",
      ["rev-parse", "--show-toplevel"],
      { cwd: directory, timeout: GIT_TIMEOUT, windowsHide: true },
      (error, stdout) => resolve(error ? "" : String(stdout).trim()),
    );
  });
  return realpath(top || directory);
}

function uuid5(namespace, name) {
  const hash = createHash("sha1")
    .update(Buffer.from(namespace.replace(/-/g, ""), "hex"))
    .update(Buffer.from(name, "utf8"))
    .digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  return formatUuid(hash.subarray(0, 16).toString("hex"));
}

function formatUuid(hex) {
  return hex.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");
}

// -- OpenCode's messages as capture messages ----------------------------------------------

/** Turn the newly complete messages into capture messages, each with its index. */
function collect(state, messages) {
  for (const entry of messages) {
    const id = entry?.info?.id;
    if (typeof id !== "string" || state.seen.has(id)) continue;
    if (!complete(entry)) break; // later messages wait for it, to keep the order
    state.seen.add(id);
    for (const message of captureMessages(entry)) {
      state.pending.push({ index: state.nextIndex++, ...message });
    }
  }
}

function complete({ info, parts }) {
  if (info.role !== "assistant") return true;
  const finished = Boolean(info.time?.completed || info.finish || info.error);
  const running = (parts ?? []).some(
    (part) => part?.type === "tool" && ["pending", "running"].includes(part.state?.status),
  );
  return finished && !running;
}

/** The capture messages of one OpenCode message, in order (often none). */
function captureMessages({ info, parts }) {
  const found = [];
  const add = (role, text, limit = MAX_MESSAGE_CHARS) => {
    if (text) found.push({ role, content: cut(text, limit) });
  };
  if (info.role === "assistant" && info.summary === true) return found; // a compaction summary
  for (const part of parts ?? []) {
    if (!part || typeof part !== "object") continue;
    if (part.type === "text" && typeof part.text === "string" && !part.ignored) {
      if (part.metadata?.compaction_continue) continue; // OpenCode's "Continue if you have..."
      const text = stripMarkers(part.text);
      if (info.role === "user") add(part.synthetic ? "tool" : "user", text);
      else if (!part.synthetic) add("assistant", text);
    } else if (part.type === "tool" && info.role === "assistant") {
      add("tool", callSummary(part), MAX_CALL_CHARS);
      const state = part.state ?? {};
      if (state.status === "completed" && typeof state.output === "string") {
        add("tool", stripMarkers(state.output));
      } else if (state.status === "error" && typeof state.error === "string") {
        const error = stripMarkers(state.error);
        if (error) add("tool", `error: ${error}`);
      }
    }
  }
  return found;
}

function callSummary(part) {
  const name = typeof part.tool === "string" && part.tool ? part.tool : "a tool";
  const given = part.state?.input;
  let summary = "";
  if (given && typeof given === "object" && !Array.isArray(given)) {
    const key = CALL_KEYS.find((candidate) => typeof given[candidate] === "string");
    summary = key ? given[key] : JSON.stringify(given);
  } else if (given !== undefined && given !== null) {
    summary = JSON.stringify(given);
  }
  return stripMarkers(`called ${name}: ${summary}`.replace(/[:\s]+$/, ""));
}

/** The text without injected blocks: the memories' (the marker rule), then system
 * reminders; trimmed. */
function stripMarkers(text) {
  return stripMemoryBlocks(text).replace(SYSTEM_REMINDER, "").trim();
}

/** emergent_memory/markers.py's strip_markers, without the count. */
function stripMemoryBlocks(text) {
  let blocks = 0;
  let stripped = text.replace(MEMORY_BLOCK, () => {
    blocks += 1;
    return "";
  });
  stripped = stripped.replace(MEMORY_CLOSE, "");
  if (blocks) stripped = stripped.replace(BLANK_RUNS, "\n\n").replace(ASCII_EDGES, "");
  return stripped;
}

function cut(text, limit) {
  if (text.length <= limit) return text;
  const keep = Math.floor(limit / 2);
  return `${text.slice(0, keep)}\n[... ${text.length - 2 * keep} characters cut ...]\n${text.slice(-keep)}`;
}

/** Pending messages in requests of at most MAX_BATCH_BYTES and MAX_BATCH_MESSAGES. */
function batch(pending, nextIndex) {
  const batches = [];
  let current = [];
  let size = 0;
  for (const message of pending) {
    const weight =
      Buffer.byteLength(JSON.stringify({ role: message.role, content: message.content })) + 2;
    if (
      current.length &&
      (size + weight > MAX_BATCH_BYTES || current.length >= MAX_BATCH_MESSAGES)
    ) {
      batches.push(current);
      current = [];
      size = 0;
      if (batches.length === MAX_CAPTURE_REQUESTS) break;
    }
    current.push(message);
    size += weight;
  }
  if (current.length && batches.length < MAX_CAPTURE_REQUESTS) batches.push(current);
  if (!batches.length) return [{ firstIndex: nextIndex, messages: [] }];
  return batches.map((messages) => ({ firstIndex: messages[0].index, messages }));
}

// -- injection helpers ----------------------------------------------------------------------

/** What the user typed: the message's own text parts, without injected blocks. */
function userText(parts) {
  return stripMarkers(
    parts
      .filter(
        (part) =>
          part?.type === "text" &&
          !part.synthetic &&
          !part.ignored &&
          typeof part.text === "string",
      )
      .map((part) => part.text)
      .join("\n"),
  );
}

/** Words as the server counts them (Python's \w+: runs of letters, digits and _), so that
 * "fix auth.py" has 3. */
function wordCount(text) {
  return text.match(WORDS)?.length ?? 0;
}

/** A part id in OpenCode's format ("prt_", 12 hex digits: the low 48 bits of the time in
 * milliseconds times 4096 plus a counter, then 14 random characters) that sorts after the
 * message's other parts. */
function partId(parts) {
  const bits48 = (1n << 48n) - 1n;
  let value = (BigInt(Date.now()) * 4096n) & bits48;
  for (const part of parts) {
    const match = typeof part?.id === "string" && /^prt_([0-9a-f]{12})/.exec(part.id);
    if (match && BigInt(`0x${match[1]}`) >= value) value = (BigInt(`0x${match[1]}`) + 1n) & bits48;
  }
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const random = [...randomBytes(14)].map((byte) => alphabet[byte % 62]).join("");
  return `prt_${value.toString(16).padStart(12, "0")}${random}`;
}

// -- OpenCode's API, errors and the log ----------------------------------------------------

/** The data of an SDK call, or null (logged) when it failed or took too long. */
async function opencode(call, log, { timeout = OPENCODE_TIMEOUT } = {}) {
  let timer;
  try {
    const limit = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ timedOut: true }), timeout);
    });
    const result = await Promise.race([Promise.resolve().then(call), limit]);
    if (result?.timedOut) {
      log.write("warn", "OpenCode's API did not answer in time");
      return null;
    }
    if (result?.error || result?.data === undefined) {
      log.write("warn", `OpenCode's API answered an error (${result?.response?.status ?? "?"})`);
      return null;
    }
    return result.data;
  } catch (error) {
    log.write("warn", `OpenCode's API failed (${errorKind(error)})`);
    return null;
  } finally {
    clearTimeout(timer);
  }
}

function isTimeout(error) {
  return error?.name === "TimeoutError" || error?.name === "AbortError";
}

/** What kind of error: a code or a class name, never a message (which may quote input). */
function errorKind(error) {
  const code = error?.cause?.code ?? error?.code;
  if (typeof code === "string" && /^[A-Za-z][A-Za-z0-9_]{0,39}$/.test(code)) return code;
  return typeof error?.name === "string" ? error.name.slice(0, 40) : "error";
}

/** The API error's code, never its message (which may quote the request). */
function apiCode(answer) {
  const code = answer?.data?.error?.code;
  return typeof code === "string" && /^[A-Za-z_][A-Za-z0-9_]{0,39}$/.test(code) ? code : "?";
}

/** OpenCode's log (client.app.log) when the client has one, else the hooks' log file. */
function makeLog(client, env) {
  let file = defaultLogFile(env);
  const logged = new Set();
  const toFile = async (level, message) => {
    const stamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const line = `${stamp} ${level.toUpperCase()} opencode [${process.pid}] ${message}`.replace(
      /\n/g,
      " ",
    );
    try {
      await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      try {
        if ((await stat(file)).size >= MAX_LOG_BYTES) await rename(file, `${file}.1`);
      } catch {}
      await appendFile(file, `${line}\n`, { mode: 0o600 });
    } catch {}
  };
  const write = (level, message) => {
    const send = client?.app?.log;
    if (typeof send !== "function") return void toFile(level, message);
    try {
      const body = { service: SERVICE, level, message: `${SERVICE}: ${message}` };
      Promise.resolve(send.call(client.app, { body }))
        .then((result) => (result?.error ? toFile(level, message) : undefined))
        .catch(() => toFile(level, message));
    } catch {
      void toFile(level, message);
    }
  };
  return {
    write,
    once(level, message) {
      if (logged.has(message)) return;
      logged.add(message);
      write(level, message);
    },
    useFile(configured) {
      if (configured) file = configured;
    },
  };
}
