//! `desk-upstream`: an example upstream MCP server for `skillgraph serve`.
//!
//! It answers the support desk's tools (`lookup_order`, `issue_refund`, …)
//! from canned data, so the desk's routes can be tried end to end without a
//! real order system: `skillgraph serve examples/support-desk` starts it as
//! a child process over stdio, with the map's folder as its working
//! directory, and forwards the active skills' tool calls to it. It is an
//! example, not a library, and nothing in it is meant to be reused.
//!
//! The data is `upstream/data.json` under the working directory, or the file
//! `--data FILE` names. Per tool name it holds the one argument the tool
//! takes (`argument`), the answer for each value of it written as a string
//! (`answers`), the answer for any other value (`default`, where `null`
//! answers with an error), the tool's `description`, and, to try a slow
//! upstream, how long it takes to answer (`delay_ms`). The argument is an
//! integer in the tool's schema when every value answered is one, else a
//! string. A missing or unreadable data file ends the process with exit
//! code 2 and a message on standard error naming the file and the fix.
//!
//! With `--http ADDR` it serves streamable HTTP on `/mcp` instead of stdio
//! (port 0: any free port), saying `desk-upstream: listening on
//! http://ADDR/mcp` on standard error: an upstream to reach by `url`.

#![forbid(unsafe_code)]

mod canned;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use canned::Desk;

/// Where the data is when `--data` is not given, relative to the map's folder.
const DEFAULT_DATA: &str = "upstream/data.json";

/// The MCP side: offers the canned tools and answers their calls.
#[derive(Clone)]
struct DeskServer {
    desk: Arc<Desk>,
}

impl ServerHandler for DeskServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.desk.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(delay) = self.desk.delay(&request.name) {
            tokio::time::sleep(delay).await;
        }
        self.desk
            .call(&request.name, request.arguments.as_ref())
            .map(CallToolResponse::from)
    }
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
struct Options {
    /// The data file: `--data FILE`, else [`DEFAULT_DATA`].
    data: String,
    /// Serve HTTP here (`--http ADDR`) instead of stdio.
    http: Option<SocketAddr>,
}

/// Read the command line.
fn options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let usage = "usage: desk-upstream [--data FILE] [--http ADDR]";
    let mut options = Options {
        data: DEFAULT_DATA.to_owned(),
        http: None,
    };
    while let Some(flag) = args.next() {
        let value = match flag.as_str() {
            "--data" | "--http" => args
                .next()
                .ok_or_else(|| format!("`{flag}` needs a value after it; {usage}"))?,
            _ => {
                return Err(format!(
                    "unexpected argument `{flag}`; the options are `--data FILE` and `--http ADDR` ({usage})"
                ));
            }
        };
        if flag == "--data" {
            options.data = value;
        } else {
            options.http = Some(value.parse().map_err(|_| {
                format!("`--http {value}` is not an address like 127.0.0.1:8080; {usage}")
            })?);
        }
    }
    Ok(options)
}

/// Serve streamable HTTP on `/mcp` at `addr` until the process is killed.
async fn serve_http(server: DeskServer, addr: SocketAddr) -> Result<(), String> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|err| format!("cannot listen on {addr}: {err}"))?;
    let bound = listener.local_addr().map_err(|err| err.to_string())?;
    eprintln!("desk-upstream: listening on http://{bound}/mcp");
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    loop {
        let (stream, _) = listener.accept().await.map_err(|err| err.to_string())?;
        let service = service.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request| {
                let service = service.clone();
                async move { Ok::<_, Infallible>(service.handle(request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                .await;
        });
    }
}

/// Read and parse the data file, or say which file failed and how to fix it.
fn load(path: &str) -> Result<Desk, String> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!(
            "cannot read the canned data `{path}`: {error}; run desk-upstream from \
             examples/support-desk (where `{DEFAULT_DATA}` is) or pass `--data FILE`"
        )
    })?;
    Desk::parse(&text).map_err(|error| {
        format!(
            "the canned data `{path}` is not in the expected shape: {error}; write per tool \
             name an object with \"argument\", \"answers\", \"default\" and \"description\""
        )
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let read = options(std::env::args().skip(1))
        .and_then(|options| load(&options.data).map(|desk| (desk, options.http)));
    let (desk, http) = match read {
        Ok(read) => read,
        Err(message) => {
            eprintln!("desk-upstream: {message}");
            return ExitCode::from(2);
        }
    };
    let server = DeskServer {
        desk: Arc::new(desk),
    };
    if let Some(addr) = http {
        if let Err(message) = serve_http(server, addr).await {
            eprintln!("desk-upstream: {message}");
            return ExitCode::FAILURE;
        }
        return ExitCode::SUCCESS;
    }
    let served = match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => running.waiting().await.map(drop).map_err(|e| e.to_string()),
        Err(error) => Err(error.to_string()),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("desk-upstream: the MCP session failed: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options_of(args: &[&str]) -> Result<Options, String> {
        options(args.iter().map(|arg| (*arg).to_owned()))
    }

    #[test]
    fn the_data_is_found_beside_the_map_unless_named() {
        assert_eq!(options_of(&[]).map(|o| o.data), Ok(DEFAULT_DATA.to_owned()));
        let options = options_of(&["--http", "127.0.0.1:0", "--data", "x.json"]);
        assert_eq!(
            options,
            Ok(Options {
                data: "x.json".to_owned(),
                http: "127.0.0.1:0".parse().ok(),
            })
        );
    }

    #[test]
    fn a_command_line_with_anything_else_is_refused_with_the_usage() {
        for args in [
            &["--data"][..],
            &["--slow"],
            &["--data", "a", "b"],
            &["--http", "nowhere"],
        ] {
            let refusal = options_of(args).err().unwrap_or_default();
            assert!(
                refusal.contains("usage: desk-upstream [--data FILE] [--http ADDR]"),
                "{refusal}"
            );
        }
    }
}
