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

#![forbid(unsafe_code)]

mod canned;

use std::process::ExitCode;

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
struct DeskServer {
    desk: Desk,
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

/// The data file the command line names, else [`DEFAULT_DATA`].
fn data_path(mut args: impl Iterator<Item = String>) -> Result<String, String> {
    let usage = "usage: desk-upstream [--data FILE]";
    match (args.next(), args.next(), args.next()) {
        (None, _, _) => Ok(DEFAULT_DATA.to_owned()),
        (Some(flag), Some(file), None) if flag == "--data" => Ok(file),
        (Some(flag), None, None) if flag == "--data" => {
            Err(format!("`--data` needs a file after it; {usage}"))
        }
        (Some(first), _, _) => Err(format!(
            "unexpected argument `{first}`; the only option is `--data FILE` ({usage})"
        )),
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
    let desk = match data_path(std::env::args().skip(1)).and_then(|path| load(&path)) {
        Ok(desk) => desk,
        Err(message) => {
            eprintln!("desk-upstream: {message}");
            return ExitCode::from(2);
        }
    };
    let served = match (DeskServer { desk }).serve(rmcp::transport::stdio()).await {
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

    fn path_of(args: &[&str]) -> Result<String, String> {
        data_path(args.iter().map(|arg| (*arg).to_owned()))
    }

    #[test]
    fn the_data_is_found_beside_the_map_unless_named() {
        assert_eq!(path_of(&[]), Ok(DEFAULT_DATA.to_owned()));
        assert_eq!(path_of(&["--data", "x.json"]), Ok("x.json".to_owned()));
    }

    #[test]
    fn a_command_line_with_anything_else_is_refused_with_the_usage() {
        for args in [&["--data"][..], &["--slow"], &["--data", "a", "b"]] {
            let refusal = path_of(args).err().unwrap_or_default();
            assert!(
                refusal.contains("usage: desk-upstream [--data FILE]"),
                "{refusal}"
            );
        }
    }
}
