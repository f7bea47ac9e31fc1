//! The `desk-upstream` binary as `skillgraph serve` starts it: a child
//! process over stdio whose working directory is the support desk's folder,
//! driven by rmcp's own client.

use std::error::Error;
use std::path::{Path, PathBuf};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_desk-upstream");

/// `examples/support-desk`, the map's folder, where `upstream/data.json` is.
fn desk_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

fn arguments(value: Value) -> rmcp::model::JsonObject {
    match value {
        Value::Object(arguments) => arguments,
        other => panic!("the arguments of a call are an object, not {other}"),
    }
}

#[tokio::test]
async fn a_client_lists_the_desk_tools_and_gets_the_canned_order() -> Result<(), Box<dyn Error>> {
    let command = tokio::process::Command::new(BINARY).configure(|command| {
        command.current_dir(desk_folder());
    });
    let client = ().serve(TokioChildProcess::new(command)?).await?;

    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    for triage_tool in ["lookup_order", "lookup_invoice", "track_parcel"] {
        assert!(
            names.contains(&triage_tool),
            "{triage_tool} missing from {names:?}"
        );
    }
    assert_eq!(names.len(), 7, "{names:?}");

    let call = CallToolRequestParams::new("lookup_order")
        .with_arguments(arguments(json!({ "order_id": 4412 })));
    let answer = client.call_tool(call).await?;
    let expected = json!({
        "status": "success", "orderId": 4412, "riskLevel": "high", "amount": 240,
        "customer": { "tier": "gold" }
    });
    assert_eq!(answer.is_error, Some(false));
    let texts: Vec<&str> = answer
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    assert_eq!(texts, [expected.to_string()]);
    assert_eq!(answer.structured_content, Some(expected));

    let call = CallToolRequestParams::new("lookup_order")
        .with_arguments(arguments(json!({ "order_id": 9999 })));
    assert_eq!(client.call_tool(call).await?.is_error, Some(true));

    client.cancel().await?;
    Ok(())
}

/// Run the binary in the desk's folder with `--data FILE`, with no client:
/// its exit code and standard error.
fn run_with_data(file: &str) -> Result<(Option<i32>, String), Box<dyn Error>> {
    let output = std::process::Command::new(BINARY)
        .args(["--data", file])
        .current_dir(desk_folder())
        .output()?;
    Ok((
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

#[test]
fn a_missing_data_file_exits_2_naming_the_file_and_the_fix() -> Result<(), Box<dyn Error>> {
    let (code, stderr) = run_with_data("no/such/data.json")?;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("`no/such/data.json`"), "{stderr}");
    assert!(stderr.contains("--data FILE"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    Ok(())
}

#[test]
fn data_in_another_shape_exits_2_naming_the_file() -> Result<(), Box<dyn Error>> {
    let (code, stderr) = run_with_data("skillmap.json")?;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`skillmap.json` is not in the expected shape"),
        "{stderr}"
    );
    Ok(())
}
