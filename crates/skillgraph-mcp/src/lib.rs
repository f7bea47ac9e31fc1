//! The skillgraph MCP server as a library (SPEC §9): a skill map in front of
//! any MCP client, over standard input and output ([`serve_stdio`]) or
//! streamable HTTP ([`serve_http`]), on both protocol generations, and in
//! front of the upstream MCP servers its `skillmap.json` declares under
//! `mcpServers` (child processes over stdio, or servers by `url`).
//!
//! `skillgraph-mcp` owns the translation between MCP and a
//! [`skill_session::Session`]: which MCP request is which session step, how
//! an answer is put into MCP's shapes, the upstream servers (started,
//! listed, called with a timeout), and the record's sinks. It must never
//! make a decision a session makes — which tools are offered, whether a call
//! is admitted, what a read answers, where the cursor moves, what an
//! iteration is — nor parse arguments or choose exit codes (the
//! `skillgraph-cli` binary does).
//!
//! The key design decision: one run is one session with one turn — over
//! stdio the connection's, over HTTP a handshake session's or the one a
//! run handle names — and every read and every call is an iteration of its
//! own, ended when it is answered, so the record of a served run replays to
//! itself.
//!
//! ```no_run
//! use std::time::Duration;
//! use skillgraph_mcp::{ServeConfig, serve_stdio};
//!
//! let config = ServeConfig::new("examples/support-desk");
//! serve_stdio(&config)?;
//! # Ok::<(), skillgraph_mcp::ServeError>(())
//! ```

mod capability;
mod doorway;
mod echo;
mod fit;
mod gateway;
mod http;
mod hub;
mod limits;
mod malformed;
mod observe;
mod record;
mod relay;
mod replicas;
mod runs;
mod sealed;
mod shares;
mod skill_files;
mod spans;
mod stdio;
mod store;
mod translate;
mod upstream;

#[cfg(unix)]
use std::fs::File;
use std::io::Write as _;
#[cfg(unix)]
use std::os::fd::AsFd;
#[cfg(unix)]
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use skillgraph::skill_session::{
    CallPolicy, Event, Graph, GraphError, Posture, Run, SessionConfig,
};
use skillgraph::skill_tools::DEFAULT_CATALOG_BUDGET;
use skillgraph::{LoadError, PrepareError, Prepared, RecordFileError, RecordWriter, prepare};
use skillgraph_otlp::Exporter;
pub use skillgraph_otlp::OtlpError;
#[cfg(unix)]
use tokio::net::unix::pipe;

pub use fit::{Misfit, Misfits};
use gateway::Gateway;
pub use http::{HttpConfig, JwtConfig, TokensError};
use hub::Hub;
use spans::Tracing;
use stdio::ClientLines;
pub use store::{Durability, StoreConfig, StoreError, export_records};
pub use upstream::StartError;
use upstream::Upstreams;

/// What to serve, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeConfig {
    /// The map: a folder (or a `skillmap.json` file) declaring `mcpServers`.
    pub path: PathBuf,
    /// Where to write the record, one event a line, flushed per event.
    pub record: Option<PathBuf>,
    /// How reads of hops are judged.
    pub posture: Posture,
    /// Which upstream tool calls are accepted (SPEC §9.3): `scoped` by
    /// default, `strict` (`--strict-tools`), `all` (`--all-tools`).
    pub tools: CallPolicy,
    /// How long an upstream server may take to start or to answer one call.
    pub upstream_timeout: Duration,
    /// The most characters `read_skill`'s description holds (SPEC §6.5).
    pub catalog_budget: usize,
    /// The OTLP/HTTP receiver each request's span goes to (SPEC §11,
    /// `--otlp`); `None`: the one `OTEL_EXPORTER_OTLP_ENDPOINT` names, if
    /// any (see [`skillgraph_otlp::Exporter::new`]).
    pub otlp: Option<String>,
    /// The file whose bytes seal the state handed to clients to return
    /// (SPEC §9.7, `--state-key`), shared by replicas; `None`: a key made
    /// at start-up.
    pub state_key: Option<PathBuf>,
    /// The role a request with no principal takes, on a map that declares
    /// roles (SPEC §14.8, `--anonymous-role`); `None`: `*`. Over HTTP
    /// without authentication a map with roles needs it.
    pub anonymous_role: Option<String>,
    /// A run's budget of iterations over the map's `budget` (SPEC §15.3,
    /// `--max-iterations`; a run is one turn): `Some(0)` sets none; `None`
    /// takes the map's.
    pub max_iterations: Option<u64>,
}

impl ServeConfig {
    /// Serve the map at `path` with the defaults: no record file, posture
    /// `assist`, the `scoped` call policy, a 60 s upstream timeout, a
    /// 16,000-character catalog budget, spans exported only when
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` says where.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ServeConfig {
            path: path.into(),
            record: None,
            posture: Posture::Assist,
            tools: CallPolicy::Scoped,
            upstream_timeout: Duration::from_secs(60),
            catalog_budget: DEFAULT_CATALOG_BUDGET,
            otlp: None,
            state_key: None,
            anonymous_role: None,
            max_iterations: None,
        }
    }
}

/// Why the server could not start or could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The map cannot be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A route guard of the map is refused.
    #[error("{0}\nRun `skillgraph check {1}` for every problem of the map.")]
    Graph(GraphError, String),
    /// The map could not be prepared for another reason than those above.
    #[error(transparent)]
    Prepare(PrepareError),
    /// The record file cannot be created.
    #[error(transparent)]
    Record(#[from] RecordFileError),
    /// An upstream server did not start.
    #[error(transparent)]
    Upstream(#[from] StartError),
    /// The map and the upstream servers do not fit together: every misfit,
    /// each with its code and its fix.
    #[error("{0}")]
    Mismatch(Misfits),
    /// The async runtime could not be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The client's MCP handshake failed.
    #[error("the MCP client's handshake failed: {0}")]
    Handshake(String),
    /// The `--auth-tokens` file cannot be used.
    #[error(transparent)]
    Tokens(#[from] TokensError),
    /// The OTLP endpoint cannot be used.
    #[error(transparent)]
    Otlp(#[from] OtlpError),
    /// The key that seals the state handed to clients cannot be had.
    #[error("cannot make the state key: {0}; with --state-key, give a file of at least 32 bytes")]
    StateKey(String),
    /// The run store cannot be used.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `--record` was given with a shared store, which holds the records.
    #[error(
        "--record cannot be used with --store {0}: the store holds each run's record; read it with `skillgraph record export --store URL RUN`, or leave --record out"
    )]
    RecordWithStore(String),
    /// A request with no principal would take none of the map's roles
    /// (SPEC §14.8): no `--anonymous-role`, or one the map does not
    /// declare, and no `*` role.
    #[error(
        "requests with no principal cannot be served: {0} (over stdio and without authentication every request takes --anonymous-role ROLE, or else \"*\")"
    )]
    NoRole(skillgraph::skill_core::NoRole),
    /// A map that declares roles, served over HTTP with no authentication
    /// and no `--anonymous-role` (SPEC §14.11).
    #[error(
        "roles need principals: the map declares roles ({0}), so serving it over --http needs --auth-tokens FILE or --auth-jwks FILE, whose principals hold roles; or --anonymous-role ROLE, the role every request then takes"
    )]
    RolesNeedPrincipals(String),
    /// The address of `--http` cannot be listened on.
    #[error(
        "cannot listen on {addr}: {source}; choose another address or port with --http (port 0: any free port)"
    )]
    Listen {
        /// The address.
        addr: std::net::SocketAddr,
        /// The operating system's reason.
        source: std::io::Error,
    },
}

impl ServeError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ServeError::Load(err) => err.code(),
            ServeError::Graph(err, _) => err.code(),
            ServeError::Prepare(err) => err.code(),
            ServeError::Record(err) => err.code(),
            ServeError::Upstream(err) => err.code(),
            ServeError::Mismatch(_) => "upstream-mismatch",
            ServeError::Runtime(_) => "runtime",
            ServeError::Handshake(_) => "mcp-handshake",
            ServeError::Tokens(_) => "auth-tokens",
            ServeError::Otlp(err) => err.code(),
            ServeError::Listen { .. } => "http-listen",
            ServeError::StateKey(_) => "state-key",
            ServeError::Store(err) => err.code(),
            ServeError::RecordWithStore(_) => "store-with-record",
            ServeError::NoRole(refused) => refused.code(),
            ServeError::RolesNeedPrincipals(_) => "roles-need-principals",
        }
    }

    /// Whether the map itself is at fault (a refused guard), rather than the
    /// input or the environment.
    pub fn is_map_error(&self) -> bool {
        matches!(self, ServeError::Graph(..))
    }
}

/// The map prepared, its upstream servers started and fitted to it: what
/// every transport serves.
struct Served {
    graph: Graph,
    files: skill_files::SkillFiles,
    session: SessionConfig,
    upstreams: Arc<Upstreams>,
}

/// The map of `config`, prepared as `play` prepares one (load, check-up,
/// compile) before any runtime starts; what the check-up finds is said on
/// standard error, and the map is served as it is.
fn load_checked(config: &ServeConfig) -> Result<Prepared, ServeError> {
    let prepared = prepare(&config.path).map_err(|err| match err {
        PrepareError::Load(err) => ServeError::Load(err),
        PrepareError::Graph(err) => ServeError::Graph(err, config.path.display().to_string()),
        other => ServeError::Prepare(other),
    })?;
    if !prepared.loaded.left_out.is_empty() {
        warn(&left_out_warning(&prepared.loaded.left_out, &config.path));
    }
    let errors = prepared.checkup_errors();
    if errors > 0 {
        warn(&format!(
            "the map has {errors} error(s) in its check-up; it is served as it is (see `skillgraph check {}`)",
            config.path.display()
        ));
    }
    Ok(prepared)
}

/// Start the upstream servers of `prepared` and fit the map to them, for
/// one client `over_stdio` or many over HTTP.
async fn fitted(
    config: &ServeConfig,
    prepared: Prepared,
    over_stdio: bool,
) -> Result<Served, ServeError> {
    let Prepared {
        loaded,
        guards,
        start,
        ..
    } = prepared;
    let dir = folder_of(&config.path);
    let sealer = match &config.state_key {
        Some(path) => sealed::Sealer::read(path),
        None => sealed::Sealer::random(),
    }
    .map_err(|err| ServeError::StateKey(err.to_string()))?;
    let (upstreams, clashes) = Upstreams::start(
        &dir,
        &loaded.mcp_servers,
        config.upstream_timeout,
        over_stdio,
        sealer,
    )
    .await?;
    let mut map = loaded.map;
    fit::expand_tool_patterns(&mut map, &upstreams);
    let passthrough = upstreams.passthrough_clashes().await;
    let misfits = fit::misfits(
        &map,
        &loaded.tools_from_files,
        &upstreams,
        &clashes,
        &passthrough,
    );
    if let Some(misfits) = Misfits::of(misfits, &upstreams) {
        return Err(ServeError::Mismatch(misfits));
    }
    let session = SessionConfig {
        posture: config.posture,
        hidden: Vec::new(),
        tools: config.tools,
        roles: Vec::new(),
        max_iterations: config.max_iterations,
        after_refusals: None,
    };
    let files = skill_files::SkillFiles::gather(&mut map, |id| session.hides(id), over_stdio);
    let graph = Graph::with_compiled(map, guards, start).with_catalog_budget(config.catalog_budget);
    Ok(Served {
        graph,
        files,
        session,
        upstreams: Arc::new(upstreams),
    })
}

/// Stop the upstream servers once nothing else holds them.
async fn shut_down(upstreams: Arc<Upstreams>) {
    if let Ok(upstreams) = Arc::try_unwrap(upstreams) {
        upstreams.shut_down().await;
    }
}

/// Serve the map of `config` over standard input and output until the
/// client closes the connection, on a runtime of its own.
///
/// # Errors
///
/// [`ServeError`] when the map, the record file, the OTLP endpoint or an
/// upstream server cannot be used, or the client's handshake fails.
pub fn serve_stdio(config: &ServeConfig) -> Result<(), ServeError> {
    let prepared = load_checked(config)?;
    // Made and shut down off the runtime: its HTTP client blocks.
    let exporter = Exporter::new(config.otlp.as_deref())?;
    let tracing = exporter
        .as_ref()
        .map(|exporter| Tracing::new(exporter, true));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = runtime.block_on(async {
        #[cfg(unix)]
        if let Some((read, write)) = client_pipes() {
            return serve_lines(config, prepared, tracing, read, write).await;
        }
        let (read, write) = (tokio::io::stdin(), tokio::io::stdout());
        serve_lines(config, prepared, tracing, read, write).await
    });
    if let Some(exporter) = exporter {
        exporter.shut_down();
    }
    served
}

/// Serve the map of `config` to one client that writes its JSON-RPC
/// messages to `input` and reads the answers from `output`, one a line, as
/// over standard input and output, until it closes `input`; on the tokio
/// runtime the caller runs. A host that embeds the server, and the server's
/// own tests, drive it in one process this way (over `tokio::io::duplex`,
/// say). No spans are exported: an exporter blocks a thread of its own,
/// which [`serve_stdio`] sets up.
///
/// ```no_run
/// use skillgraph_mcp::{ServeConfig, serve_streams};
///
/// # async fn run() -> Result<(), skillgraph_mcp::ServeError> {
/// let (client, server) = tokio::io::duplex(64 * 1024);
/// let (read, write) = tokio::io::split(server);
/// let config = ServeConfig::new("examples/support-desk");
/// tokio::spawn(async move { serve_streams(&config, read, write).await });
/// // … write `initialize` to `client`, read its answer …
/// # drop(client);
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// As [`serve_stdio`].
pub async fn serve_streams<R, W>(
    config: &ServeConfig,
    input: R,
    output: W,
) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let prepared = load_checked(config)?;
    serve_lines(config, prepared, None, input, output).await
}

/// Serve the checked map of `config` to the one client on `input` and
/// `output`, each request's span for `tracing` when export is on.
async fn serve_lines<R, W>(
    config: &ServeConfig,
    prepared: Prepared,
    tracing: Option<Tracing>,
    input: R,
    output: W,
) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let record = config
        .record
        .as_deref()
        .map(RecordWriter::create)
        .transpose()?;
    let prepared = fitted(config, prepared, true).await?;
    let upstreams = Arc::clone(&prepared.upstreams);
    let hub = Hub::new(
        Arc::new(prepared.graph),
        prepared.files,
        prepared.session,
        prepared.upstreams,
        record,
        None,
        tracing,
        Some(config.anonymous_role.clone().into_iter().collect()),
    )?;
    let gateway = Gateway::new(Arc::new(hub));
    let served = gateway.serve(ClientLines::new(input, output)).await;
    let server = served.map_err(|err| ServeError::Handshake(err.to_string()))?;
    let _ = server.waiting().await;
    shut_down(upstreams).await;
    Ok(())
}

/// Serve the map of `config` over streamable HTTP as `http` says (SPEC
/// §9.8) until the process is interrupted (`SIGINT` or `SIGTERM`), on a
/// runtime of its own. The address it listens on is said on standard error
/// (`skillgraph serve: listening on http://ADDR/mcp`) once the upstream
/// servers are ready. With a record (`config.record`), each run's record is
/// a file `run_….jsonl` in that folder.
///
/// # Errors
///
/// [`ServeError`] when the map, the tokens file, the address, the OTLP
/// endpoint or an upstream server cannot be used.
pub fn serve_http(config: &ServeConfig, http: &HttpConfig) -> Result<(), ServeError> {
    let (prepared, tokens) = http_ready(config, http)?;
    let exporter = Exporter::new(config.otlp.as_deref())?;
    let tracing = exporter
        .as_ref()
        .map(|exporter| Tracing::new(exporter, false));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(http.addr)
            .await
            .map_err(|source| ServeError::Listen {
                addr: http.addr,
                source,
            })?;
        let entry = HttpEntry {
            prepared,
            tokens,
            tracing,
            says_where: true,
        };
        serve_http_with(config, http, entry, listener, interrupted()).await
    });
    if let Some(exporter) = exporter {
        exporter.shut_down();
    }
    served
}

/// Serve the map of `config` over streamable HTTP as `http` says (SPEC
/// §9.8) on `listener`, already bound, until `shutdown` completes; on the
/// tokio runtime the caller runs. `http.addr` is not used: the listener
/// says where. A host that embeds the server, and the server's own tests,
/// serve HTTP in one process this way, on a port of their choosing (port 0:
/// any free one, which `listener.local_addr()` then names); connections
/// that come before the upstream servers are ready wait in the listener's
/// queue. Nothing is said on standard error about where it listens, and no
/// spans are exported (as with [`serve_streams`]).
///
/// ```no_run
/// use skillgraph_mcp::{HttpConfig, ServeConfig, serve_http_on};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let addr = listener.local_addr()?;
/// let config = ServeConfig::new("examples/support-desk");
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let served = tokio::spawn(async move {
///     let shutdown = async {
///         let _ = stopped.await;
///     };
///     serve_http_on(&config, &HttpConfig::new(addr), listener, shutdown).await
/// });
/// // … POST JSON-RPC requests to http://{addr}/mcp …
/// let _ = stop.send(());
/// served.await??;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`ServeError`] when the map, the tokens file, the record folder or an
/// upstream server cannot be used.
pub async fn serve_http_on(
    config: &ServeConfig,
    http: &HttpConfig,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    let (prepared, tokens) = http_ready(config, http)?;
    let entry = HttpEntry {
        prepared,
        tokens,
        tracing: None,
        says_where: false,
    };
    serve_http_with(config, http, entry, listener, shutdown).await
}

/// What serving HTTP needs before any runtime: the map prepared, the
/// tokens read and the record folder made.
fn http_ready(
    config: &ServeConfig,
    http: &HttpConfig,
) -> Result<(Prepared, Option<http::Auth>), ServeError> {
    let prepared = load_checked(config)?;
    let tokens = http::Auth::read(http.auth_tokens.as_deref(), http.auth_jwt.as_ref())?;
    if let Some(folder) = &config.record {
        std::fs::create_dir_all(folder).map_err(|err| {
            ServeError::Record(RecordFileError::Create {
                path: folder.clone(),
                source: err,
            })
        })?;
    }
    Ok((prepared, tokens))
}

/// How one HTTP entry serves.
struct HttpEntry {
    /// The map, as [`http_ready`] prepared it.
    prepared: Prepared,
    /// The principals, as [`http_ready`] read them.
    tokens: Option<http::Auth>,
    /// Each request's span, when export is on.
    tracing: Option<Tracing>,
    /// Whether to say on standard error where it listens, once the
    /// upstream servers are ready.
    says_where: bool,
}

/// Serve `entry` over HTTP on `listener` until `shutdown` completes: the
/// upstream servers started and fitted, then every connection served.
async fn serve_http_with(
    config: &ServeConfig,
    http: &HttpConfig,
    entry: HttpEntry,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    if let (Some(store), Some(_)) = (&http.store, &config.record) {
        return Err(ServeError::RecordWithStore(store::without_credentials(
            &store.url,
        )));
    }
    let authenticated = http.auth_tokens.is_some() || http.auth_jwt.is_some();
    let roles = &entry.prepared.loaded.map.roles;
    if !roles.is_empty() && !authenticated && config.anonymous_role.is_none() {
        let declared: Vec<&str> = roles.keys().map(String::as_str).collect();
        return Err(ServeError::RolesNeedPrincipals(declared.join(", ")));
    }
    let prepared = fitted(config, entry.prepared, false).await?;
    let upstreams = Arc::clone(&prepared.upstreams);
    let graph = Arc::new(prepared.graph);
    let store = match &http.store {
        Some(store) => {
            let start = Run::new(
                Arc::clone(&graph),
                prepared.session.clone().for_stable_list(),
            )
            .take_events()
            .first()
            .map(Event::to_line)
            .unwrap_or_default();
            let addr = listener.local_addr().unwrap_or(http.addr);
            match store::Store::open(store, &start, http.run_ttl, addr).await {
                Ok(opened) => Some(opened),
                Err(err) => {
                    shut_down(upstreams).await;
                    return Err(err.into());
                }
            }
        }
        None => None,
    };
    let runs = runs::Runs::new(runs::Keeping {
        ttl: http.run_ttl,
        max: http.max_runs.max(1),
        quota: http.quota(),
        folder: config.record.clone(),
    });
    let hub = Hub::new(
        graph,
        prepared.files,
        prepared.session,
        prepared.upstreams,
        None,
        Some(runs),
        entry.tracing,
        authenticated.then_some(()).map_or_else(
            || Some(config.anonymous_role.clone().into_iter().collect()),
            |()| None,
        ),
    )?
    .with_store(store);
    if entry.says_where {
        let bound = listener.local_addr().unwrap_or(http.addr);
        warn(&http::listening_line(bound));
    }
    http::serve(listener, Arc::new(hub), http, entry.tokens, shutdown).await;
    shut_down(upstreams).await;
    Ok(())
}

/// Until the process is asked to stop.
async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
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

/// What to say when some skill files could not be read.
fn left_out_warning(left_out: &[String], path: &Path) -> String {
    format!(
        "{} skill file(s) are left out and not offered ({}); `skillgraph check {}` says why",
        left_out.len(),
        left_out.join(", "),
        path.display()
    )
}
