// The JavaScript side of SPEC §13.1 and the turn.route suite: answers a
// matcher or a list of rules against a message with the engine's own RegExp.
// `node oracle.mjs < cases.jsonl > vectors.jsonl` reads cases whose `expect`
// is missing and writes them answered (the format of ../../crates/
// skill-conformance/vectors/turn.jsonl). Node 20 answered the shipped files.

import { createInterface } from "node:readline";

class Refused extends Error {}

const SPACE = /\s+/g;
const WORD = /[A-Za-z0-9_]/;

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function compile(match) {
  if (!isPlainObject(match)) throw new Refused();
  const keys = Object.keys(match);
  if (keys.includes("regex")) {
    if (keys.some((k) => k !== "regex" && k !== "flags")) throw new Refused();
    if (typeof match.regex !== "string") throw new Refused();
    let flags = "";
    if ("flags" in match) {
      if (typeof match.flags !== "string") throw new Refused();
      if ([...match.flags].some((f) => !"imsugyd".includes(f))) throw new Refused();
      if (new Set(match.flags).size !== match.flags.length) throw new Refused();
      flags = [...match.flags].filter((f) => "imsu".includes(f)).join("");
    }
    let re;
    try {
      re = new RegExp(match.regex, flags);
    } catch {
      throw new Refused();
    }
    return [{ kind: "regex", re }];
  }
  if (keys.length === 1 && keys[0] === "keywords") {
    const list = match.keywords;
    if (!Array.isArray(list) || list.length === 0) throw new Refused();
    const res = list.map((k) => {
      if (typeof k !== "string" || k.trim() === "") throw new Refused();
      const body = k.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
      const before = WORD.test(k[0]) ? "\\b" : "";
      const after = WORD.test(k[k.length - 1]) ? "\\b" : "";
      return new RegExp(before + body + after, "i");
    });
    return [{ kind: "keywords", res }];
  }
  if (keys.length === 1 && keys[0] === "all") {
    const list = match.all;
    if (!Array.isArray(list) || list.length === 0) throw new Refused();
    return list.flatMap(compile);
  }
  throw new Refused();
}

function witnessOf(text) {
  const collapsed = text.replace(SPACE, " ").trim();
  if (collapsed.length <= 80) return collapsed;
  let cut = 79;
  const last = collapsed.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) {
    const next = collapsed.charCodeAt(cut);
    if (next >= 0xdc00 && next <= 0xdfff) cut -= 1;
  }
  return collapsed.slice(0, cut) + "…";
}

function find(parts, message) {
  let witness = null;
  for (const part of parts) {
    let found = null;
    const res = part.kind === "regex" ? [part.re] : part.res;
    for (const re of res) {
      const m = re.exec(message);
      if (m) {
        found = m[0];
        break;
      }
    }
    if (found === null) return null;
    if (witness === null) witness = witnessOf(found);
  }
  return witness;
}

function answerMatch(input) {
  let parts;
  try {
    parts = compile(input.match);
  } catch (e) {
    if (e instanceof Refused) return { ok: false, refusal: "rule-refused" };
    throw e;
  }
  const witness = find(parts, input.message);
  return { ok: true, matched: witness !== null, witness };
}

function answerRoute(input) {
  const hidden = new Set(input.hidden ?? []);
  for (const [rule, r] of input.rules.entries()) {
    if (hidden.has(r.use)) continue;
    const witness = find(compile(r.match), input.message);
    if (witness !== null) return { routed: { rule, use: r.use, witness } };
  }
  return { routed: null };
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line.trim() === "") continue;
  const c = JSON.parse(line);
  const answer = c.suite === "turn.match" ? answerMatch(c.input) : answerRoute(c.input);
  if ("expect" in c && JSON.stringify(c.expect) !== JSON.stringify(answer)) {
    process.stderr.write(`differs: ${c.name}: ${JSON.stringify(answer)} vs ${JSON.stringify(c.expect)}\n`);
  }
  const answered = JSON.stringify({ suite: c.suite, name: c.name, input: c.input, expect: answer });
  // A witness that is half a surrogate pair (possible only without `u`)
  // cannot be written in UTF-8 JSON: such a case is left out, and said.
  if (/\\u(d[89ab][0-9a-f]{2}(?!\\ud[c-f])|(?<!\\ud[89ab][0-9a-f]{2})d[c-f][0-9a-f]{2})/.test(answered)) {
    process.stderr.write(`left out ${c.name}: its answer holds a lone surrogate\n`);
    continue;
  }
  process.stdout.write(answered + "\n");
}
