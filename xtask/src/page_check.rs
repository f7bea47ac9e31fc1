//! The run's page in a real browser (SPEC §12): the shipped refund
//! conversation is played, its record made into a page by `skillgraph
//! explain --format html`, and `interop/page.cjs` loads it in Debian's
//! headless Chromium through playwright-core: no console error, no network
//! request, the facts in its text with JavaScript on and off, and a
//! screenshot kept at `target/interop/page/refund.png`. Chromium is
//! installed with `apt-get install -y chromium` when it is missing.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::interop::text;
use crate::run;

/// Where Debian's package puts the browser.
const CHROMIUM: &str = "/usr/bin/chromium";

/// What the refund conversation's page must say, as its text reads.
const FACTS: [&str; 7] = [
    "The cursor is on refunds at the end of iteration 3",
    "triage → refunds by the route \"risky refund\"",
    "amount ≥ gte 100 240 ✓ yes",
    "The route superseded the model's pick of billing",
    "A read of shipping was refused (unreachable",
    "The offer the model was shown",
    "refunds: issue_refund",
];

/// Play the refund conversation, write its page under `interop`
/// (`target/interop`), and check the page in Chromium with the
/// playwright-core and the `node` installed under `interop/npm`.
pub fn in_browser(root: &Path, interop: &Path, skillgraph: &str) -> Result<()> {
    let chromium = ensure_chromium(root)?;
    let modules = interop.join("npm").join("node_modules");
    let node = modules.join(".bin").join("node");
    let folder = interop.join("page");
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let record = folder.join("refund.jsonl");
    let page = folder.join("refund.html");
    let example = root.join("examples").join("support-desk");
    let script = std::fs::File::open(example.join("conversations").join("refund.jsonl"))
        .context("examples/support-desk/conversations/refund.jsonl cannot be read")?;
    let played = Command::new(skillgraph)
        .args(["play", &text(&example)?, "--record", &text(&record)?])
        .stdin(script)
        .stdout(Stdio::null())
        .status()
        .context("skillgraph play could not start")?;
    if !played.success() {
        bail!("skillgraph play failed on the refund conversation ({played})");
    }
    let explained = Command::new(skillgraph)
        .args(["explain", &text(&record)?, "--format", "html"])
        .output()
        .context("skillgraph explain could not start")?;
    if !explained.status.success() {
        bail!(
            "skillgraph explain --format html failed: {}",
            String::from_utf8_lossy(&explained.stderr)
        );
    }
    std::fs::write(&page, &explained.stdout)
        .with_context(|| format!("cannot write {}", page.display()))?;
    println!(
        "ok  the refund conversation's page: {} bytes (goal under 200 KiB)",
        explained.stdout.len()
    );
    let mut args = vec![
        text(&root.join("interop").join("page.cjs"))?,
        "--playwright".to_owned(),
        text(&modules)?,
        "--chromium".to_owned(),
        chromium,
        "--page".to_owned(),
        text(&page)?,
        "--screenshot".to_owned(),
        text(&folder.join("refund.png"))?,
    ];
    for fact in FACTS {
        args.extend(["--expect".to_owned(), fact.to_owned()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if run(root, &text(&node)?, &args)?.is_some() {
        bail!("the page failed in Chromium (its FAIL lines above say why)");
    }
    Ok(())
}

/// The browser's path, installing Debian's `chromium` when it is missing.
fn ensure_chromium(root: &Path) -> Result<String> {
    crate::debian::ensure(root, CHROMIUM, "chromium")?;
    text(Path::new(CHROMIUM))
}
