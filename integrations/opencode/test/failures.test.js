// A server that is down, slow or refusing, and a missing configuration: the session goes on,
// in time, and the log says what happened without a token or a message's text.

import assert from "node:assert/strict";
import { after, before, beforeEach, test } from "node:test";

import {
  TOKEN,
  eventually,
  fakeOpenCode,
  fakeServer,
  logFileText,
  makePlugin,
  memoryContext,
  newMessage,
  temporaryFolder,
  userMessage,
} from "./harness.js";

let temp;

before(async () => {
  temp = await temporaryFolder();
});

after(async () => {
  await temp.remove();
});

const idle = (sessionID) => ({ event: { type: "session.idle", properties: { sessionID } } });
const SECRET_WORDS = "my bank PIN is 4321 and the deploy password is hunter2";

async function elapsed(action) {
  const started = performance.now();
  await action();
  return performance.now() - started;
}

let down;

beforeEach(async () => {
  down = await fakeServer();
  await down.close(); // its address now refuses connections
});

test("a server that is not running: no memories, no error, and the session goes on", async () => {
  const { client, logs } = fakeOpenCode();
  const hooks = await makePlugin({ server: down, folder: temp.folder, client });
  const { input, output } = newMessage("ses_down", SECRET_WORDS);

  await hooks["chat.message"](input, output);

  assert.equal(output.parts.length, 1);
  assert.equal(output.parts[0].text, SECRET_WORDS);
  // Once the opening memories' request failed, the prompt's is not tried.
  assert.equal(
    logs.filter((entry) => /unreachable \(ECONNREFUSED\)/.test(entry.message)).length,
    1,
  );
  assert.ok(logs.every((entry) => entry.service === "emergent-memory"));
  for (const entry of logs) {
    assert.ok(!entry.message.includes(TOKEN) && !entry.message.includes("hunter2"));
  }
});

test("a session's opening memories are asked for again once the server is back", async () => {
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server: down, folder: temp.folder, client });
  const first = newMessage("ses_back", "a question about the build system");
  await hooks["chat.message"](first.input, first.output);

  const back = await fakeServer(() => memoryContext("The build uses make."), { port: down.port });
  try {
    const second = newMessage("ses_back", "another question about the build system");
    await hooks["chat.message"](second.input, second.output);
    const third = newMessage("ses_back", "a third question about the build system");
    await hooks["chat.message"](third.input, third.output);

    assert.deepEqual(
      back.requests.map((request) => [request.body.event, request.body.source]),
      [
        ["session_start", "startup"],
        ["prompt", undefined],
        ["prompt", undefined],
      ],
    );
    assert.equal(second.output.parts.length, 3);
  } finally {
    await back.close();
  }
});

test("a server that never answers: chat.message gives up after its time limit", async () => {
  const slow = await fakeServer(() => ({ hang: true }));
  try {
    const { client, logs } = fakeOpenCode();
    const hooks = await makePlugin({ server: slow, folder: temp.folder, client });
    const { input, output } = newMessage("ses_slow", "a question about the build system");

    const took = await elapsed(() => hooks["chat.message"](input, output));

    // One request (session_start) times out after 1.5 s; the prompt's is not tried.
    assert.ok(took >= 1400 && took < 2500, `took ${took} ms`);
    assert.equal(slow.requests.length, 1);
    assert.equal(output.parts.length, 1);
    assert.ok(logs.some((entry) => /timed out/.test(entry.message)));

    // For a while after a time-out, messages do not wait for the server at all.
    const next = newMessage("ses_slow", "another question about the build system");
    const took2 = await elapsed(() => hooks["chat.message"](next.input, next.output));
    assert.ok(took2 < 500, `took ${took2} ms`);
    assert.equal(slow.requests.length, 1);
  } finally {
    await slow.close();
  }
});

test("a server that answers too slowly is given up on too", async () => {
  const slow = await fakeServer(() => ({ ...memoryContext("late memory"), delay: 2500 }));
  try {
    const { client } = fakeOpenCode();
    const hooks = await makePlugin({ server: slow, folder: temp.folder, client });
    const { input, output } = newMessage("ses_late", "a question about the build system");

    const took = await elapsed(() => hooks["chat.message"](input, output));

    assert.ok(took < 2500, `took ${took} ms`);
    assert.equal(output.parts.length, 1);
  } finally {
    await slow.close();
  }
});

test("a capture that never gets an answer ends after its time limit; the messages wait", async () => {
  const slow = await fakeServer(() => ({ hang: true }));
  try {
    const { client, messages } = fakeOpenCode();
    messages.ses_hang = [userMessage("ses_hang", "msg_01", SECRET_WORDS)];
    const hooks = await makePlugin({ server: slow, folder: temp.folder, client });

    const took = await elapsed(() => hooks.event(idle("ses_hang")));

    assert.ok(took >= 2900 && took < 4000, `took ${took} ms`);
    slow.respond = () => ({});
    await hooks.event(idle("ses_hang"));
    const sent = slow.of("/api/v1/capture").map((request) => request.body);
    assert.deepEqual(
      sent.map((body) => [body.first_index, body.messages.length]),
      [
        [0, 1],
        [0, 1],
      ],
    );
  } finally {
    await slow.close();
  }
});

test("a refused token (401): nothing injected, nothing thrown, the status logged", async () => {
  const refusing = await fakeServer(() => ({
    status: 401,
    body: { error: { code: "unauthorized", message: `bad token ${TOKEN}: ${SECRET_WORDS}` } },
  }));
  try {
    const { client, logs, messages } = fakeOpenCode();
    messages.ses_401 = [userMessage("ses_401", "msg_01", SECRET_WORDS)];
    const hooks = await makePlugin({ server: refusing, folder: temp.folder, client });
    const { input, output } = newMessage("ses_401", SECRET_WORDS);

    await hooks["chat.message"](input, output);
    await hooks.event(idle("ses_401"));

    assert.equal(output.parts.length, 1);
    assert.ok(logs.some((entry) => entry.message.includes("answered 401 (unauthorized)")));
    const all = JSON.stringify(logs);
    assert.ok(!all.includes(TOKEN) && !all.includes("hunter2") && !all.includes("bank PIN"));
  } finally {
    await refusing.close();
  }
});

test("a redirect is not followed: the token goes to the configured server only", async () => {
  const elsewhere = await fakeServer(() => memoryContext("from elsewhere"));
  const redirecting = await fakeServer((request) => ({
    status: 307,
    headers: { location: `${elsewhere.url}${request.path}` },
    body: {},
  }));
  try {
    const { client, logs } = fakeOpenCode();
    const hooks = await makePlugin({ server: redirecting, folder: temp.folder, client });
    const { input, output } = newMessage("ses_redirect", "what does the worker do on retries");

    await hooks["chat.message"](input, output);

    assert.equal(redirecting.requests.length, 1);
    assert.equal(elsewhere.requests.length, 0);
    assert.equal(output.parts.length, 1);
    assert.ok(logs.some((entry) => entry.message.includes("unreachable")));
  } finally {
    await redirecting.close();
    await elsewhere.close();
  }
});

test("an answer that is not JSON injects nothing", async () => {
  const odd = await fakeServer(() => ({ status: 200, body: "not json at all" }));
  try {
    const { client } = fakeOpenCode();
    const hooks = await makePlugin({ server: odd, folder: temp.folder, client });
    const { input, output } = newMessage("ses_odd", "what does the worker do on retries");

    await hooks["chat.message"](input, output);

    assert.equal(output.parts.length, 1);
  } finally {
    await odd.close();
  }
});

test("an OpenCode client that fails does not break the hooks", async () => {
  const server = await fakeServer(() => memoryContext("The user prefers tabs."));
  try {
    const client = {
      session: {
        get: async () => {
          throw new Error("boom");
        },
        messages: async () => ({ error: { name: "NotFound" }, response: { status: 404 } }),
      },
    };
    const hooks = await makePlugin({ server, folder: temp.folder, client });
    const { input, output } = newMessage("ses_sdk", "where are the fixtures kept");

    await hooks["chat.message"](input, output);
    await hooks.event(idle("ses_sdk"));

    // Injection still works (a session of unknown kind is treated as the user's own);
    // capture waits, since the messages could not be read.
    assert.equal(output.parts.length, 3);
    assert.equal(server.of("/api/v1/capture").length, 0);
  } finally {
    await server.close();
  }
});

test("without OpenCode's log, problems go to the hooks' log file, without secrets", async () => {
  const own = await temporaryFolder();
  try {
    const { client } = fakeOpenCode({ log: false });
    const hooks = await makePlugin({ server: down, folder: own.folder, client });
    const { input, output } = newMessage("ses_file", SECRET_WORDS);

    await hooks["chat.message"](input, output);

    assert.ok(
      await eventually(async () => (await logFileText(own.folder)).includes("ECONNREFUSED")),
    );
    const text = await logFileText(own.folder);
    assert.match(text, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ WARN opencode \[\d+\] /);
    assert.ok(!text.includes(TOKEN) && !text.includes("hunter2"));
  } finally {
    await own.remove();
  }
});

test("the plugin never throws, whatever OpenCode hands it", async () => {
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({ server: down, folder: temp.folder, client });

  await hooks["chat.message"](undefined, undefined);
  await hooks["chat.message"]({ sessionID: "ses_x" }, { parts: null });
  await hooks["experimental.session.compacting"](undefined, undefined);
  await hooks["experimental.chat.system.transform"](undefined, undefined);
  await hooks.event(undefined);
  await hooks.event({ event: { type: "session.idle", properties: {} } });
  await hooks.event({ event: { type: "message.updated", properties: { info: {} } } });
  await hooks.dispose();
});
