//! `skillgraph record export`: runs' records read from a run store (SPEC
//! §14.9), each byte for byte the file record `serve --record` writes, so
//! that `explain` and `replay` take them as they are.

use std::path::PathBuf;
use std::process::ExitCode;

use skillgraph_mcp::{StoreConfig, export_records};

use super::{Failure, output};

/// What `skillgraph record export` is given.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The run store: redis://[USER:PASS@]HOST:PORT[/DB].
    #[arg(long, value_name = "URL")]
    store: String,
    /// What every key in the store begins with (as `serve --store-prefix`).
    #[arg(long, value_name = "PREFIX", default_value = "sg")]
    store_prefix: String,
    /// Write DIR/RUN.jsonl for each run instead of one record on standard output.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Every run the store holds (with --out).
    #[arg(long, requires = "out")]
    all: bool,
    /// The runs' handles (run_…).
    #[arg(value_name = "RUN", required_unless_present = "all")]
    runs: Vec<String>,
}

/// Export the records `args` names.
pub(super) fn export_command(args: ExportArgs) -> Result<ExitCode, Failure> {
    if args.out.is_none() && args.runs.len() > 1 {
        return Err(Failure::unusable(
            "export-several",
            format!(
                "{} runs were named, and standard output holds one record: give --out DIR for one file per run",
                args.runs.len()
            ),
        ));
    }
    let mut store = StoreConfig::new(args.store);
    store.prefix = args.store_prefix;
    let records = export_records(&store, &args.runs, args.all)
        .map_err(|err| Failure::unusable(err.code(), err.to_string()))?;
    let Some(folder) = args.out else {
        for (_, record) in &records {
            output::print(record)?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(&folder)
        .map_err(|err| Failure::output(format!("{}: cannot be made: {err}", folder.display())))?;
    for (run, record) in &records {
        let file = folder.join(format!("{run}.jsonl"));
        std::fs::write(&file, record).map_err(|err| {
            Failure::output(format!("{}: cannot be written: {err}", file.display()))
        })?;
    }
    output::warn(&format!(
        "{} record(s) written to {}",
        records.len(),
        folder.display()
    ));
    Ok(ExitCode::SUCCESS)
}
