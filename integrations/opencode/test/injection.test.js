// Injection: the context requests chat.message makes, and where their answer goes.

import assert from "node:assert/strict";
import { after, before, beforeEach, test } from "node:test";

import {
  PROJECT_ID,
  TOKEN,
  fakeOpenCode,
  fakeServer,
  makePlugin,
  memoryContext,
  newMessage,
  temporaryFolder,
  userMessage,
} from "./harness.js";

let server;
let temp;

before(async () => {
  server = await fakeServer();
  temp = await temporaryFolder();
});

after(async () => {
  await server.close();
  await temp.remove();
});

beforeEach(() => {
  server.requests.length = 0;
  server.respond = () => ({});
});

test("a new session's first message asks for its opening memories, then for the prompt's", async () => {
  server.respond = (request) =>
    request.body.event === "session_start"
      ? memoryContext("The user prefers tabs.")
      : memoryContext("The deploy script is scripts/deploy.sh.");
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const { input, output } = newMessage("ses_new", "how do I deploy this service?");

  await hooks["chat.message"](input, output);

  const context = server.of("/api/v1/context");
  assert.deepEqual(
    context.map((request) => request.body),
    [
      {
        session_id: "ses_new",
        event: "session_start",
        source: "startup",
        client: "opencode",
        project_id: PROJECT_ID,
      },
      {
        session_id: "ses_new",
        event: "prompt",
        prompt: "how do I deploy this service?",
        client: "opencode",
        project_id: PROJECT_ID,
      },
    ],
  );
  for (const request of context) {
    assert.equal(request.method, "POST");
    assert.equal(request.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(request.headers["content-type"], "application/json");
  }
  // The answers are synthetic text parts of the user's message: OpenCode sends them to the
  // model, keeps them in the session, and does not show them.
  const [typed, opening, relevant] = output.parts;
  assert.equal(output.parts.length, 3);
  assert.equal(typed.text, "how do I deploy this service?");
  for (const part of [opening, relevant]) {
    assert.equal(part.type, "text");
    assert.equal(part.synthetic, true);
    assert.equal(part.sessionID, "ses_new");
    assert.equal(part.messageID, output.message.id);
    assert.match(part.id, /^prt_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
  }
  assert.equal(opening.text, "<emergent-memory>\nThe user prefers tabs.\n</emergent-memory>");
  assert.equal(
    relevant.text,
    "<emergent-memory>\nThe deploy script is scripts/deploy.sh.\n</emergent-memory>",
  );
  // OpenCode orders a message's parts by id: the memories come after what the user typed.
  assert.ok(typed.id < opening.id && opening.id < relevant.id);
  assert.notEqual(opening.id, relevant.id);
});

test("later messages of the session ask only for the prompt's memories", async () => {
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const first = newMessage("ses_later", "set up the database migrations please");
  await hooks["chat.message"](first.input, first.output);
  server.requests.length = 0;
  server.respond = () => memoryContext("Migrations run with alembic upgrade head.");
  const second = newMessage("ses_later", "now write the migration for users");

  await hooks["chat.message"](second.input, second.output);

  assert.deepEqual(
    server.requests.map((request) => [request.path, request.body.event, request.body.prompt]),
    [["/api/v1/context", "prompt", "now write the migration for users"]],
  );
  assert.equal(second.output.parts.length, 2);
  assert.match(second.output.parts[1].text, /alembic upgrade head/);
});

test("a session that already had messages before OpenCode started is resumed", async () => {
  const { client } = fakeOpenCode({
    messages: { ses_old: [userMessage("ses_old", "msg_1", "an earlier question from yesterday")] },
  });
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const { input, output } = newMessage("ses_old", "let us continue with the parser");

  await hooks["chat.message"](input, output);

  const start = server.requests.find((request) => request.body.event === "session_start");
  assert.equal(start.body.source, "resume");
});

test("an empty context injects nothing", async () => {
  server.respond = () => ({
    status: 200,
    body: { context: "", memories: [], estimated_tokens: 0, budget_tokens: 500 },
  });
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const { input, output } = newMessage("ses_empty", "what is the layout of this repository?");

  await hooks["chat.message"](input, output);

  assert.equal(server.requests.length, 2);
  assert.deepEqual(
    output.parts.map((part) => part.text),
    ["what is the layout of this repository?"],
  );
});

test("a context of only whitespace injects nothing", async () => {
  server.respond = () => ({ status: 200, body: { context: "  \n ", memories: [] } });
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const { input, output } = newMessage("ses_blank", "explain the retry policy of the worker");

  await hooks["chat.message"](input, output);

  assert.equal(output.parts.length, 1);
});

test("a prompt shorter than three words asks for nothing", async () => {
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const first = newMessage("ses_short", "please review the open pull request");
  await hooks["chat.message"](first.input, first.output);
  server.requests.length = 0;
  server.respond = () => memoryContext("never injected");

  const second = newMessage("ses_short", "yes, go");
  await hooks["chat.message"](second.input, second.output);

  assert.equal(server.requests.length, 0);
  assert.equal(second.output.parts.length, 1);
});

test("words are counted as the server counts them: runs of letters, digits and _", async () => {
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const first = newMessage("ses_count", "please review the open pull request");
  await hooks["chat.message"](first.input, first.output);
  server.requests.length = 0;

  const symbols = newMessage("ses_count", "-- ? -- ok"); // one word, not four
  await hooks["chat.message"](symbols.input, symbols.output);
  assert.equal(server.requests.length, 0);

  const file = newMessage("ses_count", "fix auth.py"); // three words, not two
  await hooks["chat.message"](file.input, file.output);
  assert.deepEqual(
    server.requests.map((request) => [request.body.event, request.body.prompt]),
    [["prompt", "fix auth.py"]],
  );
});

test("the prompt sent is what the user typed, without text OpenCode or a plugin added", async () => {
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const { input, output } = newMessage("ses_parts", "summarise @notes.md for me");
  output.parts.push({
    id: "prt_ffffffffffff00000000000000",
    sessionID: "ses_parts",
    messageID: output.message.id,
    type: "text",
    synthetic: true,
    text: "Called the Read tool with the following input: notes.md ... secret file content",
  });
  output.parts[0].text += "\n<emergent-memory>\nan old injection\n</emergent-memory>";

  await hooks["chat.message"](input, output);

  const prompt = server.requests.find((request) => request.body.event === "prompt");
  assert.equal(prompt.body.prompt, "summarise @notes.md for me");
});

test("a subagent's session (one with a parent) gets no memories", async () => {
  const { client } = fakeOpenCode({
    sessions: { ses_child: { id: "ses_child", parentID: "ses_parent", title: "subagent" } },
  });
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const { input, output } = newMessage("ses_child", "search the codebase for the retry helper");

  await hooks["chat.message"](input, output);

  assert.equal(server.requests.length, 0);
  assert.equal(output.parts.length, 1);
});

test("EMERGENT_MEMORY_INJECTION_MIN_PROMPT_WORDS sets the shortest prompt asked about", async () => {
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({
    server,
    folder: temp.folder,
    client,
    env: { EMERGENT_MEMORY_INJECTION_MIN_PROMPT_WORDS: "1" },
  });
  const { input, output } = newMessage("ses_words", "deploy");

  await hooks["chat.message"](input, output);

  assert.deepEqual(
    server.requests.map((request) => request.body.event),
    ["session_start", "prompt"],
  );
});

test("compaction starts the session afresh and re-injects its memories", async () => {
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  const first = newMessage("ses_compact", "refactor the storage layer today");
  await hooks["chat.message"](first.input, first.output);
  server.requests.length = 0;
  server.respond = (request) =>
    request.path === "/api/v1/context"
      ? memoryContext("Always run make check before committing.")
      : {};
  const output = { context: [], prompt: undefined };

  await hooks["experimental.session.compacting"]({ sessionID: "ses_compact" }, output);

  const context = server.of("/api/v1/context");
  assert.deepEqual(
    context.map((request) => request.body),
    [
      {
        session_id: "ses_compact",
        event: "session_start",
        source: "compact",
        client: "opencode",
        project_id: PROJECT_ID,
      },
    ],
  );
  // The compaction prompt gets the memories, after a note saying what they are.
  assert.equal(output.context.length, 1);
  assert.match(output.context[0], /from emergent-memory/);
  assert.ok(
    output.context[0].endsWith(
      "<emergent-memory>\nAlways run make check before committing.\n</emergent-memory>",
    ),
  );
  assert.equal(output.prompt, undefined);
  // Later requests of that session carry them in the system prompt; other sessions' do not.
  const system = { system: ["You are OpenCode."] };
  await hooks["experimental.chat.system.transform"](
    { sessionID: "ses_compact", model: {} },
    system,
  );
  assert.deepEqual(system.system, [
    "You are OpenCode.",
    "<emergent-memory>\nAlways run make check before committing.\n</emergent-memory>",
  ]);
  const other = { system: ["You are OpenCode."] };
  await hooks["experimental.chat.system.transform"]({ sessionID: "ses_other", model: {} }, other);
  assert.deepEqual(other.system, ["You are OpenCode."]);
});

test("the system prompt is left alone before any compaction", async () => {
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  server.respond = () => memoryContext("The user prefers tabs.");
  const first = newMessage("ses_plain", "format the config files now");
  await hooks["chat.message"](first.input, first.output);

  const system = { system: ["You are OpenCode."] };
  await hooks["experimental.chat.system.transform"]({ sessionID: "ses_plain", model: {} }, system);

  assert.deepEqual(system.system, ["You are OpenCode."]);
});
