// A run's page (`skillgraph explain RECORD --format html`) in a real headless
// Chromium, driven by playwright-core: it must load with no console error,
// no page error and no network request, and its text must hold the facts
// given with --expect, with JavaScript on and again with it off. A
// screenshot of the whole page is kept.
//
//   node interop/page.cjs --playwright DIR --chromium /usr/bin/chromium \
//     --page PAGE.html --screenshot PAGE.png --expect TEXT [--expect TEXT ...]
//
// Prints one `ok` line per check and exits 0, or prints FAIL lines and
// exits 1.

"use strict";

const path = require("path");
const { pathToFileURL } = require("url");

function options(argv) {
  const found = { expect: [] };
  for (let at = 0; at < argv.length; at += 2) {
    const [flag, value] = [argv[at], argv[at + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    const key = flag.replace(/^--/, "");
    if (key === "expect") found.expect.push(value);
    else if (["playwright", "chromium", "page", "screenshot"].includes(key)) found[key] = value;
    else throw new Error(`unknown option ${flag}`);
  }
  for (const key of ["playwright", "chromium", "page", "screenshot"]) {
    if (!found[key]) throw new Error(`--${key} is needed`);
  }
  return found;
}

// Chromium as this machine runs it: headless, and with the background
// connections it would try (and be refused) turned off.
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

async function visit(browser, url, javaScript, failures) {
  const context = await browser.newContext({ javaScriptEnabled: javaScript, viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const requests = [];
  const errors = [];
  page.on("request", (request) => {
    if (request.url() !== url) requests.push(request.url());
  });
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(url, { waitUntil: "load" });
  const text = await page.innerText("body");
  return { context, page, requests, errors, text };
}

async function main() {
  const found = options(process.argv.slice(2));
  const { chromium } = require(path.join(path.resolve(found.playwright), "playwright-core"));
  const url = pathToFileURL(path.resolve(found.page)).href;
  const failures = [];
  const browser = await chromium.launch({ executablePath: found.chromium, args: FLAGS });
  try {
    for (const javaScript of [true, false]) {
      const how = javaScript ? "with JavaScript" : "with JavaScript off";
      const seen = await visit(browser, url, javaScript, failures);
      if (seen.errors.length) failures.push(`${how}: console errors: ${seen.errors.join(" | ")}`);
      else console.log(`ok  ${how}: no console error`);
      if (seen.requests.length) failures.push(`${how}: network requests: ${seen.requests.join(", ")}`);
      else console.log(`ok  ${how}: no network request`);
      const flat = seen.text.replace(/\s+/g, " ");
      const missing = found.expect.filter((fact) => !flat.includes(fact));
      if (missing.length) failures.push(`${how}: the text lacks ${JSON.stringify(missing)}`);
      else console.log(`ok  ${how}: the text holds ${found.expect.length} facts`);
      if (javaScript) {
        await seen.page.screenshot({ path: found.screenshot, fullPage: true });
        console.log(`ok  screenshot: ${found.screenshot}`);
      }
      await seen.context.close();
    }
  } finally {
    await browser.close();
  }
  for (const failure of failures) console.log(`FAIL ${failure}`);
  process.exit(failures.length ? 1 : 0);
}

main().catch((error) => {
  console.log(`FAIL ${error && error.stack ? error.stack : error}`);
  process.exit(1);
});
