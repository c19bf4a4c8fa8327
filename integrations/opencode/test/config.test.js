// Configuration (the environment, else the hooks file of `emergent-memory hooks install`)
// and the project the requests name.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, mkdir, realpath, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, beforeEach, test } from "node:test";

import {
  PROJECT_ID,
  fakeOpenCode,
  fakeServer,
  makePlugin,
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

const idle = (sessionID) => ({ event: { type: "session.idle", properties: { sessionID } } });

async function hooksFile(name, content, mode = 0o600) {
  const file = path.join(temp.folder, name);
  await writeFile(file, typeof content === "string" ? content : JSON.stringify(content));
  await chmod(file, mode);
  return file;
}

/** A message, then an idle: the context requests, then a capture (when `messages` is the
 * fake client's, which then holds the message). */
async function exercise(hooks, sessionID, messages) {
  const text = "how are the migrations organised here";
  const { input, output } = newMessage(sessionID, text);
  await hooks["chat.message"](input, output);
  if (messages) messages[sessionID] = [userMessage(sessionID, input.messageID, text)];
  await hooks.event(idle(sessionID));
  return output;
}

test("without a token (no hooks file, no variable) nothing is sent, and it is logged once", async () => {
  const { client, logs, messages } = fakeOpenCode();
  const hooks = await makePlugin({
    server,
    folder: temp.folder,
    client,
    env: { EMERGENT_MEMORY_HOOK_TOKEN: undefined },
  });

  const output = await exercise(hooks, "ses_none", messages);
  await exercise(hooks, "ses_none", messages);

  assert.equal(server.requests.length, 0);
  assert.equal(output.parts.length, 1);
  const told = logs.filter((entry) => entry.message.includes("no token for the memory server"));
  assert.equal(told.length, 1);
  assert.match(told[0].message, /emergent-memory hooks install/);
});

test("the hooks file gives the URL and the token", async () => {
  const file = await hooksFile("hooks.json", {
    url: `${server.url}/`,
    token: "emt_from_the_file",
    start_command: null,
  });
  const { client, messages } = fakeOpenCode();
  const hooks = await makePlugin({
    server: null,
    folder: temp.folder,
    client,
    env: { EMERGENT_MEMORY_HOOK_TOKEN: undefined, EMERGENT_MEMORY_HOOK_CONFIG: file },
  });

  await exercise(hooks, "ses_file", messages);

  assert.deepEqual(
    server.requests.map((request) => request.path),
    ["/api/v1/context", "/api/v1/context", "/api/v1/capture"],
  );
  for (const request of server.requests) {
    assert.equal(request.headers.authorization, "Bearer emt_from_the_file");
  }
});

test("the hooks file is found in $XDG_CONFIG_HOME/emergent-memory/hooks.json", async () => {
  const config = path.join(temp.folder, "xdg");
  await mkdir(path.join(config, "emergent-memory"), { recursive: true });
  await hooksFile(path.join("xdg", "emergent-memory", "hooks.json"), {
    url: server.url,
    token: "emt_from_xdg",
  });
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({
    server: null,
    folder: temp.folder,
    client,
    env: {
      EMERGENT_MEMORY_HOOK_TOKEN: undefined,
      EMERGENT_MEMORY_HOOK_CONFIG: undefined,
      XDG_CONFIG_HOME: config,
    },
  });

  await exercise(hooks, "ses_xdg");

  assert.ok(server.requests.length >= 1);
  assert.equal(server.requests[0].headers.authorization, "Bearer emt_from_xdg");
});

test("the environment's URL and token come before the hooks file's", async () => {
  const file = await hooksFile("hooks-other.json", {
    url: "http://127.0.0.1:9/nowhere",
    token: "emt_from_the_file",
  });
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({
    server,
    folder: temp.folder,
    client,
    env: { EMERGENT_MEMORY_HOOK_TOKEN: "emt_from_env", EMERGENT_MEMORY_HOOK_CONFIG: file },
  });

  await exercise(hooks, "ses_env");

  assert.ok(server.requests.length >= 1);
  assert.equal(server.requests[0].headers.authorization, "Bearer emt_from_env");
});

test("a hooks file others may read is not used, and the log says how to fix it", async () => {
  const file = await hooksFile("hooks-open.json", { url: server.url, token: "emt_open" }, 0o644);
  const { client, logs } = fakeOpenCode();
  const hooks = await makePlugin({
    server: null,
    folder: temp.folder,
    client,
    env: { EMERGENT_MEMORY_HOOK_TOKEN: undefined, EMERGENT_MEMORY_HOOK_CONFIG: file },
  });

  await exercise(hooks, "ses_open");

  assert.equal(server.requests.length, 0);
  assert.ok(logs.some((entry) => entry.message.includes(`chmod 600 ${file}`)));
  assert.ok(!JSON.stringify(logs).includes("emt_open"));
});

test("a hooks file that is not JSON is not used", async () => {
  const file = await hooksFile("hooks-broken.json", '{"url": "http://127.0.0.1", "token": "emt_');
  const { client, logs } = fakeOpenCode();
  const hooks = await makePlugin({
    server: null,
    folder: temp.folder,
    client,
    env: { EMERGENT_MEMORY_HOOK_TOKEN: undefined, EMERGENT_MEMORY_HOOK_CONFIG: file },
  });

  await exercise(hooks, "ses_broken");

  assert.equal(server.requests.length, 0);
  assert.ok(logs.some((entry) => entry.message.includes("is not valid JSON")));
});

test("a URL that is not http(s) is refused", async () => {
  const { client, logs } = fakeOpenCode();
  const hooks = await makePlugin({
    server: null,
    folder: temp.folder,
    client,
    env: { EMERGENT_MEMORY_HOOK_URL: "ftp://127.0.0.1:8765" },
  });

  await exercise(hooks, "ses_ftp");

  assert.equal(server.requests.length, 0);
  assert.ok(logs.some((entry) => entry.message.includes("must start with http://")));
});

// -- the project -------------------------------------------------------------------------------

const NAMESPACE = "6f1c2d3e-9b8a-4c5d-8e7f-0a1b2c3d4e5f";

/** uuid5 as Python's uuid.uuid5 computes it: the test's own oracle. */
function uuid5(name) {
  const hash = createHash("sha1")
    .update(Buffer.from(NAMESPACE.replace(/-/g, ""), "hex"))
    .update(name, "utf8")
    .digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

test("the oracle agrees with Python's derived_project_id", () => {
  // .venv/bin/python -c "import uuid; from emergent_memory.auth.local_ids import
  //   DEFAULT_ID_NAMESPACE as N; print(uuid.uuid5(N, 'project:/tmp/some repo/é'))"
  assert.equal(uuid5("project:/tmp/some repo/é"), "46a46d82-aa65-50d1-a005-a07dc2e2b761");
});

async function projectSent(directory, env = {}) {
  server.requests.length = 0;
  const { client } = fakeOpenCode();
  const hooks = await makePlugin({
    server,
    folder: temp.folder,
    client,
    directory,
    env: { EMERGENT_MEMORY_PROJECT_ID: undefined, ...env },
  });
  await exercise(hooks, `ses_${Math.random().toString(36).slice(2)}`);
  assert.ok(server.requests.length >= 1);
  const named = new Set(server.requests.map((request) => request.body.project_id));
  assert.equal(named.size, 1, "every request names the same project");
  return [...named][0];
}

test("the project is the git repository's, as the Claude Code hooks derive it", async () => {
  const repository = path.join(temp.folder, "a repository");
  const inside = path.join(repository, "src", "deep");
  await mkdir(inside, { recursive: true });
  execFileSync("git", ["init", "-q", repository]);

  const project = await projectSent(inside);

  assert.equal(project, uuid5(`project:${await realpath(repository)}`));
});

test("outside a git repository, the project is the directory's", async () => {
  const plain = path.join(temp.folder, "plain");
  await mkdir(plain, { recursive: true });

  const project = await projectSent(plain);

  assert.equal(project, uuid5(`project:${await realpath(plain)}`));
});

test("EMERGENT_MEMORY_PROJECT_ID names the project instead", async () => {
  assert.equal(
    await projectSent(temp.folder, { EMERGENT_MEMORY_PROJECT_ID: PROJECT_ID }),
    PROJECT_ID,
  );
});

test("an EMERGENT_MEMORY_PROJECT_ID that is not a UUID is not sent", async () => {
  assert.equal(
    await projectSent(temp.folder, { EMERGENT_MEMORY_PROJECT_ID: "my-project" }),
    undefined,
  );
});

test("a token that may not choose its project (403) is used in its own project", async () => {
  server.respond = (request) =>
    request.body.project_id
      ? {
          status: 403,
          body: { error: { code: "forbidden", message: "this token acts only in ..." } },
        }
      : {};
  const { client, logs, messages } = fakeOpenCode();
  const hooks = await makePlugin({
    server,
    folder: temp.folder,
    client,
    env: { EMERGENT_MEMORY_PROJECT_ID: undefined },
  });

  await exercise(hooks, "ses_bound", messages);
  await exercise(hooks, "ses_bound", messages);

  const named = server.requests.map((request) => Boolean(request.body.project_id));
  // The first request named the project and was refused; every later one names none.
  assert.equal(named[0], true);
  assert.ok(named.slice(1).every((value) => value === false));
  assert.ok(server.requests.some((request) => request.path === "/api/v1/capture"));
  assert.equal(logs.filter((entry) => entry.message.includes("(403)")).length, 1);
});

test("a 403 for another reason (the retry is refused too) keeps naming the project", async () => {
  server.respond = () => ({
    status: 403,
    body: { error: { code: "forbidden", message: "this token may not write" } },
  });
  const { client, logs, messages } = fakeOpenCode();
  const hooks = await makePlugin({
    server,
    folder: temp.folder,
    client,
    env: { EMERGENT_MEMORY_PROJECT_ID: undefined },
  });

  await exercise(hooks, "ses_scope", messages);
  server.requests.length = 0;
  await exercise(hooks, "ses_scope2", messages);

  assert.ok(server.requests.length >= 1);
  assert.ok(server.requests[0].body.project_id);
  assert.ok(!logs.some((entry) => entry.message.includes("token's own project")));
});
