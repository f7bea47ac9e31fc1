//! `cargo xtask interop`: `skillgraph serve` against MCP clients and servers
//! nobody here wrote.
//!
//! The Python part: a virtual environment under `target/interop/venv` with
//! the Python SDK (`mcp` at [`MCP_VERSION`]), FastMCP ([`FASTMCP_VERSION`]),
//! the registry's `mcp-server-time` ([`TIME_SERVER_VERSION`]) and the Agent
//! Skills reference validator (`skills-ref` at [`SKILLS_REF_VERSION`]); a
//! copy of the support desk in `target/interop/desk` whose `skillmap.json`
//! declares `interop/upstream.py` as its upstream. On it, `interop/client.py`
//! (the SDK) and `interop/fastmcp_client.py` (FastMCP) run the scenario on
//! each protocol generation (the initialize handshake, and the clients'
//! default, the sessionless 2026-07-28 revision), over stdio and over
//! streamable HTTP; `interop/through.py` calls mcp-server-time through
//! `serve` the same four ways; then `interop/skills_parity.py` holds every
//! fixture collection's skills (`crates/skillgraph-cli/tests/collections`)
//! to the reference validator, and `interop/otlp_receiver.py` (on
//! `opentelemetry-proto`, [`OTLP_PROTO_VERSION`]) decodes the spans
//! `skillgraph play --otlp` and `serve --otlp` export (`otlp_check.rs`). The npm part (skipped with `--python-only`,
//! or when npm is not on PATH): the MCP inspector's CLI lists the tools and
//! calls `lookup_order` once; then, with [`NPM_PACKAGES`] installed under
//! `target/interop/npm`, server-everything's tools, resources and prompts
//! are reached through `serve` the four ways, and the official conformance
//! suite's server scenarios run against `serve --http` in front of
//! `interop/conformance_upstream.py` (`mcp_suite.rs`), turn cases drawn
//! afresh are answered by Node's RegExp and run against the project, and
//! the refund
//! conversation's page is loaded in headless Chromium (`page_check.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::run;

/// The Python SDK release the client and the upstream are written against.
const MCP_VERSION: &str = "2.3.0";
/// The Agent Skills reference validator release the loader's verdicts are
/// held to.
const SKILLS_REF_VERSION: &str = "0.1.1";
/// The FastMCP release whose client runs the scenario beside the SDK's.
const FASTMCP_VERSION: &str = "4.2.3";
/// The registry's time server, a real upstream behind `serve`.
const TIME_SERVER_VERSION: &str = "2026.10.19";
/// The official protobuf classes of OTLP, which the test receiver
/// (`interop/otlp_receiver.py`) decodes what `skillgraph` exports with.
const OTLP_PROTO_VERSION: &str = "1.45.2";
/// The npm packages installed under `target/interop/npm`: the reference
/// server with every feature, the conformance suite (the 0.2 pre-release,
/// the first with the 2026-07-28 revision's scenarios: 0.1.16 has 30 of the
/// handshake generation's only), the Node.js the suite needs (22 or later),
/// and the driver of the browser the run's page is checked in.
const NPM_PACKAGES: [&str; 4] = [
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/conformance@0.2.0-alpha.12",
    "node@22.23.3",
    "playwright-core@1.64.1",
];
/// The inspector release whose CLI is run.
const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";
/// The oldest Python the SDK supports.
const PYTHON_MIN: (u32, u32) = (3, 10);
/// The tools `skillgraph serve` offers at the desk's entry, triage.
const TRIAGE_TOOLS: [&str; 5] = [
    "list_skills",
    "lookup_invoice",
    "lookup_order",
    "read_skill",
    "track_parcel",
];

/// Run the Python part, then the inspector unless `--python-only`.
pub fn run_all(root: &Path, args: &[String]) -> Result<ExitCode> {
    let python_only = match args {
        [] => false,
        [flag] if flag == "--python-only" => true,
        _ => bail!("`cargo xtask interop` takes only --python-only, not {args:?}"),
    };
    let started = Instant::now();
    let desk = python_part(root)?;
    println!(
        "xtask: the Python part passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    crate::faults::against_serve(
        &desk.skillgraph,
        &desk.folder,
        &target_dir(root).join("interop").join("faults"),
    )?;
    println!(
        "xtask: the fault list passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    replicas(root)?;
    println!(
        "xtask: runs across replicas (the short profile) passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if python_only {
        return Ok(ExitCode::SUCCESS);
    }
    if !answers(root, "npm", &["--version"]) {
        println!(
            "xtask: npm not found: the inspector's CLI is skipped (install Node.js to run it)"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let started = Instant::now();
    inspector(root, &desk)?;
    println!(
        "xtask: the inspector passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let bin = npm_packages(root)?;
    everything(root, &bin, &desk)?;
    println!(
        "xtask: server-everything behind serve passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    turn_draws(root, &bin)?;
    println!(
        "xtask: fresh turn cases answered by JavaScript passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    crate::mcp_suite::against_serve(
        root,
        &bin,
        &desk.python,
        &desk.skillgraph,
        &target_dir(root).join("interop").join("conformance"),
    )?;
    println!(
        "xtask: the conformance suite passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    crate::page_check::in_browser(root, &target_dir(root).join("interop"), &desk.skillgraph)?;
    println!(
        "xtask: the run's page passed in Chromium in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs across replicas (SPEC §14.10), the short profile: three `serve`
/// replicas on a real Redis, behind HAProxy and round-robin, one SIGKILLed
/// mid-way (`benches/src/bin/replicas.rs`, which says its figures and
/// fails when a run did not complete, a step was lost, a record does not
/// replay or a call stayed open). Built in the test profile beside the
/// `serve` it starts; `target/release/replicas --profile full` is the full
/// profile, on demand.
fn replicas(root: &Path) -> Result<()> {
    crate::debian::ensure_servers(root)?;
    let build = [
        "build",
        "-p",
        "skill-benches",
        "-p",
        "desk-upstream",
        "--bin",
        "replicas",
        "--bin",
        "desk-upstream",
    ];
    if let Some(code) = run(root, "cargo", &build)? {
        bail!("building the replicas benchmark failed ({code:?})");
    }
    let bench = target_dir(root)
        .join("debug")
        .join(format!("replicas{}", std::env::consts::EXE_SUFFIX));
    if let Some(code) = run(root, &text(&bench)?, &["--profile", "short"])? {
        bail!("runs across replicas failed ({code:?}): the lines above say which figure");
    }
    Ok(())
}

/// Where a `serve` can be started: the binary and the generated map folder.
struct Desk {
    skillgraph: String,
    folder: String,
    /// The venv's Python, with the SDK.
    python: String,
}

fn python_part(root: &Path) -> Result<Desk> {
    let target = target_dir(root);
    let started = Instant::now();
    let python = ensure_venv(root, &target.join("interop").join("venv"))?;
    println!(
        "xtask: the venv was ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // The same build as `cargo test --workspace` (the same features of
    // tokio and rmcp across the workspace), so after the tests it builds
    // nothing; `-p skillgraph` alone would rebuild the async stack, and
    // `--all-targets` the benches.
    if let Some(code) = run(root, "cargo", &["build", "--workspace", "--tests"])? {
        bail!("`cargo build --workspace --tests` failed ({code:?}); fix the build and retry");
    }
    let folder = target.join("interop").join("desk");
    prepare_desk(root, &python, &folder)?;
    let desk = Desk {
        skillgraph: text(
            &target
                .join("debug")
                .join(format!("skillgraph{}", std::env::consts::EXE_SUFFIX)),
        )?,
        folder: text(&folder)?,
        python: text(&python)?,
    };
    let client = text(&root.join("interop").join("client.py"))?;
    // Both protocol generations (SPEC §9.1): the initialize handshake, and
    // the SDK's default, which discovers the 2026-07-28 revision; each over
    // stdio and over streamable HTTP (`--http`, SPEC §9.8).
    for transport in ["stdio", "http"] {
        for mode in ["legacy", "auto"] {
            let mut args = vec![client.as_str(), "--mode", mode, "--map", &desk.folder];
            if transport == "http" {
                args.push("--http");
            }
            args.extend(["--", &desk.skillgraph, "serve", &desk.folder]);
            println!("xtask: the Python SDK, {mode} mode, over {transport}");
            if run(root, &text(&python)?, &args)?.is_some() {
                bail!(
                    "the Python client's {mode} scenario over {transport} failed (its FAIL lines above say where)"
                );
            }
        }
    }
    let fastmcp = text(&root.join("interop").join("fastmcp_client.py"))?;
    for transport in ["stdio", "http"] {
        for mode in ["legacy", "auto"] {
            let mut args = vec![fastmcp.as_str(), "--mode", mode];
            if transport == "http" {
                args.push("--http");
            }
            args.extend(["--", &desk.skillgraph, "serve", &desk.folder]);
            println!("xtask: the FastMCP client, {mode} mode, over {transport}");
            if run(root, &text(&python)?, &args)?.is_some() {
                bail!(
                    "the FastMCP client's {mode} scenario over {transport} failed (its FAIL lines above say where)"
                );
            }
        }
    }
    procedure_held(root, &python, &desk.skillgraph, &target.join("interop"))?;
    time_server(root, &python, &desk.skillgraph)?;
    crate::mcp_suite::clashes_refused(
        root,
        &desk.python,
        &desk.skillgraph,
        &target.join("interop").join("clashes"),
    )?;
    skills_parity(root, &python, &desk.skillgraph)?;
    crate::otlp_check::play_exports(
        root,
        &desk.python,
        &desk.skillgraph,
        &target.join("interop").join("otlp"),
    )?;
    crate::otlp_check::serve_exports(
        root,
        &desk.python,
        &desk.skillgraph,
        &folder,
        &target.join("interop").join("otlp"),
    )?;
    Ok(desk)
}

/// `interop/procedure.py` (SPEC §15): the desk with a two-step procedure
/// on `triage`, in front of `interop/upstream.py` writing down every call it
/// receives, served over HTTP to the official SDK on the 2026-07-28
/// revision: the held-out tool is refused and never reaches the upstream.
fn procedure_held(root: &Path, python: &Path, skillgraph: &str, interop: &Path) -> Result<()> {
    let folder = interop.join("procedure");
    prepare_desk(root, python, &folder)?;
    let calls = interop.join("procedure-calls.jsonl");
    if calls.exists() {
        std::fs::remove_file(&calls)
            .with_context(|| format!("cannot clear {}", calls.display()))?;
    }
    let written = folder.join("skillmap.json");
    let mut map: Value = serde_json::from_str(&std::fs::read_to_string(&written)?)?;
    map["skills"]["triage"]["steps"] = json!([
        {"tool": "lookup_order", "note": "look the order up"},
        {"tool": "track_parcel", "note": "track its parcel"}
    ]);
    if let Some(args) = map["mcpServers"]["desk"]["args"].as_array_mut() {
        args.extend([json!("--meta-out"), json!(text(&calls)?)]);
    }
    std::fs::write(&written, serde_json::to_string_pretty(&map)?)
        .with_context(|| format!("cannot write {}", written.display()))?;
    let script = text(&root.join("interop").join("procedure.py"))?;
    let folder = text(&folder)?;
    let calls = text(&calls)?;
    println!("xtask: a procedure held at the call gate, the Python SDK on 2026-07-28 over HTTP");
    let args = [
        script.as_str(),
        "--calls",
        &calls,
        "--",
        skillgraph,
        "serve",
        &folder,
    ];
    if run(root, &text(python)?, &args)?.is_some() {
        bail!("the procedure scenario failed (its FAIL lines above say where)");
    }
    Ok(())
}

/// A map whose one skill, `name`, carries every tool of the upstream
/// `server` (`allowed-tools: mcp__SERVER__*`), started as `command`.
fn registry_map(folder: &Path, server: &str, command: Value, description: &str) -> Result<()> {
    if folder.exists() {
        std::fs::remove_dir_all(folder)
            .with_context(|| format!("cannot clear {}", folder.display()))?;
    }
    let skill = folder.join("skills").join(server);
    std::fs::create_dir_all(&skill)
        .with_context(|| format!("cannot create {}", skill.display()))?;
    let body = format!(
        "---\nname: {server}\ndescription: {description}\nallowed-tools: mcp__{server}__*\n---\nUse the {server} server's tools.\n"
    );
    std::fs::write(skill.join("SKILL.md"), body)?;
    let map = json!({"mcpServers": {server: command}, "entries": [server]});
    std::fs::write(
        folder.join("skillmap.json"),
        serde_json::to_string_pretty(&map)?,
    )?;
    Ok(())
}

/// `interop/through.py` on `serve MAP`: one upstream tool called through
/// it, on both generations, over stdio and HTTP.
fn through(root: &Path, python: &str, skillgraph: &str, map: &Path, check: &[&str]) -> Result<()> {
    let script = text(&root.join("interop").join("through.py"))?;
    let map = text(map)?;
    for transport in ["stdio", "http"] {
        for mode in ["legacy", "auto"] {
            let mut args = vec![script.as_str(), "--mode", mode];
            args.extend_from_slice(check);
            if transport == "http" {
                args.push("--http");
            }
            args.extend(["--", skillgraph, "serve", &map]);
            println!("xtask: through serve, {mode} mode, over {transport}");
            if run(root, python, &args)?.is_some() {
                bail!(
                    "a call through serve failed ({mode} mode, over {transport}; its FAIL lines above say where)"
                );
            }
        }
    }
    Ok(())
}

/// Install [`NPM_PACKAGES`] under `target/interop/npm` unless they are
/// there; the folder of their programs (`node_modules/.bin`).
fn npm_packages(root: &Path) -> Result<PathBuf> {
    let folder = target_dir(root).join("interop").join("npm");
    let bin = folder.join("node_modules").join(".bin");
    let stamp = folder.join("installed");
    let wanted = NPM_PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
        std::fs::create_dir_all(&folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
        let mut args = vec!["install", "--no-audit", "--no-fund", "--prefix", "."];
        args.extend(NPM_PACKAGES);
        println!("$ npm {} (in {})", args.join(" "), folder.display());
        let status = Command::new("npm")
            .args(&args)
            .current_dir(&folder)
            .status()
            .context("npm could not start: reinstall Node.js and retry")?;
        if !status.success() {
            bail!(
                "npm could not install {}: check that the npm registry is reachable, or delete {} and retry",
                NPM_PACKAGES.join(", "),
                folder.display()
            );
        }
        std::fs::write(&stamp, wanted)?;
    }
    Ok(bin)
}

/// Seeds of `interop/turn/edges.mjs` drawn here, beside the shipped seed 7.
const TURN_SEEDS: [&str; 3] = ["1", "2", "3"];

/// Turn cases drawn afresh (SPEC §13.1): each of [`TURN_SEEDS`] drawn by
/// `interop/turn/edges.mjs`, answered by JavaScript's own RegExp through
/// `interop/turn/oracle.mjs` on the pinned Node.js, then run against the
/// project by the conformance runner, which must pass every one.
fn turn_draws(root: &Path, bin: &Path) -> Result<()> {
    let node = bin.join("node");
    let scripts = root.join("interop").join("turn");
    let folder = target_dir(root).join("interop").join("turn");
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let mut files = Vec::new();
    for seed in TURN_SEEDS {
        let drawn = Command::new(&node)
            .arg(scripts.join("edges.mjs"))
            .args(["--seed", seed])
            .output()
            .context("node could not start: delete target/interop/npm and retry")?;
        if !drawn.status.success() {
            bail!(
                "interop/turn/edges.mjs --seed {seed} failed: {}",
                String::from_utf8_lossy(&drawn.stderr)
            );
        }
        let file = folder.join(format!("seed-{seed}.jsonl"));
        let mut oracle = Command::new(&node)
            .arg(scripts.join("oracle.mjs"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::fs::File::create(&file)?)
            .spawn()
            .context("node could not start the oracle")?;
        if let Some(mut stdin) = oracle.stdin.take() {
            std::io::Write::write_all(&mut stdin, &drawn.stdout)?;
        }
        if !oracle.wait()?.success() {
            bail!("interop/turn/oracle.mjs could not answer seed {seed}'s cases");
        }
        files.push(text(&file)?);
    }
    let runner = target_dir(root)
        .join("debug")
        .join(format!("skill-conformance{}", std::env::consts::EXE_SUFFIX));
    println!(
        "xtask: the conformance runner on turn seeds {}",
        TURN_SEEDS.join(", ")
    );
    let status = Command::new(&runner)
        .args(&files)
        .status()
        .with_context(|| format!("{} could not start", runner.display()))?;
    if !status.success() {
        bail!(
            "cases answered by JavaScript failed against the project (the FAIL lines above name them)"
        );
    }
    Ok(())
}

/// The npm registry's server-everything behind `serve`: a tool, its
/// resources and its prompts through `serve`, both generations, both
/// transports.
fn everything(root: &Path, bin: &Path, desk: &Desk) -> Result<()> {
    let folder = target_dir(root).join("interop").join("everything");
    registry_map(
        &folder,
        "everything",
        json!({"command": text(&bin.join("node"))?, "args": [text(&bin.join("mcp-server-everything"))?]}),
        "Try every feature of the reference MCP server. Use to exercise a client.",
    )?;
    through(
        root,
        &desk.python,
        &desk.skillgraph,
        &folder,
        &[
            "--tool",
            "echo",
            "--args",
            r#"{"message": "through serve"}"#,
            "--contains",
            "through serve",
            "--resources",
            "--prompts",
        ],
    )
}

/// The registry's `mcp-server-time` behind `serve`.
fn time_server(root: &Path, python: &Path, skillgraph: &str) -> Result<()> {
    let folder = target_dir(root).join("interop").join("time");
    let bin = python.with_file_name(format!("mcp-server-time{}", std::env::consts::EXE_SUFFIX));
    registry_map(
        &folder,
        "time",
        json!({"command": text(&bin)?}),
        "Tell the time in any zone. Use when the user asks what time it is.",
    )?;
    through(
        root,
        &text(python)?,
        skillgraph,
        &folder,
        &[
            "--tool",
            "get_current_time",
            "--args",
            r#"{"timezone": "UTC"}"#,
            "--contains",
            "datetime",
        ],
    )
}

/// The reference validator beside `skillgraph check` on every fixture
/// collection and on the shipped example: each skill's verdict must agree.
fn skills_parity(root: &Path, python: &Path, skillgraph: &str) -> Result<()> {
    let fixtures = root.join("crates/skillgraph-cli/tests/collections");
    let mut collections: Vec<String> = std::fs::read_dir(&fixtures)
        .with_context(|| format!("the fixture collections in {}", fixtures.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .map(|path| text(&path))
        .collect::<Result<_>>()?;
    collections.sort();
    // `single` holds a collection whose root is itself the one skill.
    collections.push(text(&fixtures.join("single/tidy-commits"))?);
    collections.push(text(&root.join("examples/support-desk"))?);
    let script = text(&root.join("interop").join("skills_parity.py"))?;
    let mut args = vec![script.as_str(), skillgraph];
    args.extend(collections.iter().map(String::as_str));
    if run(root, &text(python)?, &args)?.is_some() {
        bail!(
            "a skill's verdict differs from the reference validator's (the FAIL line above names it)"
        );
    }
    Ok(())
}

/// Cargo's target folder: `CARGO_TARGET_DIR`, else `target/` in the workspace.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

/// The venv's interpreter, after creating the venv and installing the SDK
/// into it when either is missing.
fn ensure_venv(root: &Path, venv: &Path) -> Result<PathBuf> {
    let python = venv.join(if cfg!(windows) {
        "Scripts/python.exe"
    } else {
        "bin/python"
    });
    if !python.exists() {
        check_python(root)?;
        if run(root, "python3", &["-m", "venv", &text(venv)?])?.is_some() {
            bail!(
                "python3 could not create a virtual environment in {}: install the venv module (on Debian, `apt-get install python3-venv`) and retry",
                venv.display()
            );
        }
    }
    let python_text = text(&python)?;
    let installed = Command::new(&python)
        .args([
            "-c",
            "import importlib.metadata as m; print(*(m.version(p) for p in ['mcp', 'skills-ref', 'fastmcp', 'mcp-server-time', 'opentelemetry-proto']))",
        ])
        .output()
        .is_ok_and(|out| {
            String::from_utf8_lossy(&out.stdout).trim()
                == format!(
                    "{MCP_VERSION} {SKILLS_REF_VERSION} {FASTMCP_VERSION} {TIME_SERVER_VERSION} {OTLP_PROTO_VERSION}"
                )
        });
    if !installed {
        let mcp = format!("mcp=={MCP_VERSION}");
        let skills_ref = format!("skills-ref=={SKILLS_REF_VERSION}");
        let fastmcp = format!("fastmcp=={FASTMCP_VERSION}");
        let time = format!("mcp-server-time=={TIME_SERVER_VERSION}");
        let otlp = format!("opentelemetry-proto=={OTLP_PROTO_VERSION}");
        let args = [
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--quiet",
            &mcp,
            &skills_ref,
            &fastmcp,
            &time,
            &otlp,
        ];
        if run(root, &python_text, &args)?.is_some() {
            bail!(
                "pip could not install {mcp}, {skills_ref}, {fastmcp}, {time} and {otlp}: check that PyPI is reachable, or delete {} and retry",
                venv.display()
            );
        }
    }
    Ok(python)
}

/// Fail naming the fix when `python3` is missing or older than the SDK allows.
fn check_python(root: &Path) -> Result<()> {
    let output = Command::new("python3")
        .arg("--version")
        .current_dir(root)
        .output()
        .context("python3 not found: install Python 3.10+ and retry")?;
    let said = String::from_utf8_lossy(&output.stdout);
    match python_version(&said) {
        Some(version) if version >= PYTHON_MIN => Ok(()),
        _ => bail!(
            "python3 says {:?}: install Python 3.10+ (the mcp SDK needs it) and retry",
            said.trim()
        ),
    }
}

/// The major and minor version in `python3 --version`'s answer.
fn python_version(said: &str) -> Option<(u32, u32)> {
    let version = said.trim().strip_prefix("Python ")?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Lay out the support desk in `folder`, its map's upstream the Python one.
fn prepare_desk(root: &Path, python: &Path, folder: &Path) -> Result<()> {
    let example = root.join("examples").join("support-desk");
    let data = example.join("upstream").join("data.json");
    if !data.is_file() {
        bail!(
            "the desk's canned data {} is missing: it comes with the desk-upstream example; restore it and retry",
            data.display()
        );
    }
    if folder.exists() {
        std::fs::remove_dir_all(folder)
            .with_context(|| format!("cannot clear {}", folder.display()))?;
    }
    copy_tree(&example.join("skills"), &folder.join("skills"))?;
    let source = example.join("skillmap.json");
    let map = std::fs::read_to_string(&source)
        .with_context(|| format!("cannot read {}", source.display()))?;
    let upstream = json!({
        "command": text(python)?,
        "args": [text(&root.join("interop").join("upstream.py"))?, "--data", text(&data)?],
        "env": {},
    });
    let map = with_upstream(&map, upstream)
        .with_context(|| format!("{} is not a JSON object", source.display()))?;
    let written = folder.join("skillmap.json");
    std::fs::write(&written, map).with_context(|| format!("cannot write {}", written.display()))
}

/// The map's text with `mcpServers` holding `desk` alone.
fn with_upstream(map: &str, desk: Value) -> Result<String> {
    let mut map: Value = serde_json::from_str(map)?;
    let object = map.as_object_mut().context("not an object")?;
    object.insert("mcpServers".into(), json!({ "desk": desk }));
    Ok(serde_json::to_string_pretty(&map)?)
}

pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in crate::sorted_entries(from)? {
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// The inspector's CLI: `tools/list`, then one `tools/call`, each checked.
fn inspector(root: &Path, desk: &Desk) -> Result<()> {
    let serve = [desk.skillgraph.as_str(), "serve", &desk.folder];
    let list = npx(root, &["--method", "tools/list"], &serve)?;
    let names = tool_names(&list)?;
    if names != TRIAGE_TOOLS {
        bail!("inspector tools/list: expected exactly {TRIAGE_TOOLS:?}, got {names:?}");
    }
    println!("ok  inspector tools/list: {}", names.join(", "));
    let call = [
        "--method",
        "tools/call",
        "--tool-name",
        "lookup_order",
        "--tool-arg",
        "order_id=4412",
    ];
    check_call(&npx(root, &call, &serve)?)?;
    println!("ok  inspector tools/call lookup_order: the canned answer, then refunds' body");
    Ok(())
}

/// Run the inspector's CLI on `serve` and parse what it printed.
fn npx(root: &Path, method: &[&str], serve: &[&str]) -> Result<Value> {
    let mut args = vec!["-y", INSPECTOR, "--cli"];
    args.extend_from_slice(method);
    args.push("--");
    args.extend_from_slice(serve);
    println!("$ npx {}", args.join(" "));
    let output = Command::new("npx")
        .args(&args)
        .current_dir(root)
        .output()
        .context("npm is on PATH but npx could not start: reinstall Node.js and retry")?;
    if !output.status.success() {
        bail!(
            "the inspector's CLI failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "the inspector's CLI printed no JSON: {}",
            String::from_utf8_lossy(&output.stdout).trim()
        )
    })
}

/// The sorted tool names of a `tools/list` answer.
fn tool_names(list: &Value) -> Result<Vec<String>> {
    let tools = list["tools"]
        .as_array()
        .with_context(|| format!("inspector tools/list: expected a `tools` array, got {list}"))?;
    let mut names: Vec<String> = tools
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    Ok(names)
}

/// A `tools/call lookup_order 4412` answer: the risky order, then refunds' body.
fn check_call(answer: &Value) -> Result<()> {
    let texts: Vec<&str> = answer["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect())
        .unwrap_or_default();
    let first: Option<Value> = texts.first().and_then(|t| serde_json::from_str(t).ok());
    let risky = first.is_some_and(|order| {
        order["status"] == "success" && order["riskLevel"] == "high" && order["amount"] == 240
    });
    let moved = texts
        .last()
        .is_some_and(|t| t.contains("<skill_content name=\"refunds\">"));
    if answer["isError"] == true || !risky || !moved {
        bail!(
            "inspector tools/call lookup_order: expected the risky order (status success, riskLevel high, amount 240) and then a block holding <skill_content name=\"refunds\">, got {answer}"
        );
    }
    Ok(())
}

/// Whether `program args` starts and succeeds.
fn answers(root: &Path, program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .current_dir(root)
        .output()
        .is_ok_and(|out| out.status.success())
}

/// A path as the UTF-8 text a command line takes.
pub(crate) fn text(path: &Path) -> Result<String> {
    path.to_str().map(str::to_owned).with_context(|| {
        format!(
            "{} is not UTF-8; move the checkout to a UTF-8 path",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_versions_are_read_from_what_python3_says() {
        assert_eq!(python_version("Python 3.11.7\n"), Some((3, 11)));
        assert_eq!(python_version("Python 3.9.2"), Some((3, 9)));
        assert!(python_version("Python 3.9.2").unwrap() < PYTHON_MIN);
        assert_eq!(python_version("bash: python3: not found"), None);
    }

    #[test]
    fn the_desk_map_declares_the_python_upstream_alone() {
        let map = r#"{"entries":["triage"],"mcpServers":{"desk":{"command":"cargo"}}}"#;
        let written = with_upstream(map, json!({"command": "/venv/bin/python"})).unwrap();
        let written: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(written["entries"], json!(["triage"]));
        assert_eq!(
            written["mcpServers"],
            json!({"desk": {"command": "/venv/bin/python"}})
        );
        assert!(with_upstream("[]", json!({})).is_err());
    }

    #[test]
    fn the_inspector_answers_are_checked() {
        let list = json!({"tools": TRIAGE_TOOLS.map(|name| json!({"name": name}))});
        assert_eq!(tool_names(&list).unwrap(), TRIAGE_TOOLS);
        assert!(tool_names(&json!({"error": "x"})).is_err());
        let order = r#"{"status":"success","riskLevel":"high","amount":240}"#;
        let body = "<skill_content name=\"refunds\">…</skill_content>";
        let good =
            json!({"content": [{"type": "text", "text": order}, {"type": "text", "text": body}]});
        assert!(check_call(&good).is_ok());
        let unmoved = json!({"content": [{"type": "text", "text": order}]});
        assert!(check_call(&unmoved).is_err());
        let failed = json!({"content": good["content"], "isError": true});
        assert!(check_call(&failed).is_err());
    }
}
