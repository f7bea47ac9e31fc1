//! `skillgraph serve DIR`: the map as an MCP server over standard input and
//! output (SPEC §9), in front of the upstream servers its `skillmap.json`
//! declares under `mcpServers`. One connection is one session and one turn;
//! every call is an iteration of its own.

mod gateway;
mod observe;
mod record;
mod upstream;

use std::fmt::Write as _;
#[cfg(unix)]
use std::fs::File;
use std::io::Write as _;
#[cfg(unix)]
use std::os::fd::AsFd;
#[cfg(unix)]
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use skill_session::{Graph, Posture, Session};
use skillgraph::load;
#[cfg(unix)]
use tokio::net::unix::pipe;

use super::record_file::RecordWriter;
use super::{Failure, session_graph};
use gateway::{Gateway, Options};
use record::RecordSink;
use upstream::{Clash, Upstreams};

/// What `skillgraph serve` was asked to do.
pub(super) struct ServeArgs {
    /// The map: a folder (or a `skillmap.json` file) declaring `mcpServers`.
    pub(super) path: PathBuf,
    /// Where to write the record.
    pub(super) record: Option<PathBuf>,
    /// How reads of hops are judged.
    pub(super) posture: Posture,
    /// Offer every upstream tool.
    pub(super) all_tools: bool,
    /// Refuse calls to upstream tools not offered now.
    pub(super) strict_tools: bool,
    /// How long an upstream server may take to start or to answer.
    pub(super) upstream_timeout: Duration,
}

/// Serve the map at `args.path` until the client closes the connection.
pub(super) fn serve(args: ServeArgs) -> Result<ExitCode, Failure> {
    let loaded = load(&args.path)?;
    let graph = session_graph(loaded.map, &args.path)?;
    let record = args
        .record
        .as_deref()
        .map(RecordWriter::create)
        .transpose()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| {
            Failure::unusable("runtime", format!("cannot start the async runtime: {err}"))
        })?;
    let dir = folder_of(&args.path);
    runtime.block_on(async {
        let (upstreams, clashes) =
            Upstreams::start(&dir, &loaded.mcp_servers, args.upstream_timeout)
                .await
                .map_err(|err| Failure::unusable("upstream-failed", err.to_string()))?;
        refuse_mismatches(&graph, &upstreams, &clashes)?;
        let mut session = Session::new(Arc::new(graph), args.posture, Vec::new());
        session.begin_turn("", None);
        let upstreams = Arc::new(upstreams);
        let options = Options {
            all_tools: args.all_tools,
            strict_tools: args.strict_tools,
        };
        let gateway = Gateway::new(
            session,
            RecordSink::new(record),
            Arc::clone(&upstreams),
            options,
        );
        #[cfg(unix)]
        let served = match client_pipes() {
            Some(pipes) => gateway.serve(pipes).await,
            None => gateway.serve(rmcp::transport::stdio()).await,
        };
        #[cfg(not(unix))]
        let served = gateway.serve(rmcp::transport::stdio()).await;
        let server = served.map_err(|err| {
            Failure::unusable(
                "mcp-handshake",
                format!("the MCP client's handshake failed: {err}"),
            )
        })?;
        let _ = server.waiting().await;
        if let Ok(upstreams) = Arc::try_unwrap(upstreams) {
            upstreams.shut_down().await;
        }
        Ok(ExitCode::SUCCESS)
    })
}

#[cfg(unix)]
/// Standard input and output as pipes the runtime polls, when the client
/// gave us pipes (MCP clients do) and standard error is not the same pipe as
/// standard output. Tokio's own standard streams read and write on its
/// blocking thread pool, a hand-off per message each way; polled pipes take
/// that off every call. `None`: use the standard streams.
fn client_pipes() -> Option<(pipe::Receiver, pipe::Sender)> {
    let input = File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    let output = File::from(std::io::stdout().as_fd().try_clone_to_owned().ok()?);
    let errors = File::from(std::io::stderr().as_fd().try_clone_to_owned().ok()?);
    let (out, err) = (output.metadata().ok()?, errors.metadata().ok()?);
    if (out.dev(), out.ino()) == (err.dev(), err.ino()) {
        // Polling needs non-blocking writes, which standard error (written
        // with blocking writes) must not share.
        return None;
    }
    Some((
        pipe::Receiver::from_file(input).ok()?,
        pipe::Sender::from_file(output).ok()?,
    ))
}

/// A line on standard error, prefixed with `skillgraph serve:`. Standard
/// error may be a pipe whose reader has gone: the line is then lost, never
/// a panic (as `eprintln!` would).
fn warn(message: &str) {
    warn_raw(&format!("skillgraph serve: {message}"));
}

/// A line on standard error as it is; see [`warn`].
fn warn_raw(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The folder the upstream servers run in: the map's folder.
fn folder_of(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.to_path_buf()
    } else {
        match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }
}

/// Refuse a map whose skills declare a tool no upstream server offers, and
/// upstream servers that offer one tool name twice.
fn refuse_mismatches(
    graph: &Graph,
    upstreams: &Upstreams,
    clashes: &[Clash],
) -> Result<(), Failure> {
    let mut message = String::new();
    for reserved in ["read_skill", "list_skills"] {
        if let Some(server) = upstreams.server_of(reserved) {
            let _ = writeln!(
                message,
                "upstream server \"{server}\" offers a tool named \"{reserved}\", which skillgraph serve answers itself, so it could never be called; rename it in that server"
            );
        }
    }
    for clash in clashes {
        let _ = writeln!(
            message,
            "tool \"{}\" is offered by two upstream servers, \"{}\" and \"{}\"; a call could go to either: remove it from one of them",
            clash.tool, clash.servers[0], clash.servers[1]
        );
    }
    for skill in &graph.map().skills {
        for tool in &skill.tools {
            if upstreams.server_of(&tool.name).is_none() {
                let _ = writeln!(
                    message,
                    "skill \"{}\" declares tool \"{}\", which no upstream server offers; add the server that has it under `mcpServers` in skillmap.json, or remove the tool from the skill",
                    skill.id, tool.name
                );
            }
        }
    }
    if message.is_empty() {
        return Ok(());
    }
    let offered: Vec<String> = upstreams
        .tools()
        .map(|tool| tool.name.to_string())
        .collect();
    let _ = write!(
        message,
        "(the upstream servers offer: {})",
        if offered.is_empty() {
            "no tools".to_owned()
        } else {
            offered.join(", ")
        }
    );
    Err(Failure::unusable("upstream-mismatch", message))
}
