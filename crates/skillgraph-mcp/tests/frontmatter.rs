//! The skills extension's entries (`io.modelcontextprotocol/skills`) carry
//! their `SKILL.md`'s front matter whole: `skills/list` and `skills/get`
//! answer, over the handshake generation, a `frontmatter` identical in
//! content to the front matter of the file `resources/read` serves, as the
//! conformance suite's `sep-2640-entry-frontmatter-identical` compares them,
//! field by field.

mod common;

use common::Served;
use serde_json::{Value, json};
use skillgraph::skill_md;
use skillgraph_mcp::ServeConfig;

/// A folder of one skill, `refunds`, whose `SKILL.md` front matter has
/// every kind of field: text, `allowed-tools`, `license`, and a nested
/// `metadata` holding a number, a boolean, a quoted number and a list.
fn skills_folder() -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("skillgraph-mcp-frontmatter-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let skill = dir.join("skills").join("refunds");
    std::fs::create_dir_all(&skill).expect("a skill folder");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: refunds\ndescription: Refund an order. Use when a customer asks for money back.\nlicense: Apache-2.0\nallowed-tools: Bash(git:*) Read\nmetadata:\n  owner: billing\n  version: \"2.0\"\n  limits:\n    max: 250\n    manual: false\n  tags:\n    - money\n    - orders\n---\n# Refunds\n\nCheck the order first.\n",
    )
    .expect("the skill is written");
    dir
}

#[tokio::test]
async fn skills_list_gives_each_entry_its_skill_mds_whole_front_matter() {
    let dir = skills_folder();
    let mut served = Served::start(ServeConfig::new(&dir));
    served.initialize().await;
    let listed = served.request(1, "skills/list", json!({})).await;
    let entries = listed["result"]["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("skills/list answers a list: {listed}"));
    assert_eq!(entries.len(), 1, "{listed}");
    let entry = &entries[0];
    let expect = json!({
        "name": "refunds",
        "description": "Refund an order. Use when a customer asks for money back.",
        "license": "Apache-2.0",
        "allowed-tools": "Bash(git:*) Read",
        "metadata": {
            "owner": "billing",
            "version": "2.0",
            "limits": {"max": 250, "manual": false},
            "tags": ["money", "orders"]
        }
    });
    assert_eq!(entry["frontmatter"], expect, "{listed}");

    // The file served at the entry's URI reads to the same fields.
    let uri = entry["uri"].as_str().unwrap_or_default();
    assert_eq!(uri, "skill://refunds/SKILL.md");
    let read = served
        .request(2, "resources/read", json!({"uri": uri}))
        .await;
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("the SKILL.md reads as text: {read}"));
    let in_file = skill_md::front_matter(text.as_bytes()).map(Value::Object);
    assert_eq!(in_file.as_ref(), Some(&entry["frontmatter"]));

    // skills/get gives the same entry.
    let got = served.request(3, "skills/get", json!({"uri": uri})).await;
    assert_eq!(got["result"]["skill"], *entry, "{got}");
    served.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
