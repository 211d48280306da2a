// `april serve` on its default flags, driven by a client the project did not
// write: the official openai SDK for Node.js (pinned in package.json,
// installed by scripts/setup.sh). Models; completions and chat, streamed and
// not, equal to each other; text prompts and stop strings; n choices and
// seeds; a stream closed by its client aborted in the engine; 64 concurrent
// requests each equal to itself alone; and every bad request a 4xx that the
// SDK surfaces as its own error class with a readable message and the field.
//
// usage: node check.mjs APRIL CHECKPOINT_DIR
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import OpenAI from "openai";

const [april, checkpoint] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => {
  if (!ok) {
    failures.push(what);
    console.log("FAIL:", what);
  }
};

function startServer() {
  const server = spawn(april, ["serve", "--checkpoint", checkpoint, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the server did not start within 60 s")), 60000);
    createInterface({ input: server.stdout }).on("line", (line) => {
      const at = line.indexOf("listening on http://");
      if (at >= 0) {
        clearTimeout(timer);
        resolve({ server, url: line.slice(at + "listening on ".length).trim() });
      }
    });
    server.on("exit", (code) => reject(new Error(`the server exited (${code}) before listening`)));
  });
}

// The error the SDK throws for a request, or null when it succeeded.
async function errorOf(call) {
  try {
    await call();
    return null;
  } catch (e) {
    return e;
  }
}

const { server, url } = await startServer();
try {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "none", maxRetries: 0, timeout: 120000 });
  const serverInfo = async () => {
    const info = await (await fetch(`${url}/get_server_info`)).json();
    const loads = await (await fetch(`${url}/v1/loads`)).json();
    return { ...info, running_requests: loads.loads[0].num_running_reqs };
  };

  // 1. The model list names the checkpoint, as vLLM names a served path.
  const models = await client.models.list();
  const model = models.data[0]?.id;
  check(model === checkpoint, `models.list: ${JSON.stringify(models.data)}`);

  // 2. A text completion, whole and streamed: the same ids and text.
  const ask = { model, prompt: "The answer to 2+2 is", max_tokens: 24, temperature: 0, ignore_eos: true };
  const whole = await client.completions.create(ask);
  const c0 = whole.choices[0];
  check(typeof c0.text === "string" && c0.text.length > 0, `completion text: ${JSON.stringify(c0.text)}`);
  check(c0.token_ids.length === 24 && whole.usage.completion_tokens === 24 && c0.finish_reason === "length",
        `completion: ${c0.token_ids.length} ids, usage ${JSON.stringify(whole.usage)}, finish ${c0.finish_reason}`);
  let streamedText = "";
  let streamedIds = [];
  let finish = null;
  for await (const chunk of await client.completions.create({ ...ask, stream: true })) {
    for (const ch of chunk.choices) {
      streamedText += ch.text;
      streamedIds = streamedIds.concat(ch.token_ids ?? []);
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  check(streamedText === c0.text && JSON.stringify(streamedIds) === JSON.stringify(c0.token_ids) && finish === "length",
        `streamed completion differs: ${JSON.stringify(streamedText)} vs ${JSON.stringify(c0.text)}`);

  // 3. A stop string: the text ends before it, finish "stop", vLLM's stop_reason.
  const cut = c0.text.length >= 8 ? c0.text.slice(4, 7) : null;
  if (check(cut !== null, `the greedy text is too short for a stop string: ${JSON.stringify(c0.text)}`), cut !== null) {
    const stopped = (await client.completions.create({ ...ask, stop: [cut] })).choices[0];
    const want = c0.text.slice(0, c0.text.indexOf(cut));
    check(stopped.text === want && stopped.finish_reason === "stop" && stopped.stop_reason === cut,
          `stop ${JSON.stringify(cut)}: ${JSON.stringify(stopped.text)} (want ${JSON.stringify(want)}), ${stopped.finish_reason}`);
    let streamedStop = "";
    for await (const chunk of await client.completions.create({ ...ask, stop: cut, stream: true })) {
      for (const ch of chunk.choices) streamedStop += ch.text;
    }
    check(streamedStop === want, `streamed stop: ${JSON.stringify(streamedStop)} (want ${JSON.stringify(want)})`);
  }

  // 4. Chat, whole and streamed, with the checkpoint's template.
  const talk = { model, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "What is 2+2?" }],
                 max_completion_tokens: 16, temperature: 0 };
  const chat = await client.chat.completions.create(talk);
  const m = chat.choices[0];
  check(chat.object === "chat.completion" && m.message.role === "assistant" && typeof m.message.content === "string",
        `chat: ${JSON.stringify(chat).slice(0, 300)}`);
  let chatStreamed = "";
  let role = null;
  let usage = null;
  for await (const chunk of await client.chat.completions.create({ ...talk, stream: true, stream_options: { include_usage: true } })) {
    for (const ch of chunk.choices) {
      if (ch.delta.role) role = ch.delta.role;
      chatStreamed += ch.delta.content ?? "";
    }
    if (chunk.usage) usage = chunk.usage;
  }
  check(chatStreamed === m.message.content && role === "assistant", `streamed chat differs: ${JSON.stringify(chatStreamed)} vs ${JSON.stringify(m.message.content)}`);
  check(usage !== null && usage.completion_tokens === chat.usage.completion_tokens, `chat usage: ${JSON.stringify(usage)} vs ${JSON.stringify(chat.usage)}`);

  // 5. Seeds: the same seed samples the same text, and n choices sample apart.
  const sampled = { model, prompt: "Once", max_tokens: 16, temperature: 1, ignore_eos: true };
  const s1 = await client.completions.create({ ...sampled, seed: 7 });
  const s2 = await client.completions.create({ ...sampled, seed: 7 });
  check(JSON.stringify(s1.choices[0].token_ids) === JSON.stringify(s2.choices[0].token_ids), "seed 7 twice: different samples");
  const three = await client.completions.create({ ...sampled, seed: 7, n: 3 });
  check(three.choices.length === 3 && three.choices.map((c) => c.index).join() === "0,1,2", `n 3: ${three.choices.length} choices`);
  check(JSON.stringify(three.choices[0].token_ids) === JSON.stringify(s1.choices[0].token_ids), "n 3: choice 0 is not seed 7's sample");
  check(new Set(three.choices.map((c) => JSON.stringify(c.token_ids))).size === 3, "n 3 with a seed: choices are not sampled apart");

  // 6. A stream its client closes is aborted in the engine.
  const before = (await serverInfo()).aborted_requests;
  const long = await client.completions.create({ model, prompt: "Count:", max_tokens: 240, temperature: 0, ignore_eos: true, stream: true });
  let received = 0;
  for await (const chunk of long) {
    received += chunk.choices[0]?.token_ids?.length ?? 0;
    if (received >= 3) break;  // leaving the loop closes the stream
  }
  let info = await serverInfo();
  for (let i = 0; i < 200 && (info.aborted_requests !== before + 1 || info.running_requests !== 0); ++i) {
    await new Promise((r) => setTimeout(r, 50));
    info = await serverInfo();
  }
  check(info.aborted_requests === before + 1 && info.running_requests === 0,
        `a closed stream: aborted ${info.aborted_requests - before}, running ${info.running_requests}`);

  // 7. 64 concurrent greedy requests, each equal to itself alone.
  const prompts = Array.from({ length: 64 }, (_, i) => `Question ${i}: what is ${i} + ${2 * i}?`);
  const one = (p) => client.completions.create({ model, prompt: p, max_tokens: 12, temperature: 0, ignore_eos: true });
  const alone = [];
  for (const p of prompts.slice(0, 16)) alone.push((await one(p)).choices[0]);
  const together = (await Promise.all(prompts.map(one))).map((r) => r.choices[0]);
  let differ = 0;
  for (let i = 0; i < alone.length; ++i) {
    if (JSON.stringify(alone[i].token_ids) !== JSON.stringify(together[i].token_ids) || alone[i].text !== together[i].text) ++differ;
  }
  check(differ === 0, `${differ} of ${alone.length} requests differ when sent with 63 others`);
  // The rest alone after the burst, against the burst's answers.
  for (let i = 16; i < 64; ++i) {
    if (JSON.stringify((await one(prompts[i])).choices[0].token_ids) !== JSON.stringify(together[i].token_ids)) ++differ;
  }
  check(differ === 0, `${differ} of 64 concurrent requests differ from the same request alone`);

  // 8. Bad requests: 4xx, the SDK's own error class, a readable message and the field.
  const bad = [
    ["an unknown model", () => client.completions.create({ ...ask, model: "no/such-model" }), OpenAI.NotFoundError, 404, "model"],
    ["max_tokens past the context", () => client.completions.create({ ...ask, max_tokens: 1000000 }), OpenAI.BadRequestError, 400, "max_tokens"],
    ["top log-probs", () => client.completions.create({ ...ask, logprobs: 5 }), OpenAI.BadRequestError, 400, "logprobs"],
    ["n past its bound", () => client.completions.create({ ...ask, n: 1000 }), OpenAI.BadRequestError, 400, "n"],
    ["no messages", () => client.chat.completions.create({ ...talk, messages: [] }), OpenAI.BadRequestError, 400, "messages"],
    ["a tool message", () => client.chat.completions.create({ ...talk, messages: [{ role: "tool", content: "x", tool_call_id: "1" }] }),
     OpenAI.BadRequestError, 400, "messages.0.role"],
    ["tools", () => client.chat.completions.create({ ...talk, tools: [{ type: "function", function: { name: "f" } }] }),
     OpenAI.BadRequestError, 400, "tools"],
    ["a temperature of the wrong type", () => client.chat.completions.create({ ...talk, temperature: "hot" }), OpenAI.BadRequestError, 400,
     "temperature"],
    ["an unknown field", () => client.completions.create({ ...ask, beam_width: 4 }), OpenAI.BadRequestError, 400, "beam_width"],
  ];
  for (const [what, call, cls, status, param] of bad) {
    const e = await errorOf(call);
    check(e instanceof cls && e.status === status && e.param === param && typeof e.message === "string" && e.message.length > 10 &&
            !/undefined|\[object/.test(e.message),
          `${what}: ${e ? `${e.constructor.name} ${e.status} param ${e.param}: ${e.message}` : "accepted"}`);
  }
  check((await serverInfo()).running_requests === 0, "requests still running at the end");
} catch (e) {
  check(false, `${e.constructor.name}: ${e.message}`);
} finally {
  server.kill("SIGTERM");
}
if (failures.length) {
  console.log(`${failures.length} failures`);
  process.exit(1);
}
console.log("april serve with the openai SDK for Node.js: checks ok");
