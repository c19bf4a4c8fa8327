// The marker rule: the plugin's copy of emergent_memory/markers.py, tested with the cases the
// Python function is tested with (tests/data/marker_cases.json, read by tests/test_markers.py
// too), through what capture sends.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, beforeEach, test } from "node:test";

import {
  assistantMessage,
  fakeOpenCode,
  fakeServer,
  makePlugin,
  temporaryFolder,
  toolPart,
} from "./harness.js";

const CASES = JSON.parse(
  await readFile(new URL("../../../tests/data/marker_cases.json", import.meta.url), "utf8"),
).cases;

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

const idle = (sessionID) => ({ event: { type: "session.idle", properties: { sessionID } } });

/** What capture sends of each case's text, as an assistant's text and as a tool's output. */
async function captured(sessionID) {
  const { client, messages } = fakeOpenCode();
  messages[sessionID] = CASES.map((c, n) =>
    assistantMessage(sessionID, `msg_${String(n).padStart(3, "0")}`, [
      c.text,
      toolPart("bash", { command: `case ${n}` }, { status: "completed", output: c.text }),
    ]),
  );
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  await hooks.event(idle(sessionID));
  const [request] = server.of("/api/v1/capture");
  return request.body.messages;
}

test("the marker cases hold", () => {
  assert.ok(CASES.length >= 20);
  assert.ok(CASES.some((c) => c.text.includes("<emergent-memory-cli>") && c.removed === 0));
});

test("capture cuts markers as emergent_memory/markers.py does, case for case", async () => {
  const sent = await captured("ses_markers");
  const expected = CASES.flatMap((c, n) => [
    ...(c.kept ? [{ role: "assistant", content: c.kept }] : []),
    { role: "tool", content: `called bash: case ${n}` },
    ...(c.kept ? [{ role: "tool", content: c.kept }] : []),
  ]);
  assert.deepEqual(sent, expected);
});

test("a longer name is not the marker: the rest of the turn is kept", async () => {
  const { client, messages } = fakeOpenCode();
  const text = "use the <emergent-memory-cli> wrapper, then run tests";
  messages.ses_cli = [assistantMessage("ses_cli", "msg_001", [text])];
  const hooks = await makePlugin({ server, folder: temp.folder, client });
  await hooks.event(idle("ses_cli"));
  const [request] = server.of("/api/v1/capture");
  assert.deepEqual(request.body.messages, [{ role: "assistant", content: text }]);
});
