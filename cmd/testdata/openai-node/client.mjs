// The official openai npm package against a running herald gateway
// (cmd/e2e_openai_test.go runs it with HERALD_BASE_URL and HERALD_TOKEN).
import { createRequire } from "node:module";
import path from "node:path";

// NODE_PATH is not read for ES modules: resolve the package from it.
const require = createRequire(path.join(process.env.NODE_PATH, "x.js"));
const OpenAI = require("openai").default ?? require("openai");

const client = new OpenAI({ baseURL: process.env.HERALD_BASE_URL, apiKey: process.env.HERALD_TOKEN, maxRetries: 0 });

const models = await client.models.list();
console.log("models: " + models.data.map((m) => m.id).join(","));

const chat = await client.chat.completions.create({ model: "herald", messages: [{ role: "user", content: "hello from node" }] });
console.log("chat: " + chat.choices[0].message.content.replace(/\n/g, " "));

const stream = await client.chat.completions.create({ model: "herald", stream: true, messages: [{ role: "user", content: "stream from node" }] });
let text = "", finish = "";
for await (const chunk of stream) {
  text += chunk.choices[0]?.delta?.content ?? "";
  finish = chunk.choices[0]?.finish_reason ?? finish;
}
console.log("stream: " + text.replace(/\n/g, " "));
console.log("stream-finish: " + finish);

const first = await client.responses.create({ model: "herald", input: "response from node" });
console.log("response: " + first.output_text.replace(/\n/g, " "));
const second = await client.responses.create({ model: "herald", input: "second response", previous_response_id: first.id });
console.log("response-previous: " + (second.previous_response_id === first.id));
const rstream = await client.responses.create({ model: "herald", input: "streamed response", stream: true });
let rtext = "", rdone = "";
for await (const ev of rstream) {
  if (ev.type === "response.output_text.delta") rtext += ev.delta;
  if (ev.type === "response.completed") rdone = ev.response.status;
}
console.log("response-stream: " + rtext.replace(/\n/g, " "));
console.log("response-stream-status: " + rdone);
const got = await client.responses.retrieve(first.id);
console.log("response-retrieved: " + (got.id === first.id));
await client.responses.del(first.id);
let gone = false;
try { await client.responses.retrieve(first.id); } catch (e) { gone = e.status === 404; }
console.log("response-deleted: " + gone);
