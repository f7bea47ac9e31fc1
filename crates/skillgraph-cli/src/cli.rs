//! The commands of the `skillgraph` binary: argument parsing, and each
//! command's output in text or JSON. `play`, `replay`, `explain`, `test`
//! (in `cases`) and `guard --witness` (in `witness`) have modules of their
//! own; every command prints through `output`.

mod cases;
mod explain;
mod export;
mod output;
mod play;
mod replay;
mod witness;

pub(crate) use output::warn;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use skillgraph::skill_checkup::{Checkup, Problem};
use skillgraph::skill_core::{GuardViewInput, ReadSkillOffer, SkillMap, ToolResult, did_you_mean};
use skillgraph::skill_explain::mermaid;
use skillgraph::skill_guard::start::StartRules;
use skillgraph::skill_guard::{CompiledMap, Evaluation, Guard, Iteration, RouteGuards};
use skillgraph::skill_session::CallPolicy;
use skillgraph::skill_tools::{
    DEFAULT_CATALOG_BUDGET, HostFormat, ToolDescriptor, list_skills, read_skill_within,
};
use skillgraph::{LoadError, Loaded, PrepareError, RecordFileError, load};
use skillgraph_mcp::{ServeConfig, ServeError};

const EXAMPLES: &str = "Examples:
  skillgraph check examples/support-desk
  skillgraph tools examples/support-desk --cursor triage --format anthropic
  skillgraph route examples/support-desk --cursor triage --results examples/support-desk/results/risky-order.jsonl
  skillgraph draw examples/support-desk
  skillgraph play examples/support-desk --record run.jsonl < examples/support-desk/conversations/refund.jsonl
  skillgraph replay run.jsonl
  skillgraph explain run.jsonl
  skillgraph guard --guard '{\"riskLevel\":{\"in\":[\"high\"]}}' --view '{\"toolName\":\"lookup_order\",\"result\":\"{\\\"riskLevel\\\":\\\"high\\\"}\"}'

Exit codes: 0 success (warnings allowed), 1 the map or guard has errors, a test case fails or a replay differs, 2 the input cannot be used.";

/// Check, inspect and run an explainable skill graph.
#[derive(Debug, Parser)]
#[command(name = "skillgraph", version, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Report every problem of a map: errors, then warnings.
    ///
    /// PATH is a skillmap.json file with inline skills, or a folder of Agent
    /// Skills as its author laid it out, with or without a skillmap.json.
    /// Every broken skill is reported, and the others still load.
    #[command(
        after_help = "Folders:\n  A skill is a folder holding a SKILL.md (a file, or a link to one); its id is the folder's name.\n  PATH itself, when it holds a SKILL.md, is one skill.\n  Else every folder holding a SKILL.md to a depth of 4 below PATH is a skill; other folders are\n  looked into without being offered, so these layouts load, side by side:\n    skills/<name>/SKILL.md              a skills folder\n    <name>/SKILL.md                     a flat folder (.claude/skills, a skills repository)\n    skills/<category>/<name>/SKILL.md   category or author folders (skills/.curated/<name>)\n    plugins/<plugin>/skills/<name>/SKILL.md, .claude/skills/<name>/SKILL.md\n  A skill's own subfolders (scripts/, references/) are its files. .git and node_modules are not looked into.\n  A skillmap.json beside them adds entries, routes and per-skill settings.\n\nExamples:\n  skillgraph check examples/support-desk\n  skillgraph check ~/.claude/skills\n  skillgraph check map.json --format json\n\nExit codes: 0 no error (warnings allowed), 1 the map has errors (every broken skill is named), 2 the input cannot be used (a missing or unreadable PATH, or no skill anywhere below it, with the folders looked in)."
    )]
    Check {
        /// The map: a skillmap.json file or a folder holding one.
        path: PathBuf,
        /// `text` (rustc-style) or `json` (the check-up object).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print the read_skill and list_skills tools for a position of the cursor.
    #[command(
        after_help = "Examples:\n  skillgraph tools examples/support-desk\n  skillgraph tools examples/support-desk --cursor triage --hide refunds --format openai\n  skillgraph tools map.json --offer offer.json --format mcp"
    )]
    Tools {
        /// The map: a skillmap.json file or a folder holding one.
        path: PathBuf,
        /// The skill the cursor stands on (none: a run's start).
        #[arg(long)]
        cursor: Option<String>,
        /// A skill id this reader may not be told about (repeatable).
        #[arg(long = "hide", value_name = "ID")]
        hide: Vec<String>,
        /// A read_skill offer as JSON, used instead of the one the map gives.
        #[arg(long, value_name = "FILE")]
        offer: Option<PathBuf>,
        /// `text` for a person, or a host's tool JSON.
        #[arg(long, value_enum, default_value_t = ToolFormat::Text)]
        format: ToolFormat,
        /// The most characters read_skill's description may hold; later skills are listed by id.
        #[arg(long, value_name = "CHARS", default_value_t = DEFAULT_CATALOG_BUDGET)]
        catalog_budget: usize,
    },
    /// Resolve where one iteration's tool results move the cursor.
    #[command(
        after_help = "Examples:\n  skillgraph route examples/support-desk --cursor triage --results examples/support-desk/results/risky-order.jsonl --iteration 2 --message 'refund order 4412'\n\nThe results file holds one JSON object per line: {\"toolName\", \"result\", \"status\"?}, in call order."
    )]
    Route {
        /// The map: a skillmap.json file or a folder holding one.
        path: PathBuf,
        /// The skill the cursor stands on.
        #[arg(long)]
        cursor: String,
        /// JSON lines of tool results, in call order.
        #[arg(long, value_name = "FILE")]
        results: PathBuf,
        /// The iteration number guards read as `iteration`.
        #[arg(long, default_value_t = 0.0, value_name = "N")]
        iteration: f64,
        /// The user's message guards read as `userMessage`.
        #[arg(long, default_value = "", value_name = "TEXT")]
        message: String,
    },
    /// Draw the map as a mermaid flowchart.
    #[command(after_help = "Examples:\n  skillgraph draw examples/support-desk > map.mmd")]
    Draw {
        /// The map: a skillmap.json file or a folder holding one.
        path: PathBuf,
    },
    /// Run one session on a map, driven by JSON lines on standard input.
    ///
    /// Each line is one step; each step gets one JSON answer line on
    /// standard output (a bad line gets an error answer naming the line, and
    /// the session goes on). Ends with exit 0 at the end of the input.
    #[command(
        after_help = "Steps, one JSON object a line:\n  {\"turn\": \"refund order 4412\"}                       a user message begins a turn\n  {\"turn\": {\"message\": \"…\", \"menu\": {\"candidates\": [{\"id\": \"refunds\", \"relevance\": 0.8}], \"stay\": false}}}\n  {\"read\": \"billing\"}                                 the model calls read_skill\n  {\"call\": \"lookup_order\"}                           the model calls a host tool: the call gate admits it or refuses it\n  {\"call\": {\"tool_name\": \"skip_step\", \"arguments\": {\"reason\": \"…\"}}}   the model passes over the current step of a procedure\n  {\"result\": {\"tool_name\": \"lookup_order\", \"result\": \"{…}\", \"status\": \"success\"}}\n  {\"end\": true}                                       the iteration ends: the cursor moves once\n  {\"tools\": \"anthropic\"}                              read_skill and list_skills now (anthropic, openai, mcp)\n  {\"visible_tools\": true}                             the host tools the active skills carry\n  {\"prompt\": true}                                    the system prompt of the active skills\n\nExamples:\n  skillgraph play examples/support-desk --record run.jsonl < examples/support-desk/conversations/refund.jsonl\n\nExit codes: 0 at the end of the input, 1 a route guard of the map is refused, 2 the input cannot be used."
    )]
    Play {
        /// The map: a skillmap.json file or a folder holding one.
        path: PathBuf,
        /// How reads of hops are judged: assist, guard or rails.
        #[arg(long, value_enum, default_value_t = play::PostureArg::Assist)]
        posture: play::PostureArg,
        /// Write the session's record here, one event a line, flushed per event.
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// Count every host tool's call as offered (`call` steps admit all).
        #[arg(long, conflicts_with = "strict_tools")]
        all_tools: bool,
        /// Refuse a `call` step of a tool no active skill carries.
        #[arg(long)]
        strict_tools: bool,
        /// The most characters read_skill's description may hold; later skills are listed by id.
        #[arg(long, value_name = "CHARS", default_value_t = DEFAULT_CATALOG_BUDGET)]
        catalog_budget: usize,
        /// Export the session as OpenTelemetry traces to this OTLP/HTTP receiver (base URL; default: OTEL_EXPORTER_OTLP_ENDPOINT).
        #[arg(long, value_name = "URL")]
        otlp: Option<String>,
        /// On a map that declares roles, the role the session takes (default: "*"): the skills it hides are withheld.
        #[arg(long, value_name = "ROLE")]
        anonymous_role: Option<String>,
        /// The most iterations a turn takes, over the map's budget (0: none).
        #[arg(long, value_name = "N")]
        max_iterations: Option<u64>,
    },
    /// Serve the map as an MCP server over standard input and output, or
    /// over streamable HTTP with --http.
    ///
    /// The upstream servers declared under `mcpServers` in skillmap.json are
    /// started in the map's folder and their tools proxied. The client is
    /// offered read_skill, list_skills and the tools of the active skills;
    /// every tool answer is routed, and a route's move brings the new
    /// skill's body with the answer.
    #[command(
        after_help = "Examples:\n  skillgraph serve examples/support-desk\n  skillgraph serve examples/support-desk --record run.jsonl --posture rails\n  skillgraph serve examples/support-desk --http 127.0.0.1:8080 --record runs/\n  skillgraph serve examples/support-desk --otlp http://127.0.0.1:4318\n\nIn an MCP client's configuration:\n  {\"mcpServers\": {\"support-desk\": {\"command\": \"skillgraph\", \"args\": [\"serve\", \"/path/to/examples/support-desk\"]}}}\n  {\"mcpServers\": {\"support-desk\": {\"url\": \"http://127.0.0.1:8080/mcp\"}}}\nThe first runs skillgraph from the client's PATH: install it with `cargo install --locked --path crates/skillgraph-cli` in a skillgraph checkout.\n\nThe record is also served as the resource skillgraph://record (over HTTP, skillgraph://record/RUN for the run handle RUN).\n\nExit codes: 0 the client closed the connection (over HTTP: the server was interrupted), 1 a route guard of the map is refused, 2 the map cannot be used or an upstream server did not start (named, with the end of its standard error)."
    )]
    Serve {
        /// The map: a folder (or skillmap.json file) declaring `mcpServers`.
        path: PathBuf,
        /// Write the session's record here, one event a line, flushed per event (with --http: a folder, one file per run).
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// How reads of hops are judged: assist, guard or rails.
        #[arg(long, value_enum, default_value_t = play::PostureArg::Assist)]
        posture: play::PostureArg,
        /// Offer every upstream tool, not only the active skills' tools.
        #[arg(long, conflicts_with = "strict_tools")]
        all_tools: bool,
        /// Refuse a call to an upstream tool that is not offered now.
        #[arg(long)]
        strict_tools: bool,
        /// Seconds an upstream server may take to start or to answer one call.
        #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
        upstream_timeout: u64,
        /// The most characters read_skill's description may hold; later skills are listed by id.
        #[arg(long, value_name = "CHARS", default_value_t = DEFAULT_CATALOG_BUDGET)]
        catalog_budget: usize,
        /// Export a span per MCP request, with the run's facts, to this OTLP/HTTP receiver (base URL; default: OTEL_EXPORTER_OTLP_ENDPOINT).
        #[arg(long, value_name = "URL")]
        otlp: Option<String>,
        /// Seal the state handed to clients to return (an input_required retry's requestState) with the bytes of this file (at least 32), shared by replicas; default: a key made at start-up.
        #[arg(long, value_name = "FILE")]
        state_key: Option<PathBuf>,
        /// On a map that declares roles, the role a request with no principal takes (over stdio, every request; default: "*"); over --http without --auth-tokens or --auth-jwks a map with roles needs it.
        #[arg(long, value_name = "ROLE")]
        anonymous_role: Option<String>,
        /// The most iterations a run takes (a run is one turn), over the map's budget (0: none).
        #[arg(long, value_name = "N")]
        max_iterations: Option<u64>,
        #[command(flatten)]
        http: Box<HttpArgs>,
    },
    /// Records kept in a run store (`serve --http --store`).
    Record {
        #[command(subcommand)]
        command: RecordCommand,
    },
    /// Reproduce a run from its record: the same inputs on the same map must
    /// write the same record.
    ///
    /// The map is the one the record's start event declares, or the map at
    /// --map (to learn whether a changed map still makes the same
    /// decisions).
    #[command(
        after_help = "Examples:\n  skillgraph replay run.jsonl\n  skillgraph replay run.jsonl --map examples/support-desk\n\nExit codes: 0 the record is reproduced exactly, 1 the replay parts from the record (the first line that differs is named, with the field), 2 the record cannot be used."
    )]
    Replay {
        /// The record: JSON lines written by `play --record`, `serve --record` or a host.
        record: PathBuf,
        /// Replay on this map (a skillmap.json file or a folder) instead of the record's own.
        #[arg(long, value_name = "PATH")]
        map: Option<PathBuf>,
    },
    /// Explain a session's record: where the cursor ended, and why.
    #[command(
        after_help = "Examples:\n  skillgraph explain run.jsonl\n  skillgraph explain run.jsonl --iteration 2 --format json\n  skillgraph explain run.jsonl --format mermaid > run.mmd\n  skillgraph explain run.jsonl --format html > run.html\n\nExit codes: 0 explained (a record cut mid-line is explained up to the cut, with a warning), 2 the record cannot be used (another version, a bad line, an iteration it does not end)."
    )]
    Explain {
        /// The record: JSON lines written by `play --record` or a host.
        record: PathBuf,
        /// Explain up to the end of this iteration instead of the record's end.
        #[arg(long, value_name = "N")]
        iteration: Option<u64>,
        /// `text` for a person, `json`, or a `mermaid` chart of the path.
        #[arg(long, value_enum, default_value_t = explain::ExplainFormat::Text)]
        format: explain::ExplainFormat,
    },
    /// Compile one guard and print its evidence for one hop.
    #[command(
        after_help = "Examples:\n  skillgraph guard --guard '{\"score\":{\"gte\":0.8}}' --view '{\"toolName\":\"score\",\"result\":\"{\\\"score\\\":0.5}\"}'\n  skillgraph guard --guard '{\"status\":{\"eq\":\"success\"}}' --view '{\"status\":\"failure\"}' --format json\n  skillgraph guard --guard '{\"score\":{\"gte\":0.8}}' --witness\n\nView keys: toolName, result, status, iteration, userMessage, currentSkillId.\nExit codes: 0 evaluated (whatever the verdict), 1 the guard is refused, 2 bad JSON."
    )]
    Guard {
        /// The guard, as JSON.
        #[arg(long, value_name = "JSON")]
        guard: String,
        /// The hop, as JSON: toolName, result, status, iteration, userMessage, currentSkillId.
        #[arg(long, value_name = "JSON", required_unless_present = "witness")]
        view: Option<String>,
        /// Instead of judging a view, find one that passes and, for each
        /// condition, one that fails it alone (a near miss).
        #[arg(long, conflicts_with = "view")]
        witness: bool,
        /// `text` (a table) or `json` (the evaluation, or the witness).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Run the routing cases of DIR/tests/*.jsonl, or generate them.
    ///
    /// Each line is one case: {"name", "cursor", "results": [{"toolName",
    /// "result", "status"?}], "iteration"?, "message"?, "expect": {"to"}}.
    /// A failed case is shown with the move it really made and the guards
    /// that closed routes.
    #[command(
        after_help = "Examples:\n  skillgraph test examples/support-desk\n  skillgraph test examples/support-desk --generate\n\n--generate writes DIR/tests/generated.jsonl: for each deterministic route its witness and its near misses, each expecting the move it really makes.\nExit codes: 0 every case passes (or the cases were written), 1 a case fails or a route guard is refused, 2 a case line or the map cannot be used."
    )]
    Test {
        /// The map: a folder (cases in its tests/*.jsonl) or a skillmap.json file (cases in tests/ beside it).
        path: PathBuf,
        /// Write tests/generated.jsonl from the routes' witnesses and near misses.
        #[arg(long)]
        generate: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ToolFormat {
    Text,
    Anthropic,
    Openai,
    Mcp,
}

/// A command that could not complete: its exit code, a stable code and the
/// message (what was wrong and how to fix it).
#[derive(Debug)]
pub struct Failure {
    /// The process exit code (1 or 2).
    pub exit: u8,
    /// A stable code.
    pub code: &'static str,
    /// What was wrong and how to fix it.
    pub message: String,
}

impl Failure {
    fn unusable(code: &'static str, message: impl Into<String>) -> Self {
        Failure {
            exit: 2,
            code,
            message: message.into(),
        }
    }

    fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        Failure {
            exit: 1,
            code,
            message: message.into(),
        }
    }

    /// The command's output could not be written (`output`, exit 2).
    fn output(message: impl Into<String>) -> Self {
        Failure::unusable("output", message)
    }
}

impl From<LoadError> for Failure {
    fn from(err: LoadError) -> Self {
        Failure::unusable(err.code(), err.to_string())
    }
}

impl From<RecordFileError> for Failure {
    fn from(err: RecordFileError) -> Self {
        Failure::unusable(err.code(), err.to_string())
    }
}

/// A server that could not start is unusable input (exit 2), except a map
/// whose route guard is refused, which is a map error (exit 1).
impl From<ServeError> for Failure {
    fn from(err: ServeError) -> Self {
        let exit = if err.is_map_error() { 1 } else { 2 };
        Failure {
            exit,
            code: err.code(),
            message: err.to_string(),
        }
    }
}

/// Run one command; `Ok` carries the exit code of a command that completed.
pub fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Check { path, format } => check(&path, format),
        Command::Tools {
            path,
            cursor,
            hide,
            offer,
            format,
            catalog_budget,
        } => tools(
            &path,
            Position {
                cursor: cursor.as_deref(),
                hide: &hide,
                offer: offer.as_deref(),
            },
            format,
            catalog_budget,
        ),
        Command::Route {
            path,
            cursor,
            results,
            iteration,
            message,
        } => route(&path, &cursor, &results, iteration, &message),
        Command::Draw { path } => {
            output::print(&mermaid(&load(&path)?.map))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Play {
            path,
            posture,
            record,
            all_tools,
            strict_tools,
            catalog_budget,
            otlp,
            anonymous_role,
            max_iterations,
        } => play::play(
            &path,
            play::Setup {
                posture,
                tools: call_policy(all_tools, strict_tools),
                catalog_budget,
                role: anonymous_role,
                max_iterations,
            },
            record.as_deref(),
            otlp.as_deref(),
        ),
        Command::Serve {
            path,
            record,
            posture,
            all_tools,
            strict_tools,
            upstream_timeout,
            catalog_budget,
            otlp,
            state_key,
            anonymous_role,
            max_iterations,
            http,
        } => {
            let mut config = ServeConfig::new(path);
            config.anonymous_role = anonymous_role;
            config.max_iterations = max_iterations;
            config.otlp = otlp;
            config.state_key = state_key;
            config.record = record;
            config.posture = posture.into();
            config.tools = call_policy(all_tools, strict_tools);
            config.upstream_timeout = std::time::Duration::from_secs(upstream_timeout);
            config.catalog_budget = catalog_budget;
            match http.config() {
                Some(http) => skillgraph_mcp::serve_http(&config, &http)?,
                None => skillgraph_mcp::serve_stdio(&config)?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Record {
            command: RecordCommand::Export(export),
        } => export::export_command(export),
        Command::Replay { record, map } => replay::replay_command(&record, map.as_deref()),
        Command::Explain {
            record,
            iteration,
            format,
        } => explain::explain_command(&record, iteration, format),
        Command::Guard {
            guard,
            view: Some(view),
            format,
            ..
        } => guard_command(&guard, &view, format),
        Command::Guard { guard, format, .. } => witness::witness_command(&guard, format),
        Command::Test { path, generate } => cases::test_command(&path, generate),
    }
}

/// How `serve --http` listens (SPEC §9.8); every option but --http needs it.
#[derive(Debug, clap::Args)]
pub struct HttpArgs {
    /// Serve streamable HTTP on /mcp at this address (127.0.0.1:8080; port 0: any free port, said on standard error).
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// A Host header to accept (repeatable; the ones given replace the default: localhost, 127.0.0.1, ::1).
    #[arg(long, value_name = "HOST", requires = "http")]
    allowed_host: Vec<String>,
    /// A browser Origin to accept, with its scheme (repeatable; the ones given replace the default: the loopback origins, http or https on any port; a page from anywhere else is refused).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allowed_origin: Vec<String>,
    /// The largest request body accepted, in bytes (413 beyond it).
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024, requires = "http")]
    max_body: usize,
    /// Require `Authorization: Bearer TOKEN`: a file of lines `PRINCIPAL TOKEN_SHA256 [ROLE,…]`.
    #[arg(long, value_name = "FILE", requires = "http")]
    auth_tokens: Option<PathBuf>,
    /// Accept bearer JWTs signed by a key of this JSON Web Key Set (RS256, ES256, EdDSA; chosen by the token's kid; read again on SIGHUP); the principal is ISS#SUB.
    #[arg(long, value_name = "FILE", requires_all = ["http", "auth_issuer", "auth_audience"])]
    auth_jwks: Option<PathBuf>,
    /// The one issuer (iss) a JWT may have.
    #[arg(long, value_name = "ISS", requires = "auth_jwks")]
    auth_issuer: Option<String>,
    /// The audience (aud) a JWT must hold.
    #[arg(long, value_name = "AUD", requires = "auth_jwks")]
    auth_audience: Option<String>,
    /// The JWT claim that holds the principal's roles: strings, or one space-separated string.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "roles",
        requires = "auth_jwks"
    )]
    auth_roles_claim: String,
    /// How long an idle run is held: seconds, or a number with s, m, h or d (default 24h).
    #[arg(long, value_name = "DURATION", default_value = "24h", value_parser = parse_duration, requires = "http")]
    run_ttl: std::time::Duration,
    /// The most runs held at once; the least recently used idle run goes first.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..), requires = "http")]
    max_runs: u64,
    /// The most runs one principal holds at once; at it, its own least recently used idle run goes (default: a tenth of --max-runs, at least 10; with --auth-tokens).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), requires = "http")]
    max_runs_per_principal: Option<u64>,
    /// The runs one principal may start a minute, in bursts of a tenth of it (at least 10); past it, 429 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 600, value_parser = clap::value_parser!(u32).range(1..), requires = "http")]
    new_runs_per_minute: u32,
    /// The most connections held at once (never more than `ulimit -n` leaves room for); at it, the connection stalled longest makes room.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..), requires = "http")]
    max_connections: u64,
    /// How long a client may take to send a request body after its head: seconds, or a number with s, m, h or d (408 and closed beyond it).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration, requires = "http")]
    body_timeout: std::time::Duration,
    /// Where the runs are kept: memory (this process), or redis://[USER:PASS@]HOST:PORT[/DB], a Redis or Valkey that several replicas share.
    #[arg(long, value_name = "URL", default_value = "memory", requires = "http")]
    store: String,
    /// What every key in the run store begins with.
    #[arg(long, value_name = "PREFIX", default_value = "sg", requires = "http")]
    store_prefix: String,
    /// The longest a run store call may take (500ms, 2s); past it the request fails and nothing is forwarded.
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = parse_duration, requires = "http")]
    store_timeout: std::time::Duration,
    /// When a step counts as stored: ack (the store answered its append) or fsync (the store wrote it to disk: Redis 7.2 or later, about 4 ms more a step).
    #[arg(long, value_enum, default_value_t = DurabilityArg::Ack, requires = "http")]
    store_durability: DurabilityArg,
    /// This replica's id in the steps it appends to the run store (default: host name, process id and 4 random hex digits).
    #[arg(long, value_name = "ID", requires = "http")]
    replica_id: Option<String>,
    /// How long requests are still served once the process is asked to stop (SIGTERM), /readyz answering 503 meanwhile.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_wait, requires = "http")]
    drain_grace: std::time::Duration,
    /// How long requests under way may then take to finish before the process exits.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_wait, requires = "http")]
    drain_timeout: std::time::Duration,
}

/// `--store-durability`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum DurabilityArg {
    /// The store answered the append.
    Ack,
    /// The store wrote the append to its disk.
    Fsync,
}

/// `skillgraph record`'s commands.
#[derive(Debug, clap::Subcommand)]
pub enum RecordCommand {
    /// Write runs' records from a run store, each byte for byte the record `serve --record` writes (`explain` and `replay` read it).
    #[command(
        after_help = "Examples:\n  skillgraph record export --store redis://127.0.0.1:6379 run_0123… > run.jsonl\n  skillgraph record export --store redis://127.0.0.1:6379 --all --out records/\n\nA run lives in the store until --run-ttl after its last step: export on a schedule to keep records longer.\n\nExit codes: 0 written, 2 the store cannot be reached, holds no such run, or the output cannot be written."
    )]
    Export(export::ExportArgs),
}

impl HttpArgs {
    /// The HTTP configuration, when --http is given.
    fn config(self) -> Option<skillgraph_mcp::HttpConfig> {
        let mut config = skillgraph_mcp::HttpConfig::new(self.http?);
        if !self.allowed_host.is_empty() {
            config.allowed_hosts = self.allowed_host;
        }
        if !self.allowed_origin.is_empty() {
            config.allowed_origins = self.allowed_origin;
        }
        config.max_body = self.max_body;
        config.auth_tokens = self.auth_tokens;
        if let (Some(jwks), Some(issuer), Some(audience)) =
            (self.auth_jwks, self.auth_issuer, self.auth_audience)
        {
            let mut jwt = skillgraph_mcp::JwtConfig::new(jwks, issuer, audience);
            jwt.roles_claim = self.auth_roles_claim;
            config.auth_jwt = Some(jwt);
        }
        config.run_ttl = self.run_ttl;
        config.max_runs = usize::try_from(self.max_runs).unwrap_or(usize::MAX);
        config.max_runs_per_principal = self
            .max_runs_per_principal
            .map(|quota| usize::try_from(quota).unwrap_or(usize::MAX));
        config.new_runs_per_minute = self.new_runs_per_minute;
        config.max_connections = usize::try_from(self.max_connections).unwrap_or(usize::MAX);
        config.body_timeout = self.body_timeout;
        config.drain_grace = self.drain_grace;
        config.drain_timeout = self.drain_timeout;
        if self.store != "memory" {
            let mut store = skillgraph_mcp::StoreConfig::new(self.store);
            store.prefix = self.store_prefix;
            store.timeout = self.store_timeout;
            store.replica = self.replica_id;
            store.durability = match self.store_durability {
                DurabilityArg::Ack => skillgraph_mcp::Durability::Ack,
                DurabilityArg::Fsync => skillgraph_mcp::Durability::Fsync,
            };
            config.store = Some(store);
        }
        Some(config)
    }
}

/// `90`, `90s`, `30m`, `24h`, `7d`, `500ms`; above zero.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let duration = parse_wait(text)?;
    if duration.is_zero() {
        return Err(format!(
            "\"{text}\" is no time at all; give a duration above zero (24h, 30s, 500ms)"
        ));
    }
    Ok(duration)
}

/// `90`, `90s`, `30m`, `24h`, `7d`, `500ms`; zero allowed.
fn parse_wait(text: &str) -> Result<std::time::Duration, String> {
    let not_one = || {
        format!(
            "\"{text}\" is not a duration; write seconds, or a number with ms, s, m, h or d (24h, 500ms)"
        )
    };
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let number: u64 = number.parse().map_err(|_| not_one())?;
    let millis = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(not_one()),
    };
    Ok(std::time::Duration::from_millis(
        number.saturating_mul(millis),
    ))
}

/// The call policy `--all-tools` and `--strict-tools` choose (clap refuses
/// the two together).
fn call_policy(all_tools: bool, strict_tools: bool) -> CallPolicy {
    match (all_tools, strict_tools) {
        (true, _) => CallPolicy::All,
        (false, true) => CallPolicy::Strict,
        (false, false) => CallPolicy::Scoped,
    }
}

/// The text of an input file; one that cannot be read is unusable input
/// (exit 2) naming the file and the system's reason.
fn read_file(file: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(file).map_err(|err| {
        Failure::unusable(
            "unreadable",
            format!("{}: cannot be read: {err}", file.display()),
        )
    })
}

/// The map read from `path` with every route guard compiled; a refused
/// guard is a map error (exit 1) naming each route and the command that
/// shows every problem.
fn compile_map<'m>(map: &'m SkillMap, path: &Path) -> Result<CompiledMap<'m>, Failure> {
    CompiledMap::new(map).map_err(|errors| refused_map(errors.code(), &errors, path))
}

/// Every route guard of the map read from `path`, compiled once for a
/// session's graph and its check-up (`play`); a refused guard is refused as
/// [`compile_map`] refuses it.
fn compile_guards(map: &SkillMap, path: &Path) -> Result<RouteGuards, Failure> {
    RouteGuards::compile(map).map_err(|errors| refused_map(errors.code(), &errors, path))
}

/// The start rules of the map read from `path`, compiled once for a
/// session's graph; a refused rule is a map error as a refused guard is.
fn compile_start(map: &SkillMap, path: &Path) -> Result<StartRules, Failure> {
    StartRules::compile(map.start.as_ref())
        .map_err(|errors| refused_map(errors.code(), &errors, path))
}

/// Why the map at `path` could not be prepared: unusable input (exit 2),
/// or a refused guard or start rule, a map error (exit 1).
fn prepare_failure(err: PrepareError, path: &Path) -> Failure {
    match err {
        PrepareError::Load(err) => err.into(),
        err => refused_map(err.code(), &err, path),
    }
}

/// A map error (exit 1): what was refused, and the command that shows every
/// problem of the map at `path`.
fn refused_map(code: &'static str, err: &dyn std::fmt::Display, path: &Path) -> Failure {
    Failure::invalid(
        code,
        format!(
            "{err}\nRun `skillgraph check {}` for every problem of the map.",
            path.display()
        ),
    )
}

fn check(path: &Path, format: Format) -> Result<ExitCode, Failure> {
    let checkup = load(path)?.checkup();
    match format {
        Format::Json => output::print_json(&checkup)?,
        Format::Text => output::print(&render_checkup(&checkup))?,
    }
    Ok(if checkup.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// rustc-style text: `severity[code]: message`, then where.
fn render_checkup(checkup: &Checkup) -> String {
    let mut out = String::new();
    for problem in checkup.errors().chain(checkup.warnings()) {
        let _ = writeln!(
            out,
            "{}[{}]: {}",
            problem.severity(),
            problem.code(),
            problem.message()
        );
        if let Some(place) = place(problem) {
            let _ = writeln!(out, "  --> {place}");
        }
        out.push('\n');
    }
    let errors = checkup.errors().count();
    let warnings = checkup.warnings().count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        out,
        "{}, {}",
        plural(errors, "error"),
        plural(warnings, "warning")
    );
    out
}

fn place(problem: &Problem) -> Option<String> {
    match (problem.route(), problem.skill()) {
        (Some((from, to)), _) => Some(format!("route {from}→{to}")),
        (_, Some(skill)) => Some(match (problem.step(), problem.tool()) {
            (Some(step), Some(tool)) => format!("skill {skill}, step {step} ({tool})"),
            (Some(step), None) => format!("skill {skill}, step {step}"),
            _ => format!("skill {skill}"),
        }),
        _ => None,
    }
}

/// `id` must be a skill of the map.
fn known_skill(map: &SkillMap, id: &str, flag: &str) -> Result<(), Failure> {
    if map.skill(id).is_some() {
        return Ok(());
    }
    let ids: Vec<String> = map.skills.iter().map(|s| s.id.clone()).collect();
    let shown = if ids.len() > 20 {
        format!("{}, … and {} more", ids[..20].join(", "), ids.len() - 20)
    } else {
        ids.join(", ")
    };
    let hint = did_you_mean(id, ids.iter().map(String::as_str));
    Err(Failure::unusable(
        "unknown-skill-argument",
        format!(
            "{flag} names \"{id}\", which is not a skill of the map{hint}; the skills are: {shown}"
        ),
    ))
}

/// Where `tools` shows the tools for: a cursor and hidden ids, or an offer
/// file.
struct Position<'a> {
    cursor: Option<&'a str>,
    hide: &'a [String],
    offer: Option<&'a Path>,
}

fn tools(
    path: &Path,
    position: Position<'_>,
    format: ToolFormat,
    catalog_budget: usize,
) -> Result<ExitCode, Failure> {
    let Position {
        cursor,
        hide,
        offer,
    } = position;
    let Loaded { map, left_out, .. } = load(path)?;
    if !left_out.is_empty() {
        output::warn(&format!(
            "warning: {} skill file(s) are left out and not offered ({}); `skillgraph check {}` says why",
            left_out.len(),
            left_out.join(", "),
            path.display()
        ));
    }
    let offer = match offer {
        Some(file) => {
            let text = read_file(file)?;
            serde_json::from_str::<ReadSkillOffer>(&text).map_err(|err| {
                Failure::from(LoadError::from_json::<ReadSkillOffer>(file, &text, &err))
            })?
        }
        None => {
            if let Some(cursor) = cursor {
                known_skill(&map, cursor, "--cursor")?;
            }
            for id in hide {
                known_skill(&map, id, "--hide")?;
            }
            map.offer_at(cursor, hide, false)
        }
    };
    let descriptors: Vec<ToolDescriptor> =
        read_skill_within(&map.skills, Some(&offer), catalog_budget)
            .into_iter()
            .chain(list_skills(&map.skills))
            .collect();
    let host = match format {
        ToolFormat::Text => {
            if descriptors.is_empty() {
                output::print_line(
                    "(no tools: the map has no skills, or a decision tree leaves none to open)",
                )?;
            }
            for tool in &descriptors {
                output::print(&format!("{}\n{}\n\n", tool.name, indent(&tool.description)))?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        ToolFormat::Anthropic => HostFormat::Anthropic,
        ToolFormat::Openai => HostFormat::OpenAi,
        ToolFormat::Mcp => HostFormat::Mcp,
    };
    let tools = descriptors
        .iter()
        .map(|tool| tool.to_host(host))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| Failure::invalid(err.code(), err.to_string()))?;
    output::print_json(&tools)?;
    Ok(ExitCode::SUCCESS)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                String::new()
            } else {
                format!("    {line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn route(
    path: &Path,
    cursor: &str,
    results: &Path,
    iteration: f64,
    message: &str,
) -> Result<ExitCode, Failure> {
    let Loaded { map, .. } = load(path)?;
    known_skill(&map, cursor, "--cursor")?;
    let text = read_file(results)?;
    let mut batch = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let result: ToolResult = serde_json::from_str(line).map_err(|err| {
            Failure::unusable(
                "bad-json",
                format!(
                    "{}:{}:{}: {}; each line is one tool result {{\"toolName\": \"…\", \"result\": \"…\", \"status\": \"success\"}}",
                    results.display(),
                    number + 1,
                    err.column(),
                    err.to_string().rsplit_once(" at line ").map_or_else(|| err.to_string(), |(m, _)| m.to_owned())
                ),
            )
        })?;
        batch.push(result);
    }
    let compiled = compile_map(&map, path)?;
    let moved = compiled.resolve(
        cursor,
        &batch,
        Iteration {
            number: iteration,
            user_message: message,
        },
    );
    output::print_json(&moved)?;
    Ok(ExitCode::SUCCESS)
}

/// The `--guard` argument read as JSON (exit 2 when it is not).
fn guard_json(guard: &str) -> Result<serde_json::Value, Failure> {
    serde_json::from_str(guard).map_err(|err| {
        Failure::unusable(
            "bad-json",
            format!("--guard: {err}; a guard is {{\"key\": {{\"op\": value}}}}"),
        )
    })
}

/// A guard compiled (exit 1 when it is refused).
fn compile_guard(guard_json: &serde_json::Value) -> Result<Guard, Failure> {
    Guard::compile(guard_json)
        .map_err(|err| Failure::invalid(err.code(), format!("--guard is refused: {err}")))
}

fn guard_command(guard: &str, view: &str, format: Format) -> Result<ExitCode, Failure> {
    let guard_json = guard_json(guard)?;
    let input: GuardViewInput = serde_json::from_str(view).map_err(|err| {
        Failure::unusable(
            "bad-json",
            format!(
                "--view: {err}; the view is an object with toolName, result, status, iteration, userMessage, currentSkillId"
            ),
        )
    })?;
    let compiled = compile_guard(&guard_json)?;
    let evaluation = compiled.evaluate(&input.view());
    match format {
        Format::Json => output::print_json(&evaluation)?,
        Format::Text => output::print(&evidence_table(&evaluation))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The evidence as an aligned table, verdict first.
fn evidence_table(evaluation: &Evaluation<'_>) -> String {
    let mut rows = vec![[
        "key".to_owned(),
        "op".to_owned(),
        "value".to_owned(),
        "actual".to_owned(),
        "passed".to_owned(),
    ]];
    for c in &evaluation.conditions {
        rows.push([
            c.condition.key.to_string(),
            c.condition.op.to_string(),
            c.condition.value.to_string(),
            c.actual_summary.to_string(),
            if c.passed { "yes" } else { "no" }.to_owned(),
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!(
        "verdict: {}\n",
        if evaluation.verdict { "pass" } else { "fail" }
    );
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn problems_print_rustc_style() {
        use skillgraph::skill_checkup::ProblemCode;
        let problem = Problem::new(ProblemCode::GuardRefused, "bad").about_route("a", "b");
        let text = render_checkup(&Checkup::from_problems(vec![problem]));
        assert_eq!(
            text,
            "error[guard-refused]: bad\n  --> route a→b\n\n1 error, 0 warnings\n"
        );
    }

    #[test]
    fn a_duration_is_seconds_or_a_number_with_its_unit_and_never_zero() {
        use std::time::Duration;
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_duration("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("2d"), Ok(Duration::from_secs(172_800)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_wait("0"), Ok(Duration::ZERO), "no drain at all");
        for bad in ["0", "0h", "", "h", "5w", "-1s", "1.5h"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} is refused");
        }
    }
}
